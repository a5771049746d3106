#!/bin/bash
# SPDX-License-Identifier: MIT
# Files and sockets hotplugd creates, against hostile paths:
#  - --record and hotplugctl record refuse a symbolic link at the path and
#    leave its target alone; a new recording has mode 0600;
#  - agents run with umask 022 although the daemon itself runs with 077;
#  - an existing control socket directory that is a symbolic link, not
#    owned by root or writable by group/others is refused (no socket in it);
#    a missing one is created 0755;
#  - the control socket has mode 0666 from the moment bind() created it;
#  - a refused (non-root) client that never stops sending cannot hold the
#    daemon: it is closed after at most 64 reads (counted with strace;
#    that part is not tested without strace) and root is served meanwhile.
. "$SRCDIR/tests/kernel/lib.sh"
t_require_root
umask 022 # what hotplugd must not depend on

# --- --record through a symbolic link is refused -------------------------------
echo precious >"$T_DIR/target"
ln -s "$T_DIR/target" "$T_DIR/link.rec"
rc=0
"$HOTPLUGD" --log-target=stderr --control-socket= --agent=/bin/true --record="$T_DIR/link.rec" \
        >"$T_DIR/link.log" 2>&1 &
t_wait_pid_exit $! rc || t_fail "hotplugd --record=<symlink> still running"
[ "$rc" != 0 ] || t_fail "hotplugd --record=<symlink> started: $(cat "$T_DIR/link.log")"
grep -q "symbolic link; refused" "$T_DIR/link.log" || t_fail "unclear refusal: $(cat "$T_DIR/link.log")"
[ "$(cat "$T_DIR/target")" = precious ] || t_fail "the symlink's target was written to"

rc=0
"$HOTPLUGCTL" record "$T_DIR/link.rec" --duration 0.1 2>"$T_DIR/ctl-link.err" || rc=$?
[ "$rc" != 0 ] || t_fail "hotplugctl record followed a symbolic link"
grep -q "symbolic link; refused" "$T_DIR/ctl-link.err" || t_fail "unclear refusal: $(cat "$T_DIR/ctl-link.err")"
[ "$(cat "$T_DIR/target")" = precious ] || t_fail "hotplugctl record wrote to the symlink's target"

# --- hotplugctl record creates 0600 --------------------------------------------------
"$HOTPLUGCTL" record "$T_DIR/ctl.rec" --duration 0.1 >/dev/null || t_fail "hotplugctl record failed"
m=$(stat -c %a "$T_DIR/ctl.rec")
[ "$m" = 600 ] || t_fail "hotplugctl record created mode $m, expected 600"

# --- the daemon's recording is 0600; agents get umask 022 ---------------------------
cat >"$T_DIR/agent-umask" <<AGENT
#!/bin/sh
[ -n "\${SYNTH_UUID:-}" ] && umask >"$T_DIR/umask.\$SYNTH_UUID"
exit 0
AGENT
chmod 755 "$T_DIR/agent-umask"
t_start_daemon --agent="$T_DIR/agent-umask" --record="$T_DIR/daemon.rec"
m=$(stat -c %a "$T_DIR/daemon.rec")
[ "$m" = 600 ] || t_fail "--record created mode $m, expected 600"
m=$(stat -c %a "$HOTPLUGCTL_SOCKET")
[ "$m" = 666 ] || t_fail "control socket mode $m, expected 666"
u=$(t_uuid)
echo "change $u" >/sys/class/net/lo/uevent
t_settle || t_fail "settle failed (no progress for $T_IDLE s)"
[ -f "$T_DIR/umask.$u" ] || t_fail "the agent for $u did not run"
[ "$(cat "$T_DIR/umask.$u")" = 0022 ] || t_fail "agent umask $(cat "$T_DIR/umask.$u"), expected 0022"

