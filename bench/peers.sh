#!/bin/bash
# Peers benchmark (root): hotplugd beside the other uevent daemons installed,
# in one table, then bench/coldplug.sh and bench/latency.sh (if present).
#
#   bench/peers.sh [-n EVENTS] [-r RUNS] [-c OTHER_BUILDDIR] [-s] [BUILDDIR]
#
#   -n  events per burst (default 10000)
#   -r  runs of each burst, interleaved over the daemons; medians shown (default 3)
#   -c  a second hotplugd build (say, of the commit before) in the same table
#   -s  the table only: do not run bench/coldplug.sh and bench/latency.sh
#
# Installs nothing.  The daemons, each with the same static agent
# (bench/agent-append: appends one line and exits):
#   busybox   `busybox uevent AGENT` (a serial spawn-and-wait loop)
#   udevd     systemd-udevd with one rule, RUN+="AGENT", and no other (its
#             rules directories hidden, /run/udev its own); install it with a
#             /usr/sbin/policy-rc.d that exits 101 so that nothing starts
#   mdevd     if `mdevd` is in PATH (bench/README.md: building it), with a
#             mdev.conf that runs AGENT for every device
#   hotplugd  --ordering strict and devpath, of BUILDDIR (and OTHER_BUILDDIR)
# The table runs in a network and mount namespace of its own (its own lo,
# three veth pairs, its own sysfs mount), so that only its own uevents
# reach the daemons: a shared machine's other uevents (test suites) do not.
# Columns: events/s of a burst on one device (lo; every event waits for the
# one before: the serial spawn limit) and on three (round robin), events
# lost, daemon CPU per event (user + system of the daemon itself, its
# workers for udevd, not the agents), peak RSS (VmHWM; udevd: main process
# + its largest worker), the peak of the kernel memory that holds the
# events the daemon has not read yet (Rmem of its uevent sockets in
# /proc/net/netlink: a daemon that reads one event per agent run leaves a
# burst there, outside its RSS), their sum, and the ratios to busybox.
set -u
ARGS=("$@")
N=10000 RUNS=3 OTHER= TABLE_ONLY=0
while getopts n:r:c:s o; do
        case $o in
        n) N=$OPTARG ;;
        r) RUNS=$OPTARG ;;
        c) OTHER=$OPTARG ;;
        s) TABLE_ONLY=1 ;;
        *) sed -n '2,12p' "$0" >&2; exit 64 ;;
        esac
