/* SPDX-License-Identifier: MIT */
/* hotplugctl trigger's options, as udevadm trigger spells them (trigger-args.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/ctl.h"
#include "ctl/trigger-args.h"
#include "shared/bounds.h"
#include "shared/macro.h"
#include "shared/number.h"

#define TRIGGER_DEFAULT_TIMEOUT_SEC 120
/* getopt codes of the options without a short letter (apart from CTL_OPT_SOCKET's). */
enum {
        OPT_DONE_FILE = 0x7f10,
        OPT_TIMEOUT,
        OPT_JOBS,
        OPT_NAME_MATCH,
        OPT_PRIORITIZED,
        OPT_SKIP_HANDLED,
};

static const char help[] =
        "trigger [OPTIONS] [DEVICE...]\n\n"
        "Coldplug: make the kernel send again the events of devices that exist, by\n"
        "writing \"ACTION UUID\" into each device's uevent file (the event carries\n"
        "SYNTH_UUID=UUID). Without DEVICEs, every device the match options select; with\n"
        "DEVICEs (/sys/..., /devices/... or device nodes /dev/..., links resolved), those\n"
        "that pass them. The options are udevadm trigger's.\n\n"
        "Options:\n"
        "  -c, --action=ACTION    the action to request (default add); one of\n"
        "                         " CTL_KERNEL_ACTIONS "\n"
        "  -t, --type=TYPE        what is walked without DEVICEs: devices (the default),\n"
        "                         subsystems (modules, buses and drivers) or all\n"
        "  -s, --subsystem-match=SUBSYSTEM\n"
        "                         only devices of this subsystem (shell pattern)\n"
        "  -S, --subsystem-nomatch=SUBSYSTEM\n"
        "                         not devices of this subsystem (shell pattern)\n"
        "  -y, --sysname-match=NAME\n"
        "                         only devices with this name (shell pattern, e.g. veth*)\n"
        "  -a, --attr-match=ATTR[=VALUE]\n"
        "                         only devices with this sysfs attribute (and value, a\n"
        "                         shell pattern)\n"
        "  -A, --attr-nomatch=ATTR[=VALUE]\n"
        "                         not devices with this attribute (and value)\n"
        "  -p, --property-match=PROP=VALUE\n"
        "                         only devices with this property: a key of their\n"
        "                         uevent file, SUBSYSTEM or DEVPATH (shell patterns)\n"
        "  -b, --parent-match=DEVICE\n"
        "                         only DEVICE and the devices below it\n"
        "      --name-match=NODE  only the device of the node NODE (/dev/NODE) and those\n"
        "                         below it\n"
        "                         Each match option may be given up to " CTL_STR(TRIGGER_MATCH_MAX) " times; a device\n"
        "                         passes if it matches any -s, no -S, any -y, every -a,\n"
        "                         no -A, any -p, and is below any -b or --name-match.\n"
        "      --prioritized-subsystem=SUBSYSTEM[,SUBSYSTEM...]\n"
        "                         walk these subsystems' devices (after their parents)\n"
        "                         first, in this order\n"
        "  -n, --dry-run          print the devices that would be triggered, write nothing\n"
        "  -v, --verbose          print each device triggered and its UUID\n"
        "  -q, --quiet            do not name the uevent files that could not be written\n"
        "                         (the exit status still says so)\n"
        "      --jobs=N           write up to N uevent files at once, 1 to " CTL_STR(HP_TRIGGER_JOBS_MAX) "\n"
        "                         (default " CTL_STR(HP_TRIGGER_JOBS_DEFAULT) "); a device's event is still sent after\n"
        "                         its ancestors' and, where the list leaves path order,\n"
        "                         after every event before it; 1: in the list's order\n"
        "  -w, --settle           then wait until the daemon has processed exactly these\n"
        "                         events\n"
        "      --done-file=PATH   with --settle, remove PATH first and make it anew once\n"
        "                         every event was processed and every write succeeded\n"
        "                         (it holds the number of events); init scripts wait for it\n"
        "      --skip-handled     leave out the devices whose add already ran in this boot\n"
        "                         (the daemon's, or an earlier instance's it took over,\n"
        "                         such as the initramfs's), and say how many; add only\n"
        "      --timeout=SEC      with --settle, give up after SEC seconds, 0 to\n"
        "                         " CTL_STR(HP_CONTROL_TIMEOUT_MAX_SEC) ", fractions allowed (default "
        CTL_STR(TRIGGER_DEFAULT_TIMEOUT_SEC) ")\n"
        CTL_HELP_SOCKET "                         (with --settle)\n"
        CTL_HELP_HELP "\n"
        "Exit status: 0 triggered (and processed), 1 a DEVICE is not a device (nothing\n"
        "written) or a write failed, 2 timed out, 3 no daemon (or refused), 64 usage.\n";

