/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl timeline FILE [-o OUT.svg] [--text|--svg] [--lanes device|subsystem] [--columns N]
 *
 * Reads a recording (reporting damage it finds, and going on), builds the
 * timeline model and renders it: text on a terminal, SVG otherwise (--text
 * and --svg choose); SVG to OUT (written to an unnamed file that gets its
 * name only when complete) or to standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/cli.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "uevent/record.h"
#include "ctl/timeline.h"

enum format {
        FORMAT_AUTO,  /* text if standard output is a terminal and there is no -o */
        FORMAT_TEXT,
        FORMAT_SVG,
};

struct args {
        const char *path, *output;
        enum format format;
        enum timeline_lanes lanes;
        unsigned columns;
};

static const char help[] =
        "timeline FILE [-o OUT.svg] [--text|--svg] [--lanes device|subsystem] [--columns N]\n\n"
        "Draw a recording: one lane per device (or subsystem), overlapping runs on\n"
        "rows of their own, each agent run a bar coloured by its outcome after its\n"
        "wait for the agent, waits for other events as arrows, SEQNUM gaps and\n"
        "overflows marked; times in ms since the start and in local wall-clock time.\n"
        "Text on a terminal, SVG otherwise.\n\n"
        "Options:\n"
        "  -o, --output FILE      write the SVG to FILE (implies --svg)\n"
        "      --text             print a text timeline\n"
        "      --svg              write SVG, even to a terminal\n"
        "  -l, --lanes KEY        device (DEVPATH, the default) or subsystem\n"
        "      --columns N        width of the text bars, 10 to 1000 (default 40)\n"
        CTL_HELP_HELP "\n"
        "Exit status: 0, 1 unreadable or damaged recording, 64 usage.\n";

/* Return: CTL_RUN, or the exit status (CTL_EXIT_OK after --help). */
static int parse_args(int argc, char *argv[], struct args *a)
{
        static const struct option opts[] = {
                { "output", required_argument, NULL, 'o' }, { "text", no_argument, NULL, 't' },
                { "svg", no_argument, NULL, 's' },          { "lanes", required_argument, NULL, 'l' },
                { "columns", required_argument, NULL, 'c' }, CTL_OPTION_HELP,
                { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "timeline", "o:l:h", opts, help, "FILE" };
        char *end;
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                switch (c) {
                case 'o':
                        a->output = optarg;
                        break;
                case 't':
                case 's':
                        if (a->format != FORMAT_AUTO && a->format != (c == 't' ? FORMAT_TEXT : FORMAT_SVG))
                                return ctl_usage_error("timeline", "--text and --svg cannot go together");
                        a->format = c == 't' ? FORMAT_TEXT : FORMAT_SVG;
                        break;
                case 'l':
                        if (strcmp(optarg, "device") == 0)
                                a->lanes = TIMELINE_LANES_DEVICE;
                        else if (strcmp(optarg, "subsystem") == 0)
                                a->lanes = TIMELINE_LANES_SUBSYSTEM;
                        else
                                return ctl_bad_value("timeline", "--lanes", optarg, "device or subsystem");
                        break;
                case 'c':
                        a->columns = (unsigned)strtoul(optarg, &end, 10);
                        if (end == optarg || *end || a->columns < 10 || a->columns > 1000)
                                return ctl_bad_value("timeline", "--columns", optarg, "a number from 10 to 1000");
                        break;
                }
        }
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (a->format == FORMAT_TEXT && a->output)
                return ctl_usage_error("timeline", "--output writes SVG; it cannot go with --text");
        if (a->format == FORMAT_AUTO)
                a->format = !a->output && isatty(STDOUT_FILENO) ? FORMAT_TEXT : FORMAT_SVG;
        a->path = argv[optind];
        return CTL_RUN;
}

