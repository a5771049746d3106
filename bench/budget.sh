#!/bin/bash
# Memory budget benchmark (root): the daemon's RSS under a burst far larger
# than its budget, and whether every device's last state still reaches an
# agent afterwards.
#
#   bench/budget.sh [BUILDDIR] [N]      (default: build 100000)
#
# hotplugd runs with a small --max-queue-bytes (BUDGET, default 1M), a
# receive buffer of RCVBUF bytes (default 1M), agent-append-action (one line
# "SEQNUM DEVPATH SYNTH_UUID ACTION" per run) and only net events
# (--filter-policy "net=keep,*=drop": other processes' uevents stay out),
# and is paused (hotplugctl pause: no agent starts, events queue until the
# budget); it runs in a network namespace of its own.  Its VmRSS is sampled every 20 ms from before the burst to the
# end (shell builtins only: no process of the bench's own while it runs).
# N "change" uevents go round-robin to lo and three veth pairs; while the
# daemon is overloaded a fourth pair is created and a fifth deleted.  Then
# it resumes: it reads on, the kernel's drops are recovered by resync, and
# for every device the last agent run must be its present state (add or
# change for a device that is there, remove for one that is gone).
#
# Printed: the idle RSS (the fixed cost: code, libraries, device model,
# before any event), the budget, the most RSS sampled, the excess over idle,
# the daemon's own count of the most bytes it held, the samples taken.
#
# Environment: BUDGET, RCVBUF (sizes as hotplugd takes them), BUDGET_IDLE=S
# (every wait gives up after S seconds in which nothing moved, default 60).
#
# Last line, for other scripts to read:
#   budget: N events, budget B bytes, idle RSS I KiB, max RSS M KiB (+X KiB), peak held P bytes, S samples, lost L
set -u
B=${1:-build}
N=${2:-100000}
BUDGET=${BUDGET:-1M}
RCVBUF=${RCVBUF:-1M}
IDLE=${BUDGET_IDLE:-60}
. "$(dirname "$0")/lib.sh"
need_root budget.sh
need_built "$B" src/hotplugd src/hotplugctl bench/agent-append-action tests/kernel/uevent-burst
# A network and mount namespace of its own with its own sysfs, as peers.sh
# has: its net devices' events reach only this daemon, others' stay out.
if [ -z "${BUDGET_NS:-}" ]; then
        BUDGET_NS=1 exec unshare -n -m "$0" "$B" "$N"
fi
mount --make-rprivate / && mount -t sysfs sysfs /sys && ip link set lo up || exit 1
. "$(dirname "$0")/../tests/lib/until.sh"
HOTPLUGD=$B/src/hotplugd
HOTPLUGCTL=$B/src/hotplugctl