static const struct option trigger_options[] = {
        { "action", required_argument, NULL, 'c' },
        { "type", required_argument, NULL, 't' },
        { "subsystem-match", required_argument, NULL, 's' },
        { "subsystem-nomatch", required_argument, NULL, 'S' },
        { "sysname-match", required_argument, NULL, 'y' },
        { "attr-match", required_argument, NULL, 'a' },
        { "attr-nomatch", required_argument, NULL, 'A' },
        { "property-match", required_argument, NULL, 'p' },
        { "parent-match", required_argument, NULL, 'b' },
        { "name-match", required_argument, NULL, OPT_NAME_MATCH },
        { "prioritized-subsystem", required_argument, NULL, OPT_PRIORITIZED },
        { "settle", no_argument, NULL, 'w' },
        { "timeout", required_argument, NULL, OPT_TIMEOUT },
        { "dry-run", no_argument, NULL, 'n' },
        { "verbose", no_argument, NULL, 'v' },
        { "quiet", no_argument, NULL, 'q' },
        { "jobs", required_argument, NULL, OPT_JOBS },
        { "done-file", required_argument, NULL, OPT_DONE_FILE },
        { "skip-handled", no_argument, NULL, OPT_SKIP_HANDLED },
        CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
};

/* The long name of option @c, for messages. */
static const char *option_name(int c)
{
        for (const struct option *o = trigger_options; o->name; o++)
                if (o->val == c)
                        return o->name;
        return "?";
}

