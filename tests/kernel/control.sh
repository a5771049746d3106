#!/bin/bash
# SPDX-License-Identifier: MIT
# The control socket with a real daemon and real uevents:
#  - settle returns only after the agent for the last event has finished;
#  - settle times out (exit 2) while an agent is still running, and while paused;
#  - trigger --settle returns only after its own UUIDs were processed;
#  - monitor --processed --json shows an event received, started and finished;
#  - status reports counters and the paused flag;
#  - a non-root client is refused (exit 3, "root only").
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root

CTL="$HOTPLUGCTL"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The agent sleeps 1 s, so "processed" and "received" are far apart.
t_make_agent 1000
t_start_daemon --agent="$T_AGENT"
t_wait_for 5 test -S "$HOTPLUGCTL_SOCKET" || t_fail "no control socket at $HOTPLUGCTL_SOCKET"

# --- settle waits for the agent of the last event ------------------------------
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
start=$(now_ms)
"$CTL" settle --timeout 30 || t_fail "settle failed: $?"
took=$(($(now_ms) - start))
run=$(t_run_with "SYNTH_UUID=$u")
[ -n "$run" ] || t_fail "settle returned before the agent for $u finished"
[ "$took" -ge 500 ] || t_fail "settle returned after ${took} ms; the agent sleeps 1000 ms"
echo "settle waited ${took} ms for a 1 s agent"

# --- settle times out while an agent runs -------------------------------------
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
rc=0
"$CTL" settle --timeout 0.2 2>"$T_DIR/settle.err" || rc=$?
[ "$rc" = 2 ] || t_fail "settle with a running agent: exit $rc, expected 2 (timeout)"
"$CTL" settle --timeout 30 || t_fail "second settle failed"
[ -n "$(t_run_with "SYNTH_UUID=$u")" ] || t_fail "agent for $u did not run"

# --- status --------------------------------------------------------------------
"$CTL" status >"$T_DIR/status" || t_fail "status failed"
grep -Eq '^Events: +[1-9][0-9]* processed' "$T_DIR/status" || t_fail "status: $(cat "$T_DIR/status")"
# Others' uevents (on lo too) may arrive after the settle: wait for idle.
_idle() { "$CTL" status | grep -q '0 queued, 0 running'; }
t_wait_for "$T_IDLE" _idle || t_fail "status after settle: $("$CTL" status)"

# --- pause: events queue, settle times out; resume: they run --------------------
"$CTL" pause || t_fail "pause failed"
"$CTL" status | grep -q PAUSED || t_fail "status does not say paused"
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
rc=0
"$CTL" settle --timeout 1 2>/dev/null || rc=$?
[ "$rc" = 2 ] || t_fail "settle while paused: exit $rc, expected 2"
[ -z "$(t_run_with "SYNTH_UUID=$u")" ] || t_fail "an agent ran while paused"
"$CTL" resume || t_fail "resume failed"
"$CTL" settle --timeout 30 || t_fail "settle after resume failed"
[ -n "$(t_run_with "SYNTH_UUID=$u")" ] || t_fail "agent for $u did not run after resume"

# --- monitor --processed --json --------------------------------------------------
"$CTL" monitor --processed --json >"$T_DIR/monitor" 2>&1 &
mon=$!
t_on_exit "kill $mon"
# Until the monitor shows an event of ours, it may not be subscribed yet.
_t_mon_ready() {
        local m
        m=$(t_uuid)
        echo "change $m" >/sys/class/net/lo/uevent
        t_wait_for 1 grep -q "\"uuid\":\"$m\"" "$T_DIR/monitor"
}
t_wait_for 5 _t_mon_ready || t_fail "monitor showed none of our events"
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
"$CTL" settle --timeout 30 || t_fail "settle (monitor) failed"
t_wait_for 5 grep -q "\"uuid\":\"$u\"" "$T_DIR/monitor" || t_fail "monitor did not show $u: $(head -5 "$T_DIR/monitor")"
line=$(grep "\"uuid\":\"$u\"" "$T_DIR/monitor" | head -n 1)
seq=$(echo "$line" | sed -n 's/.*"seqnum":\([0-9]*\).*/\1/p')
t_wait_for 5 grep -q "^{\"kind\":\"finished\",\"seqnum\":$seq," "$T_DIR/monitor" || t_fail "no finished record for $seq"
kill "$mon"
wait "$mon" 2>/dev/null
grep -q "^{\"kind\":\"started\",\"seqnum\":$seq," "$T_DIR/monitor" || t_fail "no started record for $seq"
grep -q "^{\"kind\":\"finished\",\"seqnum\":$seq,.*\"status\":\"exit 0\"" "$T_DIR/monitor" ||
        t_fail "no finished record for $seq: $(cat "$T_DIR/monitor")"

# --- trigger --settle waits for exactly its own UUIDs ----------------------------
start=$(now_ms)
"$CTL" trigger --action change --subsystem-match net --settle --verbose >"$T_DIR/trigger" ||
        t_fail "trigger --settle failed: $?"
took=$(($(now_ms) - start))
n=$(wc -l <"$T_DIR/trigger")
[ "$n" -ge 1 ] || t_fail "trigger wrote no uevent file"
while read -r path uuid; do
        [ -n "$(t_run_with "SYNTH_UUID=$uuid")" ] ||
                t_fail "trigger --settle returned before $path ($uuid) was processed"
done <"$T_DIR/trigger"
echo "trigger --settle: $n devices, ${took} ms"

# --- a non-root client is refused ---------------------------------------------------
chmod 755 "$T_DIR"
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" status >/dev/null 2>"$T_DIR/nonroot.err" || rc=$?
[ "$rc" = 3 ] || t_fail "non-root status: exit $rc, expected 3: $(cat "$T_DIR/nonroot.err")"
grep -q "root only" "$T_DIR/nonroot.err" || t_fail "non-root refusal message: $(cat "$T_DIR/nonroot.err")"
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" pause 2>/dev/null || rc=$?
[ "$rc" = 3 ] || t_fail "non-root pause: exit $rc"
"$CTL" status | grep -q PAUSED && t_fail "a non-root pause took effect"

# --- no daemon ------------------------------------------------------------------------
t_stop_daemon
rc=0
"$CTL" settle --timeout 1 2>/dev/null || rc=$?
[ "$rc" = 3 ] || t_fail "settle without a daemon: exit $rc, expected 3"
echo "PASS"
