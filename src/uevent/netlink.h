/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The uevent source: a NETLINK_KOBJECT_UEVENT socket bound to group 1 (or an
 * fd handed over by systemd, or one end of a socketpair in tests) and a
 * trust policy deciding which datagrams are the kernel's.
 *
 * The source owns its fd and one receive buffer of HP_UEVENT_MAX_SIZE + 1
 * bytes; a datagram returned by uevent_source_receive() stays valid until
 * the next call.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum uevent_trust {
        /* Netlink: sender nl_pid 0, SCM_CREDENTIALS uid 0, group 1. */
        UEVENT_TRUST_KERNEL,
        /* Any sender (socketpair in tests, replay).  Size checks still apply. */
        UEVENT_TRUST_ANY,
};

enum uevent_source_drop {
        UEVENT_DROP_NOT_KERNEL,  /* nl_pid != 0, or no/wrong group */
        UEVENT_DROP_NOT_ROOT,    /* credentials missing or uid != 0 */
        UEVENT_DROP_TRUNCATED,   /* MSG_TRUNC: larger than HP_UEVENT_MAX_SIZE */
        _UEVENT_DROP_MAX,
};

struct uevent_source {
        int fd;
        enum uevent_trust trust;
        int rcvbuf;                        /* effective SO_RCVBUF after setup */
        uint64_t dropped[_UEVENT_DROP_MAX];
        uint64_t enobufs;
        /* details of the last dropped datagram, for the caller's log line */
        enum uevent_source_drop last_drop;
        uint32_t last_pid;
        uid_t last_uid;
        bool peeked;                       /* a datagram was handed out and is still queued */
        /* Set by the reader: nothing keeps a datagram safer than its
         * memory does (no handover journal), so a receive reads it off the
         * socket at once instead of peeking (one system call, not two). */
        bool take_at_once;
        char buf[];                        /* HP_UEVENT_MAX_SIZE + 1 */
};

/**
 * uevent_source_open() - open and bind our own kernel uevent socket.
 * @rcvbuf: receive buffer in bytes (SO_RCVBUFFORCE, falling back to SO_RCVBUF)
 * @ret: the new source, owned by the caller
 *
 * The socket is non-blocking, close-on-exec, with SO_PASSCRED.
 * Return: 0 or negative errno.
 */
int uevent_source_open(int rcvbuf, struct uevent_source **ret);

/**
 * uevent_source_adopt() - wrap an existing socket (consumed on success).
 * @fd: socket from systemd (netlink) or a test (socketpair, SOCK_DGRAM/SEQPACKET)
 * @trust: policy for this socket
 * @rcvbuf: receive buffer to request, 0 to leave it alone
 *
 * Sets O_NONBLOCK and, for netlink, SO_PASSCRED.
 * Return: 0 or negative errno (@fd untouched on failure).
 */
int uevent_source_adopt(int fd, enum uevent_trust trust, int rcvbuf, struct uevent_source **ret);

/* Close the socket and free. Accepts NULL; returns NULL. */
struct uevent_source *uevent_source_free(struct uevent_source *s);

/**
 * uevent_source_receive() - read one datagram, leaving it queued in the socket.
 * @s: source
 * @ret_data: set to the datagram (borrowed from @s until the next call)
 * @ret_size: its size
 *
 * The datagram is only peeked at: it stays in the socket until
 * uevent_source_consume() or the next uevent_source_receive(), so a process
 * killed while handling it leaves it to the next reader of the socket.
 * Dropped datagrams are taken off at once, and so is every datagram when
 * @s->take_at_once is set (then uevent_source_consume() has nothing to do).
 *
 * Return: 1 with a trusted datagram; 0 when nothing more is readable;
 * -ENOBUFS when the kernel dropped messages (counted in @s->enobufs; keep
 * reading); -EPERM when a datagram was dropped by the trust policy and
 * -EMSGSIZE when truncated (both counted in @s->dropped; keep reading);
 * other negative errno on socket failure.
 */
int uevent_source_receive(struct uevent_source *s, const char **ret_data, size_t *ret_size);

/**
 * uevent_source_consume() - take the datagram last returned off the socket.
 * @s: source
 *
 * Call it once the datagram is accounted for (journalled, or dropped on
 * purpose).  Nothing to do when none is pending.
 * Return: 0 or negative errno; -ENOBUFS (counted in @s->enobufs) is an
 * overflow the kernel reported on this read: the datagram is still queued,
 * call again.
 */
int uevent_source_consume(struct uevent_source *s);

const char *uevent_source_drop_to_string(enum uevent_source_drop d);
