/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl record [--count N] [--duration S] FILE
 *
 * Listens on the kernel uevent socket itself (group 1, with the kernel
 * trust checks of the uevent source) and appends every datagram, as
 * received, to a recording (format in record.h), plus an OVERFLOW record
 * whenever the receive buffer overflowed.  Stops on SIGINT/SIGTERM, after N
 * datagrams or S seconds, then prints a summary.  The file is synced about
 * once a second and at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "ctl/cli.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "uevent/netlink.h"
#include "uevent/record.h"
#include "shared/time-util.h"

#define SYNC_INTERVAL_USEC USEC_PER_SEC
#define RECORD_DURATION_MAX_SEC 1000000000

struct recorder {
        struct record_writer *w;
        struct uevent_source *src;
        uint64_t max_count;     /* 0: no limit */
        usec_t deadline;        /* CLOCK_MONOTONIC; 0: none */
        uint64_t datagrams, bytes, overflows, dropped;
        bool done;
};

static const char help[] =
        "record [--count=N] [--duration=SEC] FILE\n\n"
        "Append every kernel uevent, as the kernel sent it and with its receive time, to\n"
        "FILE (created with mode 0600, or appended to; a symbolic link is refused) until\n"
        "SIGINT or SIGTERM, N events, or SEC seconds; then print a summary. Listens on\n"
        "the kernel's uevent socket itself: the daemon need not run.\n\n"
        "Options:\n"
        "      --count=N          stop after N events, 1 or more (default: no limit)\n"
        "  -d, --duration=SEC     stop after SEC seconds, more than 0 to "
        CTL_STR(RECORD_DURATION_MAX_SEC) ",\n"
        "                         fractions allowed (default: no limit)\n"
        CTL_HELP_HELP "\n"
        "Exit status: 0 recorded, 1 failure (FILE or the uevent socket), 64 usage.\n";

/* Return: CTL_RUN to record to *@ret_path, else the exit status (CTL_EXIT_OK after --help). */
static int parse_args(int argc, char *argv[], struct recorder *rc, const char **ret_path)
{
        static const struct option opts[] = {
                { "count", required_argument, NULL, 'c' },
                { "duration", required_argument, NULL, 'd' },
                CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "record", "d:h", opts, help, "FILE" };
        uint64_t ms;
        char *end;
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                switch (c) {
                case 'c':
                        errno = 0;
                        rc->max_count = strtoull(optarg, &end, 10);
                        if (errno || *end || !*optarg || optarg[0] == '-' || rc->max_count == 0)
                                return ctl_bad_value("record", "--count", optarg, "a number of events, 1 or more");
                        break;
                case 'd':
                        if (ctl_parse_seconds("record", "--duration", optarg, 1, RECORD_DURATION_MAX_SEC, &ms) !=
                            CTL_EXIT_OK)
                                return CTL_EXIT_USAGE;
                        rc->deadline = now_usec(CLOCK_MONOTONIC) + ms * USEC_PER_MSEC;
                        break;
                }
        }
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        *ret_path = argv[optind];
        return CTL_RUN;
}

static int append_datagram(struct recorder *rc, const char *data, size_t size)
{
        struct record rec = {
                .type = RECORD_DATAGRAM,
                .datagram = { .realtime = now_usec(CLOCK_REALTIME), .monotonic = now_usec(CLOCK_MONOTONIC),
                              .data = data, .size = size },
        };
        int r = record_append(rc->w, &rec);

        if (r < 0)
                return r;
        rc->datagrams++;
        rc->bytes += size;
        if (rc->max_count && rc->datagrams >= rc->max_count)
                rc->done = true;
        return 0;
}

