#!/bin/bash
# The integration suite as user nobody: proves that it needs no privilege.
# Root only (exit 77 otherwise; HOTPLUGD_TEST_REQUIRE_ROOT=1 makes that a
# failure).  Uses no kernel uevents.
#
# nobody gets private copies of what it runs (the build tree may not be
# reachable for it) in a directory it can read but not write, and writes
# only into work/, a directory of its own.  $1: driver.py.  Environment:
# as for driver.py (HOTPLUGD_TEST, HOTPLUGD, HOTPLUGCTL, AGENT_DUMP,
# HANDLER_ABORT, FIXTURE_SYSFS).
. "$(dirname "$0")/../kernel/lib.sh"
if [ "$(id -u)" != 0 ]; then
        [ "${HOTPLUGD_TEST_REQUIRE_ROOT:-0}" = 1 ] &&
                t_fail "needs root (to become nobody), and this run requires root tests"
        t_skip "needs root to become user nobody (any user can run: meson test --suite integration)"
fi
command -v setpriv >/dev/null || t_fail "setpriv (util-linux) is needed"

RUN=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 755 "$T_DIR"
mkdir -m 755 "$T_DIR/bin"
for v in HOTPLUGD_TEST HOTPLUGD HOTPLUGCTL AGENT_DUMP; do
        install -m 755 "${!v}" "$T_DIR/bin/" || t_fail "cannot copy $v (${!v})"
        printf -v "$v" '%s' "$T_DIR/bin/$(basename "${!v}")"
done
install -m 644 "$HANDLER_ABORT" "$T_DIR/bin/" || t_fail "cannot copy HANDLER_ABORT ($HANDLER_ABORT)"
HANDLER_ABORT=$T_DIR/bin/$(basename "$HANDLER_ABORT")
install -m 644 "$1" "$T_DIR/bin/driver.py"
{ cp -a "$FIXTURE_SYSFS" "$T_DIR/sysfs" && chmod -R a+rX,go-w "$T_DIR/sysfs"; } ||
        t_fail "cannot copy the fixture sysfs"
# The firmware fixture, beside the sysfs copy where driver.py looks for it.
{ cp -a "$(dirname "$FIXTURE_SYSFS")/firmware" "$T_DIR/firmware" && chmod -R a+rX,go-w "$T_DIR/firmware"; } ||
        t_fail "cannot copy the firmware fixture"
mkdir -m 700 "$T_DIR/work"
chown 65534:65534 "$T_DIR/work"

# An interpreter nobody can run (python3 on the PATH may live in root's home).
py=
for p in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3; do
        if [ -x "$p" ] && "${RUN[@]}" "$p" -c '' 2>/dev/null; then
                py=$p
                break
        fi
done
[ -n "$py" ] || t_fail "no python3 that user nobody can run"

rc=0
"${RUN[@]}" env -i PATH=/usr/bin:/bin HOME="$T_DIR/work" TMPDIR="$T_DIR/work" \
        ${ASAN_OPTIONS+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
        ${T_IDLE+T_IDLE="$T_IDLE"} \
        HOTPLUGD_TEST="$HOTPLUGD_TEST" HOTPLUGD="$HOTPLUGD" HOTPLUGCTL="$HOTPLUGCTL" AGENT_DUMP="$AGENT_DUMP" \
        HANDLER_ABORT="$HANDLER_ABORT" FIXTURE_SYSFS="$T_DIR/sysfs" "$py" "$T_DIR/bin/driver.py" --all || rc=$?

# The driver stops what it started; anything of nobody's still running
# from here would be a leak of the suite: report it, then end it by PID.
left=()
for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case $exe in "$T_DIR"/*) left+=("${p#/proc/}") ;; esac
done
if [ ${#left[@]} -gt 0 ]; then
        kill -KILL "${left[@]}" 2>/dev/null
        t_fail "processes left running as nobody: ${left[*]}"
fi
[ -z "$(find "$T_DIR/work" -mindepth 1 -print -quit)" ] || t_fail "the driver left files in its work directory"
[ "$rc" = 0 ] || t_fail "the integration suite failed as user nobody (exit $rc)"
echo "ok: the integration suite passed as user nobody"
