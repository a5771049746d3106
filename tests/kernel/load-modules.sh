#!/bin/bash
# load-modules on the real kernel: the add the kernel sends for a device
# with a MODALIAS (a bus device's, "add UUID" written to its uevent file) is
# looked up on hotplugd's loader threads, and its agent runs only after its
# modules were tried (the debug line "modules of MODALIAS=... tried" comes
# before the agent's run); status and status --json count it.  What gets
# loaded depends on the machine: on a kernel without modules (no
# /lib/modules/RELEASE) the alias names none and is counted so; the VM
# suite (vm-autoload) loads real modules from Debian's kernel.  With the
# default, auto, a machine without modules.alias.bin (or with udevd, or
# with the modalias script installed) leaves it off and says why.
. "$(dirname "$0")/lib.sh"
t_require_root

dev=
for f in /sys/bus/pci/devices/*/modalias /sys/bus/*/devices/*/modalias; do
        [ -r "$f" ] && [ -s "$f" ] || continue
        dev=$(dirname "$(readlink -f "$f")")
        break
done
[ -n "$dev" ] || t_skip "no bus device with a modalias on this machine"
alias=$(cat "$dev/modalias")
t_make_agent
t_start_daemon --agent "$T_AGENT" --load-modules=yes --log-level=debug
grep -q "load-modules: on" "$T_LOG" || t_fail "load-modules=yes is not on"

u=$(t_uuid)
echo "add $u" >"$dev/uevent"
t_wait_for "$T_IDLE" t_run_with "SYNTH_UUID=$u" >/dev/null || t_fail "no agent run for the add of $dev"
run=$(t_run_with "SYNTH_UUID=$u")
seq=$(t_env_of "$run" SEQNUM)
[ "$(t_env_of "$run" MODALIAS)" = "$alias" ] || t_fail "the agent got MODALIAS=$(t_env_of "$run" MODALIAS), not $alias"
t_settle
tried=$(grep -n "SEQNUM=$seq .*modules of MODALIAS=$alias tried" "$T_LOG" | head -n 1 | cut -d: -f1)
[ -n "$tried" ] || t_fail "no 'modules of MODALIAS=$alias tried' line for SEQNUM $seq"
done_line=$(grep -n "SEQNUM=$seq .* finished status=" "$T_LOG" | head -n 1 | cut -d: -f1)
[ -n "$done_line" ] && [ "$tried" -lt "$done_line" ] ||
        t_fail "SEQNUM $seq: modules tried at log line $tried, agent finished at line ${done_line:-none}"

json=$("$HOTPLUGCTL" status --json) || t_fail "status --json failed"
num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" <<<"$json"; }
[ "$(num kmod_aliases)" -ge 1 ] && [ "$(num kmod_lookups)" -ge 1 ] ||
        t_fail "status --json: kmod_aliases=$(num kmod_aliases) kmod_lookups=$(num kmod_lookups)"
[ "$(num kmod_invalid)" = 0 ] && [ "$(num kmod_timeouts)" = 0 ] && [ "$(num kmod_waiting)" = 0 ] ||
        t_fail "status --json: $json"
grep -q '"load_modules":"on"' <<<"$json" || t_fail "status --json has no load_modules on: $json"
if [ ! -e "/lib/modules/$(uname -r)/modules.alias.bin" ]; then
        # No module tree: libkmod finds nothing, which is no error.
        [ "$(num kmod_not_found)" -ge 1 ] && [ "$(num kmod_loads)" = 0 ] && [ "$(num kmod_failed)" = 0 ] ||
                t_fail "without modules: $json"
fi
"$HOTPLUGCTL" status | grep -q "^Modules:  load-modules on; [1-9][0-9]* aliases seen" ||
        t_fail "status has no Modules line: $("$HOTPLUGCTL" status)"
t_stop_daemon

# The default: auto.  Off with udevd running, and on a kernel without modules.alias.bin.
t_start_daemon --agent "$T_AGENT"
udevd_alive() {
        python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect(sys.argv[1])' \
                /run/udev/control 2>/dev/null
}
if udevd_alive; then
        grep -q "load-modules: auto: off, udevd runs" "$T_LOG" || t_fail "auto with udevd: $(grep load-modules "$T_LOG")"
elif [ ! -e "/lib/modules/$(uname -r)/modules.alias.bin" ]; then
        grep -q "load-modules: auto: off, no modules.alias.bin for this kernel" "$T_LOG" ||
                t_fail "auto without modules.alias.bin: $(grep load-modules "$T_LOG")"
        "$HOTPLUGCTL" status | grep -q "^Modules:  load-modules auto: off, no modules.alias.bin" ||
                t_fail "status does not say why auto is off"
else
        grep -q "load-modules: on" "$T_LOG" || t_fail "auto without udevd: $(grep load-modules "$T_LOG")"
fi
t_stop_daemon

# A socket file nobody listens on (a udevd killed by SIGKILL left it) is not a udevd: auto decides as
# without one.  In a mount namespace of its own, with a tmpfs on /run/udev.
if ! udevd_alive && [ ! -e "/lib/modules/$(uname -r)/modules.alias.bin" ]; then
        if [ ! -d /run/udev ]; then
                mkdir /run/udev && t_on_exit "rmdir /run/udev"
        fi
        unshare -m bash -c 'mount -t tmpfs tmpfs /run/udev &&
                python3 -c "import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).bind(sys.argv[1])" \
                        /run/udev/control && exec "$1" --agent "$2" --log-target=stderr --control-socket="$3"' \
                stale "$HOTPLUGD" "$T_AGENT" "$T_DIR/stale.sock" 2>"$T_DIR/stale.log" &
        stale_pid=$!
        t_wait_for "$T_IDLE" grep -q "load-modules:" "$T_DIR/stale.log" || t_fail "no load-modules line: $(cat "$T_DIR/stale.log")"
        kill "$stale_pid"
        wait "$stale_pid"
        grep -q "load-modules: auto: off, no modules.alias.bin for this kernel" "$T_DIR/stale.log" ||
                t_fail "auto with a stale /run/udev/control: $(grep load-modules "$T_DIR/stale.log")"
        echo "ok: a stale /run/udev/control is not a udevd for load-modules=auto"
fi
echo "ok: SEQNUM $seq ($dev, MODALIAS=$alias) tried before its agent; $(num kmod_lookups) lookup(s), $(num kmod_not_found) naming none, $(num kmod_loads) load(s)"
