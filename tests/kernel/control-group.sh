#!/bin/bash
# SPDX-License-Identifier: MIT
# Read-only access for a group, and runtime control (hotplugctl log-level,
# concurrency), with a real daemon:
#  - with control-group set, its members (as primary group, or as a
#    supplementary one: SO_PEERGROUPS) get status, blame, info and monitor, and
#    every request that changes state is refused (EPERM, "only root");
#  - a user in neither group is refused at connect, as without the setting;
#  - status names who answers: pid, version, uptime, the configuration file,
#    the agent, the log level;
#  - log-level and concurrency change the running daemon (status shows it),
#    bad values are usage errors, a concurrency past max-children is refused;
#  - a reload takes the configuration's values again.
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root
command -v setpriv >/dev/null || t_fail "setpriv (util-linux) is needed"
getent group nogroup >/dev/null || t_fail "no group 'nogroup' to test with"
NOGROUP=$(getent group nogroup | cut -d: -f3)
CTL="$HOTPLUGCTL"
member=(setpriv --reuid=65534 --regid="$NOGROUP" --clear-groups)     # nogroup as primary group
supplementary=(setpriv --reuid=65534 --regid=1 --groups="$NOGROUP")   # nogroup as a supplementary one
stranger=(setpriv --reuid=65534 --regid=1 --clear-groups)
chmod 755 "$T_DIR"

t_make_agent 0
printf 'control-group = nogroup\nmax-children = 4\nlog-level = info\n' >"$T_DIR/hotplugd.conf"
t_start_daemon --config="$T_DIR/hotplugd.conf" --agent="$T_AGENT" --concurrency=2 --after-udev=no

# --- who answers ----------------------------------------------------------------
"$CTL" status >"$T_DIR/status" || t_fail "status failed"
cat "$T_DIR/status"
grep -Eq "^Daemon: +hotplugd [0-9][^,]*, pid $T_DAEMON_PID, up [0-9.]+ (ms|s) \(since [0-9]{4}-" "$T_DIR/status" ||
        t_fail "no Daemon: line with pid $T_DAEMON_PID"
grep -qx "Config:   $T_DIR/hotplugd.conf" "$T_DIR/status" || t_fail "no Config: line naming $T_DIR/hotplugd.conf"
grep -qx "Agent:    $T_AGENT" "$T_DIR/status" || t_fail "no Agent: line naming $T_AGENT"
grep -qx "Logging:  info and more severe, to stderr" "$T_DIR/status" || t_fail "no Logging: line at info"
"$CTL" status --json >"$T_DIR/status.json" || t_fail "status --json failed"
python3 - "$T_DIR/status.json" "$T_DAEMON_PID" "$T_DIR/hotplugd.conf" <<'PY' || t_fail "status --json: daemon object"
import json, sys
d = json.load(open(sys.argv[1]))["daemon"]
assert d["pid"] == int(sys.argv[2]) and d["config"] == sys.argv[3] and d["log_level"] == "info", d
assert isinstance(d["since"], float) and d["uptime_usec"] > 0 and d["version"], d
PY

# --- the group reads ------------------------------------------------------------
for who in member supplementary; do
        declare -n run=$who
        "${run[@]}" "$CTL" status >"$T_DIR/$who.status" 2>&1 || t_fail "$who: status refused: $(cat "$T_DIR/$who.status")"
        grep -q "^Events:" "$T_DIR/$who.status" || t_fail "$who: status: $(cat "$T_DIR/$who.status")"
        "${run[@]}" "$CTL" blame >/dev/null 2>&1 || t_fail "$who: blame refused"
        "${run[@]}" "$CTL" blame --critical-chain >/dev/null 2>&1 || t_fail "$who: blame --critical-chain refused"
        "${run[@]}" "$CTL" info /sys/class/net/lo >"$T_DIR/$who.info" 2>&1 ||
                t_fail "$who: info refused: $(cat "$T_DIR/$who.info")"
        grep -q "^Device: *//*devices/virtual/net/lo\$" "$T_DIR/$who.info" || t_fail "$who: info: $(cat "$T_DIR/$who.info")"
        for verb in pause resume reload settle "log-level debug" "concurrency 1"; do
                rc=0
                # shellcheck disable=SC2086 # a verb and its value
                "${run[@]}" "$CTL" $verb >/dev/null 2>"$T_DIR/$who.err" || rc=$?
                [ "$rc" = 3 ] && grep -q "only root may do that" "$T_DIR/$who.err" ||
                        t_fail "$who: '$verb' not refused as it should be (exit $rc): $(cat "$T_DIR/$who.err")"
        done
        unset -n run
