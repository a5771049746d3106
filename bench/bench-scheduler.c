/* SPDX-License-Identifier: MIT */
/*
 * Micro-benchmark of the dependency scheduler (not a test): the cost per
 * event, median and worst, in the shapes the daemon meets, of the scheduler
 * and of its reference model (tests/unit/scheduler-ref.h) side by side.
 * (The indexed scheduler with a treap of paths, which the path tree
 * replaced, was timed against both here in the commit that replaced it.)
 *
 * A run fills the window (HP_QUEUE_WINDOW held events), starts what may
 * start, then takes steps: the oldest running event finishes (slow agents
 * finish in the order they started), the next event arrives, and what may
 * start is started.  A step handles one event in and one out, so its time is
 * the cost per event; a step in which a finish releases many waiting events
 * does their work too, hence "each": the step's time over 1 + the events
 * it looked at again.  The first window of steps is not timed: tables grow
 * there, once in the life of a scheduler.  The work of step i is the same
 * in every repetition, so the time of each step is the least over the
 * repetitions (what the machine's other load added is gone), and the
 * median and the worst are taken over those.  A design that takes longer
 * than a budget for one run is stopped there, and its figures (marked '*')
 * are over the steps done.
 *
 * Shapes: 1, 3, 100 and 1,000 devices (flat paths), a deep tree of 1,000
 * devices (paths 5 to 10 components deep, parents and children), pairs (two
 * events per device, each on a new device: a design that scans the queue
 * for the blocker of every event meets its worst here when max_running is
 * large), a fan (a parent with 999 children, the parent's events every 100th:
 * the children wait for it, and its finish wakes them all), and late
 * arrivals (every 8th event comes after the next one; every 64th comes
 * 2,048 events late: a walk back over what came meanwhile; and so in
 * pairs, where the late event is the first on its device).  Each in
 * ordering=devpath with max_running 20 (the default on two CPUs) and 2,048
 * (HP_CHILDREN_MAX, whose window is twice max_running), and in
 * ordering=strict.
 *
 * Usage: bench-scheduler [STEPS [SHAPE]]   (default 2048 steps, every shape)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shared/bounds.h"
#include "shared/macro.h"
#include "scheduler-ref.h"
#include "pipeline/scheduler.h"
#include "uevent/uevent.h"

#define REPS 5
#define BUDGET_NS (2ULL * 1000000000ULL)

struct design {
        const char *name;
        void *(*create)(enum ordering mode, unsigned max_running, size_t max_held);
        void (*destroy)(void *s);
        int (*push)(void *s, struct uevent *ev);
        struct uevent *(*next)(void *s);
        void (*done)(void *s, struct uevent *ev);
        uint64_t (*rechecks)(const void *s); /* events looked at again so far; NULL: not counted */
};

static void *sched_create(enum ordering mode, unsigned max_running, size_t max_held)
{
        struct scheduler *s;
        return scheduler_new(mode, max_running, max_held, &s) < 0 ? NULL : s;
}

static void sched_destroy(void *s)
{
        scheduler_free(s);
}

static int sched_push(void *s, struct uevent *ev)
{
        return scheduler_push(s, ev);
}

static struct uevent *sched_next(void *s)
{
        return scheduler_next(s);
}

static void sched_done(void *s, struct uevent *ev)
{
        scheduler_done(s, ev);
}

static uint64_t sched_rechecks(const void *s)
{
        return scheduler_rechecks(s);
}

static void *ref_create(enum ordering mode, unsigned max_running, size_t max_held)
{
        return ref_new(mode, max_running, max_held);
}

static void ref_destroy(void *s)
{
        ref_free(s);
}

static int ref_push_(void *s, struct uevent *ev)
{
        return ref_push(s, ev);
}

static struct uevent *ref_next_(void *s)
{
        return ref_next(s);
}

static void ref_done_(void *s, struct uevent *ev)
{
        ref_done(s, ev);
}

static const struct design designs[] = {
        { "scheduler", sched_create, sched_destroy, sched_push, sched_next, sched_done, sched_rechecks },
        { "reference", ref_create, ref_destroy, ref_push_, ref_next_, ref_done_, NULL },
};

/* ---- shapes --------------------------------------------------------------- */

struct shape {
        const char *name;
        char **paths;
        size_t n_paths;
        size_t (*path_of)(const struct shape *sh, size_t i);
        size_t lag_every, lag; /* every lag_every-th event arrives lag events late (0: none) */
};

static size_t round_robin(const struct shape *sh, size_t i)
{
        return i % sh->n_paths;
}

static size_t two_each(const struct shape *sh, size_t i)
{
        return (i / 2) % sh->n_paths;
}

/* A fixed pseudo-random sequence (the same in every run). */
static size_t scattered(const struct shape *sh, size_t i)
{
        uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL;
        x ^= x >> 31;
        return (size_t)((x * 0xBF58476D1CE4E5B9ULL) >> 33) % sh->n_paths;
}

/* Path 0 (the parent) every 100th event, its children in turn otherwise. */
static size_t fan(const struct shape *sh, size_t i)
{
        return i % 100 == 0 ? 0 : 1 + i % (sh->n_paths - 1);
}

