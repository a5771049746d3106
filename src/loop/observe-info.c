/* SPDX-License-Identifier: MIT */
/*
 * The info observer: what happened to each device, for hotplugctl info.
 * It writes every step of an event's way into the per-device history
 * (pipeline/devinfo.h): the event when the ledger accepts it (or when it is
 * queued, for one the ledger did not see: a resync's, a takeover's), its
 * waits, each program's start and end, and how it left.
 *
 * Invariants and bounds: the history is the only state; it keeps as many
 * devices as the device cache (handler-cache, fixed at the start) and
 * HP_INFO_BYTES bytes, the device heard of least recently forgotten first.
 * It is a record of what was done, not of what is held: it does not count
 * in the max-queue-bytes budget, which is about events in flight and falls
 * back to 0 when the daemon is idle; its bound is fixed instead, like the
 * device cache's.  Events are kept under their DEVPATH (a renamed device's
 * earlier events stay under the old path).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "pipeline/devinfo.h"
#include "shared/bounds.h"

struct observe_info {
        struct devinfo store;
};

static void add_event(struct observe_info *o, const struct uevent *ev)
{
        if (!ev->devpath)
                return;
        (void)devinfo_event_add(&o->store, ev->devpath, ev->seqnum, ev->action,
                                ev->received_real ? ev->received_real : now_usec(CLOCK_REALTIME),
                                ev->received ? ev->received : now_usec(CLOCK_MONOTONIC));
}

static void on_received(void *userdata, const struct uevent *view, enum ledger_verdict v, const struct ledger_gap *gap)
{
        (void)gap;
        if (v != LEDGER_DUPLICATE)
                add_event(userdata, view);
}

static void on_queued(void *userdata, const struct uevent *ev)
{
        add_event(userdata, ev); /* the one already kept, if the ledger saw it */
}

static void on_waited(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason)
{
        struct observe_info *o = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);

        devinfo_event_waited(&o->store, ev->devpath, ev->seqnum, blocker,
                             ev->received && ev->received < now ? now - ev->received : 0, reason);
}

static void on_started(void *userdata, const struct manager_agent *a)
{
        struct observe_info *o = userdata;

        devinfo_run_start(&o->store, a->ev->devpath, a->ev->seqnum, a->program, a->pid, a->started);
}

static void on_exec_failed(void *userdata, const struct manager_agent *a, int error)
{
        struct observe_info *o = userdata;
        const char *name = strerrorname_np(error < 0 ? -error : error);
        char status[48];

        snprintf(status, sizeof(status), "exec %s", name ? name : "failed");
        if (a->pid == 0) /* never started: no started() came */
                devinfo_run_start(&o->store, a->ev->devpath, a->ev->seqnum, a->program, 0, a->started);
        devinfo_run_end(&o->store, a->ev->devpath, a->ev->seqnum, a->pid, status, true, false, 0);
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        struct observe_info *o = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);

        devinfo_run_end(&o->store, a->ev->devpath, a->ev->seqnum, a->pid, status,
                        si->si_code != CLD_EXITED || si->si_status != 0, a->timed_out,
                        now > a->started ? now - a->started : 0);
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        struct observe_info *o = userdata;

        devinfo_event_outcome(&o->store, view->devpath, view->seqnum, filtered ? DEVINFO_FILTERED : DEVINFO_DROPPED);
}

static void on_done(void *userdata, const struct uevent *ev)
{
        struct observe_info *o = userdata;

        devinfo_event_outcome(&o->store, ev->devpath, ev->seqnum, DEVINFO_DONE);
}

static void on_close(void *userdata)
{
        struct observe_info *o = userdata;

        devinfo_clear(&o->store);
        free(o);
}

static const struct manager_observer_ops info_ops = {
        .received = on_received,
        .queued = on_queued,
        .waited = on_waited,
        .started = on_started,
        .exec_failed = on_exec_failed,
        .finished = on_finished,
        .dropped = on_dropped,
        .done = on_done,
        .close = on_close,
};

int observe_info_open(struct manager *m)
{
        struct observe_info *o = calloc(1, sizeof(*o));
        size_t devices = manager_cfg(m)->handlers.cache_size;
        int r;

        if (!o)
                return -ENOMEM;
        devinfo_init(&o->store, devices ? devices : HP_DEVCACHE_DEFAULT, HP_INFO_BYTES);
        r = manager_add_observer(m, &info_ops, o);
        if (r < 0) {
                free(o);
                return r;
        }
        return 0;
}

const struct devinfo_device *manager_info_history(const struct manager *m, const char *devpath)
{
        const struct observe_info *o = manager_observer_data(m, &info_ops);

        return o ? devinfo_get(&o->store, devpath) : NULL;
}

void manager_for_each_info_device(const struct manager *m, void (*fn)(const char *devpath, void *arg), void *arg)
{
        const struct observe_info *o = manager_observer_data(m, &info_ops);
        const struct devinfo_device *d;
        size_t it = 0;

        while (o && (d = devinfo_next(&o->store, &it)))
                fn(d->devpath, arg);
}
