#!/bin/bash
# systemd-analyze verify on the generated units: any warning fails.
#
# The installed units name @sbindir@/hotplugd and @bindir@/hotplugctl, which
# need not exist yet, and systemd-analyze checks that they do; so verify a
# copy of the generated files where only those two paths point at the built
# binaries.  The man pages in Documentation= are looked up in a temporary
# MANPATH holding ours.
#
# Environment: UNIT_DIR (generated units), SBINDIR, BINDIR, RUNDIR (configured),
# HOTPLUGD, HOTPLUGCTL (built binaries), SRCDIR.
set -eu

if ! command -v systemd-analyze >/dev/null; then
        echo "SKIP: systemd-analyze is not installed"
        exit 77
fi

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

tmp=$(mktemp -d /tmp/hotplugd-verify.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

UNITS="hotplugd.service hotplugd.socket hotplugd-control.socket hotplugd-coldplug.service hotplugd-settle.service"
for u in $UNITS; do
        [ -f "$UNIT_DIR/$u" ] || fail "$UNIT_DIR/$u was not generated"
        if grep -n '@[A-Z_]*@' "$UNIT_DIR/$u"; then
                fail "$u: unsubstituted template variable"
        fi
        sed -e "s|=$SBINDIR/hotplugd\\b|=$HOTPLUGD|" -e "s|=$BINDIR/hotplugctl\\b|=$HOTPLUGCTL|" \
                "$UNIT_DIR/$u" >"$tmp/$u"
done

grep -qx "ExecStart=$SBINDIR/hotplugd --handover-file=$RUNDIR/handover" "$UNIT_DIR/hotplugd.service" ||
        fail "ExecStart= does not run $SBINDIR/hotplugd with its handover file in $RUNDIR"
grep -qx "ExecStart=$HOTPLUGD --handover-file=$RUNDIR/handover" "$tmp/hotplugd.service" ||
        fail "ExecStart= was not redirected to the build"
grep -qx "ExecReload=$HOTPLUGCTL reload" "$tmp/hotplugd.service" || fail "ExecReload= was not redirected"
grep -qx "ListenNetlink=kobject-uevent 1" "$tmp/hotplugd.socket" || fail "socket does not listen on group 1"
grep -qx "Type=notify" "$tmp/hotplugd.service" || fail "service is not Type=notify"
grep -qx "ListenSequentialPacket=$RUNDIR/control" "$tmp/hotplugd-control.socket" ||
        fail "the control socket unit does not listen on $RUNDIR/control"
grep -qxF "ExecStart=$HOTPLUGCTL trigger --settle --skip-handled --timeout=\${HOTPLUGD_COLDPLUG_TIMEOUT}" \
        "$tmp/hotplugd-coldplug.service" || fail "coldplug does not run hotplugctl trigger --settle with its bound"
grep -qx "Environment=HOTPLUGD_COLDPLUG_TIMEOUT=120" "$tmp/hotplugd-coldplug.service" ||
        fail "coldplug's bound HOTPLUGD_COLDPLUG_TIMEOUT is not set (120)"
# Coldplug stands aside where udevd's runs: ordered after it, and its
# ExecCondition= exits 0 (run) only when systemctl says it is not active.
# Run the condition's command line against a stub systemctl for each answer.
grep -q "^After=.*\bsystemd-udev-trigger\.service\b" "$tmp/hotplugd-coldplug.service" ||
        fail "coldplug is not ordered after systemd-udev-trigger.service"
cond=$(sed -n 's/^ExecCondition=//p' "$tmp/hotplugd-coldplug.service")
[ -n "$cond" ] || fail "coldplug has no ExecCondition="
mkdir "$tmp/stub"
for answer in 0:1:active 3:0:inactive 4:0:no-such-unit 1:0:failed; do
        IFS=: read -r st want what <<<"$answer"
        printf '#!/bin/sh\necho "$*" >"%s/stub/args"\nexit %s\n' "$tmp" "$st" >"$tmp/stub/systemctl"
        chmod 755 "$tmp/stub/systemctl"
        rc=0
        eval "PATH=$tmp/stub:/usr/bin:/bin $cond" || rc=$?
        [ "$rc" = "$want" ] || fail "coldplug's ExecCondition= exits $rc when udev's trigger is $what, not $want"
        [ "$(cat "$tmp/stub/args")" = "--quiet is-active systemd-udev-trigger.service" ] ||
                fail "coldplug's ExecCondition= asked systemctl: $(cat "$tmp/stub/args")"
done
echo "ok: coldplug runs unless systemd-udev-trigger.service is active (stub: active, inactive, missing, failed)"
# Early boot: every unit without default dependencies (which would order it
# after sysinit.target), before sysinit.target or sockets.target.
for u in $UNITS; do
        grep -qx "DefaultDependencies=no" "$tmp/$u" || fail "$u keeps the default dependencies"
        grep -q "^Before=.*\b\(sysinit\|sockets\)\.target\b" "$tmp/$u" ||
                fail "$u is not ordered before sysinit.target or sockets.target"
done

mkdir -p "$tmp/man/man5" "$tmp/man/man8"
cp "$SRCDIR/man/hotplugd.conf.5" "$tmp/man/man5/"
cp "$SRCDIR/man/hotplugd.8" "$SRCDIR/man/hotplugctl.8" "$tmp/man/man8/"

# Documentation= is checked with man(1); without man-db it cannot be.
man=yes
if ! command -v man >/dev/null; then
        echo "note: man(1) is not installed, Documentation= not checked"
        man=no
fi

rc=0
out=$(cd "$tmp" && MANPATH="$tmp/man" systemd-analyze verify --man=$man \
        $(for u in $UNITS; do echo "$tmp/$u"; done) 2>&1) || rc=$?
if [ "$rc" != 0 ] || [ -n "$out" ]; then
        printf '%s\n' "$out" >&2
        fail "systemd-analyze verify: exit $rc, output above"
fi
echo "ok: systemd-analyze verify is silent on $UNITS"
