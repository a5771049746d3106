#!/bin/bash
# Burst benchmark (root): real uevents through hotplugd, everything the
# performance targets speak of in one run, optionally two builds side by side.
#
#   bench/burst.sh [-n EVENTS] [-r RUNS] [-q QUEUED] [-a AGENT] [-c OTHER_BUILDDIR] [BUILDDIR]
#
#   -n  events per burst of the busy agent (default 6000; the sleeping agent gets a fifth)
#   -r  runs of each burst; the median is shown (default 3)
#   -q  events queued while paused for RSS per queued event (default 50000; 0 skips)
#   -a  only this agent's spawn limits and bursts: busy or sleep (default both)
#   -c  a second build (say, of the previous commit) measured in the same run,
#       interleaved with BUILDDIR so machine noise falls on both alike
#
# It prints:
#  1. the machine's own spawn limits: one loop spawning the agent and
#     waiting for it, and two such loops at once (the daemon's spawn_agent()
#     through bench/spawn-serial), and their ratio;
#  2. for a busy agent (appends a line, exits) and a sleeping one (the same,
#     then 5 ms asleep): events/s, lost events, order violations, daemon CPU
#     per event and the concurrency limit at the end, for ordering strict and
#     devpath, on 1 device (lo) and on 3 (veth pairs, round robin);
#  3. RSS per queued event: events queued while agents are paused
#     (hotplugctl pause), VmRSS growth divided by the events;
#  4. the ratios: devpath / strict in rate and in CPU, per build.
# The same agent binaries (BUILDDIR's) run for both builds.  The daemons do
# not wait for udevd (--after-udev no): a udevd another process runs on the
# machine would hold every event for its broadcast.
set -u
N=6000 RUNS=3 QUEUED=50000 OTHER= AGENTS="busy sleep"
while getopts n:r:q:a:c: o; do
        case $o in
        n) N=$OPTARG ;;
        r) RUNS=$OPTARG ;;
        q) QUEUED=$OPTARG ;;
        a) AGENTS=$OPTARG ;;
        c) OTHER=$OPTARG ;;
        *) sed -n '2,13p' "$0" >&2; exit 64 ;;
        esac
done
shift $((OPTIND - 1))
B=${1:-build}
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
need_root burst.sh
BUILDS=("$B")
[ -n "$OTHER" ] && BUILDS+=("$OTHER")
for b in "${BUILDS[@]}"; do
        need_built "$b" src/hotplugd src/hotplugctl bench/spawn-serial tests/kernel/uevent-burst
done
need_built "$B" bench/agent-append bench/agent-append-sleep

