#!/bin/bash
# hotplugd booting with a real systemd: Debian's systemd booted in a
# container (systemd-nspawn, sharing the host's network namespace, so it
# sees the host's uevents, with /sys writable as on a real machine), into
# which the build was installed with `meson install --destdir` and its units
# enabled with `systemctl enable hotplugd.service` before the boot.  No
# agent is configured: Debian has no /sbin/hotplug, so the default, the
# hotplug.d multiplexer over the installed SYSCONFDIR/hotplug.d, runs the one
# script the test puts there, a recording agent.
#
# Shows:
#  boot. hotplugd.service and hotplugd-coldplug.service were active before
#     sysinit.target (systemd's own timestamps and ordering), started by the
#     boot, not by hand;
#  coldplug. the agent ran with ACTION=add for every device the container
#     sees (every directory below /sys/devices with a uevent file and a
#     subsystem link);
#  coldplug timeout. HOTPLUGD_COLDPLUG_TIMEOUT=2 in a drop-in fails the
#     coldplug of a paused hotplugd after 2 s, not the default 120 s;
#  control. hotplugctl status answers while hotplugd.service is stopped
#     (the control socket starts it; it has received no event) and
#     hotplugctl settle exits 0;
#  a. a uevent triggered on the host socket-activates the stopped service
#     and its agent runs;
#  b. READY=1 reaches systemd (active), with the time from the start of the
#     main process to READY; STATUS= and the watchdog are seen by systemd;
#  c. systemctl restart, several times during a 10,000-event burst of real
#     uevents, loses none of them (distinct SYNTH_UUIDs run = COUNT; events
#     run twice because a restart killed their agent are reported); and so
#     do 20 crashes (SIGKILL to hotplugd at random moments, restarted by
#     systemd) during another burst of the same size: every event runs at
#     least once, and each one that runs twice was counted as a re-run;
#  f. a handover journal in the fd store that hotplugd cannot read (damaged
#     through hotplugd's own descriptor, then hotplugd killed) is replaced
#     there by the new one the next instance starts: the instance after it
#     takes that one over, and an event queued behind a slow agent when
#     hotplugd is killed again runs after the restart;
#  d. systemctl stop is clean: exit status 0, the running agent finished,
#     nothing left running;
#  e. journalctl SEQNUM=N finds the event's lines with their fields;
#  j. with systemd-journald stopped (SIGSTOP) for 20 s or more during a
#     5,000-event burst at debug level, every agent runs while it is
#     stopped, none is lost, and hotplugd's count of the log lines the
#     journal did not take is in status and, once it goes on, the journal;
#  shutdown. powering the container off stops hotplugd as a unit: its
#     "stopped:" summary and systemd's "Deactivated successfully" are in the
#     (persistent) journal, nothing was killed, and nspawn exits 0.
#
# The rootfs is built once with debootstrap and cached under
# /var/cache/hotplugd-test/; the container runs on an overlay of it (upper
# layer on a tmpfs of the test's own), so the cache stays clean.  Everything
# (container, mounts, cgroup, temporary files) is removed on exit, also on
# failure.
#
# Environment: HOTPLUGD, HOTPLUGCTL, AGENT_DUMP, UEVENT_BURST (built
# binaries), BUILD_ROOT (the build directory, installed from), SBINDIR,
# BINDIR, HOTPLUG_D (configured paths).  HOTPLUGD_NSPAWN_COUNT overrides the
# burst size (default 10000, 2000 when HOTPLUGD_SANITIZED=1: an instrumented
# daemon is several times slower); HOTPLUGD_NSPAWN_JOURNAL_COUNT the
# size of (j)'s burst (default 5000); HOTPLUGD_NSPAWN_UNTIL=j stops after
# (j); HOTPLUGD_NSPAWN_KEEP=DIR keeps a copy of the work directory (agent
# runs, the journal of a failed run) in DIR.
set -u

if [ "${HOTPLUGD_SANITIZED:-0}" = 1 ]; then
        COUNT=${HOTPLUGD_NSPAWN_COUNT:-2000}
else
        COUNT=${HOTPLUGD_NSPAWN_COUNT:-10000}
fi
RESTARTS=4
CRASHES=20
# Waits follow progress: they fail only when nothing moved for this long.
IDLE=${HOTPLUGD_NSPAWN_IDLE:-60}
UNTIL_POLL=0.5 # the bursts' checks read thousands of run files: not too often
. "$(dirname "${BASH_SOURCE[0]}")/../lib/until.sh"
CACHE=/var/cache/hotplugd-test
ROOTFS_KEY=debian-bookworm-minbase-systemd-1
NAME=hotplugd-test-$$
SHARE_IN=/var/lib/hotplugd-test   # the shared directory, inside the container
T_START=$(date +%s)

T=
ROOT=            # the container's root: an overlay of the cached rootfs
MOUNTS=()        # mounted by the test, unmounted in reverse on exit
NSPAWN_PID=
INIT_PID=
CGROUPS=()

log() {
        echo "$(date +%T.%3N) $*"
}

fail() {
        echo "FAIL: $*" >&2
        if [ -n "$INIT_PID" ] && [ -d "/proc/$INIT_PID" ]; then
                in_ct journalctl --no-pager -u 'hotplugd*' >"$T/journal.txt" 2>&1
                echo "---- hotplugd journal in the container: not agent lines (last 60) ----" >&2
                grep -v "agent-dump: recorded\|/agent [a-z0-9_]* finished\|\.hotplug [a-z0-9_]* finished" \
                        "$T/journal.txt" | tail -n 60 >&2
        fi
        if [ -n "$T" ] && [ -f "$T/nspawn.log" ]; then
                echo "---- systemd-nspawn output (last 20 lines) ----" >&2
                tail -n 20 "$T/nspawn.log" >&2
        fi
        exit 1
}

skip_or_fail() {
        if [ "${HOTPLUGD_TEST_REQUIRE_ROOT:-0}" = 1 ]; then
                fail "$* (this run requires the root tests; .ci/deps installs what they need)"
        fi
        echo "SKIP: $*"
        exit 77
}

# ---- cleanup ----------------------------------------------------------------

kill_cgroup() {
        local cg=$1 d pid
        [ -d "$cg" ] || return 0
        if [ -f "$cg/cgroup.kill" ]; then
                echo 1 >"$cg/cgroup.kill" 2>/dev/null
        fi
        while read -r d; do
                while read -r pid; do
                        kill -KILL "$pid" 2>/dev/null
                done <"$d/cgroup.procs"
        done < <(find "$cg" -type d 2>/dev/null)
}

