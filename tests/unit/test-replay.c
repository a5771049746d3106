/* SPDX-License-Identifier: MIT */
/*
 * Replay timing: the pure clock, --speed parsing, and the iterator over a
 * recording.  With argv[1] (the built hotplugd): --speed values out of range
 * are refused, and a dry-run replay of a recording with absurd agent times
 * (2^62 µs; a sum that wraps) ends, with a log line for each cut time.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/replay.h"
#include "test.h"

static void test_clock(void)
{
        struct replay_clock c;

        replay_clock_init(&c, 1.0, 0);
        check_int(replay_clock_step(&c, 1000000), 0);     /* first item: at once */
        check_int(replay_clock_step(&c, 1250000), 250000);
        check_int(replay_clock_step(&c, 1250000), 0);     /* same time */
        check_int(replay_clock_step(&c, 1250500), 500);
        check_int(c.due, 250500);

        /* Twice as fast halves every delay; 0.5 doubles it. */
        replay_clock_init(&c, 2.0, 0);
        replay_clock_step(&c, 10);
        check_int(replay_clock_step(&c, 1000010), 500000);
        check_int(replay_clock_step(&c, 1000013), 2);     /* 1.5 rounds to 2 */
        replay_clock_init(&c, 0.5, 0);
        replay_clock_step(&c, 10);
        check_int(replay_clock_step(&c, 1010), 2000);

        /* Speed 0 (and negative): no waiting at all, but time still advances the base. */
        replay_clock_init(&c, 0, 0);
        replay_clock_step(&c, 10);
        check_int(replay_clock_step(&c, 99999999), 0);
        check_int(c.due, 0);
        replay_clock_init(&c, -3, 0);
        check(c.speed == 0);

        /* Long pauses are cut to max_delay (before scaling). */
        replay_clock_init(&c, 2.0, 10 * USEC_PER_SEC);
        replay_clock_step(&c, 1);
        check_int(replay_clock_step(&c, 1 + 3600 * USEC_PER_SEC), 5 * USEC_PER_SEC);

        /* Clock going back (appended after a reboot) or unknown (0): no wait, new base. */
        replay_clock_init(&c, 1.0, 0);
        replay_clock_step(&c, 5000000);
        check_int(replay_clock_step(&c, 1000), 0);
        check_int(replay_clock_step(&c, 0), 0);
        check_int(c.prev, 1000);
        check_int(replay_clock_step(&c, 3000), 2000);
        check_int(c.due, 2000);
}

static void test_speed_parse(void)
{
        double v = -1;

        check_int(replay_speed_from_string("1", &v), 0);
        check(v == 1.0);
        check_int(replay_speed_from_string("2.5", &v), 0);
        check(v == 2.5);
        check_int(replay_speed_from_string("max", &v), 0);
        check(v == 0);
        check_int(replay_speed_from_string("0", &v), 0);
        check(v == 0);
        check_int(replay_speed_from_string("-1", &v), -EINVAL);
        check_int(replay_speed_from_string("fast", &v), -EINVAL);
        check_int(replay_speed_from_string("2x", &v), -EINVAL);
        check_int(replay_speed_from_string("", &v), -EINVAL);
        check_int(replay_speed_from_string("nan", &v), -EINVAL);
        check_int(replay_speed_from_string("inf", &v), -EINVAL);
        check_int(replay_speed_from_string("1e9", &v), -EINVAL);
}

/* Out of range, or not a plain number: refused (before: 1e-300 and friends passed and broke the usec casts). */
static const char *const bad_speeds[] = {
        "1e-300", "0.0001", "0x1p-1074", "4.9e-324", "1e-400", "2000000", "1e308", "1e400", "-0", "-0.0",
        "-1e-300", "nan", "-nan", "NAN(0x1)", "inf", "-inf", "infinity", " 1", "1 ", "+", ".",
};

