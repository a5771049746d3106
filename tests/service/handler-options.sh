#!/bin/bash
# The handler chain's options, end to end through hotplugctl test on the
# fixture sysfs tree: each option changes what the agent would get, the
# configuration file sets the same keys, the command line overrides the
# file key by key, hotplugd rejects the values the file rejects, and a
# missing handler directory is a warning only when it was named.
#
# Environment: HOTPLUGD, HOTPLUGCTL (the built binaries), SRCDIR.
set -u

tmp=$(mktemp -d /tmp/hotplugd-hopt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

sysfs=$SRCDIR/tests/fixtures/sysfs
input=/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0001/input/input5
usbif=/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0

# run OUTFILE ARGS...: hotplugctl test on the fixture; stdout and stderr kept apart.
run() {
        local out=$1
        shift
        "$HOTPLUGCTL" test --sysfs "$sysfs" "$@" >"$out" 2>"$out.err" ||
                fail "hotplugctl test $*: exit $?: $(cat "$out.err")"
}

# Quotes stay unless --input-strip-quotes (or the key) says otherwise.
run "$tmp/a" "$input"
grep -qx '  NAME="Logitech USB Keyboard"' "$tmp/a" || fail "NAME lost its quotes by default: $(cat "$tmp/a")"
run "$tmp/a" "$input" --input-strip-quotes
grep -qx '  NAME=Logitech USB Keyboard' "$tmp/a" || fail "--input-strip-quotes: $(cat "$tmp/a")"
grep -qx '  PHYS=usb-0000:00:14.0-2/input0' "$tmp/a" || fail "--input-strip-quotes PHYS: $(cat "$tmp/a")"
echo "ok: --input-strip-quotes"

# Filter policy: drop by subsystem; --all overrides it.
run "$tmp/a" "$input" --filter-policy "input=drop"
grep -qx 'verdict: filtered by policy; no agent would run' "$tmp/a" || fail "--filter-policy drop: $(cat "$tmp/a")"
run "$tmp/a" "$input" --filter-policy "input=drop" --all
grep -q '^verdict: run' "$tmp/a" || fail "--all under a drop policy: $(cat "$tmp/a")"
run "$tmp/a" "$usbif" --filter-policy "none *=drop usb=keep"
grep -q '^verdict: run' "$tmp/a" || fail "'none *=drop usb=keep' dropped usb: $(cat "$tmp/a")"
echo "ok: --filter-policy"

# The configuration file sets the same keys; the command line wins key by key.
conf=$tmp/hotplugd.conf
printf 'agent = /usr/local/sbin/agent\nfilter-policy = input=drop\ninput-strip-quotes = yes\nhandler-cache = 16\n' >"$conf"
printf 'firmware-loader = yes\nfirmware-path = %s/tests/fixtures/firmware:/lib/firmware\n' "$SRCDIR" >>"$conf"
chmod 0600 "$conf"
run "$tmp/a" "$usbif" --config "$conf"
grep -qx "config: $conf" "$tmp/a" || fail "config line: $(cat "$tmp/a")"
grep -qxF "agent: /usr/local/sbin/agent (from $conf)" "$tmp/a" || fail "agent from the file: $(cat "$tmp/a")"
run "$tmp/a" "$input" --config "$conf"
grep -qx 'verdict: filtered by policy; no agent would run' "$tmp/a" || fail "filter-policy from the file: $(cat "$tmp/a")"
run "$tmp/a" "$input" --config "$conf" --filter-policy "input=handlers"
grep -qx '  NAME=Logitech USB Keyboard' "$tmp/a" ||
        fail "file's input-strip-quotes, option's filter-policy: $(cat "$tmp/a")"
"$HOTPLUGD" --check-config --config "$conf" --agent /bin/sh >/dev/null 2>&1 || fail "hotplugd rejects the handler keys"
echo "ok: configuration keys and precedence"

# Bad values: hotplugctl test and hotplugd say the same; usage error 64 on the command line.
for bad in "--filter-policy=input=maybe" "--firmware-path=lib/firmware" "--handler-cache=0" "--handler-cache=65537"; do
        rc=0
        "$HOTPLUGCTL" test --sysfs "$sysfs" "$input" "$bad" >/dev/null 2>"$tmp/err" || rc=$?
        [ "$rc" = 64 ] || fail "hotplugctl test $bad: exit $rc, expected 64"
        rc=0
        "$HOTPLUGD" --check-config "$bad" >/dev/null 2>"$tmp/err2" || rc=$?
        [ "$rc" = 64 ] || fail "hotplugd $bad: exit $rc, expected 64"
        [ "$(sed 's/^hotplugctl: test: //' "$tmp/err" | head -1)" = "$(sed 's/^hotplugd: //' "$tmp/err2" | head -1)" ] ||
                fail "$bad: different messages: $(cat "$tmp/err" "$tmp/err2")"
done
printf 'handler-cache = 70000\n' >"$conf"
rc=0
"$HOTPLUGD" --check-config --config "$conf" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -qF "$conf:1: 'handler-cache' must be a number 1..65536: '70000'" "$tmp/err" ||
        fail "bad handler-cache in the file: exit $rc: $(cat "$tmp/err")"
echo "ok: bad values rejected"

# A named handler directory that does not exist is a warning; the default one is silent.
run "$tmp/a" "$input" --handler-dir "$tmp/no-such-dir"
grep -qF "handler directory $tmp/no-such-dir does not exist" "$tmp/a.err" ||
        fail "no warning for a missing --handler-dir: $(cat "$tmp/a.err")"
run "$tmp/a" "$input"
if grep -q "handler directory" "$tmp/a.err"; then
        fail "warning about the default handler directory: $(cat "$tmp/a.err")"
fi
echo "ok: missing handler directory"

# hotplugctl test runs nothing and writes nothing: with the firmware loader
# on, it says which file it would load and how big it is, and the device's
# loading and data files (in a copy of the fixture tree) stay as they were.
fwsys=$tmp/sysfs
cp -a "$sysfs" "$fwsys" || fail "cannot copy the fixture sysfs"
fwdev=/devices/pci0000:00/0000:00:1f.6/firmware/0000:00:1f.6
fwfile=$SRCDIR/tests/fixtures/firmware/e1000e/test.bin
before=$(cat "$fwsys$fwdev/loading"; md5sum <"$fwsys$fwdev/data")
"$HOTPLUGCTL" test --sysfs "$fwsys" "$fwdev" --firmware-loader --firmware-path "$SRCDIR/tests/fixtures/firmware" \
        >"$tmp/a" 2>"$tmp/a.err" || fail "hotplugctl test of the firmware device: exit $?: $(cat "$tmp/a.err")"
sleep 0.2 # a copier process, if one was started, has had its time
[ "$(cat "$fwsys$fwdev/loading"; md5sum <"$fwsys$fwdev/data")" = "$before" ] ||
        fail "hotplugctl test wrote to the device: loading=$(cat "$fwsys$fwdev/loading"), data $(wc -c <"$fwsys$fwdev/data") bytes"
grep -qF "firmware e1000e/test.bin: would load $fwfile ($(stat -c %s "$fwfile") bytes); dry run, nothing written" \
        "$tmp/a" "$tmp/a.err" || fail "hotplugctl test does not show the firmware it would load: $(cat "$tmp/a" "$tmp/a.err")"
grep -qx 'verdict: filtered by firmware; no agent would run' "$tmp/a" || fail "firmware verdict: $(cat "$tmp/a")"
echo "ok: hotplugctl test shows the firmware and writes nothing"
echo "PASS"
