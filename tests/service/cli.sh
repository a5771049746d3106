#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl's command-line conventions, without root and without a daemon:
#  - every verb (from the list in 'hotplugctl --help') prints its full usage
#    on stdout for --help and 'hotplugctl help VERB', exit 0, nothing on stderr;
#  - an unknown option or argument is exit 64, named, with a pointer to --help;
#  - --socket=PATH and HOTPLUGCTL_SOCKET pick the daemon: with nothing there,
#    exit 3 and a message naming the path and saying what to do;
#  - --action takes the kernel's actions only, and a refusal names the value;
#  - test and trigger name a path that is not a device as given, with the verb;
#  - trigger DEVICE... --dry-run lists those devices, filtered by the match options;
#  - messages start with the program's basename, however it was started.
#
# Environment: HOTPLUGCTL (the built binary), SRCDIR.
set -u

tmp=$(mktemp -d /tmp/hotplugd-cli.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# run EXPECTED_EXIT ARGS...: hotplugctl ARGS, stdout in $tmp/out, stderr in $tmp/err.
run() {
        local want=$1 rc=0
        shift
        "$HOTPLUGCTL" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" = "$want" ] || fail "hotplugctl $*: exit $rc, expected $want: $(cat "$tmp/err")"
}

# The stderr of the last run contains each of the given fixed strings.
err_has() {
        local s
        for s in "$@"; do
                grep -qF -- "$s" "$tmp/err" || fail "stderr lacks '$s': $(cat "$tmp/err")"
        done
}

run 0 --help
verbs=$(sed -n '/^Verbs:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$tmp/out")
for v in status settle trigger monitor pause resume reload test record timeline; do
        echo "$verbs" | grep -qx "$v" || fail "verb $v missing from --help: $(cat "$tmp/out")"
done

# --- --help, help VERB, an unknown option, for every verb --------------------------------
for v in $verbs; do
        for how in "$v --help" "$v -h" "help $v"; do
                # shellcheck disable=SC2086
                run 0 $how
                grep -q "^Usage: hotplugctl $v" "$tmp/out" || fail "$how: no usage on stdout: $(cat "$tmp/out")"
                grep -q "^Exit status:" "$tmp/out" || fail "$how: exit statuses not listed: $(cat "$tmp/out")"
                [ ! -s "$tmp/err" ] || fail "$how: wrote to stderr: $(cat "$tmp/err")"
        done
        run 64 "$v" --no-such-option
        err_has "hotplugctl: $v: " "'--no-such-option'" "Try 'hotplugctl $v --help'"
        [ ! -s "$tmp/out" ] || fail "$v --no-such-option wrote to stdout: $(cat "$tmp/out")"
        run 64 "$v" -Q
        err_has "hotplugctl: $v: " "'-Q'" "--help"
done
echo "ok: --help and unknown options for: $(echo $verbs)"

# Every option a verb's usage names is one it takes.  "--OPT=x --no-such-option"
# fails while parsing, before anything runs, whatever OPT does.
for v in $verbs; do
        for opt in $("$HOTPLUGCTL" "$v" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
                run 64 "$v" "$opt=x" --no-such-option
                if grep -qF "option '$opt'" "$tmp/err" && ! grep -qF "option '$opt' takes no value" "$tmp/err"; then
                        fail "$v --help names $opt, which $v refuses: $(cat "$tmp/err")"
                fi
        done
done
echo "ok: every option a usage names is taken"

# --- missing values and stray arguments ----------------------------------------------------
run 64 settle --timeout
err_has "hotplugctl: settle: option '--timeout' needs a value" "--help"
run 64 trigger --s
err_has "hotplugctl: trigger: ambiguous option '--s' (could be --subsystem-match, " "--socket)"
run 64 settle --timeout=soon
err_has "invalid value 'soon' for --timeout" "0 to 86400"
run 64 settle --timeout=nan
err_has "invalid value 'nan' for --timeout"
run 64 settle extra
err_has "hotplugctl: settle: unexpected argument 'extra'"
run 64 pause extra
err_has "hotplugctl: pause: unexpected argument 'extra'"
run 64 record --count=0 "$tmp/rec"
err_has "invalid value '0' for --count"
run 64 record
err_has "hotplugctl: record: no FILE given"
run 64 test
err_has "hotplugctl: test: no DEVICE given"
run 64 timeline
err_has "hotplugctl: timeline: no FILE given"
run 64 record "$tmp/rec" "$(printf 'two\033')"
err_has "hotplugctl: record: unexpected argument 'two\x1b'"
run 64 frobnicate
err_has "unknown verb 'frobnicate'"
echo "ok: values and arguments"

# --- timeline's errors read like every verb's -------------------------------------------------
run 1 timeline "$tmp/no-such-recording"
err_has "hotplugctl: timeline: $tmp/no-such-recording: No such file or directory"
printf 'not a recording\n' >"$tmp/junk"
run 1 timeline "$tmp/junk"
err_has "hotplugctl: timeline: $tmp/junk: not a hotplugd recording"
! grep -v "^hotplugctl: timeline: " "$tmp/err" || fail "timeline: a line without the prefix: $(cat "$tmp/err")"
echo "ok: timeline errors"

# --- --action: the kernel's actions ------------------------------------------------------------
# trigger -c ACTION, as udevadm spells it.
run 64 trigger -c frob /sys/class/net/lo
err_has "hotplugctl: trigger: invalid value 'frob' for --action"
if [ -e /sys/class/net/lo/uevent ]; then
        run 0 trigger --dry-run -c change /sys/class/net/lo
        [ "$(cat "$tmp/out")" = /sys/devices/virtual/net/lo ] || fail "trigger -n -c change: $(cat "$tmp/out")"
fi
for v in test trigger; do
        run 64 "$v" --action frob /sys/class/net/lo
        err_has "hotplugctl: $v: invalid value 'frob' for --action" \
                "add, remove, change, move, online, offline, bind, unbind" "Try 'hotplugctl $v --help'"
done
sysfs=$SRCDIR/tests/fixtures/sysfs
usbif=/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0
for a in add remove change move online offline bind unbind; do
        run 0 test --sysfs "$sysfs" --action "$a" "$usbif"
        grep -q "^event: $a $usbif " "$tmp/out" || fail "test --action $a: $(cat "$tmp/out")"
done
# hotplugd's boolean options, as hotplugd takes them: --no-NAME undoes --NAME.
run 0 test --sysfs "$sysfs" --all "$usbif"
grep -qx "verdict: run (--all)" "$tmp/out" || fail "test --all: $(cat "$tmp/out")"
run 0 test --sysfs "$sysfs" --all --no-all "$usbif"
grep -qx "verdict: run" "$tmp/out" || fail "test --all --no-all: $(cat "$tmp/out")"
run 0 test --sysfs "$sysfs" --all=off --firmware-loader=YES "$usbif"
grep -qx "verdict: run" "$tmp/out" || fail "test --all=off: $(cat "$tmp/out")"
run 64 test --sysfs "$sysfs" --no-all=1 "$usbif"
err_has "option '--no-all' takes no value"
echo "ok: --action"

# --- test and trigger name what is not a device, as given ----------------------------------
run 1 test /sys/module/kernel
err_has "hotplugctl: test: /sys/module/kernel: "
run 1 test --sysfs "$sysfs" /sys/module/kernel
err_has "hotplugctl: test: /sys/module/kernel: not a device: neither a device node nor a path below"
run 1 test --sysfs "$sysfs" /no/such/path
err_has "hotplugctl: test: /no/such/path: does not exist"
run 1 test --sysfs "$sysfs" /dev/null
err_has "hotplugctl: test: /dev/null: no device of this node in sysfs (no $(realpath "$sysfs")/dev/char/1:3)"
run 1 test --sysfs "$sysfs" /devices/pci0000:00
err_has "hotplugctl: test: /devices/pci0000:00: not a device"
run 1 test --sysfs "$sysfs" relative/path
err_has "hotplugctl: test: relative/path: not a device path"
run 64 test --sysfs "$sysfs" --handler-cache=many "$usbif"
err_has "hotplugctl: test: --handler-cache must be a number" "'many'" "--help"
run 1 trigger --dry-run /sys/class/net/lo /sys/no/such/device
err_has "hotplugctl: trigger: /sys/no/such/device: does not exist"
[ ! -s "$tmp/out" ] || fail "trigger listed devices although one argument is no device: $(cat "$tmp/out")"
run 1 trigger --dry-run /sys/kernel
err_has "hotplugctl: trigger: /sys/kernel: not a device"
echo "ok: not a device"

# --- trigger DEVICE...: those devices, through the match options ------------------------------
if [ -e /sys/class/net/lo/uevent ] && [ -e /sys/devices/virtual/mem/null/uevent ]; then
        run 0 trigger --dry-run /sys/class/net/lo /devices/virtual/mem/null /sys/devices/virtual/net/lo
        printf '/sys/devices/virtual/net/lo\n/sys/devices/virtual/mem/null\n' | cmp -s - "$tmp/out" ||
                fail "trigger -n lo null lo: $(cat "$tmp/out")"
        run 0 trigger --dry-run --subsystem-nomatch net /sys/class/net/lo /sys/devices/virtual/mem/null
        [ "$(cat "$tmp/out")" = /sys/devices/virtual/mem/null ] || fail "trigger -n -S net: $(cat "$tmp/out")"
        run 0 trigger --dry-run --subsystem-match 'n*' /sys/class/net/lo /sys/devices/virtual/mem/null
        [ "$(cat "$tmp/out")" = /sys/devices/virtual/net/lo ] || fail "trigger -n -s 'n*': $(cat "$tmp/out")"
        run 0 trigger --dry-run --sysname-match 'n?ll' /sys/class/net/lo /sys/devices/virtual/mem/null
        [ "$(cat "$tmp/out")" = /sys/devices/virtual/mem/null ] || fail "trigger -n -y n?ll: $(cat "$tmp/out")"
        # Without DEVICEs: the enumeration, less what --subsystem-nomatch names.
        run 0 trigger --dry-run --subsystem-match net --subsystem-match mem
        grep -qx /sys/devices/virtual/net/lo "$tmp/out" || fail "trigger -n -s net -s mem: no lo: $(cat "$tmp/out")"
        run 0 trigger --dry-run --subsystem-match net --subsystem-match mem --subsystem-nomatch net
        grep -qx /sys/devices/virtual/mem/null "$tmp/out" || fail "trigger -n -S net: no null: $(cat "$tmp/out")"
        ! grep -q /net/ "$tmp/out" || fail "trigger -S net listed a net device: $(cat "$tmp/out")"
        echo "ok: trigger DEVICE... and the match options"
else
        echo "skipped: trigger DEVICE... (no /sys/class/net/lo or mem/null here)"
fi

# --- choosing the daemon: --socket and HOTPLUGCTL_SOCKET -----------------------------------------
nosock=$tmp/no-such-daemon/control
for cmd in status settle "trigger --settle --subsystem-match no-such-subsystem" monitor pause resume reload; do
        for where in after before env; do
                # shellcheck disable=SC2086
                case $where in
                after) run 3 $cmd --socket="$nosock" ;;
                before) run 3 --socket "$nosock" $cmd ;;
                env) HOTPLUGCTL_SOCKET=$nosock run 3 $cmd ;;
                esac
                err_has "hotplugctl: ${cmd%% *}: hotplugd is not running" "$nosock" "systemctl start hotplugd" \
                        "--socket=PATH" "HOTPLUGCTL_SOCKET"
        done
