#!/bin/bash
# Queue benchmark (root): what one queued event costs the daemon in memory,
# and whether a large backlog drains without losing anything.
#
#   bench/queue.sh [BUILDDIR] [N]      (default: build 1000000)
#
# hotplugd runs with --max-queue=1048576 and the trivial agent, and is
# paused (hotplugctl pause); N "change" uevents are written round-robin to
# lo and three veth pairs; once hotplugctl status shows them all queued, the
# daemon's VmRSS growth since just before the burst, divided by N, is the
# cost per queued event.  Then it resumes and every event must run once
# (lost = events whose agent never ran), in order per device (violations).
#
# Environment:
#   QUEUE_DRY=1      --dry-run: the daemon's "would run" log lines stand for
#                    the agent runs (a million real spawns take a long time
#                    on a small machine; the queue is the same)
#   QUEUE_LOCK=FILE  hold flock FILE while the burst is written and queued
#                    (the burst reaches every uevent listener on the machine)
#   QUEUE_IDLE=S     every wait gives up after S seconds in which nothing
#                    moved (default 60), never after a fixed total
#
# Last line, for other scripts to read:
#   queue: N events queued while paused, RSS X bytes per queued event, lost L
set -u
B=${1:-build}
N=${2:-1000000}
IDLE=${QUEUE_IDLE:-60}
[ "$(id -u)" = 0 ] || { echo "bench/queue.sh needs root (real uevents)" >&2; exit 1; }
HOTPLUGD=$B/src/hotplugd
HOTPLUGCTL=$B/src/hotplugctl
for f in "$HOTPLUGD" "$HOTPLUGCTL" "$B/bench/agent-append" "$B/tests/kernel/uevent-burst"; do
        [ -x "$f" ] || { echo "missing $f: build first (meson compile -C $B)" >&2; exit 1; }
done
. "$(dirname "$0")/../tests/lib/until.sh"

W=$(mktemp -d /tmp/hotplugd-queue.XXXXXX)
VETHS=()
DPID=
cleanup() {
        [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
fail() {
        echo "bench/queue.sh: $*" >&2
        tail -n 20 "$W/daemon.log" >&2
        exit 1
}

cp "$B/bench/agent-append" "$W/agent"
FILES=(/sys/class/net/lo/uevent)
for i in 1 2 3; do
        v=hpq$$x$i
        ip link add "$v" type veth peer name "${v}p" || fail "cannot create veth $v"
        VETHS+=("$v")
        FILES+=("/sys/class/net/$v/uevent")
done

# events.log: "SEQNUM DEVPATH SYNTH_UUID" per run, written by the agent or,
# in a dry run, taken from the daemon's "would run" lines.
export HOTPLUGCTL_SOCKET=$W/control
args=(--agent "$W/agent" --all --log-target stderr --control-socket "$HOTPLUGCTL_SOCKET" --max-queue 1048576)
if [ "${QUEUE_DRY:-0}" = 1 ]; then
        mkfifo "$W/stderr"
        awk -v lg="$W/daemon.log" -v ev="$W/events.log" '
                / would run: / {
                        s = d = u = "-"
                        if (match($0, /SEQNUM=[0-9]+/)) s = substr($0, RSTART + 7, RLENGTH - 7)
                        if (match($0, /DEVPATH=[^ ]+/)) d = substr($0, RSTART + 8, RLENGTH - 8)
                        if (match($0, /SYNTH_UUID=[0-9a-f-]+/)) u = substr($0, RSTART + 11, RLENGTH - 11)
                        print s, d, u > ev
                        next
                }
                { print > lg; fflush(lg) }' <"$W/stderr" &
        "$HOTPLUGD" "${args[@]}" --dry-run --log-level info 2>"$W/stderr" >/dev/null &
else
        "$HOTPLUGD" "${args[@]}" --log-level notice 2>"$W/daemon.log" &
fi
DPID=$!
[ -n "$DPID" ] || fail "hotplugd did not start"
answers() { kill -0 "$DPID" && "$HOTPLUGCTL" status 2>/dev/null; }
cpu() { awk '{ print $14 + $15 }' "/proc/$DPID/stat" 2>/dev/null; }
until_progress "$IDLE" cpu answers || fail "hotplugd did not start"
"$HOTPLUGCTL" pause >/dev/null || fail "hotplugctl pause failed"
queued() { "$HOTPLUGCTL" status | sed -n 's/^Queue: *\([0-9]*\) queued.*/\1/p'; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status"; }

burst() {
        "$B/tests/kernel/uevent-burst" "$N" "$prefix" "${FILES[@]}" >/dev/null || fail "uevent-burst failed"
        until_progress "$IDLE" queued all_queued || fail "only $(queued) of $((q0 + N)) events queued"
}
all_queued() { [ "$(queued)" -ge $((q0 + N)) ]; }
[ -n "${QUEUE_LOCK:-}" ] && { exec 9>>"$QUEUE_LOCK" && flock 9 || fail "cannot lock $QUEUE_LOCK"; }
rss0=$(rss)
q0=$(queued)
prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
burst
rss1=$(rss)
[ -n "${QUEUE_LOCK:-}" ] && exec 9>&-
per_event=$(((rss1 - rss0) * 1024 / N))

"$HOTPLUGCTL" resume >/dev/null || fail "hotplugctl resume failed"
drained() { "$HOTPLUGCTL" status | grep -q "^Queue: *0 queued, 0 running"; }
until_progress "$IDLE" queued drained || echo "note: $(queued) events still queued, nothing moved for ${IDLE}s" >&2
kill "$DPID"
wait 2>/dev/null # the daemon, and in a dry run the log filter behind it
DPID=
lost=$((N - $(grep "$prefix" "$W/events.log" | awk '{ print $3 }' | sort -u | wc -l)))
violations=$(grep "$prefix" "$W/events.log" | awk '$1 < last[$2] { v++ } { last[$2] = $1 } END { print v + 0 }')
grep -E "stopped:|resumed" "$W/daemon.log" | sed 's/^/daemon: /'
echo "order: $violations per-device order violations; VmRSS $rss0 KiB before the burst, $rss1 KiB with the events queued"
echo "queue: $N events queued while paused, RSS $per_event bytes per queued event, lost $lost"
