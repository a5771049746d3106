#!/bin/bash
# A burst of 10,000 real uevents over three devices with a slow-ish agent:
# every event runs exactly once, per-device order holds, the ledger has no
# gap and no duplicate.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent 2
N=${BURST_EVENTS:-10000}

v=hpb$$
t_veth "$v"
t_start_daemon --agent "$T_AGENT" --all
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" /sys/class/net/lo/uevent /sys/class/net/$v/uevent /sys/class/net/${v}p/uevent ||
        t_fail "burst failed"
# Cheap wait: count run files (other system events may add a few more).
t_wait_for 300 sh -c "[ \$(ls $T_DIR/runs | grep -vc tmp) -ge $N ]" || t_fail "only $(ls "$T_DIR/runs" | wc -l) runs"
sleep 1
t_stop_daemon

# One line per run of ours: DEVPATH SEQNUM START END UUID
find "$T_DIR/runs" -name '*.agent' -print0 | xargs -0 awk -v p="$prefix" '
        FNR == 1 { if (u != "") print d, s, st, en, u; d = s = st = en = u = "" }
        /^env:DEVPATH=/ { d = substr($0, 13) }
        /^env:SEQNUM=/ { s = substr($0, 12) }
        /^start=/ { st = substr($0, 7) }
        /^end=/ { en = substr($0, 5) }
        /^env:SYNTH_UUID=/ { if (index($0, p) == 16) u = substr($0, 16) }
        END { if (u != "") print d, s, st, en, u }' >"$T_DIR/table"
[ "$(wc -l <"$T_DIR/table")" = "$N" ] || t_fail "$(wc -l <"$T_DIR/table") of $N events ran"
[ "$(cut -d' ' -f5 "$T_DIR/table" | sort -u | wc -l)" = "$N" ] || t_fail "UUIDs not all distinct: an event ran twice"
violations=$(sort -k1,1 -k2,2n "$T_DIR/table" | awk '
        $1 == dev && $3 < end { v++ }
        { dev = $1; end = $4 }
        END { print v + 0 }')
[ "$violations" = 0 ] || t_fail "$violations per-device order violations"
grep "stopped:" "$T_LOG"
grep -q " 0 gaps, 0 duplicates" "$T_LOG" || t_fail "ledger: $(grep stopped: "$T_LOG")"
echo "ok: $N events, each ran once, 0 order violations, ledger without gap"
