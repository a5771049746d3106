# Shared helpers for the kernel tests (sourced by bash).  Each test runs a
# real hotplugd on the real kernel, triggers real uevents, and reads what
# its agent recorded.  Tests pick their own events out of system noise by
# SYNTH_UUID or by unique device names, never "the next event".
#
# Environment: HOTPLUGD, HOTPLUGCTL (binaries), SRCDIR (source tree).
# HOTPLUGD_TEST_REQUIRE_ROOT=1 (CI) turns "not root, skipped" into a failure.

set -u

. "$(dirname "${BASH_SOURCE[0]}")/../lib/until.sh"

# What a test makes has the modes the trust rules expect, whatever the
# caller's umask.
umask 022
T_DIR=$(mktemp -d /tmp/hotplugd-test.XXXXXX)
T_CLEANUP=()
T_DAEMON_PID=

t_fail() {
        echo "FAIL: $*" >&2
        if [ -n "${T_LOG:-}" ] && [ -f "$T_LOG" ]; then
                echo "---- daemon log (last 40 lines) ----" >&2
                tail -n 40 "$T_LOG" >&2
        fi
        exit 1
}

t_skip() {
        echo "SKIP: $*" >&2
        exit 77
}

t_require_root() {
        if [ "$(id -u)" != 0 ]; then
                [ "${HOTPLUGD_TEST_REQUIRE_ROOT:-0}" = 1 ] && t_fail "needs root, and this run requires root tests"
                t_skip "needs root (real uevents)"
        fi
}

# Register a cleanup command (run in reverse order on exit, even on failure).
t_on_exit() {
        T_CLEANUP+=("$*")
}

t_cleanup() {
        [ -n "${T_KEEP:-}" ] && cp -a "$T_DIR" "$T_KEEP"
        local i
        t_stop_daemon
        for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do
                eval "${T_CLEANUP[$i]}" >/dev/null 2>&1 || true
        done
        rm -rf "$T_DIR"
}
trap t_cleanup EXIT

t_uuid() {
        cat /proc/sys/kernel/random/uuid
}

# The recording agent (tests/kernel/agent-dump.c) as $T_DIR/agent: one file
# per run, $T_DIR/runs/SEQNUM.agent, with argv, times and the environment in
# the order received.  $1: milliseconds each run sleeps (default 0).
t_make_agent() {
        mkdir -p "$T_DIR/runs"
        ln -sf "$AGENT_DUMP" "$T_DIR/agent"
        T_AGENT="$T_DIR/agent"
        echo "${1:-0}" >"$T_DIR/sleep_ms"
}

# Start hotplugd in the background with the given arguments; waits until it listens.
t_start_daemon() {
        T_LOG="$T_DIR/daemon.log"
        export HOTPLUGCTL_SOCKET="$T_DIR/control"
        "$HOTPLUGD" --log-target=stderr --control-socket="$HOTPLUGCTL_SOCKET" "$@" >"$T_LOG" 2>&1 &
        T_DAEMON_PID=$!
        _t_listening() {
                kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "hotplugd exited at start"
                grep -q "listening" "$T_LOG" 2>/dev/null
        }
        t_wait_for "$T_IDLE" _t_listening || t_fail "hotplugd did not start listening (no progress for $T_IDLE s)"
}

# Start hotplugd in the background logging at debug level with its stderr
# into $1 (a FIFO the test reads, or does not, or stops reading) and the
# other arguments; waits until hotplugctl status answers.
t_start_daemon_stderr() {
        local err=$1
        shift
        export HOTPLUGCTL_SOCKET="$T_DIR/control"
        "$HOTPLUGD" --log-target=stderr --log-level=debug --control-socket="$HOTPLUGCTL_SOCKET" "$@" \
                >/dev/null 2>"$err" &
        T_DAEMON_PID=$!
        _t_answers() {
                kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "hotplugd exited at start"
                "$HOTPLUGCTL" status >/dev/null 2>&1
        }
        t_wait_for "$T_IDLE" _t_answers || t_fail "hotplugctl status got no answer (no progress for $T_IDLE s)"
}

# A number or flag ($1: its key) of hotplugctl status --json; nothing when status does not answer.
t_status_field() {
        "$HOTPLUGCTL" status --json 2>/dev/null | sed -n "s/.*\"$1\": *\([0-9a-z]*\).*/\1/p" | head -n 1
}

# Stop the daemon with SIGTERM; an orderly stop exits 0.  Anything else (a
# sanitizer or leak report, a crash) fails the test.
t_stop_daemon() {
        if [ -n "$T_DAEMON_PID" ]; then
                kill -TERM "$T_DAEMON_PID" 2>/dev/null
                wait "$T_DAEMON_PID" 2>/dev/null
                T_DAEMON_RC=$?
                T_DAEMON_PID=
                [ "$T_DAEMON_RC" = 0 ] || t_fail "hotplugd exited with status $T_DAEMON_RC after SIGTERM"
        fi
}

