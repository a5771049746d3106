/* SPDX-License-Identifier: MIT */
/*
 * The blame observer: since the daemon started (so the boot's coldplug
 * too), per subsystem, per program (the agent, or each hotplug.d file that
 * ran) and per device: how many events (or runs), their wall time summed,
 * the slowest with its SEQNUM, and the time their events waited for order,
 * for a free slot and for udevd.  hotplugctl blame asks for it over the control
 * socket ("blame", control.h); the rules are those of the blame of a
 * recording (src/ctl/blame.h):
 *  - an event's wall time runs from its first agent's start to its last
 *    agent's end; subsystems and devices count events, programs count runs
 *    (that started), and each run carries the waits of its event;
 *  - an event waited for order from its arrival until the last event it
 *    waited for was done, for a slot from then (or its arrival) until it
 *    was dispatched (when waited() says so), and for udevd (after-udev:
 *    waited() with its own SEQNUM as the blocker, said when that wait
 *    ended) from its dispatch (or its arrival) until then.
 *
 * Invariants and bounds:
 *  - each table (blame-tally.h) holds at most HP_BLAME_NAMES_MAX names;
 *    facts under a new name past that are summed in one row "(other)";
 *  - an event is followed only from its first start to its done(): at most
 *    the events running, HP_CHILDREN_MAX; what waited() said of an event
 *    is kept from then until it starts or is done: at most the events
 *    dispatched and not started (those waiting for udevd hold a place among
 *    max-children), HP_CHILDREN_MAX, past which an event's waits go
 *    uncounted;
 *  - the ends of the last HP_BLAME_RECENT_DONE events are remembered; an
 *    event that waited for one done before those counts its whole wait
 *    before the slot as order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "loop/blame-tally.h"
#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "shared/bounds.h"
#include "shared/macro.h"

/* An event whose agents run. */
struct blame_running {
        uint64_t seqnum;
        usec_t first_start, last_end;
        struct tally_waits waits;
};

/* What waited() said of an event that has not started yet. */
struct blame_waiting {
        uint64_t seqnum;
        usec_t ready;              /* runnable: its order wait over (or its arrival) */
        struct tally_waits waits;
};

struct observe_blame {
        struct tally t[_CONTROL_BLAME_MAX];
        struct control_blame_totals totals;
        struct blame_running *run;
        size_t n_run, a_run;
        struct blame_waiting *wait;
        size_t n_wait, a_wait;
        struct {
                uint64_t seqnum;
                usec_t at;
        } recent[HP_BLAME_RECENT_DONE];
        size_t recent_next;
};

/* ---- following the events -------------------------------------------------- */

/* Room for one more element of @v (@n of @a used), at most HP_CHILDREN_MAX.  Return: 0 or -ENOMEM. */
static int room_for_one(void **v, size_t n, size_t *a, size_t size)
{
        size_t want = *a ? *a * 2 : 16;
        void *p;

        if (n < *a)
                return 0;
        if (want > HP_CHILDREN_MAX)
                return -ENOMEM; /* more than can be dispatched: not followed */
        p = realloc(*v, want * size);
        if (!p)
                return -ENOMEM;
        *v = p;
        *a = want;
        return 0;
}

static struct blame_running *running_find(struct observe_blame *b, uint64_t seqnum)
{
        for (size_t i = 0; i < b->n_run; i++)
                if (b->run[i].seqnum == seqnum)
                        return &b->run[i];
        return NULL;
}

static struct blame_waiting *waiting_find(struct observe_blame *b, uint64_t seqnum)
{
        for (size_t i = 0; i < b->n_wait; i++)
                if (b->wait[i].seqnum == seqnum)
                        return &b->wait[i];
        return NULL;
}

/* What was said of @ev's waits so far, a new entry if nothing was; NULL: no room. */
static struct blame_waiting *waiting_get(struct observe_blame *b, const struct uevent *ev)
{
        struct blame_waiting *w = waiting_find(b, ev->seqnum);

        if (w || room_for_one((void **)&b->wait, b->n_wait, &b->a_wait, sizeof(*b->wait)) < 0)
                return w;
        w = &b->wait[b->n_wait++];
        *w = (struct blame_waiting){ .seqnum = ev->seqnum, .ready = ev->received };
        return w;
}

/* @seqnum's waits, forgotten; into *@ret if not NULL (zeroes if nothing was said). */
static void waiting_take(struct observe_blame *b, uint64_t seqnum, struct tally_waits *ret)
{
        struct blame_waiting *w = waiting_find(b, seqnum);

        if (ret)
                *ret = w ? w->waits : (struct tally_waits){ 0 };
        if (w)
                *w = b->wait[--b->n_wait];
}

