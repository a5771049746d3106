#!/bin/bash
# The hotplug.d multiplexer: for each event every executable
# DIR/NAME/*.hotplug then DIR/default/*.hotplug, lexical order, one after
# another, each as FILE NAME; nothing else in those directories runs.
. "$(dirname "$0")/lib.sh"
t_require_root
mkdir -p "$T_DIR/runs" "$T_DIR/hotplug.d/net" "$T_DIR/hotplug.d/default" "$T_DIR/hotplug.d/block"
d=$T_DIR/hotplug.d
ln -s "$AGENT_DUMP" "$d/net/20-b.hotplug"
ln -s "$AGENT_DUMP" "$d/net/10-a.hotplug"
ln -s "$AGENT_DUMP" "$d/default/05-c.hotplug"
ln -s "$AGENT_DUMP" "$d/default/.hidden.hotplug"
ln -s "$AGENT_DUMP" "$d/net/README"
ln -s "$AGENT_DUMP" "$d/block/10-x.hotplug"
cp "$AGENT_DUMP" "$d/net/30-noexec.hotplug" && chmod 644 "$d/net/30-noexec.hotplug"
mkdir "$d/net/40-dir.hotplug"
echo 50 >"$T_DIR/sleep_ms"

t_start_daemon --hotplug-d "$d" --all
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
t_wait_for 10 sh -c "[ \$(grep -l -x 'env:SYNTH_UUID=$u' $T_DIR/runs/* 2>/dev/null | wc -l) -ge 3 ]" ||
        t_fail "expected 3 hotplug.d runs for the event"
sleep 0.3
runs=$(grep -l -x "env:SYNTH_UUID=$u" "$T_DIR"/runs/* | xargs -n1 basename | sed 's/^[0-9]*\.//' | sort | tr '\n' ' ')
[ "$runs" = "05-c.hotplug 10-a.hotplug 20-b.hotplug " ] || t_fail "ran: $runs"
seq=$(t_env_of "$(t_run_with "SYNTH_UUID=$u")" SEQNUM)
a=$T_DIR/runs/$seq.10-a.hotplug b=$T_DIR/runs/$seq.20-b.hotplug c=$T_DIR/runs/$seq.05-c.hotplug
[ "$(t_field "$b" start)" -ge "$(t_field "$a" end)" ] || t_fail "20-b started before 10-a finished"
[ "$(t_field "$c" start)" -ge "$(t_field "$b" end)" ] || t_fail "default/05-c started before net/20-b finished"
for f in "$a" "$b" "$c"; do
        [ "$(t_field "$f" argc)" = 2 ] || t_fail "argc in $f"
        [ "$(t_field "$f" argv1)" = net ] || t_fail "argv1 in $f"
done
[ "$(t_field "$a" argv0)" = "$d/net/10-a.hotplug" ] || t_fail "argv0 is $(t_field "$a" argv0)"
[ "$(t_field "$c" argv0)" = "$d/default/05-c.hotplug" ] || t_fail "argv0 of default script"
echo "ok: net/10-a, net/20-b, default/05-c ran in order as FILE NAME; others skipped"
