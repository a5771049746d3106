# shellcheck shell=bash
# Helpers of the fault-injection tests (sourced by bash, after the kernel
# tests' lib.sh, whose daemon, agent and wait helpers they use).  Each test
# takes something away from a real hotplugd (processes, descriptors, disk,
# time to run), sends real uevents meanwhile, and checks that the daemon
# said so and lost nothing: every event ran its agent once, `hotplugctl
# status` adds up, and the ledger has no gap it does not name.

. "$(dirname "${BASH_SOURCE[0]}")/../kernel/lib.sh"

# A fault this machine cannot inject: skipped, or a failure when the run
# requires root tests (HOTPLUGD_TEST_REQUIRE_ROOT=1: CI as root must not skip).
f_unavailable() {
        [ "${HOTPLUGD_TEST_REQUIRE_ROOT:-0}" = 1 ] && t_fail "cannot inject the fault: $*"
        t_skip "$*"
}

# f_pids_cgroup: a cgroup of this test's own with the pids controller
# (cgroup v2, or the v1 pids hierarchy); its path in F_CG, removed at exit
# (its processes moved back to the root first).
f_pids_cgroup() {
        local base
        if grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
                base=/sys/fs/cgroup
                grep -qw pids "$base/cgroup.subtree_control" ||
                        echo +pids >"$base/cgroup.subtree_control" 2>/dev/null ||
                        f_unavailable "cgroup v2 without the pids controller in $base/cgroup.subtree_control"
        elif [ -w /sys/fs/cgroup/pids/cgroup.procs ]; then
                base=/sys/fs/cgroup/pids
        else
                f_unavailable "no writable pids cgroup controller (v2 or v1)"
        fi
        F_CG=$base/hotplugd-faults.$$
        mkdir "$F_CG" || f_unavailable "cannot create $F_CG"
        t_on_exit "f_cgroup_remove $F_CG $base"
}

f_cgroup_remove() {
        local p
        for p in $(cat "$1/cgroup.procs" 2>/dev/null); do
                echo "$p" >"$2/cgroup.procs"
        done
        rmdir "$1"
}

# Three devices for a burst, whose uevent files are in F_DEVS: /dev/null,
# /dev/zero and /dev/full (subsystem mem; a "change" written to them touches
# nothing).  Other tests on this machine send bursts on network devices and
# may run udevd: the daemon runs agents for the mem subsystem alone, without
# waiting for a udevd (F_FILTER, its options).
f_devices() {
        local d
        F_DEVS=()
        for d in null zero full; do
                [ -w "/sys/class/mem/$d/uevent" ] || f_unavailable "no /sys/class/mem/$d/uevent"
                F_DEVS+=("/sys/class/mem/$d/uevent")
        done
        F_FILTER=(--filter-policy=*=drop,mem=keep --after-udev=no)
}

# The status record as JSON in $T_DIR/status.json; f_status KEY prints a field.
f_status_read() {
        "$HOTPLUGCTL" status --json >"$T_DIR/status.json" || t_fail "hotplugctl status failed"
}
f_status() {
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$T_DIR/status.json" "$1"
}

# After the fault: everything settled, `hotplugctl status` adds up, no agent
# failed, no gap in the ledger; $1 events of ours (SYNTH_UUID prefix $2) each
# ran exactly once.
f_check_nothing_lost() {
        local n=$1 prefix=$2 ran uniq
        t_settle || t_fail "the daemon did not settle (no progress for $T_IDLE s)"
        f_status_read
        echo "status: $(cat "$T_DIR/status.json")"
        [ "$(f_status queued)" = 0 ] && [ "$(f_status running)" = 0 ] ||
                t_fail "settled, yet status says queued $(f_status queued), running $(f_status running)"
        [ "$(f_status failed)" = 0 ] || t_fail "status: $(f_status failed) agents failed"
        # Every event of ours ran (below); the ledger names each SEQNUM it
        # missed (other tests' events sent in other network namespaces).
        python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
named = sum(g["count"] for g in s["recent_gaps"])
print("ledger: %d gaps, %d missing, %d late; named: %s" % (s["gaps"], s["missing"], s["late"],
      ", ".join("%d-%d (%s)" % (g["first"], g["last"], g["class"]) for g in s["recent_gaps"]) or "none"))
sys.exit(0 if s["gaps"] > len(s["recent_gaps"]) or named >= s["missing"] else 1)' "$T_DIR/status.json" ||
                t_fail "the ledger misses SEQNUMs it does not name"
        [ "$(f_status duplicates)" = 0 ] || t_fail "ledger: $(f_status duplicates) duplicates"
        [ "$(f_status started)" -ge "$n" ] || t_fail "status: only $(f_status started) agents started of $n events"
        ran=$(t_count_runs_prefix "$prefix")
        [ "$ran" = "$n" ] || t_fail "$ran of $n events ran their agent: $((n - ran)) lost"
        uniq=$(grep -rh "^env:SYNTH_UUID=$prefix" "$T_DIR/runs" | sort -u | wc -l)
        [ "$uniq" = "$n" ] || t_fail "$uniq distinct events of $n ran: one ran twice"
}
