/* SPDX-License-Identifier: MIT */
/* hotplugctl: entry point and verb table; each verb lives in ctl-VERB.c. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl/ctl.h"
#include "shared/log.h"

static const struct {
        const char *name;
        int (*run)(int argc, char *argv[]);
        const char *help;
} verbs[] = {
        { "status", verb_status, "ledger counters, queue and running agents" },
        { "settle", verb_settle, "wait until every event so far is processed" },
        { "trigger", verb_trigger, "coldplug: make the kernel re-send device events" },
        { "monitor", verb_monitor, "print events as they arrive and are processed" },
        { "pause", verb_pause, "stop starting agents (events keep queueing)" },
        { "resume", verb_resume, "start agents again" },
        { "reload", verb_reload, "re-read the configuration" },
        { "test", verb_test, "show what the handler chain makes of a device, run nothing" },
        { "record", verb_record, "record kernel uevents to a file" },
        { "timeline", verb_timeline, "draw a recording as SVG or text" },
};

static void usage(FILE *f)
{
        fprintf(f, "Usage: hotplugctl VERB [OPTIONS]\n\nVerbs:\n");
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].help);
        fprintf(f, "\nSee hotplugctl(8).\n");
}

int main(int argc, char *argv[])
{
        log_open(LOG_TARGET_STDERR, "hotplugctl");
        if (argc < 2) {
                usage(stderr);
                return CTL_EXIT_USAGE;
        }
        if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
                printf("hotplugctl %s\n", PACKAGE_VERSION);
                return CTL_EXIT_OK;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return CTL_EXIT_OK;
        }
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(argv[1], verbs[i].name) == 0) {
                        optind = 0; /* full getopt reset for the verb */
                        return verbs[i].run(argc - 1, argv + 1);
                }
        fprintf(stderr, "hotplugctl: unknown verb '%s'\n", argv[1]);
        usage(stderr);
        return CTL_EXIT_USAGE;
}