remove_cgroup() {
        local cg=$1 i
        [ -d "$cg" ] || return 0
        for ((i = 0; i < 50; i++)); do
                find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
                [ -d "$cg" ] || return 0
                kill_cgroup "$cg"
                sleep 0.1
        done
        echo "warning: cannot remove cgroup $cg" >&2
}

cleanup() {
        local i cg
        [ -n "${JOURNALD_STOPPED:-}" ] && kill -CONT "$JOURNALD_STOPPED" 2>/dev/null
        if [ -n "$NSPAWN_PID" ] && kill -0 "$NSPAWN_PID" 2>/dev/null; then
                # SIGTERM: nspawn asks the container's systemd to power off.
                kill -TERM "$NSPAWN_PID" 2>/dev/null
                for ((i = 0; i < 150; i++)); do
                        kill -0 "$NSPAWN_PID" 2>/dev/null || break
                        sleep 0.1
                done
                kill -KILL "$NSPAWN_PID" 2>/dev/null
                wait "$NSPAWN_PID" 2>/dev/null
        fi
        for cg in "${CGROUPS[@]}"; do
                kill_cgroup "$cg"
        done
        for cg in "${CGROUPS[@]}"; do
                remove_cgroup "$cg"
        done
        rm -rf "/run/systemd/nspawn/propagate/$NAME" 2>/dev/null
        # The work directory, less the container's root (the overlay and its tmpfs).
        if [ -n "${HOTPLUGD_NSPAWN_KEEP:-}" ] && [ -n "$T" ] && mkdir -p "$HOTPLUGD_NSPAWN_KEEP"; then
                find "$T" -mindepth 1 -maxdepth 1 ! -name root ! -name ovl -exec cp -a {} "$HOTPLUGD_NSPAWN_KEEP/" \;
        fi
        for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
                umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null ||
                        echo "warning: cannot unmount ${MOUNTS[i]}" >&2
        done
        [ -n "$T" ] && rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- preconditions ------------------------------------------------------------

if [ "$(id -u)" != 0 ]; then
        echo "SKIP: needs root (a container and real uevents)"
        exit 77
fi
for tool in systemd-nspawn debootstrap nsenter flock; do
        command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed"
done
for tool in meson systemctl ldconfig; do
        command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed"
done
for v in HOTPLUGD HOTPLUGCTL AGENT_DUMP UEVENT_BURST BUILD_ROOT SBINDIR BINDIR HOTPLUG_D; do
        [ -n "${!v:-}" ] || fail "$v is not set"
done
[ -w /sys/class/net/lo/uevent ] || skip_or_fail "/sys/class/net/lo/uevent is not writable"

T=$(mktemp -d /tmp/hotplugd-nspawn.XXXXXX)
chmod 755 "$T"

# ---- the rootfs, built once ------------------------------------------------------

ROOTFS=$CACHE/$ROOTFS_KEY
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
if [ ! -f "$ROOTFS/.complete" ]; then
        log "building the container rootfs in $ROOTFS (debootstrap, once)"
        rm -rf "$ROOTFS" "$ROOTFS.tmp"
        if ! debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$ROOTFS.tmp" \
                >"$T/debootstrap.log" 2>&1; then
                tail -n 20 "$T/debootstrap.log" >&2
                rm -rf "$ROOTFS.tmp"
                fail "debootstrap failed"
        fi
        touch "$ROOTFS.tmp/.complete"
        mv "$ROOTFS.tmp" "$ROOTFS"
fi
flock -u 9
exec 9>&-

# ---- the installed system ------------------------------------------------------------
# $ROOT: an overlay of the cached rootfs, its upper layer on a tmpfs of our
# own.  The build goes in as a package would put it (meson install
# --destdir), the units are enabled with systemctl --root, all before the
# boot.  $T/share is bound to $SHARE_IN: the recording agent and its runs.

mkdir -p "$T/ovl" "$T/root"
mount -t tmpfs -o mode=0755 hotplugd-test "$T/ovl" || fail "cannot mount a tmpfs on $T/ovl"
MOUNTS+=("$T/ovl")
mkdir -p "$T/ovl/upper" "$T/ovl/work"
mount -t overlay hotplugd-test -o "lowerdir=$ROOTFS,upperdir=$T/ovl/upper,workdir=$T/ovl/work" "$T/root" ||
        fail "cannot mount an overlay of $ROOTFS"
MOUNTS+=("$T/root")
ROOT=$T/root

meson install -C "$BUILD_ROOT" --no-rebuild --quiet --destdir "$ROOT" >"$T/install.log" 2>&1 ||
        { cat "$T/install.log" >&2; fail "meson install --destdir failed"; }
[ -x "$ROOT$SBINDIR/hotplugd" ] && [ -x "$ROOT$BINDIR/hotplugctl" ] || fail "meson install put no binaries in $ROOT"
[ -d "$ROOT$HOTPLUG_D" ] || fail "meson install did not create $HOTPLUG_D"
# Libraries the rootfs lacks (libmnl; the sanitizer runtimes of an ASan
# build), where its loader finds them after ldconfig.
mkdir -p "$ROOT/usr/local/lib/hotplugd-test"
for lib in $(ldd "$ROOT$SBINDIR/hotplugd" "$ROOT$BINDIR/hotplugctl" "$AGENT_DUMP" | awk '$3 ~ /^\// {print $3}' | sort -u); do
        [ -e "$ROOT$lib" ] || [ -e "$ROOT/usr$lib" ] || cp -L "$lib" "$ROOT/usr/local/lib/hotplugd-test/"
done
echo /usr/local/lib/hotplugd-test >"$ROOT/etc/ld.so.conf.d/hotplugd-test.conf"
ldconfig -r "$ROOT" || fail "ldconfig -r $ROOT failed"

S=$T/share
mkdir -p "$S/runs"
cp "$AGENT_DUMP" "$S/agent"
echo 0 >"$S/sleep_ms"
# The default agent: not /sbin/hotplug (Debian has none), so the hotplug.d
# multiplexer; its one script is the recording agent (a symbolic link, which
# the multiplexer follows to a root-owned target).
[ -e "$ROOT/sbin/hotplug" ] && fail "the rootfs has a /sbin/hotplug: the default agent cannot be shown"
mkdir -p "$ROOT$HOTPLUG_D/default"
AGENT=$HOTPLUG_D/default/50-record.hotplug   # as the container sees it
ln -s "$SHARE_IN/agent" "$ROOT$AGENT"
# The configuration file the built daemon reads: every event, nothing else.
CONF=$("$HOTPLUGD" --help | sed -n 's/.*--config=FILE.*(default \(.*\)).*/\1/p')
[ -n "$CONF" ] || fail "--help does not name the default configuration file"
mkdir -p "$(dirname "$ROOT$CONF")"
# log-level debug: a successful run's line (with AGENT_STATUS=, which (e)
# looks up with journalctl SEQNUM=) is a debug line.
printf '# hotplugd under test: every event, the default agent\nall = yes\nlog-level = debug\n' >"$ROOT$CONF"
mkdir -p "$ROOT/etc/systemd/system/hotplugd.service.d"
cat >"$ROOT/etc/systemd/system/hotplugd.service.d/test.conf" <<EOF
[Unit]
# The test restarts the service more often than the default start limit allows.
StartLimitIntervalSec=0
[Service]
# Short, to see keep-alives arrive within the test.
WatchdogSec=4s
EOF
# (j) keeps systemd-journald stopped longer than its watchdog may allow.
mkdir -p "$ROOT/etc/systemd/system/systemd-journald.service.d"
printf '[Service]\nWatchdogSec=0\n' >"$ROOT/etc/systemd/system/systemd-journald.service.d/test.conf"
systemctl --root="$ROOT" enable hotplugd.service >"$T/enable.log" 2>&1 ||
        { cat "$T/enable.log" >&2; fail "systemctl --root enable hotplugd.service failed"; }
log "installed; systemctl enable hotplugd.service made $(grep -c "Created symlink" "$T/enable.log") link(s):"
sed 's/^/    /' "$T/enable.log"
# A persistent journal, read after the container powered off.
mkdir -p "$ROOT/var/log/journal"

# ---- the container -----------------------------------------------------------------

# A cgroup of our own for nspawn (it creates its payload and supervisor
# groups below the one it is started in).
new_cgroup() {
        mkdir "$1" || fail "cannot create cgroup $1"
        CGROUPS+=("$1")
}
SCOPE=()
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null; then
        SCOPE=(systemd-run --scope --quiet --unit="$NAME" --)
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        new_cgroup "/sys/fs/cgroup/$NAME"
elif [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/systemd ]; then
        new_cgroup "/sys/fs/cgroup/unified/$NAME"
        new_cgroup "/sys/fs/cgroup/systemd/$NAME"
else
        skip_or_fail "no cgroup v2 (or hybrid) hierarchy to run the container in"
fi

log "booting the container $NAME"
(
        for cg in "${CGROUPS[@]}"; do
                echo "$BASHPID" >"$cg/cgroup.procs" || exit 125
        done
        # /sys writable, as on a real machine (coldplug writes uevent files).
        export SYSTEMD_NSPAWN_API_VFS_WRITABLE=1
        exec "${SCOPE[@]}" systemd-nspawn -q -D "$ROOT" -M "$NAME" --register=no --keep-unit \
                --link-journal=no --console=read-only \
                --capability=CAP_NET_ADMIN --bind="$S:$SHARE_IN" -b
) >"$T/nspawn.log" 2>&1 </dev/null &
NSPAWN_PID=$!

# wait_until WHAT SIGNATURE CMD...: until CMD succeeds; fails only when the
# output of SIGNATURE (a function saying how far things got) stayed the same
# for $IDLE s.  CMD is tried every $UNTIL_POLL s.
wait_until() {
        local what=$1 signature=$2
        shift 2
        until_progress "$IDLE" "$signature" "$@" || fail "$what: nothing moved for $IDLE s ($("$signature"))"
}

# The container's init: the child of nspawn in another PID namespace, once
# it runs systemd (a child that is gone, or not yet exec'd, does not count).
my_pidns=$(readlink /proc/self/ns/pid)
init_found() {
        local p ns
        kill -0 "$NSPAWN_PID" 2>/dev/null || fail "systemd-nspawn exited"
        for p in $(pgrep -P "$NSPAWN_PID"); do
                ns=$(readlink "/proc/$p/ns/pid" 2>/dev/null)
                if [ -n "$ns" ] && [ "$ns" != "$my_pidns" ] && [ "$(cat "/proc/$p/comm" 2>/dev/null)" = systemd ]; then
                        INIT_PID=$p
                        return 0
                fi
        done
        return 1
}
nspawn_progress() {
        echo "console $(stat -c %s "$T/nspawn.log" 2>/dev/null) bytes, children $(pgrep -P "$NSPAWN_PID" | tr '\n' ' ')"
}
UNTIL_POLL=0.05 wait_until "the container's init" nspawn_progress init_found

in_ct() {
        nsenter -t "$INIT_PID" -a -- "$@"
}

# pgrep limited to this container's processes (another container may run
# the same paths at the same time).
ct_pgrep() {
        pgrep --ns "$INIT_PID" --nslist pid "$@"
}

# Booting: as long as the console shows progress (a loaded machine may
# take a while), until systemd says it is up.
state=
system_up() {
        kill -0 "$NSPAWN_PID" 2>/dev/null || fail "systemd-nspawn exited while the container booted"
        state=$(in_ct systemctl is-system-running 2>/dev/null)
        case $state in running | degraded) return 0 ;; esac
        return 1
}
boot_progress() {
        echo "system '$state', console $(stat -c %s "$T/nspawn.log" 2>/dev/null) bytes"
}
wait_until "the container's boot" boot_progress system_up
log "container up (system $state), init pid $INIT_PID"