/* When the event @seqnum was done, if it is among the recent ones; else 0. */
static usec_t recent_done(const struct observe_blame *b, uint64_t seqnum)
{
        for (size_t i = 0; i < ELEMENTSOF(b->recent); i++)
                if (b->recent[i].seqnum == seqnum)
                        return b->recent[i].at;
        return 0;
}

static void on_waited(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason)
{
        struct observe_blame *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC), done, dispatched;
        struct blame_waiting *w;

        if (ev->received == 0 || ev->received > now)
                return; /* arrival unknown: no wait to measure */
        w = waiting_get(b, ev);
        if (!w)
                return;
        if (blocker == ev->seqnum) {
                /* For udevd, from its dispatch: once runnable, after its wait for a slot. */
                dispatched = w->ready + w->waits.slot;
                w->waits.udev = now > dispatched ? now - dispatched : 0;
        } else if (blocker != 0) {
                /* Runnable once its blocker was done (not known: now, all of it order). */
                done = recent_done(b, blocker);
                w->ready = done > ev->received && done < now ? done : now;
                w->waits.order = w->ready - ev->received;
        } else {
                w->waits.slot = now - w->ready;
        }
}

static void on_starting(void *userdata, const struct uevent *ev)
{
        struct observe_blame *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        struct blame_running *r;

        if (room_for_one((void **)&b->run, b->n_run, &b->a_run, sizeof(*b->run)) < 0) {
                waiting_take(b, ev->seqnum, NULL);
                return; /* more than can run: not followed */
        }
        r = &b->run[b->n_run++];
        *r = (struct blame_running){ .seqnum = ev->seqnum, .first_start = now, .last_end = now };
        waiting_take(b, ev->seqnum, &r->waits);
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        struct observe_blame *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC), took = now > a->started ? now - a->started : 0;
        struct blame_running *r = running_find(b, a->ev->seqnum);

        if (r)
                r->last_end = MAX(r->last_end, now);
        tally_add(&b->t[CONTROL_BLAME_PROGRAM], a->program, a->ev->seqnum, took,
                  r ? &r->waits : &(struct tally_waits){ 0 });
        b->totals.runs++;
        b->totals.run_time += took;
}

static void on_done(void *userdata, const struct uevent *ev)
{
        struct observe_blame *b = userdata;
        struct blame_running *r = running_find(b, ev->seqnum);
        usec_t wall;

        b->recent[b->recent_next].seqnum = ev->seqnum;
        b->recent[b->recent_next].at = now_usec(CLOCK_MONOTONIC);
        b->recent_next = (b->recent_next + 1) % ELEMENTSOF(b->recent);
        waiting_take(b, ev->seqnum, NULL); /* it waited, but no agent started */
        if (!r)
                return; /* no agent started for it */
        wall = r->last_end - r->first_start;
        tally_add(&b->t[CONTROL_BLAME_SUBSYSTEM], ev->subsystem, ev->seqnum, wall, &r->waits);
        tally_add(&b->t[CONTROL_BLAME_DEVICE], ev->devpath, ev->seqnum, wall, &r->waits);
        b->totals.events++;
        b->totals.order_wait += r->waits.order;
        b->totals.slot_wait += r->waits.slot;
        b->totals.udev_wait += r->waits.udev;
        *r = b->run[--b->n_run];
}

static void on_close(void *userdata)
{
        struct observe_blame *b = userdata;

        for (int g = 0; g < _CONTROL_BLAME_MAX; g++)
                tally_clear(&b->t[g]);
        free(b->run);
        free(b->wait);
        free(b);
}

static const struct manager_observer_ops blame_ops = {
        .waited = on_waited,
        .starting = on_starting,
        .finished = on_finished,
        .done = on_done,
        .close = on_close,
};

int observe_blame_open(struct manager *m)
{
        struct observe_blame *b = calloc(1, sizeof(*b));
        int r;

        if (!b)
                return -ENOMEM;
        for (int g = 0; g < _CONTROL_BLAME_MAX; g++)
                tally_init(&b->t[g], HP_BLAME_NAMES_MAX);
        r = manager_add_observer(m, &blame_ops, b);
        if (r < 0) {
                free(b);
                return r;
        }
        return 0;
}

/* ---- what hotplugctl blame is told ----------------------------------------- */

void manager_blame_totals(const struct manager *m, struct control_blame_totals *ret)
{
        const struct observe_blame *b = manager_observer_data(m, &blame_ops);

        *ret = b ? b->totals : (struct control_blame_totals){ 0 };
}

int manager_for_each_blame_row(const struct manager *m, void (*fn)(const struct control_blame_row *r, void *arg),
                               void *arg)
{
        struct observe_blame *b = manager_observer_data(m, &blame_ops);
        int r;

        for (int g = 0; b && g < _CONTROL_BLAME_MAX; g++) {
                r = tally_visit(&b->t[g], (enum control_blame_group)g, fn, arg);
                if (r < 0)
                        return r;
        }
        return 0;
}
