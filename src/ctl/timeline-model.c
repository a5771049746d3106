/* SPDX-License-Identifier: MIT */
/*
 * The timeline model: records in, lanes/bars/arrows/marks out.
 *
 * Invariants: before timeline_finish() times are absolute (recorder's
 * CLOCK_MONOTONIC) and runs are in file order; after it, times are relative
 * to t0, runs are sorted by start time, every run and event has a lane, and
 * wait arrows point at run indices of that sorted order.  At most
 * HP_TIMELINE_MAX_EVENTS events and HP_TIMELINE_MAX_RUNS runs are kept.
 * After it, too, the first run of each event starts its wait (queued) when
 * the event was received, every run has a sub-row of its lane, and no two
 * runs of one row overlap (their waits included).  A WAIT record whose
 * blocker is its own SEQNUM is a wait for udevd: it never links a run to
 * itself, and its run has queued <= udev_from <= udev_until <= start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/heap.h"
#include "shared/macro.h"
#include "ctl/timeline.h"
#include "uevent/uevent.h"

#define UNKNOWN_LANE "(event not in recording)"

/* Make room for one more element in a growing array. */
static int grow(void **p, size_t *alloc, size_t n, size_t size)
{
        size_t a;
        void *q;

        if (n < *alloc)
                return 0;
        a = *alloc ? *alloc * 2 : 64;
        q = reallocarray(*p, a, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *alloc = a;
        return 0;
}

int timeline_new(struct timeline **ret)
{
        struct timeline *tl = calloc(1, sizeof(*tl));

        if (!tl)
                return -ENOMEM;
        *ret = tl;
        return 0;
}

struct timeline *timeline_free(struct timeline *tl)
{
        if (!tl)
                return NULL;
        for (size_t i = 0; i < tl->n_events; i++) {
                free(tl->events[i].action);
                free(tl->events[i].devpath);
                free(tl->events[i].subsystem);
        }
        for (size_t i = 0; i < tl->n_runs; i++)
                free(tl->runs[i].program);
        for (size_t i = 0; i < tl->n_waits; i++)
                free(tl->waits[i].reason);
        free(tl->events);
        free(tl->runs);
        free(tl->waits);
        free(tl->marks);
        free(tl->lanes);
        free(tl->clock);
        free(tl);
        return NULL;
}

static int add_event(struct timeline *tl, const struct record *rec)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent ev;
        struct tl_event *e;

        if (uevent_parse(rec->datagram.data, rec->datagram.size, vars, &ev, NULL) < 0) {
                tl->rejected++;
                return 0;
        }
        if (tl->n_events >= HP_TIMELINE_MAX_EVENTS) {
                tl->ignored++;
                return 0;
        }
        if (grow((void **)&tl->events, &tl->a_events, tl->n_events, sizeof(*tl->events)) < 0)
                return -ENOMEM;
        e = &tl->events[tl->n_events];
        *e = (struct tl_event){
                .seqnum = ev.seqnum,
                .t = rec->datagram.monotonic,
                .realtime = rec->datagram.realtime,
                .action = strdup(ev.action),
                .devpath = strdup(ev.devpath),
                .subsystem = strdup(ev.subsystem),
        };
        tl->n_events++;
        return e->action && e->devpath && e->subsystem ? 0 : -ENOMEM;
}

static int add_run(struct timeline *tl, uint64_t seqnum, uint32_t pid, usec_t t, const char *program)
{
        if (tl->n_runs >= HP_TIMELINE_MAX_RUNS) {
                tl->ignored++;
                return 0;
        }
        if (grow((void **)&tl->runs, &tl->a_runs, tl->n_runs, sizeof(*tl->runs)) < 0)
                return -ENOMEM;
        tl->runs[tl->n_runs] = (struct tl_run){
                .seqnum = seqnum, .pid = pid, .queued = t, .start = t, .end = t, .event = -1,
                .program = program ? strdup(program) : NULL,
        };
        if (program && !tl->runs[tl->n_runs].program)
                return -ENOMEM;
        tl->n_runs++;
        return 0;
}