unit_show() { # unit_show UNIT PROPERTY
        in_ct systemctl show "$1" -p "$2" --value
}

svc_show() {
        unit_show hotplugd.service "$1"
}

# Runs with SYNTH_UUID $1 (a full UUID or a prefix).
runs_of() {
        grep -rl "^env:SYNTH_UUID=$1" "$S/runs" 2>/dev/null | grep -v '\.tmp$'
}

# Distinct events with SYNTH_UUID prefix $1 that ran at least once.
distinct_of() {
        grep -rh "^env:SYNTH_UUID=$1" "$S/runs" 2>/dev/null | sort -u | wc -l
}

# How far the agents and the service got: runs (files and bytes), main PID.
runs_progress() {
        echo "$(find "$S/runs" -type f -printf '%s\n' 2>/dev/null | awk '{n++; b += $1} END {print n, b}') $(svc_show MainPID)"
}

# wait_progress WHAT CMD...: until CMD succeeds, while the runs move.
wait_progress() {
        local what=$1
        shift
        wait_until "$what" runs_progress "$@"
}

# At least COUNT distinct events with SYNTH_UUID prefix PREFIX ran.
all_ran() { # all_ran PREFIX COUNT
        [ "$(distinct_of "$1")" -ge "$2" ]
}

# ---- boot. hotplugd and its coldplug before sysinit.target ----------------------------------

