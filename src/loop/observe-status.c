/* SPDX-License-Identifier: MIT */
/*
 * The service status observer: a one-line summary (queue and ledger
 * figures) for whoever manager_set_status() named (the service manager's
 * STATUS=, in src/daemon/service.c).
 *
 * Invariants: while events come and go the line is sent at most once a
 * second and only when it changed (one timer, armed once per change); when
 * the manager starts to stop it is sent once more, at once, with
 * "stopping" set, and the timer stays off from then on.  Without a status
 * callback every hook does nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/log.h"
#include "loop/manager-internal.h"
#include "loop/udev-wait.h"
#include "loop/observe-builtin.h"
#include "pipeline/scheduler.h"

struct observe_status {
        struct manager *m;
        manager_status_fn fn;       /* NULL: nobody wants the status */
        void *userdata;
        sd_event_source *timer;
        char sent[256];             /* the line sent last */
};

static void status_format(const struct manager *m, char *buf, size_t size)
{
        const struct ledger *l = manager_ledger(m);
        const struct manager_stats *st = manager_stats(m);

        int n = snprintf(buf, size,
                         "%s: %" PRIu64 " processed, %zu queued, %zu running, %" PRIu64 " gaps (%" PRIu64
                         " missing), %" PRIu64 " duplicates, %" PRIu64 " overflows",
                         manager_stopping(m)  ? "Stopping"
                         : manager_paused(m) ? "Paused"
                                             : "Processing uevents",
                         l->processed, manager_queued(m), manager_running(m), l->gaps,
                         l->missing, l->duplicates, l->overflows);

        if (st->taken_over > 0 && n > 0 && (size_t)n < size)
                snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " taken over (%" PRIu64 " re-run)",
                         st->taken_over, st->reruns);
        n = n > 0 ? (int)strlen(buf) : n;
        if (udev_wait_waiting(m) > 0 && n > 0 && (size_t)n < size)
                snprintf(buf + n, size - (size_t)n, " (%zu waiting for udevd)", udev_wait_waiting(m));
        n = n > 0 ? (int)strlen(buf) : n;
        if (st->set_aside > 0 && n > 0 && (size_t)n < size)
                snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " set aside (killed hotplugd)",
                         st->set_aside);
        n = n > 0 ? (int)strlen(buf) : n;
        if (manager_overloaded(m) && n > 0 && (size_t)n < size)
                snprintf(buf + n, size - (size_t)n, ", overloaded (%" PRIu64 " of %" PRIu64 " bytes held, "
                         "reading stopped)", manager_bytes_held(m), manager_cfg(m)->max_queue_bytes);
}

static void status_send(struct observe_status *s, bool stopping)
{
        char buf[sizeof(s->sent)];

        status_format(s->m, buf, sizeof(buf));
        if (!stopping && strcmp(buf, s->sent) == 0)
                return;
        snprintf(s->sent, sizeof(s->sent), "%s", buf);
        s->fn(s->m, buf, stopping, s->userdata);
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata)
{
        status_send(userdata, false);
        return 0;
}

/* Something changed: report it within a second (one timer, armed once). */
static void status_touch(struct observe_status *s)
{
        int enabled = SD_EVENT_OFF;

        if (!s->fn || manager_stopping(s->m))
                return;
        if (!s->timer) {
                if (sd_event_add_time_relative(manager_event(s->m), &s->timer, CLOCK_MONOTONIC, USEC_PER_SEC,
                                               100 * USEC_PER_MSEC, on_timer, s) < 0)
                        return;
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
                return;
        }
        if (sd_event_source_get_enabled(s->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        (void)sd_event_source_set_time_relative(s->timer, USEC_PER_SEC);
        (void)sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

static void on_queued(void *userdata, const struct uevent *ev)
{
        status_touch(userdata);
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        status_touch(userdata);
}

static void on_done(void *userdata, const struct uevent *ev)
{
        status_touch(userdata);
}

/* Reading stopped or went on (manager_feed_paused(), manager_input_maybe_resume()): "overloaded" changed. */
static void on_overload(void *userdata, bool overloaded)
{
        status_touch(userdata);
}

static void on_stopping(void *userdata)
{
        struct observe_status *s = userdata;

        if (s->timer)
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        if (s->fn)
                status_send(s, true);
}

static void on_close(void *userdata)
{
        struct observe_status *s = userdata;

        sd_event_source_disable_unref(s->timer);
        free(s);
}

static const struct manager_observer_ops status_ops = {
        .queued = on_queued,
        .dropped = on_dropped,
        .done = on_done,
        .overload = on_overload,
        .stopping = on_stopping,
        .close = on_close,
};

/**
 * observe_status_open() - register the status observer, still without a callback.
 * @m: manager
 *
 * Return: 0 or negative errno.
 */
int observe_status_open(struct manager *m)
{
        struct observe_status *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->m = m;
        r = manager_add_observer(m, &status_ops, s);
        if (r < 0) {
                free(s);
                return r;
        }
        return 0;
}

void manager_set_status(struct manager *m, manager_status_fn fn, void *userdata)
{
        struct observe_status *s = manager_observer_data(m, &status_ops);

        if (!s)
                return;
        s->fn = fn;
        s->userdata = userdata;
}
