/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl status is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_status(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: status is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
