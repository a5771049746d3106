/* SPDX-License-Identifier: MIT */
/*
 * The blame observer: since the daemon started (so the boot's coldplug
 * too), per subsystem, per program (the agent, or each hotplug.d file that
 * ran) and per device: how many events (or runs), their wall time summed,
 * the slowest with its SEQNUM, and the time their events waited for order
 * and for a free slot.  hotplugctl blame asks for it over the control
 * socket ("blame", control.h); the rules are those of the blame of a
 * recording (src/ctl/blame.h):
 *  - an event's wall time runs from its first agent's start to its last
 *    agent's end; subsystems and devices count events, programs count runs
 *    (that started), and each run carries the waits of its event;
 *  - an event waited for order from its arrival until the last event it
 *    waited for was done, and for a slot from then (or its arrival) until
 *    its first agent started.
 *
 * Invariants and bounds:
 *  - each table (blame-tally.h) holds at most HP_BLAME_NAMES_MAX names;
 *    facts under a new name past that are summed in one row "(other)";
 *  - an event is followed only from its first start to its done(): at most
 *    the events running, HP_CHILDREN_MAX;
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
        usec_t first_start, last_end, order_wait, slot_wait;
};

struct observe_blame {
        struct tally t[_CONTROL_BLAME_MAX];
        struct control_blame_totals totals;
        struct blame_running *run;
        size_t n_run, a_run;
        struct {
                uint64_t seqnum;
                usec_t at;
        } recent[HP_BLAME_RECENT_DONE];
        size_t recent_next;
        /* What waited() said of the event about to start. */
        uint64_t wait_seqnum;
        usec_t wait_ready, wait_order, wait_slot;
};

/* ---- following the events -------------------------------------------------- */

static struct blame_running *running_find(struct observe_blame *b, uint64_t seqnum)
{
        for (size_t i = 0; i < b->n_run; i++)
                if (b->run[i].seqnum == seqnum)
                        return &b->run[i];
        return NULL;
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
        usec_t now = now_usec(CLOCK_MONOTONIC), done;

        if (ev->received == 0 || ev->received > now)
                return; /* arrival unknown: no wait to measure */
        if (b->wait_seqnum != ev->seqnum) {
                b->wait_seqnum = ev->seqnum;
                b->wait_ready = ev->received;
                b->wait_order = b->wait_slot = 0;
        }
        if (blocker != 0) {
                /* Runnable once its blocker was done (not known: now, all of it order). */
                done = recent_done(b, blocker);
                b->wait_ready = done > ev->received && done < now ? done : now;
                b->wait_order = b->wait_ready - ev->received;
        } else {
                b->wait_slot = now - b->wait_ready;
        }
}

static void on_starting(void *userdata, const struct uevent *ev)
{
        struct observe_blame *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        struct blame_running *r;

        if (b->n_run == b->a_run) {
                size_t a = b->a_run ? b->a_run * 2 : 16;
                struct blame_running *v;

                if (a > HP_CHILDREN_MAX)
                        return; /* more than can run: not followed */
                v = realloc(b->run, a * sizeof(*v));
                if (!v)
                        return;
                b->run = v;
                b->a_run = a;
        }
        r = &b->run[b->n_run++];
        *r = (struct blame_running){ .seqnum = ev->seqnum, .first_start = now, .last_end = now };
        if (b->wait_seqnum == ev->seqnum) {
                r->order_wait = b->wait_order;
                r->slot_wait = b->wait_slot;
                b->wait_seqnum = 0;
        }
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        struct observe_blame *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC), took = now > a->started ? now - a->started : 0;
        struct blame_running *r = running_find(b, a->ev->seqnum);

        if (r)
                r->last_end = MAX(r->last_end, now);
        tally_add(&b->t[CONTROL_BLAME_PROGRAM], a->program, a->ev->seqnum, took, r ? r->order_wait : 0,
                  r ? r->slot_wait : 0);
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
        if (!r)
                return; /* no agent started for it */
        wall = r->last_end - r->first_start;
        tally_add(&b->t[CONTROL_BLAME_SUBSYSTEM], ev->subsystem, ev->seqnum, wall, r->order_wait, r->slot_wait);
        tally_add(&b->t[CONTROL_BLAME_DEVICE], ev->devpath, ev->seqnum, wall, r->order_wait, r->slot_wait);
        b->totals.events++;
        b->totals.order_wait += r->order_wait;
        b->totals.slot_wait += r->slot_wait;
        *r = b->run[--b->n_run];
}

static void on_close(void *userdata)
{
        struct observe_blame *b = userdata;

        for (int g = 0; g < _CONTROL_BLAME_MAX; g++)
                tally_clear(&b->t[g]);
        free(b->run);
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
