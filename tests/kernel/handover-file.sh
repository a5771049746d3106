#!/bin/bash
# The handover file (--handover-file, hotplugd(8)), as between the
# initramfs's hotplugd and the real root's, with real uevents:
#  - the first daemon runs a's add and b's (made while it runs), is paused
#    with a change of lo queued, and stops: it writes the file (mode 0600);
#  - while no daemon runs, veth c is made and b deleted (their events go to
#    nobody);
#  - the second daemon takes the file over and removes it: the queued change
#    runs once; the targeted resync writes "add" to c and its peer and
#    synthesises b's and its peer's removes, and writes nothing to a (no
#    change pass); status counts the taken-over event;
#  - trigger --skip-handled leaves out the devices whose add ran (a, c) and
#    not a's peer, made before the first daemon started; info says so;
#  - a file others may write to, a corrupt one, one of another user and a
#    symbolic link are each refused with the reason and kept as .refused;
#    the daemon runs events all the same.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent
HF=$T_DIR/handover
a=hph$$a b=hph$$b c=hph$$c
NET=/devices/virtual/net

# Runs of ACTION ($1) for DEVPATH ($2).
runs_of() {
        local n=0 f
        for f in $(grep -rlx "env:DEVPATH=$2" "$T_DIR/runs" 2>/dev/null | grep -v '\.tmp$'); do
                grep -qx "env:ACTION=$1" "$f" && n=$((n + 1))
        done
        echo "$n"
}
start() { t_start_daemon --agent "$T_AGENT" --all --after-udev=no --handover-file="$HF" "$@"; }

t_veth "$a"
start
u=$(t_uuid)
echo "add $u" >"/sys/class/net/$a/uevent"
t_veth "$b"
_first_done() { [ -n "$(t_run_with "SYNTH_UUID=$u")" ] && [ "$(runs_of add "$NET/${b}p")" = 1 ] && [ "$(runs_of add "$NET/$b")" = 1 ]; }
t_wait_for "$T_IDLE" _first_done || t_fail "the adds of $a and $b did not run"
"$HOTPLUGCTL" pause >/dev/null || t_fail "hotplugctl pause failed"
held=$(t_uuid)
echo "change $held" >/sys/class/net/lo/uevent
_queued() { [ "$(t_status_field queued)" -ge 1 ] 2>/dev/null; }
t_wait_for "$T_IDLE" _queued || t_fail "the change of lo was not queued"
t_stop_daemon
mv "$T_LOG" "$T_DIR/first.log"
grep -q "wrote the handover file $HF" "$T_DIR/first.log" || t_fail "the first daemon did not write $HF: $(tail -3 "$T_DIR/first.log")"
[ "$(stat -c %a "$HF")" = 600 ] || t_fail "$HF has mode $(stat -c %a "$HF"), not 600"
echo "ok: the first daemon wrote $HF ($(stat -c %s "$HF") bytes) with a change of lo queued"

# While nobody listens.
t_veth "$c"
ip link del "$b" || t_fail "cannot delete $b"
before_a=$(grep -rlx "env:DEVPATH=$NET/$a" "$T_DIR/runs" | grep -vc '\.tmp$')

start
grep -q "took over the handover file $HF" "$T_LOG" || t_fail "the second daemon did not take $HF over"
[ -e "$HF" ] && t_fail "$HF is still there after it was taken over"
_second_done() {
        [ "$(t_count_runs_with "SYNTH_UUID=$held")" = 1 ] &&
                [ "$(runs_of add "$NET/$c")" = 1 ] && [ "$(runs_of add "$NET/${c}p")" = 1 ] &&
                [ "$(runs_of remove "$NET/$b")" = 1 ] && [ "$(runs_of remove "$NET/${b}p")" = 1 ]
}
t_wait_for "$T_IDLE" _second_done ||
        t_fail "after the takeover: held change $(t_count_runs_with "SYNTH_UUID=$held") run(s), add of $c $(runs_of add "$NET/$c"), of ${c}p $(runs_of add "$NET/${c}p"), remove of $b $(runs_of remove "$NET/$b"), of ${b}p $(runs_of remove "$NET/${b}p") (1 each expected)"
f=$(grep -rlx "env:DEVPATH=$NET/$c" "$T_DIR/runs" | head -n 1)
[ "$(t_env_of "$f" SYNTH_ARG_HOTPLUGD)" = resync ] || t_fail "the add of $c was not written by the resync"
t_settle
after_a=$(grep -rlx "env:DEVPATH=$NET/$a" "$T_DIR/runs" | grep -vc '\.tmp$')
[ "$after_a" = "$before_a" ] || t_fail "$a, present on both sides, got $((after_a - before_a)) event(s) from the targeted resync"
grep -q "handover: targeted resync of what changed after SEQNUM .*: 2 added, [1-9][0-9]* removed" "$T_LOG" ||
        t_fail "no handover line with 2 added and the removes: $(grep handover "$T_LOG")"
