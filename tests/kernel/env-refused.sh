#!/bin/bash
# Variables that change how programs are loaded or how shells behave never
# reach an agent, whatever the source.  A recording holding LD_PRELOAD,
# BASH_ENV, IFS, HOME, PATH and others is replayed for real (not --dry-run)
# into the recording agent: each event still runs, without those variables,
# and the log names each refused variable once per event with its SEQNUM
# and DEVPATH.  (A replay needs no root: the recording is the only source.)
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || t_skip "needs python3 to write the recording"
t_make_agent
REC=$T_DIR/hostile.rec
u1=$(t_uuid) u2=$(t_uuid) u3=$(t_uuid)
dp=/devices/virtual/net/lo

# A recording (format: hotplugctl(8), RECORDING FORMAT) of three datagrams.
u4=$(t_uuid)
python3 - "$REC" "$dp" "$u1" "$u2" "$u3" "$u4" <<'PY' || t_fail "cannot write the recording"
import struct, sys, zlib
path, dp, u1, u2, u3 = sys.argv[1:6]
def dgram(action, seq, extra):
    e = [f"{action}@{dp}", f"ACTION={action}", f"DEVPATH={dp}", "SUBSYSTEM=net"] + extra + [f"SEQNUM={seq}"]
    return "\0".join(e).encode() + b"\0"
events = [
    dgram("change", 4001, [f"SYNTH_UUID={u1}", "LD_PRELOAD=/nonexistent/hp-env-test.so",
                           "BASH_ENV=/nonexistent/hp-env-test.sh", "IFS=/", "KEEP_ME=yes"]),
    dgram("change", 4002, [f"SYNTH_UUID={u2}", "HOME=/nonexistent", "LD_LIBRARY_PATH=/nonexistent",
                           "PATH=/nonexistent", "GLIBC_TUNABLES=glibc.malloc.check=3", "TMPDIR=/nonexistent",
                           "MALLOC_CHECK_=3", "SHELLOPTS=xtrace", "PS4=$(id)", "INTERFACE=lo"]),
    dgram("change", 4003, [f"SYNTH_UUID={u3}", "INTERFACE=lo", "IFINDEX=1"]),
    dgram("change", 4004, ["SYNTH_UUID=" + sys.argv[6], "LUA_INIT=@/nonexistent/x.lua",
                           "JAVA_TOOL_OPTIONS=-javaagent:/nonexistent/x.jar", "_JAVA_OPTIONS=-Dx=1",
                           "PYTHONWARNINGS=error", "PYTHONINSPECT=1", "PYTHONBREAKPOINT=os.system",
                           "SSLKEYLOGFILE=/nonexistent/keys", "GIT_SSH_COMMAND=id", "LESSOPEN=|id %s",
                           "PHPRC=/nonexistent", "TCLLIBPATH=/nonexistent", "KRB5_CONFIG=/nonexistent",
                           "TERMINFO=/nonexistent", "ZDOTDIR=/nonexistent", "GEM_PATH=/nonexistent",
                           "LC_ALL=/nonexistent/locale", "LANG=../nonexistent", "LC_MESSAGES=C.UTF-8"]),
]
out = b"\x89HPDREC\n" + struct.pack("<HHI", 1, 16, 0)
for i, d in enumerate(events):
    payload = struct.pack("<QQ", 1700000000000000 + i, 1000000 + i) + d
    fr = struct.pack("<HHI", 1, 0, len(payload))
    crc = zlib.crc32(payload, zlib.crc32(fr))
    out += b"HPR\x1e" + fr + struct.pack("<I", crc) + payload
open(path, "wb").write(out)
PY

T_LOG=$T_DIR/replay.log
"$HOTPLUGD" --replay "$REC" --speed 0 --all --agent "$T_AGENT" --control-socket= --log-target=stderr \
        >"$T_LOG" 2>&1 || t_fail "replay exited $?"
grep -q "read to the end" "$T_LOG" || t_fail "replay did not reach the end"

# $1 SEQNUM, $2 key: the log lines naming that variable as refused for that event.
refused_lines() {
        grep -E "SEQNUM=$1 .*DEVPATH=$dp .*variable $2 refused" "$T_LOG" | wc -l
}

