#!/bin/bash
# The hotplug.d multiplexer: for each event every executable
# DIR/NAME/*.hotplug then DIR/default/*.hotplug, lexical order, one after
# another, each as FILE NAME; nothing else in those directories runs.
# Only files that root alone can have written run: a mode-0777 program, one
# owned by another user, a symbolic link to a user's file and the programs
# of a world-writable NAME/ directory are refused, each with one log line
# (not one per event), while the good programs still run.
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
# Untrusted: writable by anyone, owned by nobody, a link to nobody's file.
cp "$AGENT_DUMP" "$d/net/25-mode777.hotplug" && chmod 0777 "$d/net/25-mode777.hotplug"
cp "$AGENT_DUMP" "$d/net/26-other.hotplug" && chown 65534 "$d/net/26-other.hotplug"
mkdir -m 0755 "$T_DIR/user" && cp "$AGENT_DUMP" "$T_DIR/user/agent" && chown 65534 "$T_DIR/user/agent"
ln -s "$T_DIR/user/agent" "$d/net/27-link.hotplug"
# A link to a root-owned program in a directory another user owns (who could replace it).
mkdir -m 0755 "$T_DIR/userdir" && cp "$AGENT_DUMP" "$T_DIR/userdir/agent" && chown 65534 "$T_DIR/userdir"
ln -s "$T_DIR/userdir/agent" "$d/net/28-linkdir.hotplug"
# A world-writable NAME/ directory: its (root-owned) program is refused too.
mkdir -m 0777 "$d/mem" && chmod 0777 "$d/mem"
ln -s "$AGENT_DUMP" "$d/mem/10-m.hotplug"
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

# Refusals: one log line per file, however many events.
u2=$(t_uuid)
echo "change $u2" >/sys/class/net/lo/uevent
t_wait_for 10 sh -c "[ \$(grep -l -x 'env:SYNTH_UUID=$u2' $T_DIR/runs/* 2>/dev/null | wc -l) -ge 3 ]" ||
        t_fail "expected 3 hotplug.d runs for the second event"
mem=/sys/devices/virtual/mem/null/uevent
[ -w "$mem" ] || t_skip "no $mem to trigger a mem event"
u3=$(t_uuid)
echo "change $u3" >"$mem"
t_wait_for 10 sh -c "grep -q -x 'env:SYNTH_UUID=$u3' $T_DIR/runs/* 2>/dev/null" || t_fail "no run for the mem event"
sleep 0.3
runs=$(grep -l -x "env:SYNTH_UUID=$u2" "$T_DIR"/runs/* | xargs -n1 basename | sed 's/^[0-9]*\.//' | sort | tr '\n' ' ')
[ "$runs" = "05-c.hotplug 10-a.hotplug 20-b.hotplug " ] || t_fail "second event ran: $runs"
runs=$(grep -l -x "env:SYNTH_UUID=$u3" "$T_DIR"/runs/* | xargs -n1 basename | sed 's/^[0-9]*\.//' | sort | tr '\n' ' ')
[ "$runs" = "05-c.hotplug " ] || t_fail "mem event ran: $runs (the world-writable mem/ must be refused)"
for f in "net/25-mode777.hotplug:writable by group or others" "net/26-other.hotplug:not owned by root" \
        "net/27-link.hotplug:link target not owned by root" \
        "net/28-linkdir.hotplug:link target in a directory others can write" "mem:writable by group or others"; do
        n=$(grep -c -F "$d/${f%%:*}: ${f#*:}" "$T_LOG")
        [ "$n" = 1 ] || t_fail "expected one log line for $d/${f%%:*} (${f#*:}), got $n"
done
echo "ok: net/10-a, net/20-b, default/05-c ran in order as FILE NAME; others skipped; untrusted files refused once"
