/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl reload: make the daemon re-read its configuration.  A broken
 * configuration is refused by the daemon (the old one stays); its reason
 * (file, line, why) is printed and the exit status is 1.
 */
#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"

static const char help[] =
        "reload [--socket=PATH]\n\n"
        "Make hotplugd re-read its configuration file, as on SIGHUP. A broken file is\n"
        "refused and the running configuration stays; the reason (file:line: why) is\n"
        "printed.\n\n"
        "Options:\n" CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 reloaded, 1 refused or failed, 3 no daemon (or refused), 64 usage.\n";

int verb_reload(int argc, char *argv[])
{
        return ctl_simple_verb("reload", help, argc, argv);
}
