#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl trigger on real devices, checked against what the agent got:
#  - DEVICE arguments (/sys/class/... links and /devices/... DEVPATHs) trigger
#    those devices and no others, each once;
#  - --subsystem-nomatch and --sysname-match, with DEVICEs and on the
#    enumeration, leave out what they should;
#  - without DEVICEs, the walk of sysfs lists what libudev's enumeration
#    lists, in the same order;
#  - a DEVICE that is not one is named and nothing at all is triggered;
#  - written several at once (--jobs), every device of the enumeration gets
#    its event once, each after its ancestors' (the machine's ACPI tree, when
#    it has one); DEVICEs given out of path order start a new segment, sent
#    after everything before it; --jobs=1 sends in the list's order exactly;
#  - --settle --done-file makes the file (mode 0644, the number of events)
#    only once every triggered event's agent ran, and removes an earlier
#    one at the start: after a timeout or a DEVICE that is not one there is
#    none.
# The devices: a veth pair of this test's own, /dev/null's (mem) and the
# ACPI devices (change events only).
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

# --- the walk lists what libudev's enumeration lists, in its order -----------------------------------
# (other tests add and remove devices meanwhile: the two lists are taken
# again until they were taken from the same tree, at most 10 times)
for i in $(seq 10); do
        "$HOTPLUGCTL" trigger --dry-run >"$T_DIR/walk" || t_fail "trigger --dry-run: exit $?"
        "$UDEV_ENUMERATE" >"$T_DIR/udev" || t_fail "udev-enumerate: exit $?"
        cmp -s "$T_DIR/walk" "$T_DIR/udev" && break
        [ "$i" != 10 ] || t_fail "trigger --dry-run and libudev's enumeration differ: $(diff "$T_DIR/udev" "$T_DIR/walk" | head -20)"
        sleep 0.5
done
[ "$(wc -l <"$T_DIR/walk")" -ge 3 ] || t_fail "the walk found $(wc -l <"$T_DIR/walk") devices"
grep -qx "/sys/devices/virtual/net/$a" "$T_DIR/walk" || t_fail "the walk missed $a"
echo "ok: the walk lists the $(wc -l <"$T_DIR/walk") devices libudev's enumeration lists, in its order"

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

# --- parallel writes keep the order trigger(8) promises -----------------------------------------------
# seq_of OUT: "SYSPATH SEQNUM" for each line of trigger's --verbose output OUT
# (one grep over the agent's runs, runs/SEQNUM.agent: SYNTH_UUID -> SEQNUM).
seq_of() {
        grep -r "^env:SYNTH_UUID=" "$T_DIR/runs" --include='*.agent' |
                sed 's,^.*/\([0-9]*\)\.agent:env:SYNTH_UUID=, \1 ,' >"$T_DIR/uuid-seq"
        awk 'FILENAME != ARGV[1] { if (!($2 in seq)) { print "no agent run for " $1 " (" $2 ")" > "/dev/stderr"; exit 1 }
                                   print $1, seq[$2]; next }
             { seq[$2] = $1 }' "$T_DIR/uuid-seq" "$T_DIR/$1" || t_fail "$1: a device without its agent run"
}
# Every path in ORDER's "SYSPATH SEQNUM" lines was sent after its nearest ancestor among them.
after_ancestors() {
        awk '{ seq[$1] = $2; path[NR] = $1 }
             END { for (i = 1; i <= NR; i++) { p = path[i]
                     while (sub(/\/[^\/]*$/, "", p) && p != "") if (p in seq) {
                             if (seq[p] + 0 >= seq[path[i]] + 0) { print path[i] " (" seq[path[i]] ") not after " p " (" seq[p] ")"; exit 1 }
                             break } } }' "$T_DIR/$1"
}
acpi=/sys/devices/LNXSYSTM:00
if [ -e "$acpi/uevent" ]; then
        for i in 1 2 3 4 5; do
                trigger_ok "acpi$i" --jobs 16 --subsystem-match acpi
                n=$(wc -l <"$T_DIR/acpi$i")
                [ "$n" -ge 2 ] || t_fail "trigger -s acpi triggered $n devices"
                [ "$(cut -d' ' -f1 "$T_DIR/acpi$i" | sort -u | wc -l)" = "$n" ] || t_fail "a device twice: $(cat "$T_DIR/acpi$i")"
                seq_of "acpi$i" >"$T_DIR/acpi$i.seq"
                bad=$(after_ancestors "acpi$i.seq") || t_fail "--jobs 16: $bad"
        done
        echo "ok: --jobs 16 over the ACPI tree ($n devices, 5 runs): each once, each after its ancestors"
else
        echo "ok: no ACPI tree here ($acpi): parents before children left to the DEVICE cases below"
