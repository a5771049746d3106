#!/bin/bash
# Record real uevents (a veth pair and a zram device, added and removed)
# with --record, then replay the recording with --dry-run: the replay runs
# the same events in the same order with the same waits as the live run.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent 200
REC=$T_DIR/live.rec
v=hpr$$

t_start_daemon --agent "$T_AGENT" --all --record "$REC" --log-level debug
t_veth "$v"
t_wait_for 20 t_run_with "DEVPATH=/devices/virtual/net/$v/queues/tx-0" || t_fail "veth add did not run"
ip link del "$v"
t_zram_add
z=$T_ZRAM
t_wait_for 20 t_run_with "DEVNAME=zram$z" || t_fail "zram add did not run"
t_zram_remove "$z"
t_wait_for 20 sh -c "grep -l -x 'env:ACTION=remove' \$(grep -l -x 'env:DEVNAME=zram$z' $T_DIR/runs/*) >/dev/null 2>&1" ||
        t_fail "zram remove did not run"
sleep 0.5
t_stop_daemon
cp "$T_LOG" "$T_DIR/live.log"

ours() { grep -E "DEVPATH=(/devices/virtual/net/$v|/devices/virtual/block/zram$z)"; }

# Live: per device, the SEQNUMs in the order the daemon started their agents
# (the recording's AGENT_START records, via hotplugctl timeline), and the
# events that logged "A waited for B (why)".  Unrelated events that became
# runnable at the same moment may start in either order; ordering is per
# device plus waits.  B is the last of A's blockers to finish: two that
# finish together may finish in either order, so only A is compared.
for f in "$T_DIR"/runs/*.agent; do
        echo "$(t_env_of "$f" SEQNUM) DEVPATH=$(t_env_of "$f" DEVPATH)"
done | ours | sort -n >"$T_DIR/our.events"
"$HOTPLUGCTL" timeline "$REC" --text >"$T_DIR/timeline.txt" || t_fail "timeline --text failed"
per_device() { # stdin: SEQNUMs in start order -> "DEVPATH seq seq ..." lines
        awk 'NR == FNR { dev[$1] = $2; next } ($1 in dev) { l[dev[$1]] = l[dev[$1]] " " $1 }
             END { for (d in l) print d l[d] }' "$T_DIR/our.events" - | sort
}
awk '$1 ~ /^[0-9.]+$/ && $3 ~ /^[0-9]+$/ { print $1, $3 }' "$T_DIR/timeline.txt" | sort -n -s -k1,1 |
        cut -d' ' -f2 | per_device >"$T_DIR/live.order"
ours <"$T_DIR/live.log" | sed -n 's/.*SEQNUM=\([0-9]*\) .*waited for SEQNUM=[0-9]* (.*)$/\1/p' |
        sort -n >"$T_DIR/live.waits"
[ "$(wc -l <"$T_DIR/our.events")" -ge 16 ] || t_fail "live run recorded only $(wc -l <"$T_DIR/our.events") events"
[ "$(wc -w <"$T_DIR/live.order")" = $(($(wc -l <"$T_DIR/our.events") + $(wc -l <"$T_DIR/live.order"))) ] ||
        t_fail "the recording lacks agent starts for some events"
[ -s "$T_DIR/live.waits" ] || t_fail "live run logged no waits (children of the veth devices must wait)"

# Replay, dry run, recorded pace.
"$HOTPLUGD" --replay "$REC" --dry-run --all --agent /nonexistent --control-socket= --log-target=stderr \
        >"$T_DIR/replay.log" 2>&1 || t_fail "replay exited $?"
grep -q "read to the end" "$T_DIR/replay.log" || t_fail "replay did not reach the end"
ours <"$T_DIR/replay.log" | sed -n 's/.*SEQNUM=\([0-9]*\) .*would run: .*/\1/p' | per_device >"$T_DIR/replay.order"
ours <"$T_DIR/replay.log" | sed -n 's/.*SEQNUM=\([0-9]*\) .*waited for SEQNUM=[0-9]* (.*)$/\1/p' |
        sort -n >"$T_DIR/replay.waits"
diff -u "$T_DIR/live.order" "$T_DIR/replay.order" || t_fail "replay order differs from the live run"
diff -u "$T_DIR/live.waits" "$T_DIR/replay.waits" || t_fail "replay waits differ from the live run"
echo "ok: replay ran $(wc -l <"$T_DIR/our.events") events on $(wc -l <"$T_DIR/replay.order") devices in the live per-device order with the same $(wc -l <"$T_DIR/replay.waits") waits"
head -n 3 "$T_DIR/replay.waits" | sed 's/^/  e.g. SEQNUM /'

# A torn recording replays up to the tear, with a clear message.
size=$(stat -c %s "$REC")
head -c $((size - 7)) "$REC" >"$T_DIR/torn.rec"
"$HOTPLUGD" --replay "$T_DIR/torn.rec" --dry-run --all --speed 0 --control-socket= --log-target=stderr \
        >"$T_DIR/torn.log" 2>&1 || t_fail "torn replay exited $?"
grep -q "torn record at end of file" "$T_DIR/torn.log" || t_fail "no message about the torn record"
echo "ok: torn recording replayed up to the tear"
