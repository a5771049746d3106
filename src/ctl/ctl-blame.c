/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl blame [RECORDING] [--json] [--top N] [--critical-chain]: which subsystems,
 * programs (the agent, each hotplug.d script) and devices took the time,
 * summed by the blame model (blame.h): from a recording read through the
 * timeline model (timeline_load()), or, without one, as the running daemon
 * summed them since it started (the "blame" request, control.h).  Both are
 * printed by the same renderers.  --critical-chain shows instead the chain
 * of waits that ended last (blame.h), of the recording or from the daemon
 * ("blame chain").
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ctl/blame.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "ctl/timeline.h"
#include "shared/bounds.h"
#include "shared/macro.h"

struct args {
        const char *path;
        bool json, chain;
        size_t top;
};

static const char help[] =
        "blame [RECORDING] [--json] [--top N] [--critical-chain] [--socket=PATH]\n\n"
        "Show which agents, hotplug.d scripts and devices took the time, since the\n"
        "daemon started (so the boot's coldplug too) or, with RECORDING, in a\n"
        "recording (from hotplugctl record, or hotplugd's record option): per\n"
        "subsystem, per program and per device, the wall time of their agents\n"
        "summed, how many events (or runs), the slowest with its SEQNUM, and the\n"
        "time their events waited for earlier events to finish (order), for a\n"
        "free agent slot and for udevd (after-udev).\n"
        "Longest total first; FAILED counts the runs (or events) that did not exit 0.\n"
        "With --critical-chain: how long the last busy period took to settle (after\n"
        "boot, the coldplug) and the chain of waits that ended it: the event whose\n"
        "agents ended last, the event it waited for, and so on.\n\n"
        "Options:\n"
        "  -j, --json             one JSON object (times in microseconds)\n"
        "      --top N            at most N rows per table (default: all)\n"
        "      --critical-chain   the chain of waits that ended last\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0, 1 unreadable or damaged recording (or a failed request),\n"
        "3 no daemon (or refused), 64 usage.\n";

/* Return: CTL_RUN, or the exit status (CTL_EXIT_OK after --help). */
static int parse_args(int argc, char *argv[], struct args *a)
{
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' },
                { "top", required_argument, NULL, 'n' },
                { "critical-chain", no_argument, NULL, 'C' },
                CTL_OPTION_SOCKET,
                CTL_OPTION_HELP,
                { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "blame", "jh", opts, help, "[FILE]" };
        unsigned long v;
        char *end;
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                switch (c) {
                case 'j':
                        a->json = true;
                        break;
                case 'C':
                        a->chain = true;
                        break;
                case 'n':
                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (end == optarg || *end || optarg[0] == '-' || errno || v < 1 || v > 1000000)
                                return ctl_bad_value("blame", "--top", optarg, "a number from 1 to 1000000");
                        a->top = v;
                        break;
                }
        }
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        a->path = argv[optind];
        return CTL_RUN;
}

/* The blame of the recording at @path into @b, the timeline into *@tl (owned by the
 * caller: the rows' names point into it).  Return: the exit status (errors reported). */
