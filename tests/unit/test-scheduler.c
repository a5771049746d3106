/* SPDX-License-Identifier: MIT */
/*
 * The dependency scheduler against its reference model (scheduler-ref.h):
 * table-driven cases, each run through both and checked against the
 * expected answers, then long random runs comparing every answer of the
 * two.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "scheduler-ref.h"
#include "pipeline/scheduler.h"
#include "test.h"
#include "uevent/uevent.h"

/* An event with room for its strings. */
struct tev {
        struct uevent ev;
        char path[48];
        char old[48];
};

static struct uevent *tev_new(uint64_t seq, const char *path, const char *old)
{
        struct tev *t = calloc(1, sizeof(*t));

        check(t);
        check(strlen(path) < sizeof(t->path) && (!old || strlen(old) < sizeof(t->old)));
        strcpy(t->path, path);
        t->ev.seqnum = seq;
        t->ev.action = "change";
        t->ev.subsystem = "test";
        t->ev.devpath = t->path;
        t->ev.devpath_len = (uint16_t)strlen(path);
        if (old) {
                strcpy(t->old, old);
                t->ev.devpath_old = t->old;
        }
        return &t->ev;
}

static uint64_t seq_or_0(const struct uevent *ev)
{
        return ev ? ev->seqnum : 0;
}

/* ---- table-driven cases -------------------------------------------------- */

enum op_kind {
        OP_END,
        OP_PUSH,      /* push event .seq; expect success */
        OP_PUSH_FULL, /* push event .seq; expect -ENOSPC */
        OP_NEXT,      /* expect scheduler_next() to give .want (0: none) */
        OP_DONE,      /* event .seq finished */
        OP_BLOCKER,   /* expect the blocker of .seq to be .want (0: none) */
        OP_POP,       /* expect scheduler_pop_queued() to give .want (0: none) */
        OP_HELD,      /* expect .seq queued and .want running */
};

struct op {
        enum op_kind op;
        uint64_t seq;
        uint64_t want;
};

struct ev_spec {
        uint64_t seq;
        const char *path;
        const char *old;
};

struct sched_case {
        const char *name;
        enum ordering mode;
        unsigned max_running;
        size_t max_held;
        struct ev_spec ev[8];
        struct op ops[24];
};

#define PUSH(s) { OP_PUSH, s, 0 }
#define FULL(s) { OP_PUSH_FULL, s, 0 }
#define NEXT(w) { OP_NEXT, 0, w }
#define DONE(s) { OP_DONE, s, 0 }
#define BLOCKER(s, w) { OP_BLOCKER, s, w }
#define POP(w) { OP_POP, 0, w }
#define HELD(q, r) { OP_HELD, q, r }

