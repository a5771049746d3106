/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl wait [--removed] [--settle] [--timeout SEC] DEVICE...: wait
 * until each device is there and its latest event was processed (its agent
 * finished, or it was filtered), or with --removed until it is gone and its
 * remove was processed; what udevadm wait does for udevd.
 * Exit: 0 done, CTL_EXIT_TIMEOUT (2) timed out, CTL_EXIT_NO_DAEMON (3) no
 * daemon or refused, 1 other failure, 64 usage.
 *
 * How it waits, without polling: a monitor connection tells of every event
 * the daemon receives; a device's state is what the last of its events said
 * (add, change, bind...: there; remove: gone), and sysfs only until one
 * came.  Once every device is in the wanted state, "settle K T DEVPATH" on a
 * second connection waits until the daemon holds no event of that device up
 * to K, the kernel's SEQNUM read then (and with --settle, a plain settle K:
 * no event at all).  A device there is settled with "present": the daemon
 * answers only once it has the device's add too and holds no event of it,
 * since sysfs shows a device before the kernel sends its add (at once for
 * most, after the partition scan for a disk), so K may be older than the
 * add.  Until then, each record of the monitor is a reason to look again,
 * nothing else.
 *
 * Invariant: a device's DEVPATH, once known, is kept; its state changes
 * only by its own events after that.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "ctl/device-arg.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "shared/sysfs.h"
#include "shared/time-util.h"

#define WAIT_DEFAULT_TIMEOUT_SEC 120
#define SYSFS "/sys"

enum dev_state { DEV_UNKNOWN, DEV_PRESENT, DEV_GONE };

struct wdev {
        const char *arg;              /* as given (borrowed from argv) */
        char devpath[PATH_MAX];       /* "" until known */
        enum dev_state state;         /* from its last event; DEV_UNKNOWN: ask sysfs */
};

struct wait_opts {
        bool removed, settle;
        uint64_t timeout_ms;
};

static const char help[] =
        "wait [--removed] [--settle] [--timeout=SEC] [--socket=PATH] DEVICE...\n\n"
        "Wait until each DEVICE exists and its latest event was processed by hotplugd (its\n"
        "agent finished, or it was filtered), or with --removed until it is gone and its\n"
        "remove was processed.  DEVICE is a path below /sys (links allowed, e.g.\n"
        "/sys/class/net/eth0), a DEVPATH (/devices/...) or a device node (/dev/sda).\n\n"
        "Options:\n"
        "  -r, --removed          wait until the devices are gone\n"
        "  -w, --settle           then also wait until every event so far is processed\n"
        "  -t, --timeout=SEC      give up after SEC seconds, 0 to " CTL_STR(HP_CONTROL_TIMEOUT_MAX_SEC)
        ", fractions allowed\n"
        "                         (default " CTL_STR(WAIT_DEFAULT_TIMEOUT_SEC) ")\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 done, 1 failure, 2 timed out, 3 no daemon (or refused), 64 usage.\n";

/* Is @d there?  Its events say, else sysfs (which also tells its DEVPATH). */
static bool dev_present(struct wdev *d)
{
        char devpath[PATH_MAX];
        int r;

        if (d->state != DEV_UNKNOWN)
                return d->state == DEV_PRESENT;
        if (strncmp(d->arg, "/dev/", 5) == 0)
                r = ctl_devpath_of_node(d->arg, devpath, sizeof(devpath));
        else
                r = ctl_devpath_of_sysfs(d->arg, devpath, sizeof(devpath));
        if (r < 0)
                return false;
        if (!d->devpath[0])
                strcpy(d->devpath, devpath);
        return true;
}

/* A "received" record of the monitor: the state its device is in now. */
static void note_record(struct wdev *devs, size_t n, const char *rec)
{
        char devpath[PATH_MAX], action[32];

        if (!ctlmsg_is(rec, "received") || ctlmsg_get(rec, "devpath", devpath, sizeof(devpath)) < 0 ||
            ctlmsg_get(rec, "action", action, sizeof(action)) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                if (!devs[i].devpath[0] && devs[i].state == DEV_UNKNOWN)
                        (void)dev_present(&devs[i]); /* maybe this event's device: learn its DEVPATH */
                if (strcmp(devs[i].devpath, devpath) != 0)
                        continue;
                /* A move renames: the old path is gone, and hotplugctl cannot see the old path here. */
                devs[i].state = strcmp(action, "remove") == 0 ? DEV_GONE : DEV_PRESENT;
        }
}