done
shift $((OPTIND - 1))
B=${1:-build}
HERE=$(dirname "$(readlink -f "$0")")
[ "$(id -u)" = 0 ] || { echo "bench/peers.sh needs root (real uevents)" >&2; exit 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"

if [ "${PEERS_NS:-0}" != 1 ]; then
        machine_line
        # The table, in its own namespaces; then the other benchmarks, here.
        PEERS_NS=1 unshare -n -m "$0" "${ARGS[@]}" || exit
        [ "$TABLE_ONLY" = 1 ] && exit 0
        echo
        echo "==== bench/coldplug.sh -r $RUNS${OTHER:+ -c $OTHER} $B"
        "$HERE/coldplug.sh" -r "$RUNS" ${OTHER:+-c "$OTHER"} "$B"
        if [ -x "$HERE/latency.sh" ]; then
                echo
                echo "==== bench/latency.sh${OTHER:+ -c $OTHER} $B"
                "$HERE/latency.sh" ${OTHER:+-c "$OTHER"} "$B"
        else
                echo "(bench/latency.sh not present: latency not measured)"
        fi
        exit 0
fi

# ---- inside the namespaces -----------------------------------------------------
BUILDS=("$B")
[ -n "$OTHER" ] && BUILDS+=("$OTHER")
for b in "${BUILDS[@]}"; do
        for f in src/hotplugd tests/kernel/uevent-burst bench/agent-append; do
                [ -x "$b/$f" ] || { echo "missing $b/$f: build first (meson compile -C $b)" >&2; exit 1; }
        done
done
mount --make-rprivate / && mount -t sysfs sysfs /sys && ip link set lo up || exit 1
W=$(mktemp -d /tmp/hotplugd-peers.XXXXXX)
PID= MADE_RUN_UDEV=
WATCH=
cleanup() {
        if [ -n "$WATCH" ]; then kill "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null; fi
        if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; fi
        [ -z "$MADE_RUN_UDEV" ] || { umount /run/udev 2>/dev/null; rmdir /run/udev; }
        rm -rf "$W" # the veths and mounts go with the namespaces
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cp "$B/bench/agent-append" "$W/agent"
AGENT=$W/agent
ONE=(/sys/class/net/lo/uevent)
THREE=()
for i in 1 2 3; do
        ip link add "hpp$i" type veth peer name "hpp${i}p" || exit 1
        THREE+=("/sys/class/net/hpp$i/uevent")
done
CLK=$(getconf CLK_TCK)
UDEVD=$(command -v systemd-udevd || ls /lib/systemd/systemd-udevd 2>/dev/null)
MDEVD=$(command -v mdevd)

# The daemons: "label kind build-or-empty".
PEERS=("busybox busybox -")
[ -n "$UDEVD" ] && PEERS+=("udevd udevd -")
[ -n "$MDEVD" ] && PEERS+=("mdevd mdevd -")
for b in "${BUILDS[@]}"; do
        t=$([ "$b" = "$B" ] && echo "" || echo "-before")
        PEERS+=("hotplugd-strict$t hotplugd-strict $b" "hotplugd-devpath$t hotplugd-devpath $b")
done

# start KIND BUILD: start the daemon (PID), return once it listens.
start() {
        local kind=$1 b=$2
        case $kind in
        busybox)
                busybox uevent "$AGENT" >/dev/null 2>&1 &
                PID=$!
                sleep 0.3 ;;
        udevd)
                mkdir -p "$W/rules" "$W/empty" "$W/run-udev"
                echo "RUN+=\"$AGENT\"" >"$W/rules/50-bench.rules"
                for d in /usr/lib/udev/rules.d /lib/udev/rules.d; do
                        [ -d "$d" ] && mount --bind "$W/empty" "$d"
                done
                mount --bind "$W/rules" /etc/udev/rules.d
                # A udev that never ran has no /run/udev to mount over: made here, removed in stop.
                [ -d /run/udev ] || { mkdir /run/udev && MADE_RUN_UDEV=1; }
                mount --bind "$W/run-udev" /run/udev
                "$UDEVD" 2>>"$W/udevd.log" &
                PID=$!
                for _ in $(seq 500); do [ -S /run/udev/control ] && break; sleep 0.01; done
                udevadm settle -t 5 2>/dev/null ;;
        mdevd)
                echo "-.* 0:0 600 *$AGENT" >"$W/mdev.conf"
                mkdir -p "$W/dev"
                "$MDEVD" -b 67108864 -f "$W/mdev.conf" -d "$W/dev" 2>>"$W/mdevd.log" &
                PID=$!
                sleep 0.3 ;;
        hotplugd-*)
                rm -f "$W/ctl"
                "$b/src/hotplugd" --agent "$AGENT" --all --ordering "${kind#hotplugd-}" --log-target stderr \
                        --control-socket "$W/ctl" --max-queue 200000 2>>"$W/hotplugd.log" &
                PID=$!
                for _ in $(seq 500); do [ -S "$W/ctl" ] && break; sleep 0.01; done ;;
        esac
}

stop() {
        kill "$PID" 2>/dev/null
        wait "$PID" 2>/dev/null
        PID=
        if [ "$1" = udevd ]; then
                umount /run/udev /etc/udev/rules.d /usr/lib/udev/rules.d /lib/udev/rules.d 2>/dev/null
                [ -z "$MADE_RUN_UDEV" ] || rmdir /run/udev
                MADE_RUN_UDEV=
        fi
}

workers() { pgrep -P "$PID" 2>/dev/null; } # udevd's workers
daemon_ticks() { # the daemon and, for udevd, its workers
        local t
        t=$(cpu_ticks "$PID")
        for w in $(workers); do t=$((t + $(cpu_ticks "$w" 2>/dev/null || echo 0))); done
        echo "$t"
}
daemon_hwm() { # VmHWM in KiB: the daemon + its largest worker
        local h w m=0
        h=$(awk '/^VmHWM/ { print $2 }' "/proc/$PID/status")
        for w in $(workers); do
                v=$(awk '/^VmHWM/ { print $2 }' "/proc/$w/status" 2>/dev/null)
                [ "${v:-0}" -gt "$m" ] && m=$v
        done
        echo $((h + m))
}

# The kernel memory (KiB) holding what the daemon's uevent sockets (netlink
# family 15) have received and it has not read: their Rmem, found by inode.
uevent_inodes() { # -> " INODE INODE ... " of the daemon's sockets
        echo " $(find "/proc/$PID/fd" -lname 'socket:*' -printf '%l ' 2>/dev/null | sed 's/[^0-9 ]//g') "
}
rmem_of() { # INODES
        awk -v inos="$1" '$2 == 15 && index(inos, " " $10 " ") { s += $5 } END { print int(s / 1024) }' /proc/net/netlink
}
# Its peak while a burst runs, sampled every 0.1 s until killed, into FILE:
# the sockets are found once, each sample is one awk (no poll loop of
# several processes beside the daemon measured).  The trap names no
# positional parameter: it may run inside nap, where $1 is nap's.
rmem_watch() { # FILE
        local m=0 v inodes
        RMEM_OUT=$1
        inodes=$(uevent_inodes)
        trap 'echo "$m" >"$RMEM_OUT"; exit 0' TERM
        while :; do
                v=$(rmem_of "$inodes")
                [ "$v" -gt "$m" ] && m=$v
                nap 0.1
        done
}