fi
# DEVICEs ${a}p, then $a (sorts before: a new segment), then null: ${a}p's event first.
# seq_order OUT: the SEQNUMs in OUT's list order, increasing?
increasing() { seq_of "$1" | awk '$2 + 0 <= last { exit 1 } { last = $2 + 0 }'; }
for i in 1 2 3; do
        trigger_ok back$i --jobs 8 "/sys/class/net/${a}p" "/sys/class/net/$a"
        increasing back$i || t_fail "--jobs 8 ${a}p $a: not sent in that order: $(seq_of back$i)"
        trigger_ok serial$i --jobs 1 "/sys$null" "/sys/class/net/${a}p" "/sys/class/net/$a" "/sys$null"
        [ "$(wc -l <"$T_DIR/serial$i")" = 3 ] || t_fail "--jobs 1: $(cat "$T_DIR/serial$i")"
        increasing serial$i || t_fail "--jobs 1: not sent in the list's order: $(seq_of serial$i)"
done
echo "ok: a DEVICE out of path order is sent after those before it; --jobs 1 keeps the list's order"

rc=0
"$HOTPLUGCTL" trigger --jobs 0 "/sys$null" >"$T_DIR/j0" 2>&1 || rc=$?
[ "$rc" = 64 ] || t_fail "--jobs 0: exit $rc: $(cat "$T_DIR/j0")"
echo "ok: --jobs 0 is a usage error"

# --- --done-file: made once every event ran, not after a failure or a timeout ---------------------
mkdir -m 0755 "$T_DIR/rundir"
done_file=$T_DIR/rundir/coldplug-done
echo stale >"$done_file"
echo 400 >"$T_DIR/sleep_ms" # each run of the agent takes 0.4 s
# The SYNTH_UUIDs of the runs that had ended when the file appeared, noted by a watcher as soon as it
# sees it (other events the machine sends meanwhile may add runs; only these UUIDs count).
(
        until [ -e "$T_DIR/watch.stop" ]; do
                # One read: the file may go (trigger removes the stale one) between a test and a read.
                if v=$(cat "$done_file" 2>/dev/null) && [ "$v" != stale ]; then
                        cat "$T_DIR"/runs/*.agent | sed -n 's/^env:SYNTH_UUID=//p' >"$T_DIR/watch.out"
                        exit 0
                fi
                sleep 0.05
        done
) &
watcher=$!
t_on_exit "kill $watcher"
trigger_ok donefile --jobs 1 --done-file="$done_file" "/sys/class/net/$a" "/sys/class/net/${a}p" "/sys$null"
touch "$T_DIR/watch.stop"
t_wait_pid_exit "$watcher" watch_rc || t_fail "the --done-file watcher did not end"
[ -s "$T_DIR/watch.out" ] || t_fail "the watcher did not see --done-file appear"
while read -r path uuid; do
        grep -qx "$uuid" "$T_DIR/watch.out" || t_fail "--done-file appeared before the run for $path ($uuid) ended"
done <"$T_DIR/donefile"
[ "$(wc -l <"$T_DIR/donefile")" = 3 ] || t_fail "--done-file: triggered $(cat "$T_DIR/donefile")"
[ "$(cat "$done_file")" = 3 ] && [ "$(stat -c %a "$done_file")" = 644 ] ||
        t_fail "--done-file: $(stat -c %a "$done_file") '$(cat "$done_file")', want 644 '3'"
[ -z "$(find "$T_DIR/rundir" -name 'coldplug-done.*')" ] || t_fail "temporary files left: $(ls "$T_DIR/rundir")"
echo "ok: --done-file appeared once each triggered event's agent had run (0.4 s each), holding 3"

echo 3000 >"$T_DIR/sleep_ms"
rc=0
"$HOTPLUGCTL" trigger --settle --timeout=0.5 --done-file="$done_file" "/sys/class/net/$a" >"$T_DIR/dto" 2>&1 ||
        rc=$?
[ "$rc" = 2 ] || t_fail "trigger --timeout=0.5 with an agent of 3 s: exit $rc: $(cat "$T_DIR/dto")"
[ ! -e "$done_file" ] || t_fail "--done-file left after a timeout: '$(cat "$done_file")'"
echo 0 >"$T_DIR/sleep_ms"
t_settle
echo made >"$done_file"
rc=0
"$HOTPLUGCTL" trigger --settle --done-file="$done_file" "/sys/class/net/$a" "/devices/virtual/net/nohpt$$" \
        >"$T_DIR/dnodev" 2>&1 || rc=$?
[ "$rc" = 1 ] || t_fail "trigger with a DEVICE that is not one: exit $rc: $(cat "$T_DIR/dnodev")"
[ ! -e "$done_file" ] || t_fail "--done-file left after a failure: '$(cat "$done_file")'"
rc=0
"$HOTPLUGCTL" trigger --done-file="$done_file" "/sys/class/net/$a" >"$T_DIR/dnosettle" 2>&1 || rc=$?
[ "$rc" = 64 ] || t_fail "--done-file without --settle: exit $rc: $(cat "$T_DIR/dnosettle")"
echo "ok: no --done-file after a timeout or a DEVICE that is not one (an earlier one removed); it needs --settle"
echo "PASS"
