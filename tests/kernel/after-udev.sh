#!/bin/bash
# after-udev against a real systemd-udevd: agents start only once udevd has
# finished the same event (its RUN programs done), a udevd that starts or
# stops while hotplugd runs is noticed, and broadcasts that udevd did not
# send, or that do not match the kernel's event, release nothing.
#
# The test runs in a mount namespace of its own, where udevd sees only the
# test's rule (its packaged rules directories are hidden), keeps its
# database in a tmpfs on /run/udev and its device nodes in a tmpfs on /dev:
# it changes nothing on the machine.  The rule runs "sleep S; touch MARK"
# for the test's change events of lo (S from the event's SYNTH_ARG_HPAU);
# the agent writes "after" if MARK existed when it started, else "before".
. "$(dirname "$0")/lib.sh"
t_require_root

UDEVD=$(command -v systemd-udevd || ls /lib/systemd/systemd-udevd /usr/lib/systemd/systemd-udevd 2>/dev/null | head -n 1)
if [ -z "$UDEVD" ] || ! command -v udevadm >/dev/null; then
        [ "${HOTPLUGD_TEST_REQUIRE_ROOT:-0}" = 1 ] && t_fail "systemd-udevd is not installed (.ci/deps installs package udev)"
        t_skip "systemd-udevd is not installed"
fi
if [ -z "${AFTER_UDEV_NS:-}" ]; then
        trap - EXIT
        rm -rf "$T_DIR"
        exec unshare -m env AFTER_UDEV_NS=1 bash "$0" "$@"
fi

# ---- the namespace: udevd's world ------------------------------------------
mkdir -p "$T_DIR/empty" "$T_DIR/rules" "$T_DIR/udev" "$T_DIR/runs"
if [ ! -d /run/udev ]; then
        mkdir /run/udev
        t_on_exit "rmdir /run/udev"
fi
mount -t tmpfs -o mode=0755 tmpfs /run/udev || t_fail "cannot mount a tmpfs on /run/udev"
t_on_exit "umount /run/udev"
for d in /usr/lib/udev/rules.d /lib/udev/rules.d; do
        [ -d "$d" ] && mount --bind "$T_DIR/empty" "$d" && t_on_exit "umount $d"
done
mkdir -p /etc/udev/rules.d
mount --bind "$T_DIR/rules" /etc/udev/rules.d || t_fail "cannot hide /etc/udev/rules.d"
t_on_exit "umount /etc/udev/rules.d"
mount -t tmpfs -o mode=0755 tmpfs /dev || t_fail "cannot mount a tmpfs on /dev"
t_on_exit "umount /dev"
mknod -m 666 /dev/null c 1 3
# A synthetic event's arguments are alphanumeric: HPAU is the rule's sleep in milliseconds.
cat >"$T_DIR/udev-run" <<EOF
#!/bin/sh
sleep \$(awk "BEGIN { print \$1 / 1000 }")
touch "$T_DIR/udev/\$2"
EOF
chmod 755 "$T_DIR/udev-run"
echo "ACTION==\"change\", ENV{SYNTH_ARG_HPAU}==\"?*\", RUN+=\"$T_DIR/udev-run \$env{SYNTH_ARG_HPAU} \$env{SYNTH_UUID}\"" \
        >"$T_DIR/rules/50-after-udev-test.rules"

cat >"$T_DIR/agent" <<EOF
#!/bin/sh
[ -n "\$SYNTH_ARG_HPAU" ] || exit 0
if [ -e "$T_DIR/udev/\$SYNTH_UUID" ]; then r=after; else r=before; fi
echo "\$r" >"$T_DIR/runs/\$SYNTH_UUID.tmp" && mv "$T_DIR/runs/\$SYNTH_UUID.tmp" "$T_DIR/runs/\$SYNTH_UUID"
EOF
chmod 755 "$T_DIR/agent"

UPID=
udevd_start() {
        "$UDEVD" 2>>"$T_DIR/udevd.log" &
        UPID=$!
        t_on_exit "kill -CONT $UPID; kill $UPID; wait $UPID"
        _pong() { udevadm control --ping -t 1; }
        t_wait_for "$T_IDLE" _pong || t_fail "udevd did not answer a ping"
}

