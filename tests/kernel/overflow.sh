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
# With --no-resync the overflow is counted and nothing is written.  With
# resync-subsystems = net (set by a reload), a second listener on group 1
# hears the pass's events for net devices only; the agent gets the net
# device created during the loss and the remove of the one deleted, and
# nothing for the block devices created and deleted meanwhile.
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

t_stop_daemon

# resync-subsystems = net, applied by a reload: the pass writes only to net
# devices' uevent files; the block devices are left alone.
mv "$T_LOG" "$T_DIR/daemon-no-resync.log"
CONF=$T_DIR/hotplugd.conf
printf 'log-level = debug\n' >"$CONF"
chmod 644 "$CONF"
SOLD="hpo$$s"
t_veth "$SOLD"
t_zram_add
ZSOLD=$T_ZRAM
t_start_daemon --config "$CONF" --agent "$T_AGENT" --all --rcvbuf 4096
printf 'log-level = debug\nresync-subsystems = net\n' >"$CONF"
"$HOTPLUGCTL" reload || t_fail "reload with resync-subsystems = net failed"
"$UEVENT_LISTEN" 1 300 SUBSYSTEM SYNTH_ARG_HOTPLUGD >"$T_DIR/heard" 2>"$T_DIR/listen.err" &
t_on_exit "kill $!"
t_wait_for 10 grep -q ready "$T_DIR/listen.err" || t_fail "the second listener did not start"

kill -STOP "$T_DAEMON_PID"
"$UEVENT_BURST" "$N_BURST" "$(t_uuid_prefix)" /sys/class/net/lo/uevent || t_fail "burst failed"
t_veth "hpo$$t"
t_zram_add
ZSNEW=$T_ZRAM
ip link del "$SOLD" || t_fail "cannot delete $SOLD"
t_zram_remove "$ZSOLD"
kill -CONT "$T_DAEMON_PID"

t_wait_for 30 grep -q "resync after overflow:" "$T_LOG" || t_fail "resync-subsystems: no resync after the overflow"
t_settle || t_fail "settle failed (no progress for $T_IDLE s)"
sleep 0.5
line=$(grep -m1 "resync after overflow:" "$T_LOG")
echo "pass: ${line#*resync after overflow: }"
uuid=$(sed -n 's/.*(SYNTH_UUID=\([0-9a-f-]*\)).*/\1/p' <<<"$line")
[ -n "$uuid" ] || t_fail "no UUID in: $line"

# What the kernel sent for the pass, by subsystem, as the second listener heard it.
awk -v u="$uuid" '$4 == u { print $5, $6 }' "$T_DIR/heard" | sort | uniq -c >"$T_DIR/heard-pass"
echo "the kernel's events of the pass (count, SUBSYSTEM, SYNTH_ARG_HOTPLUGD):"
cat "$T_DIR/heard-pass"
n_net=$(awk '$2 == "net" && $3 == "resync" { print $1 }' "$T_DIR/heard-pass")
n_all=$(awk '{ n += $1 } END { print n + 0 }' "$T_DIR/heard-pass")
[ "${n_net:-0}" -ge 3 ] || t_fail "resync-subsystems: ${n_net:-0} net events in the pass (lo and hpo$$t/p at least)"
[ "$n_all" = "$n_net" ] || t_fail "resync-subsystems = net: the pass wrote to other devices: $(tr '\n' ';' <"$T_DIR/heard-pass")"
written=$(sed -n 's/.*: \([0-9]*\) changed, \([0-9]*\) added, .*/\1 \2/p' <<<"$line" | awk '{ print $1 + $2 }')
[ "$written" = "$n_net" ] || t_fail "the log counts $written writes, the listener heard $n_net events"
left=$(sed -n 's/.* \([0-9]*\) left alone (resync-subsystems).*/\1/p' <<<"$line")
[ "${left:-0}" -gt 0 ] || t_fail "resync-subsystems: no device left alone in: $line"
"$HOTPLUGCTL" status >"$T_DIR/status" || t_fail "status failed"
# Counted over every pass of this daemon: at least this pass's.
st_left=$(sed -n 's/^Resync: .* removed, \([0-9]*\) left alone).*/\1/p' "$T_DIR/status")
[ "${st_left:-0}" -ge "$left" ] ||
        t_fail "resync-subsystems: status does not count the $left devices left alone: $(grep Resync: "$T_DIR/status")"
grep -Eq "resync: .* of them [1-9][0-9]* learnt and [1-9][0-9]* forgotten" "$T_LOG" ||
        t_fail "the new zram was not learnt or the old one not forgotten: $(grep 'resync: ' "$T_LOG" | tail -1)"

# The agent: add for the new veth pair, remove for the old one, nothing outside net (neither zram).
grep -l -x "env:SYNTH_UUID=$uuid" "$T_DIR"/runs/*.agent >"$T_DIR/pass-files" || t_fail "no agent ran for the pass"
while read -r f; do
        echo "$(t_env_of "$f" ACTION) $(t_env_of "$f" DEVPATH) $(t_env_of "$f" SUBSYSTEM)"
done <"$T_DIR/pass-files" >"$T_DIR/pass"
awk '$3 != "net"' "$T_DIR/pass" | grep -q . && t_fail "agent runs of the pass outside net: $(awk '$3 != "net"' "$T_DIR/pass")"
for d in "/devices/virtual/net/hpo$$t" "/devices/virtual/net/hpo$$tp"; do
        grep -q -x "add $d net" "$T_DIR/pass" || t_fail "resync-subsystems: no resync add for $d"
done
grep -q -x "remove /devices/virtual/net/$SOLD net" "$T_DIR/pass" || t_fail "resync-subsystems: no remove for $SOLD"
echo "ok: resync-subsystems = net: $n_net uevent writes, all net, zram$ZSNEW and zram$ZSOLD untouched;" \
        "$left devices left alone"
t_stop_daemon
