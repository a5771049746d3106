#!/bin/bash
# Forced overflow and resync.  hotplugd runs with the smallest receive
# buffer and is stopped (SIGSTOP) while a burst of real uevents fills that
# buffer; then, still stopped, devices are created (veth pairs, zram) and
# devices it knew are removed, so those events are surely lost.  After
# SIGCONT: the ledger reports the overflow and its gap range; the resync
# ran once; every device created during the loss had its agent run with a
# resync `add` (SYNTH_ARG_HOTPLUGD=resync, HOTPLUGD_RESYNC=1); every device
# removed during the loss had a `remove` run with HOTPLUGD_RESYNC=1; every
# device still there had a `change` or `add` of the pass.
. "$SRCDIR/tests/kernel/lib.sh"
t_require_root
# A stopped daemon holds SIGTERM until it is continued: continue it first,
# or a cleanup after a failure would wait for it forever.
eval "orig_$(declare -f t_stop_daemon)"
t_stop_daemon() {
        [ -n "$T_DAEMON_PID" ] && kill -CONT "$T_DAEMON_PID" 2>/dev/null
        orig_t_stop_daemon
}
t_make_agent
N_BURST=${OVERFLOW_BURST:-300}

[ -e /sys/class/zram-control/hot_add ] || modprobe zram 2>/dev/null
[ -e /sys/class/zram-control/hot_add ] || t_skip "no zram (zram-control missing)"

# Devices that exist before the daemon starts (so it knows them) and are removed during the loss.
OLD="hpo$$o"
t_veth "$OLD"
t_zram_add
ZOLD=$T_ZRAM

t_start_daemon --agent "$T_AGENT" --all --rcvbuf 4096 --log-level debug
grep -q "netlink receive buffer is" "$T_LOG" && echo "note: $(grep "netlink receive buffer is" "$T_LOG")"

kill -STOP "$T_DAEMON_PID"
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N_BURST" "$prefix" /sys/class/net/lo/uevent /sys/class/net/$OLD/uevent ||
        t_fail "burst failed"
# Now the buffer is full: everything below is lost.
NEW=()
for i in 1 2 3; do
        t_veth "hpo$$n$i"
        NEW+=("/devices/virtual/net/hpo$$n$i" "/devices/virtual/net/hpo$$n${i}p")
done
ZNEW=()
for i in 1 2; do
        t_zram_add
        ZNEW+=("$T_ZRAM")
        NEW+=("/devices/virtual/block/zram$T_ZRAM")
done
ip link del "$OLD" || t_fail "cannot delete $OLD"
t_zram_remove "$ZOLD"
GONE=("/devices/virtual/net/$OLD" "/devices/virtual/net/${OLD}p" "/devices/virtual/block/zram$ZOLD")
kill -CONT "$T_DAEMON_PID"

t_wait_for 30 grep -q "resync after overflow:" "$T_LOG" || t_fail "no resync after the overflow"
t_settle || t_fail "settle failed (no progress for $T_IDLE s)"
sleep 0.5
"$HOTPLUGCTL" status >"$T_DIR/status" || t_fail "status failed"
cat "$T_DIR/status"
grep "resync after overflow:" "$T_LOG"

# The ledger: an overflow, and a gap range classified as overflow.
grep -Eq "Ledger: .* [1-9][0-9]* overflows" "$T_DIR/status" || t_fail "status shows no overflow"
grep -Eq "^  [0-9]+-[0-9]+ \([0-9]+ events, overflow\)" "$T_DIR/status" || t_fail "status shows no overflow gap range"
grep -Eq "SEQNUM gap: [0-9]+-[0-9]+ missing, [0-9]+ events \(overflow\)" "$T_LOG" || t_fail "no overflow gap in the log"
grep -Eq "Resync: +on, [1-9][0-9]* passes" "$T_DIR/status" || t_fail "status shows no resync pass"

line=$(grep -m1 "resync after overflow:" "$T_LOG")
uuid=$(sed -n 's/.*(SYNTH_UUID=\([0-9a-f-]*\)).*/\1/p' <<<"$line")
[ -n "$uuid" ] || t_fail "no UUID in: $line"

