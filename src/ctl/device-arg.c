/* SPDX-License-Identifier: MIT */
/* A device on the command line, turned into its DEVPATH (device-arg.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctl/cli.h"
#include "ctl/device-arg.h"
#include "shared/escape.h"
#include "shared/macro.h"

#define SYSFS "/sys"

int ctl_devpath_of_node(const char *node, char *ret, size_t size)
{
        char link[64], real[PATH_MAX];
        struct stat st;

        if (stat(node, &st) < 0)
                return negative_errno();
        if (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
                return -ENOTBLK;
        snprintf(link, sizeof(link), SYSFS "/dev/%s/%u:%u", S_ISBLK(st.st_mode) ? "block" : "char",
                 major(st.st_rdev), minor(st.st_rdev));
        if (!realpath(link, real))
                return negative_errno();
        if (strncmp(real, SYSFS "/", strlen(SYSFS "/")) != 0 || strlen(real + strlen(SYSFS)) >= size)
                return -EXDEV;
        strcpy(ret, real + strlen(SYSFS));
        return 0;
}

int ctl_devpath_of_sysfs(const char *arg, char *ret, size_t size)
{
        char path[PATH_MAX], real[PATH_MAX + sizeof("/uevent")];
        size_t rl = strlen(SYSFS);

        if (strncmp(arg, SYSFS "/", rl + 1) == 0)
                snprintf(path, sizeof(path), "%s", arg);
        else if (snprintf(path, sizeof(path), SYSFS "%s", arg) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        if (!realpath(path, real))
                return negative_errno();
        if (strncmp(real, SYSFS "/", rl + 1) != 0 || strlen(real + rl) >= size)
                return -EXDEV;
        strcat(real, "/uevent");
        if (access(real, F_OK) < 0)
                return -ENODEV;
        real[strlen(real) - strlen("/uevent")] = '\0';
        strcpy(ret, real + rl);
        return 0;
}

int ctl_device_arg_check(const char *verb, const char *arg)
{
        char esc[PATH_MAX];

        if (arg[0] == '/' && (strncmp(arg, "/dev/", 5) == 0 || strncmp(arg, SYSFS "/", 5) == 0 ||
                              strncmp(arg, "/devices/", 9) == 0) &&
            !strstr(arg, "/../") && strlen(arg) < PATH_MAX - 16)
                return CTL_EXIT_OK;
        return ctl_usage_error(verb, "'%s' is not a device: give a path below /sys, a DEVPATH (/devices/...) or a device node (/dev/...)",
                               escape_cstr(arg, esc, sizeof(esc)));
}

bool ctl_device_arg_devpath(const char *arg, char *ret, size_t size)
{
        if (strncmp(arg, SYSFS "/devices/", strlen(SYSFS "/devices/")) == 0)
                arg += strlen(SYSFS);
        if (strncmp(arg, "/devices/", strlen("/devices/")) != 0 || strlen(arg) >= size)
                return false;
        strcpy(ret, arg);
        return true;
}
