/* SPDX-License-Identifier: MIT */
/* hotplugctl pause: stop starting agents; events keep queueing in the daemon. */
#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"

static const char help[] =
        "pause [--socket=PATH]\n\n"
        "Stop starting agents. Events keep arriving and queue in the daemon (up to\n"
        "max-queue) until 'hotplugctl resume'. Running agents finish.\n\n"
        "Options:\n" CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 paused, 1 failure, 3 no daemon (or refused), 64 usage.\n";

int verb_pause(int argc, char *argv[])
{
        return ctl_simple_verb("pause", help, argc, argv);
}
