#!/bin/bash
# Latency benchmark (root): the time from the kernel's send of a uevent to the
# start of its agent, for hotplugd and each peer installed, in one run.
#
#   bench/latency.sh [-r RUNS] [-n IDLE_EVENTS] [-b BURST_EVENTS] [-d DEVICES] [-c OTHER_BUILDDIR] [BUILDDIR]
#
#   -r  runs of each measurement, interleaved over the daemons (default 3)
#   -n  events of the idle measurement, one every 50 ms (default 200)
#   -b  events of the burst, written as fast as possible (default 10000)
#   -d  veth devices the events go round robin over (default 3)
#   -c  a second build (say, of the previous commit) measured too
#
# The send is stamped by bench/latency-send (CLOCK_MONOTONIC just before the
# write(2) to the device's uevent file, inside which the kernel sends the
# event), the agent's start by bench/agent-latency (CLOCK_MONOTONIC first
# thing in main; static).  Daemons: hotplugd (--concurrency=auto, and fixed
# 20), busybox `uevent AGENT`, systemd-udevd with one RUN rule and no other
# (apt-get install udev with a /usr/sbin/policy-rc.d that exits 101; run by
# hand here, its packaged rules hidden in a mount namespace) and mdevd
# (mdevd -C AGENT... where installed; not packaged in Debian 12).  Printed,
# in ms (lower is better): p50 and p99 of each run's events, the median of
# the runs first, the runs in brackets, for
#  1. idle: one event every 50 ms;
#  2. a burst of BURST_EVENTS (queueing included: an agent that starts late
#     because thousands are before it counts);
#  3. a slow agent: an event whose agent sleeps 300 ms, then right after an
#     event of another device: that event's latency (a daemon that runs one
#     agent at a time waits the 300 ms).
set -u
RUNS=3 IDLE=200 BURST=10000 DEVS=3 OTHER=
while getopts r:n:b:d:c: o; do
        case $o in
        r) RUNS=$OPTARG ;;
        n) IDLE=$OPTARG ;;
        b) BURST=$OPTARG ;;
        d) DEVS=$OPTARG ;;
        c) OTHER=$OPTARG ;;
        *) sed -n '2,12p' "$0" >&2; exit 64 ;;
        esac
done
shift $((OPTIND - 1))
B=${1:-build}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
need_root latency.sh
need_built "$B" src/hotplugd bench/agent-latency bench/latency-send
[ -z "$OTHER" ] || [ -x "$OTHER/src/hotplugd" ] || { echo "missing $OTHER/src/hotplugd" >&2; exit 1; }
UDEVD=$(command -v systemd-udevd || ls /lib/systemd/systemd-udevd 2>/dev/null)
BUSYBOX=$(command -v busybox)
[ -n "$BUSYBOX" ] && ! "$BUSYBOX" --list | grep -qx uevent && BUSYBOX=
MDEVD=$(command -v mdevd)

W=$(mktemp -d /tmp/hotplugd-latency.XXXXXX)
VETHS=()
DPID=
cleanup() {
        [ -n "${KEEP:-}" ] && cp "$W/daemon.log" "$KEEP"
        if [ -n "$DPID" ]; then kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; fi
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cp "$B/bench/agent-latency" "$W/agent"
FILES=()
for i in $(seq "$DEVS"); do
        v=hpl$$x$i
        ip link add "$v" type veth peer name "${v}p" || exit 1
        VETHS+=("$v")
        FILES+=("/sys/class/net/$v/uevent")
done
[ "$DEVS" -ge 2 ] || { echo "-d: at least 2 devices (the slow-agent case needs two)" >&2; exit 64; }

# Daemons: "label kind [build concurrency]".
DAEMONS=("hotplugd $B auto" "hotplugd-20 $B 20")
[ -n "$OTHER" ] && DAEMONS+=("before $OTHER auto")
[ -n "$BUSYBOX" ] && DAEMONS+=("busybox")
[ -n "$UDEVD" ] && DAEMONS+=("udevd")
[ -n "$MDEVD" ] && DAEMONS+=("mdevd")

start() { # start LABEL [BUILD CONCURRENCY]: the daemon, ready to receive
        rm -f "$W/events.log" "$W/ctl"
        case $1 in
        busybox)
                "$BUSYBOX" uevent "$W/agent" 2>>"$W/daemon.log" &
                DPID=$!
                sleep 0.3 ;; # no readiness to wait for: the socket is bound at once
        udevd)
                mkdir -p "$W/rules" "$W/empty"
                echo "ACTION==\"change\", RUN+=\"$W/agent\"" >"$W/rules/50-bench.rules"
                unshare -m sh -c "for d in /usr/lib/udev/rules.d /lib/udev/rules.d /run/udev/rules.d; do
                        [ -d \$d ] && mount --bind $W/empty \$d; done; mount --bind $W/rules /etc/udev/rules.d;
                        exec $UDEVD" 2>>"$W/daemon.log" &
                DPID=$!
                # A socket left by the previous udevd may still be there: ask the new one.
                for _ in $(seq 500); do udevadm control --ping -t 1 2>/dev/null && break; sleep 0.01; done
                udevadm settle -t 5 2>/dev/null ;;
        mdevd)
                # The agent for every device (any name, on add and remove), nodes in a directory of ours.
                echo "-.* 0:0 600 *$W/agent" >"$W/mdev.conf"
                mkdir -p "$W/mdevd-dev"
                "$MDEVD" -b 67108864 -f "$W/mdev.conf" -d "$W/mdevd-dev" 2>>"$W/daemon.log" &
                DPID=$!
                sleep 0.3 ;;
        *)
                "$2/src/hotplugd" --agent "$W/agent" --concurrency "$3" --control-socket "$W/ctl" \
                        --max-queue 200000 --log-target stderr 2>>"$W/daemon.log" &
                DPID=$!
                for _ in $(seq 500); do [ -S "$W/ctl" ] && break; sleep 0.01; done ;;
        esac
}
stop() {
        kill "$DPID" # udevd too: `udevadm control --exit` once left it running
        wait "$DPID" 2>/dev/null
        DPID=
}

