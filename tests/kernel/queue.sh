#!/bin/bash
# A large queue: 100,000 real uevents over three devices while the daemon
# is paused (hotplugctl pause).  All of them are queued, most in the
# backlog behind the scheduler's window, and each costs at most 100 bytes
# of the daemon's RSS (VmRSS growth over the burst / events; not checked in
# a sanitizer build, whose allocator keeps redzones and freed memory): the
# backlog keeps of an event little more than what sets it apart from an
# earlier one of its device (about 45 bytes each here; 190 when it kept
# whole events).
# After hotplugctl resume every event runs exactly once, in SEQNUM order
# per device, and the ledger has no gap.  Dry run: the "would run" log
# lines are the runs (a real agent per event takes minutes on a small
# machine; the queue is the same).
. "$(dirname "$0")/lib.sh"
t_require_root
N=${QUEUE_EVENTS:-100000}
MAX_BYTES=100

v=hpq$$
t_veth "$v"
t_start_daemon --agent /bin/true --all --dry-run --log-level info --max-queue $((2 * N)) --max-queue-bytes=1G
"$HOTPLUGCTL" pause >/dev/null || t_fail "hotplugctl pause failed"
queued() { "$HOTPLUGCTL" status | sed -n 's/^Queue: *\([0-9]*\) queued.*/\1/p'; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$T_DAEMON_PID/status"; }

rss0=$(rss)
q0=$(queued)
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" /sys/class/net/lo/uevent /sys/class/net/$v/uevent /sys/class/net/${v}p/uevent ||
        t_fail "burst failed"
all_queued() { [ "$(queued)" -ge $((q0 + N)) ]; }
t_wait_for "$T_IDLE" all_queued || t_fail "only $(queued) of $((q0 + N)) events queued"
rss1=$(rss)
per_event=$(((rss1 - rss0) * 1024 / N))
echo "queued $N events while paused: VmRSS $rss0 -> $rss1 KiB, $per_event bytes per queued event"
# What the daemon counts it holds, part by part, to set against the RSS.
"$HOTPLUGCTL" status | grep "^Memory:"
grep -E "^(VmRSS|VmHWM|RssAnon|RssFile):" "/proc/$T_DAEMON_PID/status" | tr -s ' \t' ' ' | paste -sd' '
if ldd "$HOTPLUGD" 2>/dev/null | grep -q -e libasan -e libubsan; then
        echo "note: sanitizer build, the bound of $MAX_BYTES bytes per queued event is not checked"
else
        [ "$per_event" -le "$MAX_BYTES" ] || t_fail "$per_event bytes of RSS per queued event (at most $MAX_BYTES)"
fi

"$HOTPLUGCTL" resume >/dev/null || t_fail "hotplugctl resume failed"
drained() { "$HOTPLUGCTL" status | grep -q "^Queue: *0 queued, 0 running"; }
t_wait_for "$T_IDLE" drained || t_fail "still queued: $(queued)"
t_stop_daemon

# One line per run of ours: SEQNUM DEVPATH UUID, in the order they ran.
grep " would run: .*SYNTH_UUID=$prefix" "$T_LOG" |
        sed -E 's/.* SEQNUM=([0-9]+) .*DEVPATH=([^ ]+) .*SYNTH_UUID=([^ ]+)[] ].*/\1 \2 \3/' >"$T_DIR/table"
[ "$(wc -l <"$T_DIR/table")" = "$N" ] || t_fail "$(wc -l <"$T_DIR/table") runs for $N events"
[ "$(cut -d' ' -f3 "$T_DIR/table" | sort -u | wc -l)" = "$N" ] || t_fail "UUIDs not all distinct: an event ran twice"
violations=$(awk '$1 <= last[$2] { v++ } { last[$2] = $1 } END { print v + 0 }' "$T_DIR/table")
[ "$violations" = 0 ] || t_fail "$violations per-device order violations"
grep "stopped:" "$T_LOG"
grep -q " 0 gaps, 0 duplicates" "$T_LOG" || t_fail "ledger: $(grep stopped: "$T_LOG")"
echo "ok: $N events queued at $per_event bytes each, each ran once, in order per device, ledger without gap"
