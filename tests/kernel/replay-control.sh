#!/bin/bash
# Every control verb against a replaying daemon (--replay: no kernel socket).
# status, pause, resume, monitor, reload answer as usual; settle waits until
# the replayed events held are done; trigger (watch-uuids) is refused with a
# clear error, since no kernel uevent would ever reach the daemon.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent
REC=$T_DIR/live.rec
CTL="$HOTPLUGCTL"
N=4

# A recording with our own events in it.
t_start_daemon --agent "$T_AGENT" --all --record "$REC"
uuids=()
for ((i = 0; i < N; i++)); do
        uuids+=("$(t_uuid)")
        echo "change ${uuids[$i]}" >/sys/class/net/lo/uevent
done
for u in "${uuids[@]}"; do
        t_wait_for 20 t_run_with "SYNTH_UUID=$u" || t_fail "live agent for $u did not run"
done
t_stop_daemon

# Replay it with an agent that takes 1 s for our events only (others'
# events in the recording pass at once), one at a time.
cat >"$T_DIR/slow-agent" <<A
#!/bin/sh
case " ${uuids[*]} " in
*" \$SYNTH_UUID "*) sleep 1; echo "\$SYNTH_UUID" >>"$T_DIR/replayed" ;;
esac
exit 0
A
chmod 755 "$T_DIR/slow-agent"
t_start_daemon --replay "$REC" --speed 0 --agent "$T_DIR/slow-agent" --all --max-children 1
t_wait_for 5 test -S "$HOTPLUGCTL_SOCKET" || t_fail "no control socket at $HOTPLUGCTL_SOCKET"
alive() { kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "replaying daemon died after $1"; }

"$CTL" pause || t_fail "pause failed"
alive pause
"$CTL" status >"$T_DIR/status.out" 2>&1 || t_fail "status failed: $(cat "$T_DIR/status.out")"
grep -q "PAUSED" "$T_DIR/status.out" || t_fail "status does not say paused"
alive status
echo "ok: pause and status answer while replaying"

timeout 2 "$CTL" monitor >"$T_DIR/monitor.out" 2>&1
rc=$?
[ "$rc" = 124 ] || t_fail "monitor ended by itself ($rc): $(cat "$T_DIR/monitor.out")"
alive monitor
echo "ok: monitor streams while replaying"

"$CTL" reload >"$T_DIR/reload.out" 2>&1
echo "  reload said (exit $?): $(head -c 200 "$T_DIR/reload.out")"
alive reload

"$CTL" trigger --settle --timeout 10 --action change --subsystem-match mem >"$T_DIR/trigger.out" 2>&1 &&
        t_fail "trigger succeeded against a replaying daemon"
grep -qi "replay" "$T_DIR/trigger.out" || t_fail "trigger refused without naming the replay: $(cat "$T_DIR/trigger.out")"
alive trigger
echo "ok: trigger refused: $(head -n 1 "$T_DIR/trigger.out")"

"$CTL" resume || t_fail "resume failed"
alive resume
"$CTL" settle --timeout 120 >"$T_DIR/settle.out" 2>&1 || t_fail "settle failed: $(cat "$T_DIR/settle.out")"
[ "$(grep -c . "$T_DIR/replayed" 2>/dev/null)" = "$N" ] ||
        t_fail "settle returned with $(grep -c . "$T_DIR/replayed" 2>/dev/null) of $N replayed events done"
echo "ok: settle returned once the $N replayed events were done"

# The replay ends by itself, cleanly (waited for as long as it moves).
t_wait_for "$T_IDLE" _t_exited "$T_DAEMON_PID" || true
t_stop_daemon
grep -q "read to the end" "$T_LOG" || t_fail "replay did not reach the end"