for u in hotplugd.socket hotplugd-control.socket hotplugd.service hotplugd-coldplug.service; do
        [ "$(in_ct systemctl is-enabled "$u")" = enabled ] || fail "$u is not enabled"
done
# systemd's own timestamps (CLOCK_MONOTONIC, us), relative to its start.
userspace=$(in_ct systemctl show -p UserspaceTimestampMonotonic --value)
sysinit=$(unit_show sysinit.target ActiveEnterTimestampMonotonic)
hp_start=$(unit_show hotplugd.service ExecMainStartTimestampMonotonic)
hp_active=$(unit_show hotplugd.service ActiveEnterTimestampMonotonic)
cp_start=$(unit_show hotplugd-coldplug.service InactiveExitTimestampMonotonic)
cp_done=$(unit_show hotplugd-coldplug.service ActiveEnterTimestampMonotonic)
ms() { echo "$((($1 - userspace) / 1000)) ms"; }
[ "${sysinit:-0}" -gt 0 ] || fail "sysinit.target was never reached"
[ "${hp_active:-0}" -gt 0 ] && [ "$hp_active" -le "$sysinit" ] ||
        fail "hotplugd.service active at $hp_active us, sysinit.target reached at $sysinit us"
[ "${cp_done:-0}" -gt 0 ] && [ "$cp_start" -ge "$hp_active" ] && [ "$cp_done" -le "$sysinit" ] ||
        fail "coldplug ran from $cp_start to $cp_done us; hotplugd active at $hp_active, sysinit.target at $sysinit"
[ "$(unit_show hotplugd-coldplug.service Result)" = success ] ||
        fail "hotplugd-coldplug.service: result $(unit_show hotplugd-coldplug.service Result)"
# The ordering that made it so, as systemd loaded it.
grep -qw sysinit.target <<<"$(unit_show hotplugd.service Before)" || fail "hotplugd.service is not Before=sysinit.target"
grep -qw hotplugd.service <<<"$(unit_show hotplugd-coldplug.service After)" ||
        fail "hotplugd-coldplug.service is not After=hotplugd.service"
[ "$(unit_show hotplugd.service NRestarts)" = 0 ] || fail "hotplugd.service restarted during the boot"
echo "ok (boot): hotplugd.service started at $(ms "$hp_start") and was active at $(ms "$hp_active");" \
        "coldplug ran from $(ms "$cp_start") to $(ms "$cp_done"); sysinit.target reached at $(ms "$sysinit")"

# ---- coldplug. the agent ran for every device ------------------------------------------------
# Every device the container sees: a directory below /sys/devices with a
# uevent file and a subsystem link (without one the kernel sends no event).
in_ct sh -c 'find /sys/devices -name uevent -type f -printf "%h\n" | while read -r d; do
        [ -L "$d/subsystem" ] && printf "%s\n" "${d#/sys}"; done' | sort -u >"$T/devices"
ndev=$(wc -l <"$T/devices")
[ "$ndev" -gt 0 ] || fail "the container sees no device"
# DEVPATHs of the agent runs for ACTION=add; those from the coldplug carry a SYNTH_UUID.
grep -rlx "env:ACTION=add" "$S/runs" 2>/dev/null >"$T/add-runs"
xargs -r grep -h "^env:DEVPATH=" <"$T/add-runs" | sed 's/^env:DEVPATH=//' | sort -u >"$T/added"
ncold=$(xargs -r grep -l "^env:SYNTH_UUID=" <"$T/add-runs" | wc -l)
comm -23 "$T/devices" "$T/added" >"$T/not-added"
if [ -s "$T/not-added" ]; then
        head -n 20 "$T/not-added" >&2
        fail "$(wc -l <"$T/not-added") of $ndev devices had no agent run for ACTION=add (first ones above)"
fi
echo "ok (coldplug): the agent ran with ACTION=add for all $ndev devices the container sees" \
        "($ncold runs from the coldplug's writes, $(wc -l <"$T/add-runs") add runs in all)"
in_ct journalctl --no-pager -o cat -u hotplugd-coldplug.service | sed 's/^/    /' | tail -n 5

# ---- coldplug timeout. the unit's bound is a setting ----------------------------------------------
# With hotplugd paused, a coldplug cannot finish: a drop-in's HOTPLUGD_COLDPLUG_TIMEOUT=2 makes the
# unit fail after 2 s (hotplugctl's --timeout) instead of waiting the default 120 s.  Every device's
# add ran already, so the unit's trigger (--skip-handled) writes nothing: a change of one device,
# queued while paused, is what its settle waits for.
dropin=/run/systemd/system/hotplugd-coldplug.service.d
in_ct mkdir -p "$dropin" && printf '[Service]\nEnvironment=HOTPLUGD_COLDPLUG_TIMEOUT=2\n' >"$T/timeout.conf" &&
        in_ct sh -c "cat >$dropin/timeout.conf" <"$T/timeout.conf" && in_ct systemctl daemon-reload ||
        fail "cannot install the coldplug timeout drop-in"
in_ct "$BINDIR/hotplugctl" pause >/dev/null || fail "hotplugctl pause failed"
in_ct sh -c "echo change >/sys$(head -n 1 "$T/devices")/uevent" || fail "cannot write the uevent file of $(head -n 1 "$T/devices")"
t0=$(date +%s)
if in_ct systemctl restart hotplugd-coldplug.service; then
        fail "the coldplug succeeded with hotplugd paused"
fi
took=$(($(date +%s) - t0))
# Not a speed check: without the setting the unit waits its default bound of 120 s.
[ "$took" -lt 100 ] || fail "the coldplug failed after $took s: the drop-in's 2 s bound was not applied"
in_ct "$BINDIR/hotplugctl" resume >/dev/null || fail "hotplugctl resume failed"
in_ct journalctl --no-pager -o cat -u hotplugd-coldplug.service >"$T/coldplug-timeout.txt"
grep -q -e "timed out, .* events not processed" -e "timed out waiting for SEQNUM" "$T/coldplug-timeout.txt" ||
        fail "the coldplug with HOTPLUGD_COLDPLUG_TIMEOUT=2 did not time out: $(tail -n 5 "$T/coldplug-timeout.txt")"
grep -m1 "timed out" "$T/coldplug-timeout.txt" | sed 's/^/    /'
in_ct rm -r "$dropin" && in_ct systemctl daemon-reload || fail "cannot remove the drop-in"
in_ct systemctl reset-failed hotplugd-coldplug.service
in_ct "$BINDIR/hotplugctl" settle >/dev/null || fail "hotplugctl settle after the timed-out coldplug failed"
echo "ok (coldplug timeout): HOTPLUGD_COLDPLUG_TIMEOUT=2 in a drop-in failed the coldplug of a paused hotplugd" \
        "after $took s"

