/* SPDX-License-Identifier: MIT */
/*
 * A test agent: reports on stdout what it was started with, one
 * "key value" line each, so test-spawner can check the agent contract:
 *   argc N / argv I VALUE / env KEY=VALUE (in environ order) /
 *   fd N (each open descriptor) / fdlink N TARGET (for 0-2) /
 *   sigblk HEX / sigign HEX / sigcgt HEX / umask OCTAL / pid N / pgrp N / end
 * and writes one line on stderr.  It uses only raw reads of /proc so that
 * it opens nothing that would still be open while it lists /proc/self/fd.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static void report_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        if (!d) {
                printf("error opendir\n");
                return;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
                        continue;
                printf("fd %s\n", de->d_name);
        }
        closedir(d);

        for (int fd = 0; fd <= 2; fd++) {
                char p[64], target[256];
                ssize_t l;

                snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
                l = readlink(p, target, sizeof(target) - 1);
                if (l < 0)
                        continue;
                target[l] = '\0';
                printf("fdlink %d %s\n", fd, target);
        }
}

static void report_signals(void)
{
        char buf[4096], *line;
        ssize_t l;
        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

        if (fd < 0) {
                printf("error status\n");
                return;
        }
        l = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (l <= 0)
                return;
        buf[l] = '\0';
        for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                if (strncmp(line, "SigBlk:\t", 8) == 0)
                        printf("sigblk %s\n", line + 8);
                else if (strncmp(line, "SigIgn:\t", 8) == 0)
                        printf("sigign %s\n", line + 8);
                else if (strncmp(line, "SigCgt:\t", 8) == 0)
                        printf("sigcgt %s\n", line + 8);
        }
}

int main(int argc, char **argv)
{
        printf("argc %d\n", argc);
        for (int i = 0; i < argc; i++)
                printf("argv %d %s\n", i, argv[i]);
        for (char **e = environ; *e; e++)
                printf("env %s\n", *e);
        report_fds();
        report_signals();
        {
                mode_t mask = umask(0);

                printf("umask %04o\n", (unsigned)mask);
        }
        printf("pid %ld\npgrp %ld\nend\n", (long)getpid(), (long)getpgrp());
        fflush(stdout);
        fprintf(stderr, "stderr works\n");
        return 0;
}
