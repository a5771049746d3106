/* SPDX-License-Identifier: MIT */
/*
 * Kernel uevent socket.  libmnl opens and binds it; reading is our own
 * recvmsg() because we need the sender address, the credentials and
 * MSG_TRUNC, all of which mnl_socket_recvfrom() hides.
 *
 * Reading is in two steps: recvmsg(MSG_PEEK) hands the datagram out and
 * leaves it queued; uevent_source_consume() takes it off once the caller
 * has put it somewhere safe (the handover journal).  A daemon killed in
 * between finds it again in the socket, which outlives it under systemd.
 * Without a journal nothing is safer than memory, so the reader may ask for
 * one recvmsg() that takes it at once (take_at_once).
 *
 * Trust (UEVENT_TRUST_KERNEL): a datagram is the kernel's only if the sender
 * port id is 0, it came on group 1, SCM_CREDENTIALS are present with uid 0,
 * and it was not truncated.  Everything else is counted and dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>

#include "shared/bounds.h"
#include "shared/macro.h"
#include "uevent/netlink.h"

#define UEVENT_GROUP_KERNEL 1u

static int source_alloc(int fd, enum uevent_trust trust, struct uevent_source **ret)
{
        struct uevent_source *s = calloc(1, sizeof(*s) + HP_UEVENT_MAX_SIZE + 1);

        if (!s)
                return -ENOMEM;
        s->fd = fd;
        s->trust = trust;
        *ret = s;
        return 0;
}

static int set_rcvbuf(int fd, int size)
{
        socklen_t l = sizeof(int);
        int v = 0;

        if (size > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                /* Without CAP_NET_ADMIN: as much as rmem_max allows. */
                (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &l) < 0)
                return negative_errno();
        return v;
}

static int set_passcred(int fd)
{
        int one = 1;

        if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
                return negative_errno();
        return 0;
}

int uevent_source_open(int rcvbuf, struct uevent_source **ret)
{
        struct mnl_socket *nl;
        int fd, r;

        nl = mnl_socket_open2(NETLINK_KOBJECT_UEVENT, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (!nl)
                return negative_errno();
        fd = mnl_socket_get_fd(nl);

        /* Size the buffer before binding so no early burst meets the default. */
        r = set_rcvbuf(fd, rcvbuf);
        if (r < 0)
                goto fail;
        if ((r = set_passcred(fd)) < 0)
                goto fail;
        if (mnl_socket_bind(nl, UEVENT_GROUP_KERNEL, MNL_SOCKET_AUTOPID) < 0) {
                r = negative_errno();
                goto fail;
        }

        /* Keep the fd, drop libmnl's wrapper: everything else is ours. */
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        r = fd < 0 ? negative_errno() : 0;
        mnl_socket_close(nl);
        if (r < 0)
                return r;

        r = source_alloc(fd, UEVENT_TRUST_KERNEL, ret);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        (*ret)->rcvbuf = set_rcvbuf(fd, 0);
        return 0;
fail:
        mnl_socket_close(nl);
        return r;
}

int uevent_source_adopt(int fd, enum uevent_trust trust, int rcvbuf, struct uevent_source **ret)
{
        struct sockaddr_storage sa;
        socklen_t l = sizeof(sa);
        int flags, r;

        if (fd < 0)
                return -EBADF;
        if (getsockname(fd, (struct sockaddr *)&sa, &l) < 0)
                return negative_errno();
        if (trust == UEVENT_TRUST_KERNEL && sa.ss_family != AF_NETLINK)
                return -EPROTOTYPE;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return negative_errno();
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
                return negative_errno();
        if (sa.ss_family == AF_NETLINK && (r = set_passcred(fd)) < 0)
                return r;

        r = source_alloc(fd, trust, ret);
        if (r < 0)
                return r;
        (*ret)->rcvbuf = set_rcvbuf(fd, rcvbuf);
        return 0;
}

struct uevent_source *uevent_source_free(struct uevent_source *s)
{
        if (s) {
                safe_close(s->fd);
                free(s);
        }
        return NULL;
}

int uevent_source_consume(struct uevent_source *s)
{
        if (!s->peeked)
                return 0;
        /* A zero-length read takes the datagram at the head of the queue
         * off it, the one peeked: nobody else reads this socket. */
        for (;;) {
                if (recv(s->fd, NULL, 0, MSG_DONTWAIT | MSG_TRUNC) >= 0)
                        break;
                if (errno == EINTR)
                        continue;
                if (errno == ENOBUFS)
                        s->enobufs++; /* an overflow; the datagram is still queued */
                return negative_errno();
        }
        s->peeked = false;
        return 0;
}

static int drop(struct uevent_source *s, enum uevent_source_drop d, uint32_t pid, uid_t uid)
{
        int r = uevent_source_consume(s);

        if (r < 0)
                return r;
        s->dropped[d]++;
        s->last_drop = d;
        s->last_pid = pid;
        s->last_uid = uid;
        return d == UEVENT_DROP_TRUNCATED ? -EMSGSIZE : -EPERM;
}

int uevent_source_receive(struct uevent_source *s, const char **ret_data, size_t *ret_size)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(struct ucred))];
        } control;
        struct sockaddr_nl snl = { 0 };
        struct iovec iov = { .iov_base = s->buf, .iov_len = HP_UEVENT_MAX_SIZE };
        struct msghdr msg = {
                .msg_name = &snl,
                .msg_namelen = sizeof(snl),
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        const struct ucred *cred = NULL;
        ssize_t n;

        /* The previous datagram is done with, whatever the caller did. */
        n = uevent_source_consume(s);
        if (n < 0)
                return (int)n;
        n = recvmsg(s->fd, &msg, (s->take_at_once ? 0 : MSG_PEEK) | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return 0;
                if (errno == ENOBUFS) {
                        s->enobufs++;
                        return -ENOBUFS;
                }
                return negative_errno();
        }
        s->peeked = !s->take_at_once;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
                    c->cmsg_len == CMSG_LEN(sizeof(struct ucred)))
                        cred = (const struct ucred *)(const void *)CMSG_DATA(c);
                else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        /* Never keep descriptors a sender smuggled in. */
                        int *fds = (int *)(void *)CMSG_DATA(c);
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++)
                                safe_close(fds[i]);
                }
        }

        if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || (size_t)n > HP_UEVENT_MAX_SIZE)
                return drop(s, UEVENT_DROP_TRUNCATED, snl.nl_pid, cred ? cred->uid : (uid_t)-1);

        if (s->trust == UEVENT_TRUST_KERNEL) {
                if (msg.msg_namelen < sizeof(snl) || snl.nl_family != AF_NETLINK || snl.nl_pid != 0 ||
                    snl.nl_groups != UEVENT_GROUP_KERNEL)
                        return drop(s, UEVENT_DROP_NOT_KERNEL, snl.nl_pid, cred ? cred->uid : (uid_t)-1);
                if (!cred || cred->uid != 0)
                        return drop(s, UEVENT_DROP_NOT_ROOT, snl.nl_pid, cred ? cred->uid : (uid_t)-1);
        }

        s->buf[n] = '\0'; /* guard only; the parser checks the datagram's own NUL */
        *ret_data = s->buf;
        *ret_size = (size_t)n;
        return 1;
}

const char *uevent_source_drop_to_string(enum uevent_source_drop d)
{
        switch (d) {
        case UEVENT_DROP_NOT_KERNEL:
                return "sender is not the kernel";
        case UEVENT_DROP_NOT_ROOT:
                return "credentials missing or not uid 0";
        case UEVENT_DROP_TRUNCATED:
                return "datagram truncated";
        default:
                return "unknown";
        }
}