# burst KIND BUILD FILES... -> "rate lost cpu_us hwm_kb rmem_kb"
burst() {
        local kind=$1 b=$2 prefix t0 t1 tk0 tk1 hwm lost rmem
        shift 2
        rm -f "$W/events.log" "$W/rmem"
        start "$kind" "$b"
        tk0=$(daemon_ticks)
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        rmem_watch "$W/rmem" &
        WATCH=$!
        t0=$(date +%s.%N)
        "$B/tests/kernel/uevent-burst" "$N" "$prefix" "$@" >/dev/null
        wait_for "$N" runs_of "$prefix" "$W/events.log" # else count what is lost
        t1=$(date +%s.%N)
        kill "$WATCH"; wait "$WATCH"
        WATCH=
        rmem=$(cat "$W/rmem")
        tk1=$(daemon_ticks)
        hwm=$(daemon_hwm)
        stop "$kind"
        lost=$((N - $(grep "$prefix" "$W/events.log" | awk '{ print $3 }' | sort -u | wc -l)))
        echo "$(echo "($N - $lost) / ($t1 - $t0)" | bc -l) $lost $(echo "($tk1 - $tk0) * 1000000 / $CLK / $N" | bc -l) $hwm $rmem"
}

echo "peers: ${PEERS[*]// /:}"
for b in "${BUILDS[@]}"; do echo "hotplugd $(build_label "$b"): $b"; done
echo "bursts of $N events, median of $RUNS runs interleaved; in a network namespace of its own; load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A R
for devs in 1 3; do
        if [ "$devs" = 1 ]; then files=("${ONE[@]}"); else files=("${THREE[@]}"); fi
        for k in "${!PEERS[@]}"; do : >"$W/runs.$devs.$k"; done
        for _ in $(seq "$RUNS"); do
                for k in "${!PEERS[@]}"; do
                        read -r _ kind b <<<"${PEERS[$k]}"
                        burst "$kind" "$b" "${files[@]}" >>"$W/runs.$devs.$k"
                done
        done
        for k in "${!PEERS[@]}"; do
                f=$W/runs.$devs.$k
                R[$k,$devs,rate]=$(awk '{ print $1 }' "$f" | median)
                R[$k,$devs,lost]=$(awk '{ s += $2 } END { print s }' "$f")
                R[$k,$devs,cpu]=$(awk '{ print $3 }' "$f" | median)
                R[$k,$devs,hwm]=$(awk '$4 > m { m = $4 } END { print m }' "$f")
                R[$k,$devs,rmem]=$(awk '$5 > m { m = $5 } END { print m + 0 }' "$f")
        done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-22s %10s %7s %5s %10s %7s %10s %7s %5s %9s %7s %9s %9s %7s\n' daemon "1 dev ev/s" "/bb" lost \
        "CPU/event" "/bb" "3 dev ev/s" "/bb" lost "peak RSS" "/bb" "socket" "RSS+sock" "/bb"
for k in "${!PEERS[@]}"; do
        read -r label _ _ <<<"${PEERS[$k]}"
        printf '%-22s %10.0f %6.2fx %5d %8.1fus %6.2fx %10.0f %6.2fx %5d %6.1fMiB %6.2fx %6.1fMiB %6.1fMiB %6.2fx\n' \
                "$label" \
                "${R[$k,1,rate]}" "$(echo "${R[$k,1,rate]} / ${R[0,1,rate]}" | bc -l)" "${R[$k,1,lost]}" \
                "${R[$k,1,cpu]}" "$(echo "${R[$k,1,cpu]} / ${R[0,1,cpu]}" | bc -l)" \
                "${R[$k,3,rate]}" "$(echo "${R[$k,3,rate]} / ${R[0,3,rate]}" | bc -l)" "${R[$k,3,lost]}" \
                "$(echo "${R[$k,1,hwm]} / 1024" | bc -l)" "$(echo "${R[$k,1,hwm]} / ${R[0,1,hwm]}" | bc -l)" \
                "$(echo "${R[$k,1,rmem]} / 1024" | bc -l)" "$(echo "(${R[$k,1,hwm]} + ${R[$k,1,rmem]}) / 1024" | bc -l)" \
                "$(echo "(${R[$k,1,hwm]} + ${R[$k,1,rmem]}) / (${R[0,1,hwm]} + ${R[0,1,rmem]})" | bc -l)"
done
echo "(/bb: ratio to busybox uevent; CPU/event, RSS and socket from the one-device bursts, the highest of the runs;"
echo " socket: the kernel memory holding events not read yet, sampled every 0.1 s; lost: summed over the runs)"
