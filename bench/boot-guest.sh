#!/bin/bash
# The guest side of bench/boot.py, run by hotplugd-bootbench.service as soon
# as the boot's coldplug is over (ordered after systemd-udev-trigger.service
# and hotplugd-coldplug.service; one of the two is masked).  Writes
# "KEY VALUE" lines to the second serial port (the host's report.log)
# between "BENCH BEGIN" and "BENCH END"; the host then kills the machine.
#
# Which device manager this boot has is on the kernel's command line
# (bootbench=udev or bootbench=hotplugd); MODULES (EnvironmentFile) are the
# drivers of the machine's devices.  Times are the guest's /proc/uptime
# (CLOCK_BOOTTIME: from the kernel's start), read the moment a settle
# returns; "processes" is /proc/stat's count of forks since the kernel's
# start.  Until the last mark, the script forks nothing but the two
# settles and one mkfifo: /proc is read with bash's own read, and it sleeps
# with read -t on a FIFO nobody writes.
out=/dev/ttyS1
[ -c $out ] || out=/dev/console
exec >$out 2>&1

read -r cmdline </proc/cmdline
case " $cmdline " in
*" bootbench=udev "*) mode=udev ;;
*" bootbench=hotplugd "*) mode=hotplugd ;;
*) mode=unknown ;;
esac

settle() {
        if [ $mode = udev ]; then
                udevadm settle --timeout=600
        else
                hotplugctl settle --timeout=600
        fi
}

# mark NAME: the uptime and the fork count now, and how many modules are loaded.
mark() {
        local up k v n=0 m
        read -r up _ </proc/uptime
        while read -r k v; do
                [ "$k" = processes ] && break
        done </proc/stat
        while read -r m _; do
                n=$((n + 1))
        done </proc/modules
        marks+=("$1-uptime $up" "$1-processes $v" "$1-modules $n")
}

# missing: the MODULES not loaded yet, in $missing.
missing_modules() {
        local m want
        declare -A have=()
        while read -r m _; do
                have[$m]=1
        done </proc/modules
        missing=
        for want in $MODULES; do
                [ -n "${have[$want]-}" ] || missing="$missing $want"
        done
}

marks=()
mark start
settle
rc=$?
mark settle
marks+=("settle-status $rc")

# The devices behind the controllers (USB ports, SCSI targets) are found
# after the controllers' drivers loaded, in the background: wait for every
# driver of MODULES (20 looks a second), then for the queue once more.
mkfifo /run/bootbench.pipe
exec 9<>/run/bootbench.pipe
waited=0
missing_modules
while [ -n "$missing" ] && [ $waited -lt 2400 ]; do
        read -r -t 0.05 -u 9 _
        waited=$((waited + 1))
        missing_modules
done
mark modules
settle
rc=$?
mark all
marks+=("all-status $rc" "all-missing ${missing:--}")

echo "BENCH BEGIN"
echo "mode $mode"
for l in "${marks[@]}"; do
        echo "$l"
done
# The units' own times (CLOCK_MONOTONIC, microseconds): the device
# manager's start and its coldplug's end.
for u in systemd-udevd.service systemd-udev-trigger.service hotplugd.service hotplugd-coldplug.service \
        sysinit.target; do
        systemctl show --no-pager -p LoadState,ActiveState,Result,ExecMainStartTimestampMonotonic \
                -p InactiveExitTimestampMonotonic,ActiveEnterTimestampMonotonic,MainPID "$u" | sed "s|^|unit $u |"
done
echo "loaded $(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"
for c in /proc/[0-9]*/comm; do
        read -r name <"$c" 2>/dev/null || continue
        case $name in
        systemd-udevd | hotplugd) echo "running $name" ;;
        esac
done
# Every fork since the kernel's start (trace_event=sched:sched_process_fork
# on the command line): the host counts the device manager's.
t=/sys/kernel/tracing
[ -r $t/trace ] || t=/sys/kernel/debug/tracing
grep sched_process_fork $t/trace | sed 's|^|fork |'
if [ $mode = hotplugd ]; then
        hotplugctl status 2>&1 | sed 's|^|status |'
        hotplugctl blame --json 2>&1 | tr -d '\n' | sed 's|^|blame |'
        echo
        journalctl -b -u hotplugd.service -u hotplugd-coldplug.service -o short-monotonic --no-pager 2>&1 |
                tail -n 60 | sed 's|^|journal |'
fi
echo "BENCH END"