static void test_speed_bounds(void)
{
        double v;

        for (size_t i = 0; i < ELEMENTSOF(bad_speeds); i++) {
                v = 42;
                if (replay_speed_from_string(bad_speeds[i], &v) != -EINVAL) {
                        fprintf(stderr, "  --speed '%s' accepted as %g\n", bad_speeds[i], v);
                        check(false);
                }
                check(v == 42); /* untouched on failure */
        }
        check_int(replay_speed_from_string("0.001", &v), 0);
        check(v == 1.0 / HP_REPLAY_SLOWDOWN_MAX);
        check_int(replay_speed_from_string("1000000", &v), 0);
        check(v == HP_REPLAY_SPEED_MAX);
        check_int(replay_speed_from_string("1e6", &v), 0);
        check_int(replay_speed_from_string("0.0", &v), 0);
        check(v == 0);
}

/* The clock never wraps or casts out of range, whatever speed and times it is given. */
static void test_clock_bounds(void)
{
        static const double speeds[] = { 1e-300, 4.9e-324, 1e-3, 1.0, 1e6, 1e300, NAN, INFINITY, -INFINITY };
        struct replay_clock c;

        for (size_t i = 0; i < ELEMENTSOF(speeds); i++) {
                usec_t due = 0, d;

                replay_clock_init(&c, speeds[i], 0);
                check(c.speed == 0 || (c.speed >= 1.0 / HP_REPLAY_SLOWDOWN_MAX && c.speed <= HP_REPLAY_SPEED_MAX));
                replay_clock_step(&c, 1);
                for (int k = 1; k <= 4; k++) {
                        d = replay_clock_step(&c, (usec_t)k << 62 | 1);
                        check(d <= REPLAY_USEC_MAX);
                        check(c.due >= due); /* no wrap */
                        check(c.due <= REPLAY_USEC_MAX);
                        due = c.due;
                }
                d = replay_clock_step(&c, UINT64_MAX);
                check(d <= REPLAY_USEC_MAX && c.due >= due && c.due <= REPLAY_USEC_MAX);
        }
        /* 2^62 µs at the slowest speed saturates; at speed 1 it is exact. */
        replay_clock_init(&c, 1e-300, 0);
        replay_clock_step(&c, 1);
        check_int(replay_clock_step(&c, ((usec_t)1 << 62) + 1), REPLAY_USEC_MAX);
        check_int(replay_clock_step(&c, ((usec_t)1 << 62) + 2), 1000);
        check_int(c.due, REPLAY_USEC_MAX);
        replay_clock_init(&c, 1.0, 0);
        replay_clock_step(&c, 1);
        check_int(replay_clock_step(&c, ((usec_t)1 << 62) + 1), (usec_t)1 << 62);

        check_int(replay_scale(0, 1e-3), 0);
        check_int(replay_scale(7, 0), 0);
        check_int(replay_scale(HP_REPLAY_MAX_RUN_USEC, 1.0 / HP_REPLAY_SLOWDOWN_MAX),
                  HP_REPLAY_MAX_RUN_USEC * HP_REPLAY_SLOWDOWN_MAX);
        check_int(replay_scale(HP_REPLAY_MAX_RUN_USEC, HP_REPLAY_SPEED_MAX), HP_REPLAY_MAX_RUN_USEC / HP_REPLAY_SPEED_MAX);
        check_int(replay_scale(UINT64_MAX, 1e-300), REPLAY_USEC_MAX);
        check_int(replay_scale(UINT64_MAX, NAN), 0);
}

static const char d1[] = "add@/devices/a\0ACTION=add\0DEVPATH=/devices/a\0SUBSYSTEM=x\0SEQNUM=1";
static const char d2[] = "add@/devices/b\0ACTION=add\0DEVPATH=/devices/b\0SUBSYSTEM=x\0SEQNUM=2";
static const char d3[] = "add@/devices/c\0ACTION=add\0DEVPATH=/devices/c\0SUBSYSTEM=x\0SEQNUM=4";

