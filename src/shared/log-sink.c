/* SPDX-License-Identifier: MIT */
/*
 * Where log lines go: journald's native socket (a datagram per entry) or
 * stderr (a write per line), and, in the daemon, without ever blocking.
 *
 * Direct mode (hotplugctl, a forked child, the daemon before
 * log_buffer_start()): each line is written at once; a CLI may wait.
 *
 * Buffered mode: every write is non-blocking.  Invariants:
 *  - lines reach the target in the order they were logged: while a line
 *    waits, every new one waits behind it;
 *  - the buffer holds at most HP_LOG_BUFFER_MAX bytes, each waiting line
 *    as a record (its length, then its bytes); head_done bytes of the
 *    first one are written already (stderr takes a line in parts);
 *  - a line that does not fit, or that the target refuses, is counted in
 *    dropped and dropped_total and not kept;
 *  - once stderr's reader is gone (EPIPE: the pipe's or socket's other end
 *    closed), stderr is gone for good: what waits and every line after is
 *    dropped and counted, nothing is written to it any more, and no report
 *    is tried (there is nobody to tell; hotplugctl status says it).  The
 *    daemon ignores SIGPIPE, or the first write would have killed it;
 *  - when nothing waits any more and lines were dropped since the last
 *    report, one line reports them (and dropped goes back to 0);
 *  - wake is called whenever the buffer goes from empty to holding a line,
 *    and when the descriptor changed (the journal's socket connected
 *    anew) while lines wait.
 *
 * Journal entries are bounded by log.c (HP_LOG_ENTRY_MAX), far below a
 * datagram's limit, so no entry needs journald's memfd form.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "shared/log.h"
#include "shared/log-sink.h"
#include "shared/time-util.h"

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static struct {
        bool journal;         /* the target: journald's socket, else stderr */
        const char *ident;
        int journal_fd;       /* connected to journald, -1: not yet */
        bool buffered;
        int fd;               /* buffered mode: what lines are written to */
        bool fd_own;          /* opened by log_buffer_start() (a reopened stderr) */
        bool fd_socket;       /* a socket: send() with MSG_DONTWAIT */
        bool gone;            /* buffered stderr's reader went away: nothing is written any more */
        char *buf;            /* HP_LOG_BUFFER_MAX bytes */
        size_t head, tail;    /* the waiting records: buf[head..tail) */
        size_t head_done;     /* bytes of the first record written already */
        const char *journal_path;
        uint64_t dropped;     /* since the last report */
        uint64_t dropped_total;
        log_wake_fn wake;
        void *wake_data;
} sink = { .ident = "hotplugd", .journal_fd = -1, .fd = -1, .journal_path = JOURNAL_SOCKET };

void sink_set_journal_path(const char *path)
{
        sink.journal_path = path ? path : JOURNAL_SOCKET;
}

void sink_reset(bool journal, const char *ident)
{
        sink.journal = journal;
        if (ident)
                sink.ident = ident;
        sink.buffered = false;
        sink.journal_fd = -1;
        sink.fd = -1;
        sink.fd_own = false;
        sink.buf = NULL; /* a forked child's copy: not freed, its parent's memory image */
        sink.head = sink.tail = sink.head_done = 0;
        sink.gone = false;
        sink.wake = NULL;
}

bool sink_journal(void)
{
        return sink.journal;
}

