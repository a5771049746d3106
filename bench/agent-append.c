/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's trivial agent (linked statically when possible): appends
 * "SEQNUM DEVPATH SYNTH_UUID\n" with one write(2) to events.log beside
 * argv[0] and exits.  O_APPEND keeps concurrent lines whole.  Built a
 * second time with SLEEP_USEC as agent-append-sleep: the same, then a sleep,
 * like an agent that waits for something (a device node, a module).  The
 * other builds, for bench/coldplug.sh: SLEEP_BY_SUBSYSTEM (agent-coldplug)
 * sleeps 10 ms for tty, 50 ms for net, 100 ms for block, not at all for the
 * rest; SLEEP_BY_SEQNUM (agent-append-vary) sleeps 10 to 100 ms, 10 ms times
 * 1 + SEQNUM % 10; SPIN_USEC (agent-append-spin) computes for that much CPU
 * time instead, like a CPU-bound agent.  agent-coldplug adds the time it
 * started (CLOCK_REALTIME) to its line; agent-append-action (WITH_ACTION) its ACTION.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent-log.h"

int main(int argc, char *argv[])
{
        char line[512];
        const char *seq = getenv("SEQNUM"), *dev = getenv("DEVPATH"), *uuid = getenv("SYNTH_UUID");
        int fd, n;

        (void)argc;
        fd = agent_log_open(argv[0]);
        if (fd < 0)
                return -fd;
#ifdef SLEEP_BY_SUBSYSTEM
        /* And when it started (CLOCK_REALTIME), for the latency of bench/coldplug.sh. */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        n = snprintf(line, sizeof(line), "%s %s %s %lld.%09ld\n", seq ? seq : "-", dev ? dev : "-", uuid ? uuid : "-",
                     (long long)now.tv_sec, now.tv_nsec);
#elif defined(WITH_ACTION)
        /* And its ACTION, for the last state of each device (bench/budget.sh). */
        const char *action = getenv("ACTION");
        n = snprintf(line, sizeof(line), "%s %s %s %s\n", seq ? seq : "-", dev ? dev : "-", uuid ? uuid : "-",
                     action ? action : "-");
#else
        n = snprintf(line, sizeof(line), "%s %s %s\n", seq ? seq : "-", dev ? dev : "-", uuid ? uuid : "-");
#endif
        if (write(fd, line, (size_t)n) != n)
                return 4;
        long usec = 0;
#ifdef SLEEP_USEC
        usec = SLEEP_USEC;
#endif
#ifdef SLEEP_BY_SUBSYSTEM
        const char *sub = getenv("SUBSYSTEM");
        usec = !sub ? 0 : !strcmp(sub, "tty") ? 10000 : !strcmp(sub, "net") ? 50000 : !strcmp(sub, "block") ? 100000 : 0;
#endif
#ifdef SLEEP_BY_SEQNUM
        usec = 10000 * (1 + (seq ? strtol(seq, NULL, 10) : 0) % 10);
#endif
        struct timespec ts = { usec / 1000000, (usec % 1000000) * 1000L };
        while (usec > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
#ifdef SPIN_USEC
        struct timespec t0, t;
        volatile unsigned long spin = 0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        do {
                for (int i = 0; i < 10000; i++)
                        spin++;
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        } while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < SPIN_USEC);
#endif
        return 0;
}
