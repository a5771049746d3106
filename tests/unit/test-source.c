/* SPDX-License-Identifier: MIT */
/*
 * The uevent source.  Without arguments: datagrams fed through a socketpair
 * (UEVENT_TRUST_ANY) — receive, empty, oversize, smuggled descriptors.
 * With "kernel" (root only, exit 77 otherwise): a real kernel socket drops a
 * uevent multicast by a userspace process to group 1 but still receives a
 * real synthetic event from the kernel.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/netlink.h"
#include "test.h"
#include "uevent/uevent.h"

static const char dgram[] =
        "add@/devices/virtual/net/hpv3284p\0"
        "ACTION=add\0"
        "DEVPATH=/devices/virtual/net/hpv3284p\0"
        "SUBSYSTEM=net\0"
        "INTERFACE=hpv3284p\0"
        "IFINDEX=7\0"
        "SEQNUM=842\0";

static unsigned count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        check(d);
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

static struct uevent_source *pair_source(int type, int *ret_peer)
{
        struct uevent_source *s = NULL;
        int sv[2];

        check(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) == 0);
        /* A kernel policy on a non-netlink socket is refused and the fd kept. */
        check_int(uevent_source_adopt(sv[0], UEVENT_TRUST_KERNEL, 0, &s), -EPROTOTYPE);
        check(fcntl(sv[0], F_GETFD) >= 0);
        check_int(uevent_source_adopt(sv[0], UEVENT_TRUST_ANY, 0, &s), 0);
        check_int(s->fd, sv[0]);
        check(fcntl(s->fd, F_GETFL) & O_NONBLOCK);
        *ret_peer = sv[1];
        return s;
}

static void receive_expect(struct uevent_source *s, const void *data, size_t size)
{
        const char *got = NULL;
        size_t n = 0;

        check_int(uevent_source_receive(s, &got, &n), 1);
        check_int(n, size);
        check(memcmp(got, data, size) == 0);
}

static void test_pair(int type)
{
        static char big[HP_UEVENT_MAX_SIZE + 2];
        struct uevent_source *s;
        const char *got = NULL;
        size_t n = 0;
        int peer;

        s = pair_source(type, &peer);
        check_int(uevent_source_receive(s, &got, &n), 0);

        /* A datagram comes back byte for byte and parses. */
        check(send(peer, dgram, sizeof(dgram) - 1, 0) == (ssize_t)sizeof(dgram) - 1);
        receive_expect(s, dgram, sizeof(dgram) - 1);
        {
                uint16_t var[HP_UEVENT_MAX_VARS];
                struct uevent ev;
                check(uevent_source_receive(s, &got, &n) == 0);
                check_int(uevent_parse(s->buf, sizeof(dgram) - 1, var, &ev, NULL), 0);
                check_str(ev.devpath, "/devices/virtual/net/hpv3284p");
        }

        /* Exactly HP_UEVENT_MAX_SIZE bytes pass; one more is truncated,
         * counted, and the next datagram is still read. */
        memset(big, 'x', sizeof(big));
        check(send(peer, big, HP_UEVENT_MAX_SIZE, 0) == HP_UEVENT_MAX_SIZE);
        receive_expect(s, big, HP_UEVENT_MAX_SIZE);
        check(send(peer, big, HP_UEVENT_MAX_SIZE + 1, 0) == HP_UEVENT_MAX_SIZE + 1);
        check(send(peer, dgram, sizeof(dgram) - 1, 0) == (ssize_t)sizeof(dgram) - 1);
        check_int(uevent_source_receive(s, &got, &n), -EMSGSIZE);
        check(s->dropped[UEVENT_DROP_TRUNCATED] == 1);
        check_int(s->last_drop, UEVENT_DROP_TRUNCATED);
        receive_expect(s, dgram, sizeof(dgram) - 1);
        check_int(uevent_source_receive(s, &got, &n), 0);
        check(s->dropped[UEVENT_DROP_TRUNCATED] == 1);
        check(s->dropped[UEVENT_DROP_NOT_KERNEL] == 0 && s->dropped[UEVENT_DROP_NOT_ROOT] == 0);

        safe_close(peer);
        uevent_source_free(s);
}

