/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl record is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_record(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: record is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
