/* SPDX-License-Identifier: MIT */
/*
 * forge-uevent UUID: multicast a well-formed but forged uevent to netlink
 * group 1 from userspace, as a hostile sender would.  hotplugd must drop it.
 */
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
        struct sockaddr_nl dst = { .nl_family = AF_NETLINK, .nl_groups = 1 };
        char msg[1024];
        int fd, n;

        if (argc != 2) {
                fprintf(stderr, "usage: forge-uevent UUID\n");
                return 64;
        }
        n = snprintf(msg, sizeof(msg),
                     "change@/devices/virtual/net/lo%cACTION=change%cDEVPATH=/devices/virtual/net/lo%c"
                     "SUBSYSTEM=net%cSYNTH_UUID=%s%cINTERFACE=lo%cIFINDEX=1%cSEQNUM=%d%c",
                     0, 0, 0, 0, argv[1], 0, 0, 0, 999999999, 0);
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0) {
                perror("socket");
                return 1;
        }
        if (sendto(fd, msg, (size_t)n, 0, (struct sockaddr *)&dst, sizeof(dst)) != n) {
                perror("sendto");
                return 1;
        }
        close(fd);
        return 0;
}
