/* SPDX-License-Identifier: MIT */
/*
 * bench-spawn: hotplugd's spawn path against the one it replaced, as the
 * daemon uses them: spawn an agent with the full contract (own process
 * group, empty signal mask, default dispositions, stdin /dev/null, output
 * pipe, fds above 2 closed, umask 022), get its pidfd, wait for it, drain
 * and close.  Two methods:
 *   posix_spawn+pidfd_open  posix_spawn() with attributes and file actions
 *                           (glibc: clone3 on a stack mmap'd and munmap'd
 *                           per call), the umask() pair around it, then
 *                           pidfd_open()
 *   clone (spawn_agent)     the production spawner (src/pipeline/spawner.c)
 * each with 1 loop and with 2 loops at once (two processes, each spawning
 * serially).  Reports spawns/s (all loops together) and the spawning
 * processes' own CPU time per spawn (getrusage(RUSAGE_SELF); the agents'
 * time is not in it).  Repetitions are interleaved, the order of the
 * methods alternating, so that machine noise hits both alike; the figures
 * are medians over the repetitions.
 *
 * Usage: bench-spawn [-n SPAWNS_PER_LOOP] [-r REPETITIONS] [AGENT]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-loops.h"
#include "pipeline/spawner.h"
#include "uevent/uevent.h"

#define REPS_MAX 99

static const char *agent = TRIVIAL_AGENT;
static struct spawn_env env;

/* ---- the replaced path: posix_spawn() + pidfd_open() -------------------- */

static posix_spawnattr_t ps_attr;
static posix_spawn_file_actions_t ps_fa;
static int ps_fa_fd = -1; /* the pipe end ps_fa was built for */

static int ps_attr_init(void)
{
        sigset_t none, all;
        int r;

        sigemptyset(&none);
        memset(&all, 0xff, sizeof(all)); /* glibc's own signals too: its child ignores them otherwise */
        r = posix_spawnattr_init(&ps_attr);
        if (!r)
                r = posix_spawnattr_setflags(&ps_attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                               POSIX_SPAWN_SETSIGDEF);
        if (!r)
                r = posix_spawnattr_setpgroup(&ps_attr, 0);
        if (!r)
                r = posix_spawnattr_setsigmask(&ps_attr, &none);
        if (!r)
                r = posix_spawnattr_setsigdefault(&ps_attr, &all);
        return -r;
}

/* The file actions for output pipe end @out_w (the fd number is nearly always the same: built once). */
static int ps_fa_get(int out_w)
{
        int r = 0;

        if (ps_fa_fd == out_w)
                return 0;
        if (ps_fa_fd >= 0)
                posix_spawn_file_actions_destroy(&ps_fa);
        ps_fa_fd = -1;
        r = posix_spawn_file_actions_init(&ps_fa);
        if (!r)
                r = posix_spawn_file_actions_addopen(&ps_fa, 0, "/dev/null", O_RDONLY, 0);
        if (!r)
                r = posix_spawn_file_actions_adddup2(&ps_fa, out_w, 1);
        if (!r)
                r = posix_spawn_file_actions_adddup2(&ps_fa, out_w, 2);
        if (!r)
                r = posix_spawn_file_actions_addclosefrom_np(&ps_fa, 3);
        if (r)
                return -r;
        ps_fa_fd = out_w;
        return 0;
}

static int ps_spawn(struct spawn_result *ret)
{
        char *argv[3] = { (char *)agent, (char *)"bench", NULL };
        int p[2], pidfd, r;
        mode_t mask;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0 || (r = ps_fa_get(p[1])) < 0) {
                r = -errno;
                goto fail;
        }
        mask = umask(022);
        r = -posix_spawn(&pid, agent, &ps_fa, &ps_attr, argv, (char *const *)env.envp);
        (void)umask(mask);
        if (r < 0)
                goto fail;
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                r = -errno;
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                goto fail;
        }
        close(p[1]);
        *ret = (struct spawn_result){ .pid = pid, .pidfd = pidfd, .outfd = p[0] };
        return 0;
fail:
        close(p[0]);
        close(p[1]);
        return r;
}

/* ---- the runs ------------------------------------------------------------ */

enum method { M_POSIX_SPAWN, M_CLONE, _M_MAX };