# send COUNT MS: COUNT change events of lo whose udev rule sleeps MS milliseconds; their UUIDs in $SENT
send() {
        local i u
        SENT=()
        for ((i = 0; i < $1; i++)); do
                u=$(t_uuid)
                SENT+=("$u")
                echo "change $u HPAU=$2" >/sys/class/net/lo/uevent
        done
}
_all_ran() {
        local u
        for u in "${SENT[@]}"; do [ -f "$T_DIR/runs/$u" ] || return 1; done
}
# wait_runs WHAT: every event in $SENT ran its agent; counts of "after" and "before" in $AFTER, $BEFORE
wait_runs() {
        local u
        t_wait_for "$T_IDLE" _all_ran || t_fail "$1: not every agent ran (no progress for $T_IDLE s)"
        AFTER=0 BEFORE=0
        for u in "${SENT[@]}"; do
                case $(cat "$T_DIR/runs/$u") in
                after) AFTER=$((AFTER + 1)) ;;
                *) BEFORE=$((BEFORE + 1)) ;;
                esac
        done
}

# listen NAME: the kernel's events (group 1) into $T_DIR/NAME.out, from now until the test's exit.
listen() {
        "$UEVENT_LISTEN" 1 600 >"$T_DIR/$1.out" 2>"$T_DIR/$1.err" &
        t_on_exit "kill $!"
        _listening() { grep -q ready "$T_DIR/$1.err"; }
        t_wait_for "$T_IDLE" _listening "$1" || t_fail "uevent-listen did not start"
}
# seqnum_of NAME UUID: the SEQNUM the kernel sent the event UUID with, once listen NAME saw it.
seqnum_of() {
        _seen() { grep -q " $2" "$T_DIR/$1.out"; }
        t_wait_for "$T_IDLE" _seen "$1" "$2" || t_fail "the kernel's event $2 was not seen on group 1"
        awk -v u="$2" '$4 == u { print $3 }' "$T_DIR/$1.out"
}

# ---- 0. auto, a stale control socket (udevd killed): not a udevd ------------
# A socket file nobody listens on, as a udevd killed by SIGKILL leaves it: refuses connections.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])' \
        /run/udev/control || t_fail "cannot make a stale /run/udev/control"
t_start_daemon --agent "$T_DIR/agent" --after-udev-timeout=1
grep -q "after-udev: udevd is not running (/run/udev/control missing or refusing connections)" "$T_LOG" ||
        t_fail "auto with a stale /run/udev/control: no line saying udevd does not run: $(grep after-udev "$T_LOG")"
"$HOTPLUGCTL" status | grep -q "auto, udevd not running" || t_fail "status: $("$HOTPLUGCTL" status | grep -i udev)"
send 3 0
wait_runs "stale control socket"
# Taken for a running udevd, each event would have waited for a broadcast and gone on with a warning.
! grep -q "without udevd's broadcast" "$T_LOG" || t_fail "with a stale control socket events waited for udevd: $(
        grep -m1 "without udevd's broadcast" "$T_LOG")"
t_stop_daemon
rm /run/udev/control
echo "ok: a stale /run/udev/control is not a running udevd: 3 of 3 agents without waiting"

# ---- 1. auto, udevd not running at start, then started: noticed ------------
t_start_daemon --agent "$T_DIR/agent"
grep -q "after-udev: udevd is not running" "$T_LOG" || t_fail "auto without /run/udev/control: no line saying udevd does not run"
send 1 300
wait_runs "without udevd"
[ "$BEFORE" = 1 ] || t_fail "without udevd an agent waited for it"
udevd_start
_noticed() { grep -q "after-udev: udevd broadcasts; agents start after" "$T_LOG"; }
# hotplugd looks for udevd's control socket at an event, at most once a second (HP_UDEV_PROBE_USEC):
# events, a fifth of a second apart, until one made it listen and udevd's broadcast of it came.
for ((i = 0; i < 50; i++)); do
        send 1 0
        wait_runs "udevd started"
        _noticed && break
        sleep 0.2
done
_noticed || t_fail "a udevd started after hotplugd was not noticed (50 events over 10 s)"
grep -q "after-udev: udevd's control socket /run/udev/control appeared" "$T_LOG" || t_fail "no line for the control socket"
# The events until then ran before their broadcast was heard; the next ones wait.
send 5 300
wait_runs "udevd started, then 5 events"
[ "$AFTER" = 5 ] || t_fail "after udevd started: $BEFORE of 5 agents ran before udevd finished their event"
t_stop_daemon
echo "ok: auto noticed udevd starting; then 5 of 5 agents after udevd's RUN"

# ---- 2. auto with udevd running: every agent after udevd's RUN -------------
t_start_daemon --agent "$T_DIR/agent"
grep -q "after-udev: agents start after udevd's broadcast" "$T_LOG" || t_fail "auto with /run/udev/control: not waiting"
send 10 300
wait_runs "auto"
[ "$AFTER" = 10 ] || t_fail "after-udev=auto: $BEFORE of 10 agents ran before udevd finished their event"
status=$("$HOTPLUGCTL" status) || t_fail "status failed"
echo "$status" | grep -q "^udevd: *after-udev on; [0-9]* events waited" || t_fail "status lacks the udevd line: $status"
waited=$(echo "$status" | sed -n 's/^udevd: *after-udev on; \([0-9]*\) events waited.*/\1/p')
[ "$waited" -ge 10 ] || t_fail "status counts $waited events that waited, expected at least 10"
t_stop_daemon
echo "ok: after-udev=auto: 10 of 10 agents after udevd's RUN ($waited waited)"

