/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl blame RECORDING [--json] [--top N]: which subsystems, programs
 * (the agent, each hotplug.d script) and devices took the time, from a
 * recording read through the timeline model (timeline_load()), summed by
 * the blame model (blame.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/blame.h"
#include "ctl/cli.h"
#include "ctl/ctl.h"
#include "ctl/timeline.h"
#include "shared/bounds.h"
#include "shared/macro.h"

struct args {
        const char *path;
        bool json;
        size_t top;
};

static const char help[] =
        "blame RECORDING [--json] [--top N]\n\n"
        "Show which agents, hotplug.d scripts and devices took the time in a\n"
        "recording (from hotplugctl record, or hotplugd's record option): per\n"
        "subsystem, per program and per device, the wall time of their agents\n"
        "summed, how many events (or runs), the slowest with its SEQNUM, and the\n"
        "time their events waited for earlier events to finish (order) and for a\n"
        "free agent slot.\n"
        "Longest total first.\n\n"
        "Options:\n"
        "  -j, --json             one JSON object (times in microseconds)\n"
        "  -n, --top N            at most N rows per table (default: all)\n"
        CTL_HELP_HELP "\n"
        "Exit status: 0, 1 unreadable or damaged recording, 64 usage.\n";

/* Return: CTL_RUN, or the exit status (CTL_EXIT_OK after --help). */
static int parse_args(int argc, char *argv[], struct args *a)
{
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' },
                { "top", required_argument, NULL, 'n' },
                CTL_OPTION_HELP,
                { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "blame", "jn:h", opts, help, "FILE" };
        unsigned long v;
        char *end;
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                switch (c) {
                case 'j':
                        a->json = true;
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

int verb_blame(int argc, char *argv[])
{
        struct args a = { 0 };
        struct timeline *tl = NULL;
        struct blame *b = NULL;
        int r;

        r = parse_args(argc, argv, &a);
        if (r != CTL_RUN)
                return r;
        r = timeline_new(&tl);
        if (r >= 0) {
                r = timeline_load(tl, a.path, "blame"); /* reports its errors */
                if (r < 0)
                        goto out;
                r = timeline_finish(tl, TIMELINE_LANES_DEVICE);
        }
        if (r >= 0)
                r = blame_new(&b);
        if (r >= 0)
                r = blame_add_timeline(b, tl);
        if (r >= 0)
                r = blame_finish(b);
        if (r >= 0) {
                if (tl->rejected)
                        ctl_err("blame", "%" PRIu64 " invalid datagram(s) left out", tl->rejected);
                if (tl->ignored)
                        ctl_err("blame", "%" PRIu64 " record(s) past the limits (%d runs, %d events) left out",
                                tl->ignored, HP_TIMELINE_MAX_RUNS, HP_TIMELINE_MAX_EVENTS);
                if (b->unknown_events)
                        ctl_err("blame", "%" PRIu64 " event(s) with runs but not in the recording: "
                                "shown as \"(event not in recording)\"", b->unknown_events);
                r = a.json ? blame_render_json(b, a.top, stdout) : blame_render_text(b, a.top, stdout);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -EIO;
                if (r < 0)
                        ctl_err("blame", "cannot write the output: %s", strerror(-r));
        } else {
                ctl_err("blame", "%s", strerror(-r));
        }
out:
        blame_free(b);
        timeline_free(tl);
        return r < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
