/* SPDX-License-Identifier: MIT */
/* hotplugctl: entry point; verbs live in one file each (ctl-*.c). */
#include <stdio.h>
#include <string.h>

#include "config.h"

int main(int argc, char *argv[])
{
        if (argc > 1 && strcmp(argv[1], "--version") == 0) {
                printf("hotplugctl %s\n", PACKAGE_VERSION);
                return 0;
        }
        fprintf(stderr, "Usage: hotplugctl VERB [OPTIONS]\n");
        return 64;
}
