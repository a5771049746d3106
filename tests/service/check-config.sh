#!/bin/bash
# hotplugd --check-config and --config, end to end: exit codes, the
# FILE:LINE: reason message, warnings about an agent that cannot run,
# usage errors that name the option and point at --help, and that the
# command line overrides the file in the daemon that actually runs (read
# back from its start-up log line).
#
# Environment: HOTPLUGD (the built binary).
set -u
# Files made here have the modes the trust rules expect, whatever the caller's umask.
umask 022

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

# Usage errors stay usage errors, name the option and the value, and point at --help.
expect 64 "hotplugd: unknown option '--no-such-option'" --check-config --no-such-option
grep -qxF "Try 'hotplugd --help' for more information." "$tmp/err" || fail "no --help hint: $(cat "$tmp/err")"
expect 64 "hotplugd: --max-children must be a number 1..2048: '0'" --check-config --max-children 0
grep -qxF "Try 'hotplugd --help' for more information." "$tmp/err" || fail "no --help hint: $(cat "$tmp/err")"
expect 64 "hotplugd: option '--no-resync' takes no value" --check-config --no-resync=yes

# The command line takes what the file takes: sizes with suffixes, booleans
# in any spelling and case, and --no-NAME to undo a file's yes.
printf 'rcvbuf = 16M\nresync = YES\nall = On\n' >"$conf"
expect 0 "" --check-config --config "$conf" --rcvbuf=16m --no-resync --all=FALSE --firmware-loader=1
expect 64 "--rcvbuf must be a number 4096..2147483647, optionally followed by K, M or G (KiB, MiB, GiB): '16X'" \
        --check-config --config "$conf" --rcvbuf=16X
expect 64 "--rcvbuf must be a number 4096..2147483647, optionally followed by K, M or G (KiB, MiB, GiB): '9999999999999999999G'" \
        --check-config --config "$conf" --rcvbuf=9999999999999999999G
expect 64 "--resync must be yes, true, on, 1 or no, false, off, 0 (any case): 'maybe'" \
        --check-config --config "$conf" --resync=maybe
"$HOTPLUGD" --help | grep -qE '^ +--\[no-\]resync ' || fail "--help lacks --[no-]resync"
"$HOTPLUGD" --help | grep -qE '^ +--max-queue=N +events held at most \(1\.\.[0-9]+, default [0-9]+\)$' ||
        fail "--help lacks the range of --max-queue: $("$HOTPLUGD" --help | grep -- --max-queue)"

# --check-config and --verbose ask for something: no --no- form; a range is said once.
"$HOTPLUGD" --help >"$tmp/help"
! grep -q -- "--\[no-\]check-config\|--\[no-\]verbose" "$tmp/help" || fail "--help offers --no-check-config"
grep -qE '^ +--check-config +check' "$tmp/help" || fail "--help lacks --check-config: $(cat "$tmp/help")"
grep -qE '^  -v, --verbose +with --check-config' "$tmp/help" || fail "--help lacks -v: $(cat "$tmp/help")"
grep -qE -- '--rebroadcast=GROUP +re-send processed events on this netlink group \(2\.\.32\)$' "$tmp/help" ||
        fail "--rebroadcast's range: $(grep -- --rebroadcast "$tmp/help")"
! grep -E '\(([0-9]+\.\.[0-9]+)[^)]*\).*\(\1' "$tmp/help" && ! grep -E '[0-9]+\.\.[0-9]+.*\([0-9]+\.\.[0-9]+' "$tmp/help" ||
        fail "--help says a range twice"
expect 64 "hotplugd: unknown option '--no-check-config'" --no-check-config
expect 64 "hotplugd: --verbose goes with --check-config only" -v

# --check-config -v: every setting, its value and where it came from.
printf '#!/bin/sh\n' >"$tmp/agent"
chmod 0755 "$tmp/agent"
printf '# settings\nordering = strict\n\nmax-children = 3\nagent = %s\n' "$tmp/agent" >"$conf"
expect 0 "" --check-config -v --config "$conf" --max-children 5 --timeout=9 --dry-run
for want in "ordering strict # $conf:2" "max-children 5 # command line" "agent $tmp/agent # $conf:5" \
        "timeout 9 # command line" "kill-grace 5 # default" "dry-run yes # command line" "all no # default" \
        "hotplug-d (none) # default" "rebroadcast (none) # default" "config $conf # command line" \
        "speed 1 # default" "log-level info # default"; do
        grep -qxF "$want" "$tmp/out" || fail "--check-config -v lacks '$want': $(cat "$tmp/out")"
done
# One line per setting: every row of --help that sets something.
n_help=$("$HOTPLUGD" --help | grep -cE '^ +(-., )?--')
n_out=$(grep -c ' # ' "$tmp/out")
[ "$n_out" = $((n_help - 4)) ] || fail "--check-config -v: $n_out settings, --help lists $n_help options (4 ask for something)"
echo "ok: --check-config -v"

# A command-line option in the file is named as one.
printf 'dry-run = yes\n' >"$conf"
expect 2 "$conf:1: 'dry-run' is a command-line option only (--dry-run)" --check-config --config "$conf"

