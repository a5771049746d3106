/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Rebroadcast: re-send a processed event, in kernel format (the original
 * datagram bytes), on another NETLINK_KOBJECT_UEVENT multicast group, as
 * mdevd -O does, so that listeners there (libudev-zero uses group 4) see a
 * device only after its agent finished.  Group 1 is the kernel's own and is
 * refused.  Sending to a multicast group needs CAP_NET_ADMIN.
 *
 * The socket is opened once (close-on-exec, non-blocking).  A failed send
 * (no listener is not a failure; a full listener buffer is) is counted and
 * returned, never fatal: the caller logs it, rate-limited, and goes on.
 * Listeners see the sender's port id (non-zero) and should not apply the
 * kernel trust check (nl_pid == 0) to these messages.
 */

#include <stddef.h>
#include <stdint.h>

/* Highest group a NETLINK_KOBJECT_UEVENT socket can address (a 32-bit group mask). */
#define REBROADCAST_GROUP_MAX 32

struct rebroadcast {
        int fd;
        unsigned group;
        uint64_t sent;        /* datagrams sent */
        uint64_t failed;      /* sends that failed */
        int last_error;       /* negative errno of the last failure, 0 if none */
};

/**
 * rebroadcast_new() - open the sending socket.
 * @group: multicast group, 2..REBROADCAST_GROUP_MAX
 * @ret: the sender, owned by the caller (rebroadcast_free())
 * Return: 0; -EINVAL for group 0, 1 or above the maximum; negative errno from socket(2).
 */
int rebroadcast_new(unsigned group, struct rebroadcast **ret);

/**
 * rebroadcast_send() - send one datagram to the group.
 * @rb: sender
 * @data: the datagram as the kernel sent it (borrowed for the call)
 * @size: its size
 * Return: 0, or negative errno (also counted in @rb->failed and @rb->last_error).
 */
int rebroadcast_send(struct rebroadcast *rb, const void *data, size_t size);

/* Close and free.  Accepts NULL; returns NULL. */
struct rebroadcast *rebroadcast_free(struct rebroadcast *rb);
