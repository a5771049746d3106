#!/bin/bash
# after-udev benchmark (root): how long after udevd's broadcast of an event
# its agent starts, with after-udev=yes, and how often the agent starts
# before udevd finished with after-udev=no, side by side in one run.
#
#   bench/after-udev.sh [-r RUNS] [-n IDLE_EVENTS] [-b BURST_EVENTS] [-d DEVICES] [BUILDDIR]
#
#   -r  runs of each measurement, the two settings interleaved (default 3)
#   -n  events of the idle measurement, one every 50 ms (default 200)
#   -b  events of the burst, written as fast as possible (default 5000)
#   -d  veth devices the events go round robin over (default 3)
#
# systemd-udevd (apt-get install udev with a policy-rc.d that exits 101,
# bench/README.md) runs in a mount namespace of the bench's own: its
# packaged rules hidden, one rule "RUN+=/bin/true" for the bench's events,
# /run/udev a tmpfs.  udevd's broadcast is stamped by bench/udev-stamp
# (CLOCK_MONOTONIC as it reads the udev group; netlink gives no receive
# stamps, so it runs SCHED_FIFO and reads at once), the agent's start by
# bench/agent-latency.  Printed, in ms: for
# each setting, idle and burst, the p50 and p99 of agent start minus
# broadcast (negative: the agent started before udevd had finished) and
# how many agents started before the broadcast, and the p50 and p99 of the
# send-to-agent latency; the median of the runs first, the runs in brackets.
set -u
RUNS=3 IDLE=200 BURST=5000 DEVS=3
while getopts r:n:b:d: o; do
        case $o in
        r) RUNS=$OPTARG ;;
        n) IDLE=$OPTARG ;;
        b) BURST=$OPTARG ;;
        d) DEVS=$OPTARG ;;
        *) sed -n '2,11p' "$0" >&2; exit 64 ;;
        esac
done
shift $((OPTIND - 1))
B=${1:-build}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
need_root after-udev.sh
need_built "$B" src/hotplugd bench/agent-latency bench/latency-send bench/udev-stamp
UDEVD=$(command -v systemd-udevd || ls /lib/systemd/systemd-udevd /usr/lib/systemd/systemd-udevd 2>/dev/null | head -n 1)
[ -n "$UDEVD" ] || { echo "bench/after-udev.sh needs systemd-udevd (see bench/README.md)" >&2; exit 1; }
if [ -z "${AFTER_UDEV_BENCH_NS:-}" ]; then
        exec unshare -m env AFTER_UDEV_BENCH_NS=1 bash "$0" -r "$RUNS" -n "$IDLE" -b "$BURST" -d "$DEVS" "$B"
fi

