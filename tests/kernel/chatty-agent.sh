#!/bin/bash
# An agent flooding its output (exec yes) must not stall the daemon: it is
# still killed at --timeout, another device's event runs meanwhile, and its
# output lines are rate-limited with an "N lines suppressed" report (when
# the rate-limit window ends and at exit).
. "$(dirname "$0")/lib.sh"
t_require_root
d=hpc$$
flood=$(t_uuid)
cat >"$T_DIR/chatty-agent" <<A
#!/bin/sh
[ "\$SYNTH_UUID" = "$flood" ] && { touch "$T_DIR/flood-started"; exec yes; }
[ -n "\$SYNTH_UUID" ] && echo "\$SYNTH_UUID" >>"$T_DIR/ran"
exit 0
A
chmod 755 "$T_DIR/chatty-agent"
t_veth "$d"

# A daemon stuck reading the flood ignores SIGTERM: kill it before failing.
stuck() {
        kill -KILL "$T_DAEMON_PID" 2>/dev/null
        wait "$T_DAEMON_PID" 2>/dev/null
        T_DAEMON_PID=
        t_fail "$@"
}

t_start_daemon --agent "$T_DIR/chatty-agent" --all --timeout 7 --kill-grace 1
echo "change $flood" >/sys/class/net/lo/uevent
t_wait_for 20 test -e "$T_DIR/flood-started" || t_fail "flooding agent did not start"

# Another device's event runs while the flood goes on.
other=$(t_uuid)
echo "change $other" >"/sys/class/net/$d/uevent"
t_wait_for 10 grep -qx "$other" "$T_DIR/ran" 2>/dev/null || stuck "the other device's event did not run during the flood"
grep -q "timed out after" "$T_LOG" && t_fail "the other event ran only after the flooding agent's timeout"
echo "ok: another device's event ran during the flood"

# The flooding agent is killed at its timeout (progress: the log grows).
last=-1
while ! grep -q "chatty-agent net finished.*status=signal" "$T_LOG"; do
        size=$(stat -c %s "$T_LOG")
        [ "$size" != "$last" ] || stuck "the daemon made no progress for 10 s and the flooding agent was not killed"
        last=$size
        t_wait_for 10 grep -q "chatty-agent net finished.*status=signal" "$T_LOG" && break
done
grep -q "timed out after 7s" "$T_LOG" || t_fail "the flooding agent's timeout is not logged"
echo "ok: the flooding agent was killed at its timeout"

grep -E "[0-9]+ output lines? suppressed" "$T_LOG" | head -n 2 | sed 's/^/  /'
# One report when the first window (HP_OUTPUT_LOG_INTERVAL_USEC, 5 s) ended, one at exit.
n=$(grep -cE "[0-9]+ output lines? suppressed" "$T_LOG")
[ "$n" -ge 2 ] || t_fail "$n suppression lines in the log, expected one per window and one at exit"
logged=$(grep -c "chatty-agent: y$" "$T_LOG")
echo "  $logged output lines of the flooding agent logged"
[ "$logged" -le 1000 ] || t_fail "$logged output lines of the flooding agent logged: not rate-limited"
t_stop_daemon
echo "ok: output rate-limited, suppressed lines reported"
