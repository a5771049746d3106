/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl settle [--timeout SEC]: wait until the daemon has processed
 * every event up to the kernel's current SEQNUM (/sys/kernel/uevent_seqnum).
 * Exit: 0 settled, CTL_EXIT_TIMEOUT (2) timed out, CTL_EXIT_NO_DAEMON (3) no
 * daemon or refused, 1 other failure, 64 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/macro.h"
#include "shared/sysfs.h"

#define SETTLE_DEFAULT_TIMEOUT_SEC 120

static int read_kernel_seqnum(uint64_t *ret)
{
        _cleanup_close_ int rootfd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (rootfd < 0)
                return negative_errno();
        return sysfs_read_seqnum(rootfd, ret);
}

/* Parse seconds, fractions allowed, into milliseconds. */
static int parse_timeout_ms(const char *s, uint64_t *ret)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || v < 0 || v > HP_CONTROL_TIMEOUT_MAX_SEC)
                return -EINVAL;
        *ret = (uint64_t)(v * 1000 + 0.5);
        return 0;
}

static int usage(void)
{
        fprintf(stderr, "Usage: hotplugctl settle [--timeout SEC]\n"
                        "Wait until hotplugd has processed every event up to the kernel's current SEQNUM.\n"
                        "Exit status: 0 settled, 2 timed out, 3 no daemon, 1 failure.\n");
        return CTL_EXIT_USAGE;
}

int verb_settle(int argc, char *argv[])
{
        static const struct option options[] = {
                { "timeout", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        uint64_t timeout_ms = SETTLE_DEFAULT_TIMEOUT_SEC * 1000, seqnum, v = 0;
        _cleanup_close_ int fd = -1;
        char req[96], rec[CTL_RECORD_SIZE];
        int c, r;

        while ((c = getopt_long(argc, argv, "t:h", options, NULL)) >= 0) {
                if (c == 't' && parse_timeout_ms(optarg, &timeout_ms) == 0)
                        continue;
                if (c == 't')
                        fprintf(stderr, "hotplugctl: settle: --timeout needs seconds (0..%d): %s\n",
                                HP_CONTROL_TIMEOUT_MAX_SEC, optarg);
                return usage();
        }
        if (optind < argc)
                return usage();
        r = ctl_open("settle", &fd);
        if (r != CTL_EXIT_OK)
                return r;
        /* Read after connecting: every event up to here is in the daemon's socket. */
        r = read_kernel_seqnum(&seqnum);
        if (r < 0) {
                fprintf(stderr, "hotplugctl: settle: cannot read /sys/kernel/uevent_seqnum: %s\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        snprintf(req, sizeof(req), "settle %" PRIu64 " %" PRIu64, seqnum, timeout_ms);
        r = ctl_request("settle", fd, req, rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "ok"))
                return CTL_EXIT_OK;
        if (ctlmsg_is(rec, "timeout")) {
                (void)ctlmsg_get_u64(rec, "lowest_held", &v);
                fprintf(stderr, "hotplugctl: settle: timed out waiting for SEQNUM %" PRIu64 "%s", seqnum,
                        v ? "; still held from SEQNUM " : "\n");
                if (v)
                        fprintf(stderr, "%" PRIu64 "\n", v);
                return CTL_EXIT_TIMEOUT;
        }
        return ctlmsg_is(rec, "error") ? ctl_report_error("settle", rec) : CTL_EXIT_FAILURE;
}