/* Give the unnamed file @fd the name @path (a hard link; fails with -EEXIST if @path exists). */
static int link_unnamed(int fd, const char *path)
{
        char proc[64];

        if (linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
                return 0;
        if (errno != ENOENT && errno != EPERM) /* no CAP_DAC_READ_SEARCH: go through /proc */
                return negative_errno();
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        return linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0 ? 0 : negative_errno();
}

/*
 * Name the finished unnamed file @fd @output: directly if @output does not
 * exist, else through @tmp, renamed over @output (only that rename's
 * moment leaves @tmp behind).
 */
static int publish(int fd, const char *output, const char *tmp)
{
        int r = link_unnamed(fd, output);

        if (r != -EEXIST)
                return r;
        (void)unlink(tmp);
        r = link_unnamed(fd, tmp);
        if (r < 0)
                return r;
        if (rename(tmp, output) < 0) {
                r = negative_errno();
                (void)unlink(tmp);
        }
        return r;
}

/* An unnamed file (O_TMPFILE) in the directory of @output, or -EOPNOTSUPP where the file system has none. */
static int open_unnamed(const char *output)
{
        const char *slash = strrchr(output, '/');
        _cleanup_free_ char *dir = NULL;
        int fd;

        /* "a/b" -> "a", "/b" -> "/", "b" -> "." */
        dir = slash ? strndup(output, slash == output ? 1 : (size_t)(slash - output)) : strdup(".");
        if (!dir)
                return -ENOMEM;
        fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (fd >= 0)
                return fd;
        return errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : negative_errno();
}

/*
 * Write the SVG to @a->output whole or not at all: into an unnamed file
 * that is linked in only once complete, so that no failure, signal or
 * crash leaves a partial output or a temporary file behind.  Where the
 * file system has no O_TMPFILE, into OUT.tmp, renamed when complete and
 * removed on failure.
 */
static int render_file(const struct args *a, const struct timeline *tl, const char *title)
{
        _cleanup_free_ char *tmp = NULL;
        bool unnamed = true;
        FILE *f;
        int fd, r;

        if (asprintf(&tmp, "%s.tmp", a->output) < 0)
                return -ENOMEM;
        fd = open_unnamed(a->output);
        if (fd == -EOPNOTSUPP) {
                unnamed = false;
                fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
                if (fd < 0)
                        return negative_errno();
        }
        if (fd < 0)
                return fd;
        f = fdopen(fd, "w");
        if (!f) {
                r = negative_errno();
                safe_close(fd);
                goto fail;
        }
        r = timeline_render_svg(tl, title, f);
        if (r >= 0 && unnamed)
                r = publish(fileno(f), a->output, tmp);
        if (fclose(f) != 0 && r >= 0)
                r = negative_errno();
        if (r >= 0 && !unnamed && rename(tmp, a->output) < 0)
                r = negative_errno();
fail:
        if (r < 0 && !unnamed)
                (void)unlink(tmp);
        return r;
}

static int render(const struct args *a, const struct timeline *tl)
{
        char title[512];

        if (a->format == FORMAT_TEXT)
                return timeline_render_text(tl, a->columns ? a->columns : 40, stdout);
        snprintf(title, sizeof(title), "hotplugd timeline: %s", a->path);
        if (!a->output)
                return timeline_render_svg(tl, title, stdout);
        return render_file(a, tl, title);
}

int verb_timeline(int argc, char *argv[])
{
        struct args a = { .lanes = TIMELINE_LANES_DEVICE };
        struct timeline *tl = NULL;
        int r;

        r = parse_args(argc, argv, &a);
        if (r != CTL_RUN)
                return r;
        r = timeline_new(&tl);
        if (r >= 0)
                r = timeline_load(tl, a.path, "timeline");
        if (r >= 0)
                r = timeline_finish(tl, a.lanes);
        if (r >= 0) {
                if (tl->rejected)
                        ctl_err("timeline", "%" PRIu64 " invalid datagram(s) left out", tl->rejected);
                if (tl->ignored)
                        ctl_err("timeline", "%" PRIu64 " record(s) past the limits (%d runs, %d events) left out",
                                tl->ignored, HP_TIMELINE_MAX_RUNS, HP_TIMELINE_MAX_EVENTS);
                r = render(&a, tl);
                if (r < 0)
                        ctl_err("timeline", "cannot write %s: %s", a.output ? a.output : "output",
                                strerror(-r));
        }
        timeline_free(tl);
        return r < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
