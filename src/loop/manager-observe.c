/* SPDX-License-Identifier: MIT */
/*
 * Telling the observers (observer.h) what the pipeline did: each
 * observe_*() calls that hook of every observer, in the order they were
 * added.  The manager's files call these; they do not know who listens.
 *
 * The built-in observers are added once, in manager_new(), in this order,
 * which is the order they hear every announcement:
 *   recorder     (observe-record.c)     writes before anyone else is told;
 *   rebroadcast  (observe-rebroadcast.c) re-sends a done event first, so
 *                consumers on the group see it as soon as possible;
 *   handover     (observe-handover.c)   journals a queued event before the
 *                datagram is consumed from the socket, and marks it done
 *                before settle waiters are answered;
 *   firmware     (observe-firmware.c)   fails a firmware request nobody
 *                answered, before settle waiters are answered;
 *   status       (observe-status.c)     the service status line;
 *   blame        (observe-blame.c)      hotplugctl blame's sums;
 *   control      (observe-control.c)    monitor clients, settle, status.
 * Observers added later (manager_add_observer()) hear after these.
 *
 * Invariant: while the manager runs, every valid event that entered the
 * ledger leaves through exactly one of observe_dropped() or observe_done().
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager-internal.h"
#include "loop/udev-wait.h"
#include "loop/kmod-load.h"
#include "loop/observe-builtin.h"
#include "loop/manager-observe.h"
#include "pipeline/scheduler.h"

/* Who hears what happened (m->obs). */
struct manager_observers {
        struct {
                const struct manager_observer_ops *ops;
                void *userdata;
        } v[MANAGER_OBSERVERS_MAX];
        size_t n;
        bool want_waiting;              /* some observer has a waiting() hook */
        /* The invariant above, counted for assert(): events announced queued,
         * done, and dropped other than right after their received() (after
         * being queued, or synthesised and never queued); a receipt is
         * pending from received() to the queued() or dropped() it ends in. */
        struct {
                uint64_t queued, done, dropped_other;
                bool receipt_pending;
        } tally;
};

/*
 * The accounting of the invariant above: every queued event is held, done
 * or dropped (done + held <= queued, so none is done twice or held unqueued);
 * while running, none goes unannounced (queued <= done + held +
 * dropped_other; stopping discards the queue silently).  O(1).
 */
static _unused_ bool tally_balanced(const struct manager *m)
{
        const struct manager_observers *t = m->obs;
        size_t held = manager_held(m);

        return t->tally.done + held <= t->tally.queued &&
               (m->stopping || t->tally.queued <= t->tally.done + held + t->tally.dropped_other);
}

/* Each observer @o that has @hook, in order. */
#define for_each_observer(m, o, hook)                                                        \
        for (__typeof__(&(m)->obs->v[0]) o = (m)->obs->v; o < (m)->obs->v + (m)->obs->n; o++) \
                if (o->ops->hook)

int manager_add_observer(struct manager *m, const struct manager_observer_ops *ops, void *userdata)
{
        if (m->obs->n >= MANAGER_OBSERVERS_MAX)
                return -ENOSPC;
        m->obs->v[m->obs->n].ops = ops;
        m->obs->v[m->obs->n].userdata = userdata;
        m->obs->n++;
        if (ops->waited)
                m->obs->want_waiting = true;
        return 0;
}

int manager_observe_open(struct manager *m)
{
        static int (*const builtin[])(struct manager *m) = {
                observe_record_open, observe_rebroadcast_open, observe_handover_open, observe_firmware_open,
                observe_status_open, observe_blame_open, observe_info_open, observe_control_open, observe_resync_open,
                udev_wait_open, kmod_load_open,
        };
        int r;

        m->obs = calloc(1, sizeof(*m->obs));
        if (!m->obs)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(builtin); i++) {
                r = builtin[i](m);
                if (r < 0)
                        return r;
        }
        return 0;
}

void *manager_observer_data(const struct manager *m, const struct manager_observer_ops *ops)
{
        for (size_t i = 0; m->obs && i < m->obs->n; i++)
                if (m->obs->v[i].ops == ops)
                        return m->obs->v[i].userdata;
        return NULL;
}

void manager_observe_close(struct manager *m)
{
        if (!m->obs)
                return;
        while (m->obs->n > 0) {
                m->obs->n--;
                if (m->obs->v[m->obs->n].ops->close)
                        m->obs->v[m->obs->n].ops->close(m->obs->v[m->obs->n].userdata);
        }
        free(m->obs);
        m->obs = NULL;
}

bool observe_wants_waiting(const struct manager *m)
{
        return m->obs->want_waiting;
}

void observe_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real)
{
        for_each_observer(m, o, datagram)
                o->ops->datagram(o->userdata, data, size, mono, real);
}

void observe_received(struct manager *m, const struct uevent *view, enum ledger_verdict v,
                      const struct ledger_gap *gap)
{
        /* The previous receipt ended in exactly one of queued() or dropped(). */
        assert(!m->obs->tally.receipt_pending);
        m->obs->tally.receipt_pending = true;
        for_each_observer(m, o, received)
                o->ops->received(o->userdata, view, v, gap);
}

void observe_gap(struct manager *m, const struct ledger_gap *gap)
{
        for_each_observer(m, o, gap)
                o->ops->gap(o->userdata, gap);
}

