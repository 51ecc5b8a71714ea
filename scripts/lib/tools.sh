# Shared by scripts/test.sh and scripts/emulators.sh (source it; it defines functions and pins only).
# Needs ROOT (the checkout) set by the caller; installs into $ROOT/.tools.
#
# The emulators the tests and the quick starts use, pinned and checked against their SHA-256 sums.

TOOLS="${TOOLS:-$ROOT/.tools}"

DYNOXIDE_PACKAGE="@dynoxide/linux-x64"
DYNOXIDE_VERSION="1.2.1"
DYNOXIDE_SHA256="be909b7910d3fb552e85db10ef3c8ebae4bd35fee0f26dffdb6dfa5cc656426e"
JONGODB_PACKAGE="@jongodb/memory-server-bin-linux-x64-gnu"
JONGODB_VERSION="0.1.6"
JONGODB_SHA256="c53888f078d7f5f38d5386685044cf54dd94aaf831ebc09c76f1d4fbc321b625"

# log <words...>: one line on standard error, prefixed with the calling script's name.
log() { printf '[%s] %s\n' "${LOG_PREFIX:-$(basename "$0")}" "$*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: prints a port nothing listens on, below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range), so that no outgoing connection can hold it when a server binds it.
free_port() {
    local port low=32768 high
    read -r low high < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
    (( low > 12000 )) || low=32768
    for _ in $(seq 1 200); do
        port=$(( 10000 + RANDOM % (low - 10000) ))
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

# install_npm_tool <package> <version> <path of the binary inside the package> <sha256>
# Prints the binary's path. Reuses an earlier install when its checksum still matches.
install_npm_tool() {
    local package="$1" version="$2" inner="$3" sha="$4"
    local dir="$TOOLS/npm/${package//\//_}@$version"
    local bin="$dir/node_modules/$package/$inner"
    if [[ ! -x "$bin" ]] || ! echo "$sha  $bin" | sha256sum --check --status; then
        command -v npm >/dev/null 2>&1 || { log "npm is not on the PATH: install Node.js to get $package"; return 1; }
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

install_dynoxide() { install_npm_tool "$DYNOXIDE_PACKAGE" "$DYNOXIDE_VERSION" dynoxide "$DYNOXIDE_SHA256"; }
install_jongodb() { install_npm_tool "$JONGODB_PACKAGE" "$JONGODB_VERSION" bin/jongodb "$JONGODB_SHA256"; }

# emulator_failed <what> <pid> <log file>: reports why an emulator did not start, with the end of
# its log (where both emulators print the cause), so that the cause reaches the caller's output and not only a file that is deleted later.
emulator_failed() {
    local state="did not start within the time allowed"
    kill -0 "$2" 2>/dev/null || state="exited"
    log "$1 $state (log $3); it begins:"
    head -3 "$3" 2>/dev/null | sed 's/^/    /' >&2 || true
    return 1
}

# wait_for_dynoxide <binary> <port> <log file> <pid>
wait_for_dynoxide() {
    local deadline=$(( SECONDS + 30 ))
    until "$1" healthcheck --port "$2" --timeout 1 >/dev/null 2>&1; do
        if (( SECONDS >= deadline )) || ! kill -0 "$4" 2>/dev/null; then emulator_failed dynoxide "$4" "$3"; return 1; fi
        sleep 0.1
    done
}

# wait_for_jongodb <log file> <pid>: prints the connection string jongodb announces once it is ready.
wait_for_jongodb() {
    local deadline=$(( SECONDS + 60 )) uri=""
    until uri="$(grep -m1 -o 'JONGODB_URI=.*' "$1" 2>/dev/null | cut -d= -f2-)" && [[ -n "$uri" ]]; do
        if (( SECONDS >= deadline )) || ! kill -0 "$2" 2>/dev/null; then emulator_failed jongodb "$2" "$1"; return 1; fi
        sleep 0.2
    done
    echo "$uri"
}
