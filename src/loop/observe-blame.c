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
 *    before the slot as order;
 *  - for blame --critical-chain, the last HP_BLAME_CHAIN_EVENTS events
 *    done that ran an agent are kept with their names, times, waits, the
 *    event they waited for and their first failed run, and the busy period
 *    (from an event queued when nothing was held until nothing is held)
 *    they were done in: the current one and the last one over in which
 *    an agent ran.
 */
#include <errno.h>
#include <stdio.h>
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
        uint64_t seqnum, blocker;
        usec_t first_start, last_end;
        struct tally_waits waits;
        uint32_t runs, failed_runs;
        char *failed;              /* "PROGRAM\0STATUS": its first failed run, NULL: none */
};

/* What waited() said of an event that has not started yet. */
struct blame_waiting {
        uint64_t seqnum, blocker;  /* blocker: the event it waited for (order), 0: none */
        usec_t ready;              /* runnable: its order wait over (or its arrival) */
        struct tally_waits waits;
};

/* An event done that ran an agent, kept for the chain. */
struct blame_done {
        uint64_t seqnum, blocker, period;
        usec_t first_start, last_end;
        struct tally_waits waits;
        uint32_t runs, failed_runs;
        char *names;               /* "ACTION\0SUBSYSTEM\0DEVPATH\0" and "PROGRAM\0STATUS\0" if one failed */
};

/* A busy period: from an event queued when nothing was held until nothing is held. */
struct blame_period {
        uint64_t id;               /* 0: none yet */
        usec_t first, end;         /* end: 0 while open */
        uint64_t events;           /* queued in it */
        bool ran;                  /* an event done in it ran an agent */
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
        struct blame_done chain[HP_BLAME_CHAIN_EVENTS];
        size_t chain_next;
        struct blame_period cur, last_ran; /* the current (or last) period, the last one over that ran an agent */
        struct manager *m;
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

/* @seqnum's waits (zeroes if nothing was said) and the event it waited for
 * (0: none), forgotten; into *@ret and *@ret_blocker if not NULL. */
static void waiting_take(struct observe_blame *b, uint64_t seqnum, struct tally_waits *ret, uint64_t *ret_blocker)
{
        struct blame_waiting *w = waiting_find(b, seqnum);

        if (ret)
                *ret = w ? w->waits : (struct tally_waits){ 0 };
        if (ret_blocker)
                *ret_blocker = w ? w->blocker : 0;
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
                w->blocker = blocker;
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
                waiting_take(b, ev->seqnum, NULL, NULL);
                return; /* more than can run: not followed */
        }
        r = &b->run[b->n_run++];
        *r = (struct blame_running){ .seqnum = ev->seqnum, .first_start = now, .last_end = now };
        waiting_take(b, ev->seqnum, &r->waits, &r->blocker);
}

/* A run of @r failed: the first one is named (nothing, without memory). */
static void running_failed(struct blame_running *r, const char *program, const char *status)
{
        size_t lp = strlen(program), ls = strlen(status);

        r->failed_runs++;
        if (r->failed)
                return;
        r->failed = malloc(lp + ls + 2);
        if (r->failed) {
                memcpy(r->failed, program, lp + 1);
                memcpy(r->failed + lp + 1, status, ls + 1);
        }
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        struct observe_blame *b = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC), took = now > a->started ? now - a->started : 0;
        struct blame_running *r = running_find(b, a->ev->seqnum);

        bool failed = si->si_code != CLD_EXITED || si->si_status != 0;

        if (r) {
                r->last_end = MAX(r->last_end, now);
                r->runs++;
                if (failed)
                        running_failed(r, a->program, status);
        }
        tally_add(&b->t[CONTROL_BLAME_PROGRAM], a->program, a->ev->seqnum, took,
                  r ? &r->waits : &(struct tally_waits){ 0 }, failed);
        b->totals.runs++;
        b->totals.failed_runs += failed;
        b->totals.run_time += took;
}

