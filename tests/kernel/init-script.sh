#!/bin/bash
# SPDX-License-Identifier: MIT
# The LSB init.d script (init/hotplugd.init.in, as the build made it) run by
# hand with a private /etc/default file (HOTPLUGD_DEFAULTS): its own pid
# file, control socket, log and coldplug marker, and a coldplug limited to
# this test's veth pair (COLDPLUG_OPTS, ACTION=change); agents do not wait
# for a udevd another test may run (--after-udev=no).
#  - start starts hotplugd, runs the coldplug and makes COLDPLUG_DONE (the
#    number of events) only once both devices' agents ran; status says
#    running (exit 0);
#  - start again, reload and restart succeed, and the coldplug is not run
#    again in the same boot (the marker says it ran);
#  - a marker that is not what hotplugctl makes (a link, other content) is
#    not believed: the next start runs the coldplug and makes it anew;
#  - stop stops it (the pid file goes), status then exits 3.
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root
command -v start-stop-daemon >/dev/null && [ -r /lib/lsb/init-functions ] ||
        t_skip "no start-stop-daemon or /lib/lsb/init-functions (not Debian-like)"
[ -r "$BUILDDIR/init/hotplugd.init" ] || t_fail "no $BUILDDIR/init/hotplugd.init"

t_make_agent
a=hpi$$
t_veth "$a"
# The script as built, run from here with this build's programs.
script=$T_DIR/hotplugd.init
sed -e "s|^DAEMON=.*|DAEMON=$HOTPLUGD|" -e "s|^HOTPLUGCTL=.*|HOTPLUGCTL=$HOTPLUGCTL|" \
        "$BUILDDIR/init/hotplugd.init" >"$script"
chmod 0755 "$script"
mkdir -m 0755 "$T_DIR/run"
: >"$T_DIR/hotplugd.conf"
done_file=$T_DIR/run/coldplug-done
T_LOG=$T_DIR/daemon.log
cat >"$T_DIR/default" <<END
HOTPLUGD_OPTS="--agent=$T_AGENT --all --after-udev=no --config=$T_DIR/hotplugd.conf --log-target=stderr"
COLDPLUG_OPTS="--action=change --sysname-match=$a*"
COLDPLUG_DONE=$done_file
LOG=$T_LOG
PIDFILE=$T_DIR/hotplugd.pid
CONTROL_SOCKET=$T_DIR/control
HANDOVER_FILE=$T_DIR/run/handover
END
export HOTPLUGD_DEFAULTS=$T_DIR/default HOTPLUGCTL_SOCKET=$T_DIR/control
# Whatever happens, the daemon the script started is stopped (by its pid).
t_on_exit '[ -s "$T_DIR/hotplugd.pid" ] && kill "$(cat "$T_DIR/hotplugd.pid")"'

run() {
        local rc=0
        "$script" "$@" >"$T_DIR/out" 2>&1 || rc=$?
        echo "$rc"
}
# Runs of the agent with ACTION=change for the veth pair.
changes() {
        cat "$T_DIR"/runs/*.agent 2>/dev/null | grep -c -x -e "env:DEVPATH=/devices/virtual/net/$a" \
                -e "env:DEVPATH=/devices/virtual/net/${a}p"
}

echo 200 >"$T_DIR/sleep_ms" # each agent run takes 0.2 s
rc=$(run start)
[ "$rc" = 0 ] || t_fail "start: exit $rc: $(cat "$T_DIR/out")"
[ "$(changes)" = 2 ] || t_fail "start: $(changes) agent runs for $a and ${a}p, want 2 (the coldplug)"
[ "$(cat "$done_file" 2>/dev/null)" = 2 ] || t_fail "start: $done_file holds '$(cat "$done_file" 2>/dev/null)', want 2"
pid=$(cat "$T_DIR/hotplugd.pid")
[ "$(readlink "/proc/$pid/exe")" = "$(readlink -f "$HOTPLUGD")" ] || t_fail "the pid file names $pid, not hotplugd"
rc=$(run status)
[ "$rc" = 0 ] || t_fail "status while running: exit $rc: $(cat "$T_DIR/out")"
echo "ok: start ran the coldplug (2 events) and made $done_file; status 0"

echo 0 >"$T_DIR/sleep_ms"
rc=$(run start)
[ "$rc" = 0 ] && [ "$(cat "$T_DIR/hotplugd.pid")" = "$pid" ] || t_fail "start again: exit $rc: $(cat "$T_DIR/out")"
rc=$(run reload)
[ "$rc" = 0 ] || t_fail "reload: exit $rc: $(cat "$T_DIR/out")"
grep -q "reload" "$T_LOG" || t_fail "reload: nothing in the daemon's log"
rc=$(run restart)
[ "$rc" = 0 ] || t_fail "restart: exit $rc: $(cat "$T_DIR/out")"
[ "$(cat "$T_DIR/hotplugd.pid")" != "$pid" ] || t_fail "restart: the same pid $pid"
_t_exited "$pid" || t_fail "restart: the old hotplugd $pid still runs"
t_settle
[ "$(changes)" = 2 ] || t_fail "start, reload, restart: $(changes) runs for the pair, want still 2 (coldplug once)"
echo "ok: start again, reload and restart succeed, and do not run the coldplug again"

# A marker hotplugctl did not make is not believed: a link to a file with a number, then a file with text.
rm "$done_file"
echo 7 >"$T_DIR/seven"
ln -s "$T_DIR/seven" "$done_file"
run restart >/dev/null
[ "$(changes)" = 4 ] && [ ! -L "$done_file" ] && [ "$(cat "$done_file")" = 2 ] ||
        t_fail "restart with a link as marker: $(changes) runs, marker '$(cat "$done_file")', want 4 and 2"
echo "junk" >"$done_file"
run restart >/dev/null
[ "$(changes)" = 6 ] && [ "$(cat "$done_file")" = 2 ] ||
        t_fail "restart with junk as marker: $(changes) runs, marker '$(cat "$done_file")', want 6 and 2"
echo "ok: a marker that is a link or holds no number is not believed: the coldplug runs and makes it anew"

pid=$(cat "$T_DIR/hotplugd.pid")
rc=$(run stop)
[ "$rc" = 0 ] || t_fail "stop: exit $rc: $(cat "$T_DIR/out")"
_t_exited "$pid" || t_fail "stop: hotplugd $pid still runs"
[ ! -e "$T_DIR/hotplugd.pid" ] || t_fail "stop: the pid file is left"
rc=$(run status)
[ "$rc" = 3 ] || t_fail "status after stop: exit $rc (want 3): $(cat "$T_DIR/out")"
grep -q "stopped:" "$T_LOG" || t_fail "hotplugd did not stop in order: $(tail -n 3 "$T_LOG")"
echo "ok: stop stopped hotplugd and removed the pid file; status 3"
echo "PASS"
