#!/bin/bash
# Coldplug and burst benchmark of the concurrency limit (root): hotplugd with
# --concurrency=auto (the default) beside fixed limits and udevd, in one run.
#
#   bench/coldplug.sh [-r RUNS] [-d DEVICES] [-c OTHER_BUILDDIR] [-q | -s] [BUILDDIR]
#
#   -r  runs of each measurement; each run and the median are shown (default 3)
#   -d  veth devices of the bursts (default 16)
#   -c  a second build (say, of the previous commit) measured with auto too
#   -q  only section 0, the no-op coldplug against the machine's limit
#   -s  only the coldplug with agents sleeping by SUBSYSTEM, hotplugd alone
#
# 0. the no-op coldplug of issue 27 target 3: the machine's limit (as many
#    spawns of the no-op agent as trigger writes uevent files, at the rate
#    of two bench/spawn-serial loops at once), hotplugd auto with
#    `trigger --jobs` 1 and the default, fixed 2, udevd (`udevadm trigger
#    --settle`) and mdevd-coldplug (if installed; mdevd -O 4 beside it),
#    the enumeration alone (`trigger --dry-run`) and the writes alone
#    (`trigger` with no daemon, minus the enumeration), and the ratios;
#
# It prints, in seconds (lower is better):
#  1. coldplug: `hotplugctl trigger --settle` over every device of the
#     machine, the agent sleeping by SUBSYSTEM (tty 10 ms, net 50 ms, block
#     100 ms, the rest not at all: bench/agent-coldplug) and a no-op agent
#     (bench/agent-append); udevd (if installed: apt-get install udev, with a
#     /usr/sbin/policy-rc.d that exits 101 so that nothing starts) with one
#     RUN rule and no other, `udevadm trigger --settle --action=add`;
#  2. bursts: events written as fast as possible round robin over DEVICES
#     veth devices, until every agent ran, with an agent sleeping 10 to 100 ms
#     (bench/agent-append-vary) and a CPU-bound one computing 20 ms
#     (bench/agent-append-spin);
#  3. a slow agent: a fresh daemon, a change of a veth (its agent sleeps
#     50 ms), then one of /sys/class/mem/null right after: how long after
#     its write null's agent started (ms).
# Each hotplugd: --concurrency=auto, 2, 8 and 20 of BUILDDIR, and auto of
# OTHER_BUILDDIR; the agent binaries are BUILDDIR's for all.
set -u
RUNS=3 DEVS=16 OTHER= QUICK= SLEEPING=
while getopts r:d:c:qs o; do
        case $o in
        q) QUICK=1 ;;
        s) SLEEPING=1 ;;
        r) RUNS=$OPTARG ;;
        d) DEVS=$OPTARG ;;
        c) OTHER=$OPTARG ;;
        *) sed -n '2,11p' "$0" >&2; exit 64 ;;
        esac
done
shift $((OPTIND - 1))
B=${1:-build}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
need_root coldplug.sh
need_built "$B" src/hotplugd src/hotplugctl tests/kernel/uevent-burst bench/agent-coldplug bench/agent-append \
        bench/agent-append-vary bench/agent-append-spin bench/spawn-serial
[ -z "$OTHER" ] || [ -x "$OTHER/src/hotplugd" ] || { echo "missing $OTHER/src/hotplugd" >&2; exit 1; }
UDEVD=$(command -v systemd-udevd || ls /lib/systemd/systemd-udevd 2>/dev/null)
MDEVD=$(command -v mdevd)