# ---- control. hotplugctl before any event, and settle -------------------------------------------

in_ct systemctl stop hotplugd.service || fail "cannot stop hotplugd.service"
[ "$(in_ct systemctl is-active hotplugd.service)" = inactive ] || fail "hotplugd.service did not stop"
out=$(in_ct "$BINDIR/hotplugctl" status) || fail "hotplugctl status failed while hotplugd.service was stopped: $out"
[ "$(in_ct systemctl is-active hotplugd.service)" = active ] || fail "hotplugctl status did not start hotplugd.service"
events=$(grep "^Events:" <<<"$out")
case $events in
*" 0 received,"*) echo "ok (control): with hotplugd.service stopped, hotplugctl status started it through" \
        "hotplugd-control.socket and was answered before any event: $events" ;;
*) echo "note (control): a host uevent came first: $events" ;;
esac
in_ct "$BINDIR/hotplugctl" settle || fail "hotplugctl settle exited $?"
echo "ok (control): hotplugctl settle exits 0"

# ---- a. socket activation by the first uevent --------------------------------------------

in_ct systemctl stop hotplugd.service || fail "cannot stop hotplugd.service"
# Other uevents on the host may come first and start it: then say so.
before=$(in_ct systemctl is-active hotplugd.service)
u=$(cat /proc/sys/kernel/random/uuid)
t_trigger=$(date +%s%N)
echo "change $u" >/sys/class/net/lo/uevent
ran() { [ -n "$(runs_of "$1")" ]; }
UNTIL_POLL=0.05 wait_progress "the first uevent's agent run" ran "$u"
run=$(runs_of "$u" | head -n 1)
[ "$(in_ct systemctl is-active hotplugd.service)" = active ] || fail "hotplugd.service is not active after activation"
first_seqnum=$(sed -n 's/^env:SEQNUM=//p' "$run")
agent_start=$(sed -n 's/^start=//p' "$run")
if [ "$before" = inactive ]; then
        echo "ok (a): the host uevent SEQNUM=$first_seqnum socket-activated hotplugd.service and its agent ran," \
                "$(((agent_start - t_trigger) / 1000000)) ms after the trigger"
else
        echo "ok (a): another host uevent socket-activated hotplugd.service just before ours;" \
                "ours (SEQNUM=$first_seqnum) ran $(((agent_start - t_trigger) / 1000000)) ms after the trigger"
fi

# ---- b. READY=1, STATUS=, watchdog ------------------------------------------------------

exec_start=$(svc_show ExecMainStartTimestampMonotonic)
active_enter=$(svc_show ActiveEnterTimestampMonotonic)
[ "$exec_start" -gt 0 ] && [ "$active_enter" -ge "$exec_start" ] || fail "no start/active timestamps"
ready_ms=$(((active_enter - exec_start) / 1000))
ready_us=$((active_enter - exec_start))
echo "ok (b): READY=1 reached systemd: socket-activated start to READY $ready_ms ms ($ready_us us)"
status_reached() {
        status=$(svc_show StatusText)
        case $status in *processed*) return 0 ;; esac
        return 1
}
wait_progress "STATUS= from hotplugd" status_reached
case $status in
*" processed, "*" queued, "*" running, "*" gaps "*) echo "ok (b): STATUS= reached systemd: $status" ;;
*) fail "no STATUS= with figures reached systemd: '$status'" ;;
esac
sleep 2.5 # more than half of WatchdogSec=4s
wd=$(svc_show WatchdogTimestampMonotonic)
[ "${wd:-0}" -gt "$active_enter" ] || fail "no WATCHDOG=1 keep-alive reached systemd (WatchdogTimestamp $wd)"
echo "ok (b): WATCHDOG=1 keep-alives reach systemd (WatchdogSec=4s)"
store=$(in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -c "fd store" || true)
[ "$store" = 0 ] || fail "hotplugd could not use the fd store: $(in_ct journalctl --no-pager -u hotplugd.service -o cat | grep "fd store")"

# ---- e. journalctl SEQNUM=N ----------------------------------------------------------------

jout=$(in_ct journalctl --no-pager -o verbose "SEQNUM=$first_seqnum")
grep -q "DEVPATH=/devices/virtual/net/lo" <<<"$jout" || fail "journalctl SEQNUM=$first_seqnum: no DEVPATH field: $jout"
grep -q "AGENT_STATUS=exit 0" <<<"$jout" || fail "journalctl SEQNUM=$first_seqnum: no AGENT_STATUS field: $jout"
grep -q "ACTION=change" <<<"$jout" || fail "journalctl SEQNUM=$first_seqnum: no ACTION field"
echo "ok (e): journalctl SEQNUM=$first_seqnum finds $(in_ct journalctl --no-pager -o cat "SEQNUM=$first_seqnum" | wc -l) line(s):"
in_ct journalctl --no-pager -o short-monotonic "SEQNUM=$first_seqnum" | sed 's/^/    /'

# uevent-burst COUNT PREFIX on lo (its one allocation is left to exit in
# a sanitizer build).
burst() {
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$UEVENT_BURST" "$1" "$2" /sys/class/net/lo/uevent
}

# ---- j. journald stopped during a burst ----------------------------------------------------
# hotplugd logs at debug level (its configuration above), a few lines per
# event.  systemd-journald is SIGSTOPped (from the host, by PID; its
# watchdog is off in this container) before a burst of $JCOUNT events and
# goes on once every agent ran and at least 20 s went by: every agent runs
# while journald is stopped, none is lost, hotplugctl status answers with
# the count of log lines dropped, systemd has not restarted hotplugd (its
# watchdog), and once journald goes on, hotplugd's line "N log lines
# dropped while the journal did not take them" is in the journal.  A
# daemon that sends its log blocking stops at journald's full socket: no
# agent runs until journald goes on.  Printed: when the agents started,
# after the burst's start (median and last).

JCOUNT=${HOTPLUGD_NSPAWN_JOURNAL_COUNT:-5000}
JSTOP_SEC=20
runs_count() { find "$S/runs" -type f 2>/dev/null | wc -l; }
# "median last" agent start after $2 (ns) of the runs with SYNTH_UUID prefix $1, in ms.
start_delays() {
        grep -rl "^env:SYNTH_UUID=$1" "$S/runs" 2>/dev/null | grep -v '\.tmp$' | xargs -r sed -n 's/^start=//p' |
                awk -v t0="$2" '{ print int(($1 - t0) / 1000000) }' | sort -n |
                awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)], a[NR]; else print "- -" }'
}
log_dropped() { in_ct "$BINDIR/hotplugctl" status --json | sed -n 's/.*"log_dropped": *\([0-9]*\).*/\1/p' | head -n 1; }
drop_reports() {
        in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -c "log lines\? dropped while the journal did not take" || true
}