static const struct sched_case cases[] = {
        { "parent add then child add", ORDERING_DEVPATH, 8, 100,
          { { 1, "/d/p", NULL }, { 2, "/d/p/c", NULL } },
          { PUSH(1), PUSH(2), NEXT(1), NEXT(0), BLOCKER(2, 1), DONE(1), BLOCKER(2, 0), NEXT(2), DONE(2),
            HELD(0, 0) } },
        { "child remove then parent remove", ORDERING_DEVPATH, 8, 100,
          { { 1, "/d/p/c", NULL }, { 2, "/d/p", NULL } },
          { PUSH(1), PUSH(2), NEXT(1), NEXT(0), BLOCKER(2, 1), DONE(1), NEXT(2), DONE(2) } },
        { "siblings run in parallel, their parent waits for both", ORDERING_DEVPATH, 8, 100,
          { { 1, "/d/p/a", NULL }, { 2, "/d/p/b", NULL }, { 3, "/d/p", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), NEXT(1), NEXT(2), NEXT(0), BLOCKER(3, 1), DONE(1), BLOCKER(3, 2),
            NEXT(0), DONE(2), NEXT(3), DONE(3) } },
        { "/a/b and /a/bc are unrelated", ORDERING_DEVPATH, 8, 100,
          { { 1, "/a/b", NULL }, { 2, "/a/bc", NULL }, { 3, "/a/b/c", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), BLOCKER(2, 0), BLOCKER(3, 1), NEXT(1), NEXT(2), NEXT(0), DONE(1),
            NEXT(3) } },
        { "events on one path run one by one, in order", ORDERING_DEVPATH, 8, 100,
          { { 1, "/x", NULL }, { 2, "/x", NULL }, { 3, "/x", NULL }, { 4, "/y", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), PUSH(4), NEXT(1), NEXT(4), NEXT(0), BLOCKER(3, 1), DONE(1),
            BLOCKER(3, 2), NEXT(2), NEXT(0), DONE(2), NEXT(3) } },
        { "move waits for an event on its DEVPATH_OLD", ORDERING_DEVPATH, 8, 100,
          { { 1, "/n/old", NULL }, { 2, "/n/new", "/n/old" } },
          { PUSH(1), PUSH(2), BLOCKER(2, 1), NEXT(1), NEXT(0), DONE(1), NEXT(2) } },
        { "an event on the old name waits for the move", ORDERING_DEVPATH, 8, 100,
          { { 1, "/n/new", "/n/old" }, { 2, "/n/old", NULL }, { 3, "/n/old/q", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), BLOCKER(2, 1), BLOCKER(3, 1), NEXT(1), NEXT(0), DONE(1), NEXT(2),
            NEXT(0) } },
        { "move waits for a child of its DEVPATH_OLD", ORDERING_DEVPATH, 8, 100,
          { { 1, "/n/old/q", NULL }, { 2, "/n/new", "/n/old" }, { 3, "/n/oldx", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), BLOCKER(2, 1), BLOCKER(3, 0), NEXT(1), NEXT(3), NEXT(0), DONE(1),
            NEXT(2) } },
        { "two moves from one DEVPATH_OLD: old is not compared with old", ORDERING_DEVPATH, 8, 100,
          { { 1, "/m/a", "/m/old" }, { 2, "/m/b", "/m/old" } },
          { PUSH(1), PUSH(2), BLOCKER(2, 0), NEXT(1), NEXT(2) } },
        { "strict: one at a time in SEQNUM order", ORDERING_STRICT, 8, 100,
          { { 1, "/a", NULL }, { 2, "/b", NULL }, { 3, "/c", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), BLOCKER(2, 1), BLOCKER(3, 1), NEXT(1), NEXT(0), BLOCKER(2, 1),
            DONE(1), NEXT(2), NEXT(0), DONE(2), NEXT(3) } },
        { "none: related events run together, up to max_running", ORDERING_NONE, 2, 100,
          { { 1, "/a", NULL }, { 2, "/a/b", NULL }, { 3, "/a", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), BLOCKER(2, 0), NEXT(1), NEXT(2), NEXT(0), DONE(1), NEXT(3) } },
        { "devpath: max_running bounds unrelated events", ORDERING_DEVPATH, 2, 100,
          { { 1, "/a", NULL }, { 2, "/b", NULL }, { 3, "/c", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), NEXT(1), NEXT(2), NEXT(0), BLOCKER(3, 0), DONE(2), NEXT(3),
            HELD(0, 2) } },
        { "max_held: -ENOSPC changes nothing", ORDERING_DEVPATH, 8, 2,
          { { 1, "/a", NULL }, { 2, "/a", NULL }, { 3, "/b", NULL } },
          { PUSH(1), PUSH(2), FULL(3), HELD(2, 0), NEXT(1), FULL(3), HELD(1, 1), NEXT(0), DONE(1), PUSH(3),
            NEXT(2), NEXT(3) } },
        { "late push blocks a later related event that has not started", ORDERING_DEVPATH, 8, 100,
          { { 10, "/x", NULL }, { 12, "/a/b", NULL }, { 11, "/a", NULL } },
          { PUSH(10), PUSH(12), PUSH(11), BLOCKER(12, 11), BLOCKER(11, 0), NEXT(10), NEXT(11), NEXT(0),
            DONE(11), NEXT(12) } },
        { "late push does not wait for a later running event", ORDERING_DEVPATH, 8, 100,
          { { 20, "/a", NULL }, { 15, "/a/b", NULL }, { 21, "/a/b/c", NULL } },
          { PUSH(20), NEXT(20), PUSH(15), BLOCKER(15, 0), PUSH(21), BLOCKER(21, 15), NEXT(15), NEXT(0),
            DONE(15), BLOCKER(21, 20), NEXT(0), DONE(20), NEXT(21) } },
        { "late push on a busy path goes before the later ones", ORDERING_DEVPATH, 8, 100,
          { { 5, "/p", NULL }, { 7, "/p", NULL }, { 8, "/p", NULL }, { 6, "/p", NULL } },
          { PUSH(5), PUSH(7), PUSH(8), PUSH(6), BLOCKER(7, 5), NEXT(5), NEXT(0), DONE(5), NEXT(6), NEXT(0),
            DONE(6), NEXT(7), DONE(7), NEXT(8) } },
        { "pop_queued: queued events lowest first, running ones stay", ORDERING_DEVPATH, 8, 100,
          { { 1, "/a", NULL }, { 3, "/c", NULL }, { 2, "/a/b", NULL } },
          { PUSH(1), PUSH(3), PUSH(2), NEXT(1), HELD(2, 1), POP(2), POP(3), POP(0), HELD(0, 1), DONE(1),
            HELD(0, 0), NEXT(0) } },
        { "pop_queued wakes what waited for the popped event", ORDERING_DEVPATH, 8, 100,
          { { 1, "/a", NULL }, { 2, "/a", NULL } },
          { PUSH(1), PUSH(2), POP(1), NEXT(2), DONE(2) } },
        { "blocker is the earliest of several", ORDERING_DEVPATH, 8, 100,
          { { 1, "/a/b/c", NULL }, { 2, "/a/x", NULL }, { 3, "/a", NULL }, { 4, "/a/b", NULL } },
          { PUSH(1), PUSH(2), PUSH(3), PUSH(4), BLOCKER(3, 1), BLOCKER(4, 1), BLOCKER(2, 0), NEXT(1),
            NEXT(2), DONE(1), BLOCKER(3, 2), BLOCKER(4, 3), NEXT(0), DONE(2), NEXT(3), NEXT(0), DONE(3),
            NEXT(4) } },
};

