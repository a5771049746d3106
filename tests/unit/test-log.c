/* SPDX-License-Identifier: MIT */
/*
 * The log's output (shared/log.c, shared/log-sink.c): journal entries in
 * journald's native format with the fields the daemon always sent, and
 * buffered mode, towards a journal socket and a pipe on stderr that are not
 * read: nothing blocks, the kept lines come out in order once the target
 * reads again, followed by one line counting those dropped.  A pipe on
 * stderr whose reader closed is given up for good (SIGPIPE ignored, as the
 * daemon does): what waits and every line after it is dropped and counted.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "shared/log.h"
#include "shared/log-sink.h"
#include "test.h"
#include "test-dir.h"

static char dir[64];
static char sock_path[100];

/* A datagram socket at sock_path standing in for journald's. */
static int journal_listen(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        check(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
        unlink(sock_path);
        check(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
        sink_set_journal_path(sock_path);
        return fd;
}

static ssize_t next_entry(int fd, char *buf, size_t size)
{
        return recv(fd, buf, size, MSG_DONTWAIT);
}

static void test_journal_fields(void)
{
        static char buf[HP_LOG_ENTRY_MAX + 1024], devpath[3 * HP_LOG_ENTRY_MAX];
        struct log_fields f = LOG_FIELDS_INIT;
        int fd = journal_listen();
        const char *want;
        uint64_t len;
        ssize_t n;

        log_open(LOG_TARGET_JOURNAL, "test-log");
        check(log_is_journal());
        f.seqnum = 42;
        f.devpath = "/devices/virtual/net/lo";
        f.action = "change";
        f.subsystem = "net";
        f.agent = "/sbin/hotplug";
        f.agent_status = "exit 0";
        f.duration_usec = 1500;
        log_internal(LOG_INFO, 0, &f, "agent %s finished", "net");
        n = next_entry(fd, buf, sizeof(buf));
        want = "PRIORITY=6\nMESSAGE=agent net finished\nSEQNUM=42\nDEVPATH=/devices/virtual/net/lo\n"
               "ACTION=change\nSUBSYSTEM=net\nAGENT=/sbin/hotplug\nAGENT_STATUS=exit 0\nAGENT_DURATION_USEC=1500\n";
        check_int(n, strlen(want));
        check(memcmp(buf, want, (size_t)n) == 0);

        /* A value with a newline: KEY, newline, 64-bit little-endian length, value. */
        log_error_errno(-ENOENT, "two\nlines");
        n = next_entry(fd, buf, sizeof(buf));
        want = "two\nlines: No such file or directory";
        check(n > 0);
        check(memcmp(buf, "PRIORITY=3\nMESSAGE\n", 19) == 0);
        memcpy(&len, buf + 19, sizeof(len));
        check_int(le64toh(len), strlen(want));
        check(memcmp(buf + 19 + 8, want, strlen(want)) == 0);
        check_int(n, 19 + 8 + strlen(want) + 1);

        /* A value too large for an entry is cut, with a marker. */
        memset(devpath, 'd', sizeof(devpath) - 1);
        f = (struct log_fields)LOG_FIELDS_INIT;
        f.devpath = devpath;
        log_internal(LOG_WARNING, 0, &f, "big");
        n = next_entry(fd, buf, sizeof(buf));
        check(n > 0 && n <= HP_LOG_ENTRY_MAX);
        check(memcmp(buf + n - 15, "...[truncated]\n", 15) == 0);
        close(fd);
}

/* Log "line N" until lines are dropped; Return: how many were logged. */
static unsigned fill(void)
{
        uint64_t before = log_lines_dropped();
        unsigned i;

        for (i = 0; log_lines_dropped() - before < 10 && i < 1000000; i++)
                log_info("line %u", i);
        check(log_buffer_pending());
        return i;
}

/* The next message's number from "line N" (at @p), or -1. */
static long line_number(const char *p)
{
        return strncmp(p, "line ", 5) == 0 ? strtol(p + 5, NULL, 10) : -1;
}

static void test_journal_buffered(void)
{
        static char buf[HP_LOG_ENTRY_MAX];
        int fd = journal_listen();
        unsigned logged, next = 0;
        uint64_t dropped = log_lines_dropped();
        char report[128];
        bool reported = false, after = false;

        log_open(LOG_TARGET_JOURNAL, "test-log");
        check_int(log_buffer_start(), 0);
        check(log_buffer_fd() >= 0);
        logged = fill(); /* nobody reads: each call returns, lines wait, then are dropped */
        dropped = log_lines_dropped() - dropped;
        snprintf(report, sizeof(report), "PRIORITY=4\nMESSAGE=%u log lines dropped while the journal did not take them\n",
                 (unsigned)dropped);
        for (int rounds = 0; rounds < 100000 && !after; rounds++) {
                ssize_t n = next_entry(fd, buf, sizeof(buf) - 1);

                if (n < 0) {
                        check(errno == EAGAIN);
                        if (log_flush() == 0 && reported && !after)
                                log_info("after");
                        continue;
                }
                buf[n] = '\0';
                if (strncmp(buf, "PRIORITY=4\n", 11) == 0) {
                        check(!reported);
                        check_str(buf, report);
                        check_int(next + dropped, logged); /* every line kept came before it, in order */
                        reported = true;
                } else if (strcmp(buf, "PRIORITY=6\nMESSAGE=after\n") == 0) {
                        check(reported);
                        after = true;
                } else {
                        check(!reported);
                        check_int(line_number(buf + strlen("PRIORITY=6\nMESSAGE=")), next);
                        next++;
                }
        }
        check(reported && after);
        check(!log_buffer_pending());
        log_buffer_stop();
        check_int(log_buffer_fd(), -1);
        close(fd);
}

static void test_stderr_buffered(void)
{
        static char buf[256 * 1024];
        int p[2], saved = dup(STDERR_FILENO);
        unsigned logged, next = 0;
        size_t have = 0;
        uint64_t dropped;
        char report[128];
        bool reported = false;

        check(saved >= 0);
        check(pipe2(p, O_CLOEXEC) == 0);
        check(dup2(p[1], STDERR_FILENO) == STDERR_FILENO);
        log_open(LOG_TARGET_STDERR, "test-log");
        check_int(log_buffer_start(), 0);
        dropped = log_lines_dropped();
        logged = fill();
        dropped = log_lines_dropped() - dropped;
        /* Its other holders keep stderr as it was: blocking. */
        check(!(fcntl(STDERR_FILENO, F_GETFL) & O_NONBLOCK));
        check(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
        snprintf(report, sizeof(report), "test-log: %u log lines dropped while stderr did not take them",
                 (unsigned)dropped);
        for (int rounds = 0; rounds < 100000 && !reported; rounds++) {
                ssize_t n = read(p[0], buf + have, sizeof(buf) - 1 - have);
                char *line, *nl;

                if (n < 0) {
                        check(errno == EAGAIN);
                        (void)log_flush();
                        continue;
                }
                have += (size_t)n;
                buf[have] = '\0';
                for (line = buf; !reported && (nl = strchr(line, '\n')); line = nl + 1) {
                        *nl = '\0';
                        if (strcmp(line, report) == 0) {
                                check_int(next + dropped, logged);
                                reported = true;
                        } else {
                                check(strncmp(line, "test-log: ", 10) == 0);
                                check_int(line_number(line + 10), next);
                                next++;
                        }
                }
                have -= (size_t)(line - buf);
                memmove(buf, line, have);
        }
        check(reported);
        check(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        log_buffer_stop();
        close(saved);
        close(p[0]);
        close(p[1]);
        log_open(LOG_TARGET_STDERR, NULL);
}

/*
 * stderr's reader closes: with @waiting, while lines wait in the buffer
 * (the flush meets EPIPE), else while nothing waits (the next line does).
 */
static void stderr_gone(bool waiting)
{
        int p[2], saved = dup(STDERR_FILENO);
        uint64_t before;
        unsigned logged = 0;

        check(saved >= 0);
        check(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
        check(pipe2(p, O_CLOEXEC) == 0);
        check(dup2(p[1], STDERR_FILENO) == STDERR_FILENO);
        log_open(LOG_TARGET_STDERR, "test-log");
        check_int(log_buffer_start(), 0);
        if (waiting)
                logged = fill();
        else
                log_info("taken");
        check(log_buffer_pending() == waiting);
        check(!log_target_gone());
        close(p[0]);
        before = log_lines_dropped();
        if (waiting) {
                check_int(log_flush(), 0);
                check(log_lines_dropped() > before && log_lines_dropped() - before < logged);
        } else {
                log_info("refused");
                check_int(log_lines_dropped() - before, 1);
        }
        check(log_target_gone());
        check(!log_buffer_pending());
        before = log_lines_dropped();
        for (int i = 0; i < 5; i++)
                log_info("after %d", i);
        check_int(log_lines_dropped() - before, 5);
        check(!log_buffer_pending());
        check_int(log_flush(), 0);
        check_int(log_flush_wait(1000), 0);
        check(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        log_buffer_stop();
        check(!log_target_gone());
        check(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
        close(saved);
        close(p[1]);
        log_open(LOG_TARGET_STDERR, NULL);
}

static void test_stderr_gone_waiting(void)
{
        stderr_gone(true);
}

static void test_stderr_gone_idle(void)
{
        stderr_gone(false);
}

int main(void)
{
        log_set_max_level(LOG_DEBUG);
        test_dir_make(dir, sizeof(dir), "test-log");
        snprintf(sock_path, sizeof(sock_path), "%s/journal", dir);
        run_test(test_journal_fields);
        run_test(test_journal_buffered);
        run_test(test_stderr_buffered);
        run_test(test_stderr_gone_waiting);
        run_test(test_stderr_gone_idle);
        sink_set_journal_path(NULL);
        test_dir_remove(dir);
        return 0;
}