static bool all_wanted(struct wdev *devs, size_t n, bool removed)
{
        for (size_t i = 0; i < n; i++)
                if (dev_present(&devs[i]) == removed)
                        return false;
        return true;
}

static int64_t ms_left(usec_t deadline)
{
        usec_t now = now_usec(CLOCK_MONOTONIC);

        return now >= deadline ? 0 : (int64_t)((deadline - now + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
}

static int timed_out(struct wdev *devs, size_t n, bool removed)
{
        char esc[PATH_MAX];

        for (size_t i = 0; i < n; i++)
                if (dev_present(&devs[i]) == removed)
                        ctl_err("wait", "timed out: %s is %s", escape_cstr(devs[i].arg, esc, sizeof(esc)),
                                removed ? "still there" : "not there");
        return CTL_EXIT_TIMEOUT;
}

/*
 * Settle the event of one device (@devpath) or of all (NULL) up to @seqnum;
 * with @present, also until the daemon has the device's add (its sysfs
 * directory may be there before the kernel sends the add).  Return: exit status.
 */
static int settle_one(int fd, uint64_t seqnum, const char *devpath, bool present, const char *arg, usec_t deadline)
{
        char req[HP_CONTROL_REQUEST_MAX + 1], rec[CTL_RECORD_SIZE], esc[PATH_MAX], why[96] = "";
        uint64_t held = 0, udev = 0;
        int r;

        if (snprintf(req, sizeof(req), "settle %" PRIu64 " %" PRIi64 "%s%s%s", seqnum, ms_left(deadline),
                     devpath ? " " : "", devpath ? devpath : "", devpath && present ? " present" : "") >=
            (int)sizeof(req)) {
                ctl_err("wait", "%s: device path too long", escape_cstr(arg, esc, sizeof(esc)));
                return CTL_EXIT_FAILURE;
        }
        r = ctl_request("wait", fd, req, rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "ok"))
                return CTL_EXIT_OK;
        if (ctlmsg_is(rec, "error"))
                return ctl_report_error("wait", rec);
        if (!ctlmsg_is(rec, "timeout")) {
                ctl_err("wait", "unexpected reply");
                return CTL_EXIT_FAILURE;
        }
        (void)ctlmsg_get_u64(rec, "lowest_held", &held);
        (void)ctlmsg_get_u64(rec, "udev_waiting", &udev);
        if (udev)
                snprintf(why, sizeof(why), " (%" PRIu64 " event(s) waiting for udevd's broadcast)", udev);
        if (devpath && present && held == 0)
                ctl_err("wait", "timed out: hotplugd has not received the add of %s yet",
                        escape_cstr(arg, esc, sizeof(esc)));
        else if (devpath)
                ctl_err("wait", "timed out: the event SEQNUM %" PRIu64 " of %s is not processed yet%s", held,
                        escape_cstr(arg, esc, sizeof(esc)), why);
        else
                ctl_err("wait", "timed out settling: SEQNUM %" PRIu64 " is not processed yet%s", held, why);
        return CTL_EXIT_TIMEOUT;
}

/* Every device is in the wanted state: wait for their events (and all, with --settle). */
static int settle_devices(int fd, struct wdev *devs, size_t n, const struct wait_opts *o, usec_t deadline)
{
        _cleanup_close_ int rootfd = open(SYSFS, O_PATH | O_DIRECTORY | O_CLOEXEC);
        uint64_t seqnum;
        int r;

        r = rootfd < 0 ? negative_errno() : sysfs_read_seqnum(rootfd, &seqnum);
        if (r < 0) {
                ctl_err("wait", "cannot read " SYSFS "/kernel/uevent_seqnum: %s", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++) {
                /* A device gone before we ever saw it has no event to wait for. */
                if (!devs[i].devpath[0])
                        continue;
                r = settle_one(fd, seqnum, devs[i].devpath, !o->removed, devs[i].arg, deadline);
                if (r != CTL_EXIT_OK)
                        return r;
        }
        return o->settle ? settle_one(fd, seqnum, NULL, false, NULL, deadline) : CTL_EXIT_OK;
}

/* Read what the monitor has, waiting at most until @deadline. Return: exit status, or CTL_RUN. */
static int monitor_step(int mon, struct wdev *devs, size_t n, usec_t deadline)
{
        char rec[CTL_RECORD_SIZE];
        int64_t left = ms_left(deadline);
        int r;

        r = ctl_recv(mon, rec, (int)MIN(left, (int64_t)INT_MAX));
        if (r == -ETIMEDOUT)
                return CTL_EXIT_TIMEOUT;
        for (;;) {
                if (r < 0) {
                        ctl_err("wait", "lost the daemon: %s", strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                if (ctlmsg_is(rec, "error"))
                        return ctl_report_error("wait", rec);
                note_record(devs, n, rec);
                r = ctl_recv(mon, rec, 0); /* the rest of what is there, then look again */
                if (r == -ETIMEDOUT)
                        return CTL_RUN;
        }
}

static int run_wait(struct wdev *devs, size_t n, const struct wait_opts *o)
{
        _cleanup_close_ int mon = -1, fd = -1;
        usec_t deadline = now_usec(CLOCK_MONOTONIC) + o->timeout_ms * USEC_PER_MSEC;
        char rec[CTL_RECORD_SIZE];
        int r;

        /* The monitor first: no event after the first look at sysfs is missed. */
        r = ctl_open("wait", &mon);
        if (r != CTL_EXIT_OK)
                return r;
        r = ctl_request("wait", mon, "monitor", rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (!ctlmsg_is(rec, "ok"))
                return ctlmsg_is(rec, "error") ? ctl_report_error("wait", rec) : CTL_EXIT_FAILURE;
        r = ctl_open("wait", &fd);
        if (r != CTL_EXIT_OK)
                return r;
        for (;;) {
                if (all_wanted(devs, n, o->removed))
                        return settle_devices(fd, devs, n, o, deadline);
                r = monitor_step(mon, devs, n, deadline);
                if (r == CTL_EXIT_TIMEOUT)
                        return timed_out(devs, n, o->removed);
                if (r != CTL_RUN)
                        return r;
        }
}

int verb_wait(int argc, char *argv[])
{
        static const struct option opts[] = {
                { "removed", no_argument, NULL, 'r' },
                { "settle", no_argument, NULL, 'w' },
                { "timeout", required_argument, NULL, 't' },
                CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "wait", "rwt:h", opts, help, "DEVICE..." };
        struct wait_opts o = { .timeout_ms = WAIT_DEFAULT_TIMEOUT_SEC * 1000 };
        _cleanup_free_ struct wdev *devs = NULL;
        size_t n;
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                if (c == 'r')
                        o.removed = true;
                else if (c == 'w')
                        o.settle = true;
                else if (c == 't' && ctl_parse_seconds("wait", "--timeout", optarg, 0, HP_CONTROL_TIMEOUT_MAX_SEC,
                                                       &o.timeout_ms) != CTL_EXIT_OK)
                        return CTL_EXIT_USAGE;
        }
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (optind >= argc)
                return ctl_usage_error("wait", "no DEVICE given");
        n = (size_t)(argc - optind);
        for (size_t i = 0; i < n; i++)
                if (ctl_device_arg_check("wait", argv[optind + i]) != CTL_EXIT_OK)
                        return CTL_EXIT_USAGE;
        devs = calloc(n, sizeof(*devs));
        if (!devs) {
                ctl_err("wait", "out of memory");
                return CTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < n; i++) {
                const char *a = argv[optind + i];

                devs[i].arg = a;
                /* A DEVPATH as given is known even while the device is not there. */
                (void)ctl_device_arg_devpath(a, devs[i].devpath, sizeof(devs[i].devpath));
        }
        return run_wait(devs, n, &o);
}