static void test_iterator(void)
{
        char path[] = "/tmp/test-replay.XXXXXX";
        struct record_writer *w;
        struct replay *rp;
        struct replay_item it;
        int fd = mkstemp(path);

        check(fd >= 0);
        close(fd);
        unlink(path);
        check_int(record_writer_open(path, &w), 0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 100, 1000000, d1, sizeof(d1) } }),
                  0);
        /* Agent records are not replayed. */
        check_int(record_append(w, &(struct record){ .type = RECORD_AGENT_START,
                                                     .agent_start = { 1, 1000100, 77, "/bin/true" } }),
                  0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 200, 1300000, d2, sizeof(d2) } }),
                  0);
        check_int(record_append(w, &(struct record){ .type = RECORD_OVERFLOW, .overflow = { 300, 1400000 } }), 0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 400, 1500000, d3, sizeof(d3) } }),
                  0);
        record_writer_free(w);

        check_int(replay_open(path, 2.0, &rp), 0);
        check_int(replay_next(rp, &it), 1);
        check_int(it.kind, REPLAY_DATAGRAM);
        check_int(it.size, sizeof(d1));
        check(memcmp(it.data, d1, sizeof(d1)) == 0);
        check_int(it.delay, 0);
        check_int(it.due, 0);
        check_int(it.realtime, 100);
        check_int(replay_next(rp, &it), 1);
        check(memcmp(it.data, d2, sizeof(d2)) == 0);
        check_int(it.delay, 150000);
        check_int(it.due, 150000);
        check_int(replay_next(rp, &it), 1);
        check_int(it.kind, REPLAY_OVERFLOW);
        check_int(it.delay, 50000);
        check_int(replay_next(rp, &it), 1);
        check_int(it.kind, REPLAY_DATAGRAM);
        check(memcmp(it.data, d3, sizeof(d3)) == 0);
        check_int(it.delay, 50000);
        check_int(it.due, 250000);
        check_int(replay_next(rp, &it), 0);
        check_int(replay_stats(rp)->records, 5);
        replay_free(rp);

        /* A torn tail is reported through the iterator, then the end. */
        /* Header, datagram 1, agent start, then 5 bytes of datagram 2. */
        check(truncate(path, 16 + (32 + sizeof(d1)) + (36 + 9) + 5) == 0);
        check_int(replay_open(path, 0, &rp), 0);
        check_int(replay_next(rp, &it), 1);
        check_int(replay_next(rp, &it), RECORD_NEXT_PROBLEM);
        check_int(replay_problem(rp)->kind, RECORD_PROBLEM_TORN_TAIL);
        check_int(replay_next(rp, &it), 0);
        replay_free(rp);
        unlink(path);
        check_int(replay_open(path, 1, &rp), -ENOENT);
}

/* Append one datagram record to the recording @path. */
static void append_datagram(const char *path, usec_t realtime, usec_t mono, const char *d, size_t size)
{
        struct record_writer *w;

        check_int(record_writer_open(path, &w), 0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { realtime, mono, d, size } }),
                  0);
        record_writer_free(w);
}

/* d1, then @damage bytes of fake frames (every 8 bytes, each claiming the largest payload), then d2. */
static void write_damaged(char *path, size_t damage)
{
        uint8_t *fake = malloc(damage);
        int fd = mkstemp(path);

        check(fd >= 0 && fake);
        close(fd);
        unlink(path);
        append_datagram(path, 100, 1000000, d1, sizeof(d1));
        for (size_t i = 0; i < damage; i += 16) {
                memcpy(fake + i, "HPR\x1eHPR\x1e", 8);
                for (int b = 0; b < 4; b++)
                        fake[i + 8 + b] = fake[i + 12 + b] = (uint8_t)((uint32_t)HP_RECORD_MAX >> (8 * b));
        }
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        check(fd >= 0);
        check(write(fd, fake, damage) == (ssize_t)damage);
        close(fd);
        free(fake);
        append_datagram(path, 200, 1300000, d2, sizeof(d2));
}

/* A large damaged region is searched a bounded step per call, then reported once. */
static void test_iterator_damage(void)
{
        char path[] = "/tmp/test-replay-damage.XXXXXX";
        const size_t damage = 8 << 20;
        struct replay *rp;
        struct replay_item it;
        uint64_t before, again = 0;
        int k;

        write_damaged(path, damage);
        check_int(replay_open(path, 1.0, &rp), 0);
        check_int(replay_next(rp, &it), 1);
        for (;;) {
                before = replay_stats(rp)->read_bytes;
                k = replay_next(rp, &it);
                /* Each call reads about one step (plus a window kept ahead of it). */
                check(replay_stats(rp)->read_bytes - before <= HP_REPLAY_RESYNC_STEP + 2 * 65536);
                if (k != RECORD_NEXT_AGAIN)
                        break;
                again++;
        }
        fprintf(stderr, "  %zu bytes of damage: %llu calls returned RECORD_NEXT_AGAIN\n", damage,
                (unsigned long long)again);
        check(again >= damage / HP_REPLAY_RESYNC_STEP - 1);
        check_int(k, RECORD_NEXT_PROBLEM);
        check_int(replay_problem(rp)->kind, RECORD_PROBLEM_CORRUPT);
        check_int(replay_problem(rp)->skipped, damage);
        check_int(replay_next(rp, &it), 1);
        check(memcmp(it.data, d2, sizeof(d2)) == 0);
        check_int(it.delay, 300000);
        check_int(replay_next(rp, &it), 0);
        check_int(replay_stats(rp)->problems, 1);
        replay_free(rp);
        unlink(path);
}

