#!/bin/bash
# Variables that change how programs are loaded or how shells behave never
# reach an agent, whatever the source.  A recording holding LD_PRELOAD,
# BASH_ENV, IFS, HOME, PATH and others is replayed for real (not --dry-run)
# into the recording agent: each event still runs, without those variables,
# and the log names each refused variable once per event with its SEQNUM
# and DEVPATH.  Past the block list, an event from a recording keeps only
# the keys a kernel sends: GTK_MODULES, TZ, SSL_CERT_FILE and every other
# name no kernel sends are dropped, each logged once and counted.  (A replay
# needs no root: the recording is the only source.)
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || t_skip "needs python3 to write the recording"
t_make_agent
REC=$T_DIR/hostile.rec
u1=$(t_uuid) u2=$(t_uuid) u3=$(t_uuid)
dp=/devices/virtual/net/lo

# A recording (format: hotplugctl(8), RECORDING FORMAT) of three datagrams.
u4=$(t_uuid) u5=$(t_uuid) u6=$(t_uuid)
python3 - "$REC" "$dp" "$u1" "$u2" "$u3" "$u4" "$u5" "$u6" <<'PY' || t_fail "cannot write the recording"
import struct, sys, zlib
path, dp, u1, u2, u3 = sys.argv[1:6]
def dgram(action, seq, extra):
    e = [f"{action}@{dp}", f"ACTION={action}", f"DEVPATH={dp}", "SUBSYSTEM=net"] + extra + [f"SEQNUM={seq}"]
    return "\0".join(e).encode() + b"\0"
