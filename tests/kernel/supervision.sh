#!/bin/bash
# Agent supervision: a hanging agent is killed at the timeout (SIGTERM, then
# SIGKILL when it ignores SIGTERM); a crashing agent is logged and the
# daemon continues; a missing agent is reported once, not per event.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent

trigger() { # trigger UUID
        echo "change $1" >/sys/class/net/lo/uevent
}

# 1. Hang: SIGTERM at the timeout.
touch "$T_DIR/hang"
t_start_daemon --agent "$T_AGENT" --all --timeout 1 --kill-grace 1
u=$(t_uuid)
trigger "$u"
t_wait_for 10 grep -q "SIGTERM" "$T_LOG" || t_fail "hanging agent not sent SIGTERM"
t_wait_for 10 grep -q "status=signal 15" "$T_LOG" || t_fail "hanging agent did not end by SIGTERM"
grep -q "timed out after 1s" "$T_LOG" || t_fail "timeout not logged"
echo "ok: hanging agent terminated at the timeout"
t_stop_daemon

# 2. Hang ignoring SIGTERM: SIGKILL after the grace.
rm -f "$T_DIR/hang"
touch "$T_DIR/hang_hard"
t_start_daemon --agent "$T_AGENT" --all --timeout 1 --kill-grace 1
trigger "$(t_uuid)"
t_wait_for 10 grep -q "status=signal 9" "$T_LOG" || t_fail "agent ignoring SIGTERM was not killed"
grep -q "sending SIGKILL" "$T_LOG" || t_fail "SIGKILL not logged"
pgrep -af "^$T_DIR/agent net" && t_fail "agent process left behind"
echo "ok: agent ignoring SIGTERM killed after the grace"
t_stop_daemon

# 3. Crash: logged with the signal, the next event still runs.
rm -f "$T_DIR/hang_hard"
touch "$T_DIR/crash"
t_start_daemon --agent "$T_AGENT" --all
trigger "$(t_uuid)"
t_wait_for 10 grep -q "status=signal 6" "$T_LOG" || t_fail "crashing agent not logged with its signal"
rm -f "$T_DIR/crash"
u=$(t_uuid)
trigger "$u"
t_wait_for 10 t_run_with "SYNTH_UUID=$u" || t_fail "daemon did not continue after a crashing agent"
echo "ok: crashing agent logged, daemon continues"
t_stop_daemon

# 4. Non-zero exit is logged as such.
cat >"$T_DIR/fail-agent" <<'A'
#!/bin/sh
echo "failing on purpose for $SEQNUM" >&2
exit 3
A
chmod 755 "$T_DIR/fail-agent"
t_start_daemon --agent "$T_DIR/fail-agent" --all
trigger "$(t_uuid)"
t_wait_for 10 grep -q "status=exit 3" "$T_LOG" || t_fail "exit status 3 not logged"
grep -q "failing on purpose for" "$T_LOG" || t_fail "agent stderr not captured into the log"
t_stop_daemon
echo "ok: exit status and stderr logged"

# 5. Missing agent: one error line for many events.
t_start_daemon --agent "$T_DIR/does-not-exist" --all
for i in 1 2 3 4 5; do trigger "$(t_uuid)"; done
t_wait_for 10 grep -q "cannot execute agent" "$T_LOG" || t_fail "missing agent not reported"
sleep 0.5
n=$(grep -c "cannot execute agent" "$T_LOG")
[ "$n" = 1 ] || t_fail "missing agent reported $n times, expected once"
t_stop_daemon
echo "ok: missing agent reported once"
