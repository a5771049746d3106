/* SPDX-License-Identifier: MIT */
/*
 * udev-forge SEQNUM ACTION DEVPATH SUBSYSTEM: multicast one message in
 * libudev's format on the "udev" netlink group (2), as udevd broadcasts a
 * finished event, from this process.  For the after-udev test: a broadcast
 * that does not come from udevd, or does not match the kernel's event,
 * must not release an event.  Exit 0 sent, 1 the send failed (errno
 * printed: a sender that is not root gets EPERM from the kernel).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* libudev's header before the properties; numbers in host order but the magic and hashes. */
struct udev_wire_header {
        char prefix[8];
        unsigned magic;
        unsigned header_size;
        unsigned properties_off;
        unsigned properties_len;
        unsigned filter_subsystem_hash;
        unsigned filter_devtype_hash;
        unsigned filter_tag_bloom_hi;
        unsigned filter_tag_bloom_lo;
};

#define UDEV_WIRE_MAGIC 0xfeedcafeU
#define UDEV_GROUP 2

int main(int argc, char *argv[])
{
        struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = UDEV_GROUP };
        struct udev_wire_header h = { .prefix = "libudev" };
        char props[1024], buf[sizeof(h) + sizeof(props)];
        int fd, n;

        if (argc != 5) {
                fprintf(stderr, "usage: udev-forge SEQNUM ACTION DEVPATH SUBSYSTEM\n");
                return 2;
        }
        n = snprintf(props, sizeof(props), "ACTION=%s%cDEVPATH=%s%cSUBSYSTEM=%s%cSEQNUM=%s%c", argv[2], 0, argv[3],
                     0, argv[4], 0, argv[1], 0);
        if (n < 0 || (size_t)n >= sizeof(props)) {
                fprintf(stderr, "udev-forge: arguments too long\n");
                return 2;
        }
        h.magic = htonl(UDEV_WIRE_MAGIC);
        h.header_size = sizeof(h);
        h.properties_off = sizeof(h);
        h.properties_len = (unsigned)n;
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h), props, (size_t)n);
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0) {
                perror("udev-forge: socket");
                return 1;
        }
        if (sendto(fd, buf, sizeof(h) + (size_t)n, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
                fprintf(stderr, "udev-forge: send: %s\n", strerror(errno));
                close(fd);
                return 1;
        }
        close(fd);
        return 0;
}
