#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian package (debian/): built with dpkg-buildpackage -us -uc -b from
# a copy of the source tree in a temporary directory (dpkg-buildpackage
# writes into the parent of the tree: nothing is written outside it), then:
#  - hotplugd holds the programs, the units, the man pages, the bash and
#    zsh completions and the examples in /usr/share/doc/hotplugd/examples, and
#    /etc/hotplugd/hotplugd.conf as a conffile; the built hotplugd reads
#    /etc, not /usr/etc;
#  - its postinst enables every unit with an [Install] section, starts
#    hotplugd.service and never starts the coldplug;
#  - hotplugd-dev holds handler.h and hotplugd-handler.pc, with which the
#    example handler compiles;
#  - lintian reports no error and no warning.
# About 2-3 minutes on a busy 2-core machine.
#
# Environment: SRCDIR.
set -u

fail() {
        echo "FAIL: $*" >&2
        exit 1
}
for tool in dpkg-buildpackage dh lintian; do
        if ! command -v "$tool" >/dev/null; then
                echo "SKIP: $tool is not installed (.ci/deps installs the package build's tools)"
                exit 77
        fi
done
cd "$SRCDIR" || fail "no SRCDIR"
if ! missing=$(dpkg-checkbuilddeps 2>&1); then
        echo "SKIP: build dependencies missing: $missing"
        exit 77
fi

T=$(mktemp -d /tmp/hotplugd-deb.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/src"
# The tree as it is (uncommitted changes included), without build directories.
if git -C "$SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git -C "$SRCDIR" ls-files -co --exclude-standard -z | tar -C "$SRCDIR" --null -T - -cf - | tar -xf - -C "$T/src"
else
        tar -C "$SRCDIR" --exclude='./build*' -cf - . | tar -xf - -C "$T/src"
fi || fail "cannot copy the source tree"

start=$SECONDS
(cd "$T/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 ||
        { tail -n 40 "$T/build.log" >&2; fail "dpkg-buildpackage failed"; }
echo "built in $((SECONDS - start)) s"
deb=$(echo "$T"/hotplugd_*.deb)
dev=$(echo "$T"/hotplugd-dev_*.deb)
[ -f "$deb" ] && [ -f "$dev" ] || fail "no hotplugd and hotplugd-dev packages in $T: $(ls "$T")"

# ---- hotplugd -----------------------------------------------------------------------------
dpkg-deb -x "$deb" "$T/x" && dpkg-deb -e "$deb" "$T/x/DEBIAN" || fail "cannot unpack $deb"
for f in usr/sbin/hotplugd usr/bin/hotplugctl usr/libexec/hotplugd/modalias.hotplug \
        usr/share/doc/hotplugd/examples/log-agent; do
        [ -x "$T/x/$f" ] || fail "hotplugd lacks the executable /$f"
done
for f in etc/hotplugd/hotplugd.conf usr/share/doc/hotplugd/examples/handler-example.c \
        usr/share/doc/hotplugd/copyright usr/share/bash-completion/completions/hotplugctl \
        usr/share/zsh/vendor-completions/_hotplugctl \
        usr/share/man/man8/hotplugd.8.gz usr/share/man/man8/hotplugctl.8.gz \
        usr/share/man/man5/hotplugd.conf.5.gz usr/share/man/man3/hotplugd-handler.3.gz; do
        [ -f "$T/x/$f" ] || fail "hotplugd lacks /$f"
done
[ -d "$T/x/etc/hotplug.d/default" ] || fail "hotplugd lacks /etc/hotplug.d/default"
[ ! -e "$T/x/usr/include" ] || fail "hotplugd holds headers (hotplugd-dev's)"
grep -qx /etc/hotplugd/hotplugd.conf "$T/x/DEBIAN/conffiles" || fail "hotplugd.conf is not a conffile"
grep -qx 'hotplug-dir = /etc/hotplug' "$T/x/etc/hotplugd/hotplugd.conf" || fail "hotplugd.conf does not set hotplug-dir"
"$T/x/usr/sbin/hotplugd" --check-config --config "$T/x/etc/hotplugd/hotplugd.conf" >"$T/check.out" 2>&1 ||
        fail "the packaged configuration does not pass --check-config: $(cat "$T/check.out")"
zcat "$T/x/usr/share/man/man8/hotplugd.8.gz" | grep -q @SYSCONFDIR@ && fail "hotplugd.8 holds @SYSCONFDIR@"
"$T/x/usr/sbin/hotplugd" --help | grep -q -- '--config=FILE.*/etc/hotplugd/hotplugd.conf' ||
        fail "the packaged hotplugd does not read /etc/hotplugd/hotplugd.conf: $("$T/x/usr/sbin/hotplugd" --help | grep -- --config)"

unitdir=$(echo "$T"/x/lib/systemd/system "$T"/x/usr/lib/systemd/system | tr ' ' '\n' | while read -r d; do [ -d "$d" ] && echo "$d"; done | head -n 1)
[ -n "$unitdir" ] || fail "hotplugd installs no systemd units"
for in in "$SRCDIR"/systemd/*.in; do
        u=$(basename "$in" .in)
        [ -f "$unitdir/$u" ] || fail "hotplugd lacks the unit $u"
        if grep -q '^\[Install\]' "$in"; then
                grep -q "deb-systemd-helper enable '$u'" "$T/x/DEBIAN/postinst" || fail "postinst does not enable $u"
        fi
done
grep -q "deb-systemd-invoke .*'hotplugd.service'" "$T/x/DEBIAN/postinst" || fail "postinst does not start hotplugd.service"
grep "deb-systemd-invoke" "$T/x/DEBIAN/postinst" | grep -q coldplug && fail "postinst starts the coldplug"
grep "deb-systemd-invoke" "$T/x/DEBIAN/postinst" | grep -q 'restart.*socket' && fail "postinst restarts a socket"

# ---- hotplugd-dev -------------------------------------------------------------------------
dpkg-deb -x "$dev" "$T/d" || fail "cannot unpack $dev"
[ -f "$T/d/usr/include/hotplugd/handler.h" ] || fail "hotplugd-dev lacks handler.h"
pc=$(echo "$T"/d/usr/lib/*/pkgconfig/hotplugd-handler.pc)
[ -f "$pc" ] || fail "hotplugd-dev lacks hotplugd-handler.pc"
cflags=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$T/d pkg-config --cflags hotplugd-handler) ||
        fail "pkg-config cannot read hotplugd-handler.pc"
# shellcheck disable=SC2086
cc $cflags -shared -fPIC -o "$T/handler.so" "$T/x/usr/share/doc/hotplugd/examples/handler-example.c" ||
        fail "the example handler does not compile against hotplugd-dev"

# ---- lintian ------------------------------------------------------------------------------
lintian --pedantic -I "$T"/hotplugd_*.changes >"$T/lintian.log" 2>&1
sed 's/^/lintian: /' "$T/lintian.log"
grep -q '^[EW]: ' "$T/lintian.log" && fail "lintian reports errors or warnings"
echo "ok: packages built and checked in $((SECONDS - start)) s"