static char **flat_paths(size_t n, const char *prefix)
{
        char **p = calloc(n, sizeof(*p));

        if (!p)
                abort();
        for (size_t i = 0; i < n; i++)
                if (asprintf(&p[i], "%s%zu", prefix, i) < 0)
                        abort();
        return p;
}

/* A usb tree under one controller: node i's parent is node (i - 1) / 3, as in a heap. */
static char **tree_paths(size_t n)
{
        char **p = calloc(n, sizeof(*p));

        if (!p)
                abort();
        for (size_t i = 0; i < n; i++)
                if (i == 0 ? asprintf(&p[i], "/devices/pci0000:00/0000:00:14.0/usb1") < 0
                           : asprintf(&p[i], "%s/1-%zu", p[(i - 1) / 3], i) < 0)
                        abort();
        return p;
}

static char **fan_paths(size_t n)
{
        char **p = flat_paths(n, "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.");

        free(p[0]);
        if (asprintf(&p[0], "/devices/pci0000:00/0000:00:14.0/usb1/1-1") < 0)
                abort();
        return p;
}

static void free_paths(char **p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(p[i]);
        free(p);
}

/* Events in arrival order: SEQNUM i + 1, but every lag_every-th moved lag places later. */
static struct uevent *make_events(const struct shape *sh, size_t n)
{
        struct uevent *evs = calloc(n, sizeof(*evs));
        uint64_t *seq = calloc(n, sizeof(*seq));

        if (!evs || !seq)
                abort();
        for (size_t i = 0; i < n; i++)
                seq[i] = i + 1;
        for (size_t i = 0; sh->lag > 0 && i + sh->lag < n; i += sh->lag_every) {
                uint64_t x = seq[i];
                memmove(&seq[i], &seq[i + 1], sh->lag * sizeof(*seq));
                seq[i + sh->lag] = x;
        }
        for (size_t i = 0; i < n; i++) {
                const char *path = sh->paths[sh->path_of(sh, seq[i] - 1)];
                evs[i].seqnum = seq[i];
                evs[i].action = "change";
                evs[i].subsystem = "usb";
                evs[i].devpath = path;
                evs[i].devpath_len = (uint16_t)strlen(path);
        }
        free(seq);
        return evs;
}

/* ---- runs ----------------------------------------------------------------- */

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct runner {
        const struct design *d;
        void *s;
        struct uevent **ring; /* running events, in the order they started */
        size_t head, n_run, max_running;
        uint64_t start;
};

static bool over_budget(const struct runner *r)
{
        return now_ns() - r->start > BUDGET_NS;
}

static void start_all(struct runner *r)
{
        struct uevent *ev;

        while (r->n_run < r->max_running && !over_budget(r) && (ev = r->d->next(r->s)))
                r->ring[(r->head + r->n_run++) % r->max_running] = ev;
}

static void finish_oldest(struct runner *r)
{
        if (r->n_run == 0)
                return;
        r->d->done(r->s, r->ring[r->head]);
        r->head = (r->head + 1) % r->max_running;
        r->n_run--;
}

/* One repetition: fill the window, then time each step into @t, and what it
 * looked at again into @w.  Return: steps done. */
