/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl test is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_test(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: test is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
