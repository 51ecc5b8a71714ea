#!/usr/bin/env bash
# Starts, stops and reports the local emulators the MongoDB and DynamoDB quick starts use: jongodb
# (MongoDB wire protocol, single-node replica set, transactions) and dynoxide (DynamoDB API). Both
# are installed from npm at the versions scripts/test.sh uses, checked against pinned SHA-256 sums
# (scripts/lib/tools.sh), into .tools/, and run in the background until `stop`.
#
#   scripts/emulators.sh start            # both; prints the connection string and the endpoint
#   scripts/emulators.sh start mongodb    # or only one: mongodb, dynamodb
#   scripts/emulators.sh status
#   scripts/emulators.sh stop
#
# Ports: OUTBOX_MONGODB_PORT (default 27017) and OUTBOX_DYNAMODB_PORT (default 8000); a port in
# use is refused, naming it. Data lives in memory and is gone after `stop`. Needs npm on the PATH
# for the first start. Exit status: 0 done, 1 an emulator did not start or a port is taken, 2 usage.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_PREFIX=emulators.sh
# shellcheck source=lib/tools.sh
source "$ROOT/scripts/lib/tools.sh"
STATE="${OUTBOX_EMULATORS_STATE:-$TOOLS/emulators}"
MONGODB_PORT="${OUTBOX_MONGODB_PORT:-27017}"
DYNAMODB_PORT="${OUTBOX_DYNAMODB_PORT:-8000}"

usage() {
    sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

running() { # name: true when its recorded process is alive
    [[ -f "$STATE/$1.pid" ]] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null
}

address() { cat "$STATE/$1.address" 2>/dev/null || true; }

print_mongodb() {
    echo "MongoDB (jongodb $JONGODB_VERSION): $(address mongodb)"
    echo "  ./demo --mongodb-uri '$(address mongodb)' --relays 1 --writers 1 --orders 200"
}

print_dynamodb() {
    echo "DynamoDB (dynoxide $DYNOXIDE_VERSION): $(address dynamodb)   region us-east-1, any static credentials"
    echo "  ./demo --dynamodb-endpoint $(address dynamodb) --orders 500"
}

refuse_taken_port() { # port what variable
    if port_open "$1"; then
        log "port $1 is in use; stop what listens there or choose another with $3=PORT"
        return 1
    fi
}

start_mongodb() {
    if running mongodb; then print_mongodb; return 0; fi
    refuse_taken_port "$MONGODB_PORT" jongodb OUTBOX_MONGODB_PORT
    local bin uri
    bin="$(install_jongodb)" || return 1
    # setsid: the emulator outlives this script and ignores the terminal's Ctrl-C.
    setsid "$bin" --host=127.0.0.1 --port="$MONGODB_PORT" --topology-profile=singleNodeReplicaSet \
        --replica-set-name=rs0 >"$STATE/mongodb.log" 2>&1 < /dev/null &
    echo $! > "$STATE/mongodb.pid"
    if ! uri="$(wait_for_jongodb "$STATE/mongodb.log" "$(cat "$STATE/mongodb.pid")")"; then stop_one mongodb; return 1; fi
    echo "$uri" > "$STATE/mongodb.address"
    print_mongodb
}

start_dynamodb() {
    if running dynamodb; then print_dynamodb; return 0; fi
    refuse_taken_port "$DYNAMODB_PORT" dynoxide OUTBOX_DYNAMODB_PORT
    local bin
    bin="$(install_dynoxide)" || return 1
    setsid "$bin" serve --host 127.0.0.1 --port "$DYNAMODB_PORT" >"$STATE/dynamodb.log" 2>&1 < /dev/null &
    echo $! > "$STATE/dynamodb.pid"
    if ! wait_for_dynoxide "$bin" "$DYNAMODB_PORT" "$STATE/dynamodb.log" "$(cat "$STATE/dynamodb.pid")"; then stop_one dynamodb; return 1; fi
    echo "http://127.0.0.1:$DYNAMODB_PORT" > "$STATE/dynamodb.address"
    print_dynamodb
}

stop_one() { # name
    if running "$1"; then
        local pid
        pid="$(cat "$STATE/$1.pid")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        echo "$1: stopped"
    fi
    rm -f "$STATE/$1.pid" "$STATE/$1.address"
}

status_one() { # name
    if running "$1"; then
        "print_$1"
    else
        echo "$1: not running"
        return 1
    fi
}

names() { # the emulators named on the command line, or both
    if (( $# == 0 )); then echo mongodb dynamodb; return; fi
    local name
    for name in "$@"; do
        case "$name" in mongodb|dynamodb) echo "$name" ;; *) log "unknown emulator '$name': use mongodb or dynamodb"; exit 2 ;; esac
    done
}

(( $# >= 1 )) || usage
command="$1"; shift
mkdir -p "$STATE"
status=0
case "$command" in
    start) for name in $(names "$@"); do "start_$name" || status=1; done ;;
    stop) for name in $(names "$@"); do stop_one "$name"; done ;;
    status) for name in $(names "$@"); do status_one "$name" || status=1; done ;;
    -h|--help|help) usage ;;
    *) log "unknown command '$command'"; usage ;;
esac
exit "$status"
