/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl trigger is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_trigger(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: trigger is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