W=$(mktemp -d /tmp/hotplugd-bench.XXXXXX)
VETHS=()
DPID=
cleanup() {
        if [ -n "$DPID" ]; then kill "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; fi
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/busy" "$W/sleep"
cp "$B/bench/agent-append" "$W/busy/agent"
cp "$B/bench/agent-append-sleep" "$W/sleep/agent"
ONE=(/sys/class/net/lo/uevent)
THREE=()
for i in 1 2 3; do
        v=hpb$$x$i
        ip link add "$v" type veth peer name "${v}p" || exit 1
        VETHS+=("$v")
        THREE+=("/sys/class/net/$v/uevent")
done
CLK=$(getconf CLK_TCK)

label() { # label BUILD: the build's name with its commit
        local d
        d=$(build_label "$1")
        [ "$1" = "$B" ] && echo "this($d)" || echo "other($d)"
}
queued_in() { HOTPLUGCTL_SOCKET=$W/ctl "$1/src/hotplugctl" status | awk '/^Queue:/ { print $2 }'; }

# ---- 1. spawn limits ----------------------------------------------------------
spawn_rates() { # spawn_rates BUILD AGENTDIR -> "one two cpu_one"
        local b=$1 dir=$2 one cpu two a c pid
        rm -f "$dir/events.log"
        read -r one cpu < <("$b/bench/spawn-serial" "$dir/agent" 3000)
        "$b/bench/spawn-serial" "$dir/agent" 3000 >"$W/loop2" &
        pid=$!
        read -r a _ < <("$b/bench/spawn-serial" "$dir/agent" 3000)
        wait "$pid"
        read -r c _ <"$W/loop2"
        two=$(echo "$a + $c" | bc -l)
        rm -f "$dir/events.log"
        echo "$one $two $cpu"
}

# ---- 2. bursts ----------------------------------------------------------------
status_limit() { # the "Limit:" line's number of agents at once, or "-"
        HOTPLUGCTL_SOCKET=$W/ctl "$1/src/hotplugctl" status 2>/dev/null |
                awk '/^Limit:/ { print $2; found = 1 } END { if (!found) print "-" }'
}

burst() { # burst BUILD AGENTDIR ORDERING N FILES... -> "rate lost violations cpu_us limit"
        local b=$1 dir=$2 mode=$3 N=$4 prefix t0 t1 tk0 tk1 lost viol limit
        shift 4
        rm -f "$dir/events.log" "$W/ctl"
        "$b/src/hotplugd" --agent "$dir/agent" --all --ordering "$mode" --after-udev no --log-level warning \
                --log-target stderr \
                --control-socket "$W/ctl" --max-queue 200000 2>"$W/daemon.log" &
        DPID=$!
        for _ in $(seq 100); do [ -S "$W/ctl" ] && break; sleep 0.05; done
        tk0=$(cpu_ticks "$DPID")
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        t0=$(date +%s.%N)
        "$b/tests/kernel/uevent-burst" "$N" "$prefix" "$@" >/dev/null
        wait_for "$N" runs_of "$prefix" "$dir/events.log" # else count what is lost
        t1=$(date +%s.%N)
        tk1=$(cpu_ticks "$DPID")
        limit=$(status_limit "$b")
        kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
        lost=$((N - $(grep "$prefix" "$dir/events.log" | awk '{ print $3 }' | sort -u | wc -l)))
        if [ "$mode" = strict ]; then
                viol=$(grep "$prefix" "$dir/events.log" | awk '$1 < prev { v++ } { prev = $1 } END { print v + 0 }')
        else
                viol=$(grep "$prefix" "$dir/events.log" | awk '$1 < last[$2] { v++ } { last[$2] = $1 } END { print v + 0 }')
        fi
        echo "$(echo "$N / ($t1 - $t0)" | bc -l) $lost $viol $(echo "($tk1 - $tk0) * 1000000 / $CLK / $N" | bc -l) $limit"
}

# ---- 3. RSS per queued event --------------------------------------------------
queued_rss() { # queued_rss BUILD -> "bytes_per_event lost"
        local b=$1 prefix rss0 rss1 lost
        [ "$QUEUED" -gt 0 ] || { echo "- -"; return; }
        rm -f "$W/busy/events.log" "$W/ctl"
        "$b/src/hotplugd" --agent "$W/busy/agent" --all --after-udev no --log-level warning --log-target stderr \
                --control-socket "$W/ctl" --max-queue 1048576 2>"$W/daemon.log" &
        DPID=$!
        for _ in $(seq 100); do [ -S "$W/ctl" ] && break; sleep 0.05; done
        HOTPLUGCTL_SOCKET=$W/ctl "$b/src/hotplugctl" pause >/dev/null || { echo "- -"; return; }
        rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status")
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        "$b/tests/kernel/uevent-burst" "$QUEUED" "$prefix" "${ONE[@]}" >/dev/null
        wait_for "$QUEUED" queued_in "$b" # every event queued ("N queued")
        rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$DPID/status")
        HOTPLUGCTL_SOCKET=$W/ctl "$b/src/hotplugctl" resume >/dev/null
        wait_for "$QUEUED" runs_of "$prefix" "$W/busy/events.log"
        kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
        lost=$((QUEUED - $(grep "$prefix" "$W/busy/events.log" | awk '{ print $3 }' | sort -u | wc -l)))
        echo "$(echo "($rss1 - $rss0) * 1024 / $QUEUED" | bc -l) $lost"
}

machine_line
for b in "${BUILDS[@]}"; do echo "build $(label "$b"): $b"; done
echo "bursts of $N events (busy agent) and $((N / 5)) (sleeping agent), median of $RUNS runs"
echo

declare -A R
echo "== 1. spawn limits: one loop spawning the agent and waiting, and two loops at once (3000 spawns each)"
printf '%-22s %-6s %10s %10s %7s %14s\n' build agent "1 loop/s" "2 loops/s" "2/1" "CPU/spawn(1)"
for agent in $AGENTS; do
        for b in "${BUILDS[@]}"; do
                read -r one two cpu < <(spawn_rates "$b" "$W/$agent")
                R[$b,$agent,spawn1]=$one
                printf '%-22s %-6s %10.0f %10.0f %6.2fx %12.1fus\n' "$(label "$b")" "$agent" "$one" "$two" \
                        "$(echo "$two / $one" | bc -l)" "$cpu"
        done
done
echo

echo "== 2. bursts (rate = events/s from the first write to the last agent run; cpu = daemon user+sys per event)"
printf '%-22s %-6s %4s %-8s %9s %5s %5s %10s %6s %9s\n' build agent devs ordering events/s lost viol cpu/event limit "/spawn1"
for agent in $AGENTS; do
        n=$N
        [ "$agent" = sleep ] && n=$((N / 5))
        for devs in 1 3; do
                if [ "$devs" = 1 ]; then files=("${ONE[@]}"); else files=("${THREE[@]}"); fi
                for mode in strict devpath; do
                        for k in "${!BUILDS[@]}"; do : >"$W/runs.$k"; done
                        for _ in $(seq "$RUNS"); do
                                for k in "${!BUILDS[@]}"; do
                                        burst "${BUILDS[$k]}" "$W/$agent" "$mode" "$n" "${files[@]}" >>"$W/runs.$k"
                                done
                        done
                        for k in "${!BUILDS[@]}"; do
                                b=${BUILDS[$k]} f=$W/runs.$k
                                rate=$(awk '{ print $1 }' "$f" | median)
                                cpu=$(awk '{ print $4 }' "$f" | median)
                                lost=$(awk '{ s += $2 } END { print s }' "$f")
                                viol=$(awk '{ s += $3 } END { print s }' "$f")
                                limit=$(awk '{ print $5 }' "$f" | tr '\n' ',' | sed 's/,$//')
                                R[$b,$agent,$devs,$mode,rate]=$rate
                                R[$b,$agent,$devs,$mode,cpu]=$cpu
                                printf '%-22s %-6s %4d %-8s %9.0f %5d %5d %8.1fus %6s %8.2fx\n' "$(label "$b")" "$agent" \
                                        "$devs" "$mode" "$rate" "$lost" "$viol" "$cpu" "$limit" \
                                        "$(echo "$rate / ${R[$b,$agent,spawn1]}" | bc -l)"
                        done
                done
        done
done
echo "(lost and viol are summed over the runs; limit: agents allowed at once at the end of each run, - if the build does not say)"
echo

echo "== 3. RSS per queued event ($QUEUED events on lo queued while agents are paused)"
for b in "${BUILDS[@]}"; do
        read -r per lost < <(queued_rss "$b")
        if [ "$per" = - ]; then
                printf '%-22s skipped\n' "$(label "$b")"
        else
                printf '%-22s %6.0f bytes per queued event, %d lost after resume\n' "$(label "$b")" "$per" "$lost"
        fi
done
echo

echo "== 4. ratios, devpath over strict (rate: higher is better; CPU per event: lower is better)"
for b in "${BUILDS[@]}"; do
        for agent in $AGENTS; do
                for devs in 1 3; do
                        printf '%-22s %-6s %d device(s): rate %5.2fx, daemon CPU per event %5.2fx\n' "$(label "$b")" \
                                "$agent" "$devs" \
                                "$(echo "${R[$b,$agent,$devs,devpath,rate]} / ${R[$b,$agent,$devs,strict,rate]}" | bc -l)" \
                                "$(echo "${R[$b,$agent,$devs,devpath,cpu]} / ${R[$b,$agent,$devs,strict,cpu]}" | bc -l)"
                done
        done
done