[ "$(in_ct systemctl is-active hotplugd.service)" = active ] || in_ct systemctl start hotplugd.service ||
        fail "cannot start hotplugd.service"
restarts_before=$(svc_show NRestarts)
jpid=$(ct_pgrep -o -f "systemd-journald") || fail "no systemd-journald in the container"
reports_before=$(drop_reports)
dropped_before=$(log_dropped)
prefix=$(cut -c1-23 </proc/sys/kernel/random/uuid)
log "burst of $JCOUNT uevents with systemd-journald (pid $jpid on the host) stopped"
kill -STOP "$jpid" || fail "cannot stop systemd-journald"
JOURNALD_STOPPED=$jpid
t_stop=$(date +%s)
t0=$(date +%s%N)
burst "$JCOUNT" "$prefix" >"$T/burst.out" 2>&1 || fail "uevent-burst failed: $(cat "$T/burst.out")"
# No systemctl while journald is stopped: the runs alone tell the progress.
until_progress "$IDLE" runs_count all_ran "$prefix" "$JCOUNT" ||
        fail "$(distinct_of "$prefix") of $JCOUNT agents ran with journald stopped; nothing moved for $IDLE s"
read -r stop_median stop_last <<<"$(start_delays "$prefix" "$t0")"
ran_at=$(($(date +%s) - t_stop))
# Still stopped: status answers at once, with what the journal did not take.
dropped=$(log_dropped)
[ -n "$dropped" ] && [ -n "$dropped_before" ] || fail "hotplugctl status --json gave no log_dropped while journald was stopped"
while (($(date +%s) - t_stop < JSTOP_SEC)); do sleep 1; done
kill -CONT "$jpid" || fail "cannot continue systemd-journald"
JOURNALD_STOPPED=
log "journald went on after $(($(date +%s) - t_stop)) s; all $JCOUNT agents ran $ran_at s after it stopped"
reported() { (($(drop_reports) > reports_before)); }
wait_progress "hotplugd's drop report in the journal after journald went on" reported
[ "$(distinct_of "$prefix")" = "$JCOUNT" ] || fail "$((JCOUNT - $(distinct_of "$prefix"))) of $JCOUNT events lost"
[ "$(svc_show NRestarts)" = "$restarts_before" ] || fail "hotplugd was restarted while journald was stopped"
((dropped > dropped_before)) || fail "no log line dropped while journald was stopped (status: $dropped)"
in_ct journalctl --no-pager -u hotplugd.service -o cat | grep "log lines\? dropped while the journal did not take" |
        tail -n 1 | sed 's/^/    /'
echo "journald stopped: agents started ${stop_median} ms (median) and ${stop_last} ms (last) after the start" \
        "of the $JCOUNT-event burst"
echo "ok (j): journald stopped ${JSTOP_SEC}+ s: all $JCOUNT agents ran while it was stopped, none lost, no" \
        "restart; $((dropped - dropped_before)) log lines dropped and reported once it went on"
if [ "${HOTPLUGD_NSPAWN_UNTIL:-}" = j ]; then
        echo "HOTPLUGD_NSPAWN_UNTIL=j: the phases after (j) left out"
        exit 0
fi

# ---- c. restarts during a burst ------------------------------------------------------------

prefix=$(cut -c1-23 </proc/sys/kernel/random/uuid)
log "burst of $COUNT uevents with $RESTARTS restarts of hotplugd.service"
t_burst=$(date +%s%N)
burst "$COUNT" "$prefix" >"$T/burst.out" 2>&1 &
burst_pid=$!
restarts=0
n=0
sleep 0.2
while ((restarts < RESTARTS)); do
        in_ct systemctl restart hotplugd.service || fail "systemctl restart failed"
        restarts=$((restarts + 1))
        n=$(runs_of "$prefix" | wc -l)
        log "restart $restarts done: $n of $COUNT run so far$(kill -0 $burst_pid 2>/dev/null && echo ", burst still writing")"
        ((n >= COUNT)) && break
        sleep 1.5
done
wait "$burst_pid" || fail "uevent-burst failed: $(cat "$T/burst.out")"
log "burst: $(cat "$T/burst.out")"
wait_progress "the restart burst ($(distinct_of "$prefix") of $COUNT run)" all_ran "$prefix" "$COUNT"
[ "$(in_ct systemctl is-active hotplugd.service)" = active ] || fail "hotplugd.service is not active"
t_done=$(date +%s%N)
total=$(runs_of "$prefix" | wc -l)
distinct=$(grep -rh "^env:SYNTH_UUID=$prefix" "$S/runs" 2>/dev/null | sort -u | wc -l)
twice=$(grep -rh "^env:SYNTH_UUID=$prefix" "$S/runs" 2>/dev/null | sort | uniq -d | wc -l)
took_over=$(in_ct journalctl --no-pager -u hotplugd.service -o cat | sed -n 's/^took over \([0-9]*\) event.*/\1/p' |
        awk '{s += $1} END {print s + 0}')
gaps=$(in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -c "SEQNUM gap" || true)
dups=$(in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -c "duplicate SEQNUM" || true)
nrestarts=$(svc_show NRestarts)
echo "burst: $COUNT events, $restarts restarts, $distinct distinct run ($((COUNT - distinct)) lost)," \
        "$total runs ($((total - distinct)) extra; $twice events ran twice), $took_over events taken over" \
        "from a previous instance's journal, $gaps gap report(s), $dups duplicate report(s)," \
        "$(((t_done - t_burst) / 1000000)) ms"
((restarts >= 2)) || fail "only $restarts restart(s) happened during the burst"
[ "$distinct" = "$COUNT" ] || fail "$((COUNT - distinct)) of $COUNT events lost across $restarts restarts"
[ "$dups" = 0 ] || fail "the ledger counted duplicates across restarts"
[ "$nrestarts" = 0 ] || fail "systemd restarted hotplugd on its own $nrestarts time(s) (crash or watchdog)"
echo "ok (c): $restarts restarts during a $COUNT-event burst lost none of them"

