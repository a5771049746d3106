/* SPDX-License-Identifier: MIT */
/*
 * The latency benchmark's agent (bench/latency.sh; static when possible):
 * first thing, reads CLOCK_MONOTONIC, then appends "SYNTH_UUID NS\n" with
 * one write(2) to events.log beside argv[0] (O_APPEND keeps concurrent lines
 * whole).  An event that carries SYNTH_ARG_SLEEPMS (written as
 * "change UUID SLEEPMS=N") then sleeps that long: the slow agent of
 * another device.  Events without a SYNTH_UUID are not recorded.
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
        struct timespec now, ts;
        char line[128];
        const char *uuid, *sleep_ms;
        int fd, n;
        long ms;

        clock_gettime(CLOCK_MONOTONIC, &now);
        (void)argc;
        uuid = getenv("SYNTH_UUID");
        if (!uuid)
                return 0;
        fd = agent_log_open(argv[0]);
        if (fd < 0)
                return -fd;
        n = snprintf(line, sizeof(line), "%s %lld\n", uuid, (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
        if (write(fd, line, (size_t)n) != n)
                return 4;
        close(fd);
        sleep_ms = getenv("SYNTH_ARG_SLEEPMS");
        ms = sleep_ms ? strtol(sleep_ms, NULL, 10) : 0;
        ts.tv_sec = ms / 1000;
        ts.tv_nsec = (ms % 1000) * 1000000L;
        while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
        return 0;
}
