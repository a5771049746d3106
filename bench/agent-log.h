/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The bench agents' log: events.log beside the agent's own path, appended
 * to with one write(2) a line (O_APPEND keeps concurrent lines whole).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Open events.log beside @argv0.  Return: the fd, or -2 (no directory in @argv0), -3 (open failed). */
static inline int agent_log_open(const char *argv0)
{
        char path[PATH_MAX];
        char *slash;
        int fd;

        snprintf(path, sizeof(path) - 16, "%s", argv0);
        slash = strrchr(path, '/');
        if (!slash)
                return -2;
        strcpy(slash + 1, "events.log");
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        return fd < 0 ? -3 : fd;
}
