# shellcheck shell=bash
# Progress-based waiting for the shell tests (sourced by bash): a test waits
# as long as something moves, and fails only when nothing did for a while,
# never at a fixed total, so a slow, loaded machine gets all the time it needs.

# until_progress IDLE PROBE CMD...: run CMD until it succeeds.  Gives up
# (returns 1) only when CMD has failed for IDLE seconds in a row while PROBE
# (a command line, word-split) printed the same thing: no fixed total,
# however long each try of CMD takes.  CMD is tried every $UNTIL_POLL s
# (default 0.05).
until_progress() {
        local idle=$(($1 * 1000000)) probe=$2 last now since=${EPOCHREALTIME/./} poll=${UNTIL_POLL:-0.05}
        shift 2
        last=$($probe)
        until "$@" >/dev/null; do
                sleep "$poll"
                now=$($probe)
                if [ "$now" != "$last" ]; then
                        last=$now
                        since=${EPOCHREALTIME/./}
                elif ((${EPOCHREALTIME/./} - since >= idle)); then
                        return 1
                fi
        done
        return 0
}
