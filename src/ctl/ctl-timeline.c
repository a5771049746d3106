/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl timeline is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_timeline(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: timeline is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