# --- a refused client that keeps sending cannot hold the daemon ------------------------
refused_flood() {
        chmod 755 "$T_DIR"
        # The daemon is stopped while the client connects, so that its queue is
        # full when the daemon accepts it; the client keeps refilling it.
        kill -STOP "$T_DAEMON_PID"
        setpriv --reuid=65534 --regid=65534 --clear-groups "$REFUSE_FLOOD" "$HOTPLUGCTL_SOCKET" 4 >"$T_DIR/flood" \
                2>"$T_DIR/flood.err" &
        FLOOD=$!
        stop_flood() { pkill -P "$FLOOD"; kill "$FLOOD"; } 2>/dev/null
        # Never leave the daemon stopped: t_stop_daemon would wait for it forever.
        flood_fail() { kill -CONT "$T_DAEMON_PID"; stop_flood; t_fail "$@"; }
        t_on_exit stop_flood
        t_wait_for "$T_IDLE" grep -q connected "$T_DIR/flood" || flood_fail "the flooding client did not connect"
        sleep 0.2 # let it fill the queue; the daemon, stopped, cannot move meanwhile
        # Count what the daemon reads from it (one-byte packets) with strace.
        strace -qq -e trace=recvfrom -o "$T_DIR/strace" -p "$T_DAEMON_PID" &
        STRACE=$!
        t_on_exit "kill $STRACE"
        _t_traced() { [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$T_DAEMON_PID/status")" = "$STRACE" ]; }
        t_wait_for "$T_IDLE" _t_traced || flood_fail "strace did not attach to hotplugd"
        kill -CONT "$T_DAEMON_PID"
        # A liveness bound for one request, not a deadline for the test's work.
        timeout 30 "$HOTPLUGCTL" status >/dev/null || { stop_flood; t_fail "root not served while a refused client floods"; }
        rc=0
        t_wait_pid_exit $FLOOD rc || t_fail "the flooding refused client was never closed"
        _t_flood_done() { [ "$(grep -c "packets sent" "$T_DIR/flood.err")" = 4 ]; }
        t_wait_for "$T_IDLE" _t_flood_done || { stop_flood; t_fail "flood: $(cat "$T_DIR/flood.err")"; }
        kill "$STRACE"
        wait "$STRACE" 2>/dev/null
        # The daemon read at most HP_CONTROL_REFUSE_DRAIN_MAX (64) of them.
        sent=$(awk '/packets sent/ { n += $2 } END { print n }' "$T_DIR/flood.err")
        read=$(grep -c '^recvfrom(.*"x", 64, MSG_DONTWAIT.*= 1$' "$T_DIR/strace")
        echo "a refused client sent $sent packets; hotplugd read $read of them before closing it"
        [ "$read" -le 64 ] || t_fail "hotplugd read $read packets from a refused client (bound 64)"
        grep -q "^Events" <("$HOTPLUGCTL" status) || t_fail "status after the flood"
        t_stop_daemon
}
if command -v strace >/dev/null; then
        refused_flood
else
        echo "not tested: a flooding refused client (strace is needed to count the daemon's reads)"
        t_stop_daemon
fi

# --- a hostile control socket directory is refused ------------------------------------
check_refused() { # $1: directory, $2: expected message
        t_start_daemon --agent=/bin/true --control-socket="$1/control"
        grep -q "$2" "$T_LOG" || t_fail "$1: no refusal ($2): $(cat "$T_LOG")"
        [ ! -e "$1/control" ] || t_fail "$1: a socket was created in a refused directory"
        t_stop_daemon
}
mkdir -m 0777 "$T_DIR/open"
check_refused "$T_DIR/open" "writable by group or others (mode 0777); refused"
mkdir -m 0755 "$T_DIR/foreign"
chown 65534 "$T_DIR/foreign"
check_refused "$T_DIR/foreign" "owned by uid 65534, not 0; refused"
mkdir -m 0755 "$T_DIR/real"
ln -s "$T_DIR/real" "$T_DIR/linkdir"
check_refused "$T_DIR/linkdir" "is a symbolic link; refused"
[ ! -e "$T_DIR/real/control" ] || t_fail "a socket was created through a symbolic link"

# --- a missing directory is created 0755, so that non-root clients are told why ---------------
t_start_daemon --agent=/bin/true --control-socket="$T_DIR/new/control"
m=$(stat -c %a "$T_DIR/new")
[ "$m" = 755 ] || t_fail "control socket directory created with mode $m, expected 755"
t_stop_daemon

# --- the socket's mode from the moment it exists ------------------------------------------
export BIND_PROBE_OUT="$T_DIR/bind-probe"
mkdir -m 0700 "$T_DIR/priv"
LD_PRELOAD="$BIND_PROBE" ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
        t_start_daemon --agent=/bin/true --control-socket="$T_DIR/priv/control"
unset BIND_PROBE_OUT
line=$(grep "^$T_DIR/priv/control " "$T_DIR/bind-probe") || t_fail "the bind probe saw no bind: $(cat "$T_DIR/bind-probe" 2>&1)"
[ "${line##* }" = 0666 ] || t_fail "the socket existed with mode ${line##* } before its final mode 0666"
t_stop_daemon
echo "PASS"
