#!/bin/bash
# The handler chain in the running daemon: an external handler loaded with
# --handler-dir adds a variable the agent sees and renames its argv[1];
# the built-ins' legacy variables reach the agent too.  Real uevents on lo.
. "$SRCDIR/tests/kernel/lib.sh"
t_require_root

example="$BUILDDIR/examples/handler-example.so"
[ -f "$example" ] || t_fail "example handler not built: $example"

# A handler directory only root can write, holding the module root-owned 0755.
hdir="$T_DIR/handlers"
mkdir -m 0755 "$hdir"
install -o root -g root -m 0755 "$example" "$hdir/50-example.so"
# A world-writable module next to it must be refused without stopping the daemon.
install -o root -g root -m 0757 "$example" "$hdir/60-unsafe.so"

has_run() { [ -n "$(t_run_with "$1")" ]; }

t_make_agent
t_start_daemon --agent "$T_AGENT" --handler-dir "$hdir"

grep -q "handler example loaded from $hdir/50-example.so" "$T_LOG" || t_fail "example handler not loaded"
grep -q "$hdir/60-unsafe.so: writable by group or others" "$T_LOG" || t_fail "unsafe handler not refused"

uuid=$(t_uuid)
echo "change $uuid" > /sys/class/net/lo/uevent
t_wait_for 10 has_run "SYNTH_UUID=$uuid" || t_fail "no agent run for the lo change event"
run=$(t_run_with "SYNTH_UUID=$uuid")

grep -qx "argv1=net-virtual" "$run" || t_fail "argv[1] not renamed by the handler: $(grep argv1 "$run")"
[ "$(t_env_of "$run" EXAMPLE_HANDLER)" = 1 ] || t_fail "EXAMPLE_HANDLER missing from the agent environment"
[ "$(t_env_of "$run" EXAMPLE_MTU)" = "$(cat /sys/class/net/lo/mtu)" ] || t_fail "EXAMPLE_MTU wrong"
[ "$(t_env_of "$run" INTERFACE)" = lo ] || t_fail "INTERFACE missing"

# A NIC with hardware keeps argv[1] "net" and gets the legacy PHYSDEV* variables.
for nic in /sys/class/net/*; do
        case "$(readlink -f "$nic")" in /sys/devices/virtual/*) continue ;; esac
        name=$(basename "$nic")
        uuid=$(t_uuid)
        echo "change $uuid" > "$nic/uevent"
        t_wait_for 10 has_run "SYNTH_UUID=$uuid" || t_fail "no agent run for $name"
        run=$(t_run_with "SYNTH_UUID=$uuid")
        grep -qx "argv1=net" "$run" || t_fail "$name: argv[1] changed"
        phys=$(t_env_of "$run" PHYSDEVPATH)
        [ -n "$phys" ] || t_fail "$name: no PHYSDEVPATH"
        [ "$(t_env_of "$run" PHYSDEVBUS)" = "$(basename "$(readlink "/sys$phys/subsystem")")" ] ||
                t_fail "$name: PHYSDEVBUS differs from sysfs"
        break
done

# hotplugctl test shows the same, running nothing.
out=$("$HOTPLUGCTL" test /sys/class/net/lo --action change --handler-dir "$hdir" --agent "$T_AGENT" 2>&1) ||
        t_fail "hotplugctl test failed: $out"
echo "$out" | grep -qxF "argv: $T_AGENT net-virtual" || t_fail "hotplugctl test: argv: $out"
echo "$out" | grep -qx "  EXAMPLE_HANDLER by example" || t_fail "hotplugctl test: handler of EXAMPLE_HANDLER: $out"
echo "$out" | grep -qx "  EXAMPLE_HANDLER=1" || t_fail "hotplugctl test: environment: $out"
echo "$out" | grep -qx "  ACTION=change" || t_fail "hotplugctl test: action: $out"
echo "$out" | grep -q "synthetic" || t_fail "hotplugctl test: SEQNUM not marked synthetic"
"$HOTPLUGCTL" test /devices/virtual/net/lo --sysfs "$SRCDIR/tests/fixtures/sysfs" >/dev/null 2>&1 &&
        t_fail "hotplugctl test accepted a device missing from --sysfs"
out=$("$HOTPLUGCTL" test /devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0 --sysfs "$SRCDIR/tests/fixtures/sysfs" 2>&1) ||
        t_fail "hotplugctl test on the fixture failed: $out"
echo "$out" | grep -qx "  DEVICE=/dev/bus/usb/001/003" || t_fail "hotplugctl test fixture: $out"

kill -0 "$T_DAEMON_PID" 2>/dev/null || t_fail "hotplugd died"
echo "PASS"
