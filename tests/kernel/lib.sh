# Shared helpers for the kernel tests (sourced by bash).  Each test runs a
# real hotplugd on the real kernel, triggers real uevents, and reads what
# its agent recorded.  Tests pick their own events out of system noise by
# SYNTH_UUID or by unique device names, never "the next event".
#
# Environment: HOTPLUGD, HOTPLUGCTL (binaries), SRCDIR (source tree).
# HOTPLUGD_TEST_REQUIRE_ROOT=1 (CI) turns "not root, skipped" into a failure.

set -u

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

# A recording agent: one file per run, $T_DIR/runs/SEQNUM.ACTION, holding
# "argv1=NAME", start/end times and the sorted environment.  $AGENT_SLEEP
# (seconds, may be fractional) makes it slow.
t_make_agent() {
        local sleep=${1:-0}
        mkdir -p "$T_DIR/runs"
        T_AGENT="$T_DIR/agent"
        cat >"$T_AGENT" <<AGENT
#!/bin/sh
f="$T_DIR/runs/\$SEQNUM"
start=\$(date +%s%N)
if [ "$sleep" != 0 ]; then sleep $sleep; fi
{
        echo "argv1=\$1"
        echo "argc=\$#"
        echo "start=\$start"
        echo "end=\$(date +%s%N)"
        env | sort | sed 's/^/env:/'
} > "\$f.tmp"
mv "\$f.tmp" "\$f"
AGENT
        chmod 755 "$T_AGENT"
}

# Start hotplugd in the background with the given arguments; waits until it listens.
t_start_daemon() {
        T_LOG="$T_DIR/daemon.log"
        "$HOTPLUGD" --log-target=stderr "$@" >"$T_LOG" 2>&1 &
        T_DAEMON_PID=$!
        local i
        for ((i = 0; i < 100; i++)); do
                grep -q "listening" "$T_LOG" 2>/dev/null && return 0
                kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "hotplugd exited at start"
                sleep 0.05
        done
        t_fail "hotplugd did not start listening"
}

t_stop_daemon() {
        if [ -n "$T_DAEMON_PID" ]; then
                kill -TERM "$T_DAEMON_PID" 2>/dev/null
                wait "$T_DAEMON_PID" 2>/dev/null
                T_DAEMON_RC=$?
                T_DAEMON_PID=
        fi
}

# Wait until a command succeeds, at most $1 seconds.
t_wait_for() {
        local timeout=$1 i
        shift
        for ((i = 0; i < timeout * 20; i++)); do
                "$@" && return 0
                sleep 0.05
        done
        return 1
}

# The run file (path) whose environment has KEY=VALUE, or nothing.
t_run_with() {
        grep -l -x "env:$1" "$T_DIR"/runs/* 2>/dev/null | grep -v '\.tmp$' | head -n 1
}

t_count_runs_with() {
        grep -l -x "env:$1" "$T_DIR"/runs/* 2>/dev/null | grep -vc '\.tmp$'
}

# Value of environment variable $2 in run file $1.
t_env_of() {
        sed -n "s/^env:$2=//p" "$1"
}