/* Match an end to the latest unfinished run of the same SEQNUM (and pid). */
static int end_run(struct timeline *tl, const struct record *rec)
{
        struct tl_run *run = NULL;

        /* Runs of one event are sequential and recent: search backwards, bounded. */
        for (size_t i = tl->n_runs, k = 0; i > 0 && k < 4 * HP_CHILDREN_MAX; i--, k++) {
                struct tl_run *c = &tl->runs[i - 1];
                if (!c->finished && c->seqnum == rec->agent_end.seqnum &&
                    (rec->agent_end.pid == 0 || c->pid == rec->agent_end.pid)) {
                        run = c;
                        break;
                }
        }
        if (!run) {
                /* An exec failure never started: show it as a zero-length run. */
                if (rec->agent_end.status != RECORD_AGENT_EXEC_FAILED &&
                    rec->agent_end.status != RECORD_AGENT_SET_ASIDE)
                        tl->unmatched_ends++;
                size_t before = tl->n_runs;

                if (add_run(tl, rec->agent_end.seqnum, 0, rec->agent_end.monotonic, NULL) < 0)
                        return -ENOMEM;
                if (tl->n_runs == before)
                        return 0; /* over the bound, ignored */
                run = &tl->runs[before];
        }
        run->end = MAX(rec->agent_end.monotonic, run->start);
        run->finished = true;
        run->status = rec->agent_end.status;
        run->value = rec->agent_end.value;
        return 0;
}

static int add_mark(struct timeline *tl, const struct tl_mark *m)
{
        if (tl->n_marks >= HP_TIMELINE_MAX_EVENTS) {
                tl->ignored++;
                return 0;
        }
        if (grow((void **)&tl->marks, &tl->a_marks, tl->n_marks, sizeof(*tl->marks)) < 0)
                return -ENOMEM;
        tl->marks[tl->n_marks++] = *m;
        return 0;
}

static int add_wait(struct timeline *tl, const struct record *rec)
{
        if (tl->n_waits >= HP_TIMELINE_MAX_RUNS) {
                tl->ignored++;
                return 0;
        }
        if (grow((void **)&tl->waits, &tl->a_waits, tl->n_waits, sizeof(*tl->waits)) < 0)
                return -ENOMEM;
        tl->waits[tl->n_waits] = (struct tl_wait){
                .seqnum = rec->wait.seqnum, .blocker = rec->wait.blocker, .t = rec->wait.monotonic,
                .kind = rec->wait.blocker == 0                 ? TL_WAIT_SLOT
                        : rec->wait.blocker == rec->wait.seqnum ? TL_WAIT_UDEV
                                                                : TL_WAIT_ORDER,
                .reason = strdup(rec->wait.reason), .from_run = -1, .to_run = -1,
        };
        if (!tl->waits[tl->n_waits].reason)
                return -ENOMEM;
        tl->n_waits++;
        return 0;
}

int timeline_add(struct timeline *tl, const struct record *rec)
{
        switch (rec->type) {
        case RECORD_DATAGRAM:
                return add_event(tl, rec);
        case RECORD_AGENT_START:
                return add_run(tl, rec->agent_start.seqnum, rec->agent_start.pid, rec->agent_start.monotonic,
                               rec->agent_start.program);
        case RECORD_AGENT_END:
                return end_run(tl, rec);
        case RECORD_WAIT:
                return add_wait(tl, rec);
        case RECORD_GAP:
                return add_mark(tl, &(struct tl_mark){ .t = rec->gap.monotonic, .first = rec->gap.first,
                                                       .last = rec->gap.last, .class = rec->gap.class });
        case RECORD_OVERFLOW:
                return add_mark(tl, &(struct tl_mark){ .t = rec->overflow.monotonic, .overflow = true });
        default:
                return 0;
        }
}

/* ---- finishing ------------------------------------------------------------- */

