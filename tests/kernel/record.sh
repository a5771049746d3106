#!/bin/bash
# hotplugctl record on real uevents: a marked change on lo and a veth pair
# (add/remove of the devices and their queues) are recorded; SIGINT ends
# the recording with a summary; --count stops by itself; the recording
# reads back (timeline --text lists our events); a torn copy is read up to
# the tear with a clear message.
. "$SRCDIR/tests/kernel/lib.sh"
t_require_root

REC="$T_DIR/burst.rec"
UUID=$(t_uuid)
VA="hpr$$a"
VB="hpr$$b"
t_on_exit ip link del "$VA"

RECPID=
t_on_exit '[ -n "$RECPID" ] && kill $RECPID'
"$HOTPLUGCTL" record "$REC" >"$T_DIR/summary" 2>"$T_DIR/err" &
PID=$!
RECPID=$PID
t_wait_for 5 test -s "$REC" || t_fail "recording file not created"
# The file exists before the uevent socket is open: send the marked event
# until it is recorded.
_t_marked() {
        echo "change $UUID" >/sys/class/net/lo/uevent
        t_wait_for 1 grep -qa "SYNTH_UUID=$UUID" "$REC"
}
t_wait_for 5 _t_marked || t_fail "marked lo event not recorded"
ip link add "$VA" type veth peer name "$VB" || t_fail "cannot create veth pair"
ip link del "$VA"
t_wait_for 5 grep -qa "remove@/devices/virtual/net/$VB" "$REC" || t_fail "veth remove not recorded"
kill -INT $PID
wait $PID || t_fail "record exited with $?"
RECPID=

grep -q "^recorded [1-9][0-9]* event(s)" "$T_DIR/summary" || t_fail "no summary: $(cat "$T_DIR/summary" "$T_DIR/err")"
grep -qa "SYNTH_UUID=$UUID" "$REC" || t_fail "marked lo event not recorded"

"$HOTPLUGCTL" timeline "$REC" --text >"$T_DIR/text" 2>"$T_DIR/terr" || t_fail "timeline --text failed: $(cat "$T_DIR/terr")"
grep -q "no agent runs in this recording" "$T_DIR/text" || t_fail "events-only timeline expected"
for d in "/devices/virtual/net/$VA" "/devices/virtual/net/$VB" "/devices/virtual/net/$VA/queues/rx-0"; do
        grep -q " add .* $d\$" "$T_DIR/text" || t_fail "add of $d not in the timeline"
        grep -q " remove .* $d\$" "$T_DIR/text" || t_fail "remove of $d not in the timeline"
done
"$HOTPLUGCTL" timeline "$REC" -o "$T_DIR/burst.svg" || t_fail "timeline svg failed"
if command -v xmllint >/dev/null; then
        xmllint --noout "$T_DIR/burst.svg" || t_fail "SVG not well-formed"
fi

# A torn copy: the last record cut in half.
SIZE=$(stat -c %s "$REC")
head -c $((SIZE - 20)) "$REC" >"$T_DIR/torn.rec"
"$HOTPLUGCTL" timeline "$T_DIR/torn.rec" --text >/dev/null 2>"$T_DIR/torn.err" || t_fail "torn recording refused"
grep -q "torn record at end of file (payload cut short" "$T_DIR/torn.err" || t_fail "no torn message: $(cat "$T_DIR/torn.err")"

# --count stops on its own; appending to the same file keeps the old records.
"$HOTPLUGCTL" record "$REC" --count 1 --duration 10 >"$T_DIR/summary2" &
PID=$!
RECPID=$PID
# Until it has its event (it may not listen yet when the first is sent).
_t_count_done() {
        kill -0 $PID 2>/dev/null || return 0
        echo "change $(t_uuid)" >/sys/class/net/lo/uevent
        return 1
}
t_wait_for 5 _t_count_done || t_fail "record --count 1 did not stop"
wait $PID || t_fail "record --count exited with $?"
RECPID=
grep -q "^recorded 1 event(s)" "$T_DIR/summary2" || t_fail "--count 1: $(cat "$T_DIR/summary2")"
grep -qa "SYNTH_UUID=$UUID" "$REC" || t_fail "appending lost the old records"

# Not a recording: refused, file untouched.
echo "hello" >"$T_DIR/text.txt"
"$HOTPLUGCTL" record "$T_DIR/text.txt" --duration 0.1 2>"$T_DIR/err3" && t_fail "recorded into a foreign file"
grep -q "not a hotplugd recording" "$T_DIR/err3" || t_fail "unclear refusal: $(cat "$T_DIR/err3")"
[ "$(cat "$T_DIR/text.txt")" = hello ] || t_fail "foreign file changed"
echo "ok"