/* A match option; a device of --parent-match or --name-match is kept as its syspath. */
static int add_match(struct trigger_args *a, int c, enum trigger_match_kind kind, const char *value)
{
        int r = trigger_match_add(&a->m, kind, value);

        if (r == -E2BIG)
                return ctl_usage_error("trigger", "--%s given more than %d times", option_name(c), TRIGGER_MATCH_MAX);
        if (r == -EINVAL)
                return ctl_bad_value("trigger", kind == TRIGGER_MATCH_PROPERTY ? "--property-match" : "--attr-match",
                                     value, kind == TRIGGER_MATCH_PROPERTY ? "PROP=VALUE" : "ATTR or ATTR=VALUE, ATTR a relative path");
        if (r < 0) {
                ctl_err("trigger", "%s", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

int trigger_args_parents(struct trigger_args *a)
{
        char devpath[PATH_MAX], syspath[PATH_MAX + sizeof(SYSFS_ROOT)], node[PATH_MAX];
        int r = CTL_EXIT_OK;

        for (size_t i = 0; r == CTL_EXIT_OK && i < a->n_under; i++) {
                const char *arg = a->under[i].arg;

                if (a->under[i].node && arg[0] != '/') {
                        snprintf(node, sizeof(node), "/dev/%s", arg);
                        arg = node;
                }
                if (ctl_device("trigger", SYSFS_ROOT, arg, devpath, sizeof(devpath)) < 0)
                        return CTL_EXIT_FAILURE;
                snprintf(syspath, sizeof(syspath), SYSFS_ROOT "%s", devpath);
                r = add_match(a, a->under[i].node ? OPT_NAME_MATCH : 'b', TRIGGER_MATCH_PARENT, syspath);
        }
        return r;
}

/* --prioritized-subsystem: a comma-separated list, each name borrowed from @arg (cut in place). */
static int add_prioritized(struct trigger_args *a, char *arg)
{
        for (char *name = strtok(arg, ","); name; name = strtok(NULL, ",")) {
                if (a->n_prio == TRIGGER_MATCH_MAX)
                        return ctl_usage_error("trigger", "--prioritized-subsystem names more than %d subsystems",
                                               TRIGGER_MATCH_MAX);
                a->prio[a->n_prio++] = name;
        }
        return CTL_EXIT_OK;
}

/* Options that take a value other than a match. Return: exit status. */
static int value_option(struct trigger_args *a, int c, char *arg)
{
        uint64_t v;

        switch (c) {
        case 'c':
                a->action = arg;
                return ctl_check_action("trigger", arg);
        case 't':
                if (strcmp(arg, "devices") == 0 || strcmp(arg, "subsystems") == 0 || strcmp(arg, "all") == 0) {
                        a->type = arg[0] == 'd' ? TYPE_DEVICES : arg[0] == 's' ? TYPE_SUBSYSTEMS : TYPE_ALL;
                        return CTL_EXIT_OK;
                }
                return ctl_bad_value("trigger", "--type", arg,
                                     "devices, subsystems or all (-t is --type, as in udevadm trigger; the time limit is --timeout)");
        case OPT_PRIORITIZED:
                return add_prioritized(a, arg);
        case OPT_DONE_FILE:
                a->done_file = arg;
                return arg[0] ? CTL_EXIT_OK : ctl_bad_value("trigger", "--done-file", arg, "a path");
        case OPT_SKIP_HANDLED:
                a->skip_handled = true;
                return CTL_EXIT_OK;
        case OPT_TIMEOUT:
                return ctl_parse_seconds("trigger", "--timeout", arg, 0, HP_CONTROL_TIMEOUT_MAX_SEC, &a->timeout_ms);
        case OPT_JOBS:
                if (decimal_u64(arg, &v) < 0 || v < 1 || v > HP_TRIGGER_JOBS_MAX)
                        return ctl_bad_value("trigger", "--jobs", arg, "a number, 1 to " CTL_STR(HP_TRIGGER_JOBS_MAX));
                a->jobs = (unsigned)v;
                return CTL_EXIT_OK;
        }
        return CTL_EXIT_OK;
}

/* Option @c. Return: exit status. */
static int trigger_option(struct trigger_args *a, int c, char *arg)
{
        static const struct { int c; enum trigger_match_kind kind; } matches[] = {
                { 's', TRIGGER_MATCH_SUBSYSTEM }, { 'S', TRIGGER_NOMATCH_SUBSYSTEM }, { 'y', TRIGGER_MATCH_SYSNAME },
                { 'a', TRIGGER_MATCH_ATTR },      { 'A', TRIGGER_NOMATCH_ATTR },      { 'p', TRIGGER_MATCH_PROPERTY },
        };

        for (size_t i = 0; i < ELEMENTSOF(matches); i++)
                if (c == matches[i].c)
                        return add_match(a, c, matches[i].kind, arg);
        switch (c) {
        case 'b':
        case OPT_NAME_MATCH:
                if (a->n_under == TRIGGER_MATCH_MAX)
                        return ctl_usage_error("trigger", "--parent-match and --name-match given more than %d times",
                                               TRIGGER_MATCH_MAX);
                a->under[a->n_under].arg = arg;
                a->under[a->n_under++].node = c == OPT_NAME_MATCH;
                return CTL_EXIT_OK;
        case 'w':
                a->settle = true;
                return CTL_EXIT_OK;
        case 'n':
                a->dry_run = true;
                return CTL_EXIT_OK;
        case 'v':
                a->verbose = true;
                return CTL_EXIT_OK;
        case 'q':
                a->quiet = true;
                return CTL_EXIT_OK;
        }
        return value_option(a, c, arg);
}

int trigger_args_parse(struct trigger_args *a, int argc, char *argv[])
{
        const struct ctl_getopt g = { "trigger", "c:t:s:S:y:a:A:p:b:wnvqh", trigger_options, help, "DEVICE..." };
        int c, r = CTL_EXIT_OK;

        *a = (struct trigger_args){ .action = "add", .timeout_ms = TRIGGER_DEFAULT_TIMEOUT_SEC * 1000,
                                    .jobs = HP_TRIGGER_JOBS_DEFAULT };
        while (r == CTL_EXIT_OK && (c = ctl_getopt(&g, argc, argv)) >= 0) {
                /* -a was --action's letter: an action word there is the old spelling, not an attribute. */
                if (c == 'a' && ctl_is_action(optarg))
                        return ctl_usage_error("trigger", "-a is --attr-match, as in udevadm trigger: for the action "
                                               "'%s' give -c %s or --action=%s", optarg, optarg, optarg);
                r = trigger_option(a, c, optarg);
        }
        if (r != CTL_EXIT_OK)
                return r;
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (a->done_file && !a->settle)
                return ctl_usage_error("trigger", "--done-file needs --settle");
        if (a->skip_handled && strcmp(a->action, "add") != 0)
                return ctl_usage_error("trigger", "--skip-handled leaves out devices whose add ran: only with "
                                       "--action=add");
        a->devices = argv + optind;
        a->n_devices = (size_t)(argc - optind);
        return CTL_RUN;
}
