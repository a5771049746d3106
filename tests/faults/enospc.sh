#!/bin/bash
# The disk under --record fills up (a 64 KiB tmpfs): writing the recording
# fails with ENOSPC, the daemon says so once and stops recording, and the
# events go on: every one of a burst ran its agent once, status adds up.
. "$(dirname "$0")/lib.sh"
t_require_root
N=${FAULTS_EVENTS:-1000}
t_make_agent 0
f_devices
mkdir "$T_DIR/disk"
mount -t tmpfs -o size=64k,mode=0700 hotplugd-faults "$T_DIR/disk" || f_unavailable "cannot mount a tmpfs"
t_on_exit "umount $T_DIR/disk"
t_start_daemon --agent "$T_AGENT" "${F_FILTER[@]}" --record "$T_DIR/disk/events.rec"
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" "${F_DEVS[@]}" || t_fail "burst failed"
f_check_nothing_lost "$N" "$prefix"
said=$(grep -c "recording .*No space left on device" "$T_LOG")
grep "recording" "$T_LOG"
[ "$said" -ge 1 ] || t_fail "the daemon did not say that the recording's disk is full"
[ "$(grep -c "recording stops" "$T_LOG")" = 1 ] || t_fail "'recording stops' not said exactly once"
echo "recording: $(stat -c %s "$T_DIR/disk/events.rec") bytes on a $(df -k --output=size "$T_DIR/disk" | tail -1) KiB disk"
t_stop_daemon
echo "ok: the recording's disk filled, recording stopped with one error, $N events ran once each"
