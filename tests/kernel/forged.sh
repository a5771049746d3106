#!/bin/bash
# A userspace process multicasting a forged uevent to group 1 never causes
# an agent run; the daemon logs the drop and keeps serving real events.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent
t_start_daemon --agent "$T_AGENT" --all

forged=$(t_uuid)
"$FORGE_UEVENT" "$forged" || t_fail "could not send the forged uevent"
# A real event after it: once it ran, the forged one has been read too.
real=$(t_uuid)
echo "change $real" >/sys/class/net/lo/uevent
t_wait_for 10 t_run_with "SYNTH_UUID=$real" || t_fail "real event after the forged one did not run"
[ -z "$(t_run_with "SYNTH_UUID=$forged")" ] || t_fail "forged uevent ran an agent"
grep -q "dropped datagram: sender is not the kernel" "$T_LOG" || t_fail "no log line for the forged datagram"
echo "ok: forged uevent dropped, real one ran"
