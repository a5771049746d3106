#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl trigger on real devices, checked against what the agent got:
#  - DEVICE arguments (/sys/class/... links and /devices/... DEVPATHs) trigger
#    those devices and no others, each once;
#  - --subsystem-nomatch and --sysname-match, with DEVICEs and on the
#    enumeration, leave out what they should;
#  - a DEVICE that is not one is named and nothing at all is triggered.
# The devices: a veth pair of this test's own, and /dev/null's (mem).
. "$SRCDIR/tests/kernel/lib.sh"

t_require_root

t_make_agent
t_start_daemon --agent="$T_AGENT" --all
a=hpt$$
t_veth "$a"
null=/devices/virtual/mem/null
[ -e "/sys$null/uevent" ] || t_skip "no /sys$null"

# Runs of the agent for DEVPATH $1 with ACTION=change.
changes_of() {
        grep -rl -x "env:DEVPATH=$1" "$T_DIR/runs" 2>/dev/null | grep -v '\.tmp$' |
                xargs -r grep -l -x "env:ACTION=change" | wc -l
}

# trigger_ok OUT ARGS...: trigger --settle --verbose --action change ARGS; its
# "SYSPATH UUID" lines in $T_DIR/OUT; every one of them reached the agent as
# that device with ACTION=change.
trigger_ok() {
        local out=$T_DIR/$1 path uuid run
        shift
        "$HOTPLUGCTL" trigger --settle --verbose --action change "$@" >"$out" 2>"$out.err" ||
                t_fail "trigger $*: exit $?: $(cat "$out.err")"
        while read -r path uuid; do
                run=$(t_run_with "SYNTH_UUID=$uuid")
                [ -n "$run" ] || t_fail "trigger $*: no agent run for $path ($uuid)"
                [ "/sys$(t_env_of "$run" DEVPATH)" = "$path" ] ||
                        t_fail "trigger $*: $uuid came back as $(t_env_of "$run" DEVPATH), not $path"
                [ "$(t_env_of "$run" ACTION)" = change ] || t_fail "trigger $*: $uuid: ACTION $(t_env_of "$run" ACTION)"
        done <"$out"
}

# The syspaths trigger printed, sorted, one line.
triggered() {
        cut -d' ' -f1 "$T_DIR/$1" | sort | tr '\n' ' '
}

# --- DEVICE arguments: exactly those, each once --------------------------------------------
trigger_ok named "/sys/class/net/$a" "/devices/virtual/net/${a}p" "/sys/devices/virtual/net/$a"
[ "$(triggered named)" = "/sys/devices/virtual/net/$a /sys/devices/virtual/net/${a}p " ] ||
        t_fail "trigger $a ${a}p $a triggered: $(cat "$T_DIR/named")"
[ "$(changes_of "/devices/virtual/net/$a")" = 1 ] || t_fail "$a: $(changes_of "/devices/virtual/net/$a") change runs"
echo "ok: trigger DEVICE... triggers those devices, each once"

# --- --subsystem-nomatch and --sysname-match with DEVICEs -----------------------------------------
before_a=$(changes_of "/devices/virtual/net/$a")
trigger_ok nomatch --subsystem-nomatch net "/sys/class/net/$a" "/sys$null"
[ "$(triggered nomatch)" = "/sys$null " ] || t_fail "-S net $a null triggered: $(cat "$T_DIR/nomatch")"
trigger_ok sysname --sysname-match "${a}?" "/sys/class/net/$a" "/sys/class/net/${a}p" "/sys$null"
[ "$(triggered sysname)" = "/sys/devices/virtual/net/${a}p " ] || t_fail "-y ${a}?: $(cat "$T_DIR/sysname")"
[ "$(changes_of "/devices/virtual/net/$a")" = "$before_a" ] || t_fail "$a triggered although left out"
echo "ok: --subsystem-nomatch and --sysname-match with DEVICEs"

# --- the same on the enumeration --------------------------------------------------------------------
trigger_ok enum1 --sysname-match "$a*" --sysname-match null --subsystem-nomatch mem
[ "$(triggered enum1)" = "/sys/devices/virtual/net/$a /sys/devices/virtual/net/${a}p " ] ||
        t_fail "enumeration -y $a* -y null -S mem: $(cat "$T_DIR/enum1")"
trigger_ok enum2 --sysname-match "$a*" --sysname-match null --subsystem-nomatch 'n?t'
[ "$(triggered enum2)" = "/sys$null " ] || t_fail "enumeration -S 'n?t': $(cat "$T_DIR/enum2")"
echo "ok: --subsystem-nomatch on the enumeration"

# --- a DEVICE that is not one: named, and nothing triggered -----------------------------------------
before_a=$(changes_of "/devices/virtual/net/$a")
rc=0
"$HOTPLUGCTL" trigger --settle --action change "/sys/class/net/$a" /sys/kernel >"$T_DIR/bad" 2>&1 || rc=$?
[ "$rc" = 1 ] || t_fail "trigger with /sys/kernel: exit $rc, expected 1: $(cat "$T_DIR/bad")"
grep -q "^hotplugctl: trigger: /sys/kernel: not a device" "$T_DIR/bad" || t_fail "message: $(cat "$T_DIR/bad")"
# A marker event after it: once the marker is processed, anything trigger wrote would have been too.
u=$(t_uuid)
echo "change $u" >"/sys/class/net/${a}p/uevent"
t_settle || t_fail "settle after the marker"
[ -n "$(t_run_with "SYNTH_UUID=$u")" ] || t_fail "the marker event was not run"
[ "$(changes_of "/devices/virtual/net/$a")" = "$before_a" ] || t_fail "$a was triggered although /sys/kernel was refused"
echo "ok: a DEVICE that is not one is refused and nothing is triggered"
echo "PASS"
