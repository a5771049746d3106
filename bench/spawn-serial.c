/* SPDX-License-Identifier: MIT */
/*
 * spawn-serial AGENT COUNT: the physical limit for the burst benchmark.
 * Starts AGENT COUNT times one after another through the daemon's own
 * spawn_agent() (same argv, same kind of environment) and waits for each;
 * prints "SPAWNS_PER_SEC PARENT_CPU_USEC_PER_SPAWN": the second figure is what one
 * spawn_agent() + waitid costs the spawning process itself (clone, pipe,
 * pidfd), i.e. the spawn's share of a daemon's CPU per event.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/envbuf.h"
#include "shared/macro.h"
#include "pipeline/spawner.h"
#include "uevent/uevent.h"

int main(int argc, char *argv[])
{
        static const char msg[] = "change@/devices/virtual/net/lo\0ACTION=change\0DEVPATH=/devices/virtual/net/lo\0"
                                  "SUBSYSTEM=net\0SYNTH_UUID=00000000-0000-0000-0000-000000000000\0"
                                  "INTERFACE=lo\0IFINDEX=1\0SEQNUM=1\0";
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view, *ev;
        struct spawn_env env;
        struct timespec a, b;
        long count;

        if (argc != 3) {
                fprintf(stderr, "usage: spawn-serial AGENT COUNT\n");
                return 64;
        }
        count = strtol(argv[2], NULL, 10);
        if (uevent_parse(msg, sizeof(msg) - 1, vars, &view, NULL) < 0 || uevent_dup(&view, NULL, NULL, &ev) < 0)
                return 1;
        spawn_env_build(ev, &env);

        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < count; i++) {
                struct spawn_result sr;
                char buf[256];
                siginfo_t si;

                if (spawn_agent(argv[1], "net", &env, &sr) < 0) {
                        fprintf(stderr, "spawn failed\n");
                        return 1;
                }
                if (waitid(P_PIDFD, (id_t)sr.pidfd, &si, WEXITED) < 0)
                        return 1;
                while (read(sr.outfd, buf, sizeof(buf)) > 0)
                        ;
                close(sr.pidfd);
                close(sr.outfd);
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
        printf("%.0f %.1f\n", (double)count / s, cpu / (double)count);
        free(ev);
        return 0;
}
