#!/usr/bin/env bash
# Runs every test of the project: starts the servers the tests need (pinned versions), runs
# `mvn -B verify` on the whole build, and stops whatever it started, also on failure.
#
#   scripts/test.sh                 # everything
#   scripts/test.sh -pl outbox-spi  # extra arguments go to Maven (and skip scripts/user-projects.sh
#                                   # and the mutation testing; add -Pmutation to run it)
#
# The whole build also runs the Maven profile "mutation": PIT runs the compatibility kit against
# mutants of its in-memory reference store (outbox-tck's verify phase; about 2 minutes on two busy
# cores) and fails under a 90 % mutation score.
#
# After a successful whole build it runs scripts/user-projects.sh: the README's first service, the
# Spring Boot example and a project generated from the custom-store archetype, built as separate
# projects.
#
# Servers (see CONTRIBUTING.md, "Tests"): PostgreSQL, MariaDB and Redis are expected as system services and
# are started if their port is closed (the Redis notification tests also start redis-server
# themselves on free ports, for their outage test); dynoxide (DynamoDB emulator) and jongodb (MongoDB emulator with
# transactions) are installed from npm at pinned versions into .tools/, checked against pinned
# SHA-256 sums, and started on free ports. Tests find them through OUTBOX_TEST_* variables.
# promtool and prometheus come from Debian's prometheus package at a pinned version (apt-get).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_PREFIX=test.sh
# shellcheck source=lib/tools.sh
source "$ROOT/scripts/lib/tools.sh"
RUN_DIR="$TOOLS/run"

# The servers this suite needs. Each name has an ensure_<name> function below.
NEEDS=(postgres mariadb redis jongodb dynoxide prometheus)

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
    # initdb and pg_ctl, for the test that starts a cluster of its own that checks passwords.
    local version
    version="$(ls /etc/postgresql 2>/dev/null | head -1 || true)"
    if [[ -z "${OUTBOX_TEST_POSTGRES_BIN:-}" && -n "$version" && -x "/usr/lib/postgresql/$version/bin/initdb" ]]; then
        export OUTBOX_TEST_POSTGRES_BIN="/usr/lib/postgresql/$version/bin"
    fi
    log "PostgreSQL: $OUTBOX_TEST_POSTGRES_URL (binaries for a private cluster: ${OUTBOX_TEST_POSTGRES_BIN:-none})"
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

# promtool and prometheus (alert rule tests, a real scrape of a relay): Debian's package, pinned.
# Where it cannot be installed (no apt, not root) the tests that need it skip with the reason.
PROMETHEUS_DEB_VERSION=2.42.0+ds-5+deb12u1
ensure_prometheus() {
    local installed
    installed="$(dpkg-query -W -f='${Version}' prometheus 2>/dev/null || true)"
    if [[ "$installed" != "$PROMETHEUS_DEB_VERSION" ]]; then
        if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
            log "installing Debian package prometheus=$PROMETHEUS_DEB_VERSION (was: ${installed:-none})"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
                "prometheus=$PROMETHEUS_DEB_VERSION" >"$RUN_DIR/apt-prometheus.log" 2>&1 \
                || log "could not install prometheus (see $RUN_DIR/apt-prometheus.log); its tests skip"
        else
            log "prometheus $PROMETHEUS_DEB_VERSION is not installed and cannot be here (apt-get as root); its tests skip"
        fi
    fi
    if command -v promtool >/dev/null 2>&1; then
        export OUTBOX_TEST_PROMTOOL="${OUTBOX_TEST_PROMTOOL:-$(command -v promtool)}"
        export OUTBOX_TEST_PROMETHEUS="${OUTBOX_TEST_PROMETHEUS:-$(command -v prometheus)}"
        log "promtool: $OUTBOX_TEST_PROMTOOL, prometheus: $OUTBOX_TEST_PROMETHEUS"
    fi
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
        # Emptied here, not by the redirection below: that one runs in the background job, and
        # wait_for_jongodb could read the previous run's address from the old file before it.
        : >"$RUN_DIR/jongodb.log"
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
    local mutation=()
    (( $# == 0 )) && mutation=(-Pmutation)
    log "running: mvn -B -ntp verify ${mutation[*]:-} $*"
    local status=0
    mvn -B -ntp verify "${mutation[@]}" "$@" || status=$?
    if (( status == 0 && $# == 0 )); then
        # What a new user builds first: the two example projects and a generated custom-store project.
        bash "$ROOT/scripts/user-projects.sh" || status=$?
    fi
    report_results
    return "$status"
}

main "$@"