W=$(mktemp -d /tmp/hotplugd-after-udev.XXXXXX)
VETHS=()
DPID= UPID= SPID= MADE_RUN_UDEV=
cleanup() {
        for p in $DPID $SPID $UPID; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        umount /run/udev 2>/dev/null
        [ -n "$MADE_RUN_UDEV" ] && rmdir /run/udev
        for d in /usr/lib/udev/rules.d /lib/udev/rules.d /etc/udev/rules.d; do umount "$d" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# udevd's world: one rule, its database in a tmpfs.
mkdir -p "$W/empty" "$W/rules"
[ -d /run/udev ] || { mkdir /run/udev && MADE_RUN_UDEV=1; }
mount -t tmpfs -o mode=0755 tmpfs /run/udev || exit 1
for d in /usr/lib/udev/rules.d /lib/udev/rules.d; do [ -d "$d" ] && mount --bind "$W/empty" "$d"; done
mkdir -p /etc/udev/rules.d
mount --bind "$W/rules" /etc/udev/rules.d || exit 1
echo 'ACTION=="change", ENV{SYNTH_UUID}=="?*", RUN+="/bin/true"' >"$W/rules/50-bench.rules"
cp "$B/bench/agent-latency" "$W/agent"
FILES=()
for i in $(seq "$DEVS"); do
        v=hpau$$x$i
        ip link add "$v" type veth peer name "${v}p" || exit 1
        VETHS+=("$v")
        FILES+=("/sys/class/net/$v/uevent")
done
"$UDEVD" 2>"$W/udevd.log" &
UPID=$!
for _ in $(seq 500); do udevadm control --ping -t 1 2>/dev/null && break; nap 0.01; done
# Real-time priority: it stamps as it reads, and must read at once, before the daemon it measures.
chrt -f 50 "$B/bench/udev-stamp" >"$W/bcast" 2>"$W/stamp.err" &
SPID=$!
for _ in $(seq 500); do grep -q ready "$W/stamp.err" && break; nap 0.01; done

# measure SETTING COUNT INTERVAL_US: "p50 p99 before total send50 send99" (ms; before: agents before the broadcast)
measure() {
        local prefix
        rm -f "$W/events.log" "$W/ctl"
        "$B/src/hotplugd" --agent "$W/agent" --after-udev="$1" --control-socket "$W/ctl" --max-queue 200000 \
                --log-target stderr 2>>"$W/daemon.log" &
        DPID=$!
        for _ in $(seq 500); do [ -S "$W/ctl" ] && break; nap 0.01; done
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        "$B/bench/latency-send" "$2" "$3" "$prefix" "${FILES[@]}" >"$W/sent" 2>>"$W/daemon.log"
        WAIT_POLL=0.05 wait_for "$2" runs_of "$prefix" "$W/events.log" || echo "$1: agents lost" >&2
        WAIT_POLL=0.05 wait_for "$2" runs_of "$prefix" "$W/bcast" || echo "$1: broadcasts lost" >&2
        kill "$DPID"
        wait "$DPID" 2>/dev/null
        DPID=
        awk -v p="$prefix" 'FILENAME == ARGV[1] { b[$1] = $2; next } FILENAME == ARGV[2] { s[$1] = $2; next }
                index($1, p) == 1 && ($1 in b) && ($1 in s) {
                        printf "%.3f %.3f\n", ($2 - b[$1]) / 1e6, ($2 - s[$1]) / 1e6 }' \
                "$W/bcast" "$W/sent" "$W/events.log" >"$W/pairs"
        [ -s "$W/pairs" ] || { echo "- - - 0 - -"; return; }
        cut -d' ' -f1 "$W/pairs" | sort -g >"$W/d"
        cut -d' ' -f2 "$W/pairs" | sort -g >"$W/l"
        echo "$(pct "$W/d" 0.5) $(pct "$W/d" 0.99) $(awk '$1 < 0' "$W/pairs" | wc -l) $(wc -l <"$W/pairs")" \
                "$(pct "$W/l" 0.5) $(pct "$W/l" 0.99)"
}

# pct FILE Q: the Q quantile of FILE's sorted numbers.
pct() { awk -v q="$2" '{ v[NR] = $1 } END { i = int(NR * q + 0.5); if (i < 1) i = 1; printf "%.3f", v[i] }' "$1"; }

echo "$(machine_line)"
echo "udevd: $UDEVD, one RUN+=/bin/true rule; $RUNS runs, settings interleaved; ms, median of the runs first"
declare -A R
for r in $(seq "$RUNS"); do
        for s in yes no; do
                R[idle,$s]+="$(measure "$s" "$IDLE" 50000 | tr ' ' ,) "
                R[burst,$s]+="$(measure "$s" "$BURST" 0 | tr ' ' ,) "
        done
        echo "  run $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
col() { tr ' ' '\n' | grep -v '^$' | cut -d, -f"$1" | grep -v '^-$' | median; }
for what in idle burst; do
        echo
        if [ "$what" = idle ]; then echo "== idle: $IDLE events, one every 50 ms, over $DEVS devices"
        else echo "== burst: $BURST events as fast as possible over $DEVS devices"; fi
        printf '  %-14s %10s %10s %16s %10s %10s   %s\n' after-udev "bcast>agent" "p99" "agent first" "send>agent" \
                "p99" "runs (p50/p99/first)"
        for s in yes no; do
                v=${R[$what,$s]}
                runs=$(for x in $v; do IFS=, read -r a b c n _ <<<"$x"; printf '%s/%s/%s ' "$a" "$b" "$c"; done)
                printf '  %-14s %10.3f %10.3f %9s of %-4s %10.3f %10.3f   (%s)\n' "$s" "$(echo "$v" | col 1)" \
                        "$(echo "$v" | col 2)" "$(echo "$v" | col 3)" "$(echo "$v" | tr ' ' '\n' | grep -v '^$' | head -n 1 | cut -d, -f4)" \
                        "$(echo "$v" | col 5)" "$(echo "$v" | col 6)" "${runs% }"
        done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