/* A new socket connected to journald's (the old one, if any, closed after). */
static int journal_connect(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, old = sink.journal_fd;

        if (strlen(sink.journal_path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, sink.journal_path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = -errno;

                close(fd);
                return r;
        }
        sink.journal_fd = fd;
        if (sink.buffered && sink.fd == old)
                sink.fd = fd;
        if (old >= 0)
                close(old);
        if (sink.buffered && sink.head < sink.tail && sink.wake)
                sink.wake(sink.wake_data); /* a new descriptor to watch */
        return 0;
}

/*
 * One send or write of @n bytes.  Return: the bytes taken (a journal entry
 * is taken whole), -EAGAIN when the target takes nothing now, another
 * negative errno when it refuses.
 */
static ssize_t target_send(const char *p, size_t n, bool nonblock)
{
        int flags = MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0);
        ssize_t k;

        if (sink.journal) {
                if (sink.journal_fd < 0 && journal_connect() < 0)
                        return -ENOTCONN;
                k = send(sink.journal_fd, p, n, flags);
                /* journald's socket made anew (not kept by the service manager): connect again, once. */
                if (k < 0 && (errno == ECONNREFUSED || errno == ENOTCONN) && journal_connect() == 0)
                        k = send(sink.journal_fd, p, n, flags);
        } else if (!sink.buffered)
                k = write(STDERR_FILENO, p, n);
        else if (sink.fd_socket)
                k = send(sink.fd, p, n, flags);
        else
                k = write(sink.fd, p, n);
        if (k >= 0)
                return k;
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
}

static void count_dropped(void)
{
        sink.dropped++;
        sink.dropped_total++;
}

/* @error, from a write to stderr, says that its reader is gone: the pipe or socket has no other end. */
static bool stderr_gone_error(ssize_t error)
{
        return !sink.journal && (error == -EPIPE || error == -ECONNRESET);
}

/* stderr's reader is gone: what waits is dropped, counted, and so is every line from now on. */
static void stderr_gone(void)
{
        while (sink.head < sink.tail) {
                uint32_t len;

                memcpy(&len, sink.buf + sink.head, sizeof(len));
                sink.head += sizeof(len) + len;
                count_dropped();
        }
        sink.head = sink.tail = sink.head_done = 0;
        sink.gone = true;
}

/* Keep @n bytes of @p, @done of them written already; counted as dropped if they do not fit. */
static void keep(const char *p, size_t n, size_t done)
{
        uint32_t len = (uint32_t)n;
        size_t need = sizeof(len) + n;
        bool was_empty = sink.head == sink.tail;

        if (sink.tail - sink.head + need > HP_LOG_BUFFER_MAX) {
                count_dropped();
                return;
        }
        if (sink.tail + need > HP_LOG_BUFFER_MAX) {
                memmove(sink.buf, sink.buf + sink.head, sink.tail - sink.head);
                sink.tail -= sink.head;
                sink.head = 0;
        }
        memcpy(sink.buf + sink.tail, &len, sizeof(len));
        memcpy(sink.buf + sink.tail + sizeof(len), p, n);
        sink.tail += need;
        if (was_empty) {
                sink.head_done = done;
                if (sink.wake)
                        sink.wake(sink.wake_data);
        }
}

/* Nothing waits: say how many lines were dropped since the last report, if any. */
static void report_dropped(void)
{
        char msg[160], line[256];
        uint64_t n = sink.dropped;
        int k;

        if (n == 0 || sink.head < sink.tail || sink.gone)
                return;
        sink.dropped = 0;
        snprintf(msg, sizeof(msg), "%" PRIu64 " log line%s dropped while %s did not take %s", n, n == 1 ? "" : "s",
                 sink.journal ? "the journal" : "stderr", n == 1 ? "it" : "them");
        if (sink.journal)
                k = snprintf(line, sizeof(line), "PRIORITY=%d\nMESSAGE=%s\n", LOG_WARNING, msg);
        else
                k = snprintf(line, sizeof(line), "%s: %s\n", sink.ident, msg);
        (void)sink_line(line, (size_t)k);
}

int sink_line(const char *p, size_t n)
{
        ssize_t k;

        if (!sink.buffered) {
                if (!sink.journal) {
                        /* One write per line so concurrent writers do not interleave. */
                        (void)!write(STDERR_FILENO, p, n);
                        return 0;
                }
                k = target_send(p, n, false);
                return k < 0 ? (int)k : 0;
        }
        if (sink.gone) {
                count_dropped();
                return 0;
        }
        if (sink.head < sink.tail) {
                keep(p, n, 0);
                return 0;
        }
        k = target_send(p, n, true);
        if (k == -EAGAIN)
                keep(p, n, 0);
        else if (k < 0) {
                if (stderr_gone_error(k))
                        stderr_gone();
                count_dropped();
        }
        else if ((size_t)k < n)
                keep(p, n, (size_t)k);
        else
                report_dropped();
        return 0;
}

