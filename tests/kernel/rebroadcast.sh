#!/bin/bash
# --rebroadcast GROUP: each processed event is re-sent in kernel format on
# GROUP only after its agent finished, exactly once; never on group 1.
. "$(dirname "$0")/lib.sh"
t_require_root
t_make_agent 300
GROUP=23
"$UEVENT_LISTEN" $GROUP 20 >"$T_DIR/heard" 2>"$T_DIR/listen.err" &
LPID=$!
t_on_exit "kill $LPID"
t_wait_for 5 grep -q ready "$T_DIR/listen.err" || t_fail "listener did not start"
t_start_daemon --agent "$T_AGENT" --all --rebroadcast $GROUP
prefix=$(t_uuid_prefix)
for i in 1 2 3 4 5; do echo "change $prefix-00000000000$i" >/sys/class/net/lo/uevent; done
t_wait_for 15 sh -c "[ \$(grep -c ' $prefix' $T_DIR/heard) -ge 5 ]" || t_fail "rebroadcast heard $(grep -c " $prefix" "$T_DIR/heard") of 5"
sleep 0.5
for i in 1 2 3 4 5; do
        u=$prefix-00000000000$i
        run=$(t_run_with "SYNTH_UUID=$u") || t_fail "no agent run for $u"
        end=$(t_field "$run" end)
        lines=$(grep -c " $u\$" "$T_DIR/heard")
        [ "$lines" = 1 ] || t_fail "$u heard $lines times on group $GROUP"
        heard=$(grep " $u\$" "$T_DIR/heard" | cut -d' ' -f1)
        [ "$heard" -ge "$end" ] || t_fail "$u was rebroadcast $(((end - heard) / 1000)) us before its agent finished"
        port=$(grep " $u\$" "$T_DIR/heard" | cut -d' ' -f2)
        [ "$port" = "$T_DAEMON_PID" ] || [ "$port" != 0 ] || t_fail "rebroadcast claims to come from the kernel"
done
echo "ok: 5 events rebroadcast on group $GROUP once each, each after its agent finished"
"$HOTPLUGD" --rebroadcast 1 --dry-run 2>"$T_DIR/g1.err" && t_fail "group 1 accepted"
grep -q -- "--rebroadcast must be a number 2\.\.32" "$T_DIR/g1.err" || t_fail "group 1 refusal not explained"
echo "ok: group 1 refused"
