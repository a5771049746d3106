/* SPDX-License-Identifier: MIT */
/* hotplugctl's command-line conventions (cli.h): names, messages, --help, --socket. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/getopt-refusal.h"
#include "shared/macro.h"

const char *ctl_program = "hotplugctl";

void ctl_set_program(const char *argv0)
{
        const char *slash;

        if (!argv0 || !*argv0)
                return;
        slash = strrchr(argv0, '/');
        if (slash && slash[1])
                ctl_program = slash + 1;
        else if (!slash)
                ctl_program = argv0;
}

/* "PROG: VERB: MESSAGE" without the newline. */
__attribute__((format(printf, 2, 0))) static void vprint_err(const char *verb, const char *fmt, va_list ap)
{
        fprintf(stderr, "%s: %s: ", ctl_program, verb);
        vfprintf(stderr, fmt, ap);
}

void ctl_err(const char *verb, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vprint_err(verb, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

int ctl_usage_error(const char *verb, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vprint_err(verb, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s %s --help' for more information.\n", ctl_program, verb);
        return CTL_EXIT_USAGE;
}

int ctl_bad_value(const char *verb, const char *option, const char *value, const char *expected)
{
        char esc[256];

        return ctl_usage_error(verb, "invalid value '%s' for %s: %s", escape_cstr(value, esc, sizeof(esc)),
                               option, expected);
}

void ctl_help(const struct ctl_getopt *g, FILE *f)
{
        fprintf(f, "Usage: %s %s", ctl_program, g->help);
}

/* After the options: the positional arguments g->args allows?  Return: CTL_GETOPT_END or CTL_GETOPT_ERROR. */
static int check_arguments(const struct ctl_getopt *g, int argc, char *argv[])
{
        size_t len = g->args ? strlen(g->args) : 0;
        bool any = len > 3 && strcmp(g->args + len - 3, "...") == 0;
        bool optional = g->args && g->args[0] == '[';
        int allowed = !g->args ? 0 : any ? INT_MAX : 1;
        char esc[256];

        if (g->args && !any && !optional && optind >= argc) {
                ctl_usage_error(g->verb, "no %s given", g->args);
                return CTL_GETOPT_ERROR;
        }
        if (argc - optind > allowed) {
                ctl_usage_error(g->verb, "unexpected argument '%s'",
                                escape_cstr(argv[optind + allowed], esc, sizeof(esc)));
                return CTL_GETOPT_ERROR;
        }
        return CTL_GETOPT_END;
}

/*
 * Short letters verbs gave up so that each letter means one thing in every
 * verb, as in udevadm (tests/service/ctl-options.py checks the help): each
 * is refused with the spelling to use instead.
 */
static const struct {
        const char *verb;
        char letter;
        const char *use;         /* the verb's spelling now */
        const char *now;         /* what the letter means */
} retired[] = {
        { "wait", 's', "-w or --settle", "--subsystem-match (trigger, monitor), as in udevadm" },
        { "trigger", 'j', "--jobs", "--json (status, monitor, blame)" },
        { "record", 'c', "--count", "--action (trigger), as in udevadm" },
        { "test", 'c', "--config", "--action (trigger), as in udevadm" },
        { "timeline", 'c', "--columns", "--action (trigger), as in udevadm" },
        { "timeline", 's', "--svg", "--subsystem-match (trigger, monitor), as in udevadm" },
        { "timeline", 't', "--text", "--timeout (settle, wait), as in udevadm settle" },
        { "blame", 'n', "--top", "--dry-run (trigger), as in udevadm" },
};

/* Was @letter one of @verb's?  Then say what to use now.  Return: whether it was. */
static bool retired_letter(const char *verb, int letter)
{
        for (size_t i = 0; i < ELEMENTSOF(retired); i++)
                if (retired[i].letter == letter && strcmp(retired[i].verb, verb) == 0) {
                        ctl_usage_error(verb, "option '-%c' is now spelled %s; -%c is %s", letter, retired[i].use,
                                        letter, retired[i].now);
                        return true;
                }
        return false;
}

int ctl_getopt(const struct ctl_getopt *g, int argc, char *argv[])
{
        char shortopts[64], msg[512];
        const char *refused;
        int c;

        snprintf(shortopts, sizeof(shortopts), ":%s", g->shortopts);
        for (;;) {
                int before = optind ? optind : 1; /* 0: getopt starts afresh, at 1 */

                opterr = 0;
                c = getopt_long(argc, argv, shortopts, g->longopts, NULL);
                if (c == -1)
                        return check_arguments(g, argc, argv);
                if (c == 'h') {
                        ctl_help(g, stdout);
                        return CTL_GETOPT_HELP;
                }
                if (c == CTL_OPT_SOCKET) {
                        if (!*optarg) {
                                ctl_bad_value(g->verb, "--socket", optarg, "a path");
                                return CTL_GETOPT_ERROR;
                        }
                        ctl_set_socket(optarg);
                        continue;
                }
                if (c != '?' && c != ':')
                        return c;
                refused = getopt_refused_arg(argc, argv, before);
                if (c == '?' && refused[0] == '-' && refused[1] != '-' && retired_letter(g->verb, optopt))
                        return CTL_GETOPT_ERROR;
                ctl_usage_error(g->verb, "%s", getopt_refusal(c, refused, g->longopts, msg, sizeof(msg)));
                return CTL_GETOPT_ERROR;
        }
}

bool ctl_is_action(const char *value)
{
        static const char *const actions[] = { "add", "remove", "change", "move", "online", "offline", "bind", "unbind" };

        for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
                if (strcmp(value, actions[i]) == 0)
                        return true;
        return false;
}

int ctl_check_action(const char *verb, const char *value)
{
        if (ctl_is_action(value))
                return CTL_EXIT_OK;
        return ctl_bad_value(verb, "--action", value, "one of " CTL_KERNEL_ACTIONS);
}

int ctl_parse_seconds(const char *verb, const char *option, const char *text, uint64_t min_ms, unsigned max_sec,
                      uint64_t *ret_ms)
{
        char expected[96], *end;
        double v;

        errno = 0;
        v = strtod(text, &end);
        /* NaN fails both comparisons. */
        if (errno == 0 && end != text && !*end && v >= 0 && v * 1000 + 0.5 >= (double)min_ms && v <= max_sec) {
                *ret_ms = (uint64_t)(v * 1000 + 0.5);
                return CTL_EXIT_OK;
        }
        snprintf(expected, sizeof(expected), "seconds, %s to %u, fractions allowed", min_ms ? "more than 0" : "0",
                 max_sec);
        return ctl_bad_value(verb, option, text, expected);
}

/* Print "PROG: VERB: ARG: WHY" with @arg escaped; return @r. */
static int device_error(const char *verb, const char *arg, int r, const char *why)
{
        char esc[256];

        ctl_err(verb, "%s: %s", escape_cstr(arg, esc, sizeof(esc)), why);
        return r;
}

int ctl_device(const char *verb, const char *root, const char *arg, char *ret, size_t size)
{
        char rroot[PATH_MAX], path[PATH_MAX], real[PATH_MAX + sizeof("/uevent")], why[2 * PATH_MAX + 128];
        size_t rl, gl = strlen(root);
        struct stat st;
        bool node = false;
        int r;

        if (!realpath(root, rroot)) {
                r = -errno;
                snprintf(why, sizeof(why), "cannot open the sysfs root: %s", strerror(-r));
                return device_error(verb, root, r, why);
        }
        rl = strlen(rroot);
        if (arg[0] != '/') {
                snprintf(why, sizeof(why),
                         "not a device path: give a path below %s, a DEVPATH (/devices/...) or a device node (/dev/...)",
                         rroot);
                return device_error(verb, arg, -EINVAL, why);
        }
        /* Below the root (as given or resolved); a device node, through ROOT/dev; a DEVPATH, taken as below it. */
        if ((strncmp(arg, rroot, rl) == 0 && arg[rl] == '/') || (strncmp(arg, root, gl) == 0 && arg[gl] == '/'))
                r = snprintf(path, sizeof(path), "%s", arg);
        else if ((node = stat(arg, &st) == 0 && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))))
                r = snprintf(path, sizeof(path), "%s/dev/%s/%u:%u", rroot, S_ISBLK(st.st_mode) ? "block" : "char",
                             major(st.st_rdev), minor(st.st_rdev));
        else if (strncmp(arg, "/devices/", strlen("/devices/")) != 0 && access(arg, F_OK) == 0) {
                snprintf(why, sizeof(why), "not a device: neither a device node nor a path below %s", rroot);
                return device_error(verb, arg, -ENODEV, why);
        } else
                r = snprintf(path, sizeof(path), "%s%s", rroot, arg);
        if (r < 0 || (size_t)r >= sizeof(path))
                return device_error(verb, arg, -ENAMETOOLONG, "path too long");
        if (!realpath(path, real)) {
                r = -errno;
                if (r != -ENOENT && r != -ENOTDIR)
                        return device_error(verb, arg, r, strerror(-r));
                if (!node)
                        return device_error(verb, arg, r, "does not exist");
                /* The node is there: what is missing is its device. */
                snprintf(why, sizeof(why), "no device of this node in sysfs (no %s)", path);
                return device_error(verb, arg, -ENODEV, why);
        }
        if (strncmp(real, rroot, rl) != 0 || real[rl] != '/') {
                snprintf(why, sizeof(why), "not a device: %s is not below the sysfs root %s", real, rroot);
                return device_error(verb, arg, -EXDEV, why);
        }
        strcat(real, "/uevent");
        if (access(real, F_OK) < 0) {
                snprintf(why, sizeof(why), "not a device (no %s)", real);
                return device_error(verb, arg, -ENODEV, why);
        }
        real[strlen(real) - strlen("/uevent")] = '\0';
        if (strlen(real + rl) >= size)
                return device_error(verb, arg, -ENAMETOOLONG, "path too long");
        strcpy(ret, real + rl);
        return 0;
}

int ctl_signalfd(void)
{
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return negative_errno();
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        return fd < 0 ? negative_errno() : fd;
}
