/* SPDX-License-Identifier: MIT */
/* hotplugctl pause: stop starting agents; events keep queueing in the daemon. */
#include <getopt.h>
#include <stdio.h>

#include "ctl/client.h"
#include "ctl/ctl.h"

int verb_pause(int argc, char *argv[])
{
        if (argc > 1) {
                fprintf(stderr, "Usage: hotplugctl pause\n");
                return CTL_EXIT_USAGE;
        }
        return ctl_simple("pause", "pause");
}