[ "$(t_status_field taken_over)" = 1 ] || t_fail "status counts $(t_status_field taken_over) event(s) taken over, not 1"
echo "ok: $(grep -o 'handover: .*;' "$T_LOG" | head -n 1) the held change ran once"

# The coldplug's skip.
out=$("$HOTPLUGCTL" trigger --dry-run --skip-handled --subsystem-match=net --sysname-match="hph$$*" 2>&1) ||
        t_fail "trigger --skip-handled failed: $out"
echo "$out" | grep -qx "/sys$NET/${a}p" || t_fail "trigger --skip-handled left out ${a}p, whose add never ran: $out"
for d in "$a" "$c" "${c}p"; do
        echo "$out" | grep -qx "/sys$NET/$d" && t_fail "trigger --skip-handled did not leave out $d: $out"
done
echo "$out" | grep -q "device(s) skipped: their add already ran" || t_fail "trigger --skip-handled did not say how many: $out"
"$HOTPLUGCTL" info "/sys/class/net/$a" | grep -q "^Add ran: *yes" || t_fail "info does not say that $a's add ran"
"$HOTPLUGCTL" trigger --skip-handled --action=change -n lo >/dev/null 2>&1 && t_fail "--skip-handled with --action=change was accepted"
echo "ok: trigger --skip-handled: $(echo "$out" | grep skipped)"
t_stop_daemon
mv "$T_LOG" "$T_DIR/second.log"
[ -f "$HF" ] || t_fail "the second daemon wrote no $HF"

# A coldplug that asks while the targeted pass has not planned yet waits for the plan (the daemon
# answers EAGAIN, trigger asks again): held events fill --max-queue=1 behind a 300 ms agent, so the
# pass waits, and the device made meanwhile is skipped, not triggered a second time.
d=hph$$d
rm -f "$HF"
start
"$HOTPLUGCTL" pause >/dev/null || t_fail "hotplugctl pause failed"
for i in 1 2 3 4; do echo "change $(t_uuid)" >/sys/class/net/lo/uevent; done
_four() { [ "$(t_status_field queued)" -ge 4 ] 2>/dev/null; }
t_wait_for "$T_IDLE" _four || t_fail "4 changes of lo were not queued"
t_stop_daemon
mv "$T_LOG" "$T_DIR/third.log"
t_veth "$d"
echo 300 >"$T_DIR/sleep_ms"
start --max-queue=1
out=$("$HOTPLUGCTL" trigger --dry-run --skip-handled --sysname-match="$d*" 2>&1) || t_fail "trigger --skip-handled failed: $out"
echo "$out" | grep -q "/sys$NET/$d" && t_fail "trigger --skip-handled asked before the plan and would trigger $d again: $out"
echo "$out" | grep -q "2 device(s) skipped" || t_fail "trigger --skip-handled did not skip $d and ${d}p: $out"
_d_added() { [ "$(runs_of add "$NET/$d")" = 1 ] && [ "$(runs_of add "$NET/${d}p")" = 1 ]; }
t_wait_for "$T_IDLE" _d_added || t_fail "the targeted pass did not add $d and ${d}p once each"
echo 0 >"$T_DIR/sleep_ms"
t_settle
t_stop_daemon
mv "$T_LOG" "$T_DIR/fourth.log"
echo "ok: a coldplug asking before the targeted pass planned waited for it: $(echo "$out" | grep skipped)"

# Refusals: each file is refused whole, kept as .refused, and events run.
refused() { # refused WHAT REASON: start on the prepared $HF, expect REASON
        rm -f "$HF.refused"
        start
        grep -q "refused the handover file $HF: $2" "$T_LOG" || t_fail "$1: not refused with '$2': $(grep -i handover "$T_LOG")"
        [ -e "$HF.refused" ] || [ -L "$HF.refused" ] || t_fail "$1: not kept as $HF.refused"
        local v
        v=$(t_uuid)
        echo "change $v" >/sys/class/net/lo/uevent
        t_wait_for "$T_IDLE" sh -c "grep -rlx 'env:SYNTH_UUID=$v' '$T_DIR/runs' >/dev/null" || t_fail "$1: events no longer run"
        t_stop_daemon
        mv "$T_LOG" "$T_DIR/refused-$1.log"
        echo "ok: $1 refused: $2"
}
[ -f "$HF" ] || t_fail "the fourth daemon wrote no $HF"
cp "$HF" "$T_DIR/good"
chmod 0666 "$HF"
refused writable "others may write to it"
cp "$T_DIR/good" "$HF"
size=$(stat -c %s "$HF")
printf '\x5a' | dd of="$HF" bs=1 seek=$((size - 3)) conv=notrunc 2>/dev/null
refused corrupt "its body's checksum is wrong"
cp "$T_DIR/good" "$HF"
chown nobody "$HF"
refused stranger "it is owned by uid"
cp "$T_DIR/good" "$T_DIR/elsewhere"
ln -sf "$T_DIR/elsewhere" "$HF"
refused symlink "it is a symbolic link"
rm -f "$HF"