/* A run that could not be executed: a failed run of no time, as in a recording. */
static void on_exec_failed(void *userdata, const struct manager_agent *a, int error)
{
        struct observe_blame *b = userdata;
        struct blame_running *r = running_find(b, a->ev->seqnum);
        const char *name = strerrorname_np(error < 0 ? -error : error);
        char status[48];

        snprintf(status, sizeof(status), "exec %s", name ? name : "failed");
        if (r) {
                r->runs++;
                running_failed(r, a->program, status);
        }
        tally_add(&b->t[CONTROL_BLAME_PROGRAM], a->program, a->ev->seqnum, 0,
                  r ? &r->waits : &(struct tally_waits){ 0 }, true);
        b->totals.runs++;
        b->totals.failed_runs++;
}

/* ---- the chain ------------------------------------------------------------- */

static void on_queued(void *userdata, const struct uevent *ev)
{
        struct observe_blame *b = userdata;

        if (b->cur.id == 0 || b->cur.end != 0) { /* nothing was held: a new period */
                b->cur = (struct blame_period){ .id = b->cur.id + 1,
                                                .first = ev->received ? ev->received : now_usec(CLOCK_MONOTONIC) };
        }
        b->cur.events++;
}

/* Nothing held any more: the period is over. */
static void period_maybe_over(struct observe_blame *b)
{
        if (b->cur.id != 0 && b->cur.end == 0 && manager_held(b->m) == 0) {
                b->cur.end = now_usec(CLOCK_MONOTONIC);
                if (b->cur.ran)
                        b->last_ran = b->cur;
        }
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        (void)view;
        (void)filtered;
        period_maybe_over(userdata);
}

/* @r, done, kept for the chain (its names, without memory, are not: the link says so). */
static void chain_keep(struct observe_blame *b, const struct uevent *ev, const struct blame_running *r)
{
        struct blame_done *d = &b->chain[b->chain_next];
        const char *parts[] = { ev->action, ev->subsystem, ev->devpath };
        size_t size = 0, len[ELEMENTSOF(parts)], lf = 0;
        char *p;

        free(d->names);
        *d = (struct blame_done){ .seqnum = ev->seqnum, .blocker = r->blocker, .period = b->cur.id,
                                  .first_start = r->first_start, .last_end = r->last_end, .waits = r->waits,
                                  .runs = r->runs, .failed_runs = r->failed_runs };
        b->chain_next = (b->chain_next + 1) % ELEMENTSOF(b->chain);
        b->cur.ran = true;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++)
                size += (len[i] = strlen(parts[i] ? parts[i] : "")) + 1;
        if (r->failed) {
                lf = strlen(r->failed) + 1;
                lf += strlen(r->failed + lf) + 1;
        }
        d->names = p = malloc(size + lf);
        if (!p)
                return;
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                memcpy(p, parts[i] ? parts[i] : "", len[i] + 1);
                p += len[i] + 1;
        }
        if (lf)
                memcpy(p, r->failed, lf);
        else
                d->failed_runs = 0; /* named nowhere: not said */
}

static void on_done(void *userdata, const struct uevent *ev)
{
        struct observe_blame *b = userdata;
        struct blame_running *r = running_find(b, ev->seqnum);
        usec_t wall;

        b->recent[b->recent_next].seqnum = ev->seqnum;
        b->recent[b->recent_next].at = now_usec(CLOCK_MONOTONIC);
        b->recent_next = (b->recent_next + 1) % ELEMENTSOF(b->recent);
        waiting_take(b, ev->seqnum, NULL, NULL); /* it waited, but no agent started */
        if (!r) {
                period_maybe_over(b);
                return; /* no agent started for it */
        }
        wall = r->last_end - r->first_start;
        tally_add(&b->t[CONTROL_BLAME_SUBSYSTEM], ev->subsystem, ev->seqnum, wall, &r->waits, r->failed_runs > 0);
        tally_add(&b->t[CONTROL_BLAME_DEVICE], ev->devpath, ev->seqnum, wall, &r->waits, r->failed_runs > 0);
        chain_keep(b, ev, r);
        b->totals.events++;
        b->totals.failed_events += r->failed_runs > 0;
        b->totals.order_wait += r->waits.order;
        b->totals.slot_wait += r->waits.slot;
        b->totals.udev_wait += r->waits.udev;
        free(r->failed);
        *r = b->run[--b->n_run];
        period_maybe_over(b);
}

