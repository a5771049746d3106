/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl log-level LEVEL and hotplugctl concurrency N|auto: change the
 * running daemon's log level and how many agents run at once, until the
 * next reload or restart (which take the configuration's again).  Root only
 * (the daemon refuses the control group).  The value is checked here for a
 * clear usage error, and again by the daemon.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/log.h"
#include "shared/number.h"

static const char log_level_help[] =
        "log-level LEVEL [--socket=PATH]\n\n"
        "Log LEVEL and more severe from now on: err, warning, notice, info, debug\n"
        "(or 0-7), until the daemon reloads its configuration or restarts.\n"
        "hotplugctl status shows the level in force.\n\n"
        "Options:\n" CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 set, 1 failure, 3 no daemon (or refused), 64 usage.\n";

static const char concurrency_help[] =
        "concurrency N|auto [--socket=PATH]\n\n"
        "Run at most N agents at once from now on (1 to max-children), or let the\n"
        "daemon choose (auto), until it reloads its configuration or restarts.\n"
        "hotplugctl status shows the limit in force.\n\n"
        "Options:\n" CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 set, 1 failure (more than max-children), 3 no daemon (or\n"
        "refused), 64 usage.\n";

/* VERB VALUE: the value checked by @valid, sent as "VERB VALUE".  Return: the exit status. */
static int one_value_verb(const char *verb, const char *help, const char *what, bool (*valid)(const char *v),
                          int argc, char *argv[])
{
        static const struct option opts[] = { CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 } };
        const struct ctl_getopt g = { verb, "h", opts, help, "VALUE" };
        char request[64];
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0)
                ;
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (optind + 1 != argc) {
                ctl_err(verb, "%s", optind == argc ? "which value? (see --help)" : "one value only (see --help)");
                return CTL_EXIT_USAGE;
        }
        if (!valid(argv[optind]))
                return ctl_bad_value(verb, verb, argv[optind], what);
        snprintf(request, sizeof(request), "%s %s", verb, argv[optind]);
        return ctl_simple(verb, request);
}

static bool level_valid(const char *v)
{
        return strlen(v) < 16 && log_level_from_string(v) >= 0;
}

static bool concurrency_valid(const char *v)
{
        uint64_t n;

        return strcmp(v, "auto") == 0 || (decimal_u64(v, &n) >= 0 && n >= 1 && n <= HP_CHILDREN_MAX);
}

int verb_log_level(int argc, char *argv[])
{
        return one_value_verb("log-level", log_level_help, "err, warning, notice, info, debug or 0-7", level_valid,
                              argc, argv);
}

int verb_concurrency(int argc, char *argv[])
{
        return one_value_verb("concurrency", concurrency_help, "auto or a number of agents", concurrency_valid,
                              argc, argv);
}