events = [
    dgram("change", 4001, [f"SYNTH_UUID={u1}", "LD_PRELOAD=/nonexistent/hp-env-test.so",
                           "BASH_ENV=/nonexistent/hp-env-test.sh", "IFS=/", "DRIVER=hp-env-test"]),
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
    # No kernel sends these (issue 40, N4): code loaded, files read, proxies and buses chosen.
    dgram("change", 4005, ["SYNTH_UUID=" + sys.argv[7], "GIO_EXTRA_MODULES=/nonexistent",
                           "GTK_MODULES=/nonexistent/x.so", "GST_PLUGIN_PATH=/nonexistent",
                           "QT_PLUGIN_PATH=/nonexistent", "LIBGL_DRIVERS_PATH=/nonexistent",
                           "SASL_PATH=/nonexistent", "ALSA_CONFIG_PATH=/nonexistent/alsa.conf",
                           "PYTHONPYCACHEPREFIX=/nonexistent", "SSL_CERT_FILE=/nonexistent/ca.pem",
                           "HTTPS_PROXY=http://127.0.0.1:9", "WGETRC=/nonexistent/wgetrc", "CURL_HOME=/nonexistent",
                           "HGRCPATH=/nonexistent", "TZ=/nonexistent/zone", "XDG_CONFIG_HOME=/nonexistent",
                           "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent", "HOTPLUGD_RESYNC=1", "KEEP_ME=yes",
                           "SYNTH_ARG_LD_PRELOAD=/nonexistent/x.so",
                           # What kernels send stays, families included.
                           "DEVTYPE=hp", "DRIVER=hp-env-test", "MODALIAS=hp:test", "SYNTH_ARG_NOTE=kept",
                           "POWER_SUPPLY_ONLINE=1", "OF_COMPATIBLE_0=hp,test", "PHYSDEVBUS=pci"]),
    # Again: dropped and counted, not logged a second time.
    dgram("change", 4006, ["SYNTH_UUID=" + sys.argv[8], "GTK_MODULES=/nonexistent/y.so", "TZ=/nonexistent/zone2",
                           "INTERFACE=lo"]),
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
[ "$(t_env_of "$F" DRIVER)" = hp-env-test ] || t_fail "SEQNUM=4001: an ordinary variable was lost"
check_event "$u2" 4002 HOME LD_LIBRARY_PATH PATH GLIBC_TUNABLES TMPDIR MALLOC_CHECK_ SHELLOPTS PS4
[ "$(t_env_of "$F" INTERFACE)" = lo ] || t_fail "SEQNUM=4002: an ordinary variable was lost"
check_event "$u3" 4003
check_event "$u4" 4004 LUA_INIT JAVA_TOOL_OPTIONS _JAVA_OPTIONS PYTHONWARNINGS PYTHONINSPECT PYTHONBREAKPOINT \
        SSLKEYLOGFILE GIT_SSH_COMMAND LESSOPEN PHPRC TCLLIBPATH KRB5_CONFIG TERMINFO ZDOTDIR GEM_PATH LC_ALL LANG
echo "ok: 4 replayed events ran; 28 refused variables kept from the agent, each logged once with SEQNUM and DEVPATH"
grep -m 2 "refused" "$T_LOG" | sed 's/^/  e.g. /'

# $1 SEQNUM, $2 key: the log lines naming that variable as dropped (not a kernel's) for that event.
dropped_lines() {
        grep -E "SEQNUM=$1 .*DEVPATH=$dp .*variable $2 dropped" "$T_LOG" | wc -l
}
# A key no kernel sends: a block-list miss (LC_MESSAGES=C.UTF-8 is a locale name, not a path) is dropped all the same.
! grep -q "^env:LC_MESSAGES=" "$F" || t_fail "SEQNUM=4004: the agent got $(grep "^env:LC_MESSAGES=" "$F")"
[ "$(dropped_lines 4004 LC_MESSAGES)" = 1 ] || t_fail "SEQNUM=4004: LC_MESSAGES not logged as dropped once"
unsent="GIO_EXTRA_MODULES GTK_MODULES GST_PLUGIN_PATH QT_PLUGIN_PATH LIBGL_DRIVERS_PATH SASL_PATH ALSA_CONFIG_PATH
        PYTHONPYCACHEPREFIX SSL_CERT_FILE HTTPS_PROXY WGETRC CURL_HOME HGRCPATH TZ XDG_CONFIG_HOME
        DBUS_SYSTEM_BUS_ADDRESS HOTPLUGD_RESYNC KEEP_ME SYNTH_ARG_LD_PRELOAD"
check_event "$u5" 4005
for k in $unsent; do
        ! grep -q "^env:$k=" "$F" || t_fail "SEQNUM=4005: the agent got $(grep "^env:$k=" "$F")"
        [ "$(dropped_lines 4005 "$k")" = 1 ] || t_fail "SEQNUM=4005: $(dropped_lines 4005 "$k") log lines for dropped $k, want 1"
done
for kv in DEVTYPE=hp DRIVER=hp-env-test MODALIAS=hp:test SYNTH_ARG_NOTE=kept POWER_SUPPLY_ONLINE=1 \
        OF_COMPATIBLE_0=hp,test PHYSDEVBUS=pci "SYNTH_UUID=$u5"; do
        grep -qx "env:$kv" "$F" || t_fail "SEQNUM=4005: a key kernels send was lost: $kv"
done
check_event "$u6" 4006
! grep -Eq "^env:(GTK_MODULES|TZ)=" "$F" || t_fail "SEQNUM=4006: the agent got $(grep -E "^env:(GTK_MODULES|TZ)=" "$F")"
[ "$(t_env_of "$F" INTERFACE)" = lo ] || t_fail "SEQNUM=4006: INTERFACE was lost"
[ "$(grep -c "variable [A-Z0-9_]* dropped" "$T_LOG")" = 20 ] ||
        t_fail "want 20 dropped-variable lines (each key once), got: $(grep "variable [A-Z0-9_]* dropped" "$T_LOG")"
grep -q "read to the end: 6 item(s) fed, 0 problem(s), 22 variable(s) dropped" "$T_LOG" ||
        t_fail "the replay's last line does not count 22 dropped variables: $(grep "read to the end" "$T_LOG")"
echo "ok: keys no kernel sends were dropped from the replayed events (22, 20 names, each logged once), kernel keys kept"
grep -m 2 "dropped" "$T_LOG" | sed 's/^/  e.g. /'

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
