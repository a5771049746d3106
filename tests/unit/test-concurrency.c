/* SPDX-License-Identifier: MIT */
/*
 * Adaptive concurrency against modelled machines: each model says how many
 * events per second the machine completes with L agents at once, and the
 * test feeds the controller the completions such a machine would produce
 * (optionally with noise), then checks where the limit went and what
 * throughput the run got compared with one agent at a time.
 */
#include <math.h>

#include "pipeline/concurrency.h"
#include "shared/bounds.h"
#include "test.h"

typedef double (*model_fn)(unsigned limit);

struct run {
        double seconds;         /* modelled time of the run */
        unsigned long events;
        unsigned final_limit;   /* the settled limit at the end */
        unsigned max_seen;
        unsigned long at[64];   /* completions at each limit (limits >= 63 share the last) */
};

/* A deterministic pseudo-random factor in [1 - noise, 1 + noise]. */
static double jitter(unsigned long *state, double noise)
{
        *state = *state * 6364136223846793005UL + 1442695040888963407UL;
        return 1.0 + noise * (((double)(*state >> 11) / (double)(1UL << 53)) * 2.0 - 1.0);
}

/*
 * Feed @events completions of a machine that runs @model; the limit in
 * force paces each one.  @par > 0: the events' dependencies let at most
 * @par run at once (events on @par devices, each device's in order), so a
 * higher limit leaves slots free with events blocked.
 */
static void simulate_par(struct concurrency *c, model_fn model, unsigned long events, double noise, unsigned par,
                         struct run *r)
{
        unsigned long seed = 42;
        double t = 1e6; /* microseconds */

        for (unsigned long i = 0; i < events; i++) {
                unsigned running = par && c->limit > par ? par : c->limit;

                t += 1e6 / (model(running) * jitter(&seed, noise));
                r->at[c->limit < 63 ? c->limit : 63]++;
                (void)concurrency_done(c, (usec_t)t);
                if (par && c->limit > par)
                        concurrency_idle(c, par, true);
                check(c->limit >= 1 && c->limit <= c->max);
                if (c->limit > r->max_seen)
                        r->max_seen = c->limit;
        }
        r->seconds += t / 1e6 - 1.0;
        r->events += events;
        r->final_limit = c->ref_limit; /* the settled limit, not a probe */
}

static void simulate(struct concurrency *c, model_fn model, unsigned long events, double noise, struct run *r)
{
        simulate_par(c, model, events, noise, 0, r);
}

static double throughput(const struct run *r)
{
        return (double)r->events / r->seconds;
}

/* Spawning is the bottleneck and parallel spawns contend: one at a time is fastest. */
static double spawn_bound(unsigned l)
{
        return 1000.0 / (1.0 + 0.12 * (l - 1));
}

/* Agents sleep: throughput grows with every agent. */
static double sleep_bound(unsigned l)
{
        return 50.0 * l;
}

/* Two cores, no contention: two at once is twice as fast, more adds nothing. */
static double two_cores(unsigned l)
{
        return l >= 2 ? 1900.0 : 1000.0;
}

/* A peak at 6. */
static double peaked(unsigned l)
{
        return l <= 6 ? 200.0 * l : 1200.0 - 60.0 * (l - 6);
}

static void test_spawn_bound_stays_at_one(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 0, 1);
        check_int(c.limit, 1);
        simulate(&c, spawn_bound, 20000, 0, &r);
        check_int(r.final_limit, 1);
        /* Probes cost little: within 2% of one at a time (strict's pace). */
        check(throughput(&r) >= 0.98 * spawn_bound(1));
        check(c.windows > 50);
}

static void test_spawn_bound_with_noise(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 0, 1);
        simulate(&c, spawn_bound, 20000, 0.10, &r);
        check(r.final_limit <= 2);
        check(throughput(&r) >= 0.95 * spawn_bound(1));
}

/* Three devices: at most three events can run at once, and one at a time is fastest. */
static void test_dependencies_cap_it(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 0, 1);
        simulate_par(&c, spawn_bound, 20000, 0.05, 3, &r);
        check(r.max_seen <= 4);
        check_int(r.final_limit, 1);
        check(throughput(&r) >= 0.97 * spawn_bound(1));

        /* Agents that sleep: the three devices run at once, the limit does not sit above them. */
        concurrency_init(&c, 20, 0, 1);
        memset(&r, 0, sizeof(r));
        simulate_par(&c, sleep_bound, 5000, 0.05, 3, &r);
        check_int(r.final_limit, 3);
        check(throughput(&r) >= 0.9 * sleep_bound(3));

        /* A probe above what can run ends at once; the settled limit stays. */
        concurrency_init(&c, 20, 0, 1);
        c.limit = 5;
        c.ref_limit = 2;
        concurrency_idle(&c, 2, true);
        check_int(c.limit, 2);
        check_int(c.ref_limit, 2);
        /* Without blocked events (the input is slow) nothing changes but the window. */
        c.limit = c.ref_limit = 6;
        concurrency_idle(&c, 2, false);
        check_int(c.limit, 6);
        concurrency_idle(&c, 4, true);
        check_int(c.limit, 4);
        check_int(c.ref_limit, 4);
}

static void test_stall_raises(void)
{
        struct concurrency c;

        concurrency_init(&c, 3, 0, 1);
        check(concurrency_stalled(&c));
        check_int(c.limit, 2);
        check(concurrency_stalled(&c));
        check_int(c.limit, 3);
        check(!concurrency_stalled(&c)); /* at max */
        check_int(c.stalls, 2);
        concurrency_init(&c, 3, 2, 1);
        check(!concurrency_stalled(&c)); /* fixed */
        check_int(c.limit, 2);
}

