#!/bin/bash
# Descriptors run out: the running daemon's RLIMIT_NOFILE lowered to 32,
# then 40 control clients connect and stay.  Those past the limit are
# refused with a reason (an error reply, then the connection closed), not
# left waiting in the backlog while the daemon spins on a readable socket;
# a burst of real uevents meanwhile waits for descriptors for its agents'
# pipes and runs once the clients leave: none dropped, none counted as a
# failed agent, no crash.
. "$(dirname "$0")/lib.sh"
t_require_root
N=${FAULTS_EVENTS:-30}
CLIENTS=40
t_make_agent 0
f_devices
t_start_daemon --agent "$T_AGENT" "${F_FILTER[@]}"
prlimit --pid "$T_DAEMON_PID" --nofile=32:32 || f_unavailable "cannot set the daemon's RLIMIT_NOFILE"
echo "daemon descriptors open: $(ls /proc/"$T_DAEMON_PID"/fd | wc -l) of 32"

# The clients: connect, then wait for $T_DIR/release; then tell which were
# refused (a reply or EOF came) and which were served (nothing to read).
python3 - "$HOTPLUGCTL_SOCKET" "$CLIENTS" "$T_DIR/release" >"$T_DIR/clients" 2>&1 <<'PY' &
import os, socket, sys, time
path, n, release = sys.argv[1], int(sys.argv[2]), sys.argv[3]
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    socks.append(s)
print("connected", flush=True)
while not os.path.exists(release):
    time.sleep(0.05)
refused, served, why = 0, 0, set()
for s in socks:
    s.setblocking(False)
    try:
        data = s.recv(4096)
        refused += 1
        if data:
            why.add(data.decode(errors="replace").strip().replace("\n", " "))
    except BlockingIOError:
        served += 1
    s.close()
print("served", served, "refused", refused)
for w in why:
    print("reply:", w)
PY
clients=$!
t_on_exit "kill $clients"
# Progress here is what the daemon and the clients wrote: a daemon that
# spins on the listening socket (its CPU time) has not refused anyone.
_f_written() { stat -c %s "$T_LOG" "$T_DIR/clients" | tr '\n' ' '; }
until_progress "$T_IDLE" _f_written grep -q connected "$T_DIR/clients" ||
        t_fail "clients did not connect: $(cat "$T_DIR/clients")"
until_progress "$T_IDLE" _f_written grep -q "control client refused" "$T_LOG" ||
        t_fail "no client was refused (for $T_IDLE s nothing was written)"
prefix=$(t_uuid_prefix)
"$UEVENT_BURST" "$N" "$prefix" "${F_DEVS[@]}" || t_fail "burst failed"
# The events wait for descriptors (or run with pipes kept from before).
_f_started_or_waiting() { [ "$(t_count_runs_prefix "$prefix")" -gt 0 ] || grep -q "cannot start a process" "$T_LOG"; }
t_wait_for "$T_IDLE" _f_started_or_waiting || t_fail "the burst was neither run nor waiting"
kill -0 "$T_DAEMON_PID" || t_fail "the daemon died"
touch "$T_DIR/release"
t_wait_pid_exit "$clients" st || t_fail "the clients did not finish"
cat "$T_DIR/clients"
read -r _ served _ refused < <(grep "^served" "$T_DIR/clients")
[ "${refused:-0}" -gt 0 ] || t_fail "no client was refused"
grep -q "^reply: error errno=24 .*descriptor" "$T_DIR/clients" || t_fail "the refused clients were not told why"
[ $((served + refused)) = "$CLIENTS" ] || t_fail "$served served + $refused refused of $CLIENTS clients"
f_check_nothing_lost "$N" "$prefix"
grep -E "control client|control clients|cannot start|can be started" "$T_LOG"
echo "spawn retries: $(f_status spawn_retries)"
t_stop_daemon
echo "ok: RLIMIT_NOFILE 32: $served clients served, $refused refused with a reason; $N events ran once each"