# measure LABEL [BUILD CONC] -- COUNT INTERVAL_US FILE...: "p50 p99" in ms, or "- -" when events were lost
measure() {
        local d=() prefix n
        while [ "$1" != -- ]; do d+=("$1"); shift; done
        shift
        n=$1
        start "${d[@]}"
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        "$B/bench/latency-send" "$1" "$2" "$prefix" "${@:3}" >"$W/sent" 2>>"$W/daemon.log"
        WAIT_POLL=0.05 wait_for "$n" runs_of "$prefix" "$W/events.log" || echo "${d[0]}: events lost" >&2
        stop "${d[0]}"
        awk 'FNR == NR { t[$1] = $2; next } ($1 in t) { printf "%.3f\n", ($2 - t[$1]) / 1e6 }' \
                "$W/sent" "$W/events.log" | sort -g >"$W/lat"
        [ "$(wc -l <"$W/lat")" -ge "$n" ] || { echo "- -"; return; }
        awk '{ v[NR] = $1 } END { i50 = int(NR * 0.50 + 0.5); i99 = int(NR * 0.99 + 0.5);
                if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1; printf "%.3f %.3f\n", v[i50], v[i99] }' "$W/lat"
}

# The slow-agent case: one event whose agent sleeps 300 ms, then one of another device; the second's latency.
slow() {
        local d=() prefix
        d=("$@")
        start "${d[@]}"
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        "$B/bench/latency-send" 2 0 "$prefix" "${FILES[0]}+SLEEPMS=300" "${FILES[1]}" >"$W/sent"
        WAIT_POLL=0.02 wait_for 2 runs_of "$prefix" "$W/events.log" || echo "${d[0]}: events lost" >&2
        sleep 0.3
        stop "${d[0]}"
        awk -v u="$prefix-000000000001" 'FNR == NR { t[$1] = $2; next } $1 == u { printf "%.3f\n", ($2 - t[$1]) / 1e6 }' \
                "$W/sent" "$W/events.log"
}

echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "daemons: $(for d in "${DAEMONS[@]}"; do printf '%s ' "${d%% *}"; done); build $B; $RUNS runs, interleaved; ms, median of the runs first"
declare -A P50 P99 SLOW
for r in $(seq "$RUNS"); do
        for d in "${DAEMONS[@]}"; do
                read -r label b c <<<"$d"
                args=("$label")
                [ -n "${b:-}" ] && args+=("$b" "$c")
                read -r a p <<<"$(measure "${args[@]}" -- "$IDLE" 50000 "${FILES[@]}")"
                P50[idle,$label]+="$a " P99[idle,$label]+="$p "
                read -r a p <<<"$(measure "${args[@]}" -- "$BURST" 0 "${FILES[@]}")"
                P50[burst,$label]+="$a " P99[burst,$label]+="$p "
                SLOW[$label]+="$(slow "${args[@]}") "
        done
        echo "  run $r done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
        for d in "${DAEMONS[@]}"; do # each run as it comes, to stderr: a cut run still shows some
                label=${d%% *}
                echo "    $label: idle p50/p99 $(echo ${P50[idle,$label]} | awk '{print $NF}')/$(echo ${P99[idle,$label]} | awk '{print $NF}')," \
                        "burst $(echo ${P50[burst,$label]} | awk '{print $NF}')/$(echo ${P99[burst,$label]} | awk '{print $NF}')," \
                        "slow $(echo ${SLOW[$label]} | awk '{print $NF}')" >&2
        done
done
med() { tr ' ' '\n' | grep -v '^-\?$' | median; }
for what in idle burst; do
        echo
        if [ "$what" = idle ]; then echo "== idle: $IDLE events, one every 50 ms, send to agent start, ms"
        else echo "== burst: $BURST events as fast as possible over $DEVS devices, send to agent start, ms"; fi
        printf '  %-12s %9s %9s   %s\n' daemon p50 p99 "runs (p50/p99)"
        for d in "${DAEMONS[@]}"; do
                label=${d%% *}
                read -ra a <<<"${P50[$what,$label]}"
                read -ra p <<<"${P99[$what,$label]}"
                runs=
                for i in "${!a[@]}"; do runs+="${a[$i]}/${p[$i]} "; done
                printf '  %-12s %9.3f %9.3f   (%s)\n' "$label" "$(echo "${a[*]}" | med)" "$(echo "${p[*]}" | med)" "${runs% }"
        done
done
echo
echo "== slow agent: an event of another device right after one whose agent sleeps 300 ms: its latency, ms"
for d in "${DAEMONS[@]}"; do
        label=${d%% *}
        printf '  %-12s %9.3f   (%s)\n' "$label" "$(echo "${SLOW[$label]}" | med)" "${SLOW[$label]% }"
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
