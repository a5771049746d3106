/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl settle [--timeout SEC] [--socket PATH]: wait until the daemon
 * has processed every event up to the kernel's current SEQNUM
 * (/sys/kernel/uevent_seqnum).
 * Exit: 0 settled, CTL_EXIT_TIMEOUT (2) timed out, CTL_EXIT_NO_DAEMON (3) no
 * daemon or refused, 1 other failure, 64 usage.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl/cli.h"
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

static const char help[] =
        "settle [--timeout=SEC] [--socket=PATH]\n\n"
        "Wait until hotplugd has processed every event up to the kernel's current SEQNUM\n"
        "(/sys/kernel/uevent_seqnum): its agent finished, or it was filtered, dropped as a\n"
        "duplicate or accounted as a gap. Events that arrive meanwhile are not waited for.\n\n"
        "Options:\n"
        "  -t, --timeout=SEC      give up after SEC seconds, 0 to " CTL_STR(HP_CONTROL_TIMEOUT_MAX_SEC)
        ", fractions allowed\n"
        "                         (default " CTL_STR(SETTLE_DEFAULT_TIMEOUT_SEC) ")\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 settled, 1 failure, 2 timed out, 3 no daemon (or refused), 64 usage.\n";

int verb_settle(int argc, char *argv[])
{
        static const struct option opts[] = {
                { "timeout", required_argument, NULL, 't' },
                CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "settle", "t:h", opts, help, NULL };
        uint64_t timeout_ms = SETTLE_DEFAULT_TIMEOUT_SEC * 1000, seqnum, v = 0;
        _cleanup_close_ int fd = -1;
        char req[96], rec[CTL_RECORD_SIZE];
        int c, r;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0)
                if (c == 't' && ctl_parse_seconds("settle", "--timeout", optarg, 0, HP_CONTROL_TIMEOUT_MAX_SEC,
                                                  &timeout_ms) != CTL_EXIT_OK)
                        return CTL_EXIT_USAGE;
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        r = ctl_open("settle", &fd);
        if (r != CTL_EXIT_OK)
                return r;
        /* Read after connecting: every event up to here is in the daemon's socket. */
        r = read_kernel_seqnum(&seqnum);
        if (r < 0) {
                ctl_err("settle", "cannot read /sys/kernel/uevent_seqnum: %s", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        snprintf(req, sizeof(req), "settle %" PRIu64 " %" PRIu64, seqnum, timeout_ms);
        r = ctl_request("settle", fd, req, rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "ok"))
                return CTL_EXIT_OK;
        if (ctlmsg_is(rec, "timeout")) {
                uint64_t udev = 0;
                char why[96] = "";

                (void)ctlmsg_get_u64(rec, "lowest_held", &v);
                (void)ctlmsg_get_u64(rec, "udev_waiting", &udev);
                if (udev)
                        snprintf(why, sizeof(why), " (%" PRIu64 " event(s) waiting for udevd's broadcast)", udev);
                if (v)
                        ctl_err("settle", "timed out waiting for SEQNUM %" PRIu64 "; still held from SEQNUM %" PRIu64 "%s",
                                seqnum, v, why);
                else
                        ctl_err("settle", "timed out waiting for SEQNUM %" PRIu64 "%s", seqnum, why);
                return CTL_EXIT_TIMEOUT;
        }
        if (ctlmsg_is(rec, "error"))
                return ctl_report_error("settle", rec);
        ctl_err("settle", "unexpected reply");
        return CTL_EXIT_FAILURE;
}
