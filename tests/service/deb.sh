#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian package (debian/), built as a packager builds it: from the tree
# as 'git archive' exports it, unpacked as a release tarball unpacks
# (directories 0775), with dpkg-buildpackage -us -uc -b in a clean
# environment, twice:
#  - as root, as dpkg-buildpackage builds with Rules-Requires-Root: no, with
#    its tests (dh_auto_test: the suites that need neither root nor the
#    kernel, in a tree whose directories others of its group could write);
#  - as an ordinary user (nobody) owning the tree, with fakeroot for the
#    binary targets (--rules-requires-root: as a package without the field),
#    without the tests (nocheck: the root build ran them);
# (as a user other than root, only the user's build, with the tests); then,
# of the root build:
#  - hotplugd holds the programs, the units, the man pages, the bash and
#    zsh completions and the examples in /usr/share/doc/hotplugd/examples, and
#    /etc/hotplugd/hotplugd.conf as a conffile, the initramfs-tools hook and
#    scripts (and the update-initramfs trigger); the built hotplugd reads
#    /etc, not /usr/etc; the units are where systemd.pc says;
#  - its postinst enables every unit with an [Install] section, starts
#    hotplugd.service and never starts the coldplug; its prerm stops the
#    coldplug (and settle) units on removal;
#  - hotplugd-dev holds handler.h and hotplugd-handler.pc, with which the
#    example handler compiles;
#  - the autopkgtest (debian/tests/integration) passes with the package's
#    hotplugd and hotplugctl unpacked into a directory (nothing is installed);
#  - lintian reports no error and no warning;
# and the user's build holds the same files with the same modes, root's.
# The tree is the work tree as it is: its files, uncommitted changes
# included, are put into a temporary index (the repository's own index and
# work tree are left alone) whose tree 'git archive' exports; outside a git
# work tree, a copy given the modes 'git archive' gives.
# dpkg-buildpackage writes into the parent of the tree: nothing is written
# outside the temporary directory.  About 15 minutes on a busy 2-core
# machine (two builds, a test run, the autopkgtest's build and run).
#
# Environment: SRCDIR.
set -u

fail() {
        echo "FAIL: $*" >&2
        exit 1
}
for tool in dpkg-buildpackage dh lintian fakeroot; do
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
root=
if [ "$(id -u)" = 0 ]; then
        command -v setpriv >/dev/null || fail "setpriv (util-linux) is needed"
        root=1
fi