static int cmp_event_seqnum(const void *a, const void *b)
{
        const struct tl_event *x = a, *y = b;

        return x->seqnum < y->seqnum ? -1 : x->seqnum > y->seqnum ? 1 : x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_run_start(const void *a, const void *b)
{
        const struct tl_run *x = a, *y = b;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seqnum < y->seqnum ? -1 : x->seqnum > y->seqnum;
}

static int cmp_mark(const void *a, const void *b)
{
        const struct tl_mark *x = a, *y = b;

        return x->t < y->t ? -1 : x->t > y->t;
}

static long find_event(const struct timeline *tl, uint64_t seqnum)
{
        size_t lo = 0, hi = tl->n_events;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (tl->events[mid].seqnum < seqnum)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < tl->n_events && tl->events[lo].seqnum == seqnum ? (long)lo : -1;
}

const char *timeline_lane_key(const struct timeline *tl, long event)
{
        if (event < 0)
                return UNKNOWN_LANE;
        return tl->by == TIMELINE_LANES_SUBSYSTEM ? tl->events[event].subsystem : tl->events[event].devpath;
}

/* Make times relative to the earliest one; unfinished runs end with the recording. */
static void rebase_times(struct timeline *tl)
{
        usec_t lo = UINT64_MAX, hi = 0;

        for (size_t i = 0; i < tl->n_events; i++)
                lo = MIN(lo, tl->events[i].t), hi = MAX(hi, tl->events[i].t);
        for (size_t i = 0; i < tl->n_runs; i++)
                lo = MIN(lo, tl->runs[i].start), hi = MAX(hi, tl->runs[i].end);
        for (size_t i = 0; i < tl->n_marks; i++)
                lo = MIN(lo, tl->marks[i].t), hi = MAX(hi, tl->marks[i].t);
        /* Nothing timed at all (not a sentinel: UINT64_MAX is a time a file may hold). */
        if (tl->n_events == 0 && tl->n_runs == 0 && tl->n_marks == 0)
                lo = hi = 0;
        tl->t0 = lo;
        tl->span = MAX(hi - lo, USEC_PER_MSEC);
        for (size_t i = 0; i < tl->n_events; i++)
                tl->events[i].t -= lo;
        for (size_t i = 0; i < tl->n_runs; i++) {
                tl->runs[i].start -= lo;
                tl->runs[i].queued = tl->runs[i].start;
                tl->runs[i].end = tl->runs[i].finished ? tl->runs[i].end - lo : hi - lo;
        }
        for (size_t i = 0; i < tl->n_marks; i++)
                tl->marks[i].t -= lo;
        /* Waits do not widen the span; one recorded before everything else counts as at t0. */
        for (size_t i = 0; i < tl->n_waits; i++)
                tl->waits[i].t = tl->waits[i].t > lo ? tl->waits[i].t - lo : 0;
}

struct keyref {
        const char *key;
        usec_t t;
        unsigned *lane;
        bool run;
};

static int cmp_keyref(const void *a, const void *b)
{
        const struct keyref *x = a, *y = b;

        return strcmp(x->key, y->key);
}

struct lane_sort {
        struct tl_lane lane;
        unsigned old;
};

static int cmp_lane_first(const void *a, const void *b)
{
        const struct lane_sort *x = a, *y = b;

        if (x->lane.first != y->lane.first)
                return x->lane.first < y->lane.first ? -1 : 1;
        return strcmp(x->lane.name, y->lane.name);
}

/* Collect one key reference per event and run, sorted by key. */
static struct keyref *lane_refs(struct timeline *tl, size_t n)
{
        struct keyref *refs = calloc(MAX(n, (size_t)1), sizeof(*refs));

        if (!refs)
                return NULL;
        for (size_t i = 0; i < tl->n_events; i++)
                refs[i] = (struct keyref){ timeline_lane_key(tl, (long)i), tl->events[i].t, &tl->events[i].lane,
                                           false };
        for (size_t i = 0; i < tl->n_runs; i++)
                refs[tl->n_events + i] = (struct keyref){ timeline_lane_key(tl, tl->runs[i].event),
                                                          tl->runs[i].start, &tl->runs[i].lane, true };
        qsort(refs, n, sizeof(*refs), cmp_keyref);
        return refs;
}

/* Group events and runs by lane key; lanes ordered by first activity. */
static int assign_lanes(struct timeline *tl)
{
        size_t n = tl->n_events + tl->n_runs, n_lanes = 0;
        _cleanup_free_ struct keyref *refs = lane_refs(tl, n);
        _cleanup_free_ struct lane_sort *sorted = calloc(MAX(n, (size_t)1), sizeof(*sorted));
        _cleanup_free_ unsigned *renumber = calloc(MAX(n, (size_t)1), sizeof(*renumber));

        tl->lanes = calloc(MAX(n, (size_t)1), sizeof(*tl->lanes));
        if (!refs || !sorted || !renumber || !tl->lanes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct tl_lane *l;

                if (i == 0 || strcmp(refs[i].key, refs[i - 1].key) != 0) {
                        sorted[n_lanes] = (struct lane_sort){ { .name = refs[i].key, .first = refs[i].t },
                                                              (unsigned)n_lanes };
                        n_lanes++;
                }
                l = &sorted[n_lanes - 1].lane;
                l->first = MIN(l->first, refs[i].t);
                *refs[i].lane = (unsigned)(n_lanes - 1);
                if (refs[i].run)
                        l->n_runs++;
                else
                        l->n_events++;
        }
        qsort(sorted, n_lanes, sizeof(*sorted), cmp_lane_first);
        for (size_t i = 0; i < n_lanes; i++) {
                tl->lanes[i] = sorted[i].lane;
                renumber[sorted[i].old] = (unsigned)i;
        }
        for (size_t i = 0; i < n; i++)
                *refs[i].lane = renumber[*refs[i].lane];
        tl->n_lanes = n_lanes;
        return 0;
}

struct run_ref {
        uint64_t seqnum;
        long run;
};

static int cmp_run_ref(const void *a, const void *b)
{
        const struct run_ref *x = a, *y = b;

        if (x->seqnum != y->seqnum)
                return x->seqnum < y->seqnum ? -1 : 1;
        return x->run < y->run ? -1 : x->run > y->run;
}

/* First index in @refs (sorted) with @seqnum, or @n. */
static size_t lower_bound(const struct run_ref *refs, size_t n, uint64_t seqnum)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (refs[mid].seqnum < seqnum)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/*
 * The wait for udevd of each run that had one: from its dispatch (its last
 * order or slot WAIT record, or its arrival; udev_from holds the latest of
 * those on entry) to its udevd WAIT record, within its wait for its agent.
 */
static void set_udev_waits(struct timeline *tl)
{
        for (size_t i = 0; i < tl->n_runs; i++) {
                struct tl_run *run = &tl->runs[i];

                if (!run->udev_wait) {
                        run->udev_from = run->udev_until = run->start;
                        continue;
                }
                run->udev_from = MIN(MAX(run->udev_from, run->queued), run->start);
                run->udev_until = MIN(MAX(run->udev_until, run->udev_from), run->start);
        }
}

/* Arrows: from the blocker's last run to the waiter's first run; a slot's and udevd's waits go to the run. */
static int link_waits(struct timeline *tl)
{
        _cleanup_free_ struct run_ref *refs = calloc(MAX(tl->n_runs, (size_t)1), sizeof(*refs));

        if (!refs)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++) {
                refs[i] = (struct run_ref){ tl->runs[i].seqnum, (long)i };
                tl->runs[i].udev_from = tl->runs[i].queued;
                tl->runs[i].udev_until = 0;
        }
        qsort(refs, tl->n_runs, sizeof(*refs), cmp_run_ref);
        for (size_t i = 0; i < tl->n_waits; i++) {
                struct tl_wait *w = &tl->waits[i];
                size_t k = lower_bound(refs, tl->n_runs, w->seqnum);
                struct tl_run *to = NULL;

                if (k < tl->n_runs && refs[k].seqnum == w->seqnum) {
                        w->to_run = refs[k].run;
                        to = &tl->runs[w->to_run];
                }
                if (to && w->kind == TL_WAIT_UDEV) {
                        to->udev_wait = w->reason;
                        to->udev_until = MAX(to->udev_until, w->t);
                } else if (to) {
                        to->udev_from = MAX(to->udev_from, w->t); /* dispatched then, or later */
                }
                if (to && w->kind == TL_WAIT_SLOT)
                        to->slot_wait = w->reason;
                if (w->kind != TL_WAIT_ORDER)
                        continue; /* no arrow: not a wait for another event */
                k = lower_bound(refs, tl->n_runs, w->blocker);
                while (k < tl->n_runs && refs[k].seqnum == w->blocker)
                        w->from_run = refs[k++].run;
        }
        set_udev_waits(tl);
        return 0;
}