static void on_close(void *userdata)
{
        struct observe_blame *b = userdata;

        for (int g = 0; g < _CONTROL_BLAME_MAX; g++)
                tally_clear(&b->t[g]);
        for (size_t i = 0; i < b->n_run; i++)
                free(b->run[i].failed);
        for (size_t i = 0; i < ELEMENTSOF(b->chain); i++)
                free(b->chain[i].names);
        free(b->run);
        free(b->wait);
        free(b);
}

/* A module load (load-modules): its time in the module table; it serves events of several aliases, none named. */
static void on_module_loaded(void *userdata, const char *name, usec_t took, bool failed)
{
        struct observe_blame *b = userdata;
        const struct tally_waits none = { 0 };

        tally_add(&b->t[CONTROL_BLAME_MODULE], name, 0, took, &none, failed);
}

static const struct manager_observer_ops blame_ops = {
        .queued = on_queued,
        .dropped = on_dropped,
        .waited = on_waited,
        .starting = on_starting,
        .exec_failed = on_exec_failed,
        .finished = on_finished,
        .done = on_done,
        .module_loaded = on_module_loaded,
        .close = on_close,
};

int observe_blame_open(struct manager *m)
{
        struct observe_blame *b = calloc(1, sizeof(*b));
        int r;

        if (!b)
                return -ENOMEM;
        b->m = m;
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

/* The event @seqnum among those kept for the chain; NULL if it is not. */
static const struct blame_done *chain_find(const struct observe_blame *b, uint64_t seqnum)
{
        for (size_t i = 0; i < ELEMENTSOF(b->chain); i++)
                if (b->chain[i].seqnum == seqnum && b->chain[i].runs > 0)
                        return &b->chain[i];
        return NULL;
}

int manager_blame_chain(const struct manager *m, struct control_blame_chain *ret,
                        void (*fn)(const struct control_blame_link *l, void *arg), void *arg)
{
        const struct observe_blame *b = manager_observer_data(m, &blame_ops);
        const struct blame_done *d = NULL;
        const struct blame_period *p;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        uint64_t seqnum;
        unsigned n = 0;

        *ret = (struct control_blame_chain){ 0 };
        for (size_t i = 0; b && i < ELEMENTSOF(b->chain); i++) /* the one that ended last */
                if (b->chain[i].runs > 0 && (!d || b->chain[i].last_end > d->last_end ||
                                             (b->chain[i].last_end == d->last_end && b->chain[i].seqnum > d->seqnum)))
                        d = &b->chain[i];
        if (!d)
                return 0;
        /* The last done is of the current period, or of the last one over that ran
         * an agent (a later one that ran an agent would have one done later). */
        p = d->period == b->cur.id ? &b->cur : d->period == b->last_ran.id ? &b->last_ran : NULL;
        if (!p)
                return 0;
        ret->known = true;
        ret->events = p->events;
        ret->settled = p->end != 0;
        ret->span = (p->end ? p->end : now) - p->first;
        for (seqnum = d->seqnum; seqnum != 0; seqnum = d->blocker) {
                const char *action, *subsystem, *devpath, *failed = NULL, *status = NULL;

                d = chain_find(b, seqnum);
                if (!d || n == HP_BLAME_CHAIN_LINKS) {
                        ret->cut_seqnum = seqnum;
                        break;
                }
                action = d->names;
                subsystem = action ? action + strlen(action) + 1 : NULL;
                devpath = subsystem ? subsystem + strlen(subsystem) + 1 : NULL;
                if (devpath && d->failed_runs) {
                        failed = devpath + strlen(devpath) + 1;
                        status = failed + strlen(failed) + 1;
                }
                if (fn)
                        fn(&(const struct control_blame_link){
                                   .seqnum = d->seqnum, .blocker = d->blocker < d->seqnum ? d->blocker : 0,
                                   .action = action, .subsystem = subsystem, .devpath = devpath,
                                   .at = d->first_start > p->first ? d->first_start - p->first : 0,
                                   .ran = d->last_end - d->first_start, .order_wait = d->waits.order,
                                   .slot_wait = d->waits.slot, .udev_wait = d->waits.udev, .runs = d->runs,
                                   .failed_runs = d->failed_runs, .failed = failed, .failed_status = status },
                           arg);
                n++;
                if (d->blocker >= d->seqnum)
                        break;
        }
        return 0;
}
