#!/usr/bin/env bash
# Builds and runs what a new user builds first, as separate Maven projects that reach the outbox
# artifacts only through a Maven repository, the way they will from Maven Central:
#   1. examples/first-service (the README's "Your first service") and examples/spring-boot-service
#      (docs/spring-boot.md): each must print the record it received and its x-outbox-message-id header;
#   2. a project generated from outbox-store-archetype: its `mvn test` must run every rule of the
#      compatibility kit (as many tests as the kit declares), none failed, and skip what the
#      reference store's own kit run skips;
#   3. the MongoDB and DynamoDB quick starts (docs/store-mongodb.md, docs/store-dynamodb.md):
#      scripts/emulators.sh start, the demo with the options it prints (which must exit 0; the time each took is printed), scripts/emulators.sh stop.
#
#   scripts/user-projects.sh         # scripts/test.sh runs it after the main build
#   scripts/user-projects.sh -o      # extra arguments go to every Maven call (offline here)
#   ONLY_QUICK_STARTS=1 scripts/user-projects.sh   # step 3 only
#
# The reactor is installed into a temporary local repository (hard links of ~/.m2/repository
# without io/outbox, so nothing is written into ~/.m2), deleted at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG_PREFIX=user-projects.sh
# shellcheck source=lib/tools.sh
source "$ROOT/scripts/lib/tools.sh"