W=$(mktemp -d /tmp/hotplugd-budget.XXXXXX)
VETHS=()
DPID=
SPID=
cleanup() {
        [ -n "$SPID" ] && kill "$SPID" 2>/dev/null
        [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
fail() {
        echo "bench/budget.sh: $*" >&2
        tail -n 20 "$W/daemon.log" >&2
        exit 1
}
veth() {
        ip link add "$1" type veth peer name "$1p" || fail "cannot create veth $1"
        VETHS+=("$1")
}

cp "$B/bench/agent-append-action" "$W/agent"
FILES=(/sys/class/net/lo/uevent)
DEVS=(lo)
for i in 1 2 3; do
        veth "hpk$$x$i"
        FILES+=("/sys/class/net/hpk$$x$i/uevent" "/sys/class/net/hpk$$x${i}p/uevent")
        DEVS+=("hpk$$x$i" "hpk$$x${i}p")
done
old=hpk$$o
new=hpk$$n
veth "$old"

machine_line
export HOTPLUGCTL_SOCKET=$W/control
"$HOTPLUGD" --log-target=stderr --control-socket="$HOTPLUGCTL_SOCKET" --agent "$W/agent" \
        --filter-policy "net=keep,*=drop" --resync-subsystems net --after-udev=no \
        --max-queue-bytes="$BUDGET" --rcvbuf "$RCVBUF" >"$W/daemon.log" 2>&1 &
DPID=$!
listening() { grep -q listening "$W/daemon.log" && echo 1 || echo 0; }
wait_for 1 listening || fail "hotplugd did not start"
"$HOTPLUGCTL" pause >/dev/null || fail "hotplugctl pause failed"
json() { "$HOTPLUGCTL" status --json | sed -n "s/.*\"$1\": *\([0-9a-z]*\).*/\1/p"; }
budget_bytes=$(json max_queue_bytes)

# VmRSS in KiB every 20 ms, one a line, read with builtins only.
rss_now() {
        local k v _
        while read -r k v _; do
                [ "$k" = VmRSS: ] && { echo "$v"; return; }
        done <"/proc/$DPID/status"
}
nap 1
idle_rss=$(rss_now)
(
        while [ -e "/proc/$DPID/status" ]; do
                rss_now
                nap 0.02
        done
) >"$W/rss" 2>/dev/null &
SPID=$!

prefix=$(t=$(cat /proc/sys/kernel/random/uuid) && echo "${t:0:23}")
"$B/tests/kernel/uevent-burst" "$N" "$prefix" "${FILES[@]}" || fail "burst failed"
overloaded() { "$HOTPLUGCTL" status | grep -c "OVERLOADED now"; }
wait_for 1 overloaded || fail "never overloaded: $(grep Memory: <("$HOTPLUGCTL" status))"
"$HOTPLUGCTL" status | grep -E "^(Queue|Memory):"
ip link add "$new" type veth peer name "${new}p" || fail "cannot create veth $new"
VETHS+=("$new")
ip link del "$old" || fail "cannot delete $old"

"$HOTPLUGCTL" resume >/dev/null || fail "hotplugctl resume failed"
runs() { wc -l <"$W/events.log" 2>/dev/null; }
until_progress "$IDLE" runs grep -q "resync after overflow:" "$W/daemon.log" ||
        fail "no resync after the kernel's drops (no progress for $IDLE s)"
until_progress "$IDLE" runs "$HOTPLUGCTL" settle --timeout 2 >/dev/null ||
        fail "settle: no progress for $IDLE s"
nap 1
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null
SPID=
grep -E "overloaded:|overload over|resync after overflow:" "$W/daemon.log" | head -4 | cut -c1-240
peak_bytes=$(json peak_bytes)
overloads=$(json overloads)

# The last run of each device, in the order the runs appended their lines.
lost=0
for d in "${DEVS[@]}" "$new" "${new}p"; do
        a=$(awk -v d="/devices/virtual/net/$d" '$2 == d { a = $4 } END { print a }' "$W/events.log")
        case "$a" in
        add | change) ;;
        *) echo "LOST: $d is there, its last run was '${a:-none}'"; lost=$((lost + 1)) ;;
        esac
done
for d in "$old" "${old}p"; do
        a=$(awk -v d="/devices/virtual/net/$d" '$2 == d { a = $4 } END { print a }' "$W/events.log")
        [ "$a" = remove ] || { echo "LOST: $d is gone, its last run was '${a:-none}'"; lost=$((lost + 1)); }
done
ran=$(grep -c " $prefix" "$W/events.log")
samples=$(wc -l <"$W/rss")
max_rss=$(sort -n "$W/rss" | tail -1)
echo "burst: $N events, $ran of them ran (the rest dropped by the kernel, recovered by resync); overloaded $overloads times"
echo "RSS: idle $idle_rss KiB (fixed cost), budget $((budget_bytes / 1024)) KiB, max $max_rss KiB" \
        "(+$((max_rss - idle_rss)) KiB over idle) in $samples samples; the daemon counted at most $peak_bytes bytes held"
[ "$lost" = 0 ] || fail "$lost devices' last state did not reach the agent"
echo "budget: $N events, budget $budget_bytes bytes, idle RSS $idle_rss KiB, max RSS $max_rss KiB" \
        "(+$((max_rss - idle_rss)) KiB), peak held $peak_bytes bytes, $samples samples, lost $lost"