done
# A member's monitor hears events.
"${member[@]}" "$CTL" monitor --processed >"$T_DIR/monitor.out" 2>&1 &
mon=$!
t_on_exit "kill $mon 2>/dev/null"
u=$(t_uuid)
_heard() {
        kill -0 "$mon" 2>/dev/null || t_fail "the member's monitor exited: $(cat "$T_DIR/monitor.out")"
        echo "change $u" >/sys/class/net/lo/uevent
        grep -q "FINISHED" "$T_DIR/monitor.out"
}
t_wait_for "$T_IDLE" _heard || t_fail "the member's monitor saw no agent finish: $(cat "$T_DIR/monitor.out")"
kill "$mon"
wait "$mon" 2>/dev/null

# --- anyone else is refused at connect --------------------------------------------
rc=0
"${stranger[@]}" "$CTL" status >/dev/null 2>"$T_DIR/stranger.err" || rc=$?
[ "$rc" = 3 ] && grep -q "root only" "$T_DIR/stranger.err" ||
        t_fail "a user outside the group: exit $rc: $(cat "$T_DIR/stranger.err")"

# --- runtime control (root) -----------------------------------------------------------
"$CTL" log-level debug || t_fail "log-level debug failed"
"$CTL" status | grep -qx "Logging:  debug and more severe, to stderr" || t_fail "status does not show debug"
grep -q "log level set to debug" "$T_LOG" || t_fail "no log line for the new level"
"$CTL" concurrency 1 || t_fail "concurrency 1 failed"
"$CTL" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["concurrency"]=="fixed" and d["limit"]==1, d' ||
        t_fail "status after concurrency 1: $("$CTL" status --json)"
"$CTL" concurrency auto || t_fail "concurrency auto failed"
"$CTL" status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["concurrency"]=="adaptive", d' ||
        t_fail "status after concurrency auto: $("$CTL" status --json)"
rc=0; "$CTL" concurrency 5 2>"$T_DIR/c5.err" || rc=$?
[ "$rc" = 1 ] && grep -q "more than max-children (4)" "$T_DIR/c5.err" || t_fail "concurrency 5 of 4: exit $rc: $(cat "$T_DIR/c5.err")"
for bad in "concurrency 0" "concurrency many" "log-level loud" "log-level" "concurrency 1 2"; do
        rc=0
        # shellcheck disable=SC2086
        "$CTL" $bad >/dev/null 2>&1 || rc=$?
        [ "$rc" = 64 ] || t_fail "'$bad': exit $rc, want 64 (usage)"
done
# A reload takes the file's values again.
"$CTL" reload || t_fail "reload failed"
"$CTL" status | grep -qx "Logging:  info and more severe, to stderr" || t_fail "after reload: $("$CTL" status | grep Logging)"

# --- without control-group, a member is refused ----------------------------------------
t_stop_daemon
t_start_daemon --agent="$T_AGENT" --after-udev=no
rc=0
"${member[@]}" "$CTL" status >/dev/null 2>"$T_DIR/member2.err" || rc=$?
[ "$rc" = 3 ] || t_fail "without control-group, a member of nogroup: exit $rc: $(cat "$T_DIR/member2.err")"
"$CTL" status | grep -qx "Config:   (none read)" || "$CTL" status | grep -q "^Config:   /" ||
        t_fail "status without --config: $("$CTL" status | grep Config)"
t_stop_daemon
echo "ok: the control group reads (primary and supplementary), nothing more; log-level and concurrency at run time"
