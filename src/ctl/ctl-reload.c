/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: hotplugctl reload is not written yet. */
#include <stdio.h>

#include "ctl.h"

int verb_reload(int argc, char *argv[])
{
        (void)argc;
        (void)argv;
        fprintf(stderr, "hotplugctl: reload is not available in this build\n");
        return CTL_EXIT_FAILURE;
}