# ---- c2. crashes during a burst ---------------------------------------------------------------
# SIGKILL to hotplugd alone, $CRASHES times while it reads a burst: the
# burst is written in $CRASHES chunks, each once the previous ones ran, and
# each kill lands 0-15 ms after its chunk started, while the daemon is
# reading (writing 500 events takes about 8 ms, reading them longer).  systemd restarts hotplugd
# (Restart=on-failure) and kills the agents it left; the journal in the fd
# store and the uevent socket survive.  An event read but not journalled is
# still in the socket (it is taken off only after journalling); an event
# whose agent had started runs again and is counted as a re-run.

echo 0 >"$S/sleep_ms"
base=$(cut -c1-19 </proc/sys/kernel/random/uuid)   # 8-4-4-4 less the last 4 hex digits
prefix=$base
chunk=$((COUNT / CRASHES))
rerun_lines_before=$(in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -c "^took over" || true)
log "burst of $COUNT uevents in $CRASHES chunks, each with a crash (SIGKILL) of hotplugd while it reads"
t_crash=$(date +%s%N)
restarted() { # restarted OLD_PID: a new main process is up
        local pid
        pid=$(svc_show MainPID)
        [ "$pid" != 0 ] && [ "$pid" != "$1" ] && [ "$(in_ct systemctl is-active hotplugd.service)" = active ]
}
crashes=0
for ((c = 1; c <= CRASHES; c++)); do
        # The previous chunks ran: the daemon is idle, and the kill below
        # lands while it reads this chunk (not while it takes over a queue).
        wait_progress "chunk $((c - 1)) ($(distinct_of "$prefix") run)" all_ran "$prefix" $(((c - 1) * chunk))
        old_pid=$(svc_show MainPID)
        n=$chunk
        ((c == CRASHES)) && n=$((COUNT - (CRASHES - 1) * chunk))
        burst "$n" "$base$(printf '%04x' "$c")" >"$T/burst.out" 2>&1 &
        burst_pid=$!
        # From the host, by PID: systemctl kill takes tens of ms to arrive.
        host_pid=$(ct_pgrep -o -f "^$SBINDIR/hotplugd") || fail "no hotplugd process before crash $c"
        sleep "0.0$(printf '%02d' $((RANDOM % 16)))"
        kill -KILL "$host_pid" || fail "cannot kill hotplugd (pid $host_pid on the host)"
        crashes=$c
        wait "$burst_pid" || fail "uevent-burst failed: $(cat "$T/burst.out")"
        wait_progress "restart after crash $c" restarted "$old_pid"
        ((c % 5 == 0)) && log "crash $c: restarted as pid $(svc_show MainPID), $(distinct_of "$prefix") of $COUNT run so far"
done
wait_progress "the crash burst ($(distinct_of "$prefix") of $COUNT run)" all_ran "$prefix" "$COUNT"
t_crash_done=$(date +%s%N)
ctotal=$(runs_of "$prefix" | wc -l)
cdistinct=$(distinct_of "$prefix")
ctwice=$(grep -rh "^env:SYNTH_UUID=$prefix" "$S/runs" 2>/dev/null | sort | uniq -d | wc -l)
cnrestarts=$(svc_show NRestarts)
in_ct journalctl --no-pager -u hotplugd.service -o cat >"$T/journal-crash.txt"
takeovers=$(grep "^took over" "$T/journal-crash.txt" | tail -n +$((rerun_lines_before + 1)))
ctook=$(sed -n 's/^took over \([0-9]*\) event.*/\1/p' <<<"$takeovers" | awk '{s += $1} END {print s + 0}')
creruns=$(sed -n 's/.*, \([0-9]*\) of them re-run.*/\1/p' <<<"$takeovers" | awk '{s += $1} END {print s + 0}')
cdups=$(grep -c "duplicate SEQNUM" "$T/journal-crash.txt" || true)
reread=$(grep -c "read again from the socket after the takeover" "$T/journal-crash.txt" || true)
status_handover=$(in_ct "$BINDIR/hotplugctl" status | grep "^Handover:")
echo "crashes: $COUNT events, $crashes crashes ($cnrestarts automatic restarts), $cdistinct distinct run" \
        "($((COUNT - cdistinct)) lost), $((ctotal - cdistinct)) extra runs ($ctwice events ran twice)," \
        "$ctook taken over from the journal, $creruns counted as re-runs, $reread read again from the socket," \
        "$cdups duplicate report(s), $(((t_crash_done - t_crash) / 1000000)) ms"
echo "crashes: last instance's status: $status_handover"
[ "$cnrestarts" = "$crashes" ] || fail "expected $crashes automatic restarts, systemd counted $cnrestarts"
((crashes >= CRASHES)) || fail "the burst was over after $crashes of $CRASHES crashes"
[ "$cdistinct" = "$COUNT" ] || fail "$((COUNT - cdistinct)) of $COUNT events lost across $crashes crashes"
((ctwice <= creruns)) || fail "$ctwice events ran twice but only $creruns re-runs were counted"
[ "$cdups" = 0 ] || fail "the ledger counted duplicates across crashes"
[ -n "$status_handover" ] || fail "hotplugctl status has no Handover: line"
echo "ok (c): $crashes crashes during a $COUNT-event burst lost none of them; every event run twice was counted"

# ---- f. an unreadable journal is replaced in the fd store ---------------------------------------
# The journal systemd keeps is damaged through the running hotplugd's
# descriptor (its header's start, bytes 16-23, made to point past any end)
# and hotplugd is killed at once: the next instance cannot take it over and
# starts a new one, which must go into the store in its place
# (FDSTOREREMOVE=1, then FDSTORE=1 under the same name).  Otherwise systemd
# hands the damaged one to every later instance, and a crash loses the
# events held: here one queued behind a slow agent when hotplugd is killed
# again.

unreadable() { in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -c "cannot read the handover journal" || true; }
# The instance now running has logged its start: what it said of the journal it
# was handed (before it listens) is in the journal by then.
started_logged() {
        local pid
        pid=$(svc_show MainPID)
        [ "$pid" != 0 ] && in_ct journalctl --no-pager "_PID=$pid" -o cat | grep -q "^listening: "
}
unreadable_before=$(unreadable)
damaged=0
for ((try = 1; try <= 3 && !damaged; try++)); do
        old_pid=$(svc_show MainPID)
        host_pid=$(ct_pgrep -o -f "^$SBINDIR/hotplugd") || fail "no hotplugd process to damage the journal of"
        memfd=$(find "/proc/$host_pid/fd" -lname '/memfd:hotplugd-queue*' | head -n 1)
        [ -n "$memfd" ] || fail "hotplugd (pid $host_pid on the host) holds no handover journal"
        printf '\377\377\377\377\377\377\377\377' | dd of="$memfd" bs=8 seek=2 conv=notrunc status=none ||
                fail "cannot write to the handover journal through $memfd"
        kill -KILL "$host_pid" || fail "cannot kill hotplugd (pid $host_pid on the host)"
        wait_progress "restart after damaging the journal" restarted "$old_pid"
        wait_progress "the new instance's start in the journal" started_logged
        # A host uevent between the write and the kill may have cut the
        # journal back (start rewritten): then it was readable; again.
        (($(unreadable) > unreadable_before)) && damaged=1
