/* SPDX-License-Identifier: MIT */
/* hotplugctl: entry point and verb table; each verb lives in ctl-VERB.c. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/log.h"

static const struct {
        const char *name;
        int (*run)(int argc, char *argv[]);
        const char *help;
} verbs[] = {
        { "status", verb_status, "who answers, ledger counters, queue and running agents" },
        { "settle", verb_settle, "wait until every event so far is processed" },
        { "wait", verb_wait, "wait until devices are there (or gone) and their events processed" },
        { "trigger", verb_trigger, "coldplug: make the kernel re-send device events" },
        { "monitor", verb_monitor, "print events as they arrive and are processed" },
        { "pause", verb_pause, "stop starting agents (events keep queueing)" },
        { "resume", verb_resume, "start agents again" },
        { "reload", verb_reload, "re-read the configuration" },
        { "log-level", verb_log_level, "set the daemon's log level until a reload" },
        { "concurrency", verb_concurrency, "set how many agents run at once until a reload" },
        { "test", verb_test, "show what the handler chain makes of a device, run nothing" },
        { "record", verb_record, "record kernel uevents to a file" },
        { "timeline", verb_timeline, "draw a recording as SVG or text" },
        { "blame", verb_blame, "which agents, scripts and devices took the time" },
        { "info", verb_info, "what happened to a device: its last events, programs, variables" },
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: %s [--socket=PATH] VERB [OPTIONS]\n"
                   "       %s VERB --help\n\nVerbs:\n", ctl_program, ctl_program);
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                fprintf(f, "  %-12s %s\n", verbs[i].name, verbs[i].help);
        fprintf(f, "\nOptions:\n"
                   "      --socket=PATH  the daemon's control socket (default $HOTPLUGCTL_SOCKET,\n"
                   "                     else " HOTPLUGD_RUNDIR "/control)\n"
                   "  -h, --help         show this help and exit\n"
                   "  -V, --version      show the version and exit\n"
                   "\nSee hotplugctl(8).\n");
}

static int run_verb(const char *name, int argc, char *argv[])
{
        static char ident[128];
        char esc[256];

        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(name, verbs[i].name) == 0) {
                        /* What the library logs while the verb runs says which verb it was. */
                        snprintf(ident, sizeof(ident), "%s: %s", ctl_program, verbs[i].name);
                        log_open(LOG_TARGET_STDERR, ident);
                        optind = 0; /* full getopt reset for the verb */
                        return verbs[i].run(argc, argv);
                }
        fprintf(stderr, "%s: unknown verb '%s'\nTry '%s --help' for the list of verbs.\n", ctl_program,
                escape_cstr(name, esc, sizeof(esc)), ctl_program);
        return CTL_EXIT_USAGE;
}

int main(int argc, char *argv[])
{
        int i = 1;

        ctl_set_program(argv[0]);
        log_open(LOG_TARGET_STDERR, ctl_program);
        /* Options before the verb: only --socket applies to every verb. */
        while (i < argc && argv[i][0] == '-') {
                if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
                        printf("hotplugctl %s\n", PACKAGE_VERSION);
                        return CTL_EXIT_OK;
                }
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        usage(stdout);
                        return CTL_EXIT_OK;
                }
                if (strncmp(argv[i], "--socket=", 9) == 0 && argv[i][9]) {
                        ctl_set_socket(argv[i] + 9);
                        i++;
                } else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc && argv[i + 1][0]) {
                        ctl_set_socket(argv[i + 1]);
                        i += 2;
                } else if (strncmp(argv[i], "--socket", 8) == 0) {
                        fprintf(stderr, "%s: option '--socket' needs a path\nTry '%s --help' for more information.\n",
                                ctl_program, ctl_program);
                        return CTL_EXIT_USAGE;
                } else {
                        char esc[256];

                        fprintf(stderr, "%s: unknown option '%s' before the verb\nTry '%s --help' for more information.\n",
                                ctl_program, escape_cstr(argv[i], esc, sizeof(esc)), ctl_program);
                        return CTL_EXIT_USAGE;
                }
        }
        if (i >= argc) {
                fprintf(stderr, "%s: no verb given\n", ctl_program);
                usage(stderr);
                return CTL_EXIT_USAGE;
        }
        if (strcmp(argv[i], "help") == 0) {
                if (i + 1 >= argc) {
                        usage(stdout);
                        return CTL_EXIT_OK;
                }
                char *help_argv[] = { argv[i + 1], (char *)"--help", NULL };
                return run_verb(argv[i + 1], 2, help_argv);
        }
        return run_verb(argv[i], argc - i, argv + i);
}
