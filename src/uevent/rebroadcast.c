/* SPDX-License-Identifier: MIT */
/*
 * Rebroadcast of processed events on a NETLINK_KOBJECT_UEVENT multicast
 * group other than the kernel's.  Invariant: rb->group is never 1, so we
 * can never feed our own (or anyone's) kernel-event listeners.
 */
#include <errno.h>
#include <assert.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "shared/macro.h"
#include "uevent/rebroadcast.h"

int rebroadcast_new(unsigned group, struct rebroadcast **ret)
{
        struct sockaddr_nl local = { .nl_family = AF_NETLINK };
        struct rebroadcast *rb;
        int fd;

        if (group < 2 || group > REBROADCAST_GROUP_MAX)
                return -EINVAL;
        fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return negative_errno();
        /* Subscribe to nothing; the kernel picks our port id. */
        if (bind(fd, (struct sockaddr *)&local, sizeof(local)) < 0) {
                int r = negative_errno();
                safe_close(fd);
                return r;
        }
        rb = calloc(1, sizeof(*rb));
        if (!rb) {
                safe_close(fd);
                return -ENOMEM;
        }
        rb->fd = fd;
        rb->group = group;
        *ret = rb;
        return 0;
}

int rebroadcast_send(struct rebroadcast *rb, const void *data, size_t size)
{
        struct sockaddr_nl dest = {
                .nl_family = AF_NETLINK,
                .nl_pid = 0,
                .nl_groups = 1u << (rb->group - 1),
        };
        ssize_t n;
        int r;

        assert(rb->group >= 2 && rb->group <= REBROADCAST_GROUP_MAX);
        do
                n = sendto(rb->fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&dest, sizeof(dest));
        while (n < 0 && errno == EINTR);
        /* ECONNREFUSED/ESRCH: nobody listens on the group; that is not a failure. */
        if (n < 0 && errno != ECONNREFUSED && errno != ESRCH) {
                r = negative_errno();
                goto fail;
        }
        if (n >= 0 && (size_t)n != size) {
                r = -EMSGSIZE;
                goto fail;
        }
        rb->sent++;
        return 0;
fail:
        rb->failed++;
        rb->last_error = r;
        return r;
}

struct rebroadcast *rebroadcast_free(struct rebroadcast *rb)
{
        if (rb) {
                safe_close(rb->fd);
                free(rb);
        }
        return NULL;
}