static struct uevent *case_event(struct uevent **evs, const struct sched_case *c, uint64_t seq)
{
        for (size_t i = 0; i < ELEMENTSOF(c->ev) && c->ev[i].path; i++)
                if (c->ev[i].seq == seq)
                        return evs[i];
        fprintf(stderr, "%s: no event %" PRIu64 "\n", c->name, seq);
        abort();
}

/* One step through both schedulers; each must give the expected answer. */
static void run_op(struct scheduler *s, struct ref_sched *r, struct uevent *ev, const struct op *o)
{
        switch (o->op) {
        case OP_PUSH:
        case OP_PUSH_FULL:
                check_int(ref_push(r, ev), o->op == OP_PUSH ? 0 : -ENOSPC);
                check_int(scheduler_push(s, ev), o->op == OP_PUSH ? 0 : -ENOSPC);
                break;
        case OP_NEXT:
                check_int(seq_or_0(ref_next(r)), o->want);
                check_int(seq_or_0(scheduler_next(s)), o->want);
                break;
        case OP_DONE:
                ref_done(r, ev);
                scheduler_done(s, ev);
                break;
        case OP_BLOCKER:
                check_int(seq_or_0(ref_blocker(r, ev)), o->want);
                check_int(seq_or_0(scheduler_blocker(s, ev)), o->want);
                break;
        case OP_POP:
                check_int(seq_or_0(ref_pop_queued(r)), o->want);
                check_int(seq_or_0(scheduler_pop_queued(s)), o->want);
                break;
        case OP_HELD:
                check_int(r->n_queued, o->seq);
                check_int(r->n_running, o->want);
                check_int(scheduler_queued(s), o->seq);
                check_int(scheduler_running(s), o->want);
                break;
        case OP_END:
                break;
        }
}

static void test_cases(void)
{
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const struct sched_case *c = &cases[i];
                struct uevent *evs[ELEMENTSOF(c->ev)] = { NULL };
                struct scheduler *s;
                struct ref_sched *r = ref_new(c->mode, c->max_running, c->max_held);

                fprintf(stderr, "   case: %s\n", c->name);
                check_int(scheduler_new(c->mode, c->max_running, c->max_held, &s), 0);
                for (size_t j = 0; j < ELEMENTSOF(c->ev) && c->ev[j].path; j++)
                        evs[j] = tev_new(c->ev[j].seq, c->ev[j].path, c->ev[j].old);
                for (const struct op *o = c->ops; o->op != OP_END; o++)
                        run_op(s, r, o->seq ? case_event(evs, c, o->seq) : NULL, o);
                scheduler_free(s);
                ref_free(r);
                for (size_t j = 0; j < ELEMENTSOF(evs); j++)
                        free(evs[j]);
        }
}

