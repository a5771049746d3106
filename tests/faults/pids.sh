#!/bin/bash
# Process creation fails (clone() gets EAGAIN from the pids controller):
# the daemon and its agents in a cgroup with room for the daemon and two
# agents, 30 events over 3 devices with up to 8 agents at once.  Each event
# the daemon could not start an agent for waits and is tried again (a
# warning once per episode, the retries counted in status), in its place
# in its device's order; none is dropped or counted as a failed agent.
. "$(dirname "$0")/lib.sh"
t_require_root
N=${FAULTS_EVENTS:-30}
t_make_agent 50
f_pids_cgroup
f_devices
t_start_daemon --agent "$T_AGENT" "${F_FILTER[@]}" --max-children 8
echo "$T_DAEMON_PID" >"$F_CG/cgroup.procs" || t_fail "cannot move the daemon into $F_CG"
echo $(($(wc -l <"$F_CG/cgroup.procs") + 2)) >"$F_CG/pids.max"
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" "${F_DEVS[@]}" || t_fail "burst failed"
f_check_nothing_lost "$N" "$prefix"
retries=$(f_status spawn_retries)
echo "pids.max $(cat "$F_CG/pids.max"), pids events: $(cat "$F_CG/pids.events" 2>/dev/null | tr '\n' ' ')"
grep -E "cannot start|can be started|retr" "$T_LOG"
[ "${retries:-0}" -gt 0 ] || t_fail "no spawn was retried: the fault was not injected (pids.max too high?)"
warned=$(grep -c "cannot start a process" "$T_LOG")
[ "$warned" -ge 1 ] || t_fail "no warning that processes could not be started"
[ "$warned" -lt "$retries" ] || t_fail "$warned warnings for $retries retries: one per retry, not per episode"
# Per-device order: no agent of a device started before the previous one ended.
find "$T_DIR/runs" -name '*.agent' -print0 | xargs -0 awk -v p="$prefix" '
        FNR == 1 { if (u != "") print d, s, st, en; d = s = st = en = u = "" }
        /^env:DEVPATH=/ { d = substr($0, 13) }
        /^env:SEQNUM=/ { s = substr($0, 12) }
        /^start=/ { st = substr($0, 7) }
        /^end=/ { en = substr($0, 5) }
        /^env:SYNTH_UUID=/ { if (index($0, p) == 16) u = 1 }
        END { if (u != "") print d, s, st, en }' | sort -k1,1 -k2,2n >"$T_DIR/table"
violations=$(awk '$1 == dev && $3 < end { v++ } { dev = $1; end = $4 } END { print v + 0 }' "$T_DIR/table")
[ "$violations" = 0 ] || t_fail "$violations per-device order violations"
t_stop_daemon
echo "ok: $N events under pids.max, $retries spawns retried, $warned warning(s), none lost, order kept"
