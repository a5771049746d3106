#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl test shows what hotplugd would run, chosen as hotplugd chooses
# it, on the fixture sysfs tree and a temporary hotplug.d of good and bad
# scripts; no daemon, nothing run:
#  - --hotplug-d DIR: every DIR/NAME/*.hotplug, then DIR/default/*.hotplug,
#    in lexical order, one "argv:" line each; every entry passed over in its
#    place as "not run: PATH: REASON" (not executable, group/other-writable,
#    a link to an untrusted or missing target, a directory, not *.hotplug,
#    hidden; not owned by root when run as root);
#  - the file's hotplug-d and agent, and the command line over the file;
#  - nothing chosen: the built-in agent if executable, else the multiplexer
#    over the build's hotplug.d (what the daemon falls back on);
#  - an agent the daemon would refuse is an error; a missing one is listed;
#  - each variable a handler added is named with its handler.
#
# Environment: HOTPLUGCTL (the built binary), SRCDIR, DEFAULT_AGENT, HOTPLUG_D.
set -u

tmp=$(mktemp -d /tmp/hotplugd-ctltest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

sysfs=$SRCDIR/tests/fixtures/sysfs
usbif=/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0

# run EXPECTED_EXIT ARGS...: hotplugctl test on the fixture, stdout in $tmp/out, stderr in $tmp/err.
run() {
        local want=$1 rc=0
        shift
        "$HOTPLUGCTL" test --sysfs "$sysfs" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" = "$want" ] || fail "hotplugctl test $*: exit $rc, expected $want: $(cat "$tmp/err")"
}

# The agent and program lines of the last run, against stdin.
programs_are() {
        cat >"$tmp/want"
        sed -n '/^agent: /,$p' "$tmp/out" | diff -u "$tmp/want" - >"$tmp/diff" || fail "$1: $(cat "$tmp/diff")"
}

# An empty configuration file pins the defaults whatever the machine's file says.
empty=$tmp/empty.conf
: >"$empty"
chmod 0600 "$empty"

# --- a hotplug.d of good and bad scripts -----------------------------------------------------------
hd=$tmp/hotplug.d
mkdir -p "$hd/usb" "$hd/default" "$tmp/elsewhere"
chmod 0755 "$hd" "$hd/usb" "$hd/default"
script() { # script PATH MODE
        printf '#!/bin/sh\nexit 0\n' >"$1"
        chmod "$2" "$1"
}
script "$hd/usb/10-good.hotplug" 0755
script "$hd/usb/20-noexec.hotplug" 0644
script "$hd/usb/30-groupw.hotplug" 0775
script "$hd/usb/40-otherw.hotplug" 0757
script "$hd/usb/README" 0755
script "$hd/usb/.hidden.hotplug" 0755
script "$hd/usb/60-good.hotplug~" 0755
script "$tmp/elsewhere/target" 0777
chmod 0777 "$tmp/elsewhere"
ln -s "$tmp/elsewhere/target" "$hd/usb/50-link.hotplug"
ln -s "$tmp/no-such-target" "$hd/usb/55-dangling.hotplug"
ln -s "$hd/usb/10-good.hotplug" "$hd/usb/58-goodlink.hotplug"
mkdir "$hd/usb/70-dir.hotplug"
script "$hd/default/05-first.hotplug" 0700
script "$hd/default/90-last.hotplug" 0755
# Another subsystem's scripts never run for usb.
mkdir "$hd/net"
script "$hd/net/10-net.hotplug" 0755
uid=$(id -u)

run 0 --config "$empty" --hotplug-d "$hd" "$usbif"
programs_are "--hotplug-d" <<EOF
agent: hotplug.d multiplexer over $hd (from the command line)
not run: $hd/usb/.hidden.hotplug: hidden (its name starts with '.')
argv: $hd/usb/10-good.hotplug usb
not run: $hd/usb/20-noexec.hotplug: not executable (mode 0644, uid $uid)
not run: $hd/usb/30-groupw.hotplug: writable by group or others (mode 0775, uid $uid)
not run: $hd/usb/40-otherw.hotplug: writable by group or others (mode 0757, uid $uid)
not run: $hd/usb/50-link.hotplug: link target in a directory others can write (mode 0777, uid $uid)
not run: $hd/usb/55-dangling.hotplug: link target does not exist
argv: $hd/usb/58-goodlink.hotplug usb
not run: $hd/usb/60-good.hotplug~: not named *.hotplug
not run: $hd/usb/70-dir.hotplug: not a regular file
not run: $hd/usb/README: not named *.hotplug
argv: $hd/default/05-first.hotplug usb
argv: $hd/default/90-last.hotplug usb
EOF
[ ! -s "$tmp/err" ] || fail "--hotplug-d wrote to stderr: $(cat "$tmp/err")"
echo "ok: --hotplug-d: every program in order, every script passed over with its reason"

# Not owned by root: only root can give a file away.
if [ "$uid" = 0 ]; then
        script "$hd/usb/15-nobody.hotplug" 0755
        chown 65534 "$hd/usb/15-nobody.hotplug"
        run 0 --config "$empty" --hotplug-d "$hd" "$usbif"
        grep -qxF "not run: $hd/usb/15-nobody.hotplug: not owned by root (mode 0755, uid 65534)" "$tmp/out" ||
                fail "a script not owned by root: $(cat "$tmp/out")"
        rm "$hd/usb/15-nobody.hotplug"
        echo "ok: a script not owned by root is not run"
else
        echo "skipped: a script not owned by root (needs root)"
fi

# A directory others can write runs nothing below it, and says so.
chmod 0777 "$hd/default"
run 0 --config "$empty" --hotplug-d "$hd" "$usbif"
grep -qxF "not run: $hd/default: writable by group or others (mode 0777, uid $uid)" "$tmp/out" ||
        fail "a directory others can write: $(cat "$tmp/out")"
! grep -q "^argv: $hd/default/" "$tmp/out" || fail "ran from a directory others can write: $(cat "$tmp/out")"
chmod 0755 "$hd/default"
# A missing directory, and nothing at all to run.
run 0 --config "$empty" --hotplug-d "$tmp/none" "$usbif"
programs_are "a missing hotplug.d" <<EOF
agent: hotplug.d multiplexer over $tmp/none (from the command line)
not run: $tmp/none: does not exist
argv: none: no program in $tmp/none/usb or $tmp/none/default would run
EOF
echo "ok: refused and missing directories"

# --- the file, and the command line over it ----------------------------------------------------------
conf=$tmp/hotplugd.conf
printf 'hotplug-d = %s\n' "$hd" >"$conf"
chmod 0600 "$conf"
run 0 --config "$conf" "$usbif"
grep -qxF "agent: hotplug.d multiplexer over $hd (from $conf)" "$tmp/out" || fail "the file's hotplug-d: $(cat "$tmp/out")"
grep -qxF "argv: $hd/usb/10-good.hotplug usb" "$tmp/out" || fail "the file's hotplug-d: $(cat "$tmp/out")"
script "$tmp/agent" 0755
run 0 --config "$conf" --agent "$tmp/agent" "$usbif"
programs_are "--agent over the file's hotplug-d" <<EOF
agent: $tmp/agent (from the command line)
argv: $tmp/agent usb
EOF
printf 'agent = %s\n' "$tmp/agent" >"$conf"
run 0 --config "$conf" --hotplug-d "$hd" "$usbif"
grep -qxF "agent: hotplug.d multiplexer over $hd (from the command line)" "$tmp/out" ||
        fail "--hotplug-d over the file's agent: $(cat "$tmp/out")"
# A relative path is resolved, as hotplugd resolves it.
(cd "$tmp" && "$HOTPLUGCTL" test --sysfs "$sysfs" --config "$empty" --agent agent "$usbif") >"$tmp/out" ||
        fail "--agent agent (relative)"
grep -qxF "argv: $tmp/agent usb" "$tmp/out" || fail "a relative --agent: $(cat "$tmp/out")"
echo "ok: the file's agent and hotplug-d, the command line over them"

# --- nobody chose: the built-in agent, or the multiplexer the daemon falls back on --------------------
run 0 --config "$empty" "$usbif"
if [ -x "$DEFAULT_AGENT" ]; then
        programs_are "the built-in agent" <<EOF
agent: $DEFAULT_AGENT (from the default)
argv: $DEFAULT_AGENT usb
EOF
else
        grep -qxF "agent: hotplug.d multiplexer over $HOTPLUG_D ($DEFAULT_AGENT is not installed or not executable)" \
                "$tmp/out" || fail "no built-in agent: $(cat "$tmp/out")"
        ! grep -q "^argv: $DEFAULT_AGENT " "$tmp/out" || fail "shows an agent that would not run: $(cat "$tmp/out")"
fi
echo "ok: the default agent, as the daemon chooses it"

# --- agents that cannot run --------------------------------------------------------------------------
run 0 --config "$empty" --agent "$tmp/no-such-agent" "$usbif"
grep -qxF "not run: $tmp/no-such-agent: does not exist; hotplugd tries it for every event" "$tmp/out" ||
        fail "a missing agent: $(cat "$tmp/out")"
script "$tmp/agent-noexec" 0644
run 0 --config "$empty" --agent "$tmp/agent-noexec" "$usbif"
grep -qxF "not run: $tmp/agent-noexec: not executable; hotplugd tries it for every event (mode 0644, uid $uid)" \
        "$tmp/out" || fail "an agent not executable: $(cat "$tmp/out")"
# The daemon refuses to start with an untrusted agent; test says so and fails.
run 1 --config "$empty" --agent "$tmp/elsewhere/target" "$usbif"
grep -qF "hotplugctl: test: agent $tmp/elsewhere/target: " "$tmp/err" && grep -qF "refusing to run it" "$tmp/err" ||
        fail "an untrusted agent: $(cat "$tmp/err")"
echo "ok: agents that cannot run"

# --- which handler added which variable --------------------------------------------------------------
run 0 --config "$empty" --agent "$tmp/agent" "$usbif"
sed -n '/^variables added by handlers:/,/^environment:/p' "$tmp/out" | diff -u - <(cat <<EOF
variables added by handlers:
  PHYSDEVBUS by physdev
  PHYSDEVDRIVER by physdev
  DEVICE by usb
environment:
EOF
) >"$tmp/diff" || fail "handler additions: $(cat "$tmp/diff")"
grep -qxF "  DEVICE=/dev/bus/usb/001/003" "$tmp/out" || fail "DEVICE not in the environment: $(cat "$tmp/out")"
run 0 --config "$empty" --agent "$tmp/agent" --usb-device-path=proc "$usbif"
grep -qxF "  DEVICE=/proc/bus/usb/001/003" "$tmp/out" || fail "DEVICE with usb-device-path=proc: $(cat "$tmp/out")"
run 0 --config "$empty" --agent "$tmp/agent" --filter-policy "usb=handlers" \
        "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0001/input/input5" --input-strip-quotes
grep -qxF "  NAME by input" "$tmp/out" || fail "input's NAME: $(cat "$tmp/out")"
echo "ok: the handler of each added variable"
echo "PASS"
