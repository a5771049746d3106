/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's trivial agent (linked statically when possible): appends
 * "SEQNUM DEVPATH SYNTH_UUID\n" with one write(2) to events.log beside
 * argv[0] and exits.  O_APPEND keeps concurrent lines whole.  Built a
 * second time with SLEEP_USEC as agent-append-sleep: the same, then a sleep,
 * like an agent that waits for something (a device node, a module).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
        char path[PATH_MAX], line[512];
        const char *seq = getenv("SEQNUM"), *dev = getenv("DEVPATH"), *uuid = getenv("SYNTH_UUID");
        char *slash;
        int fd, n;

        (void)argc;
        snprintf(path, sizeof(path) - 16, "%s", argv[0]);
        slash = strrchr(path, '/');
        if (!slash)
                return 2;
        strcpy(slash + 1, "events.log");
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return 3;
        n = snprintf(line, sizeof(line), "%s %s %s\n", seq ? seq : "-", dev ? dev : "-", uuid ? uuid : "-");
        if (write(fd, line, (size_t)n) != n)
                return 4;
#ifdef SLEEP_USEC
        struct timespec ts = { SLEEP_USEC / 1000000, (SLEEP_USEC % 1000000) * 1000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
#endif
        return 0;
}