static size_t run_once(const struct design *d, const struct shape *sh, enum ordering mode, unsigned max_running,
                       size_t steps, uint64_t *t, uint64_t *w)
{
        size_t window = HP_QUEUE_WINDOW, n = 2 * window + steps, i;
        struct uevent *evs = make_events(sh, n);
        struct runner r = { .d = d, .max_running = max_running, .start = now_ns() };

        r.ring = calloc(max_running, sizeof(*r.ring));
        r.s = d->create(mode, max_running, n);
        if (!r.ring || !r.s)
                abort();
        for (i = 0; i < window; i++)
                if (d->push(r.s, &evs[i]) < 0)
                        abort();
        start_all(&r);
        for (i = 0; i < window + steps && !over_budget(&r); i++) {
                uint64_t t0 = now_ns(), w0 = d->rechecks ? d->rechecks(r.s) : 0;
                finish_oldest(&r);
                if (d->push(r.s, &evs[window + i]) < 0)
                        abort();
                start_all(&r);
                if (i >= window) {
                        t[i - window] = now_ns() - t0;
                        w[i - window] = d->rechecks ? d->rechecks(r.s) - w0 : 0;
                }
        }
        i = i > window ? i - window : 0;
        d->destroy(r.s);
        free(r.ring);
        free(evs);
        return i;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

struct figures {
        double median, worst; /* us */
        uint64_t woke;        /* events looked at again in the worst step */
        double worst_each;    /* us: the worst step's time over the events it handled (1 + woke) */
        bool cut;             /* over budget: over the steps done */
};

/* Median and worst over the steps of the least time per step over the repetitions. */
static void measure(const struct design *d, const struct shape *sh, enum ordering mode, unsigned max_running,
                    size_t steps, struct figures *f)
{
        uint64_t *best = malloc(steps * sizeof(*best)), *t = malloc(steps * sizeof(*t));
        uint64_t *w = malloc(steps * sizeof(*w));
        size_t done = steps, worst = 0;

        if (!best || !t || !w)
                abort();
        for (size_t i = 0; i < steps; i++)
                best[i] = UINT64_MAX;
        for (int rep = 0; rep < REPS && done == steps; rep++) {
                done = run_once(d, sh, mode, max_running, steps, t, w);
                for (size_t i = 0; i < done; i++)
                        best[i] = MIN(best[i], t[i]);
        }
        for (size_t i = 0; i < done; i++)
                if (best[i] > best[worst])
                        worst = i;
        *f = (struct figures){ .median = -1, .woke = done ? w[worst] : 0, .cut = done < steps };
        for (size_t i = 0; i < done; i++)
                f->worst_each = MAX(f->worst_each, (double)best[i] / 1000.0 / (double)(1 + w[i]));
        if (done > 0) {
                f->worst = (double)best[worst] / 1000.0;
                qsort(best, done, sizeof(*best), cmp_u64);
                f->median = (double)best[done / 2] / 1000.0;
        }
        free(best);
        free(t);
        free(w);
}

static void run_shape(const struct shape *sh, enum ordering mode, unsigned max_running, size_t steps)
{
        printf("%-12s %-8s %5u", sh->name, ordering_to_string(mode), max_running);
        for (size_t k = 0; k < ELEMENTSOF(designs); k++) {
                struct figures f;

                measure(&designs[k], sh, mode, max_running, steps, &f);
                if (f.median < 0)
                        printf(" | %-28s", "   (over budget)");
                else if (designs[k].rechecks)
                        printf(" | %6.2f %8.2f%c %4" PRIu64 " %6.2f", f.median, f.worst, f.cut ? '*' : ' ', f.woke,
                               f.worst_each);
                else
                        printf(" | %6.2f %8.2f%c %4s %6.2f", f.median, f.worst, f.cut ? '*' : ' ', "-", f.worst_each);
        }
        printf("\n");
        fflush(stdout);
}

int main(int argc, char **argv)
{
        size_t steps = argc > 1 ? strtoul(argv[1], NULL, 10) : 2048;
        const char *only = argc > 2 ? argv[2] : NULL;
        struct shape shapes[] = {
                { "1 device", flat_paths(1, "/devices/virtual/net/veth"), 1, round_robin, 0, 0 },
                { "3 devices", flat_paths(3, "/devices/virtual/net/veth"), 3, round_robin, 0, 0 },
                { "100 devices", flat_paths(100, "/devices/virtual/net/veth"), 100, round_robin, 0, 0 },
                { "1000 devices", flat_paths(1000, "/devices/virtual/net/veth"), 1000, round_robin, 0, 0 },
                { "tree 1000", tree_paths(1000), 1000, scattered, 0, 0 },
                { "pairs", flat_paths(HP_QUEUE_WINDOW, "/devices/virtual/net/veth"), HP_QUEUE_WINDOW, two_each, 0,
                  0 },
                { "fan 1+999", fan_paths(1000), 1000, fan, 0, 0 },
                { "late 100", flat_paths(100, "/devices/virtual/net/veth"), 100, round_robin, 8, 1 },
                { "lag 2048", flat_paths(100, "/devices/virtual/net/veth"), 100, round_robin, 64, 2048 },
                { "lag pairs", flat_paths(HP_QUEUE_WINDOW, "/devices/virtual/net/veth"), HP_QUEUE_WINDOW, two_each,
                  64, 2048 },
        };
        static const struct {
                enum ordering mode;
                unsigned max_running;
        } modes[] = { { ORDERING_DEVPATH, 20 }, { ORDERING_DEVPATH, HP_CHILDREN_MAX }, { ORDERING_STRICT, 20 } };

        if (steps == 0)
                return 64;
        printf("per event, us: median and worst of %zu steps at a window of %d (least of %d runs; '*': cut at %llu s);\n"
               "woke: events looked at again in the worst step; each: the worst of a step's time over 1 + woke\n",
               steps, HP_QUEUE_WINDOW, REPS, BUDGET_NS / 1000000000ULL);
        printf("%-12s %-8s %5s", "shape", "ordering", "slots");
        for (size_t k = 0; k < ELEMENTSOF(designs); k++)
                printf(" | %-28s", designs[k].name);
        printf("\n%-27s", "");
        for (size_t k = 0; k < ELEMENTSOF(designs); k++)
                printf(" | %6s %8s  %4s %6s", "median", "worst", "woke", "each");
        printf("\n");
        for (size_t m = 0; m < ELEMENTSOF(modes); m++)
                for (size_t i = 0; i < ELEMENTSOF(shapes); i++)
                        if (!only || strstr(shapes[i].name, only))
                                run_shape(&shapes[i], modes[m].mode, modes[m].max_running, steps);
        for (size_t i = 0; i < ELEMENTSOF(shapes); i++)
                free_paths(shapes[i].paths, shapes[i].n_paths);
        return 0;
}