# ---- 3. no: the race is back ------------------------------------------------
t_start_daemon --agent "$T_DIR/agent" --after-udev=no
send 10 300
wait_runs "no"
[ "$BEFORE" -ge 1 ] || t_fail "after-udev=no: every agent ran after udevd's 0.3 s RUN, the test shows no race"
t_stop_daemon
echo "ok: after-udev=no: $BEFORE of 10 agents ran before udevd finished their event"

# ---- 4. forged broadcasts release nothing -------------------------------------
t_start_daemon --agent "$T_DIR/agent" --after-udev=yes
listen forged
send 1 5000
u=${SENT[0]}
seqnum=$(seqnum_of forged "$u") && [ -n "$seqnum" ] || t_fail "no SEQNUM for the event $u"
# Not root: the kernel refuses a multicast on the uevent family (and libudev drops non-root senders).
setpriv --reuid=65534 --regid=65534 --clear-groups "$UDEV_FORGE" "$seqnum" change /devices/virtual/net/lo net 2>/dev/null
# Root, but not the kernel's event: another DEVPATH, another ACTION.
"$UDEV_FORGE" "$seqnum" change /devices/virtual/net/hpforged net || t_fail "udev-forge could not send as root"
"$UDEV_FORGE" "$seqnum" add /devices/virtual/net/lo net || t_fail "udev-forge could not send as root"
_mismatched() { "$HOTPLUGCTL" status | grep -q "; 2 broadcasts not matching the kernel's event ignored"; }
t_wait_for "$T_IDLE" _mismatched || t_fail "the two forged broadcasts were not counted: $("$HOTPLUGCTL" status | grep udevd)"
[ ! -e "$T_DIR/runs/$u" ] || t_fail "a forged broadcast released the event (udevd's RUN takes 5 s)"
# settle and wait say what the held event waits for.
out=$("$HOTPLUGCTL" settle --timeout 0.3 2>&1) && t_fail "settle succeeded while an event waited for udevd"
echo "$out" | grep -q "(1 event(s) waiting for udevd's broadcast)" || t_fail "settle did not say the wait is udevd's: $out"
out=$("$HOTPLUGCTL" wait --timeout 0.3 /sys/class/net/lo 2>&1) && t_fail "wait succeeded while an event of lo waited"
echo "$out" | grep -q "waiting for udevd's broadcast" || t_fail "wait did not say the wait is udevd's: $out"
wait_runs "forged"
[ "$AFTER" = 1 ] || t_fail "the event held past forged broadcasts ran before udevd finished it"
grep -q "names SEQNUM=$seqnum with another DEVPATH or ACTION" "$T_LOG" || t_fail "no log line for the forged broadcast"
t_stop_daemon
echo "ok: forged broadcasts (non-root, wrong DEVPATH, wrong ACTION) released nothing; the agent ran after udevd"

# ---- 5. udevd stops: bounded, noticed, and noticed again when it goes on ----
t_start_daemon --agent "$T_DIR/agent" --after-udev=yes --after-udev-timeout=2
kill -STOP "$UPID"
send 5 0
wait_runs "udevd stopped"
grep -q "its agents start without udevd's broadcast of it, [0-9]* s after its arrival: udevd broadcast nothing for as long" \
        "$T_LOG" || t_fail "no warning for the event udevd did not broadcast"
grep -q "agents no longer wait for udevd until it broadcasts again" "$T_LOG" || t_fail "udevd's silence not logged"
"$HOTPLUGCTL" status | grep -q "^udevd: *after-udev on, udevd silent;" || t_fail "status does not say udevd is silent"
kill -CONT "$UPID"
t_wait_for "$T_IDLE" _noticed || t_fail "udevd going on was not noticed"
send 3 300
wait_runs "udevd continued"
[ "$AFTER" = 3 ] || t_fail "after udevd went on: $BEFORE of 3 agents ran before udevd finished their event"
t_stop_daemon
echo "ok: a stopped udevd held an event for the 2 s bound only, then was noticed silent; going on, noticed again"