# Run files of this pass, as "ACTION DEVPATH file" lines.
grep -l -x "env:SYNTH_UUID=$uuid" "$T_DIR"/runs/*.agent >"$T_DIR/pass-files" || t_fail "no agent ran for the pass"
while read -r f; do
        echo "$(t_env_of "$f" ACTION) $(t_env_of "$f" DEVPATH) $f"
done <"$T_DIR/pass-files" >"$T_DIR/pass"
echo "pass: $(wc -l <"$T_DIR/pass") agent runs with SYNTH_UUID=$uuid"

for d in "${NEW[@]}"; do
        f=$(awk -v d="$d" '$1 == "add" && $2 == d { print $3; exit }' "$T_DIR/pass")
        [ -n "$f" ] || t_fail "created during the loss, no resync add ran: $d"
        [ "$(t_env_of "$f" SYNTH_ARG_HOTPLUGD)" = resync ] || t_fail "$d: add not marked SYNTH_ARG_HOTPLUGD=resync"
        [ "$(t_env_of "$f" HOTPLUGD_RESYNC)" = 1 ] || t_fail "$d: add without HOTPLUGD_RESYNC=1"
done
for d in "${GONE[@]}"; do
        f=$(awk -v d="$d" '$1 == "remove" && $2 == d { print $3; exit }' "$T_DIR/pass")
        [ -n "$f" ] || t_fail "removed during the loss, no remove ran: $d"
        [ "$(t_env_of "$f" HOTPLUGD_RESYNC)" = 1 ] || t_fail "$d: remove without HOTPLUGD_RESYNC=1"
        [ "$(t_field "$f" argv1)" = "$(t_env_of "$f" SUBSYSTEM)" ] || t_fail "$d: remove agent argv1 is not SUBSYSTEM"
        [ -n "$(t_env_of "$f" SUBSYSTEM)" ] || t_fail "$d: remove without SUBSYSTEM"
done
# Known devices that stayed got a change; lo is one of them.
awk '$1 == "change" && $2 == "/devices/virtual/net/lo"' "$T_DIR/pass" | grep -q . || t_fail "lo had no resync change"
# Nothing that still exists was removed, nothing gone was re-triggered.
while read -r action devpath f; do
        case "$action" in
        remove) [ ! -e "/sys$devpath" ] || t_fail "synthesised remove for present $devpath" ;;
        add | change) ;;
        *) t_fail "unexpected action $action in the pass ($devpath)" ;;
        esac
done <"$T_DIR/pass"
n_gone_runs=$(awk '$1 == "remove"' "$T_DIR/pass" | wc -l)
# Synthesised removes carry SEQNUMs from the overflow gap: none collides with a real event.
dups=$(for f in $(awk '{ print $3 }' "$T_DIR/pass"); do t_env_of "$f" SEQNUM; done | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || t_fail "$dups SEQNUMs used twice in the pass"

echo "ok: overflow recovered; ${#NEW[@]} created and ${#GONE[@]} removed devices seen by the agent;" \
        "$n_gone_runs synthesised removes"
echo "pass: ${line#*resync after overflow: }"
t_stop_daemon
[ "$T_DAEMON_RC" = 0 ] || t_fail "hotplugd exited with $T_DAEMON_RC"

# --no-resync: the overflow is still accounted, nothing is re-triggered.
mv "$T_LOG" "$T_DIR/daemon-resync.log"
t_start_daemon --agent "$T_AGENT" --all --rcvbuf 4096 --no-resync
kill -STOP "$T_DAEMON_PID"
"$UEVENT_BURST" "$N_BURST" "$(t_uuid_prefix)" /sys/class/net/lo/uevent || t_fail "burst failed"
kill -CONT "$T_DAEMON_PID"
t_wait_for 10 grep -q "netlink receive buffer overflowed" "$T_LOG" || t_fail "no overflow with --no-resync"
echo "change $(t_uuid)" >/sys/class/net/lo/uevent # opens the gap
t_settle || t_fail "settle failed (no progress for $T_IDLE s)"
sleep 0.5
"$HOTPLUGCTL" status >"$T_DIR/status" || t_fail "status failed"
grep -Eq "^Resync: +off, 0 passes" "$T_DIR/status" || t_fail "--no-resync: $(grep Resync: "$T_DIR/status")"
grep -Eq "\([0-9]+ events, overflow\)" "$T_DIR/status" || t_fail "--no-resync: no overflow gap"
! grep -q "resync after overflow" "$T_LOG" || t_fail "--no-resync: a resync ran"
echo "ok: --no-resync counts the overflow and re-triggers nothing"
