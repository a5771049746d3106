#!/bin/bash
# The byte budget under a memory limit: hotplugd runs in a memory cgroup
# whose limit is its budget (max-queue-bytes, the least: 512 KiB) plus 8 MiB
# for its fixed costs (code, libraries, device model: about 3.5 MiB) and
# its agents (at most two at once), with no swap.  Paused, it gets a burst
# of real uevents far beyond its budget; it is overloaded and stops
# reading, is not killed by the OOM killer (cgroup v2 memory.events
# oom_kill, or v1 memory.oom_control, stays 0), and after resume every
# device's last state reached the agent.  cgroup v2's memory controller is
# used where it is enabled, else v1's; without either the test is skipped.
# Runs in a network and mount namespace of its own (as kernel-budget).
if [ "$(id -u)" = 0 ] && [ -z "${BUDGET_NETNS:-}" ]; then
        BUDGET_NETNS=1 exec unshare -n -m bash "$0" "$@"
fi
. "$SRCDIR/tests/kernel/lib.sh"
t_require_root
mount --make-rprivate / && mount -t sysfs sysfs /sys && ip link set lo up || t_fail "cannot set up the namespace"
N=${BUDGET_BURST:-5000}
BUDGET=$((512 * 1024))
FIXED=$((8 * 1024 * 1024))
# A sanitizer build's daemon carries AddressSanitizer's shadow memory and
# quarantine: its fixed cost is tens of MiB, not 3.5.  The limit leaves room
# for that (with a small quarantine), so that build checks the rest: reading
# stops at the budget, no OOM kill, nothing lost.
# Such a daemon is also too slow to fill its budget from a 16 KiB receive
# buffer before it has read the socket empty (a resync then runs before the
# test deletes its device): it gets a buffer that holds the whole burst, so
# the kernel drops nothing and the budget alone stops reading.
RCVBUF=16384
if grep -aq __asan_init "$HOTPLUGD"; then
        FIXED=$((192 * 1024 * 1024))
        RCVBUF=$((64 * 1024 * 1024))
        export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
        echo "note: an AddressSanitizer build: fixed costs taken as $FIXED bytes, a $RCVBUF-byte receive buffer"
fi
LIMIT=$((BUDGET + FIXED))

# A memory cgroup: v2 where its controllers include memory, else v1's memory
# hierarchy, each mounted afresh (this namespace's /sys hides the machine's
# cgroup mounts) on a directory of its own outside $T_DIR, unmounted last.
M=/tmp/hotplugd-cg.$$
mkdir "$M" || t_fail "cannot create $M"
t_on_exit "rmdir $M"
t_on_exit "umount -l $M"
CG=
if mount -t cgroup2 none "$M" 2>/dev/null && grep -qw memory "$M/cgroup.controllers"; then
        grep -qw memory "$M/cgroup.subtree_control" || echo +memory >"$M/cgroup.subtree_control" ||
                t_skip "cgroup v2 has a memory controller that cannot be enabled for children"
        CG=$M/hotplugd-budget-$$
        mkdir "$CG" || t_skip "cannot create a cgroup v2 group"
        t_on_exit "rmdir $CG"
        echo "$LIMIT" >"$CG/memory.max" || t_fail "cannot set memory.max"
        echo 0 >"$CG/memory.swap.max" 2>/dev/null
        oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"; }
        peak() { cat "$CG/memory.peak" 2>/dev/null || echo "?"; }
else
        mountpoint -q "$M" && umount "$M"
        mount -t cgroup -o memory none "$M" 2>/dev/null ||
                t_skip "no memory cgroup controller (cgroup v2 without memory, and no cgroup v1 memory hierarchy)"
        echo "note: cgroup v2 has no memory controller here; using cgroup v1's memory.limit_in_bytes"
        CG=$M/hotplugd-budget-$$
        mkdir "$CG" || t_skip "cannot create a cgroup v1 memory group"
        t_on_exit "rmdir $CG"
        echo "$LIMIT" >"$CG/memory.limit_in_bytes" || t_fail "cannot set memory.limit_in_bytes"
        echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes" 2>/dev/null
        echo 0 >"$CG/memory.swappiness" 2>/dev/null
        oom_kills() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control"; }
        peak() { cat "$CG/memory.max_usage_in_bytes"; }
fi
# Removed at exit after the daemon (t_cleanup stops it first, its agents reaped by then).
echo "cgroup $CG: limit $LIMIT bytes (budget $BUDGET)"

# The daemon starts inside the cgroup, so all its memory is charged there.
printf '#!/bin/sh\necho $$ >%s/cgroup.procs || exit 1\nexec %s "$@"\n' "$CG" "$HOTPLUGD" >"$T_DIR/in-cgroup"
chmod 755 "$T_DIR/in-cgroup"
HOTPLUGD=$T_DIR/in-cgroup
t_make_agent
v=hpk$$m
old=hpk$$p
t_veth "$v"
t_veth "$old"
t_start_daemon --agent "$T_AGENT" --filter-policy "net=keep,*=drop" --after-udev=no --max-children 2 \
        --max-queue-bytes=512K --rcvbuf "$RCVBUF" --resync-subsystems net
grep -qx "$T_DAEMON_PID" "$CG/cgroup.procs" || t_fail "the daemon is not in $CG"
"$HOTPLUGCTL" pause >/dev/null || t_fail "hotplugctl pause failed"
"$UEVENT_BURST" "$N" "$(t_uuid_prefix)" /sys/class/net/lo/uevent "/sys/class/net/$v/uevent" ||
        t_fail "burst failed"
t_wait_for "$T_IDLE" grep -q "overloaded: " "$T_LOG" || t_fail "never overloaded"
ip link del "$old" || t_fail "cannot delete $old"
"$HOTPLUGCTL" resume >/dev/null || t_fail "hotplugctl resume failed"
if [ "$RCVBUF" = 16384 ]; then
        t_wait_for "$T_IDLE" grep -q "resync after overflow:" "$T_LOG" || t_fail "no resync after what the kernel dropped"
fi
t_settle || t_fail "settle failed (no progress for $T_IDLE s)"
"$HOTPLUGCTL" status | grep -E "^(Memory|Ledger|Agents|Queue):"

kills=$(oom_kills)
echo "cgroup: peak $(peak) bytes of $LIMIT, oom_kill $kills"
[ "$kills" = 0 ] || t_fail "the OOM killer killed $kills process(es) in the daemon's cgroup"
kill -0 "$T_DAEMON_PID" || t_fail "the daemon is gone"
for f in "$T_DIR"/runs/*.agent; do
        echo "$(t_field "$f" start) $(t_env_of "$f" ACTION) $(t_env_of "$f" DEVPATH)"
done | sort -n >"$T_DIR/runs-in-order"
last_action() { awk -v d="/devices/virtual/net/$1" '$3 == d { a = $2 } END { print a }' "$T_DIR/runs-in-order"; }
# The peer of $v has events only from a resync after overflow, which the
# sanitizer build's large buffer does not have.
present=(lo "$v" "${v}p")
[ "$RCVBUF" = 16384 ] || present=(lo "$v")
for d in "${present[@]}"; do
        case "$(last_action "$d")" in
        add | change) ;;
        *) t_fail "$d is there, but its last agent run was '$(last_action "$d")'" ;;
        esac
done
for d in "$old" "${old}p"; do
        [ "$(last_action "$d")" = remove ] || t_fail "$d is gone, but its last agent run was '$(last_action "$d")'"
done
t_stop_daemon
echo "ok: $N events against a budget of $BUDGET bytes in a cgroup limited to $LIMIT: no OOM kill, every device's" \
        "last state reached the agent"