void observe_overflow(struct manager *m)
{
        for_each_observer(m, o, overflow)
                o->ops->overflow(o->userdata);
}

void observe_input_drained(struct manager *m)
{
        for_each_observer(m, o, input_drained)
                o->ops->input_drained(o->userdata);
}

void observe_overload(struct manager *m, bool overloaded)
{
        for_each_observer(m, o, overload)
                o->ops->overload(o->userdata, overloaded);
}

void observe_queued(struct manager *m, const struct uevent *ev)
{
        m->obs->tally.receipt_pending = false;
        m->obs->tally.queued++;
        assert(tally_balanced(m));
        for_each_observer(m, o, queued)
                o->ops->queued(o->userdata, ev);
}

/* Why @ev waited for the event on @b (a DEVPATH), e.g. "parent /devices/virtual/net/veth0". */
static void wait_reason(const struct manager *m, const struct uevent *ev, const char *b, char *buf, size_t size)
{
        size_t blen = strlen(b);
        char esc[512];
        const char *what;

        escape_cstr(b, esc, sizeof(esc));
        if (manager_cfg(m)->ordering == ORDERING_STRICT)
                what = "strict order after";
        else if (strcmp(b, ev->devpath) == 0)
                what = "same device";
        else if (devpath_is_prefix(b, blen, ev->devpath, ev->devpath_len))
                what = "parent";
        else if (devpath_is_prefix(ev->devpath, ev->devpath_len, b, blen))
                what = "child";
        else
                what = "renamed device";
        snprintf(buf, size, "%s %s", what, esc);
}

void observe_waited(struct manager *m, const struct uevent *ev, const struct scheduler_wait *w)
{
        int level = manager_cfg(m)->dry_run ? LOG_INFO : LOG_DEBUG;
        struct log_fields f;
        char reason[600];

        if (w->blocker == 0 && w->slot_limit == 0)
                return;
        uevent_log_fields(ev, &f);
        if (w->blocker) {
                if (w->blocker_devpath)
                        wait_reason(m, ev, w->blocker_devpath, reason, sizeof(reason));
                else
                        snprintf(reason, sizeof(reason), "an earlier event");
                log_internal(level, 0, &f, "waited for SEQNUM=%" PRIu64 " (%s)", w->blocker, reason);
                for_each_observer(m, o, waited)
                        o->ops->waited(o->userdata, ev, w->blocker, reason);
        }
        if (w->slot_limit) {
                snprintf(reason, sizeof(reason), "a free slot (limit %u)", w->slot_limit);
                log_internal(level, 0, &f, "waited for %s", reason);
                for_each_observer(m, o, waited)
                        o->ops->waited(o->userdata, ev, 0, reason);
        }
}

void observe_udev_waited(struct manager *m, const struct uevent *ev, usec_t waited, bool timed_out)
{
        struct log_fields f;
        char reason[64];

        uevent_log_fields(ev, &f);
        if (timed_out)
                snprintf(reason, sizeof(reason), "udevd, not broadcast in time");
        else
                snprintf(reason, sizeof(reason), "udevd");
        log_internal(manager_cfg(m)->dry_run ? LOG_INFO : LOG_DEBUG, 0, &f, "waited %" PRIu64 ".%03" PRIu64
                     " ms for %s", waited / USEC_PER_MSEC, waited % USEC_PER_MSEC, reason);
        for_each_observer(m, o, waited)
                o->ops->waited(o->userdata, ev, ev->seqnum, reason);
}

void observe_module_loaded(struct manager *m, const char *name, usec_t took, bool failed)
{
        for_each_observer(m, o, module_loaded)
                o->ops->module_loaded(o->userdata, name, took, failed);
}

void observe_set_aside(struct manager *m, const struct uevent *view, uint32_t tries)
{
        for_each_observer(m, o, set_aside)
                o->ops->set_aside(o->userdata, view, tries);
}

void observe_dropped(struct manager *m, const struct uevent *view, bool filtered)
{
        if (m->obs->tally.receipt_pending)
                m->obs->tally.receipt_pending = false;
        else
                m->obs->tally.dropped_other++;
        assert(tally_balanced(m));
        for_each_observer(m, o, dropped)
                o->ops->dropped(o->userdata, view, filtered);
}

void observe_starting(struct manager *m, const struct uevent *ev)
{
        for_each_observer(m, o, starting)
                o->ops->starting(o->userdata, ev);
}

void observe_started(struct manager *m, const struct manager_agent *a)
{
        for_each_observer(m, o, started)
                o->ops->started(o->userdata, a);
}

void observe_exec_failed(struct manager *m, const struct manager_agent *a, int error)
{
        for_each_observer(m, o, exec_failed)
                o->ops->exec_failed(o->userdata, a, error);
}

void observe_finished(struct manager *m, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        for_each_observer(m, o, finished)
                o->ops->finished(o->userdata, a, si, status);
}

void observe_done(struct manager *m, const struct uevent *ev)
{
        m->obs->tally.done++;
        assert(tally_balanced(m));
        for_each_observer(m, o, done)
                o->ops->done(o->userdata, ev);
}

void observe_stopping(struct manager *m)
{
        for_each_observer(m, o, stopping)
                o->ops->stopping(o->userdata);
}
