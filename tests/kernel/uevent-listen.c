/* SPDX-License-Identifier: MIT */
/*
 * uevent-listen GROUP SECONDS [KEY...]: print one line per datagram
 * received on NETLINK_KOBJECT_UEVENT multicast GROUP within SECONDS:
 *   "<CLOCK_REALTIME ns> <sender port> <SEQNUM> <SYNTH_UUID or -> [<KEY's value or -> ...]"
 * Prints "ready" on stderr once bound.
 */
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *get(const char *buf, size_t n, const char *key)
{
        size_t kl = strlen(key);

        for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
                if (strncmp(buf + i, key, kl) == 0 && buf[i + kl] == '=')
                        return buf + i + kl + 1;
        return "-";
}

int main(int argc, char *argv[])
{
        struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
        long long deadline;
        char buf[8193];
        int fd;

        if (argc < 3)
                return 64;
        sa.nl_groups = 1u << (atoi(argv[1]) - 1);
        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                perror("uevent-listen");
                return 1;
        }
        fprintf(stderr, "ready\n");
        setvbuf(stdout, NULL, _IOLBF, 0);
        deadline = now_ns() + atoll(argv[2]) * 1000000000LL;
        while (now_ns() < deadline) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                struct sockaddr_nl from;
                socklen_t fl = sizeof(from);
                ssize_t n;

                if (poll(&p, 1, 100) <= 0)
                        continue;
                n = recvfrom(fd, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &fl);
                if (n <= 0)
                        continue;
                buf[n] = '\0';
                printf("%lld %u %s %s", now_ns(), from.nl_pid, get(buf, (size_t)n, "SEQNUM"),
                       get(buf, (size_t)n, "SYNTH_UUID"));
                for (int k = 3; k < argc; k++)
                        printf(" %s", get(buf, (size_t)n, argv[k]));
                printf("\n");
        }
        return 0;
}
