#!/usr/bin/env bash
# Runs every test of the project: starts the servers the tests need (pinned versions), runs
# `mvn -B verify` on the whole build, and stops whatever it started, also on failure.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh -pl outbox-spi  # extra arguments go to Maven (and skip scripts/user-projects.sh)
#
# After a successful whole build it runs scripts/user-projects.sh: the README's first service and a
# project generated from the custom-store archetype, built as separate projects.
#
# Servers (see README "Tests"): PostgreSQL, MariaDB and Redis are expected as system services and
# are started if their port is closed (the Redis notification tests also start redis-server
# themselves on free ports, for their outage test); dynoxide (DynamoDB emulator) and jongodb (MongoDB emulator with
# transactions) are installed from npm at pinned versions into .tools/, checked against pinned
# SHA-256 sums, and started on free ports. Tests find them through OUTBOX_TEST_* variables.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_PREFIX=test.sh
# shellcheck source=lib/tools.sh
source "$ROOT/scripts/lib/tools.sh"
RUN_DIR="$TOOLS/run"

# The servers this suite needs. Each name has an ensure_<name> function below.
NEEDS=(postgres mariadb redis jongodb dynoxide)

STARTED_PIDS=()
STOP_COMMANDS=()

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

# An emulator that loses its port to another process between free_port and its bind exits at once;
# each is started up to three times, on a fresh port each time.
ensure_dynoxide() {
    local bin port try
    bin="$(install_dynoxide)"
    for try in 1 2 3; do
        port="$(free_port)"
        "$bin" serve --host 127.0.0.1 --port "$port" >"$RUN_DIR/dynoxide.log" 2>&1 &
        STARTED_PIDS+=("$!")
        wait_for_dynoxide "$bin" "$port" "$RUN_DIR/dynoxide.log" "$!" && break
        kill "${STARTED_PIDS[-1]}" 2>/dev/null || true
        (( try < 3 )) || return 1
    done
    export OUTBOX_TEST_DYNAMODB_ENDPOINT="http://127.0.0.1:$port"
    log "dynoxide $DYNOXIDE_VERSION: $OUTBOX_TEST_DYNAMODB_ENDPOINT"
}

ensure_jongodb() {
    local bin port try uri
    bin="$(install_jongodb)"
    for try in 1 2 3; do
        port="$(free_port)"
        "$bin" --host=127.0.0.1 --port="$port" --topology-profile=singleNodeReplicaSet --replica-set-name=rs0 \
            >"$RUN_DIR/jongodb.log" 2>&1 &
        STARTED_PIDS+=("$!")
        uri="$(wait_for_jongodb "$RUN_DIR/jongodb.log" "$!")" && break
        kill "${STARTED_PIDS[-1]}" 2>/dev/null || true
        (( try < 3 )) || return 1
    done
    export OUTBOX_TEST_JONGODB_URI="$uri"
    log "jongodb $JONGODB_VERSION: $OUTBOX_TEST_JONGODB_URI"
}

# Ends the output with one totals line per module and the skipped tests grouped by reason (all
# Docker skips on one line), so that a skip is never mistaken for a pass.
report_results() {
    local reports
    reports=$(find "$ROOT" \( -path '*/target/surefire-reports/TEST-*.xml' -o -path '*/target/failsafe-reports/TEST-*.xml' \) \
        -newer "$RUN_DIR/started" 2>/dev/null | sort || true)
    [[ -z "$reports" ]] && { log "no test reports were written"; return 0; }
    # shellcheck disable=SC2086
    perl "$ROOT/scripts/lib/test-report.pl" $reports | sed 's/^/[test.sh] /' >&2 || true
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
    if (( status == 0 && $# == 0 )); then
        # What a new user builds first: the README's first service and a generated custom-store project.
        bash "$ROOT/scripts/user-projects.sh" || status=$?
    fi
    report_results
    return "$status"
}

main "$@"
