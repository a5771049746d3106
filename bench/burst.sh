#!/bin/bash
# Burst benchmark (root): bursts of real uevents through hotplugd with a
# trivial static agent, side by side with the raw serial spawn+wait rate of
# the same agent on this machine.
#
#   bench/burst.sh [BUILDDIR] [SIZES...]      (default: build 1000 10000 100000)
#
# For each size it runs ordering=strict and ordering=devpath over the same
# devices (lo and three veth pairs) and prints events/s, lost events, order
# violations (global in strict, per device in devpath), daemon peak RSS, daemon
# CPU per event and the ratio to the serial spawn rate.
set -u
B=${1:-build}
shift || true
SIZES=${*:-1000 10000 100000}
[ "$(id -u)" = 0 ] || { echo "bench/burst.sh needs root (real uevents)" >&2; exit 1; }
HOTPLUGD=$B/src/hotplugd
for f in "$HOTPLUGD" "$B/bench/agent-append" "$B/bench/spawn-serial" "$B/tests/kernel/uevent-burst"; do
        [ -x "$f" ] || { echo "missing $f: build first (meson compile -C $B)" >&2; exit 1; }
done
W=$(mktemp -d /tmp/hotplugd-bench.XXXXXX)
VETHS=()
cleanup() {
        [ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
        for v in "${VETHS[@]}"; do ip link del "$v" 2>/dev/null; done
        rm -rf "$W"
}
trap cleanup EXIT
cp "$B/bench/agent-append" "$W/agent"
FILES=(/sys/class/net/lo/uevent)
for i in 1 2 3; do
        v=hpbench$$x$i
        ip link add "$v" type veth peer name "${v}p" && VETHS+=("$v") && FILES+=("/sys/class/net/$v/uevent")
done
CLK=$(getconf CLK_TCK)

read -r SERIAL SPAWN_CPU < <("$B/bench/spawn-serial" "$W/agent" 3000)
rm -f "$W/events.log"
echo "machine: $(nproc) CPUs, kernel $(uname -r)"
echo "raw serial spawn+wait of the agent (spawn_agent + waitid, 3000 runs): $SERIAL /s,"
echo "  costing the spawning process $SPAWN_CPU us of CPU per spawn (the spawn itself)"
echo
printf '%-8s %7s %9s %10s %6s %10s %9s %10s %11s %8s\n' mode events seconds events/s lost violations peakRSS cpu/event "-spawn" ratio
run() { # run MODE N   (MODE dry-run: the pipeline alone, nothing spawned)
        local mode=$1 n=$2 prefix t0 t1 got ticks0 ticks1 rss lost viol extra=()
        rm -f "$W/events.log"
        if [ "$mode" = dry-run ]; then
                extra=(--dry-run --log-level info)
                mode=devpath
        fi
        "$HOTPLUGD" --agent "$W/agent" --all --ordering "$mode" --log-level warning --log-target stderr \
                --max-queue 200000 "${extra[@]}" 2>"$W/daemon.log" &
        DPID=$!
        sleep 0.3
        ticks0=$(awk '{print $14 + $15}' /proc/$DPID/stat)
        prefix=$(cut -c1-23 /proc/sys/kernel/random/uuid)
        t0=$(date +%s.%N)
        "$B/tests/kernel/uevent-burst" "$n" "$prefix" "${FILES[@]}" >/dev/null
        local last=-1 same=0
        if [ ${#extra[@]} -gt 0 ]; then
                # Dry run: the log is the record; "would run" lines carry SEQNUM, DEVPATH and the UUID.
                while [ "$(grep -c "would run.*$prefix" "$W/daemon.log")" -lt "$n" ]; do
                        [ "$same" -ge 100 ] && break
                        same=$((same + 1))
                        sleep 0.1
                done
                grep "would run.*$prefix" "$W/daemon.log" |
                        sed -E 's/.*SEQNUM=([0-9]+) .*DEVPATH=([^ ]+) .*SYNTH_UUID=([^ ]+).*/\1 \2 \3/' >"$W/events.log"
                mode=dry-run
        fi
        while :; do
                got=$(grep -c "$prefix" "$W/events.log" 2>/dev/null || echo 0)
                [ "$got" -ge "$n" ] && break
                if [ "$got" = "$last" ]; then same=$((same + 1)); else same=0; fi
                [ "$same" -ge 100 ] && break # 10 s without progress: count what is lost
                last=$got
                sleep 0.1
        done
        t1=$(date +%s.%N)
        ticks1=$(awk '{print $14 + $15}' /proc/$DPID/stat)
        rss=$(awk '/VmHWM/ {print $2}' /proc/$DPID/status)
        kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=
        lost=$((n - $(grep "$prefix" "$W/events.log" | awk '{print $3}' | sort -u | wc -l)))
        if [ "$mode" = strict ]; then
                viol=$(grep "$prefix" "$W/events.log" | awk '$1 < prev { v++ } { prev = $1 } END { print v + 0 }')
        else
                viol=$(grep "$prefix" "$W/events.log" | awk '$1 < last[$2] { v++ } { last[$2] = $1 } END { print v + 0 }')
        fi
        local secs rate cpu ratio own
        secs=$(echo "$t1 - $t0" | bc -l)
        rate=$(echo "$n / $secs" | bc -l)
        cpu=$(echo "($ticks1 - $ticks0) * 1000000 / $CLK / $n" | bc -l)
        ratio=$(echo "$rate / $SERIAL" | bc -l)
        if [ "$mode" = dry-run ]; then own=$cpu; else own=$(echo "$cpu - $SPAWN_CPU" | bc -l); fi
        printf '%-8s %7d %9.2f %10.0f %6d %10d %7dKiB %8.1fus %9.1fus %7.2fx\n' "$mode" "$n" "$secs" "$rate" "$lost" "$viol" "$rss" "$cpu" "$own" "$ratio"
}
for n in $SIZES; do
        run dry-run "$n"
        run strict "$n"
        run devpath "$n"
done
echo
echo "ratio = events/s divided by the raw serial spawn rate; cpu/event = daemon user+sys CPU / events;"
echo "-spawn = cpu/event minus the spawn's own cost measured above (the daemon's overhead per event)"
echo "dry-run = parse, ledger, handlers, scheduler and an info log line per event, no spawn: the daemon's own cost"