/* The first run of each event waits from the event's arrival (runs are sorted by start). */
static int set_queued(struct timeline *tl)
{
        _cleanup_free_ bool *seen = calloc(MAX(tl->n_events, (size_t)1), sizeof(*seen));

        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++) {
                struct tl_run *run = &tl->runs[i];

                if (run->event < 0 || seen[run->event])
                        continue;
                seen[run->event] = true;
                run->queued = MIN(tl->events[run->event].t, run->start);
        }
        return 0;
}

static int cmp_clock(const void *a, const void *b)
{
        const struct tl_clock *x = a, *y = b;

        return x->t < y->t ? -1 : x->t > y->t;
}

/* One clock sample per event: the offset of CLOCK_REALTIME over CLOCK_MONOTONIC at its arrival. */
static int make_clock(struct timeline *tl)
{
        if (tl->n_events == 0)
                return 0;
        tl->clock = calloc(tl->n_events, sizeof(*tl->clock));
        if (!tl->clock)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_events; i++)
                tl->clock[i] = (struct tl_clock){ tl->events[i].t,
                                                  tl->events[i].realtime - (tl->events[i].t + tl->t0) };
        tl->n_clock = tl->n_events;
        qsort(tl->clock, tl->n_clock, sizeof(*tl->clock), cmp_clock);
        return 0;
}

