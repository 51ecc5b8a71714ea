#!/usr/bin/env bash
# Runs every test of the project: starts the servers the tests need (pinned versions), runs
# `mvn -B verify` on the whole build, and stops whatever it started, also on failure.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh -pl outbox-spi  # extra arguments go to Maven
#
# Servers (see README "Tests"): PostgreSQL, MariaDB and Redis are expected as system services and
# are started if their port is closed (the Redis notification tests also start redis-server
# themselves on free ports, for their outage test); dynoxide (DynamoDB emulator) and jongodb (MongoDB emulator with
# transactions) are installed from npm at pinned versions into .tools/, checked against pinned
# SHA-256 sums, and started on free ports. Tests find them through OUTBOX_TEST_* variables.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
RUN_DIR="$TOOLS/run"

# The servers this suite needs. Each name has an ensure_<name> function below.
NEEDS=(postgres mariadb redis jongodb dynoxide)

DYNOXIDE_PACKAGE="@dynoxide/linux-x64"
DYNOXIDE_VERSION="1.2.1"
DYNOXIDE_SHA256="be909b7910d3fb552e85db10ef3c8ebae4bd35fee0f26dffdb6dfa5cc656426e"
JONGODB_PACKAGE="@jongodb/memory-server-bin-linux-x64-gnu"
JONGODB_VERSION="0.1.6"
JONGODB_SHA256="c53888f078d7f5f38d5386685044cf54dd94aaf831ebc09c76f1d4fbc321b625"

STARTED_PIDS=()
STOP_COMMANDS=()

log() { printf '[test.sh] %s\n' "$*" >&2; }