/* ---- the daemon ------------------------------------------------------------------ */

static const char *hotplugd_path; /* argv[1] */

/*
 * Run hotplugd with @args (NULL-terminated) and collect its output.  The
 * wait follows progress: the daemon is killed (and the test fails) only
 * when it printed nothing for IDLE_SEC.  Return: the wait status.
 */
#define IDLE_SEC 20
static int run_daemon(const char *const *args, char **ret_out)
{
        const char *argv[32] = { hotplugd_path };
        char *out = NULL;
        size_t n = 0, size = 0;
        int p[2], status, i = 1;
        pid_t pid;

        for (; *args && i < 31; args++)
                argv[i++] = *args;
        argv[i] = NULL;
        check(pipe2(p, O_CLOEXEC) == 0);
        pid = fork();
        check(pid >= 0);
        if (pid == 0) {
                (void)dup2(p[1], STDOUT_FILENO);
                (void)dup2(p[1], STDERR_FILENO);
                execv(argv[0], (char **)argv);
                _exit(127);
        }
        close(p[1]);
        for (;;) {
                struct pollfd pfd = { p[0], POLLIN, 0 };
                ssize_t k;

                if (poll(&pfd, 1, IDLE_SEC * 1000) == 0) {
                        fprintf(stderr, "  hotplugd printed nothing for %d s: killed\n%.*s\n", IDLE_SEC, (int)n,
                                out ? out : "");
                        (void)kill(pid, SIGKILL);
                        break;
                }
                if (n + 4096 > size) {
                        size = size ? size * 2 : 65536;
                        out = realloc(out, size);
                        check(out);
                }
                k = read(p[0], out + n, size - n - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        close(p[0]);
        check(waitpid(pid, &status, 0) == pid);
        if (!out)
                out = calloc(1, 1);
        check(out);
        out[n] = '\0';
        *ret_out = out;
        return status;
}

static const char a1[] = "add@/devices/virtual/net/hpr1\0ACTION=add\0DEVPATH=/devices/virtual/net/hpr1\0"
                         "SUBSYSTEM=net\0SEQNUM=11";
static const char a2[] = "add@/devices/virtual/net/hpr2\0ACTION=add\0DEVPATH=/devices/virtual/net/hpr2\0"
                         "SUBSYSTEM=net\0SEQNUM=12";
static const char a3[] = "add@/devices/virtual/net/hpr3\0ACTION=add\0DEVPATH=/devices/virtual/net/hpr3\0"
                         "SUBSYSTEM=net\0SEQNUM=13";

static void run(struct record_writer *w, uint64_t seqnum, usec_t start, usec_t end)
{
        check_int(record_append(w, &(struct record){ .type = RECORD_AGENT_START,
                                                     .agent_start = { seqnum, start, 77, "/sbin/hotplug" } }),
                  0);
        check_int(record_append(w, &(struct record){ .type = RECORD_AGENT_END,
                                                     .agent_end = { seqnum, end, 77, RECORD_AGENT_EXITED, 0 } }),
                  0);
}

/*
 * Two events whose recorded agent times are absurd: 2^62 µs, and two runs
 * of 2^63 + 5 µs (their sum wraps to 10); a third ran exactly
 * HP_REPLAY_MAX_RUN_USEC (kept as it is).
 */
static void write_absurd(const char *path)
{
        struct record_writer *w;

        check_int(record_writer_open(path, &w), 0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 100, 1000, a1, sizeof(a1) } }),
                  0);
        run(w, 11, 1100, 1100 + ((usec_t)1 << 62));
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 200, 2000, a2, sizeof(a2) } }),
                  0);
        run(w, 12, 2100, 2100 + ((usec_t)1 << 63) + 5);
        run(w, 12, 3100, 3100 + ((usec_t)1 << 63) + 5);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 300, 4000, a3, sizeof(a3) } }),
                  0);
        run(w, 13, 4100, 4100 + HP_REPLAY_MAX_RUN_USEC);
        record_writer_free(w);
}

