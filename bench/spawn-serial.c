/* SPDX-License-Identifier: MIT */
/*
 * spawn-serial AGENT COUNT [LOOPS]: the physical limit for the burst
 * benchmark.  Starts AGENT COUNT times one after another through the
 * daemon's own spawn_agent() (same argv, same kind of environment) and
 * waits for each; prints "SPAWNS_PER_SEC PARENT_CPU_USEC_PER_SPAWN": the
 * second figure is what one spawn_agent() + waitid costs the spawning
 * process itself (clone, reaping, reading the output pipe, which is kept
 * from run to run as the daemon keeps it), i.e. the spawn's share of a
 * daemon's CPU per event.
 *
 * With LOOPS (default 1), LOOPS processes do this at once, COUNT runs
 * each: the first figure is then their combined rate, the second the
 * average over every spawn.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-loops.h"
#include "pipeline/spawner.h"
#include "uevent/uevent.h"

struct serial {
        const char *agent;
        struct spawn_env env;
        int out_r, out_w; /* one output pipe for every run of the loop, as the daemon keeps one */
};

/* One run: spawn, wait, drain the output. */
static int spawn_wait(void *arg)
{
        struct serial *s = arg;
        struct spawn_result sr;
        char buf[256];
        siginfo_t si;
        int r;

        if (s->out_r < 0 && (r = spawn_pipe(&s->out_r, &s->out_w)) < 0)
                return r;
        r = spawn_agent_to(s->agent, "net", &s->env, s->out_w, &sr);
        if (r < 0)
                return r;
        r = waitid(P_PID, (id_t)sr.pid, &si, WEXITED) < 0 ? -errno : 0;
        while (read(s->out_r, buf, sizeof(buf)) > 0)
                ;
        close(sr.pidfd);
        return r;
}

int main(int argc, char *argv[])
{
        static const char msg[] = "change@/devices/virtual/net/lo\0ACTION=change\0DEVPATH=/devices/virtual/net/lo\0"
                                  "SUBSYSTEM=net\0SYNTH_UUID=00000000-0000-0000-0000-000000000000\0"
                                  "INTERFACE=lo\0IFINDEX=1\0SEQNUM=1\0";
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view, *ev;
        struct loops_result res;
        struct serial s;
        long count, loops = 1;

        if (argc < 3 || argc > 4) {
                fprintf(stderr, "usage: spawn-serial AGENT COUNT [LOOPS]\n");
                return 64;
        }
        count = strtol(argv[2], NULL, 10);
        if (argc == 4)
                loops = strtol(argv[3], NULL, 10);
        if (count < 1 || loops < 1 || loops > LOOPS_MAX) {
                fprintf(stderr, "usage: spawn-serial AGENT COUNT [LOOPS]  (COUNT >= 1, LOOPS 1-%d)\n", LOOPS_MAX);
                return 64;
        }
        if (uevent_parse(msg, sizeof(msg) - 1, vars, &view, NULL) < 0 || uevent_dup(&view, NULL, NULL, &ev) < 0)
                return 1;
        s.agent = argv[1];
        s.out_r = s.out_w = -1; /* each loop process makes its own at its first run */
        spawn_env_build(ev, &s.env);
        if (loops_run((unsigned)loops, count, spawn_wait, &s, &res) < 0) {
                fprintf(stderr, "spawn failed\n");
                return 1;
        }
        printf("%.0f %.1f\n", (double)res.spawns / res.seconds, res.cpu_usec / (double)res.spawns);
        free(ev);
        return 0;
}
