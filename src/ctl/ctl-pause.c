/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl pause is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_pause(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: pause is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