cleanup() {
    local status=$?
    for pid in "${STARTED_PIDS[@]:-}"; do
        [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    done
    for cmd in "${STOP_COMMANDS[@]:-}"; do
        [[ -n "$cmd" ]] && { log "stopping: $cmd"; eval "$cmd" >/dev/null 2>&1 || true; }
    done
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() {
    local port
    for _ in $(seq 1 200); do
        port=$(( 20000 + RANDOM % 30000 ))
        if ! port_open "$port"; then echo "$port"; return 0; fi
    done
    log "no free port found"; return 1
}

wait_for_port() { # port seconds what
    local deadline=$(( SECONDS + $2 ))
    until port_open "$1"; do
        (( SECONDS < deadline )) || { log "$3 did not open port $1 within $2 s"; return 1; }
        sleep 0.2
    done
}

ensure_postgres() {
    if ! port_open 5432; then
        log "PostgreSQL is down; starting it"
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
        STOP_COMMANDS+=("pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | head -1) main stop")
        wait_for_port 5432 60 PostgreSQL
    fi
    export OUTBOX_TEST_POSTGRES_URL="${OUTBOX_TEST_POSTGRES_URL:-jdbc:postgresql://127.0.0.1:5432/test}"
    export OUTBOX_TEST_POSTGRES_USER="${OUTBOX_TEST_POSTGRES_USER:-postgres}"
    log "PostgreSQL: $OUTBOX_TEST_POSTGRES_URL"
}

ensure_mariadb() {
    if ! port_open 3306; then
        log "MariaDB is down; starting it"
        start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
        STOP_COMMANDS+=("start-stop-daemon --stop --oknodo --retry 30 --exec /usr/sbin/mariadbd")
        wait_for_port 3306 60 MariaDB
    fi
    export OUTBOX_TEST_MARIADB_URL="${OUTBOX_TEST_MARIADB_URL:-jdbc:mariadb://127.0.0.1:3306/test}"
    export OUTBOX_TEST_MARIADB_USER="${OUTBOX_TEST_MARIADB_USER:-root}"
    log "MariaDB: $OUTBOX_TEST_MARIADB_URL"
}

ensure_redis() {
    if ! port_open 6379; then
        log "Redis is down; starting it"
        command -v redis-server >/dev/null 2>&1 || { log "redis-server is not installed (Debian: apt-get install redis-server)"; return 1; }
        redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
            --pidfile "$RUN_DIR/redis.pid" --logfile "$RUN_DIR/redis.log"
        STOP_COMMANDS+=("redis-cli -p 6379 shutdown nosave")
        wait_for_port 6379 30 Redis
    fi
    export OUTBOX_TEST_REDIS_URI="${OUTBOX_TEST_REDIS_URI:-redis://127.0.0.1:6379}"
    export OUTBOX_TEST_REDIS_SERVER="${OUTBOX_TEST_REDIS_SERVER:-$(command -v redis-server)}"
    log "Redis: $OUTBOX_TEST_REDIS_URI (redis-server for the outage test: $OUTBOX_TEST_REDIS_SERVER)"
}

# install_npm_tool <package> <version> <path of the binary inside the package> <sha256>
# Prints the binary's path. Reuses an earlier install when its checksum still matches.
install_npm_tool() {
    local package="$1" version="$2" inner="$3" sha="$4"
    local dir="$TOOLS/npm/${package//\//_}@$version"
    local bin="$dir/node_modules/$package/$inner"
    if [[ ! -x "$bin" ]] || ! echo "$sha  $bin" | sha256sum --check --status; then
        log "installing $package@$version from npm"
        rm -rf "$dir"
        mkdir -p "$dir"
        npm install --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
            --prefix "$dir" "$package@$version" >&2
    fi
    if ! echo "$sha  $bin" | sha256sum --check --status; then
        log "checksum mismatch for $bin (expected $sha); refusing to run it"
        return 1
    fi
    echo "$bin"
}

ensure_dynoxide() {
    local bin port
    bin="$(install_npm_tool "$DYNOXIDE_PACKAGE" "$DYNOXIDE_VERSION" dynoxide "$DYNOXIDE_SHA256")"
    port="$(free_port)"
    "$bin" serve --host 127.0.0.1 --port "$port" >"$RUN_DIR/dynoxide.log" 2>&1 &
    STARTED_PIDS+=("$!")
    local deadline=$(( SECONDS + 30 ))
    until "$bin" healthcheck --port "$port" --timeout 1 >/dev/null 2>&1; do
        (( SECONDS < deadline )) || { log "dynoxide did not become healthy; see $RUN_DIR/dynoxide.log"; return 1; }
        sleep 0.1
    done
    export OUTBOX_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
    log "dynoxide $DYNOXIDE_VERSION: $OUTBOX_TEST_DYNAMODB_ENDPOINT"
}

ensure_jongodb() {
    local bin port
    bin="$(install_npm_tool "$JONGODB_PACKAGE" "$JONGODB_VERSION" bin/jongodb "$JONGODB_SHA256")"
    port="$(free_port)"
    "$bin" --host=127.0.0.1 --port="$port" --topology-profile=singleNodeReplicaSet --replica-set-name=rs0 \
        >"$RUN_DIR/jongodb.log" 2>&1 &
    STARTED_PIDS+=("$!")
    local deadline=$(( SECONDS + 60 )) uri=""
    until uri="$(grep -m1 -o 'JONGODB_URI=.*' "$RUN_DIR/jongodb.log" 2>/dev/null | cut -d= -f2-)" && [[ -n "$uri" ]]; do
        (( SECONDS < deadline )) || { log "jongodb did not start; see $RUN_DIR/jongodb.log"; return 1; }
        sleep 0.2
    done
    export OUTBOX_TEST_JONGODB_URI="$uri"
    log "jongodb $JONGODB_VERSION: $OUTBOX_TEST_JONGODB_URI"
}

# Lists every skipped test with its reason, so that a skip is never mistaken for a pass.
report_skipped() {
    local reports
    reports=$(find "$ROOT" \( -path '*/target/surefire-reports/TEST-*.xml' -o -path '*/target/failsafe-reports/TEST-*.xml' \) \
        -newer "$RUN_DIR/started" 2>/dev/null || true)
    [[ -z "$reports" ]] && return 0
    # shellcheck disable=SC2086
    perl -0777 -ne '
        while (/<testcase\b([^>]*)>\s*<skipped((?:\s+\w+="[^"]*")*)\s*(?:\/>|>(?:<!\[CDATA\[)?([^\n<]*))/g) {
            my ($attrs, $skipAttrs, $body) = ($1, $2, $3);
            my ($why) = $skipAttrs =~ /\bmessage="([^"]*)"/;
            if (!defined $why && defined $body) { ($why = $body) =~ s/^[\w.]+Exception: //; }
            $why = "no reason given" if !defined $why || $why eq "";
            my ($name) = $attrs =~ /\bname="([^"]*)"/;
            my ($class) = $attrs =~ /\bclassname="([^"]*)"/;
            $why =~ s/&quot;/"/g; $why =~ s/&apos;/\x27/g; $why =~ s/&lt;/</g; $why =~ s/&gt;/>/g; $why =~ s/&amp;/&/g;
            print "  SKIPPED $class.$name: $why\n";
        }' $reports | sort | uniq -c | sed 's/^ *1 //' > "$RUN_DIR/skipped.txt" || true
    if [[ -s "$RUN_DIR/skipped.txt" ]]; then
        log "skipped tests (not passed; see the reason):"
        cat "$RUN_DIR/skipped.txt" >&2
    fi
}

main() {
    mkdir -p "$RUN_DIR"
    touch "$RUN_DIR/started"
    for server in "${NEEDS[@]:-}"; do
        [[ -n "$server" ]] && "ensure_$server"
    done
    cd "$ROOT"
    log "running: mvn -B -ntp verify $*"
    local status=0
    mvn -B -ntp verify "$@" || status=$?
    report_skipped
    return "$status"
}

main "$@"
