/* SPDX-License-Identifier: MIT */
/*
 * A control client that never stops sending, for tests/kernel/files.sh
 * (run it as a non-root user, so that hotplugd refuses it): connects to the
 * SOCK_SEQPACKET socket argv[1] and, from argv[2] processes sharing the
 * connection, says "connected" on stdout and sends one-byte packets in batches (sendmmsg) until the
 * daemon closes the connection (exit 0) or it is killed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BATCH 256

int main(int argc, char *argv[])
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        static struct mmsghdr msgs[BATCH];
        static struct iovec iov = { .iov_base = "x", .iov_len = 1 };
        unsigned long sent = 0;
        int fd, n;

        if (argc != 3 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
                fprintf(stderr, "usage: refuse-flood SOCKET PROCESSES\n");
                return 64;
        }
        signal(SIGPIPE, SIG_IGN);
        strcpy(sa.sun_path, argv[1]);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                perror("refuse-flood: connect");
                return 1;
        }
        for (int i = 0; i < BATCH; i++) {
                msgs[i].msg_hdr.msg_iov = &iov;
                msgs[i].msg_hdr.msg_iovlen = 1;
        }
        printf("connected\n");
        fflush(stdout);
        n = atoi(argv[2]);
        for (int i = 1; i < n; i++)
                if (fork() == 0)
                        break;
        for (;;) {
                /* Spin on a full queue: refill each slot the daemon frees at once. */
                int r = sendmmsg(fd, msgs, BATCH, MSG_DONTWAIT);

                if (r < 0 && errno != EINTR && errno != EAGAIN)
                        break;
                if (r > 0)
                        sent += (unsigned long)r;
        }
        fprintf(stderr, "%d %lu packets sent before the daemon closed (%s)\n", (int)getpid(), sent, strerror(errno));
        return 0;
}