static void test_interface(void)
{
        struct scheduler *s;
        struct uevent *a = tev_new(1, "/a", NULL), *b = tev_new(2, "/a", NULL);

        check_int(scheduler_new(ORDERING_DEVPATH, 0, 10, &s), -EINVAL);
        check_int(scheduler_new(ORDERING_DEVPATH, 1, 0, &s), -EINVAL);
        check_str(ordering_to_string(ORDERING_STRICT), "strict");
        check_int(ordering_from_string("none"), ORDERING_NONE);
        check_int(ordering_from_string("devpath"), ORDERING_DEVPATH);
        check_int(ordering_from_string("fifo"), -EINVAL);

        /* Changing the mode keeps held events; done on a queued event is ignored. */
        check_int(scheduler_new(ORDERING_STRICT, 4, 10, &s), 0);
        check_int(scheduler_push(s, a), 0);
        check_int(scheduler_push(s, b), 0);
        scheduler_done(s, b);
        check_int(scheduler_held(s), 2);
        scheduler_set_mode(s, ORDERING_NONE, 0);
        check(scheduler_next(s) == a);
        check(scheduler_next(s) == NULL); /* max_running 0 meant 1 */
        scheduler_set_mode(s, ORDERING_NONE, 2);
        check(scheduler_next(s) == b);
        /* Freeing with events held gives them back untouched. */
        scheduler_free(s);
        check(a->sched_data == NULL && b->sched_data == NULL);
        check(scheduler_free(NULL) == NULL);
        free(a);
        free(b);
}

/* What hotplugctl wait asks: the lowest event held on exactly one path, as DEVPATH or DEVPATH_OLD. */
static void test_lowest_held_on(void)
{
        struct scheduler *s;
        struct uevent *a = tev_new(3, "/d/a", NULL), *child = tev_new(4, "/d/a/q", NULL);
        struct uevent *mv = tev_new(6, "/d/b", "/d/c"), *a2 = tev_new(7, "/d/a", NULL);

        check_int(scheduler_new(ORDERING_DEVPATH, 4, 10, &s), 0);
        check_int(scheduler_lowest_held_on(s, "/d/a"), 0);
        check_int(scheduler_push(s, a), 0);
        check_int(scheduler_push(s, child), 0);
        check_int(scheduler_push(s, mv), 0);
        check_int(scheduler_push(s, a2), 0);
        check_int(scheduler_lowest_held_on(s, "/d/a"), 3);
        check_int(scheduler_lowest_held_on(s, "/d/a/q"), 4);
        check_int(scheduler_lowest_held_on(s, "/d"), 0);      /* an ancestor is not the device */
        check_int(scheduler_lowest_held_on(s, "/d/b"), 6);
        check_int(scheduler_lowest_held_on(s, "/d/c"), 6);    /* renamed away from there */
        /* Running counts as held; done does not. */
        check(scheduler_next(s) == a);
        check_int(scheduler_lowest_held_on(s, "/d/a"), 3);
        scheduler_done(s, a);
        check_int(scheduler_lowest_held_on(s, "/d/a"), 7);
        while (scheduler_pop_queued(s))
                ;
        check_int(scheduler_lowest_held_on(s, "/d/a"), 0);
        check_int(scheduler_lowest_held_on(s, "/d/c"), 0);
        scheduler_free(s);
        free(a);
        free(child);
        free(mv);
        free(a2);
}

/* ---- random runs against the model --------------------------------------- */

struct run {
        uint64_t rng;
        struct scheduler *s;
        struct ref_sched *r;
        struct uevent *running[64];
        size_t n_running;
        uint64_t next_seq;
        uint64_t gaps[256]; /* unused SEQNUMs below next_seq, for late pushes */
        size_t n_gaps;
        size_t steps_pushed, late_pushed, nexts, blocked_checks;
};

static uint32_t rnd(struct run *u, uint32_t n)
{
        /* xorshift64*: deterministic per seed. */
        u->rng ^= u->rng >> 12;
        u->rng ^= u->rng << 25;
        u->rng ^= u->rng >> 27;
        return (uint32_t)((u->rng * 0x2545F4914F6CDD1DULL) >> 33) % n;
}

