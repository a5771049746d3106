# Helpers of the bench scripts (sourced by every bench/*.sh).

# need_root SCRIPT: exit 1 unless root (the benches send real uevents).
need_root() { [ "$(id -u)" = 0 ] || { echo "bench/$1 needs root (real uevents)" >&2; exit 1; }; }

# need_built BUILD FILE...: exit 1 naming the first FILE not built in BUILD.
need_built() {
        local b=$1 f
        shift
        for f; do
                [ -x "$b/$f" ] || { echo "missing $b/$f: build first (meson compile -C $b)" >&2; exit 1; }
        done
}

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# nap SECONDS: sleep without a process of its own (read -t on a pipe no one
# writes to): a poll loop that forks sleep and date every 10 ms takes a
# fair share of a CPU from the daemon it measures.  A trap that runs while
# nap waits runs inside nap: "$1" there is nap's argument, not the caller's.
exec {NAP_FD}<> <(:)
nap() { read -r -t "$1" -u "$NAP_FD" _ || :; }

# wait_for N COMMAND...: until COMMAND prints a number >= N, asking every
# WAIT_POLL seconds (default 0.1); gives up (1) after 10 s in which the
# number did not move, never after a fixed total.
wait_for() {
        local n=$1 poll=${WAIT_POLL:-0.1} got last=-1 since=$SECONDS
        shift
        while :; do
                got=$("$@")
                [ "${got:-0}" -ge "$n" ] && return 0
                if [ "$got" != "$last" ]; then since=$SECONDS; fi
                [ $((SECONDS - since)) -ge 10 ] && return 1
                last=$got
                nap "$poll"
        done
}

# runs_of PATTERN LOG: lines of LOG with PATTERN (agent runs), 0 if none.
runs_of() { grep -c "$1" "$2" 2>/dev/null; }

# cpu_ticks PID: user + system clock ticks PID used itself (not its reaped children).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# machine_line: CPUs, model, memory, kernel and load, for the head of a run's output.
machine_line() {
        echo "machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
}

# build_label BUILDDIR: the commit the build directory's source tree is at.
build_label() { git -C "$(dirname "$(readlink -f "$1")")" describe --always --dirty 2>/dev/null || echo "?"; }