# ---- 6. a busy udevd is not a silent one ---------------------------------------
# udevd works through lo's events one after another, 1.2 s each: the third is broadcast ~3.6 s after it
# arrived, past the 2 s bound, but udevd broadcast the others meanwhile: every agent waits for its own.
t_start_daemon --agent "$T_DIR/agent" --after-udev=yes --after-udev-timeout=2
send 3 1200
wait_runs "udevd busy"
[ "$AFTER" = 3 ] || t_fail "a busy udevd: $BEFORE of 3 agents ran before udevd finished their event"
grep -q "without udevd's broadcast" "$T_LOG" && t_fail "a busy udevd was taken for a silent one"
t_stop_daemon
echo "ok: udevd busy for longer than the bound: 3 of 3 agents after their own broadcast, none timed out"

# ---- 7. a device udevd renames ---------------------------------------------------
# udevd renames a network interface while it works on its add, and broadcasts the add under the new
# DEVPATH (INTERFACE_OLD says the old name): still the kernel's event, paired by its SEQNUM.
echo "ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"hpa$$\", NAME=\"hpr$$\"" >"$T_DIR/rules/40-rename.rules"
udevadm control --reload
t_start_daemon --agent "$T_DIR/agent" --after-udev=yes --after-udev-timeout=5 --log-level=debug
ip link add "hpa$$" type veth peer name "hpb$$" || t_fail "cannot create veth hpa$$"
t_on_exit "ip link del hpb$$"
_renamed() { [ -e "/sys/class/net/hpr$$" ]; }
t_wait_for "$T_IDLE" _renamed || t_fail "udevd did not rename hpa$$"
_waited_rename() { grep -q "SEQNUM=[0-9]* ACTION=add DEVPATH=/devices/virtual/net/hpa$$ SUBSYSTEM=net waited" "$T_LOG"; }
t_wait_for "$T_IDLE" _waited_rename || t_fail "the add of hpa$$ did not wait for udevd: $(grep "hpa$$" "$T_LOG")"
grep "hpa$$" "$T_LOG" | grep -q "without udevd's broadcast" && t_fail "the renamed device's broadcast was not paired"
"$HOTPLUGCTL" status | grep -q "broadcasts not matching" && t_fail "the renamed device's broadcast was taken for a forgery"
t_stop_daemon
echo "ok: an interface udevd renamed (hpa$$ to hpr$$): its add waited for udevd's broadcast under the new name"

# ---- 8. udevd broadcast a later event of the device, not this one ---------------------
# (A worker udevd killed, or failed: its event is never broadcast.)  Forged here, udevd stopped: a
# broadcast of the kernel's second event of lo, paired with it, lets the first one go at once.
kill -STOP "$UPID"
t_start_daemon --agent "$T_DIR/agent" --after-udev=yes --after-udev-timeout=30
listen passed
send 2 0
second=$(seqnum_of passed "${SENT[1]}") && [ -n "$second" ] || t_fail "no SEQNUM for the second event"
_one_waits() { "$HOTPLUGCTL" status | grep -q ", 1 waiting now,"; }
t_wait_for "$T_IDLE" _one_waits || t_fail "the first event does not wait for udevd: $("$HOTPLUGCTL" status | grep udevd)"
"$UDEV_FORGE" "$second" change /devices/virtual/net/lo net || t_fail "udev-forge could not send as root"
wait_runs "a later broadcast of the device"
grep -q "udevd broadcast a later event of the device, not this one" "$T_LOG" ||
        t_fail "the first event did not go on when the second's broadcast came"
grep -q "broadcast nothing for as long" "$T_LOG" && t_fail "the first event waited for the bound"
kill -CONT "$UPID"
t_stop_daemon
echo "ok: the broadcast of a later event of the device let the earlier one go at once"

# ---- 9. never longer than HP_AFTER_UDEV_BOUND_FACTOR (6) timeouts ------------------------
# udevd (stopped) never broadcasts this event, while broadcasts of others keep coming (forged, of
# SEQNUMs to come): the event waits past its 1 s bound while udevd looks busy, but not past 6 s.
kill -STOP "$UPID"
t_start_daemon --agent "$T_DIR/agent" --after-udev=yes --after-udev-timeout=1
send 1 0
for ((i = 1; i <= 100; i++)); do
        [ -f "$T_DIR/runs/${SENT[0]}" ] && break
        "$UDEV_FORGE" $((1000000000000 + i)) change /devices/virtual/net/hpbusy$$ net || t_fail "udev-forge failed"
        sleep 0.2
done
[ -f "$T_DIR/runs/${SENT[0]}" ] || t_fail "an event udevd never broadcast waited on while others were broadcast (20 s)"
grep -q "udevd kept broadcasting others, not this one" "$T_LOG" || t_fail "the hard bound was not logged"
grep -q "broadcast nothing for as long" "$T_LOG" && t_fail "udevd was taken for silent while it broadcast"
kill -CONT "$UPID"
t_stop_daemon
echo "ok: an event udevd never broadcast went on at 6 timeouts while udevd kept broadcasting others"