done
((damaged)) || fail "no instance found the damaged journal unreadable in 3 tries"
unreadable_before=$(unreadable)
echo 3000 >"$S/sleep_ms"
u1=$(cat /proc/sys/kernel/random/uuid)
u2=$(cat /proc/sys/kernel/random/uuid)
echo "change $u1" >/sys/class/net/lo/uevent
echo "change $u2" >/sys/class/net/lo/uevent
agent_of() { # agent_of UUID: its agent runs now
        local p
        for p in $(ct_pgrep -f "^$AGENT "); do
                tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SYNTH_UUID=$1" && return 0
        done
        return 1
}
# The second event waits behind the first (the same device) while its agent sleeps.
UNTIL_POLL=0.05 wait_progress "the first event's slow agent" agent_of "$u1"
old_pid=$(svc_show MainPID)
host_pid=$(ct_pgrep -o -f "^$SBINDIR/hotplugd") || fail "no hotplugd process to kill"
kill -KILL "$host_pid" || fail "cannot kill hotplugd (pid $host_pid on the host)"
wait_progress "restart after the kill" restarted "$old_pid"
wait_progress "the new instance's start in the journal" started_logged
(($(unreadable) == unreadable_before)) ||
        fail "the damaged journal was handed back once more: the new one was not stored in its place"
wait_progress "the event queued when hotplugd was killed" ran "$u2"
echo 0 >"$S/sleep_ms"
store=$(in_ct journalctl --no-pager -u hotplugd.service -o cat | grep "fd store" || true)
[ -z "$store" ] || fail "hotplugd could not use the fd store: $store"
echo "ok (f): a journal hotplugd could not read was replaced in the fd store; an event queued when hotplugd" \
        "was killed after that ran after the restart"

# ---- d. a clean stop, with an agent running -------------------------------------------------

# Every agent now takes 1.5 s; stop while one runs (ours, or one for
# another host uevent that came first) and see it finish.
echo 1500 >"$S/sleep_ms"
u=$(cat /proc/sys/kernel/random/uuid)
echo "change $u" >/sys/class/net/lo/uevent
running_seq=
slow_agent_running() {
        local p
        for p in $(ct_pgrep -f "^$AGENT "); do
                running_seq=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^SEQNUM=//p')
                [ -n "$running_seq" ] && return 0
        done
        return 1
}
# Quick polls: the stop below must land while this agent still runs.
UNTIL_POLL=0.05 wait_progress "the slow agent's start" slow_agent_running
in_ct systemctl stop hotplugd-control.socket hotplugd.socket hotplugd.service || fail "systemctl stop failed"
result=$(svc_show Result)
status=$(svc_show ExecMainStatus)
[ "$result" = success ] || fail "hotplugd.service stopped with result '$result'"
[ "$status" = 0 ] || fail "hotplugd exited with status $status"
ls "$S/runs/$running_seq".* >/dev/null 2>&1 || fail "the running agent (SEQNUM=$running_seq) was not allowed to finish"
ct_pgrep -f "^$AGENT" >/dev/null && fail "an agent is still running after stop"
ct_pgrep -f "^$SBINDIR/hotplugd" >/dev/null && fail "hotplugd is still running after stop"
[ "$(in_ct systemctl is-active hotplugd.service)" = inactive ] || fail "hotplugd.service is not inactive"
in_ct journalctl --no-pager -u hotplugd.service -o cat | grep -q "^stopped:" || fail "no 'stopped:' summary"
echo "ok (d): systemctl stop: result success, exit status 0, the running agent finished, nothing left"

# ---- shutdown. powering off stops hotplugd cleanly ----------------------------------------------

echo 0 >"$S/sleep_ms"
in_ct systemctl start hotplugd.service || fail "cannot start hotplugd.service again"
main_pid=$(svc_show MainPID)
log "powering the container off (hotplugd pid $main_pid in the container)"
in_ct systemctl poweroff --no-block || fail "systemctl poweroff failed"
INIT_PID=
off_progress() {
        echo "console $(stat -c %s "$T/nspawn.log" 2>/dev/null) bytes"
}
nspawn_gone() { ! kill -0 "$NSPAWN_PID" 2>/dev/null; }
wait_until "the container's shutdown" off_progress nspawn_gone
wait "$NSPAWN_PID"
rc=$?
NSPAWN_PID=
[ "$rc" = 0 ] || fail "systemd-nspawn exited $rc after poweroff"
journalctl --no-pager -D "$ROOT/var/log/journal" -o cat -u hotplugd.service >"$T/journal-off.txt" 2>&1
# What the last instance and systemd said from its start on: the journal
# interleaves the daemon's own lines and systemd's by arrival, so the daemon's
# "stopped:" may come before systemd's "Stopping", never before "Starting".
from=$(grep -n "^Starting hotplugd" "$T/journal-off.txt" | tail -n 1 | cut -d: -f1)
last=$(tail -n +"${from:-1}" "$T/journal-off.txt")
grep -q "^stopped:" <<<"$last" || { tail -n 20 "$T/journal-off.txt" >&2; fail "no 'stopped:' summary at shutdown"; }
grep -q "Deactivated successfully" <<<"$last" ||
        { tail -n 20 "$T/journal-off.txt" >&2; fail "hotplugd.service was not deactivated successfully at shutdown"; }
if grep -E "SIGKILL|timed out|Killing process|Failed with result" <<<"$last" >&2; then
        fail "hotplugd was killed or timed out at shutdown (lines above)"
fi
echo "ok (shutdown): poweroff stopped hotplugd.service as a unit: $(grep "^stopped:" <<<"$last" | tail -n 1);" \
        "systemd: $(grep -o "Deactivated successfully.*" <<<"$last" | tail -n 1); nspawn exited 0"

echo "nspawn test: start to READY $ready_ms ms; restarts: $((COUNT - distinct)) of $COUNT lost," \
        "$((total - distinct)) run twice over $restarts restarts; crashes: $((COUNT - cdistinct)) of $COUNT lost," \
        "$((ctotal - cdistinct)) run twice over $crashes crashes ($creruns re-runs counted);" \
        "$(($(date +%s) - T_START)) s in all"