check_event() { # $1 uuid, $2 seqnum, $3... refused keys; sets F to the run file
        local u=$1 seq=$2 f k n
        shift 2
        n=$(t_count_runs_with "SYNTH_UUID=$u")
        [ "$n" = 1 ] || t_fail "SEQNUM=$seq ran $n times, not once"
        f=$(t_run_with "SYNTH_UUID=$u")
        [ "$(t_env_of "$f" SEQNUM)" = "$seq" ] || t_fail "SYNTH_UUID=$u ran with the wrong SEQNUM"
        [ "$(grep -c '^env:HOME=' "$f")" = 1 ] && [ "$(t_env_of "$f" HOME)" = / ] ||
                t_fail "SEQNUM=$seq: HOME is not exactly HOME=/: $(grep '^env:HOME=' "$f" | tr '\n' ' ')"
        [ "$(grep -c '^env:PATH=' "$f")" = 1 ] && [ "$(t_env_of "$f" PATH)" = /sbin:/bin:/usr/sbin:/usr/bin ] ||
                t_fail "SEQNUM=$seq: PATH is not the fixed one: $(grep '^env:PATH=' "$f" | tr '\n' ' ')"
        for k in "$@"; do
                case $k in HOME | PATH) ;; *)
                        ! grep -q "^env:$k=" "$f" || t_fail "SEQNUM=$seq: the agent got $(grep "^env:$k=" "$f")" ;;
                esac
                [ "$(refused_lines "$seq" "$k")" = 1 ] ||
                        t_fail "SEQNUM=$seq: $(refused_lines "$seq" "$k") log lines for refused $k, want 1"
        done
        [ "$(grep -E "SEQNUM=$seq .*variable [A-Za-z0-9_]+ refused" "$T_LOG" | wc -l)" = $# ] ||
                t_fail "SEQNUM=$seq: refused-variable lines other than for: $*"
        F=$f
}

check_event "$u1" 4001 LD_PRELOAD BASH_ENV IFS
[ "$(t_env_of "$F" KEEP_ME)" = yes ] || t_fail "SEQNUM=4001: an ordinary variable was lost"
check_event "$u2" 4002 HOME LD_LIBRARY_PATH PATH GLIBC_TUNABLES TMPDIR MALLOC_CHECK_ SHELLOPTS PS4
[ "$(t_env_of "$F" INTERFACE)" = lo ] || t_fail "SEQNUM=4002: an ordinary variable was lost"
check_event "$u3" 4003
check_event "$u4" 4004 LUA_INIT JAVA_TOOL_OPTIONS _JAVA_OPTIONS PYTHONWARNINGS PYTHONINSPECT PYTHONBREAKPOINT \
        SSLKEYLOGFILE GIT_SSH_COMMAND LESSOPEN PHPRC TCLLIBPATH KRB5_CONFIG TERMINFO ZDOTDIR GEM_PATH LC_ALL LANG
[ "$(t_env_of "$F" LC_MESSAGES)" = C.UTF-8 ] || t_fail "SEQNUM=4004: a locale name without a path was lost"
echo "ok: 4 replayed events ran; 28 refused variables kept from the agent, each logged once with SEQNUM and DEVPATH"
grep -m 2 "refused" "$T_LOG" | sed 's/^/  e.g. /'

# The first line of defence: a recording others could have written is not
# replayed to agents at all (the hotplug.d trust rule), only read by a dry run.
cp "$REC" "$T_DIR/open.rec" && chmod 0666 "$T_DIR/open.rec" || t_fail "cannot copy the recording"
rc=0
"$HOTPLUGD" --replay "$T_DIR/open.rec" --speed 0 --all --agent "$T_AGENT" --control-socket= --log-target=stderr \
        >"$T_DIR/open.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -qF "refusing to replay $T_DIR/open.rec to agents: writable by group or others" "$T_DIR/open.log" ||
        t_fail "replay of a 0666 recording: exit $rc: $(cat "$T_DIR/open.log")"
[ "$(t_count_runs_with "SYNTH_UUID=$u1")" = 1 ] || t_fail "the refused replay ran an agent"
echo "ok: a recording writable by others is refused before any agent runs"
