/* SPDX-License-Identifier: MIT */
/*
 * latency-send COUNT INTERVAL_US PREFIX FILE...: write "change UUID" COUNT
 * times round robin over the sysfs uevent FILEs, INTERVAL_US apart (0: as
 * fast as possible), and print "UUID NS" for each: CLOCK_MONOTONIC read just
 * before the write(2) in which the kernel sends the event.  UUIDs are PREFIX
 * (8-4-4-4 hex, 23 characters) and a 12-digit hex counter.  A FILE of the
 * form PATH+ARGS writes "change UUID ARGS" (e.g. SLEEPMS=300; the kernel
 * sends SYNTH_ARG_SLEEPMS=300).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long mono_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char *argv[])
{
        long count, interval;
        int nf, *fds;
        const char **extra;
        long long *sent;
        char line[256];

        if (argc < 5) {
                fprintf(stderr, "usage: latency-send COUNT INTERVAL_US PREFIX FILE[+ARGS]...\n");
                return 64;
        }
        count = strtol(argv[1], NULL, 10);
        interval = strtol(argv[2], NULL, 10);
        nf = argc - 4;
        fds = calloc((size_t)nf, sizeof(*fds));
        extra = calloc((size_t)nf, sizeof(*extra));
        sent = calloc((size_t)count, sizeof(*sent));
        if (!fds || !extra || !sent || strlen(argv[3]) != 23)
                return 64;
        for (int i = 0; i < nf; i++) {
                char *plus = strchr(argv[4 + i], '+');

                if (plus) {
                        *plus = '\0';
                        extra[i] = plus + 1;
                }
                fds[i] = open(argv[4 + i], O_WRONLY | O_CLOEXEC);
                if (fds[i] < 0) {
                        perror(argv[4 + i]);
                        return 1;
                }
        }
        for (long k = 0; k < count; k++) {
                int i = (int)(k % nf);
                int n = snprintf(line, sizeof(line), "change %s-%012lx%s%s", argv[3], k, extra[i] ? " " : "",
                                 extra[i] ? extra[i] : "");

                if (interval > 0 && k > 0)
                        usleep((useconds_t)interval);
                sent[k] = mono_ns();
                if (write(fds[i], line, (size_t)n) != n) {
                        perror("write");
                        return 1;
                }
        }
        for (long k = 0; k < count; k++)
                printf("%s-%012lx %lld\n", argv[3], k, sent[k]);
        return 0;
}
