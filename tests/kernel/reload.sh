#!/bin/bash
# Reload without losing queued events: a new config (another agent) applies
# on SIGHUP and on `hotplugctl reload`; a broken config is rejected with
# FILE:LINE: reason and the running configuration is kept.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent 300
mkdir -p "$T_DIR/b/runs"
ln -s "$AGENT_DUMP" "$T_DIR/b/agent-b"
CONF=$T_DIR/hotplugd.conf
printf 'agent = %s\nordering = strict\n' "$T_AGENT" >"$CONF"
chmod 644 "$CONF"
t_start_daemon --config "$CONF" --all

# Queue several events on a slow agent, then reload to agent B while they wait.
prefix=$(t_uuid_prefix)
for i in 1 2 3 4; do echo "change $prefix-00000000000$i" >/sys/class/net/lo/uevent; done
sleep 0.1
printf 'agent = %s\nordering = strict\n' "$T_DIR/b/agent-b" >"$CONF"
"$HOTPLUGCTL" reload || t_fail "hotplugctl reload of a valid config failed"
grep -q "configuration reloaded: agent $T_DIR/b/agent-b" "$T_LOG" || t_fail "reload not logged"
t_wait_for 20 sh -c "[ \$(ls $T_DIR/runs $T_DIR/b/runs | grep -c '\\.agent') -ge 4 ]" ||
        t_fail "queued events lost across the reload"
# No event was lost: all four ran, by A (started before the reload) or by B.
n=$(grep -l "^env:SYNTH_UUID=$prefix" "$T_DIR"/runs/* "$T_DIR"/b/runs/* 2>/dev/null | wc -l)
[ "$n" = 4 ] || t_fail "$n of 4 queued events ran across the reload"
[ -n "$(grep -l "^env:SYNTH_UUID=$prefix" "$T_DIR"/b/runs/* 2>/dev/null)" ] || t_fail "agent B never ran"
echo "ok: reload applied a new agent; 4 queued events all ran"

# A broken config: rejected with file, line and reason; the running one stays.
printf 'agent = %s\nordering = sideways\n' "$T_DIR/b/agent-b" >"$CONF"
out=$("$HOTPLUGCTL" reload 2>&1) && t_fail "hotplugctl reload accepted a broken config"
echo "$out" | grep -q "$CONF:2:" || t_fail "reload error lacks FILE:LINE: $out"
grep -q "reload failed, keeping the running configuration: $CONF:2:" "$T_LOG" || t_fail "daemon did not log the rejected reload"
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
t_wait_for 10 sh -c "grep -l -x 'env:SYNTH_UUID=$u' $T_DIR/b/runs/* >/dev/null 2>&1" || t_fail "old config not kept after a broken reload"
echo "ok: broken config rejected ($out); the running config kept serving"

# SIGHUP reloads too (and is not fatal).
printf 'agent = %s\n' "$T_AGENT" >"$CONF"
kill -HUP "$T_DAEMON_PID"
t_wait_for 5 sh -c "[ \$(grep -c 'configuration reloaded' $T_LOG) -ge 2 ]" || t_fail "SIGHUP did not reload"
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
t_wait_for 10 t_run_with "SYNTH_UUID=$u" || t_fail "agent A not used after SIGHUP reload"
echo "ok: SIGHUP reload"