/* A line of @out holding both @a and @b. */
static bool line_with(const char *out, const char *a, const char *b)
{
        for (const char *l = out; *l;) {
                const char *e = strchrnul(l, '\n'), *x = memmem(l, (size_t)(e - l), a, strlen(a));

                if (x && memmem(l, (size_t)(e - l), b, strlen(b)))
                        return true;
                l = *e ? e + 1 : e;
        }
        return false;
}

static void test_daemon(void)
{
        char path[] = "/tmp/test-replay-absurd.XXXXXX";
        char *out;
        int fd, status;

        if (!hotplugd_path) {
                fprintf(stderr, "  no hotplugd given: skipped\n");
                return;
        }
        fd = mkstemp(path);
        check(fd >= 0);
        close(fd);
        unlink(path);
        write_absurd(path);

        /* Every bad --speed: exit 64 (usage) with a message naming the option and the range. */
        for (size_t i = 0; i < ELEMENTSOF(bad_speeds); i++) {
                status = run_daemon((const char *const[]){ "--replay", path, "--dry-run", "--all", "--agent",
                                                           "/nonexistent", "--control-socket=", "--log-target=stderr",
                                                           "--speed", bad_speeds[i], NULL },
                                    &out);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 64 || !strstr(out, "--speed") ||
                    !strstr(out, "0.001") || !strstr(out, "1000000")) {
                        fprintf(stderr, "  --speed '%s': status 0x%x, output:\n%s\n", bad_speeds[i], status, out);
                        check(false);
                }
                free(out);
        }

        /* The absurd times are cut to HP_REPLAY_MAX_RUN_USEC (86.405 s at speed 1e6): the replay ends. */
        status = run_daemon((const char *const[]){ "--replay", path, "--dry-run", "--all", "--agent", "/nonexistent",
                                                   "--control-socket=", "--log-target=stderr", "--speed", "1000000",
                                                   NULL },
                            &out);
        fputs(out, stderr);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
        check(strstr(out, "read to the end"));
        check(line_with(out, "SEQNUM=11 ", "recorded agent time over 86405 s, cut to 86405 s"));
        check(line_with(out, "SEQNUM=12 ", "recorded agent time over 86405 s, cut to 86405 s"));
        check(line_with(out, "SEQNUM=13 ", "would run"));
        check(!line_with(out, "SEQNUM=13 ", "cut to"));
        free(out);
        unlink(path);

        /* 8 MiB of damage between two events, searched a step per turn of the loop: both run, the damage is one line. */
        {
                char damaged[] = "/tmp/test-replay-damage.XXXXXX";

                write_damaged(damaged, 8 << 20);
                status = run_daemon((const char *const[]){ "--replay", damaged, "--dry-run", "--all", "--agent",
                                                           "/nonexistent", "--control-socket=", "--log-target=stderr",
                                                           "--speed", "0", NULL },
                                    &out);
                fputs(out, stderr);
                check(WIFEXITED(status));
                check_int(WEXITSTATUS(status), 0);
                check(line_with(out, "SEQNUM=1 ", "would run"));
                check(line_with(out, "SEQNUM=2 ", "would run"));
                check(line_with(out, "corrupt record (checksum mismatch), 8388608 bytes skipped", "reading resumes"));
                check(line_with(out, "read to the end: 2 item(s) fed, 1 problem(s)", ""));
                free(out);
                unlink(damaged);
        }
}

int main(int argc, char *argv[])
{
        hotplugd_path = argc > 1 ? argv[1] : NULL;
        run_test(test_clock);
        run_test(test_speed_parse);
        run_test(test_speed_bounds);
        run_test(test_clock_bounds);
        run_test(test_iterator);
        run_test(test_iterator_damage);
        run_test(test_daemon);
        return 0;
}
