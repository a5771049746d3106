/* SPDX-License-Identifier: MIT */
/* hotplugctl resume: start agents again after pause. */
#include <getopt.h>
#include <stdio.h>

#include "ctl/client.h"
#include "ctl/ctl.h"

int verb_resume(int argc, char *argv[])
{
        if (argc > 1) {
                fprintf(stderr, "Usage: hotplugctl resume\n");
                return CTL_EXIT_USAGE;
        }
        return ctl_simple("resume", "resume");
}
