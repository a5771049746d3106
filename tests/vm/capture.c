/* SPDX-License-Identifier: MIT */
/*
 * vm-capture: the ground truth of the VM suite.  Runs in the guest before
 * hotplugd and before any device is added, and writes every datagram the
 * kernel multicasts on NETLINK_KOBJECT_UEVENT group 1 to a file, as it
 * came, so that tests/vm/check.py can compare what hotplugd's agents got
 * with what the kernel sent.
 *
 *   vm-capture FILE        capture until SIGTERM/SIGINT; prints "ready" on
 *                          stdout once bound
 *   vm-capture --last FILE print the highest SEQNUM in FILE (0 if none)
 *
 * FILE: the 8 bytes "HPCAP1\n\0", then one record per datagram, a header
 * of three little-endian fields, u32 length, u32 sender port, s64
 * CLOCK_REALTIME ns at receipt, followed by the datagram's bytes.  Only
 * datagrams from the kernel (sender port 0) are written.  A lost datagram
 * (ENOBUFS: the receive buffer overflowed) is a record of length 0 and
 * sender port 0xffffffff, so the checker fails instead of guessing.  Each
 * record is one write(): a record is either whole in the file or absent.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "HPCAP1\n"
#define RCVBUF (64 * 1024 * 1024)
#define DGRAM_MAX 65536

struct rec_header {
        uint32_t len;
        uint32_t port;
        int64_t ns;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
        (void)sig;
        stop = 1;
}

static int64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int write_record(int out, uint32_t port, const char *buf, size_t n)
{
        struct rec_header h = { .len = (uint32_t)n, .port = port, .ns = now_ns() };
        struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)buf, n } };
        ssize_t want = (ssize_t)(sizeof(h) + n);

        return writev(out, iov, 2) == want ? 0 : -1;
}

static int open_socket(void)
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
        int size = RCVBUF, fd;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0)
                return -1;
        /* FORCE: above rmem_max, as root. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0 &&
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0)
                perror("vm-capture: SO_RCVBUF");
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static int capture(const char *path)
{
        static char buf[DGRAM_MAX];
        struct sigaction sa = { .sa_handler = on_signal };
        int fd, out;

        sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: recvfrom returns EINTR */
        sigaction(SIGINT, &sa, NULL);
        fd = open_socket();
        if (fd < 0) {
                perror("vm-capture: netlink");
                return 1;
        }
        out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (out < 0 || write(out, MAGIC, sizeof(MAGIC)) != sizeof(MAGIC)) {
                perror(path);
                return 1;
        }
        printf("ready\n");
        fflush(stdout);
        while (!stop) {
                struct sockaddr_nl from;
                socklen_t fl = sizeof(from);
                ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

                if (n < 0 && errno == ENOBUFS) {
                        fprintf(stderr, "vm-capture: receive buffer overflowed, datagrams lost\n");
                        if (write_record(out, UINT32_MAX, buf, 0) < 0)
                                return 1;
                        continue;
                }
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("vm-capture: recvfrom");
                        return 1;
                }
                if (from.nl_pid != 0)
                        continue;
                if (write_record(out, 0, buf, (size_t)n) < 0) {
                        perror("vm-capture: write");
                        return 1;
                }
        }
        return close(out) < 0;
}

/* The highest SEQNUM= among the datagrams of @path. */
static int last_seqnum(const char *path)
{
        static char buf[DGRAM_MAX + 1];
        unsigned long long best = 0;
        struct rec_header h;
        char magic[sizeof(MAGIC)];
        FILE *f = fopen(path, "re");

        if (!f || fread(magic, sizeof(magic), 1, f) != 1 || memcmp(magic, MAGIC, sizeof(MAGIC)) != 0) {
                fprintf(stderr, "vm-capture: %s: not a capture\n", path);
                return 1;
        }
        while (fread(&h, sizeof(h), 1, f) == 1) {
                if (h.len > DGRAM_MAX || (h.len > 0 && fread(buf, h.len, 1, f) != 1))
                        break;
                buf[h.len] = '\0';
                for (size_t i = 0; i < h.len; i += strlen(buf + i) + 1)
                        if (strncmp(buf + i, "SEQNUM=", 7) == 0) {
                                unsigned long long s = strtoull(buf + i + 7, NULL, 10);
                                if (s > best)
                                        best = s;
                        }
        }
        fclose(f);
        printf("%llu\n", best);
        return 0;
}

int main(int argc, char *argv[])
{
        if (argc == 3 && strcmp(argv[1], "--last") == 0)
                return last_seqnum(argv[2]);
        if (argc != 2 || argv[1][0] == '-') {
                fprintf(stderr, "usage: vm-capture FILE | vm-capture --last FILE\n");
                return 64;
        }
        return capture(argv[1]);
}