# The agent chosen (by the file or the command line): missing, not
# executable or not a file is an error naming the path and why (exit 2),
# although the daemon would start and try it for every event.  A missing
# hotplug.d or handler directory is a warning on stderr naming the path and
# why; the configuration is still valid (exit 0).
mkdir "$tmp/hotplug.d" "$tmp/handlers"
printf '#!/bin/sh\n' >"$tmp/agent"
chmod 0755 "$tmp/agent"
printf '#!/bin/sh\n' >"$tmp/not-exec"
chmod 0644 "$tmp/not-exec"
# warns CONF-LINE STDERR-LINE: check-config of a file holding CONF-LINE warns exactly STDERR-LINE.
warns() {
        printf '%s\n' "$1" >"$conf"
        expect 0 "$2" --check-config --config "$conf"
        grep -qF "$conf: valid" "$tmp/out" || fail "$1: not valid on stdout"
        [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$1: not one line on stderr: $(cat "$tmp/err")"
}
# refuses CONF-LINE STDERR-LINE: check-config of a file holding CONF-LINE exits 2 with exactly STDERR-LINE.
refuses() {
        printf '%s\n' "$1" >"$conf"
        expect 2 "$2" --check-config --config "$conf"
        [ "$(wc -l <"$tmp/err")" = 1 ] || fail "$1: not one line on stderr: $(cat "$tmp/err")"
}
refuses "agent = $tmp/absent" \
        "hotplugd: agent $tmp/absent does not exist: every event's agent would fail to start"
refuses "agent = $tmp/not-exec" \
        "hotplugd: agent $tmp/not-exec is not executable: every event's agent would fail to start"
refuses "agent = $tmp/hotplug.d" \
        "hotplugd: agent $tmp/hotplug.d is not a regular file: every event's agent would fail to start"
expect 2 "hotplugd: agent /nonexistent does not exist" --check-config --config "$conf" --agent=/nonexistent
warns "hotplug-d = $tmp/absent.d" \
        "hotplugd: warning: hotplug-d $tmp/absent.d does not exist: no program runs for any event"
warns "hotplug-d = $tmp/agent" \
        "hotplugd: warning: hotplug-d $tmp/agent is not a directory: no program runs for any event"
printf 'agent = %s\nhandler-dir = %s/absent.so.d\n' "$tmp/agent" "$tmp" >"$conf"
expect 0 "hotplugd: warning: handler-dir $tmp/absent.so.d does not exist: no external handler is loaded" \
        --check-config --config "$conf"
# Nothing to say when everything is there, and the command line's agent is the one checked.
printf 'agent = %s\nhandler-dir = %s/handlers\n' "$tmp/agent" "$tmp" >"$conf"
expect 0 "" --check-config --config "$conf"
[ ! -s "$tmp/err" ] || fail "warnings for a usable agent: $(cat "$tmp/err")"
expect 2 "hotplugd: agent $tmp/not-exec is not executable" --check-config --config "$conf" \
        --agent "$tmp/not-exec"
expect 0 "" --check-config --config "$conf" --hotplug-d "$tmp/hotplug.d"
[ ! -s "$tmp/err" ] || fail "warnings for a usable hotplug.d: $(cat "$tmp/err")"

# The agent passes the hotplug.d trust rule (the file and every directory
# above it owned by root or the daemon's user, not writable by group or
# others; a link's target alike): refused with status 2 by --check-config
# and by the daemon itself.  /tmp (root's, sticky) is a trusted parent.
mkdir -p "$tmp/open" "$tmp/trusted"
chmod 0777 "$tmp/open"
printf '#!/bin/sh\n' >"$tmp/open/agent"
chmod 0755 "$tmp/open/agent"
printf '#!/bin/sh\n' >"$tmp/trusted/gw-agent"
chmod 0775 "$tmp/trusted/gw-agent"
ln -s "$tmp/open/agent" "$tmp/trusted/link-agent"
expect 2 "hotplugd: agent $tmp/trusted/gw-agent: writable by group or others (mode 0775" \
        --check-config --config "$conf" --agent "$tmp/trusted/gw-agent"
expect 2 "hotplugd: agent $tmp/open/agent: in a directory others can write" \
        --check-config --config "$conf" --agent "$tmp/open/agent"
expect 2 "hotplugd: agent $tmp/trusted/link-agent: link target in a directory others can write" \
        --check-config --config "$conf" --agent "$tmp/trusted/link-agent"
# The path as given: a link in a directory others can write is refused though
# it leads to a trusted agent today (they could repoint it), and every error
# of the check refuses (a loop of links).
ln -s "$tmp/agent" "$tmp/open/link-to-trusted"
expect 2 "hotplugd: agent $tmp/open/link-to-trusted: in a directory others can write" \
        --check-config --config "$conf" --agent "$tmp/open/link-to-trusted"
ln -s loop-b "$tmp/trusted/loop-a"
ln -s loop-a "$tmp/trusted/loop-b"
expect 2 "hotplugd: agent $tmp/trusted/loop-a: cannot be checked (Too many levels of symbolic links)" \
        --check-config --config "$conf" --agent "$tmp/trusted/loop-a"
printf 'agent = %s\n' "$tmp/trusted/gw-agent" >"$conf"
expect 2 "hotplugd: agent $tmp/trusted/gw-agent: writable by group or others" --check-config --config "$conf"
expect 2 "hotplugd: agent $tmp/trusted/gw-agent: writable by group or others" --config "$conf" --dry-run \
        --control-socket= --log-target stderr
if [ "$(id -u)" = 0 ]; then
        printf '#!/bin/sh\n' >"$tmp/trusted/other-agent"
        chmod 0755 "$tmp/trusted/other-agent"
        chown 65534 "$tmp/trusted/other-agent"
        expect 2 "hotplugd: agent $tmp/trusted/other-agent: not owned by root (mode 0755, uid 65534)" \
                --check-config --config "$conf" --agent "$tmp/trusted/other-agent"
fi
chmod 0755 "$tmp/trusted/gw-agent"
expect 0 "" --check-config --config "$conf"
[ ! -s "$tmp/err" ] || fail "warnings for a trusted agent: $(cat "$tmp/err")"

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