int log_flush(void)
{
        while (sink.head < sink.tail) {
                uint32_t len;
                ssize_t k;

                memcpy(&len, sink.buf + sink.head, sizeof(len));
                k = target_send(sink.buf + sink.head + sizeof(len) + sink.head_done, len - sink.head_done, true);
                if (k == -EAGAIN)
                        return 1;
                if (k >= 0 && (size_t)k < len - sink.head_done) {
                        sink.head_done += (size_t)k;
                        return 1;
                }
                if (stderr_gone_error(k)) {
                        stderr_gone();
                        return 0;
                }
                if (k < 0)
                        count_dropped();
                sink.head += sizeof(len) + len;
                sink.head_done = 0;
        }
        sink.head = sink.tail = 0;
        report_dropped();
        return sink.head < sink.tail;
}

/* stderr for buffered mode: its own non-blocking description where writes can wait. */
static int stderr_open(void)
{
        struct stat st;
        int fd;

        if (fstat(STDERR_FILENO, &st) < 0)
                return -errno;
        sink.fd_socket = S_ISSOCK(st.st_mode);
        sink.fd_own = false;
        if (sink.fd_socket || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
                return STDERR_FILENO; /* send() says MSG_DONTWAIT; a file takes what it is given */
        /* A pipe, FIFO or terminal: setting O_NONBLOCK on fd 2 would change it for every holder. */
        fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        sink.fd_own = true;
        return fd;
}

int log_buffer_start(void)
{
        int fd;

        if (sink.buffered)
                return 0;
        if (sink.journal && sink.journal_fd < 0 && journal_connect() < 0)
                sink.journal = false; /* as each line did before: stderr when the journal is not there */
        sink.buf = malloc(HP_LOG_BUFFER_MAX);
        if (!sink.buf)
                return -ENOMEM;
        if (sink.journal) {
                fd = sink.journal_fd;
                sink.fd_socket = true;
                sink.fd_own = false;
        } else {
                fd = stderr_open();
                if (fd < 0) {
                        free(sink.buf);
                        sink.buf = NULL;
                        return fd;
                }
        }
        sink.fd = fd;
        sink.head = sink.tail = sink.head_done = 0;
        sink.buffered = true;
        return 0;
}

void log_buffer_set_wake(log_wake_fn wake, void *userdata)
{
        sink.wake = wake;
        sink.wake_data = userdata;
}

int log_buffer_fd(void)
{
        return sink.buffered ? sink.fd : -1;
}

bool log_buffer_pending(void)
{
        return sink.buffered && sink.head < sink.tail;
}

uint64_t log_lines_dropped(void)
{
        return sink.dropped_total;
}

bool log_target_gone(void)
{
        return sink.buffered && sink.gone;
}

size_t log_flush_wait(uint64_t usec)
{
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + usec;
        size_t left = 0;

        while (sink.buffered && log_flush() > 0) {
                usec_t now = now_usec(CLOCK_MONOTONIC);
                struct pollfd pfd = { .fd = sink.fd, .events = POLLOUT };

                if (now >= deadline)
                        break;
                if (poll(&pfd, 1, (int)((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC)) < 0 && errno != EINTR)
                        break;
        }
        for (size_t at = sink.head; sink.buffered && at < sink.tail; left++) {
                uint32_t len;

                memcpy(&len, sink.buf + at, sizeof(len));
                at += sizeof(len) + len;
        }
        return left;
}

void log_buffer_stop(void)
{
        if (!sink.buffered)
                return;
        if (sink.fd_own)
                close(sink.fd);
        if (sink.journal_fd >= 0)
                close(sink.journal_fd);
        free(sink.buf);
        sink_reset(sink.journal, NULL);
}