/* Send @dgram with @k descriptors of /dev/null attached. */
static void send_with_fds(int peer, unsigned k)
{
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(16 * sizeof(int))];
        } control;
        struct iovec iov = { .iov_base = (void *)dgram, .iov_len = sizeof(dgram) - 1 };
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = CMSG_SPACE(k * sizeof(int)),
        };
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        int fds[16];

        check(k <= 16);
        memset(&control, 0, sizeof(control));
        for (unsigned i = 0; i < k; i++)
                check((fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(k * sizeof(int));
        memcpy(CMSG_DATA(c), fds, k * sizeof(int));
        check(sendmsg(peer, &msg, 0) == (ssize_t)sizeof(dgram) - 1);
        for (unsigned i = 0; i < k; i++)
                close(fds[i]);
}

static void test_smuggled_fds(void)
{
        struct uevent_source *s;
        const char *got = NULL;
        size_t n = 0;
        unsigned before;
        int peer;

        s = pair_source(SOCK_DGRAM, &peer);
        before = count_fds();

        /* Descriptors that fit the control buffer: the datagram is
         * delivered, the descriptors are closed. */
        send_with_fds(peer, 1);
        check_int(count_fds(), before);
        receive_expect(s, dgram, sizeof(dgram) - 1);
        check_int(count_fds(), before);

        send_with_fds(peer, 3);
        receive_expect(s, dgram, sizeof(dgram) - 1);
        check_int(count_fds(), before);

        /* More than fit: the kernel sets MSG_CTRUNC and installs only some;
         * those are closed and the datagram is dropped as truncated. */
        send_with_fds(peer, 12);
        check_int(uevent_source_receive(s, &got, &n), -EMSGSIZE);
        check_int(s->last_drop, UEVENT_DROP_TRUNCATED);
        check_int(count_fds(), before);

        check_int(uevent_source_receive(s, &got, &n), 0);
        safe_close(peer);
        uevent_source_free(s);
        check_int(count_fds(), before - 2); /* the pair itself */
}

/* ---- the kernel part ---- */

static const char fake[] =
        "add@/devices/virtual/hotplugd-test\0"
        "ACTION=add\0"
        "DEVPATH=/devices/virtual/hotplugd-test\0"
        "SUBSYSTEM=hotplugd-test\0"
        "SEQNUM=1\0";

/* Multicast @fake to group 1 from a userspace netlink socket; return its port id. */
static uint32_t send_fake(void)
{
        struct sockaddr_nl dst = { .nl_family = AF_NETLINK, .nl_pid = 0, .nl_groups = 1 };
        struct sockaddr_nl me = { .nl_family = AF_NETLINK };
        socklen_t l = sizeof(me);
        int fd;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        check(fd >= 0);
        check(bind(fd, (struct sockaddr *)&me, sizeof(me)) == 0);
        check(getsockname(fd, (struct sockaddr *)&me, &l) == 0);
        check(me.nl_pid != 0);
        check(sendto(fd, fake, sizeof(fake) - 1, 0, (struct sockaddr *)&dst, sizeof(dst)) ==
              (ssize_t)sizeof(fake) - 1);
        close(fd);
        return me.nl_pid;
}

static void trigger_change(const char *uuid)
{
        FILE *f = fopen("/sys/class/net/lo/uevent", "we");

        check(f);
        check(fprintf(f, "change %s", uuid) > 0);
        check(fclose(f) == 0);
}

static void read_uuid(char uuid[static 37])
{
        FILE *f = fopen("/proc/sys/kernel/random/uuid", "re");

        check(f);
        check(fgets(uuid, 37, f));
        fclose(f);
        check_int(strlen(uuid), 36);
}

/* One datagram from the kernel socket: what it tells us about our two events. */
static void kernel_one(struct uevent_source *s, int r, const char *data, size_t size, uint32_t fake_pid,
                       const char *uuid, bool *fake_dropped, bool *real_seen)
{
        uint16_t var[HP_UEVENT_MAX_VARS];
        struct uevent ev;
        const char *u;

        if (r == -EPERM) {
                /* Other processes may multicast too; ours is known by its port id. */
                if (s->last_pid == fake_pid) {
                        check_int(s->last_drop, UEVENT_DROP_NOT_KERNEL);
                        *fake_dropped = true;
                }
                return;
        }
        check_int(r, 1);
        /* Nothing a userspace process multicast is ever returned. */
        check(size != sizeof(fake) - 1 || memcmp(data, fake, size) != 0);
        if (uevent_parse(data, size, var, &ev, NULL) < 0)
                return;
        u = uevent_get(&ev, "SYNTH_UUID");
        if (u && strcmp(u, uuid) == 0) {
                check_str(ev.action, "change");
                check_str(ev.devpath, "/devices/virtual/net/lo");
                check_str(ev.subsystem, "net");
                *real_seen = true;
        }
}

static int test_kernel(void)
{
        struct uevent_source *s = NULL;
        bool fake_dropped = false, real_seen = false;
        char uuid[37];
        uint32_t fake_pid;
        uint16_t var[HP_UEVENT_MAX_VARS];
        struct uevent ev;
        time_t deadline;

        if (geteuid() != 0)
                return test_skip("not root: the kernel socket test needs root");
        /* The fake is a well-formed uevent: only the sender check stops it. */
        check_int(uevent_parse(fake, sizeof(fake) - 1, var, &ev, NULL), 0);

        check_int(uevent_source_open(1 << 20, &s), 0);
        check(s->rcvbuf > 0);
        fake_pid = send_fake();
        read_uuid(uuid);
        trigger_change(uuid);

        /* Give up only after 10 s in which nothing at all arrived (a busy
         * machine may be slow to deliver ours, but then it delivers others). */
        deadline = time(NULL) + 10;
        while (!(fake_dropped && real_seen) && time(NULL) < deadline) {
                struct pollfd p = { .fd = s->fd, .events = POLLIN };
                const char *data;
                size_t size;
                int r;

                check(poll(&p, 1, 1000) >= 0);
                while ((r = uevent_source_receive(s, &data, &size)) != 0) {
                        if (r == -ENOBUFS)
                                continue;
                        kernel_one(s, r, data, size, fake_pid, uuid, &fake_dropped, &real_seen);
                        deadline = time(NULL) + 10;
                }
        }
        fprintf(stderr, "   fake dropped: %d, real event %s seen: %d, not-kernel drops: %llu\n", fake_dropped,
                uuid, real_seen, (unsigned long long)s->dropped[UEVENT_DROP_NOT_KERNEL]);
        check(fake_dropped);
        check(real_seen);
        check(s->dropped[UEVENT_DROP_NOT_KERNEL] >= 1);
        uevent_source_free(s);
        return 0;
}

/* A datagram handed out stays in the socket until consumed: a reader that
 * dies before consuming it leaves it to the next reader of the socket. */
static void test_peek(void)
{
        static char big[HP_UEVENT_MAX_SIZE + 1];
        static const char second[] = "add@/x\0ACTION=add\0DEVPATH=/x\0SUBSYSTEM=s\0SEQNUM=2";
        struct uevent_source *s, *next;
        const char *got = NULL;
        size_t n = 0;
        int peer, keep;

        s = pair_source(SOCK_DGRAM, &peer);
        keep = fcntl(s->fd, F_DUPFD_CLOEXEC, 3);
        check(keep >= 0);
        check(send(peer, dgram, sizeof(dgram) - 1, 0) == (ssize_t)sizeof(dgram) - 1);
        check(send(peer, second, sizeof(second), 0) == (ssize_t)sizeof(second));
        receive_expect(s, dgram, sizeof(dgram) - 1);
        /* Killed before consuming it: the next instance gets the same datagram. */
        uevent_source_free(s);
        check_int(uevent_source_adopt(keep, UEVENT_TRUST_ANY, 0, &next), 0);
        receive_expect(next, dgram, sizeof(dgram) - 1);
        check_int(uevent_source_consume(next), 0);
        check_int(uevent_source_consume(next), 0); /* nothing pending: a no-op */
        receive_expect(next, second, sizeof(second));
        /* The next receive consumes the previous datagram by itself. */
        check_int(uevent_source_receive(next, &got, &n), 0);
        /* A dropped datagram is taken off at once. */
        memset(big, 'x', sizeof(big));
        check(send(peer, big, sizeof(big), 0) == (ssize_t)sizeof(big));
        check_int(uevent_source_receive(next, &got, &n), -EMSGSIZE);
        check_int(uevent_source_consume(next), 0);
        check(recv(next->fd, big, sizeof(big), MSG_DONTWAIT) < 0 && errno == EAGAIN);
        uevent_source_free(next);
        safe_close(peer);
}

int main(int argc, char **argv)
{
        if (argc > 1 && strcmp(argv[1], "kernel") == 0)
                return test_kernel();

        fprintf(stderr, "== test_pair(SOCK_DGRAM)\n");
        test_pair(SOCK_DGRAM);
        fprintf(stderr, "== test_pair(SOCK_SEQPACKET)\n");
        test_pair(SOCK_SEQPACKET);
        run_test(test_smuggled_fds);
        run_test(test_peek);
        return 0;
}