static void test_sleep_bound_climbs_to_max(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 0, 1);
        simulate(&c, sleep_bound, 600, 0, &r);
        /* 20, or 19: one fewer costing no more than half the gain is kept. */
        check(r.final_limit >= 19);
        /* Slow start: 1, 2, 4, 8, 16, 20 within a few hundred events. */
        simulate(&c, sleep_bound, 20000, 0.05, &r);
        check(r.final_limit >= 18);
        check(throughput(&r) >= 0.85 * sleep_bound(20));
}

static void test_two_cores_gets_the_speedup(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 0, 1);
        simulate(&c, two_cores, 20000, 0.05, &r);
        check(r.final_limit >= 2);
        check(throughput(&r) >= 1.6 * two_cores(1));
        /* Where more agents add nothing, probes down keep the limit low. */
        check(r.final_limit <= 4);
}

static void test_peak_is_found(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 40, 0, 1);
        simulate(&c, peaked, 30000, 0.03, &r);
        check(r.final_limit >= 4 && r.final_limit <= 8);
        check(throughput(&r) >= 0.9 * peaked(6));
}

static double model_phase; /* which curve the changing machine follows */
static double changing(unsigned l)
{
        return model_phase == 0 ? sleep_bound(l) : spawn_bound(l) / 10.0 * (l > 10 ? 0.3 : 1.0);
}

static void test_machine_gets_busy(void)
{
        struct concurrency c;
        struct run r = { 0 }, after = { 0 };

        concurrency_init(&c, 20, 0, 1);
        model_phase = 0;
        simulate(&c, changing, 3000, 0, &r);
        check(r.final_limit >= 19);
        /* The machine changes under it: many agents now hurt badly. */
        model_phase = 1;
        simulate(&c, changing, 3000, 0, &after);
        check(after.final_limit <= 10);
        check(c.lowered > 0);
}

static void test_fixed_never_moves(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 7, 1);
        check_int(c.phase, CONCURRENCY_FIXED);
        check_int(c.limit, 7);
        simulate(&c, sleep_bound, 5000, 0, &r);
        check_int(r.max_seen, 7);
        check_int(c.windows, 0);
        check_str(concurrency_phase_to_string(c.phase), "fixed");

        /* Pinned above the bound: the bound. */
        concurrency_init(&c, 4, 7, 1);
        check_int(c.limit, 4);

        /* Adapting starts where it is told, within the bound. */
        concurrency_init(&c, 20, 0, 4);
        check_int(c.limit, 4);
        check_int(c.phase, CONCURRENCY_SLOW_START);
        concurrency_init(&c, 3, 0, 8);
        check_int(c.limit, 3);
        concurrency_init(&c, 3, 0, 0);
        check_int(c.limit, 1);
}

static void test_idle_voids_windows(void)
{
        struct concurrency c;
        usec_t t = 1000000;

        concurrency_init(&c, 20, 0, 1);
        /* Each completion leaves a slot free (input slower than the machine): nothing is learned. */
        for (int i = 0; i < 10000; i++) {
                t += 1000;
                check(!concurrency_done(&c, t));
                concurrency_idle(&c, 0, false);
        }
        check_int(c.limit, 1);
        check_int(c.windows, 0);

        /* A window needs its time as well as its completions. */
        for (unsigned i = 0; i < 100; i++)
                (void)concurrency_done(&c, t + i);
        check_int(c.windows, 0);
        (void)concurrency_done(&c, t + HP_CONCURRENCY_WINDOW_USEC);
        check_int(c.windows, 1);
        check_int(c.limit, 2); /* slow start's first probe */
        check(fabs(c.last_rate - 100.0 * 1e6 / HP_CONCURRENCY_WINDOW_USEC) < 1e-6);
}

static void test_reconfigure(void)
{
        struct concurrency c;
        struct run r = { 0 };

        concurrency_init(&c, 20, 0, 1);
        simulate(&c, sleep_bound, 2000, 0, &r);
        check(c.limit >= 19);
        /* A lower bound clamps what was learned, and keeps adapting. */
        concurrency_reconfigure(&c, 8, 0);
        check_int(c.limit, 8);
        check(c.phase != CONCURRENCY_FIXED);
        check(c.windows > 0);
        /* Pinned, then adaptive again from the start. */
        concurrency_reconfigure(&c, 8, 3);
        check_int(c.limit, 3);
        check_int(c.phase, CONCURRENCY_FIXED);
        concurrency_reconfigure(&c, 8, 0);
        check_int(c.limit, 1); /* the start it was given */
        check_int(c.phase, CONCURRENCY_SLOW_START);

        /* max 1: nothing to probe, ever. */
        concurrency_init(&c, 1, 0, 1);
        simulate(&c, sleep_bound, 2000, 0, &r);
        check_int(c.limit, 1);
        check_int(c.raised, 0);
}

int main(void)
{
        run_test(test_spawn_bound_stays_at_one);
        run_test(test_spawn_bound_with_noise);
        run_test(test_dependencies_cap_it);
        run_test(test_stall_raises);
        run_test(test_sleep_bound_climbs_to_max);
        run_test(test_two_cores_gets_the_speedup);
        run_test(test_peak_is_found);
        run_test(test_machine_gets_busy);
        run_test(test_fixed_never_moves);
        run_test(test_idle_voids_windows);
        run_test(test_reconfigure);
        return 0;
}
