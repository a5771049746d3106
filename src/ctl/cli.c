/* SPDX-License-Identifier: MIT */
/* hotplugctl's command-line conventions (cli.h): names, messages, --help, --socket. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/escape.h"

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

/* The long option @arg ("--name" or "--name=value") names, or NULL. */
static const struct option *long_option(const struct ctl_getopt *g, const char *arg)
{
        size_t len;

        if (strncmp(arg, "--", 2) != 0)
                return NULL;
        arg += 2;
        len = strcspn(arg, "=");
        for (const struct option *o = g->longopts; o && o->name; o++)
                if (strlen(o->name) == len && strncmp(o->name, arg, len) == 0)
                        return o;
        /* An unambiguous abbreviation, as getopt_long accepts. */
        const struct option *found = NULL;
        for (const struct option *o = g->longopts; o && o->name; o++)
                if (strncmp(o->name, arg, len) == 0) {
                        if (found)
                                return NULL;
                        found = o;
                }
        return found;
}

/* After the options: the positional arguments g->args allows?  Return: CTL_GETOPT_END or CTL_GETOPT_ERROR. */
static int check_arguments(const struct ctl_getopt *g, int argc, char *argv[])
{
        size_t len = g->args ? strlen(g->args) : 0;
        bool any = len > 3 && strcmp(g->args + len - 3, "...") == 0;
        int allowed = !g->args ? 0 : any ? INT_MAX : 1;
        char esc[256];

        if (g->args && !any && optind >= argc) {
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

int ctl_getopt(const struct ctl_getopt *g, int argc, char *argv[])
{
        char shortopts[64], esc[256];
        const struct option *o;
        const char *arg;
        int c;

        snprintf(shortopts, sizeof(shortopts), ":%s", g->shortopts);
        for (;;) {
                int before = optind;

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
                /* The argument that was wrong: the one getopt just stepped over. */
                arg = optind > before && optind - 1 < argc ? argv[optind - 1] : argv[before < argc ? before : argc - 1];
                if (optopt && !(arg[0] == '-' && arg[1] == '-')) {
                        if (c == ':')
                                ctl_usage_error(g->verb, "option '-%c' needs a value", optopt);
                        else
                                ctl_usage_error(g->verb, "unknown option '-%c'", optopt);
                        return CTL_GETOPT_ERROR;
                }
                o = long_option(g, arg);
                if (c == ':' && o)
                        ctl_usage_error(g->verb, "option '--%s' needs a value", o->name);
                else if (o && o->has_arg == no_argument && strchr(arg, '='))
                        ctl_usage_error(g->verb, "option '--%s' takes no value", o->name);
                else if (strncmp(arg, "--", 2) == 0 && !o && strlen(arg) > 2) {
                        bool ambiguous = false;
                        size_t len = strcspn(arg + 2, "=");
                        for (const struct option *p = g->longopts; p && p->name; p++)
                                ambiguous |= strncmp(p->name, arg + 2, len) == 0;
                        ctl_usage_error(g->verb, "%s option '%.*s'", ambiguous ? "ambiguous" : "unknown",
                                        (int)strcspn(escape_cstr(arg, esc, sizeof(esc)), "="), esc);
                } else
                        ctl_usage_error(g->verb, "unknown option '%s'", escape_cstr(arg, esc, sizeof(esc)));
                return CTL_GETOPT_ERROR;
        }
}


int ctl_check_action(const char *verb, const char *value)
{
        static const char *const actions[] = { "add", "remove", "change", "move", "online", "offline", "bind", "unbind" };

        for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
                if (strcmp(value, actions[i]) == 0)
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
        int r;

        if (!realpath(root, rroot)) {
                r = -errno;
                snprintf(why, sizeof(why), "cannot open the sysfs root: %s", strerror(-r));
                return device_error(verb, root, r, why);
        }
        rl = strlen(rroot);
        if (arg[0] != '/') {
                snprintf(why, sizeof(why), "not a device path: give a path below %s or a DEVPATH (/devices/...)",
                         rroot);
                return device_error(verb, arg, -EINVAL, why);
        }
        /* Below the root (as given or resolved), or a DEVPATH, taken as below it. */
        if ((strncmp(arg, rroot, rl) == 0 && arg[rl] == '/') || (strncmp(arg, root, gl) == 0 && arg[gl] == '/'))
                r = snprintf(path, sizeof(path), "%s", arg);
        else
                r = snprintf(path, sizeof(path), "%s%s", rroot, arg);
        if (r < 0 || (size_t)r >= sizeof(path))
                return device_error(verb, arg, -ENAMETOOLONG, "path too long");
        if (!realpath(path, real)) {
                r = -errno;
                return device_error(verb, arg, r, r == -ENOENT || r == -ENOTDIR ? "does not exist" : strerror(-r));
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