done
# --socket wins over the variable.
HOTPLUGCTL_SOCKET=$tmp/other run 3 status --socket="$nosock"
err_has "$nosock"
run 64 status --socket=
err_has "invalid value '' for --socket"
run 64 --socket
err_has "option '--socket' needs a path"
echo "ok: --socket and HOTPLUGCTL_SOCKET"

# --- the basename, however hotplugctl was started ------------------------------------------------
ln -s "$HOTPLUGCTL" "$tmp/hpctl"
rc=0
"$tmp/hpctl" settle --bogus 2>"$tmp/err" || rc=$?
[ "$rc" = 64 ] || fail "via a symlink: exit $rc"
[ "$(head -n 1 "$tmp/err")" = "hpctl: settle: unknown option '--bogus'" ] || fail "via a symlink: $(cat "$tmp/err")"
grep -qx "Try 'hpctl settle --help' for more information." "$tmp/err" || fail "via a symlink: $(cat "$tmp/err")"
"$tmp/hpctl" pause --help | grep -q "^Usage: hpctl pause" || fail "usage via a symlink: $("$tmp/hpctl" pause --help)"
rc=0
"$tmp/hpctl" test --action frob /sys/class/net/lo 2>"$tmp/err" || rc=$?
[ "$rc" = 64 ] && grep -q "^hpctl: test: invalid value 'frob'" "$tmp/err" || fail "via a symlink: $(cat "$tmp/err")"
rc=0
(cd "$(dirname "$HOTPLUGCTL")" && "./$(basename "$HOTPLUGCTL")" --socket="$nosock" status) 2>"$tmp/err" || rc=$?
[ "$rc" = 3 ] || fail "./hotplugctl status: exit $rc"
grep -q "^hotplugctl: status: hotplugd is not running" "$tmp/err" || fail "./hotplugctl: $(cat "$tmp/err")"
# No message of any verb names the program other than by its basename.
for v in $verbs; do
        "$tmp/hpctl" "$v" --bogus 2>&1 | grep -v "^hpctl: \|^Try 'hpctl " && fail "$v: a line not from hpctl"
done
echo "ok: messages use the basename"
echo "PASS"