/*
 * A random path in a tree of 120 (components "a", "b", "bc"; depth 1 to 4,
 * shallow ones likelier): related pairs are common, and enough paths are
 * held at once that the index's subtree aggregates matter.
 */
static const char *random_path(struct run *u, char *buf)
{
        static const char *const comp[] = { "a", "b", "bc" };
        static const uint32_t depth_cdf[] = { 30, 60, 85, 100 };
        uint32_t x = rnd(u, 100), depth = 1;

        while (x >= depth_cdf[depth - 1])
                depth++;
        buf[0] = '\0';
        for (uint32_t i = 0; i < depth; i++) {
                strcat(buf, "/");
                strcat(buf, comp[rnd(u, ELEMENTSOF(comp))]);
        }
        return buf;
}

static uint64_t pick_seq(struct run *u)
{
        uint64_t seq;

        if (u->n_gaps > 0 && rnd(u, 8) == 0) {
                size_t i = rnd(u, (uint32_t)u->n_gaps);
                seq = u->gaps[i];
                u->gaps[i] = u->gaps[--u->n_gaps];
                u->late_pushed++;
                return seq;
        }
        seq = u->next_seq++;
        /* Leave a hole now and then, to be filled by a late push. */
        if (rnd(u, 6) == 0 && u->n_gaps < ELEMENTSOF(u->gaps))
                u->gaps[u->n_gaps++] = u->next_seq++;
        return seq;
}

static void random_push(struct run *u)
{
        uint64_t seq = pick_seq(u);
        char path[16], old[16];
        struct uevent *ev = tev_new(seq, random_path(u, path), rnd(u, 8) == 0 ? random_path(u, old) : NULL);
        int r = ref_push(u->r, ev);

        check_int(scheduler_push(u->s, ev), r);
        if (r < 0) {
                check_int(r, -ENOSPC);
                free(ev);
                /* Give the SEQNUM back, so that it may come late. */
                if (u->n_gaps < ELEMENTSOF(u->gaps))
                        u->gaps[u->n_gaps++] = seq;
        } else {
                u->steps_pushed++;
        }
}

static void random_next(struct run *u)
{
        struct uevent *want = ref_next(u->r), *got = scheduler_next(u->s);

        if (want != got)
                fprintf(stderr, "next: model %" PRIu64 ", scheduler %" PRIu64 "\n", seq_or_0(want),
                        seq_or_0(got));
        check(want == got);
        if (got) {
                check(u->n_running < ELEMENTSOF(u->running));
                u->running[u->n_running++] = got;
                u->nexts++;
        }
}

static void random_done(struct run *u)
{
        size_t i;
        struct uevent *ev;

        if (u->n_running == 0)
                return;
        i = rnd(u, (uint32_t)u->n_running);
        ev = u->running[i];
        u->running[i] = u->running[--u->n_running];
        ref_done(u->r, ev);
        scheduler_done(u->s, ev);
        check(ev->sched_data == NULL && ev->owner_data == NULL);
        free(ev);
}

static void random_pop(struct run *u)
{
        struct uevent *want = ref_pop_queued(u->r), *got = scheduler_pop_queued(u->s);

        check(want == got);
        free(got);
}

/* Every queued event: the same blocker in both. */
static void compare_blockers(struct run *u)
{
        for (const struct ref_item *it = u->r->head; it; it = it->next) {
                if (it->running)
                        continue;
                const struct uevent *want = ref_blocker(u->r, it->ev), *got = scheduler_blocker(u->s, it->ev);
                if (want != got)
                        fprintf(stderr, "blocker of %" PRIu64 ": model %" PRIu64 ", scheduler %" PRIu64 "\n",
                                it->ev->seqnum, seq_or_0(want), seq_or_0(got));
                check(want == got);
                u->blocked_checks += want != NULL;
        }
}

static void random_mode(struct run *u)
{
        /* Mostly devpath, where the index does the work. */
        static const enum ordering modes[] = { ORDERING_DEVPATH, ORDERING_DEVPATH, ORDERING_STRICT, ORDERING_NONE };
        enum ordering m = modes[rnd(u, ELEMENTSOF(modes))];
        unsigned max_running = 1 + rnd(u, 6);

        ref_set_mode(u->r, m, max_running);
        scheduler_set_mode(u->s, m, max_running);
}