USER_REPO="${MAVEN_USER_REPOSITORY:-$HOME/.m2/repository}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/outbox-user-projects.XXXXXX")"
cleanup() {
    if [[ -d "$WORK/emulators" ]]; then OUTBOX_EMULATORS_STATE="$WORK/emulators" "$ROOT/scripts/emulators.sh" stop >/dev/null 2>&1 || true; fi
    [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
REPO="$WORK/repository"
MVN=(mvn -B -ntp "-Dmaven.repo.local=$REPO" "$@")
VERSION="$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$ROOT/pom.xml" | head -1)"

seed_repository() {
    mkdir -p "$REPO"
    if [[ -d "$USER_REPO" ]]; then
        # Hard links: fast and small. Maven adds files here but never rewrites a resolved one;
        # io/outbox and the repository's top-level files (archetype catalog) are what an install
        # writes, so those are removed first and written fresh.
        cp -al "$USER_REPO/." "$REPO/"
        rm -rf "$REPO/io/outbox"
        find "$REPO" -maxdepth 1 -type f -delete
    fi
}

install_reactor() {
    log "installing the outbox $VERSION artifacts into a temporary repository"
    # The documented install command, into the temporary repository.
    bash "$ROOT/scripts/install.sh" -q "${MVN[@]:3}" >"$WORK/install.log" 2>&1 || { tail -50 "$WORK/install.log" >&2; log "install failed"; return 1; }
}

run_example() { # examples/NAME, mvn compile exec:java: it must print the record it received
    local name="$1"
    log "$name: mvn compile exec:java (examples/$name, copied to a fresh directory)"
    cp -r "$ROOT/examples/$name" "$WORK/$name"
    rm -rf "$WORK/$name/target"
    local out="$WORK/$name.out"
    if ! (cd "$WORK/$name" && "${MVN[@]}" -q compile exec:java) >"$out" 2>&1; then
        tail -40 "$out" >&2; log "FAILED: $name did not run"; return 1
    fi
    local line
    line="$(grep -E '^received order-1=\{"total":42\} x-outbox-message-id=[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' "$out" || true)"
    if [[ -z "$line" ]]; then
        tail -40 "$out" >&2; log "FAILED: $name did not print the delivered record"; return 1
    fi
    log "$name delivered: $line"
}

run_archetype_project() {
    log "custom-store project: archetype:generate, then mvn test"
    (cd "$WORK" && "${MVN[@]}" -q org.apache.maven.plugins:maven-archetype-plugin:3.4.1:generate \
        -DinteractiveMode=false -DarchetypeGroupId=io.outbox -DarchetypeArtifactId=outbox-store-archetype \
        -DarchetypeVersion="$VERSION" -DgroupId=com.example -DartifactId=my-outbox-store -Dversion=1.0-SNAPSHOT \
        -Dpackage=com.example.store) >"$WORK/generate.log" 2>&1 \
        || { tail -40 "$WORK/generate.log" >&2; log "FAILED: archetype:generate"; return 1; }
    local project="$WORK/my-outbox-store"
    if ! (cd "$project" && "${MVN[@]}" test) >"$WORK/store-test.log" 2>&1; then
        grep -E 'Tests run|FAIL|ERROR' "$WORK/store-test.log" | tail -40 >&2; log "FAILED: the generated project's mvn test"; return 1
    fi
    local expected run failed skipped
    expected="$(kit_test_count)"
    read -r run failed skipped < <(totals "$project"/target/surefire-reports/TEST-*.xml)
    if (( run < expected || failed != 0 )); then
        log "FAILED: the generated project ran $run tests ($failed failed, $skipped skipped); the kit declares $expected"
        return 1
    fi
    # The skeleton and its fixture are generated from the reference store's, so they skip
    # exactly what the reference store's own kit run skips, when the main build has just run it.
    local reference="$ROOT/outbox-tck/target/surefire-reports/TEST-io.outbox.tck.InMemoryOutboxStoreTest.xml"
    if [[ -f "$reference" && "$reference" -nt "$ROOT/outbox-tck/src/main/java/io/outbox/tck/OutboxStoreTck.java" ]]; then
        local ref_run ref_failed ref_skipped
        read -r ref_run ref_failed ref_skipped < <(totals "$reference")
        if (( run != ref_run || skipped != ref_skipped )); then
            log "FAILED: the generated project ran $run tests, $skipped skipped; the reference store ran $ref_run, $ref_skipped skipped"
            return 1
        fi
    fi
    log "custom-store project: $run kit tests run, 0 failed, $skipped skipped (the kit declares $expected):"
    perl "$ROOT/scripts/lib/test-report.pl" "$project"/target/surefire-reports/TEST-*.xml | sed -n '/^skipped/,$p' >&2
}

# The kit's test methods: those in outbox-tck's main sources, the inbox kit (Inbox*) aside.
kit_test_count() {
    local file count=0
    for file in "$ROOT"/outbox-tck/src/main/java/io/outbox/tck/*.java; do
        [[ "$(basename "$file")" == Inbox* ]] && continue
        count=$(( count + $(grep -cE '^\s*@(Test|RepeatedTest)\b' "$file" || true) ))
    done
    echo "$count"
}

totals() { # Surefire XML reports: prints "run failed skipped"
    perl -ne 'if (/<testsuite\b/) { my %a = /(\w+)="([^"]*)"/g; $r += $a{tests}; $f += $a{failures} + $a{errors}; $s += $a{skipped} } END { printf "%d %d %d\n", $r, $f, $s }' "$@"
}

run_emulator_quick_starts() {
    export OUTBOX_EMULATORS_STATE="$WORK/emulators"
    local printed="" status=0 try
    # Fresh ports on each try: a port can be taken between free_port and the emulator's bind.
    for try in 1 2 3; do
        OUTBOX_MONGODB_PORT="$(free_port)"
        OUTBOX_DYNAMODB_PORT="$(free_port)"
        export OUTBOX_MONGODB_PORT OUTBOX_DYNAMODB_PORT
        printed="$("$ROOT/scripts/emulators.sh" start)" && break
        "$ROOT/scripts/emulators.sh" stop >/dev/null 2>&1 || true
        (( try < 3 )) || { log "FAILED: scripts/emulators.sh start (3 tries)"; return 1; }
        log "scripts/emulators.sh start failed; trying again on other ports"
    done
    local demo started
    while read -r demo; do
        started=$SECONDS
        # The command exactly as emulators.sh prints it (./demo relative to the checkout).
        if ! (cd "$ROOT" && eval "$demo --no-progress" </dev/null >"$WORK/quick-start.out" 2>&1); then
            tail -30 "$WORK/quick-start.out" >&2; log "FAILED: $demo"; status=1; break
        fi
        log "quick start passed in $(( SECONDS - started )) s (build included when ./demo rebuilt): $demo"
    done < <(grep -E '^  \./demo ' <<<"$printed" | sed 's/^  //')
    "$ROOT/scripts/emulators.sh" stop >/dev/null
    return "$status"
}

seed_repository
[[ -n "${ONLY_QUICK_STARTS:-}" ]] || install_reactor
[[ -n "${ONLY_QUICK_STARTS:-}" ]] || run_example first-service
[[ -n "${ONLY_QUICK_STARTS:-}" ]] || run_example spring-boot-service
[[ -n "${ONLY_QUICK_STARTS:-}" ]] || run_archetype_project
run_emulator_quick_starts
