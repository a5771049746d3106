/* SPDX-License-Identifier: MIT */
/*
 * Test agent: records exactly what it was given.  Writes RUNS/SEQNUM.BASENAME
 * where RUNS is the first "runs" directory found in dirname(argv[0]) or up to
 * two levels above it, else the same next to the executable (/proc/self/exe:
 * the agent started through a symbolic link); lines: argc=, argv0=, argv1=, pid=, pgid=, cwd=,
 * start=/end= (CLOCK_REALTIME ns), then env:KEY=VALUE in the order received
 * (newlines and backslashes escaped).  Behaviour switches, files next to
 * RUNS: sleep_ms (number), spin_ms (number: compute for that much CPU
 * time, never sleeping), crash (abort), hang (sleep forever), hang_hard
 * (also ignore SIGTERM), barrier (number N: mark started/SEQNUM, then wait
 * until N runs have marked it, which proves that N agents ran at once).
 * Each run also appends "SEQNUM BASENAME" to runs.log next to RUNS (one
 * write, O_APPEND), so a run repeated for the same event shows twice.
 */
#include <dirent.h>
#include <fcntl.h>
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

/* Started through a symbolic link (a hotplug.d entry): look next to the program itself. */
static int find_exe_base(char *base, size_t size)
{
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        if (n <= 0)
                return -1;
        exe[n] = '\0';
        return find_base(exe, base, size);
}

static int has(const char *base, const char *name)
{
        char p[PATH_MAX + 64];

        snprintf(p, sizeof(p), "%s/%s", base, name);
        return access(p, F_OK) == 0;
}

static long entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        long n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

/* With BASE/barrier = N: wait until N agents started (BASE/started/SEQNUM each). */
static void barrier(const char *base, const char *seq)
{
        char p[PATH_MAX + 64];
        struct timespec ts = { 0, 5000000L };
        long n = 0;
        FILE *f;
        int fd;

        snprintf(p, sizeof(p), "%s/barrier", base);
        f = fopen(p, "re");
        if (!f)
                return;
        if (fscanf(f, "%ld", &n) != 1)
                n = 0;
        fclose(f);
        snprintf(p, sizeof(p), "%s/started/%s", base, seq ? seq : "noseq");
        fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        snprintf(p, sizeof(p), "%s/started", base);
        while (entries(p) < n)
                nanosleep(&ts, NULL);
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

/* Append "SEQNUM NAME" to BASE/runs.log in one write. */
static int append_run(const char *base, const char *seq, const char *name)
{
        char p[PATH_MAX + 64], line[PATH_MAX + 64];
        int fd, n, r;

        snprintf(p, sizeof(p), "%s/runs.log", base);
        n = snprintf(line, sizeof(line), "%s %s\n", seq ? seq : "noseq", name);
        fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return -1;
        r = write(fd, line, (size_t)n) == n ? 0 : -1;
        close(fd);
        return r;
}

/* With BASE/spin_ms = N: use N ms of CPU time, on a CPU or waiting for one throughout. */
static void spin(const char *base)
{
        char path[PATH_MAX + 16];
        struct timespec t;
        long ms = 0;
        FILE *f;

        snprintf(path, sizeof(path), "%s/spin_ms", base);
        f = fopen(path, "re");
        if (!f)
                return;
        if (fscanf(f, "%ld", &ms) != 1)
                ms = 0;
        fclose(f);
        do
                clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        while (t.tv_sec * 1000L + t.tv_nsec / 1000000 < ms);
}

int main(int argc, char *argv[])
{
        char base[PATH_MAX], path[PATH_MAX + 128], tmp[PATH_MAX + 140], cwd[PATH_MAX];
        const char *seq = getenv("SEQNUM"), *name = strrchr(argv[0], '/');
        long long start = now_ns();
        FILE *f;

        if (find_base(argv[0], base, sizeof(base)) < 0 && find_exe_base(base, sizeof(base)) < 0)
                return 2;
        name = name ? name + 1 : argv[0];
        if (has(base, "crash"))
                abort();
        if (has(base, "hang_hard"))
                signal(SIGTERM, SIG_IGN);
        if (has(base, "hang") || has(base, "hang_hard"))
                for (;;)
                        pause();
        barrier(base, seq);
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
        spin(base);

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
        (void)append_run(base, seq, name); /* best effort: RUNS/ is the record */
        printf("agent-dump: recorded %s\n", path);
        return 0;
}
