/* SPDX-License-Identifier: MIT */
/*
 * uevent-burst COUNT PREFIX FILE...: write "change UUID" COUNT times, as
 * fast as possible, round-robin over the given sysfs uevent files.  UUIDs
 * are PREFIX (8-4-4-4 hex, 23 chars with dashes) followed by a 12-digit hex
 * counter, so each event is identifiable.  Prints the time taken.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
        struct timespec a, b;
        long count;
        int nf, *fds;

        if (argc < 4) {
                fprintf(stderr, "usage: uevent-burst COUNT PREFIX FILE...\n");
                return 64;
        }
        count = strtol(argv[1], NULL, 10);
        nf = argc - 3;
        fds = calloc((size_t)nf, sizeof(int));
        for (int i = 0; i < nf; i++) {
                fds[i] = open(argv[3 + i], O_WRONLY | O_CLOEXEC);
                if (fds[i] < 0) {
                        perror(argv[3 + i]);
                        return 1;
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < count; i++) {
                char buf[64];
                int n = snprintf(buf, sizeof(buf), "change %s-%012lx", argv[2], i);
                if (pwrite(fds[i % nf], buf, (size_t)n, 0) != n) {
                        perror("write");
                        return 1;
                }
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        for (int i = 0; i < nf; i++)
                close(fds[i]);
        free(fds);
        printf("%ld events in %.3f s\n", count, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
        return 0;
}
