#!/bin/bash
# The kernel's events keep every key they carry; the same events replayed
# from a recording keep the keys a kernel sends.  A real synthetic uevent
# on lo carries SYNTH_ARG_NOTE, SYNTH_ARG_PYTHONPATH and SYNTH_ARG_IFS (the
# kernel prefixes what is written to a uevent file): the live agent gets
# all three.  Replayed from the --record of that run into an agent, the
# event runs with the same environment less SYNTH_ARG_PYTHONPATH and
# SYNTH_ARG_IFS: a synthetic argument named after a variable the block list
# refuses is not taken from a file, in case an agent strips the prefix.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent
REC=$T_DIR/live.rec
u=$(t_uuid)

t_start_daemon --agent "$T_AGENT" --all --record "$REC"
echo "change $u NOTE=kept PYTHONPATH=nonexistent IFS=x" >/sys/class/net/lo/uevent ||
        t_fail "cannot write lo's uevent file"
t_wait_for 20 t_run_with "SYNTH_UUID=$u" || t_fail "the synthetic change on lo did not run"
live=$(t_run_with "SYNTH_UUID=$u")
for kv in SYNTH_ARG_NOTE=kept SYNTH_ARG_PYTHONPATH=nonexistent SYNTH_ARG_IFS=x; do
        grep -qx "env:$kv" "$live" || t_fail "the kernel's event lost $kv: $(grep '^env:' "$live" | tr '\n' ' ')"
done
echo "ok: the kernel's event reached the live agent with all its keys"
t_settle || t_fail "the daemon did not settle"
t_stop_daemon

# Replay the recording (every event recorded, ours among them) into a second agent.
mkdir -p "$T_DIR/replay/runs"
ln -sf "$AGENT_DUMP" "$T_DIR/replay/agent"
echo 0 >"$T_DIR/replay/sleep_ms"
T_LOG=$T_DIR/replay.log
"$HOTPLUGD" --replay "$REC" --speed 0 --all --agent "$T_DIR/replay/agent" --control-socket= --log-target=stderr \
        >"$T_LOG" 2>&1 || t_fail "replay exited $?"
grep -q "read to the end" "$T_LOG" || t_fail "replay did not reach the end"
again=$(grep -rl -x "env:SYNTH_UUID=$u" "$T_DIR/replay/runs" | grep -v '\.tmp$' | head -n 1)
[ -n "$again" ] || t_fail "the replay did not run the synthetic change"
diff -u <(grep '^env:' "$live" | grep -Ev '^env:SYNTH_ARG_(PYTHONPATH|IFS)=') <(grep '^env:' "$again") ||
        t_fail "the replayed environment differs from the live one by more than SYNTH_ARG_PYTHONPATH and SYNTH_ARG_IFS"
seq=$(t_env_of "$live" SEQNUM)
for k in SYNTH_ARG_PYTHONPATH SYNTH_ARG_IFS; do
        grep -qE "SEQNUM=$seq .*DEVPATH=/devices/virtual/net/lo .*variable $k dropped" "$T_LOG" ||
                t_fail "the drop of $k was not logged with SEQNUM=$seq"
done
echo "ok: replayed, the event ran with the live environment less SYNTH_ARG_PYTHONPATH and SYNTH_ARG_IFS"
