#!/bin/bash
# Ordering with a slow agent on real events:
#  - a child's add never starts before its parent's add finished;
#  - a parent's remove never starts before its children's removes finished;
#  - unrelated devices run in parallel in devpath mode;
#  - strict runs one at a time in SEQNUM order.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent 300

# run file for DEVPATH $1 and ACTION $2
run_of() {
        local f
        for f in $(grep -l -x "env:DEVPATH=$1" "$T_DIR"/runs/* 2>/dev/null | grep -v '\.tmp$'); do
                grep -q -x "env:ACTION=$2" "$f" && { echo "$f"; return 0; }
        done
        return 1
}

# "start end" of runs, one line per file; checks that B starts after A ended.
after() { # after FILE_A FILE_B
        local a_end b_start
        a_end=$(t_field "$1" end)
        b_start=$(t_field "$2" start)
        [ "$b_start" -ge "$a_end" ]
}

overlap() {
        [ "$(t_field "$1" start)" -lt "$(t_field "$2" end)" ] && [ "$(t_field "$2" start)" -lt "$(t_field "$1" end)" ]
}

t_start_daemon --agent "$T_AGENT" --all --ordering devpath

v=hpo$$
base=/devices/virtual/net
t_veth "$v"
for dev in "$v" "${v}p"; do
        for q in rx-0 tx-0; do
                t_wait_for 20 run_of "$base/$dev/queues/$q" add || t_fail "no add run for $dev/$q"
        done
        parent=$(run_of "$base/$dev" add) || t_fail "no add run for $dev"
        for child in $(grep -l "^env:DEVPATH=$base/$dev/queues/" "$T_DIR"/runs/*); do
                grep -q -x "env:ACTION=add" "$child" || continue
                after "$parent" "$child" || t_fail "child $(t_env_of "$child" DEVPATH) add started before parent add finished"
        done
done
echo "ok: children's add after their parent's add"

p1=$(run_of "$base/$v" add)
p2=$(run_of "$base/${v}p" add)
overlap "$p1" "$p2" || t_fail "unrelated devices $v and ${v}p did not run in parallel in devpath mode"
echo "ok: unrelated devices ran in parallel"

ip link del "$v"
for dev in "$v" "${v}p"; do
        t_wait_for 20 run_of "$base/$dev" remove || t_fail "no remove run for $dev"
        parent=$(run_of "$base/$dev" remove)
        n=0
        for child in $(grep -l "^env:DEVPATH=$base/$dev/queues/" "$T_DIR"/runs/*); do
                grep -q -x "env:ACTION=remove" "$child" || continue
                n=$((n + 1))
                after "$child" "$parent" || t_fail "parent $dev remove started before child $(t_env_of "$child" DEVPATH) remove finished"
        done
        [ "$n" -ge 2 ] || t_fail "expected queue removes for $dev, saw $n"
done
echo "ok: parent's remove after its children's removes"
t_stop_daemon

# Strict mode: one at a time, SEQNUM order, even for unrelated devices.
rm -f "$T_DIR"/runs/*
echo 100 >"$T_DIR/sleep_ms"
t_start_daemon --agent "$T_AGENT" --all --ordering strict
w=hps$$
t_veth "$w"
prefix=$(t_uuid_prefix)
for i in 1 2 3; do
        echo "change $prefix-00000000000$i" >/sys/class/net/lo/uevent
        echo "change $prefix-00000000001$i" >/sys/class/net/$w/uevent
done
t_wait_for 30 sh -c "[ \$(grep -l '^env:SYNTH_UUID=$prefix' $T_DIR/runs/* 2>/dev/null | wc -l) -ge 6 ]" ||
        t_fail "strict: not all 6 change events ran"
ip link del "$w"
# Every run of this daemon, sorted by SEQNUM: each starts after the previous ended.
prev=
for f in $(ls "$T_DIR"/runs/ | grep -v tmp | sort -n); do
        f="$T_DIR/runs/$f"
        if [ -n "$prev" ]; then
                after "$prev" "$f" || t_fail "strict: $(basename "$f") started before $(basename "$prev") finished"
        fi
        prev=$f
done
echo "ok: strict mode ran $(ls "$T_DIR"/runs | wc -l) events one at a time in SEQNUM order"
