# /lib/vm-init.sh: what the VM suite's guest inits share (tests/vm/init,
# tests/vm/init-autoload source it as busybox sh, PID 1): the mounts, the
# command channel on the second serial port (fd 3) and its commands.  The
# host (tests/vm/vmlib.py) sends one command a line, "ID COMMAND ARGS...",
# and gets "ID ok ..." or "ID err ..."; lines starting with "#" are
# progress for the host's idle timer; "0 ready ..." and "0 fatal ..." come
# unasked.
#
#   wait SPEC...        until every SPEC holds: GLOB (exists) or !GLOB (no
#                       match); gives up when /sys/kernel/uevent_seqnum has
#                       not moved for $IDLE s; answers "ok at T" (T: the
#                       guest's CLOCK_MONOTONIC when it held, vm-clock)
#   settle              until no event for $QUIET s and the init's own
#                       settled() holds; answers "ok seqnum N"
#   sh COMMAND...       run COMMAND, answer with its output on one line
#                       (for debugging the suite)
# and every command the init defines as a function cmd_NAME ID ARGS...
# ("-" in NAME as "_").
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
IDLE=60
QUIET=2

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs tmpfs /tmp

say() { echo "vm-init: [$(cut -d' ' -f1 /proc/uptime)] $*" >/dev/console; }
die() { say "FATAL: $*"; echo "0 fatal $*" >&3; sleep 1; poweroff -f; }

exec 3<>/dev/ttyS1 || { say "no /dev/ttyS1"; poweroff -f; }
stty -F /dev/ttyS1 raw -echo 115200

# Sanitizer settings come from the kernel command line (vmlib.qemu_base).
for arg in $(cat /proc/cmdline); do
        case $arg in
        hp.asan=*) export ASAN_OPTIONS=${arg#hp.asan=} ;;
        hp.ubsan=*) export UBSAN_OPTIONS=${arg#hp.ubsan=} ;;
        esac
done

seqnum() { cat /sys/kernel/uevent_seqnum; }

# all_hold SPEC...: every GLOB matches something, every !GLOB nothing;
# $unmet is the first SPEC that does not hold.
all_hold() {
        for spec; do
                unmet=$spec
                case $spec in
                !*)
                        set -- ${spec#!}
                        [ -e "$1" ] && return 1 ;;
                *)
                        set -- $spec
                        [ -e "$1" ] || return 1 ;;
                esac
        done
        return 0
}

# cmd_wait ID SPEC...
cmd_wait() {
        local id=$1 last since now
        shift
        last=$(seqnum)
        since=$(date +%s)
        until all_hold "$@"; do
                now=$(seqnum)
                if [ "$now" != "$last" ]; then
                        last=$now
                        since=$(date +%s)
                        echo "# $id seqnum $now" >&3
                elif [ $(($(date +%s) - since)) -ge $IDLE ]; then
                        echo "$id err wait: no event for ${IDLE}s and still not: $unmet" >&3
                        return 1
                fi
                sleep 0.1
        done
        echo "$id ok at $(vm-clock)" >&3
}

# cmd_settle ID: until no event for $QUIET s and settled (the init's).
cmd_settle() {
        local id=$1 start last since now
        start=$(date +%s)
        while :; do
                last=$(seqnum)
                since=$(date +%s)
                while [ $(($(date +%s) - since)) -lt $QUIET ]; do
                        sleep 0.2
                        now=$(seqnum)
                        if [ "$now" != "$last" ]; then
                                last=$now
                                since=$(date +%s)
                                echo "# $id seqnum $now" >&3
                        fi
                done
                settled && break
                echo "# $id not settled yet" >&3
                [ $(($(date +%s) - start)) -lt 600 ] || { echo "$id err settle: not settled in 600 s" >&3; return 1; }
        done
        echo "$id ok seqnum $(seqnum)" >&3
}

cmd_sh() {
        local id=$1
        shift
        echo "$id ok $(sh -c "$*" 2>&1 | tr '\n' ' ')" >&3
}

# serve: answer the host's commands until the channel closes.
serve() {
        local id cmd args fn
        while read -r id cmd args <&3; do
                say "$id $cmd $args"
                fn=cmd_$(echo "$cmd" | tr - _)
                if [ "$(type "$fn" 2>/dev/null | head -n 1)" = "$fn is a function" ]; then
                        $fn "$id" $args
                else
                        echo "$id err unknown command $cmd" >&3
                fi
        done
        die "command channel closed"
}
