/* SPDX-License-Identifier: MIT */
/*
 * udev-stamp: print "SYNTH_UUID NS" for every broadcast of udevd (netlink
 * group 2, libudev's framing) that carries a SYNTH_UUID, NS being
 * CLOCK_MONOTONIC when it was read (netlink sockets give no receive time
 * stamps: bench/after-udev.sh runs it SCHED_FIFO so that it reads at once);
 * until SIGTERM.  For bench/after-udev.sh: the moment udevd said it
 * finished an event.  Prints "ready" on stderr once bound.  A line is
 * flushed as it is written.
 */
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UDEV_GROUP 2

/* libudev's header: "libudev\0", magic, header size, properties offset and length, filter hashes. */
struct udev_wire_header {
        char prefix[8];
        unsigned magic, header_size, properties_off, properties_len;
        unsigned filter[4];
};

int main(void)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = UDEV_GROUP };
        static char buf[1 << 16];
        int fd, size = 64 << 20;

        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                perror("udev-stamp");
                return 1;
        }
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));

        setvbuf(stdout, NULL, _IOLBF, 0);
        fprintf(stderr, "ready\n");
        for (;;) {
                struct udev_wire_header h;
                struct timespec t;
                ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

                clock_gettime(CLOCK_MONOTONIC, &t);
                if (n < (ssize_t)sizeof(h))
                        continue;
                memcpy(&h, buf, sizeof(h));
                if (memcmp(h.prefix, "libudev", 8) != 0 || h.properties_off >= (size_t)n ||
                    h.properties_len > (size_t)n - h.properties_off)
                        continue;
                buf[h.properties_off + h.properties_len] = '\0';
                for (size_t i = h.properties_off; i < h.properties_off + h.properties_len;
                     i += strlen(buf + i) + 1)
                        if (strncmp(buf + i, "SYNTH_UUID=", 11) == 0) {
                                printf("%s %lld\n", buf + i + 11, (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
                                break;
                        }
        }
}