static void random_step(struct run *u)
{
        uint32_t x = rnd(u, 100);

        if (x < 45)
                random_push(u);
        else if (x < 80)
                random_done(u);
        else if (x < 82)
                random_pop(u);
        else if (x < 83)
                random_mode(u);
        else
                compare_blockers(u);
        /* Start a random number of events, so the queue gets deep at times. */
        for (uint32_t n = rnd(u, 4); n > 0; n--)
                random_next(u);
        check_int(scheduler_queued(u->s), u->r->n_queued);
        check_int(scheduler_running(u->s), u->r->n_running);
}

static void random_run(uint64_t seed, unsigned steps)
{
        struct run u = { .rng = seed * 0x9E3779B97F4A7C15ULL + 1, .next_seq = 1 };
        struct uevent *ev;

        u.r = ref_new(ORDERING_DEVPATH, 1 + rnd(&u, 4), 8 + rnd(&u, 60));
        check_int(scheduler_new(u.r->mode, u.r->max_running, u.r->max_held, &u.s), 0);
        for (unsigned i = 0; i < steps; i++)
                random_step(&u);
        compare_blockers(&u);
        /* Drain: pop the queued ones, finish the running ones. */
        while ((ev = ref_pop_queued(u.r))) {
                check(scheduler_pop_queued(u.s) == ev);
                free(ev);
        }
        check(scheduler_pop_queued(u.s) == NULL);
        while (u.n_running > 0)
                random_done(&u);
        check_int(scheduler_held(u.s), 0);
        fprintf(stderr, "   seed %" PRIu64 ": %zu pushed (%zu late), %zu started, %zu blockers compared\n", seed,
                u.steps_pushed, u.late_pushed, u.nexts, u.blocked_checks);
        check(u.late_pushed > 0 && u.nexts > 0 && u.blocked_checks > 0);
        scheduler_free(u.s);
        ref_free(u.r);
}

static void test_random(void)
{
        for (uint64_t seed = 1; seed <= 24; seed++)
                random_run(seed, 5000);
}

/*
 * Ten thousand events on one path, then their parent: strictly one after
 * another, and each finish wakes only the next one (not all that wait).
 */
static void test_long_chain(void)
{
        enum { N = 10000 };
        struct scheduler *s;
        struct uevent **evs = calloc(N + 1, sizeof(*evs));
        struct uevent *ev;

        check(evs);
        check_int(scheduler_new(ORDERING_DEVPATH, 4, N + 1, &s), 0);
        for (unsigned i = 0; i < N; i++) {
                evs[i] = tev_new(i + 1, "/devices/virtual/net/lo", NULL);
                check_int(scheduler_push(s, evs[i]), 0);
        }
        evs[N] = tev_new(N + 1, "/devices/virtual/net", NULL);
        check_int(scheduler_push(s, evs[N]), 0);
        check(scheduler_blocker(s, evs[N]) == evs[0]);
        for (unsigned i = 0; i <= N; i++) {
                ev = scheduler_next(s);
                check(ev == evs[i]);
                check(scheduler_next(s) == NULL);
                scheduler_done(s, ev);
                free(ev);
        }
        check_int(scheduler_held(s), 0);
        check_int(scheduler_rechecks(s), N);
        scheduler_free(s);
        free(evs);
}

/* Start the next event, which must be @want, and check what it waited for. */
static struct uevent *start_waited(struct scheduler *s, struct uevent *want, uint64_t blocker, const char *path,
                                   unsigned slot)
{
        struct scheduler_wait w;
        struct uevent *ev = scheduler_next(s);

        check(ev == want);
        scheduler_waited(s, ev, &w);
        check_int(w.blocker, blocker);
        if (path)
                check(w.blocker_devpath && strcmp(w.blocker_devpath, path) == 0);
        else
                check(!w.blocker_devpath);
        check_int(w.slot_limit, slot);
        return ev;
}

static void finish(struct scheduler *s, struct uevent *ev)
{
        scheduler_done(s, ev);
        free(ev);
}

/*
 * What a started event waited for is the last of its blockers to finish, not
 * the first event of its device's chain; a wait for a slot names the limit.
 */
