/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl settle is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_settle(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: settle is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
