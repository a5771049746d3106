#!/bin/bash
# hotplugd --check-config and --config, end to end: exit codes, the
# FILE:LINE: reason message, and that the command line overrides the file
# in the daemon that actually runs (read back from its start-up log line).
#
# Environment: HOTPLUGD (the built binary).
set -u

tmp=$(mktemp -d /tmp/hotplugd-conf.XXXXXX)
daemon=
cleanup() {
        [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# expect STATUS STDERR-SUBSTRING ARGS...
expect() {
        local want=$1 msg=$2 rc=0
        shift 2
        "$HOTPLUGD" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" = "$want" ] || fail "hotplugd $*: exit $rc, expected $want; stderr: $(cat "$tmp/err")"
        if [ -n "$msg" ] && ! grep -qF -- "$msg" "$tmp/err"; then
                fail "hotplugd $*: stderr lacks '$msg': $(cat "$tmp/err")"
        fi
        echo "ok: hotplugd $* -> $rc"
}

conf=$tmp/hotplugd.conf
printf '# test\nordering = strict\nmax-children = 3\ntimeout = 9\n' >"$conf"
chmod 0644 "$conf"
expect 0 "" --check-config --config "$conf"
grep -qF "$conf: valid" "$tmp/out" || fail "no 'valid' on stdout"

printf 'ordering = strict\n\nmax-children = lots\n' >"$conf"
expect 2 "hotplugd: $conf:3: 'max-children' must be a number 1..2048: 'lots'" --check-config -c "$conf"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "more than one line on stderr"

printf 'timeout = 5\ntimeout = 6\n' >"$conf"
expect 2 "$conf:2: duplicate key 'timeout' (first set on line 1)" --check-config --config "$conf"

# A broken file stops the daemon itself from starting, with status 2.
expect 2 "$conf:2: duplicate key" --config "$conf" --dry-run

expect 2 "$tmp/absent.conf: cannot open" --check-config --config "$tmp/absent.conf"
printf 'timeout = 5\n' >"$conf"
chmod 0666 "$conf"
expect 2 "writable by group or others" --check-config --config "$conf"
chmod 0644 "$conf"

# Usage errors stay usage errors.
expect 64 "" --check-config --no-such-option
expect 64 "" --check-config --max-children 0

# The default file may be absent (only checkable when it is).
default=$("$HOTPLUGD" --help | sed -n 's/.*--config=FILE.*(default \(.*\)).*/\1/p')
[ -n "$default" ] || fail "--help does not name the default configuration file"
if [ ! -e "$default" ]; then
        expect 0 "" --check-config
        grep -qF "$default: absent, built-in defaults" "$tmp/out" || fail "no 'absent' on stdout"
else
        echo "note: $default exists, not testing its absence"
fi

# Precedence in a running daemon: the file sets ordering and max-children,
# the command line overrides max-children only.  No control socket: as root
# the default one would be the machine's own (this test runs in a plain
# `meson test`, which a packager may run as root).
printf 'ordering = strict\nmax-children = 3\nagent = /file/agent\n' >"$conf"
"$HOTPLUGD" --config "$conf" --max-children 5 --dry-run --log-target stderr --control-socket= >"$tmp/log" 2>&1 &
daemon=$!
for _ in $(seq 100); do
        grep -q "listening:" "$tmp/log" && break
        kill -0 "$daemon" 2>/dev/null || break
        sleep 0.05
done
line=$(grep "listening:" "$tmp/log") || fail "daemon did not start: $(cat "$tmp/log")"
case $line in
*"agent /file/agent, ordering strict, max 5 children"*) echo "ok: file and command line merged: $line" ;;
*) fail "wrong effective configuration: $line" ;;
esac
kill "$daemon"
wait "$daemon"
rc=$?
daemon=
[ "$rc" = 0 ] || fail "daemon exit $rc after SIGTERM"