T=$(mktemp -d /tmp/hotplugd-deb.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"

# ---- the tree, as 'git archive' exports it ------------------------------------------------
if git -C "$SRCDIR" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        ix=(env GIT_INDEX_FILE="$T/index" git -C "$SRCDIR")
        git -C "$SRCDIR" ls-files -z -co --exclude-standard >"$T/files" &&
                "${ix[@]}" read-tree HEAD &&
                "${ix[@]}" update-index -z --add --remove --stdin <"$T/files" &&
                tree=$("${ix[@]}" write-tree) &&
                git -C "$SRCDIR" archive --prefix=hotplugd/ -o "$T/src.tar" "$tree" || fail "cannot export the tree"
else
        tar -C "$SRCDIR" --exclude='./build*' --exclude=./.git --owner=0 --group=0 --numeric-owner \
                --mode='a+rX,ug+w,o-w' --transform='s,^\.,hotplugd,' -cf "$T/src.tar" . || fail "cannot copy the tree"
fi
chmod 644 "$T/src.tar"

ENV=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# build NAME [RUNNER...]: unpack the tree into $T/NAME/hotplugd with umask 002
# and build it there, as RUNNER runs commands; the log is $T/NAME/build.log.
build() {
        local name=$1 start=$SECONDS
        shift
        mkdir -m 0755 "$T/$name" && mkdir -m 0755 "$T/$name/home" || fail "cannot make $T/$name"
        [ $# = 0 ] || chown -R 65534:65534 "$T/$name"
        "$@" "${ENV[@]}" HOME="$T/$name/home" sh -c "cd '$T/$name' && umask 002 && tar -xf '$T/src.tar'" ||
                fail "$name: cannot unpack the tree"
        [ "$(stat -c %a "$T/$name/hotplugd/src")" = 775 ] ||
                fail "$name: src/ is mode $(stat -c %a "$T/$name/hotplugd/src"), not 0775 as unpacked from a release tarball"
        if [ $# = 0 ] && [ -n "$root" ]; then
                [ "$(stat -c %U "$T/$name/hotplugd/src")" = root ] || fail "$name: src/ is not root's"
        fi
        opts=() dbo="parallel=$(nproc)"
        if [ "$name" != root ]; then
                opts=(--rules-requires-root -rfakeroot)
                [ -z "$root" ] || dbo="$dbo nocheck"
        fi
        (cd "$T/$name/hotplugd" && "$@" "${ENV[@]}" HOME="$T/$name/home" DEB_BUILD_OPTIONS="$dbo" \
                dpkg-buildpackage -us -uc -b "${opts[@]}") >"$T/$name/build.log" 2>&1 ||
                { tail -n 60 "$T/$name/build.log" >&2; fail "$name: dpkg-buildpackage failed"; }
        if [[ $dbo != *nocheck* ]]; then
                tests=$(grep -E '^Ok: +[0-9]+' "$T/$name/build.log" | tail -n 1 | tr -s ' ')
                [ -n "$tests" ] || { tail -n 60 "$T/$name/build.log" >&2; fail "$name: dh_auto_test ran no tests"; }
                tests="tested: $tests, $(grep -E '^Skipped: +[0-9]+' "$T/$name/build.log" | tail -n 1 | tr -s ' ')"
        else
                tests="not tested"
        fi
        echo "$name: built ($tests) in $((SECONDS - start)) s"
}

start=$SECONDS
if [ -n "$root" ]; then
        build root
        build user "${NOBODY[@]}"
        B=$T/root
else
        build user
        B=$T/user
fi
deb=$(echo "$B"/hotplugd_*.deb)
dev=$(echo "$B"/hotplugd-dev_*.deb)
[ -f "$deb" ] && [ -f "$dev" ] || fail "no hotplugd and hotplugd-dev packages in $B: $(ls "$B")"

# ---- hotplugd -----------------------------------------------------------------------------
dpkg-deb -x "$deb" "$T/x" && dpkg-deb -e "$deb" "$T/x/DEBIAN" || fail "cannot unpack $deb"
for f in usr/sbin/hotplugd usr/bin/hotplugctl usr/libexec/hotplugd/modalias.hotplug \
        usr/share/doc/hotplugd/examples/log-agent usr/share/initramfs-tools/hooks/hotplugd \
        usr/share/initramfs-tools/scripts/init-top/hotplugd usr/share/initramfs-tools/scripts/init-premount/hotplugd \
        usr/share/initramfs-tools/scripts/init-bottom/hotplugd; do
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
grep -qx 'activate-noawait update-initramfs' "$T/x/DEBIAN/triggers" ||
        fail "hotplugd does not trigger update-initramfs: $(cat "$T/x/DEBIAN/triggers" 2>&1)"
grep -q '^copy_exec /usr/sbin/hotplugd$' "$T/x/usr/share/initramfs-tools/hooks/hotplugd" ||
        fail "the initramfs hook does not copy /usr/sbin/hotplugd"
grep -qx /etc/hotplugd/hotplugd.conf "$T/x/DEBIAN/conffiles" || fail "hotplugd.conf is not a conffile"
grep -qx 'hotplug-dir = /etc/hotplug' "$T/x/etc/hotplugd/hotplugd.conf" || fail "hotplugd.conf does not set hotplug-dir"
"$T/x/usr/sbin/hotplugd" --check-config --config "$T/x/etc/hotplugd/hotplugd.conf" >"$T/check.out" 2>&1 ||
        fail "the packaged configuration does not pass --check-config: $(cat "$T/check.out")"
zcat "$T/x/usr/share/man/man8/hotplugd.8.gz" | grep -q @SYSCONFDIR@ && fail "hotplugd.8 holds @SYSCONFDIR@"
"$T/x/usr/sbin/hotplugd" --help | grep -q -- '--config=FILE.*/etc/hotplugd/hotplugd.conf' ||
        fail "the packaged hotplugd does not read /etc/hotplugd/hotplugd.conf: $("$T/x/usr/sbin/hotplugd" --help | grep -- --config)"

unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
[ -d "$T/x$unitdir" ] || fail "hotplugd installs no systemd units in $unitdir (systemd.pc's): $(cd "$T/x" && find . -name '*.service')"
for in in "$SRCDIR"/systemd/*.in; do
        u=$(basename "$in" .in)
        [ -f "$T/x$unitdir/$u" ] || fail "hotplugd lacks the unit $u"
        if grep -q '^\[Install\]' "$in"; then
                grep -q "deb-systemd-helper enable '$u'" "$T/x/DEBIAN/postinst" || fail "postinst does not enable $u"
        fi
done
grep -q "deb-systemd-invoke .*'hotplugd.service'" "$T/x/DEBIAN/postinst" || fail "postinst does not start hotplugd.service"
grep "deb-systemd-invoke" "$T/x/DEBIAN/postinst" | grep -q coldplug && fail "postinst starts the coldplug"
grep "deb-systemd-invoke" "$T/x/DEBIAN/postinst" | grep -q 'restart.*socket' && fail "postinst restarts a socket"
for u in hotplugd-coldplug.service hotplugd-settle.service; do
        grep -q "deb-systemd-invoke stop .*$u" "$T/x/DEBIAN/prerm" || fail "prerm does not stop $u on removal"
done

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

# ---- the autopkgtest, with the package's programs -----------------------------------------
grep -qx 'Tests: integration' "$B/hotplugd/debian/tests/control" || fail "debian/tests/control does not name integration"
mkdir "$T/autopkgtest"
t0=$SECONDS
(cd "$B/hotplugd" && "${ENV[@]}" HOME="$T/autopkgtest" AUTOPKGTEST_TMP="$T/autopkgtest" \
        HOTPLUGD="$T/x/usr/sbin/hotplugd" HOTPLUGCTL="$T/x/usr/bin/hotplugctl" debian/tests/integration) \
        >"$T/autopkgtest.log" 2>&1 || { tail -n 60 "$T/autopkgtest.log" >&2; fail "the autopkgtest failed"; }
echo "autopkgtest: $(grep -E '^[0-9]+ passed' "$T/autopkgtest.log" | tr '\n' ';') in $((SECONDS - t0)) s"

# ---- the user's build: the same files, root's ---------------------------------------------
if [ -n "$root" ]; then
        for p in hotplugd hotplugd-dev; do
                a=$(dpkg-deb -c "$T"/root/${p}_*.deb | awk '{print $1, $2, $6}' | sort)
                b=$(dpkg-deb -c "$T"/user/${p}_*.deb | awk '{print $1, $2, $6}' | sort)
                [ "$a" = "$b" ] || fail "$p differs between the root and the user build: $(diff <(echo "$a") <(echo "$b") | head)"
        done
        dpkg-deb -c "$T"/user/hotplugd_*.deb | awk '$2 != "root/root"' | grep . &&
                fail "the user's build holds files that are not root's"
fi

# ---- lintian ------------------------------------------------------------------------------
lintian --pedantic -I "$B"/hotplugd_*.changes >"$T/lintian.log" 2>&1
sed 's/^/lintian: /' "$T/lintian.log"
grep -q '^[EW]: ' "$T/lintian.log" && fail "lintian reports errors or warnings"
echo "ok: packages built, tested and checked in $((SECONDS - start)) s"
