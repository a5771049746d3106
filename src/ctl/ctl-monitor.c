/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl monitor is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_monitor(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: monitor is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