/* Read everything the socket holds. Return: 0 or negative errno (fatal). */
static int drain(struct recorder *rc)
{
        const char *data;
        size_t size;
        int r;

        while (!rc->done) {
                r = uevent_source_receive(rc->src, &data, &size);
                if (r == 0)
                        return 0;
                if (r == -ENOBUFS) {
                        struct record rec = { .type = RECORD_OVERFLOW,
                                              .overflow = { now_usec(CLOCK_REALTIME), now_usec(CLOCK_MONOTONIC) } };
                        rc->overflows++;
                        r = record_append(rc->w, &rec);
                } else if (r == -EPERM || r == -EMSGSIZE) {
                        rc->dropped++;
                        r = 0;
                } else if (r > 0) {
                        r = append_datagram(rc, data, size);
                        if (r >= 0)
                                r = uevent_source_consume(rc->src);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static int loop(struct recorder *rc, int sigfd)
{
        usec_t last_sync = now_usec(CLOCK_MONOTONIC);
        int r;

        while (!rc->done) {
                usec_t now = now_usec(CLOCK_MONOTONIC), wait = SYNC_INTERVAL_USEC;
                struct pollfd p[2] = { { .fd = rc->src->fd, .events = POLLIN }, { .fd = sigfd, .events = POLLIN } };

                if (rc->deadline) {
                        if (now >= rc->deadline)
                                break;
                        wait = MIN(wait, rc->deadline - now);
                }
                r = poll(p, 2, (int)((wait + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
                if (r < 0 && errno != EINTR)
                        return negative_errno();
                if (p[1].revents & POLLIN)
                        break;
                if (p[0].revents & (POLLIN | POLLERR)) {
                        r = drain(rc);
                        if (r < 0)
                                return r;
                }
                if (now_usec(CLOCK_MONOTONIC) - last_sync >= SYNC_INTERVAL_USEC) {
                        r = record_writer_sync(rc->w);
                        if (r < 0)
                                return r;
                        last_sync = now_usec(CLOCK_MONOTONIC);
                }
        }
        return 0;
}

int verb_record(int argc, char *argv[])
{
        struct recorder rc = { 0 };
        const char *path = NULL;
        _cleanup_close_ int sigfd = -1;
        char esc[PATH_MAX];
        usec_t started;
        int r;

        r = parse_args(argc, argv, &rc, &path);
        if (r != CTL_RUN)
                return r;
        escape_cstr(path, esc, sizeof(esc));

        sigfd = ctl_signalfd();
        if (sigfd < 0) {
                ctl_err("record", "signalfd: %s", strerror(-sigfd));
                return CTL_EXIT_FAILURE;
        }
        r = record_writer_open(path, &rc.w);
        if (r < 0) {
                ctl_err("record", "%s: %s", esc,
                        r == -EBADMSG ? "exists and is not a hotplugd recording"
                        : r == -EBUSY ? "another recorder is writing to it"
                        : r == -ELOOP ? "is a symbolic link; refused"
                        : r == -EPERM ? "owned by another user or writable by group or others; refused"
                                      : strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        r = uevent_source_open(HP_RCVBUF_DEFAULT, &rc.src);
        if (r < 0) {
                ctl_err("record", "cannot open the kernel uevent socket: %s", strerror(-r));
                record_writer_free(rc.w);
                return CTL_EXIT_FAILURE;
        }
        if (isatty(STDERR_FILENO))
                fprintf(stderr, "Recording kernel uevents to %s; Ctrl-C stops.\n", esc);
        started = now_usec(CLOCK_MONOTONIC);
        r = loop(&rc, sigfd);
        if (r < 0)
                ctl_err("record", "%s: %s", esc, strerror(-r));
        {
                int s = record_writer_sync(rc.w);
                if (s < 0 && r >= 0) {
                        ctl_err("record", "%s: sync: %s", esc, strerror(-s));
                        r = s;
                }
        }
        printf("recorded %" PRIu64 " event(s), %" PRIu64 " bytes, in %.3f s to %s; %" PRIu64
               " overflow(s), %" PRIu64 " datagram(s) dropped (not from the kernel or truncated)\n",
               rc.datagrams, rc.bytes, (double)(now_usec(CLOCK_MONOTONIC) - started) / (double)USEC_PER_SEC, esc,
               rc.overflows, rc.dropped);
        rc.src = uevent_source_free(rc.src);
        rc.w = record_writer_free(rc.w);
        return r < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