W=$(mktemp -d /tmp/hotplugd-coldplug.XXXXXX)
VETHS=()
DPID=
cleanup() {
        if [ -n "$DPID" ]; then kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; fi
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for a in coldplug:agent-coldplug noop:agent-append vary:agent-append-vary spin:agent-append-spin; do
        mkdir -p "$W/${a%%:*}"
        cp "$B/bench/${a#*:}" "$W/${a%%:*}/agent"
done
FILES=()
for i in $(seq "$DEVS"); do
        v=hpc$$x$i
        ip link add "$v" type veth peer name "${v}p" || exit 1
        VETHS+=("$v")
        FILES+=("/sys/class/net/$v/uevent")
done

# The hotplugds: "label build concurrency".
CONFS=("auto $B auto" "fixed-2 $B 2" "fixed-8 $B 8" "fixed-20 $B 20")
[ -n "$OTHER" ] && CONFS+=("before-auto $OTHER auto")

now() { date +%s.%N; }

start_daemon() { # start_daemon BUILD CONCURRENCY AGENTDIR
        rm -f "$W/ctl" "$3/events.log"
        "$1/src/hotplugd" --agent "$3/agent" --concurrency "$2" --after-udev no --log-level warning --log-target stderr \
                --control-socket "$W/ctl" --max-queue 200000 2>>"$W/daemon.log" &
        DPID=$!
        for _ in $(seq 500); do [ -S "$W/ctl" ] && return 0; sleep 0.01; done
        echo "daemon did not start, see its log:" >&2; cat "$W/daemon.log" >&2; exit 1
}
stop_daemon() { kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=; }

coldplug_hotplugd() { # BUILD CONCURRENCY AGENT [TRIGGER OPTIONS] -> seconds
        local t0 t1
        start_daemon "$1" "$2" "$W/$3"
        t0=$(now)
        "$1/src/hotplugctl" trigger --settle --socket "$W/ctl" "${@:4}" >/dev/null || echo "trigger failed" >&2
        t1=$(now)
        stop_daemon
        echo "$t1 - $t0" | bc -l
}

coldplug_udevd() { # AGENT -> seconds
        local t0 t1 pid
        mkdir -p "$W/rules" "$W/empty"
        echo "ACTION==\"add\", RUN+=\"$W/$1/agent\"" >"$W/rules/50-bench.rules"
        # Only the one rule: the packaged rules directories hidden in a mount namespace of its own.
        unshare -m sh -c "for d in /usr/lib/udev/rules.d /lib/udev/rules.d /run/udev/rules.d; do
                [ -d \$d ] && mount --bind $W/empty \$d; done; mount --bind $W/rules /etc/udev/rules.d;
                exec $UDEVD" 2>>"$W/udevd.log" &
        pid=$!
        # A socket left by the previous udevd may still be there: ask the new one.
        for _ in $(seq 500); do udevadm control --ping -t 1 2>/dev/null && break; sleep 0.01; done
        udevadm settle -t 5 2>/dev/null
        t0=$(now)
        udevadm trigger --settle --action=add 2>>"$W/udevd.log"
        t1=$(now)
        # SIGTERM, not `udevadm control --exit`: that once left this udevd
        # running (a control socket of another instance answered?) and the
        # run waited for it forever.
        kill "$pid"
        wait "$pid" 2>/dev/null
        echo "$t1 - $t0" | bc -l
}

coldplug_mdevd() { # -> seconds: mdevd-coldplug -O, which returns once mdevd handled its last event
        local t0 t1 pid
        rm -f "$W/noop/events.log"
        # The agent for every device (mdev.conf: any name, run on add and remove), nodes in a directory of ours.
        echo "-.* 0:0 600 *$W/noop/agent" >"$W/mdev.conf"
        mkdir -p "$W/mdevd-dev"
        mdevd -b 67108864 -O 4 -f "$W/mdev.conf" -d "$W/mdevd-dev" 2>>"$W/mdevd.log" &
        pid=$!
        sleep 0.3
        t0=$(now)
        mdevd-coldplug -O 4 2>>"$W/mdevd.log"
        t1=$(now)
        echo "mdevd: $(runs_of . "$W/noop/events.log") agent runs" >&2
        kill "$pid"
        wait "$pid" 2>/dev/null
        echo "$t1 - $t0" | bc -l
}

elapsed() { # COMMAND... -> seconds
        local t0 t1
        t0=$(now)
        "$@" >/dev/null 2>&1
        t1=$(now)
        echo "$t1 - $t0" | bc -l
}

# The writes alone: trigger without a daemon, less the enumeration (its dry run) just before.
writes_only() { # BUILD [TRIGGER OPTIONS]
        local e a
        e=$(elapsed "$1/src/hotplugctl" trigger --dry-run)
        a=$(elapsed "$1/src/hotplugctl" trigger --action change "${@:2}")
        echo "$a - $e" | bc -l
}

# The machine's limit: N spawns at the rate of two spawn-serial loops at once.
limit() { # N -> seconds
        local rate
        rate=$("$B/bench/spawn-serial" "$W/noop/agent" 1000 2 | cut -d' ' -f1)
        rm -f "$W/noop/events.log"
        echo "$1 / $rate" | bc -l
}

burst() { # BUILD CONCURRENCY AGENT N -> seconds
        local prefix t0 t1
        start_daemon "$1" "$2" "$W/$3"
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        t0=$(now)
        "$1/tests/kernel/uevent-burst" "$4" "$prefix" "${FILES[@]}" >/dev/null
        # settle blocks on the control socket: no poll loop beside the daemon.
        "$1/src/hotplugctl" settle --socket "$W/ctl" >/dev/null || echo "burst: settle failed" >&2
        t1=$(now)
        [ "$(runs_of "$prefix" "$W/$3/events.log")" = "$4" ] || echo "burst: events lost" >&2
        stop_daemon
        echo "$t1 - $t0" | bc -l
}

slow_agent() { # BUILD CONCURRENCY -> ms from null's write to its agent's start
        local slow=$W/coldplug sent started
        start_daemon "$1" "$2" "$slow"
        echo change >"${FILES[0]}"
        sent=$(now)
        echo change >/sys/class/mem/null/uevent
        "$1/src/hotplugctl" settle --socket "$W/ctl" >/dev/null || echo "slow agent: settle failed" >&2
        started=$(awk '$2 == "/devices/virtual/mem/null" { print $4; exit }' "$slow/events.log")
        [ -n "$started" ] || echo "slow agent: null's agent did not run" >&2
        stop_daemon
        echo "($started - $sent) * 1000" | bc -l
}

# rows "LABEL COMMAND ARGS..."...: run each COMMAND RUNS times, interleaved
# (the first run of every row, then the second...: a drift of the machine
# falls on every row alike, not on the one measured first), and print each
# row's median and its runs; the medians are kept in R by label.  The words
# of a row are split at spaces (paths without spaces).
declare -A R
rows() {
        local -a specs=("$@") words
        local -A vals=()
        local k v
        for _ in $(seq "$RUNS"); do
                for k in "${!specs[@]}"; do
                        read -r -a words <<<"${specs[$k]}"
                        v=$("${words[@]:1}")
                        vals[$k]+="$(printf '%.3f' "$v") "
                done
        done
        for k in "${!specs[@]}"; do
                read -r -a words <<<"${specs[$k]}"
                # shellcheck disable=SC2086 # the runs, one per word
                R[${words[0]}]=$(printf '%s\n' ${vals[$k]} | median)
                printf '  %-12s %8.3f   (%s)\n' "${words[0]}" "${R[${words[0]}]}" "${vals[$k]% }"
        done
}

echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "devices: $(find /sys/devices -name uevent | wc -l) uevent files; build $B$([ -n "$OTHER" ] && echo ", before $OTHER"); $RUNS runs interleaved, median first"
echo
COLD="coldplug noop"
if [ -n "$SLEEPING" ]; then
        COLD=coldplug UDEVD=
else
        N=$("$B/src/hotplugctl" trigger --dry-run | wc -l)
        echo "== 0. coldplug, no-op agent, $N devices: hotplugd, peers and the machine's limit, seconds"
        S=("limit limit $N" "auto coldplug_hotplugd $B auto noop" "auto-jobs1 coldplug_hotplugd $B auto noop --jobs 1"
           "fixed-2 coldplug_hotplugd $B 2 noop")
        [ -n "$OTHER" ] && S+=("before coldplug_hotplugd $OTHER auto noop")
        [ -n "$UDEVD" ] && S+=("udevd coldplug_udevd noop")
        [ -n "$MDEVD" ] && S+=("mdevd coldplug_mdevd")
        S+=("enumerate elapsed $B/src/hotplugctl trigger --dry-run" "writes-j1 writes_only $B --jobs 1" "writes writes_only $B")
        rows "${S[@]}"
        [ -n "$UDEVD" ] || echo "  udevd        not installed"
        [ -n "$MDEVD" ] || echo "  mdevd        not installed"
        for l in auto auto-jobs1 fixed-2 before; do
                [ -n "${R[$l]:-}" ] || continue
                printf '  %-12s %.2fx the limit%s\n' "$l" "$(echo "${R[$l]} / ${R[limit]}" | bc -l)" \
                        "$([ -n "${R[udevd]:-}" ] && printf ', %.2fx udevd' "$(echo "${R[$l]} / ${R[udevd]}" | bc -l)")"
        done
        [ -n "$QUICK" ] && exit 0
fi
echo
for agent in $COLD; do
        if [ "$agent" = coldplug ]; then
                echo "== coldplug, agent sleeping by SUBSYSTEM (tty 10 ms, net 50 ms, block 100 ms, else 0), seconds"
        else
                echo "== coldplug, no-op agent, seconds"
        fi
        S=()
        for c in "${CONFS[@]}"; do
                read -r label b conc <<<"$c"
                S+=("$label coldplug_hotplugd $b $conc $agent")
        done
        [ -n "$UDEVD" ] && S+=("udevd coldplug_udevd $agent")
        rows "${S[@]}"
        [ -n "$UDEVD" ] || [ -n "$SLEEPING" ] || echo "  udevd        not installed"
done
[ -n "$SLEEPING" ] && exit 0
echo
for agent in vary spin; do
        if [ "$agent" = vary ]; then
                n=$((DEVS * 20))
                echo "== burst of $n events on $DEVS devices, agent sleeping 10-100 ms, seconds"
        else
                n=$((DEVS * 6))
                echo "== burst of $n events on $DEVS devices, CPU-bound agent (20 ms CPU), seconds"
        fi
        S=()
        for c in "${CONFS[@]}"; do
                read -r label b conc <<<"$c"
                S+=("$label burst $b $conc $agent $n")
        done
        rows "${S[@]}"
done
echo
echo "== slow agent: a veth's change (agent sleeps 50 ms), then mem/null's: null's wait, ms"
S=()
for c in "${CONFS[@]}"; do
        read -r label b conc <<<"$c"
        S+=("$label slow_agent $b $conc")
done
rows "${S[@]}"
