/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl timeline FILE [-o OUT.svg] [--text] [--lanes device|subsystem] [--columns N]
 *
 * Reads a recording (reporting damage it finds, and going on), builds the
 * timeline model and renders it: SVG to OUT (written to OUT.tmp, then
 * renamed) or to standard output, or text with --text.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "escape.h"
#include "macro.h"
#include "record.h"
#include "timeline.h"

struct args {
        const char *path, *output;
        bool text;
        enum timeline_lanes lanes;
        unsigned columns;
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: hotplugctl timeline FILE [-o OUT.svg] [--text] [--lanes device|subsystem]\n\n"
                   "Draw a recording: one lane per device (or subsystem), each agent run a bar,\n"
                   "waits as arrows, SEQNUM gaps and overflows marked on a millisecond axis.\n\n"
                   "  -o, --output FILE      write the SVG to FILE (default: standard output)\n"
                   "  -t, --text             print a text timeline instead\n"
                   "  -l, --lanes KEY        device (DEVPATH, the default) or subsystem\n"
                   "  -c, --columns N        width of the text bars (default 40)\n"
                   "  -h, --help             this help\n");
}

static int parse_args(int argc, char *argv[], struct args *a)
{
        static const struct option opts[] = {
                { "output", required_argument, NULL, 'o' }, { "text", no_argument, NULL, 't' },
                { "lanes", required_argument, NULL, 'l' },  { "columns", required_argument, NULL, 'c' },
                { "help", no_argument, NULL, 'h' },         { NULL, 0, NULL, 0 },
        };
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "o:tl:c:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'o':
                        a->output = optarg;
                        break;
                case 't':
                        a->text = true;
                        break;
                case 'l':
                        if (strcmp(optarg, "device") == 0)
                                a->lanes = TIMELINE_LANES_DEVICE;
                        else if (strcmp(optarg, "subsystem") == 0)
                                a->lanes = TIMELINE_LANES_SUBSYSTEM;
                        else {
                                fprintf(stderr, "hotplugctl timeline: --lanes is device or subsystem\n");
                                return -EINVAL;
                        }
                        break;
                case 'c':
                        a->columns = (unsigned)strtoul(optarg, &end, 10);
                        if (*end || a->columns < 10 || a->columns > 1000) {
                                fprintf(stderr, "hotplugctl timeline: --columns wants 10..1000\n");
                                return -EINVAL;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return -EINVAL;
                }
        }
        if (optind != argc - 1 || (a->text && a->output)) {
                usage(stderr);
                return -EINVAL;
        }
        a->path = argv[optind];
        return 1;
}

/* Read every record of @path into @tl, reporting damage on stderr.  Return: 0 or negative errno. */
static int load(const char *path, struct timeline *tl)
{
        struct record_reader *rd;
        struct record rec;
        char msg[512], esc[256];
        int r;

        r = record_reader_open(path, &rd);
        if (r < 0) {
                fprintf(stderr, "hotplugctl timeline: %s: %s\n", escape_cstr(path, esc, sizeof(esc)),
                        r == -EBADMSG ? "not a hotplugd recording"
                        : r == -ENODATA ? "empty file"
                        : r == -EPROTONOSUPPORT ? "recording format version not supported"
                                                : strerror(-r));
                return r;
        }
        while ((r = record_reader_next(rd, &rec)) > 0) {
                if (r == RECORD_NEXT_PROBLEM) {
                        fprintf(stderr, "hotplugctl timeline: %s: %s\n", escape_cstr(path, esc, sizeof(esc)),
                                record_problem_format(record_reader_problem(rd), msg, sizeof(msg)));
                        continue;
                }
                r = timeline_add(tl, &rec);
                if (r < 0)
                        break;
        }
        if (r < 0)
                fprintf(stderr, "hotplugctl timeline: %s: %s\n", escape_cstr(path, esc, sizeof(esc)), strerror(-r));
        record_reader_free(rd);
        return r;
}

static int render(const struct args *a, const struct timeline *tl)
{
        _cleanup_free_ char *tmp = NULL;
        char title[512];
        FILE *f;
        int r;

        if (a->text)
                return timeline_render_text(tl, a->columns ? a->columns : 40, stdout);
        snprintf(title, sizeof(title), "hotplugd timeline: %s", a->path);
        if (!a->output)
                return timeline_render_svg(tl, title, stdout);
        if (asprintf(&tmp, "%s.tmp", a->output) < 0)
                return -ENOMEM;
        f = fopen(tmp, "we");
        if (!f)
                return negative_errno();
        r = timeline_render_svg(tl, title, f);
        if (fclose(f) != 0 && r >= 0)
                r = negative_errno();
        if (r >= 0 && rename(tmp, a->output) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

int verb_timeline(int argc, char *argv[])
{
        struct args a = { .lanes = TIMELINE_LANES_DEVICE };
        struct timeline *tl = NULL;
        int r;

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : CTL_EXIT_OK;
        r = timeline_new(&tl);
        if (r >= 0)
                r = load(a.path, tl);
        if (r >= 0)
                r = timeline_finish(tl, a.lanes);
        if (r >= 0) {
                if (tl->rejected)
                        fprintf(stderr, "hotplugctl timeline: %" PRIu64 " invalid datagram(s) left out\n", tl->rejected);
                if (tl->ignored)
                        fprintf(stderr, "hotplugctl timeline: %" PRIu64 " record(s) past the limits (%d runs, %d events) left out\n",
                                tl->ignored, HP_TIMELINE_MAX_RUNS, HP_TIMELINE_MAX_EVENTS);
                r = render(&a, tl);
                if (r < 0)
                        fprintf(stderr, "hotplugctl timeline: cannot write %s: %s\n", a.output ? a.output : "output",
                                strerror(-r));
        }
        timeline_free(tl);
        return r < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
