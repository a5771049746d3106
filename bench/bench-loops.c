/* SPDX-License-Identifier: MIT */
/*
 * Spawn loops side by side (bench-loops.h).  Each loop is a forked process
 * that waits on a start pipe, makes its calls, and writes back its own CPU
 * time (getrusage(RUSAGE_SELF) around the calls) on a result pipe; the
 * clock runs from closing the start pipe until the last result arrived.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-loops.h"


struct loop_report {
        double cpu_usec;
        long done;
        int error;
};

static double now_sec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_usec(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* One loop, in its own process: wait for the start, run, report, exit. */
static _Noreturn void loop_child(int go, int result, long n, int (*fn)(void *), void *arg)
{
        struct loop_report rep = { 0 };
        char c;
        double c0;

        if (read(go, &c, 1) < 0) /* EOF is the start */
                _exit(1);
        c0 = cpu_usec();
        for (; rep.done < n; rep.done++) {
                rep.error = fn(arg);
                if (rep.error < 0)
                        break;
        }
        rep.cpu_usec = cpu_usec() - c0;
        _exit(write(result, &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0 : 1);
}

int loops_run(unsigned loops, long count, int (*fn)(void *arg), void *arg, struct loops_result *ret)
{
        struct loops_result res = { 0 };
        pid_t pids[LOOPS_MAX];
        int go[2], result[2], failed = 0;
        unsigned started = 0;
        double t0;

        if (loops < 1 || loops > LOOPS_MAX || count < 1) {
                fprintf(stderr, "loops_run: 1 to %d loops of at least one call each\n", LOOPS_MAX);
                return -1;
        }
        if (pipe2(go, O_CLOEXEC) < 0 || pipe2(result, O_CLOEXEC) < 0) {
                perror("pipe2");
                return -1;
        }
        fflush(NULL);
        for (; started < loops; started++) {
                pids[started] = fork();
                if (pids[started] < 0) {
                        perror("fork");
                        failed = 1;
                        break;
                }
                if (pids[started] == 0) {
                        close(go[1]);
                        close(result[0]);
                        loop_child(go[0], result[1], count, fn, arg);
                }
        }
        close(go[0]);
        close(result[1]);
        t0 = now_sec();
        close(go[1]); /* start */
        for (unsigned i = 0; i < started; i++) {
                struct loop_report rep;

                if (read(result[0], &rep, sizeof(rep)) != (ssize_t)sizeof(rep)) {
                        failed = 1;
                        break;
                }
                if (rep.error < 0) {
                        fprintf(stderr, "a loop failed after %ld calls: %s\n", rep.done, strerror(-rep.error));
                        failed = 1;
                }
                res.cpu_usec += rep.cpu_usec;
                res.spawns += rep.done;
        }
        res.seconds = now_sec() - t0;
        close(result[0]);
        for (unsigned i = 0; i < started; i++)
                (void)waitpid(pids[i], NULL, 0);
        if (failed)
                return -1;
        *ret = res;
        return 0;
}
