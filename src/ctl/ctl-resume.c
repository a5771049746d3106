/* SPDX-License-Identifier: MIT */
/* hotplugctl resume: start agents again after pause. */
#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"

static const char help[] =
        "resume [--socket=PATH]\n\n"
        "Start agents again after 'hotplugctl pause'; the queued events run in order.\n\n"
        "Options:\n" CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 resumed, 1 failure, 3 no daemon (or refused), 64 usage.\n";

int verb_resume(int argc, char *argv[])
{
        return ctl_simple_verb("resume", help, argc, argv);
}
