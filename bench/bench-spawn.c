/* SPDX-License-Identifier: MIT */
/*
 * bench-spawn: the raw serial spawn rate, the "physical limit" other
 * benchmarks compare against.  Starts a trivial agent N times one after
 * another and waits for each, by four methods:
 *   spawn_agent   hotplugd's spawner (posix_spawn + pipe + pidfd) + waitid(P_PIDFD)
 *   posix_spawn   bare posix_spawn, no file actions or attributes + waitpid
 *   fork+execve   + waitpid
 *   vfork+execve  + waitpid
 * All use the same agent environment, built by spawn_env_build().
 *
 * Usage: bench-spawn [-n N] [AGENT]
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/spawner.h"
#include "uevent/uevent.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define ROUNDS 10

static const char *agent = TRIVIAL_AGENT;
static char *const *envp;

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reap @pid: 0 if it exited with status 0. */
static int wait_ok(pid_t pid)
{
        int status;

        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static int run_spawner(const struct spawn_env *env)
{
        struct spawn_result sr;
        siginfo_t si;
        int r;

        r = spawn_agent(agent, "bench", env, &sr);
        if (r < 0)
                return r;
        r = waitid((idtype_t)P_PIDFD, (id_t)sr.pidfd, &si, WEXITED);
        close(sr.pidfd);
        close(sr.outfd);
        if (r < 0)
                return -errno;
        return si.si_code == CLD_EXITED && si.si_status == 0 ? 0 : -ECHILD;
}

static int run_posix_spawn(void)
{
        char *argv[] = { (char *)agent, (char *)"bench", NULL };
        pid_t pid;
        int r;

        r = posix_spawn(&pid, agent, NULL, NULL, argv, envp);
        if (r)
                return -r;
        return wait_ok(pid);
}

static int run_fork(void)
{
        char *argv[] = { (char *)agent, (char *)"bench", NULL };
        pid_t pid;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execve(agent, argv, envp);
                _exit(127);
        }
        return wait_ok(pid);
}

static int run_vfork(void)
{
        char *argv[] = { (char *)agent, (char *)"bench", NULL };
        pid_t pid;

        pid = vfork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                execve(agent, argv, envp);
                _exit(127);
        }
        return wait_ok(pid);
}

enum method { M_SPAWNER, M_POSIX_SPAWN, M_FORK, M_VFORK, _M_MAX };

static const char *const method_name[_M_MAX] = {
        "spawn_agent+waitid", "posix_spawn(bare)", "fork+execve", "vfork+execve",
};

static int run_one(enum method m, const struct spawn_env *env)
{
        switch (m) {
        case M_SPAWNER:
                return run_spawner(env);
        case M_POSIX_SPAWN:
                return run_posix_spawn();
        case M_FORK:
                return run_fork();
        case M_VFORK:
                return run_vfork();
        default:
                return -EINVAL;
        }
}

static bool fail(enum method m, int r)
{
        if (r >= 0)
                return false;
        fprintf(stderr, "%s failed: %s\n", method_name[m], strerror(-r));
        return true;
}

/* A realistic event: what the kernel sends for a USB interface. */
static const char dgram[] = "add@/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0\0"
                            "ACTION=add\0DEVPATH=/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0\0"
                            "SUBSYSTEM=usb\0DEVTYPE=usb_interface\0PRODUCT=46d/c52b/1211\0TYPE=0/0/0\0"
                            "INTERFACE=3/1/1\0MODALIAS=usb:v046DpC52Bd1211dc00dsc00dp00ic03isc01ip01in00\0"
                            "SEQNUM=4711";

int main(int argc, char **argv)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view, *ev;
        double total[_M_MAX] = { 0 }, best[_M_MAX] = { 0 };
        struct spawn_env env;
        long n = 5000;
        int opt;

        while ((opt = getopt(argc, argv, "n:")) != -1) {
                if (opt != 'n' || (n = strtol(optarg, NULL, 10)) < ROUNDS) {
                        fprintf(stderr, "usage: %s [-n N] [AGENT]\n", argv[0]);
                        return 64;
                }
        }
        if (optind < argc)
                agent = argv[optind];
        if (uevent_parse(dgram, sizeof(dgram), vars, &view, NULL) < 0 || uevent_dup(&view, NULL, NULL, &ev) < 0) {
                fprintf(stderr, "cannot build the event\n");
                return 1;
        }
        spawn_env_build(ev, &env);
        envp = (char *const *)env.envp;

        printf("agent %s, %zu environment entries, N=%ld serial spawns per method,\n"
               "interleaved in %d rounds of %ld so that machine noise hits every method alike\n",
               agent, env.n, n, ROUNDS, n / ROUNDS);
        for (enum method m = 0; m < _M_MAX; m++)
                for (int i = 0; i < 50; i++) /* warm up, and prove it works */
                        if (fail(m, run_one(m, &env)))
                                return 1;
        for (int round = 0; round < ROUNDS; round++)
                for (enum method m = 0; m < _M_MAX; m++) {
                        double t0 = now(), t;

                        for (long i = 0; i < n / ROUNDS; i++)
                                if (fail(m, run_one(m, &env)))
                                        return 1;
                        t = now() - t0;
                        total[m] += t;
                        if (round == 0 || t < best[m])
                                best[m] = t;
                }
        printf("%-20s %12s %12s %16s\n", "method", "spawns/s", "usec/spawn", "best round /s");
        for (enum method m = 0; m < _M_MAX; m++)
                printf("%-20s %12.0f %12.1f %16.0f\n", method_name[m], (double)(n / ROUNDS * ROUNDS) / total[m],
                       total[m] * 1e6 / (double)(n / ROUNDS * ROUNDS), (double)(n / ROUNDS) / best[m]);
        free(ev);
        return 0;
}