# Seconds without progress after which a wait gives up (tests may lower it
# for a wait that must not succeed).  CI is a busy 2-core machine: waits
# follow progress, they have no fixed total.
T_IDLE=${T_IDLE:-30}

# A signature of what this test's daemon, agents and tools have done so
# far: the daemon's CPU time, and the number and sizes of the files in
# $T_DIR (log, agent runs, recordings, outputs).  It changes as long as
# anything moves.
t_progress() {
        local cpu=-
        if [ -n "${T_DAEMON_PID:-}" ] && [ -r "/proc/$T_DAEMON_PID/stat" ]; then
                cpu=$(awk '{ print $14 + $15 }' "/proc/$T_DAEMON_PID/stat" 2>/dev/null)
        fi
        echo "$cpu/$(find "$T_DIR" -maxdepth 3 -type f -printf '%s\n' 2>/dev/null | awk '{ n++; s += $1 } END { print n "/" s }')"
}

# Wait until a command succeeds.  Gives up (returns 1) only when it has
# failed for $1 seconds in a row with no progress (t_progress) meanwhile.
t_wait_for() {
        local idle=$1
        shift
        until_progress "$idle" t_progress "$@"
}

_t_cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
_t_exited() { ! kill -0 "$1" 2>/dev/null || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }

# Wait for background process $1 (a child of this shell) to exit and store
# its exit status in the variable named $2.  Gives up (returns 1) when it
# has neither exited nor used CPU time for $3 seconds (default $T_IDLE).
t_wait_pid_exit() {
        local _st
        until_progress "${3:-$T_IDLE}" "_t_cpu_of $1" _t_exited "$1" || return 1
        wait "$1"
        _st=$?
        printf -v "$2" '%s' "$_st"
        return 0
}

# Wait until the daemon has processed everything it received (hotplugctl
# settle).  Each settle is short; the wait gives up only when settle has
# not succeeded for ${1:-$T_IDLE} s with no progress (t_progress).
t_settle() {
        until_progress "${1:-$T_IDLE}" t_progress "$HOTPLUGCTL" settle --timeout 2
}

# The run file (path) whose environment has KEY=VALUE, or nothing.
t_run_with() {
        local f
        f=$(grep -rl -x "env:$1" "$T_DIR/runs" 2>/dev/null | grep -v '\.tmp$' | head -n 1)
        [ -n "$f" ] && echo "$f"
}

t_count_runs_with() {
        grep -rl -x "env:$1" "$T_DIR/runs" 2>/dev/null | grep -vc '\.tmp$'
}

# Runs whose SYNTH_UUID starts with $1.
t_count_runs_prefix() {
        grep -rl "^env:SYNTH_UUID=$1" "$T_DIR/runs" 2>/dev/null | grep -vc '\.tmp$'
}

# Field ($2: start, end, argv1, pid ...) of run file $1.
t_field() {
        sed -n "s/^$2=//p" "$1"
}

# A UUID prefix "xxxxxxxx-xxxx-xxxx-xxxx" for uevent-burst.
t_uuid_prefix() {
        t_uuid | cut -c1-23
}

# Create a veth pair NAME/NAMEp; removed at exit.
t_veth() {
        ip link add "$1" type veth peer name "$1p" || t_fail "cannot create veth $1"
        t_on_exit "ip link del $1"
}

# Add a zram device (not in a subshell); sets T_ZRAM to its number; removed at exit
# unless t_zram_remove ran first.
t_zram_add() {
        [ -e /sys/class/zram-control/hot_add ] || modprobe zram 2>/dev/null
        [ -e /sys/class/zram-control/hot_add ] || t_fail "no /sys/class/zram-control (zram missing)"
        T_ZRAM=$(cat /sys/class/zram-control/hot_add) || t_fail "zram hot_add failed"
        t_on_exit "[ -e /sys/block/zram$T_ZRAM ] && echo $T_ZRAM > /sys/class/zram-control/hot_remove"
}

t_zram_remove() {
        echo "$1" >/sys/class/zram-control/hot_remove || t_fail "zram hot_remove $1 failed"
}

# Value of environment variable $2 in run file $1.
t_env_of() {
        sed -n "s/^env:$2=//p" "$1"
}

# The recording agent (AGENT_DUMP) is run from the test's own copy,
# $T_DIR/agent-dump: hotplugd runs a link only if its target's directories
# are trusted too, and the build tree's modes are not the test's to choose
# (0775 in a tarball unpacked by root).  T_AGENT_DUMP_BUILT keeps the
# build's for a script that runs again in a namespace of its own.
export T_AGENT_DUMP_BUILT=${T_AGENT_DUMP_BUILT:-${AGENT_DUMP:-}}
if [ -n "$T_AGENT_DUMP_BUILT" ]; then
        install -m 0755 "$T_AGENT_DUMP_BUILT" "$T_DIR/agent-dump" || t_fail "cannot copy $T_AGENT_DUMP_BUILT"
        AGENT_DUMP=$T_DIR/agent-dump
fi
