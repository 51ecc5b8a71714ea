# Shared by ./demo and bin/outbox-relay (source it): the Maven arguments a user passes in MAVEN_ARGS.
#
# maven_args: prints nothing, or the words of MAVEN_ARGS one per line when this Maven does not read
# MAVEN_ARGS itself (Maven 3.9.0 and later do; 3.8 ignores it), so the words reach the build once.
maven_args() {
    [[ -n "${MAVEN_ARGS:-}" ]] || return 0
    local version
    version="$(mvn -v 2>/dev/null | sed -n 's/^Apache Maven \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -1)"
    local major="${version%% *}" minor="${version##* }"
    if [[ -n "$version" ]] && (( major > 3 || (major == 3 && minor >= 9) )); then
        return 0
    fi
    local words
    # shellcheck disable=SC2206 # MAVEN_ARGS holds several words, split as Maven 3.9 splits them
    words=(${MAVEN_ARGS})
    printf '%s\n' "${words[@]}"
}
