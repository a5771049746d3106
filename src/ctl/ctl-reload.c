/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl reload: make the daemon re-read its configuration.  A broken
 * configuration is refused by the daemon (the old one stays); its reason
 * (file, line, why) is printed and the exit status is 1.
 */
#include <stdio.h>

#include "ctl/client.h"
#include "ctl/ctl.h"

int verb_reload(int argc, char *argv[])
{
        if (argc > 1) {
                fprintf(stderr, "Usage: hotplugctl reload\n");
                return CTL_EXIT_USAGE;
        }
        return ctl_simple("reload", "reload");
}
