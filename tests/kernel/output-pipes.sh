#!/bin/bash
# Agents' output pipes are kept from one run to the next: a run whose agent
# wrote a line and exited gives its pipe back, even when the pipe's
# readiness is still pending in the event loop after the last read emptied
# it (such a pipe was once closed and a new one made for the next run).  An
# idle pipe that a process outside the agent's process group writes into
# later is closed unread: its bytes belong to no event.
. "$(dirname "$0")/lib.sh"
t_require_root
stray=$(t_uuid)
cat >"$T_DIR/output-agent" <<A
#!/bin/sh
[ -n "\$SYNTH_UUID" ] || exit 0
if [ "\$SYNTH_UUID" = "$stray" ]; then
        # Out of the agent's process group before the agent exits, so the
        # daemon takes the pipe back as idle; written into 0.3 s later.
        setsid sh -c 'touch "$T_DIR/detached"; sleep 0.3; echo "late \$SYNTH_UUID"; touch "$T_DIR/late"' &
        while [ ! -e "$T_DIR/detached" ]; do sleep 0.01; done
fi
echo "\$SYNTH_UUID"
echo "\$SYNTH_UUID" >>"$T_DIR/ran"
exit 0
A
chmod 755 "$T_DIR/output-agent"
t_start_daemon --agent "$T_DIR/output-agent" --all --log-level=debug

closed="output pipe written to after its agent exited; closed"
# Agents of several devices at once keep the daemon busy, so that an
# agent's exit and its last write are often seen in the same wakeup.
devs=(lo)
for i in 0 1 2; do
        t_veth "hpo$$$i"
        devs+=("hpo$$$i" "hpo$$${i}p")
done
n=0
uuids=()
for ((round = 0; round < 6; round++)); do
        for dev in "${devs[@]}"; do
                u=$(t_uuid)
                uuids+=("$u")
                echo "change $u" >"/sys/class/net/$dev/uevent"
                n=$((n + 1))
        done
done
t_settle || t_fail "the daemon did not settle"
for u in "${uuids[@]}"; do
        grep -qx "$u" "$T_DIR/ran" || t_fail "the event of $u did not run"
        grep -q "output-agent: $u\$" "$T_LOG" || t_fail "the output line of $u was not logged"
done
if grep -q "$closed" "$T_LOG"; then
        t_fail "$(grep -c "$closed" "$T_LOG") of $n output pipes closed although nothing wrote into them after their agent"
fi
echo "ok: $n runs logged their output and gave their pipes back"

echo "change $stray" >/sys/class/net/lo/uevent
t_wait_for "$T_IDLE" test -e "$T_DIR/late" || t_fail "the stray writer did not write"
t_wait_for "$T_IDLE" grep -q "$closed" "$T_LOG" || t_fail "an idle pipe written into was not closed"
grep -q "late $stray" "$T_LOG" && t_fail "a stray write into an idle pipe reached the log"
grep -q "output-agent: $stray\$" "$T_LOG" || t_fail "the stray agent's own line was not logged"
echo "ok: an idle pipe written into by a stray process was closed unread"

after=$(t_uuid)
echo "change $after" >/sys/class/net/lo/uevent
t_settle || t_fail "the daemon did not settle"
grep -q "output-agent: $after\$" "$T_LOG" || t_fail "the next run's output was not logged"
t_stop_daemon
echo "ok: the next run logged its output"