static const char *const method_name[_M_MAX] = { "posix_spawn+pidfd_open", "clone (spawn_agent)" };

/* Reap the run (waitid() on its PID, as the daemon does once the pidfd is readable), drain, close. */
static int reap(const struct spawn_result *sr)
{
        char buf[256];
        siginfo_t si;
        int r;

        r = waitid(P_PID, (id_t)sr->pid, &si, WEXITED) < 0 ? -errno : 0;
        while (read(sr->outfd, buf, sizeof(buf)) > 0)
                ;
        close(sr->pidfd);
        close(sr->outfd);
        if (r == 0 && (si.si_code != CLD_EXITED || si.si_status != 0))
                r = -ECHILD;
        return r;
}

static int run_one(void *arg)
{
        enum method m = *(const enum method *)arg;
        struct spawn_result sr;
        int r;

        r = m == M_POSIX_SPAWN ? ps_spawn(&sr) : spawn_agent(agent, "bench", &env, &sr);
        return r < 0 ? r : reap(&sr);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
        qsort(v, (size_t)n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A realistic event: what the kernel sends for a USB interface. */
static const char dgram[] = "add@/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0\0"
                            "ACTION=add\0DEVPATH=/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0\0"
                            "SUBSYSTEM=usb\0DEVTYPE=usb_interface\0PRODUCT=46d/c52b/1211\0TYPE=0/0/0\0"
                            "INTERFACE=3/1/1\0MODALIAS=usb:v046DpC52Bd1211dc00dsc00dp00ic03isc01ip01in00\0"
                            "SEQNUM=4711";

int main(int argc, char **argv)
{
        static double rate[_M_MAX][2][REPS_MAX], cpu[_M_MAX][2][REPS_MAX];
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view, *ev;
        long n = 2000, reps = 7;
        int opt;

        while ((opt = getopt(argc, argv, "n:r:")) != -1) {
                if (opt == 'n')
                        n = strtol(optarg, NULL, 10);
                else if (opt == 'r')
                        reps = strtol(optarg, NULL, 10);
                if (opt == '?' || n < 2 || reps < 1 || reps > REPS_MAX) {
                        fprintf(stderr, "usage: %s [-n SPAWNS_PER_LOOP] [-r REPETITIONS (1-%d)] [AGENT]\n", argv[0],
                                REPS_MAX);
                        return 64;
                }
        }
        if (optind < argc)
                agent = argv[optind];
        if (uevent_parse(dgram, sizeof(dgram), vars, &view, NULL) < 0 || uevent_dup(&view, NULL, NULL, &ev) < 0 ||
            ps_attr_init() < 0) {
                fprintf(stderr, "cannot set up\n");
                return 1;
        }
        spawn_env_build(ev, &env);

        printf("agent %s, %zu environment entries; %ld spawns per loop and run, %ld repetitions interleaved\n", agent, env.n,
               n, reps);
        for (enum method m = 0; m < _M_MAX; m++) /* warm up, and prove it works */
                for (int i = 0; i < 20; i++)
                        if (run_one(&m) < 0) {
                                fprintf(stderr, "%s does not work\n", method_name[m]);
                                return 1;
                        }
        for (int rep = 0; rep < reps; rep++)
                for (unsigned loops = 1; loops <= 2; loops++)
                        for (int k = 0; k < _M_MAX; k++) {
                                enum method m = (enum method)((k + rep) % _M_MAX); /* alternate who goes first */
                                struct loops_result res;

                                if (loops_run(loops, n, run_one, &m, &res) < 0)
                                        return 1;
                                rate[m][loops - 1][rep] = (double)res.spawns / res.seconds;
                                cpu[m][loops - 1][rep] = res.cpu_usec / (double)res.spawns;
                        }
        printf("%-24s %5s %12s %24s\n", "method", "loops", "spawns/s", "parent CPU usec/spawn");
        for (unsigned loops = 1; loops <= 2; loops++)
                for (enum method m = 0; m < _M_MAX; m++)
                        printf("%-24s %5u %12.0f %24.1f\n", method_name[m], loops,
                               median(rate[m][loops - 1], (int)reps), median(cpu[m][loops - 1], (int)reps));
        free(ev);
        return 0;
}