static int blame_of_recording(struct blame *b, struct timeline **tl, const char *path)
{
        int r;

        r = timeline_new(tl);
        if (r >= 0) {
                r = timeline_load(*tl, path, "blame"); /* reports its errors */
                if (r < 0)
                        return CTL_EXIT_FAILURE;
                r = timeline_finish(*tl, TIMELINE_LANES_DEVICE);
        }
        if (r >= 0)
                r = blame_add_timeline(b, *tl);
        if (r < 0) {
                ctl_err("blame", "%s", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        if ((*tl)->rejected)
                ctl_err("blame", "%" PRIu64 " invalid datagram(s) left out", (*tl)->rejected);
        if ((*tl)->ignored)
                ctl_err("blame", "%" PRIu64 " record(s) past the limits (%d runs, %d events) left out",
                        (*tl)->ignored, HP_TIMELINE_MAX_RUNS, HP_TIMELINE_MAX_EVENTS);
        if (b->unknown_events)
                ctl_err("blame", "%" PRIu64 " event(s) with runs but not in the recording: "
                        "shown as \"(event not in recording)\"", b->unknown_events);
        return CTL_EXIT_OK;
}

/* A field a daemon older than it sends not: 0 when absent.  Return: 0 or -EBADMSG. */
static int get_u64_or_0(const char *rec, const char *key, uint64_t *ret)
{
        int r = ctlmsg_get_u64(rec, key, ret);

        if (r == -ENOENT) {
                *ret = 0;
                return 0;
        }
        return r;
}

/* A "row" record into @b.  Return: 0, -EBADMSG or -ENOMEM. */
static int add_row_record(struct blame *b, const char *rec)
{
        char group[16], name[CTL_RECORD_SIZE];
        struct blame_row row = { .name = name };
        int g;

        if (ctlmsg_get(rec, "group", group, sizeof(group)) < 0 || ctlmsg_get(rec, "name", name, sizeof(name)) < 0 ||
            ctlmsg_get_u64(rec, "count", &row.count) < 0 || ctlmsg_get_u64(rec, "total_usec", &row.total) < 0 ||
            ctlmsg_get_u64(rec, "slowest_usec", &row.slowest) < 0 ||
            ctlmsg_get_u64(rec, "slowest_seqnum", &row.slowest_seqnum) < 0 ||
            ctlmsg_get_u64(rec, "order_wait_usec", &row.order_wait) < 0 ||
            ctlmsg_get_u64(rec, "slot_wait_usec", &row.slot_wait) < 0 ||
            get_u64_or_0(rec, "udev_wait_usec", &row.udev_wait) < 0 || get_u64_or_0(rec, "failed", &row.failed) < 0)
                return -EBADMSG;
        for (g = 0; g < _BLAME_GROUP_MAX && strcmp(group, blame_group_name((enum blame_group)g)) != 0; g++)
                ;
        if (g == _BLAME_GROUP_MAX)
                return -EBADMSG;
        return blame_add_row(b, (enum blame_group)g, &row);
}

/* The "blame" record's sums into @b.  Return: 0 or -EBADMSG. */
static int set_totals(struct blame *b, const char *rec)
{
        if (!ctlmsg_is(rec, "blame") || ctlmsg_get_u64(rec, "events", &b->events) < 0 ||
            ctlmsg_get_u64(rec, "runs", &b->runs) < 0 || ctlmsg_get_u64(rec, "run_usec", &b->run_time) < 0 ||
            ctlmsg_get_u64(rec, "order_wait_usec", &b->order_wait) < 0 ||
            ctlmsg_get_u64(rec, "slot_wait_usec", &b->slot_wait) < 0 ||
            get_u64_or_0(rec, "udev_wait_usec", &b->udev_wait) < 0 ||
            get_u64_or_0(rec, "failed_events", &b->failed_events) < 0 ||
            get_u64_or_0(rec, "failed_runs", &b->failed_runs) < 0)
                return -EBADMSG;
        return 0;
}

/*
 * Ask the running daemon @request; its first record to @head, each one after
 * it to @each, until "end" (left in @rec).  Return: the exit status (errors
 * reported).
 */
static int ask_daemon(const char *request, char rec[CTL_RECORD_SIZE], int (*head)(void *arg, const char *rec),
                      int (*each)(void *arg, const char *rec), void *arg)
{
        _cleanup_close_ int fd = -1;
        int r;

        r = ctl_open("blame", &fd);
        if (r == CTL_EXIT_OK)
                r = ctl_request("blame", fd, request, rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "error"))
                return ctl_report_error("blame", rec);
        r = head(arg, rec);
        while (r >= 0) {
                r = ctl_recv(fd, rec, -1);
                if (r < 0 || ctlmsg_is(rec, "end") || ctlmsg_is(rec, "error"))
                        break;
                r = each(arg, rec);
        }
        if (r >= 0 && ctlmsg_is(rec, "error"))
                return ctl_report_error("blame", rec);
        if (r < 0) {
                ctl_err("blame", "%s", r == -EBADMSG ? "unexpected reply" : strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static int on_totals(void *arg, const char *rec)
{
        return set_totals(arg, rec);
}

static int on_row(void *arg, const char *rec)
{
        return add_row_record(arg, rec);
}

/* The running daemon's blame into @b.  Return: the exit status (errors reported). */
static int blame_of_daemon(struct blame *b)
{
        char rec[CTL_RECORD_SIZE];
        uint64_t left_out = 0;
        int r = ask_daemon("blame", rec, on_totals, on_row, b);

        if (r != CTL_EXIT_OK)
                return r;
        (void)ctlmsg_get_u64(rec, "left_out", &left_out);
        if (left_out)
                ctl_err("blame", "%" PRIu64 " row(s) past what one reply holds left out (the shortest)", left_out);
        return CTL_EXIT_OK;
}

/* A "link" record into @c.  Return: 0, -EBADMSG or -ENOMEM. */
static int add_link_record(void *arg, const char *rec)
{
        struct blame_chain *c = arg;
        char action[64], subsystem[128], devpath[CTL_RECORD_SIZE], failed[CTL_RECORD_SIZE], status[64];
        struct blame_link l = { 0 };
        int r;

        if (!ctlmsg_is(rec, "link") || ctlmsg_get_u64(rec, "seqnum", &l.seqnum) < 0 ||
            ctlmsg_get_u64(rec, "blocker", &l.blocker) < 0 || ctlmsg_get_u64(rec, "at_usec", &l.at) < 0 ||
            ctlmsg_get_u64(rec, "run_usec", &l.ran) < 0 ||
            ctlmsg_get_u64(rec, "order_wait_usec", &l.waits.order) < 0 ||
            ctlmsg_get_u64(rec, "slot_wait_usec", &l.waits.slot) < 0 ||
            ctlmsg_get_u64(rec, "udev_wait_usec", &l.waits.udev) < 0 || ctlmsg_get_u64(rec, "runs", &l.runs) < 0 ||
            ctlmsg_get_u64(rec, "failed_runs", &l.failed_runs) < 0)
                return -EBADMSG;
        if (ctlmsg_get(rec, "devpath", devpath, sizeof(devpath)) >= 0) {
                if (ctlmsg_get(rec, "action", action, sizeof(action)) < 0 ||
                    ctlmsg_get(rec, "subsystem", subsystem, sizeof(subsystem)) < 0)
                        return -EBADMSG;
                l.action = action;
                l.subsystem = subsystem;
                l.devpath = devpath;
        }
        if (ctlmsg_get(rec, "failed", failed, sizeof(failed)) >= 0) {
                if (ctlmsg_get(rec, "failed_status", status, sizeof(status)) < 0)
                        return -EBADMSG;
                l.failed = failed;
                l.failed_status = status;
        }
        r = blame_chain_add(c, &l);
        return r == -ENOSPC ? -EBADMSG : r;
}

/* The "chain" record into @arg, a struct blame_chain.  Return: 0 or -EBADMSG. */
static int set_chain(void *arg, const char *rec)
{
        struct blame_chain *c = arg;
        uint64_t known, settled;

        if (!ctlmsg_is(rec, "chain") || ctlmsg_get_u64(rec, "known", &known) < 0 ||
            ctlmsg_get_u64(rec, "settled", &settled) < 0 || ctlmsg_get_u64(rec, "events", &c->events) < 0 ||
            ctlmsg_get_u64(rec, "span_usec", &c->span) < 0 || ctlmsg_get_u64(rec, "cut_seqnum", &c->cut_seqnum) < 0)
                return -EBADMSG;
        c->known = known;
        c->settled = settled;
        return 0;
}

/* blame --critical-chain.  Return: the exit status (errors reported). */
static int verb_chain(const struct args *a)
{
        struct blame_chain c = { 0 };
        struct timeline *tl = NULL;
        struct blame *b = NULL;
        int r, w;

        if (a->path) {
                if (blame_new(&b) < 0) {
                        ctl_err("blame", "out of memory");
                        return CTL_EXIT_FAILURE;
                }
                r = blame_of_recording(b, &tl, a->path);
                if (r == CTL_EXIT_OK && blame_chain_of_timeline(&c, tl) < 0) {
                        ctl_err("blame", "out of memory");
                        r = CTL_EXIT_FAILURE;
                }
        } else {
                char rec[CTL_RECORD_SIZE];

                r = ask_daemon("blame chain", rec, set_chain, add_link_record, &c);
        }
        if (r == CTL_EXIT_OK) {
                w = a->json ? blame_chain_render_json(&c, stdout) : blame_chain_render_text(&c, stdout);
                if (w >= 0 && fflush(stdout) != 0)
                        w = -EIO;
                if (w < 0) {
                        ctl_err("blame", "cannot write the output: %s", strerror(-w));
                        r = CTL_EXIT_FAILURE;
                }
        }
        blame_chain_clear(&c);
        blame_free(b);
        timeline_free(tl);
        return r;
}

int verb_blame(int argc, char *argv[])
{
        struct args a = { 0 };
        struct timeline *tl = NULL;
        struct blame *b = NULL;
        int r;

        r = parse_args(argc, argv, &a);
        if (r != CTL_RUN)
                return r;
        if (a.chain)
                return verb_chain(&a);
        if (blame_new(&b) < 0) {
                ctl_err("blame", "out of memory");
                return CTL_EXIT_FAILURE;
        }
        r = a.path ? blame_of_recording(b, &tl, a.path) : blame_of_daemon(b);
        if (r == CTL_EXIT_OK && blame_finish(b) < 0) {
                ctl_err("blame", "out of memory");
                r = CTL_EXIT_FAILURE;
        }
        if (r == CTL_EXIT_OK) {
                int w = a.json ? blame_render_json(b, a.top, stdout) : blame_render_text(b, a.top, stdout);

                if (w >= 0 && fflush(stdout) != 0)
                        w = -EIO;
                if (w < 0) {
                        ctl_err("blame", "cannot write the output: %s", strerror(-w));
                        r = CTL_EXIT_FAILURE;
                }
        }
        blame_free(b);
        timeline_free(tl);
        return r;
}
