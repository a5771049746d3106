/* SPDX-License-Identifier: MIT */
/*
 * Test agent: records exactly what it was given.  Writes RUNS/SEQNUM.BASENAME
 * where RUNS is the first "runs" directory found in dirname(argv[0]) or up to
 * two levels above it; lines: argc=, argv0=, argv1=, pid=, pgid=, cwd=,
 * start=/end= (CLOCK_REALTIME ns), then env:KEY=VALUE in the order received
 * (newlines and backslashes escaped).  Behaviour switches, files next to
 * RUNS: sleep_ms (number), crash (abort), hang (sleep forever), hang_hard
 * (also ignore SIGTERM).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int find_base(const char *argv0, char *base, size_t size)
{
        char dir[PATH_MAX], probe[PATH_MAX + 8];

        snprintf(dir, sizeof(dir), "%s", argv0);
        for (int up = 0; up < 3; up++) {
                char *slash = strrchr(dir, '/');
                if (!slash)
                        return -1;
                *slash = '\0';
                snprintf(probe, sizeof(probe), "%s/runs", dir);
                if (access(probe, F_OK) == 0) {
                        snprintf(base, size, "%s", dir);
                        return 0;
                }
        }
        return -1;
}

static int has(const char *base, const char *name)
{
        char p[PATH_MAX + 64];

        snprintf(p, sizeof(p), "%s/%s", base, name);
        return access(p, F_OK) == 0;
}

static void put_escaped(FILE *f, const char *s)
{
        for (; *s; s++) {
                if (*s == '\n')
                        fputs("\\n", f);
                else if (*s == '\\')
                        fputs("\\\\", f);
                else
                        fputc(*s, f);
        }
        fputc('\n', f);
}

int main(int argc, char *argv[])
{
        char base[PATH_MAX], path[PATH_MAX + 128], tmp[PATH_MAX + 140], cwd[PATH_MAX];
        const char *seq = getenv("SEQNUM"), *name = strrchr(argv[0], '/');
        long long start = now_ns();
        FILE *f;

        if (find_base(argv[0], base, sizeof(base)) < 0)
                return 2;
        name = name ? name + 1 : argv[0];
        if (has(base, "crash"))
                abort();
        if (has(base, "hang_hard"))
                signal(SIGTERM, SIG_IGN);
        if (has(base, "hang") || has(base, "hang_hard"))
                for (;;)
                        pause();
        snprintf(path, sizeof(path), "%s/sleep_ms", base);
        f = fopen(path, "re");
        if (f) {
                long ms = 0;
                if (fscanf(f, "%ld", &ms) == 1 && ms > 0) {
                        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
                        nanosleep(&ts, NULL);
                }
                fclose(f);
        }

        snprintf(path, sizeof(path), "%s/runs/%s.%s", base, seq ? seq : "noseq", name);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        f = fopen(tmp, "we");
        if (!f)
                return 3;
        fprintf(f, "argc=%d\n", argc);
        for (int i = 0; i < argc; i++)
                fprintf(f, "argv%d=%s\n", i, argv[i]);
        fprintf(f, "pid=%d\npgid=%d\n", (int)getpid(), (int)getpgrp());
        fprintf(f, "cwd=%s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
        fprintf(f, "start=%lld\nend=%lld\n", start, now_ns());
        for (char **e = environ; *e; e++) {
                fputs("env:", f);
                put_escaped(f, *e);
        }
        if (fclose(f) != 0 || rename(tmp, path) < 0)
                return 4;
        printf("agent-dump: recorded %s\n", path);
        return 0;
}