static void test_waited(void)
{
        const char *dev = "/devices/virtual/net/a", *other = "/devices/virtual/net/b";
        struct uevent *e[10];
        struct scheduler *s;

        /* A chain on one device: 2 waited for 1, 3 for 2, 4 for 3, 9 for 4. */
        check_int(scheduler_new(ORDERING_DEVPATH, 8, 100, &s), 0);
        for (unsigned i = 1; i <= 4; i++)
                check_int(scheduler_push(s, e[i] = tev_new(i, dev, NULL)), 0);
        check_int(scheduler_push(s, e[5] = tev_new(5, other, NULL)), 0);
        check_int(scheduler_push(s, e[9] = tev_new(9, dev, NULL)), 0);
        check(scheduler_blocker(s, e[3]) == e[1]); /* what it waits for now: still the first */
        start_waited(s, e[1], 0, NULL, 0);
        start_waited(s, e[5], 0, NULL, 0);
        check(scheduler_next(s) == NULL);
        finish(s, e[1]);
        start_waited(s, e[2], 1, dev, 0);
        finish(s, e[5]);
        finish(s, e[2]);
        start_waited(s, e[3], 2, dev, 0);
        finish(s, e[3]);
        start_waited(s, e[4], 3, dev, 0);
        finish(s, e[4]);
        start_waited(s, e[9], 4, dev, 0);
        finish(s, e[9]);
        scheduler_free(s);

        /* A parent's remove waits for both children: it names the one that finished last. */
        for (int order = 0; order < 2; order++) {
                check_int(scheduler_new(ORDERING_DEVPATH, 8, 100, &s), 0);
                check_int(scheduler_push(s, e[1] = tev_new(1, "/devices/p/c1", NULL)), 0);
                check_int(scheduler_push(s, e[2] = tev_new(2, "/devices/p/c2", NULL)), 0);
                check_int(scheduler_push(s, e[3] = tev_new(3, "/devices/p", NULL)), 0);
                start_waited(s, e[1], 0, NULL, 0);
                start_waited(s, e[2], 0, NULL, 0);
                finish(s, e[order ? 1 : 2]);
                check(scheduler_next(s) == NULL);
                finish(s, e[order ? 2 : 1]);
                start_waited(s, e[3], order ? 2 : 1, order ? "/devices/p/c2" : "/devices/p/c1", 0);
                finish(s, e[3]);
                scheduler_free(s);
        }

        /* One slot: an unrelated event waits for the slot, and a related one for both. */
        check_int(scheduler_new(ORDERING_DEVPATH, 1, 100, &s), 0);
        check_int(scheduler_push(s, e[1] = tev_new(1, dev, NULL)), 0);
        check_int(scheduler_push(s, e[2] = tev_new(2, other, NULL)), 0);
        check_int(scheduler_push(s, e[3] = tev_new(3, dev, NULL)), 0);
        start_waited(s, e[1], 0, NULL, 0);
        check(scheduler_next(s) == NULL);
        finish(s, e[1]);
        start_waited(s, e[2], 0, NULL, 1);
        check(scheduler_next(s) == NULL);
        finish(s, e[2]);
        start_waited(s, e[3], 1, dev, 1);
        finish(s, e[3]);
        scheduler_free(s);

        /* Strict: each waited for the one that ran before it; ordering=none: for none. */
        check_int(scheduler_new(ORDERING_STRICT, 8, 100, &s), 0);
        check_int(scheduler_push(s, e[1] = tev_new(1, dev, NULL)), 0);
        check_int(scheduler_push(s, e[2] = tev_new(2, other, NULL)), 0);
        start_waited(s, e[1], 0, NULL, 0);
        check(scheduler_next(s) == NULL);
        finish(s, e[1]);
        start_waited(s, e[2], 1, dev, 0);
        finish(s, e[2]);
        scheduler_free(s);
        check_int(scheduler_new(ORDERING_NONE, 1, 100, &s), 0);
        check_int(scheduler_push(s, e[1] = tev_new(1, dev, NULL)), 0);
        check_int(scheduler_push(s, e[2] = tev_new(2, dev, NULL)), 0);
        start_waited(s, e[1], 0, NULL, 0);
        check(scheduler_next(s) == NULL);
        finish(s, e[1]);
        start_waited(s, e[2], 0, NULL, 1);
        finish(s, e[2]);
        scheduler_free(s);
}

int main(void)
{
        run_test(test_waited);
        run_test(test_cases);
        run_test(test_interface);
        run_test(test_lowest_held_on);
        run_test(test_random);
        run_test(test_long_chain);
        return 0;
}
