#!/bin/bash
# Daemon lifecycle: --dry-run runs nothing; SIGTERM stops reading, lets the
# running agent finish and says how many queued events were not run; at the
# queue limit reading pauses and no event is lost.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent

# 1. Dry run.
t_start_daemon --agent "$T_AGENT" --all --dry-run
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
t_wait_for 10 grep -q "would run: $T_AGENT net \[HOME=/ PATH=/sbin:/bin:/usr/sbin:/usr/bin ACTION=change DEVPATH=/devices/virtual/net/lo SUBSYSTEM=net SEQNUM=" "$T_LOG" ||
        t_fail "dry run did not log the command line and environment"
grep -q "SYNTH_UUID=$u" "$T_LOG" || t_fail "dry run line lacks the event's keys"
[ -z "$(ls "$T_DIR/runs")" ] || t_fail "dry run executed an agent"
t_stop_daemon
echo "ok: dry run logs, runs nothing"

# 2. SIGTERM with a running agent and queued events on the same device.
echo 1500 >"$T_DIR/sleep_ms"
t_start_daemon --agent "$T_AGENT" --all
prefix=$(t_uuid_prefix)
for i in 1 2 3 4; do echo "change $prefix-00000000000$i" >/sys/class/net/lo/uevent; done
t_wait_for 10 grep -q "SYNTH_UUID=$prefix-000000000001" /proc/$(pgrep -f "^$T_DIR/agent net" | head -n 1)/environ ||
        t_fail "first agent did not start"
kill -TERM "$T_DAEMON_PID"
wait "$T_DAEMON_PID"
rc=$?
T_DAEMON_PID=
[ "$rc" = 0 ] || t_fail "daemon exit status $rc after SIGTERM"
grep -q "stopping: 3 queued event(s) not run" "$T_LOG" || t_fail "shutdown did not report the 3 queued events"
t_run_with "SYNTH_UUID=$prefix-000000000001" >/dev/null || t_fail "running agent was not allowed to finish"
[ "$(t_count_runs_prefix "$prefix")" = 1 ] || t_fail "queued events ran after SIGTERM"
echo "ok: SIGTERM lets the running agent finish and reports 3 queued events not run"

# 3. Queue limit: 2,000 events through a 50-event queue, none lost.
echo 0 >"$T_DIR/sleep_ms"
rm -f "$T_DIR"/runs/*
t_start_daemon --agent "$T_AGENT" --all --max-queue 50 --ordering strict
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" 2000 "$prefix" /sys/class/net/lo/uevent >/dev/null || t_fail "burst failed"
t_wait_for 120 sh -c "[ \$(grep -l '^env:SYNTH_UUID=$prefix' $T_DIR/runs/* 2>/dev/null | wc -l) -ge 2000 ]" ||
        t_fail "only $(t_count_runs_prefix "$prefix") of 2000 events ran with a 50-event queue"
grep -q "overloaded: .*, at the max-queue limit (50); reading stopped" "$T_LOG" || t_fail "the queue limit was never reached"
t_stop_daemon
grep -q " 0 gaps" "$T_LOG" || t_fail "ledger reported a gap: $(grep stopped: "$T_LOG")"
echo "ok: 2000 events through a 50-event queue, none lost, no gap"
