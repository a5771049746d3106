/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl resume is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_resume(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: resume is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
