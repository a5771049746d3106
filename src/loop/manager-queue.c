/* SPDX-License-Identifier: MIT */
/*
 * The manager's queue (part of the core, manager-internal.h): the
 * scheduler's window and the backlog behind it.
 *
 * Invariants: the scheduler holds at most queue_window() events besides
 * late ones; whenever the backlog is not empty, every SEQNUM in it is above
 * every SEQNUM ever pushed into the scheduler (m->scheduled_newest), so an
 * event never waits in the backlog behind one the scheduler would run after
 * it, and the scheduler's order rules see everything earlier than what it
 * holds; an event that cannot be queued or moved is announced dropped.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager-internal.h"
#include "loop/manager-observe.h"
#include "loop/udev-wait.h"
#include "pipeline/backlog.h"
#include "pipeline/scheduler.h"
#include "uevent/uevent.h"

/* Queued events the scheduler holds (late ones aside): enough for max_children to find work. */
static size_t queue_window(const struct manager *m)
{
        return MAX((size_t)HP_QUEUE_WINDOW, 2 * (size_t)m->cfg.max_children);
}

/* The invariant above: the backlog is empty, or all of it is above what the scheduler ever had.  O(1). */
static _unused_ bool queue_ordered(const struct manager *m)
{
        return backlog_count(m->backlog) == 0 || backlog_lowest(m->backlog) > m->scheduled_newest;
}

static int queue_schedule(struct manager *m, struct uevent *ev)
{
        int r = scheduler_push(m->scheduler, ev);

        if (r >= 0 && ev->seqnum > m->scheduled_newest)
                m->scheduled_newest = ev->seqnum;
        return r;
}

int manager_queue_push(struct manager *m, struct uevent *ev)
{
        bool schedule;
        int r;

        if (backlog_count(m->backlog) > 0)
                schedule = ev->seqnum < backlog_lowest(m->backlog);
        else
                schedule = scheduler_held(m->scheduler) < queue_window(m) || ev->seqnum < m->scheduled_newest;
        if (schedule) {
                r = queue_schedule(m, ev);
                /* In the window, or (failed) in neither. */
                assert(r < 0 ? !ev->sched_data : ev->sched_data != NULL);
                assert(queue_ordered(m));
                return r < 0 ? r : 1;
        }
        r = backlog_push(m->backlog, ev);
        assert(!ev->sched_data && queue_ordered(m)); /* in the backlog only, above the window */
        return r;
}

void manager_queue_failed(struct manager *m, const struct uevent *ev, int r)
{
        struct log_fields f;

        uevent_log_fields(ev, &f);
        m->stats.aborted++;
        log_internal(LOG_ERR, r, &f, "cannot queue event");
        observe_dropped(m, ev, false);
}

/* The backlog's first event cannot be taken out (@r): drop it, as it stands there. */
static void queue_drop_backlogged(struct manager *m, int r)
{
        struct backlog_slot slot;
        struct uevent view;

        if (backlog_peek(m->backlog, &slot, &view) >= 0)
                manager_queue_failed(m, &view, r);
        backlog_drop_first(m->backlog);
}

void manager_queue_refill(struct manager *m)
{
        struct uevent *ev;
        int r;

        while (backlog_count(m->backlog) > 0 && scheduler_held(m->scheduler) < queue_window(m)) {
                r = backlog_pop(m->backlog, &ev);
                if (r < 0) {
                        queue_drop_backlogged(m, r);
                        continue;
                }
                r = queue_schedule(m, ev);
                if (r < 0) {
                        manager_queue_failed(m, ev, r);
                        free(ev);
                        continue;
                }
        }
        /* The window is full, or nothing waits behind it. */
        assert(backlog_count(m->backlog) == 0 || scheduler_held(m->scheduler) >= queue_window(m));
        assert(queue_ordered(m));
}

size_t manager_queue_drop_all(struct manager *m)
{
        size_t n = 0;
        struct uevent *ev;

        while ((ev = scheduler_pop_queued(m->scheduler))) {
                n++;
                free(ev);
        }
        for (; backlog_count(m->backlog) > 0; n++)
                backlog_drop_first(m->backlog);
        assert(manager_queued(m) == 0);
        return n;
}

size_t manager_queued(const struct manager *m)
{
        return scheduler_queued(m->scheduler) + backlog_count(m->backlog);
}

size_t manager_running(const struct manager *m)
{
        return scheduler_running(m->scheduler);
}

size_t manager_held(const struct manager *m)
{
        return scheduler_held(m->scheduler) + backlog_count(m->backlog);
}

uint64_t manager_bytes_held(const struct manager *m)
{
        return (uint64_t)scheduler_bytes(m->scheduler) + backlog_bytes(m->backlog) + manager_jobs_bytes(m) +
               udev_wait_bytes(m) + m->journal_bytes;
}

uint64_t manager_lowest_held(const struct manager *m)
{
        uint64_t s = scheduler_lowest_held(m->scheduler), b = backlog_lowest(m->backlog);

        return s == 0 || (b != 0 && b < s) ? b : s;
}

uint64_t manager_lowest_held_on(const struct manager *m, const char *devpath)
{
        uint64_t s = scheduler_lowest_held_on(m->scheduler, devpath), b = backlog_lowest(m->backlog);

        return s == 0 || (b != 0 && b < s) ? b : s;
}
