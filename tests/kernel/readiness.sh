#!/bin/bash
# s6-style readiness: with --ready-fd N hotplugd writes one newline to N once
# its uevent socket is bound, then closes N.  A uevent triggered right after
# the line is read must be run; the descriptor must then be at EOF (closed by
# the daemon and not inherited by agents); a descriptor that is not open is
# a usage error.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent

# 1. Not an open descriptor: usage error (64), before anything starts.
rc=0
"$HOTPLUGD" --ready-fd 97 --control-socket= --agent "$T_AGENT" 97>&- 2>"$T_DIR/err" || rc=$?
[ "$rc" = 64 ] || t_fail "--ready-fd on a closed descriptor: exit $rc, expected 64"
grep -q "ready-fd" "$T_DIR/err" || t_fail "no message naming --ready-fd: $(cat "$T_DIR/err")"
echo "ok: --ready-fd on a closed descriptor is a usage error"

# 2. The line, then a uevent at once.
mkfifo "$T_DIR/ready"
T_LOG="$T_DIR/daemon.log"
export HOTPLUGCTL_SOCKET="$T_DIR/control"
# The child blocks opening the FIFO for writing until we open it for reading.
"$HOTPLUGD" --log-target=stderr --control-socket="$HOTPLUGCTL_SOCKET" --agent "$T_AGENT" --all \
        --ready-fd 3 3>"$T_DIR/ready" >"$T_LOG" 2>&1 &
T_DAEMON_PID=$!
exec 4<"$T_DIR/ready"
t0=$(date +%s%N)
line=x
read -r -t 10 line <&4 || t_fail "no readiness line within 10 s"
t1=$(date +%s%N)
[ -z "$line" ] || t_fail "readiness line is '$line', expected an empty line"
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
echo "readiness line after $(((t1 - t0) / 1000000)) ms"

rc=0
read -r -t 5 extra <&4 || rc=$?
[ "$rc" = 1 ] || t_fail "descriptor 3 not closed after the readiness line (read status $rc)"
exec 4<&-
echo "ok: one empty line, then EOF"

t_wait_for 10 t_run_with "SYNTH_UUID=$u" || t_fail "the uevent triggered right after readiness was not run"
echo "ok: a uevent triggered right after the readiness line was run"
t_stop_daemon
[ "$T_DAEMON_RC" = 0 ] || t_fail "daemon exit status $T_DAEMON_RC"
