#!/bin/bash
# The agent contract on real kernel events: a sysfs change with SYNTH_UUID,
# a veth pair add/remove (net + queues children), a zram hot_add/hot_remove.
# argv is {AGENT, NAME}; the environment is exactly HOME, PATH, ACTION,
# DEVPATH, SUBSYSTEM, SEQNUM, then the kernel's other keys, and nothing of
# the daemon's environment; cwd is "/".
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent

# A daemon-environment marker that must never reach an agent.
export HOTPLUGD_LEAK_MARKER=leaked
t_start_daemon --agent "$T_AGENT" --all

# 1. sysfs change on lo, picked out by its UUID.
uuid=$(t_uuid)
echo "change $uuid" >/sys/class/net/lo/uevent
t_wait_for 10 t_run_with "SYNTH_UUID=$uuid" || t_fail "no agent run for lo change $uuid"
run=$(t_run_with "SYNTH_UUID=$uuid")
[ "$(t_field "$run" argc)" = 2 ] || t_fail "argc is not 2"
[ "$(t_field "$run" argv0)" = "$T_AGENT" ] || t_fail "argv0 is not the agent"
[ "$(t_field "$run" argv1)" = net ] || t_fail "argv1 is not net"
[ "$(t_field "$run" cwd)" = / ] || t_fail "agent cwd is not /"
grep '^env:' "$run" | sed 's/^env://' >"$T_DIR/got"
head -n 6 "$T_DIR/got" | cut -d= -f1 | tr '\n' ' ' >"$T_DIR/first6"
[ "$(cat "$T_DIR/first6")" = "HOME PATH ACTION DEVPATH SUBSYSTEM SEQNUM " ] ||
        t_fail "environment does not start HOME PATH ACTION DEVPATH SUBSYSTEM SEQNUM: $(cat "$T_DIR/first6")"
seq=$(sed -n 's/^SEQNUM=//p' "$T_DIR/got")
# Expected: the fixed part, the uevent file's keys and the SYNTH_UUID.
{
        echo "HOME=/"
        echo "PATH=/sbin:/bin:/usr/sbin:/usr/bin"
        echo "ACTION=change"
        echo "DEVPATH=/devices/virtual/net/lo"
        echo "SUBSYSTEM=net"
        echo "SEQNUM=$seq"
        echo "SYNTH_UUID=$uuid"
        cat /sys/class/net/lo/uevent
} | sort >"$T_DIR/want"
sort "$T_DIR/got" >"$T_DIR/got.sorted"
diff -u "$T_DIR/want" "$T_DIR/got.sorted" || t_fail "lo change: environment differs from the contract"
grep -q HOTPLUGD_LEAK_MARKER "$run" && t_fail "daemon environment leaked into the agent"
[[ "$seq" =~ ^[0-9]+$ ]] || t_fail "SEQNUM not decimal: $seq"
echo "ok: lo change contract (SEQNUM $seq)"

# 2. veth pair: add and remove of both net devices and their queues children.
v=hpc$$
t_veth "$v"
for dev in "$v" "${v}p"; do
        t_wait_for 10 t_run_with "DEVPATH=/devices/virtual/net/$dev" || t_fail "no add run for $dev"
        t_wait_for 10 t_run_with "DEVPATH=/devices/virtual/net/$dev/queues/rx-0" || t_fail "no add for $dev rx-0"
done
run=$(grep -l -x "env:ACTION=add" $(grep -l -x "env:DEVPATH=/devices/virtual/net/$v" "$T_DIR"/runs/*))
[ "$(t_field "$run" argv1)" = net ] || t_fail "veth add argv1"
[ "$(t_env_of "$run" INTERFACE)" = "$v" ] || t_fail "veth add INTERFACE"
[ -n "$(t_env_of "$run" IFINDEX)" ] || t_fail "veth add IFINDEX"
run=$(t_run_with "DEVPATH=/devices/virtual/net/$v/queues/rx-0")
[ "$(t_field "$run" argv1)" = queues ] || t_fail "queues argv1 is $(t_field "$run" argv1)"
ip link del "$v"
t_wait_for 10 sh -c "grep -l -x 'env:ACTION=remove' \$(grep -l -x 'env:DEVPATH=/devices/virtual/net/$v' $T_DIR/runs/*) >/dev/null 2>&1" ||
        t_fail "no remove run for $v"
t_wait_for 10 sh -c "grep -l -x 'env:ACTION=remove' \$(grep -l -x 'env:DEVPATH=/devices/virtual/net/${v}p' $T_DIR/runs/*) >/dev/null 2>&1" ||
        t_fail "no remove run for ${v}p"
echo "ok: veth add/remove"

# 3. zram: block add and remove.
t_zram_add
z=$T_ZRAM
t_wait_for 10 t_run_with "DEVNAME=zram$z" || t_fail "no run for zram$z add"
run=$(grep -l -x "env:ACTION=add" $(grep -l -x "env:DEVNAME=zram$z" "$T_DIR"/runs/*) | head -n 1)
[ "$(t_field "$run" argv1)" = block ] || t_fail "zram argv1"
[ "$(t_env_of "$run" DEVTYPE)" = disk ] || t_fail "zram DEVTYPE"
[ "$(t_env_of "$run" MAJOR)" = "$(cut -d: -f1 /sys/block/zram$z/dev)" ] || t_fail "zram MAJOR"
t_zram_remove "$z"
t_wait_for 10 sh -c "grep -l -x 'env:ACTION=remove' \$(grep -l -x 'env:DEVNAME=zram$z' $T_DIR/runs/*) >/dev/null 2>&1" ||
        t_fail "no remove run for zram$z"
echo "ok: zram add/remove"

# Every run's environment holds only the fixed keys and kernel keys: no daemon variables.
grep -l 'env:HOTPLUGD_LEAK_MARKER' "$T_DIR"/runs/* && t_fail "marker leaked"
t_stop_daemon
[ "$T_DAEMON_RC" = 0 ] || t_fail "daemon exit status $T_DAEMON_RC"
echo "ok: daemon stopped cleanly"
