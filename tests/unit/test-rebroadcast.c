/* SPDX-License-Identifier: MIT */
/*
 * Rebroadcast on a netlink uevent group: group checks (unit suite, no
 * root), and with the argument "kernel" (kernel suite, root) a real
 * listener on the group receiving the exact bytes, while a group-1 listener
 * does not.  Not root: the send part is skipped (exit 77), unless
 * HOTPLUGD_TEST_REQUIRE_ROOT=1 makes that a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/rebroadcast.h"
#include "test.h"

#define TEST_GROUP 27

static void test_groups(void)
{
        struct rebroadcast *rb = NULL;

        check_int(rebroadcast_new(0, &rb), -EINVAL);
        check_int(rebroadcast_new(1, &rb), -EINVAL);  /* the kernel's group: never */
        check_int(rebroadcast_new(REBROADCAST_GROUP_MAX + 1, &rb), -EINVAL);
        check(rb == NULL);
        check_int(rebroadcast_new(4, &rb), 0);
        check_int(rb->group, 4);
        check(fcntl(rb->fd, F_GETFD) & FD_CLOEXEC);
        check(fcntl(rb->fd, F_GETFL) & O_NONBLOCK);
        rebroadcast_free(rb);
        check(rebroadcast_free(NULL) == NULL);
}

static int listener(unsigned group)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1u << (group - 1) };
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);

        check(fd >= 0);
        check(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
        return fd;
}

/* Wait up to @ms for a datagram equal to @want on @fd.  Return: sender port id, or 0 if none came. */
static uint32_t receive_match(int fd, const char *want, size_t size, int ms)
{
        char buf[8192];
        struct sockaddr_nl from;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                socklen_t l = sizeof(from);
                ssize_t n;

                if (poll(&p, 1, ms) <= 0)
                        return 0;
                n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &l);
                if (n < 0)
                        continue;
                /* Other traffic on the group (kernel events on group 1) is ignored. */
                if ((size_t)n == size && memcmp(buf, want, size) == 0)
                        return from.nl_pid;
        }
}

static void test_send(void)
{
        struct rebroadcast *rb;
        char msg[512];
        size_t size;
        int fd_n, fd_1;

        size = (size_t)snprintf(msg, sizeof(msg),
                                "change@/devices/virtual/test%d%cACTION=change%cDEVPATH=/devices/virtual/test%d%c"
                                "SUBSYSTEM=test%cSEQNUM=1%cBYTES=\xff\x01",
                                getpid(), 0, 0, getpid(), 0, 0, 0) + 1;
        fd_n = listener(TEST_GROUP);
        fd_1 = listener(1);

        check_int(rebroadcast_new(TEST_GROUP, &rb), 0);
        check_int(rebroadcast_send(rb, msg, size), 0);
        check(receive_match(fd_n, msg, size, 2000) != 0);  /* from our port, not the kernel's 0 */
        check(receive_match(fd_1, msg, size, 200) == 0);   /* the kernel's group never sees it */
        check_int(rb->sent, 1);
        check_int(rb->failed, 0);

        /* Nobody listening is not a failure. */
        close(fd_n);
        close(fd_1);
        check_int(rebroadcast_send(rb, msg, size), 0);
        check_int(rb->failed, 0);
        rebroadcast_free(rb);
}

int main(int argc, char *argv[])
{
        if (argc < 2 || strcmp(argv[1], "kernel") != 0) {
                run_test(test_groups); /* real multicasts are for the kernel suite */
                return 0;
        }
        if (geteuid() != 0)
                return test_skip("sending to a netlink group needs root");
        run_test(test_send);
        return 0;
}