/* ---- sub-rows -------------------------------------------------------------- */

static int cmp_pack(const void *a, const void *b, void *userdata)
{
        const struct timeline *tl = userdata;
        const struct tl_run *x = &tl->runs[*(const size_t *)a], *y = &tl->runs[*(const size_t *)b];

        if (x->lane != y->lane)
                return x->lane < y->lane ? -1 : 1;
        if (x->queued != y->queued)
                return x->queued < y->queued ? -1 : 1;
        return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/*
 * Greedy interval packing, lane by lane: runs in order of their waits'
 * start take the lowest row that is free by then, or a new one.  A run
 * holds its row from its wait's start to its end plus @pad (so that a
 * zero-length run keeps room for its minimum width).  Deterministic: ties
 * go by the runs' sorted order.
 */
static int pack_rows(struct timeline *tl)
{
        _cleanup_free_ size_t *order = calloc(MAX(tl->n_runs, (size_t)1), sizeof(*order));
        _cleanup_(heap_clear) struct heap busy, idle; /* runs by the end of their hold; freed rows by row */
        usec_t pad = tl->span / 250; /* 4 px of the narrowest SVG plot */

        heap_init(&busy, HEAP_NO_INDEX);
        heap_init(&idle, HEAP_NO_INDEX);
        if (!order || heap_reserve(&busy, tl->n_runs) < 0 || heap_reserve(&idle, tl->n_runs) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++)
                order[i] = i;
        qsort_r(order, tl->n_runs, sizeof(*order), cmp_pack, tl);
        for (size_t k = 0; k < tl->n_runs; k++) {
                struct tl_run *run = &tl->runs[order[k]];
                struct tl_lane *lane = &tl->lanes[run->lane];

                if (k == 0 || tl->runs[order[k - 1]].lane != run->lane)
                        while (heap_pop(&busy) || heap_pop(&idle))
                                ;
                /* Rows free by now, lowest first (the idle heap is keyed by row). */
                while (heap_count(&busy) > 0 && heap_top_key(&busy) <= run->queued) {
                        struct tl_run *done = heap_pop(&busy);
                        (void)heap_push(&idle, done->row, done); /* room was reserved */
                }
                if (heap_count(&idle) > 0)
                        run->row = ((const struct tl_run *)heap_pop(&idle))->row;
                else
                        run->row = lane->rows++;
                (void)heap_push(&busy, MAX(run->end, run->queued) + pad, run);
        }
        for (size_t i = 0; i < tl->n_lanes; i++) {
                tl->lanes[i].rows = MAX(tl->lanes[i].rows, 1u);
                tl->lanes[i].first_row = tl->n_rows;
                tl->n_rows += tl->lanes[i].rows;
        }
        return 0;
}

int timeline_finish(struct timeline *tl, enum timeline_lanes by)
{
        int r;

        tl->by = by;
        rebase_times(tl);
        /* qsort() must not be given NULL, even for zero elements. */
        if (tl->n_events > 0)
                qsort(tl->events, tl->n_events, sizeof(*tl->events), cmp_event_seqnum);
        if (tl->n_runs > 0)
                qsort(tl->runs, tl->n_runs, sizeof(*tl->runs), cmp_run_start);
        if (tl->n_marks > 0)
                qsort(tl->marks, tl->n_marks, sizeof(*tl->marks), cmp_mark);
        for (size_t i = 0; i < tl->n_runs; i++) {
                tl->runs[i].event = find_event(tl, tl->runs[i].seqnum);
                if (tl->runs[i].program && tl->runs[0].program && strcmp(tl->runs[i].program, tl->runs[0].program))
                        tl->many_programs = true;
        }
        r = set_queued(tl);
        if (r >= 0)
                r = make_clock(tl);
        if (r >= 0)
                r = assign_lanes(tl);
        if (r >= 0)
                r = pack_rows(tl);
        if (r >= 0)
                r = link_waits(tl);
        if (r < 0)
                return r;
        tl->finished = true;
        return 0;
}

const char *timeline_run_name(const struct tl_run *run)
{
        const char *slash;

        if (!run->program)
                return "";
        slash = strrchr(run->program, '/');
        return slash && slash[1] ? slash + 1 : run->program;
}

void timeline_run_status(const struct tl_run *run, char *buf, size_t size)
{
        const char *name;

        if (!run->finished)
                snprintf(buf, size, "running");
        else if (run->status == RECORD_AGENT_EXITED)
                snprintf(buf, size, "exit %d", (int)run->value);
        else if (run->status == RECORD_AGENT_SIGNALED)
                snprintf(buf, size, "signal %d", (int)run->value);
        else if (run->status == RECORD_AGENT_TIMEOUT)
                snprintf(buf, size, "timeout, sig %d", (int)run->value);
        else if (run->status == RECORD_AGENT_SET_ASIDE)
                snprintf(buf, size, "set aside, %d tries", (int)run->value);
        else if ((name = strerrorname_np((int)run->value)))
                snprintf(buf, size, "exec %s", name);
        else
                snprintf(buf, size, "exec errno %d", (int)run->value);
}

enum tl_outcome timeline_run_outcome(const struct tl_run *run)
{
        if (!run->finished)
                return TL_RUNNING;
        switch (run->status) {
        case RECORD_AGENT_EXITED:
                return run->value == 0 ? TL_OK : TL_EXIT;
        case RECORD_AGENT_SIGNALED:
                return TL_SIGNAL;
        case RECORD_AGENT_TIMEOUT:
                return TL_TIMEOUT;
        default:
                return TL_EXEC;
        }
}

static const struct {
        const char *name, *text;
} outcomes[_TL_OUTCOME_MAX] = {
        [TL_OK] = { "ok", "exit 0" },
        [TL_EXIT] = { "exit", "exit status not 0" },
        [TL_SIGNAL] = { "signal", "killed by a signal" },
        [TL_TIMEOUT] = { "timeout", "killed after its timeout" },
        [TL_EXEC] = { "exec", "could not be executed" },
        [TL_RUNNING] = { "running", "still running at the end" },
};

const char *timeline_outcome_name(enum tl_outcome o)
{
        return o < _TL_OUTCOME_MAX ? outcomes[o].name : "?";
}

const char *timeline_outcome_text(enum tl_outcome o)
{
        return o < _TL_OUTCOME_MAX ? outcomes[o].text : "?";
}

const char *timeline_wall(const struct timeline *tl, usec_t t, enum tl_wall how, char *buf, size_t size)
{
        size_t lo = 0, hi = tl->n_clock, n;
        usec_t wall;
        time_t sec;
        struct tm tm;

        snprintf(buf, size, "?");
        if (tl->n_clock == 0)
                return buf;
        /* The last sample at or before @t, else the first. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (tl->clock[mid].t <= t)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        wall = t + tl->t0 + tl->clock[lo > 0 ? lo - 1 : 0].offset;
        sec = (time_t)(wall / USEC_PER_SEC);
        if (wall / USEC_PER_SEC > (usec_t)INT64_MAX / 2 || !localtime_r(&sec, &tm))
                return buf;
        n = strftime(buf, size, how == TL_WALL_DATE ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
        if (n == 0)
                return snprintf(buf, size, "?"), buf;
        if (how == TL_WALL_US)
                snprintf(buf + n, size - n, ".%06u", (unsigned)(wall % USEC_PER_SEC));
        else
                snprintf(buf + n, size - n, ".%03u", (unsigned)(wall % USEC_PER_SEC / USEC_PER_MSEC));
        n = strlen(buf);
        if (how == TL_WALL_DATE)
                strftime(buf + n, size - n, " %Z", &tm);
        return buf;
}
