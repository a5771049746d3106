/* SPDX-License-Identifier: MIT */
/*
 * The concurrency limit, two ways.
 *
 * Feeds of windows: a machine given as events per second and CPU per event
 * at each number of awake agents, and windows of completions fed as the
 * daemon feeds them.  Where a second agent at once does not raise the
 * events per second by more than it raises the CPU used (spawning is the
 * bottleneck, or a second CPU is not there to have), the awake part stays
 * at one but for a probe now and then; where it does (CPU-bound agents and
 * a free CPU), it climbs.
 *
 * A modelled machine: CPUs shared fairly among the agents that want one,
 * agents that compute for a while and then sleep for a while, and a caller
 * that starts what the limit allows, ends a window as the daemon does at
 * each event finished while others wait, and, while events wait for a
 * slot, looks at the running agents every HP_CONCURRENCY_LOOK_USEC as the
 * daemon does (CPU plus run-queue time, as /proc/PID/schedstat gives it).
 * The checks are the properties the rule promises: sleeping agents reach
 * max-children within a few looks (the old rate-learning rule started at
 * one agent and opened a slot per 200 ms stall), CPU-bound agents never run
 * more than one per CPU however long they run, and an unrelated event does
 * not wait behind a long sleeping agent.
 */
#include "pipeline/concurrency.h"
#include "shared/bounds.h"
#include "shared/macro.h"
#include "test.h"

#define STEP_USEC 50
#define AGENTS_MAX 4096

struct agent {
        double cpu_left;        /* usec of CPU still to use */
        double sleep_left;      /* then usec asleep */
        double busy;            /* usec on or waiting for a CPU, as schedstat counts it */
        double looked_busy;
        usec_t looked;
        bool asleep;
};

struct machine {
        unsigned cpus;
        struct agent run[AGENTS_MAX];
        unsigned n_run;
        double cpu_used;        /* usec of CPU the agents used */
        uint64_t finished;
        /* Results. */
        usec_t now, makespan;
        unsigned most_running, most_awake;
        usec_t first_start[AGENTS_MAX]; /* when each event started */
};

/* The workload: event @i computes @ret_cpu usec, then sleeps @ret_sleep usec. */
typedef void (*work_fn)(unsigned i, double *ret_cpu, double *ret_sleep);

static void finish(struct concurrency *c, struct machine *m, unsigned k)
{
        if (m->run[k].asleep)
                (void)concurrency_set_asleep(c, c->asleep - 1);
        m->run[k] = m->run[--m->n_run];
        m->finished++;
}

/* One step of the CPUs: the agents computing share them, the others sleep. */
static void tick(struct concurrency *c, struct machine *m)
{
        unsigned want = 0, awake = 0;
        double share;

        for (unsigned k = 0; k < m->n_run; k++)
                want += m->run[k].cpu_left > 0;
        share = want > m->cpus ? (double)m->cpus / want : 1.0;
        for (unsigned k = 0; k < m->n_run; k++)
                awake += !m->run[k].asleep;
        if (awake > m->most_awake)
                m->most_awake = awake;
        m->now += STEP_USEC;
        for (unsigned k = 0; k < m->n_run;) {
                struct agent *a = &m->run[k];

                if (a->cpu_left > 0) {
                        a->cpu_left -= share * STEP_USEC;
                        m->cpu_used += share * STEP_USEC;
                        a->busy += STEP_USEC; /* on a CPU or in its run queue */
                } else
                        a->sleep_left -= STEP_USEC;
                if (a->cpu_left <= 0 && a->sleep_left <= 0)
                        finish(c, m, k);
                else
                        k++;
        }
}

/* The daemon's look: each running agent asleep or not since the last look. */
static void look(struct concurrency *c, struct machine *m)
{
        unsigned asleep = 0;

        for (unsigned k = 0; k < m->n_run; k++) {
                struct agent *a = &m->run[k];

                a->asleep = concurrency_agent_asleep((uint64_t)(a->looked_busy * 1000), (uint64_t)(a->busy * 1000),
                                                     a->looked, m->now);
                a->looked_busy = a->busy;
                a->looked = m->now;
                asleep += a->asleep;
        }
        (void)concurrency_set_asleep(c, asleep);
}

/* Run @events events, each unrelated to the others, queued at once at time 0. */
static void simulate(struct concurrency *c, struct machine *m, unsigned events, work_fn work)
{
        unsigned next = 0;
        usec_t next_look = 0;
        uint64_t finished;

        m->now = 0;
        while (next < events || m->n_run > 0) {
                while (next < events && m->n_run < c->limit) {
                        struct agent *a = &m->run[m->n_run++];

                        *a = (struct agent){ .looked = m->now };
                        work(next, &a->cpu_left, &a->sleep_left);
                        m->first_start[next++] = m->now;
                }
                if (m->n_run > m->most_running)
                        m->most_running = m->n_run;
                check(c->limit >= 1 && c->limit <= c->max);
                /* Events wait for a slot: the daemon looks every HP_CONCURRENCY_LOOK_USEC. */
                if (next < events && c->phase != CONCURRENCY_FIXED && c->limit < c->max) {
                        if (next_look == 0)
                                next_look = m->now + HP_CONCURRENCY_LOOK_USEC;
                        if (m->now >= next_look) {
                                look(c, m);
                                next_look = 0;
                                continue;
                        }
                } else
                        next_look = 0;
                finished = m->finished;
                tick(c, m);
                /* An event finished: a window, while others wait (the daemon's jobs_measure()). */
                if (m->finished == finished)
                        continue;
                if (next == events)
                        (void)concurrency_idle(c);
                else if (concurrency_window_due(c, m->now, m->finished))
                        (void)concurrency_window(c, m->now, m->finished, (uint64_t)(m->cpu_used * 1000));
        }
        m->makespan = m->now;
}

/* The coldplug of the issue: most devices' agents do nothing, tty 10 ms, net 50 ms, block 100 ms asleep. */
static void coldplug_work(unsigned i, double *cpu, double *sleep)
{
        static const double sleeps[] = { 0, 0, 0, 0, 0, 10000, 0, 50000, 0, 0, 100000, 0, 10000 };

        *cpu = 300;
        *sleep = sleeps[i % (sizeof(sleeps) / sizeof(sleeps[0]))];
}

/* Agents that sleep 10 to 100 ms. */
static void sleepy_work(unsigned i, double *cpu, double *sleep)
{
        *cpu = 300;
        *sleep = 10000.0 * (1 + i % 10);
}

/* CPU-bound agents: 20 ms of CPU each. */
static void cpu_work(unsigned i, double *cpu, double *sleep)
{
        (void)i;
        *cpu = 20000;
        *sleep = 0;
}

/* Agents that start at once: a process start and nothing else. */
static void noop_work(unsigned i, double *cpu, double *sleep)
{
        (void)i;
        *cpu = 300;
        *sleep = 0;
}

static struct machine machine;

static usec_t run_with(unsigned cpus, unsigned max, unsigned fixed, unsigned events, work_fn work)
{
        struct concurrency c;

        machine = (struct machine){ .cpus = cpus };
        concurrency_init(&c, max, fixed, cpus, true);
        simulate(&c, &machine, events, work);
        return machine.makespan;
}

static void test_starts_at_one_awake(void)
{
        struct concurrency c;

        /* One awake agent until a window shows that more pay. */
        concurrency_init(&c, 20, 0, 4, true);
        check_int(c.phase, CONCURRENCY_ADAPTIVE);
        check_int(c.awake, 1);
        check_int(c.limit, 1);
        check_str(concurrency_phase_to_string(c.phase), "adaptive");
        /* Nothing to learn (a dry run): the CPUs, and windows change nothing. */
        concurrency_init(&c, 20, 0, 4, false);
        check_int(c.limit, 4);
        check(!concurrency_window_due(&c, 0, 0));
        check(!concurrency_window(&c, 0, 0, 0));
        check(!concurrency_window(&c, 1000000, 100, 1000));
        check_int(c.limit, 4);
        concurrency_init(&c, 3, 0, 8, false);
        check_int(c.limit, 3);
        concurrency_init(&c, 20, 0, 0, false);
        check_int(c.limit, 1);
}

static void test_asleep_or_not(void)
{
        /* 0.3 ms of CPU in 2 ms: asleep; all of it (on a CPU or queued for one): awake. */
        check(concurrency_agent_asleep(0, 300000, 1000, 3000));
        check(!concurrency_agent_asleep(0, 2000000, 1000, 3000));
        check(!concurrency_agent_asleep(5000000, 6100000, 1000, 3000));
        check(concurrency_agent_asleep(5000000, 5900000, 1000, 3000));
        /* No time passed: cannot tell, awake. */
        check(!concurrency_agent_asleep(0, 0, 1000, 1000));
        /* A counter that went back (cannot happen) is no time busy. */
        check(concurrency_agent_asleep(9000000, 1000, 1000, 3000));
}

static void test_limit_is_awake_plus_asleep(void)
{
        struct concurrency c;

        concurrency_init(&c, 20, 0, 2, false);
        check(concurrency_set_asleep(&c, 5));
        check_int(c.limit, 7);
        check(!concurrency_set_asleep(&c, 5));
        check(concurrency_set_asleep(&c, 30));
        check_int(c.limit, 20);
        check(concurrency_set_asleep(&c, 1));
        check_int(c.limit, 3);
        check_int(c.raised, 2);
        check_int(c.lowered, 1);
        /* Learning, one awake: while agents sleep, the awake part is all of
         * awake_max again (those not looked at yet likely sleep too), and
         * the agents asleep climb to max-children. */
        concurrency_init(&c, 20, 0, 3, true);
        check_int(c.limit, 1);
        check(concurrency_set_asleep(&c, 1));
        check_int(c.limit, 4);
        check(concurrency_set_asleep(&c, 7));
        check_int(c.limit, 10);
        check(concurrency_set_asleep(&c, 19));
        check_int(c.limit, 20);
        /* None asleep any more: awake_max still, until a whole window went by
         * with none seen asleep; then the part learnt. */
        check(concurrency_set_asleep(&c, 0));
        check_int(c.limit, 3);
        (void)concurrency_window(&c, 0, 0, 0);
        (void)concurrency_window(&c, 100000, 16, 16000000);
        check_int(c.limit, 3);
        (void)concurrency_window(&c, 200000, 32, 32000000);
        check(c.awake < 3);
        check_int(c.limit, c.awake);
}

/* ---- feeds of windows -------------------------------------------------------- */

/* A machine at 1, 2, 3 ... awake agents: events per second, CPU per event (usec). */
struct level {
        double rate, cpu_usec;
};

struct feed {
        uint64_t finished;
        double usec, cpu_ns;
        unsigned windows_at[8]; /* windows run at each awake count */
        unsigned changes;       /* times the awake part changed */
};

/* The awake part kept: the awake count, but during a probe the one it goes back to. */
static unsigned kept(const struct concurrency *c)
{
        if (c->probe == CONCURRENCY_PROBE_UP)
                return c->awake - 1;
        return c->probe == CONCURRENCY_PROBE_DOWN ? c->awake + 1 : c->awake;
}

/*
 * Feed @windows windows of CONCURRENCY_WINDOW_EVENTS events each, at the
 * rate and CPU cost of the awake count at the time; @noise: every other
 * window that much slower and dearer (percent), the rest as much faster
 * and cheaper.  Return: the windows at more than one awake agent.
 */
static unsigned feed(struct concurrency *c, struct feed *f, const struct level *lv, unsigned windows,
                     double noise)
{
        unsigned above_one = 0;

        if (f->finished == 0)
                (void)concurrency_window(c, 0, 0, 0); /* opens the first */
        for (unsigned i = 0; i < windows; i++) {
                const struct level *l = &lv[c->awake - 1];
                double k = 1 + (i % 2 ? noise : -noise) / 100, n = CONCURRENCY_WINDOW_EVENTS;
                unsigned awake = c->awake;

                f->windows_at[awake]++;
                above_one += awake > 1;
                f->finished += CONCURRENCY_WINDOW_EVENTS;
                f->usec += n / l->rate * 1e6 * k;
                f->cpu_ns += n * l->cpu_usec * 1000 * k;
                check(concurrency_window_due(c, (usec_t)f->usec, f->finished));
                (void)concurrency_window(c, (usec_t)f->usec, f->finished, (uint64_t)f->cpu_ns);
                f->changes += c->awake != awake;
                check(c->awake >= 1 && c->awake <= c->awake_max);
                check_int(c->limit, MIN(c->awake + c->asleep, c->max));
        }
        return above_one;
}

/*
 * The machine: spawning is the bottleneck, two spawning loops finish
 * 1.13x what one does and each spawn costs the daemon about twice as much
 * CPU; through the daemon a second agent at once bought 1% more events per
 * second for much more CPU.  One awake agent, but for a probe now and then.
 */
static void test_spawn_bound_stays_at_one(void)
{
        static const struct level lv[] = { { 850, 400 }, { 860, 560 }, { 865, 600 } };
        struct concurrency c;
        struct feed f = { 0 };
        unsigned above;

        concurrency_init(&c, 20, 0, 3, true);
        above = feed(&c, &f, lv, 400, 0);
        check_int(kept(&c), 1);
        check(above * 20 <= 400); /* at most 5% of the windows probe */
        check(c.probes >= 5);
        check_int(c.probes_kept, 0);
        /* The same with 3% of noise. */
        f = (struct feed){ 0 };
        concurrency_init(&c, 20, 0, 3, true);
        above = feed(&c, &f, lv, 400, 3);
        check_int(kept(&c), 1);
        check(above * 20 <= 400);
}

/* CPU-bound agents where a second gives no more events per second (no CPU free for it): one. */
static void test_cpu_bound_without_gain_stays_at_one(void)
{
        static const struct level lv[] = { { 50, 20000 }, { 50, 20000 }, { 50, 20400 } };
        struct concurrency c;
        struct feed f = { 0 };

        concurrency_init(&c, 20, 0, 3, true);
        check(feed(&c, &f, lv, 200, 0) * 20 <= 200);
        check_int(kept(&c), 1);
        check(f.windows_at[1] * 20 >= 200 * 19);
}

/* Two at once give +50% events per second at +50% CPU per second (the same CPU per event): two stay. */
static void test_gain_that_pays_climbs(void)
{
        static const struct level lv[] = { { 100, 5000 }, { 150, 5000 }, { 150, 5000 } };
        static const struct level cpus[] = { { 50, 20000 }, { 100, 20000 }, { 104, 20600 } };
        struct concurrency c;
        struct feed f = { 0 };

        concurrency_init(&c, 20, 0, 3, true);
        feed(&c, &f, lv, 200, 0);
        check_int(kept(&c), 2);
        /* Two from the second window on, but for the probes of one and three. */
        check(f.windows_at[2] * 10 >= 200 * 9);
        /* With 3% of noise, at two or more (three's 6% swing from one window to the
         * next can pass for a gain). */
        f = (struct feed){ 0 };
        concurrency_init(&c, 20, 0, 3, true);
        check(feed(&c, &f, lv, 200, 3) * 10 >= 200 * 9);
        check(kept(&c) >= 2);
        /* Two CPUs and CPU-bound agents: two, and three does not pay (4%). */
        f = (struct feed){ 0 };
        concurrency_init(&c, 20, 0, 3, true);
        feed(&c, &f, cpus, 200, 0);
        check_int(kept(&c), 2);
}

/* Three at once pay more still: three, reached in the third window. */
static void test_climbs_to_awake_max(void)
{
        static const struct level lv[] = { { 100, 3000 }, { 190, 3000 }, { 270, 3100 }, { 280, 3500 } };
        struct concurrency c;
        struct feed f = { 0 };

        concurrency_init(&c, 20, 0, 3, true);
        feed(&c, &f, lv, 3, 0);
        check_int(kept(&c), 3);
        feed(&c, &f, lv, 100, 0);
        check_int(kept(&c), 3);
        check(f.windows_at[3] >= 90);
}

/* What paid once is looked at again: when it stops paying, the awake part goes back down. */
static void test_goes_back_down(void)
{
        static const struct level pays[] = { { 100, 5000 }, { 190, 5000 }, { 190, 5200 } };
        static const struct level not_any_more[] = { { 850, 400 }, { 860, 560 }, { 865, 600 } };
        struct concurrency c;
        struct feed f = { 0 };

        concurrency_init(&c, 20, 0, 3, true);
        feed(&c, &f, pays, 50, 0);
        check_int(kept(&c), 2);
        feed(&c, &f, not_any_more, 2 * CONCURRENCY_BACKOFF_MAX + 4, 0);
        check_int(kept(&c), 1);
}

static void test_higher_pays(void)
{
        /* 16 events in 100 ms, 4 ms of CPU each, against ... */
        struct concurrency_window lo = { .finished = 16, .cpu_ns = 64000000, .usec = 100000 };
        struct concurrency_window hi = { .finished = 16, .cpu_ns = 64000000, .usec = 95000 };

        /* ... 5.3% more per second at the same CPU: pays. */
        check(concurrency_higher_pays(&lo, &hi));
        /* 1% more per second: not enough gain. */
        hi.usec = 99000;
        check(!concurrency_higher_pays(&lo, &hi));
        /* 50% more per second at 10% more CPU each: pays; at 11%: does not. */
        hi = (struct concurrency_window){ .finished = 24, .cpu_ns = 4000000ULL * 24 * 110 / 100,
                                          .usec = 100000 };
        check(concurrency_higher_pays(&lo, &hi));
        hi.cpu_ns = 4000000ULL * 24 * 111 / 100;
        check(!concurrency_higher_pays(&lo, &hi));
        /* An empty window never pays; against an empty one, anything that finished does. */
        hi = (struct concurrency_window){ .usec = 100000 };
        check(!concurrency_higher_pays(&lo, &hi));
        check(concurrency_higher_pays(&hi, &lo));
        check_int(concurrency_per_cpu_second(&lo), 250);
        check_int(concurrency_per_cpu_second(&hi), 0);
}

/* The queue ran empty during a probe: it goes back, and the next busy spell probes after one window. */
static void test_idle_ends_the_probe(void)
{
        static const struct level lv[] = { { 850, 400 }, { 860, 560 }, { 865, 600 } };
        struct concurrency c;
        struct feed f = { 0 };

        concurrency_init(&c, 20, 0, 3, true);
        check(concurrency_window_due(&c, 0, 0)); /* none open yet */
        feed(&c, &f, lv, 1, 0);
        check_int(c.probe, CONCURRENCY_PROBE_UP);
        check_int(c.awake, 2);
        check(!concurrency_window_due(&c, (usec_t)f.usec + 1000, f.finished + 3));
        check(concurrency_window_due(&c, (usec_t)f.usec + 1000, f.finished + CONCURRENCY_WINDOW_EVENTS));
        check(!concurrency_window_due(&c, (usec_t)f.usec + CONCURRENCY_WINDOW_USEC, f.finished + 3));
        check(concurrency_window_due(&c, (usec_t)f.usec + CONCURRENCY_WINDOW_USEC, f.finished + 4));
        check(concurrency_idle(&c));
        check_int(c.awake, 1);
        check_int(c.limit, 1);
        check(!c.open);
        /* The next spell: a window opens, one at one awake, then the probe. */
        (void)concurrency_window(&c, 10000000, 1000, 1000000);
        check_int(c.awake, 1);
        f = (struct feed){ .finished = 1000, .usec = 10000000, .cpu_ns = 1000000 };
        feed(&c, &f, lv, 1, 0);
        check_int(c.awake, 2);
}

/*
 * Sleeping agents: within a few looks (ms), not after learning windows or
 * 200 ms stalls, whatever the awake part learnt (one awake agent: no window
 * has ended yet).
 */
static void test_sleepers_climb_within_ms(void)
{
        unsigned ramp = 0;

        run_with(2, 20, 0, 400, sleepy_work);
        check_int(machine.most_running, 20);
        /* The 20th event started within 10 looks. */
        for (unsigned i = 0; i < 20; i++)
                if (machine.first_start[i] > ramp)
                        ramp = (unsigned)machine.first_start[i];
        check(ramp <= 10 * HP_CONCURRENCY_LOOK_USEC);
}

/* Agents that take time: within 10% of the best fixed limit. */
static void test_never_loses_to_fixed(void)
{
        static const struct {
                work_fn work;
                unsigned events;
        } loads[] = { { coldplug_work, 390 }, { sleepy_work, 400 }, { cpu_work, 100 }, { noop_work, 400 } };
        static const unsigned fixed[] = { 1, 2, 8, 20 };

        for (size_t l = 0; l < sizeof(loads) / sizeof(loads[0]); l++) {
                usec_t best = 0, adaptive = run_with(2, 20, 0, loads[l].events, loads[l].work);

                for (size_t f = 0; f < sizeof(fixed) / sizeof(fixed[0]); f++) {
                        usec_t t = run_with(2, 20, fixed[f], loads[l].events, loads[l].work);

                        if (best == 0 || t < best)
                                best = t;
                }
                check(adaptive * 10 <= best * 11);
        }
}

/* CPU-bound agents, however long they run: never more than one per CPU at once. */
static void test_cpu_bound_stays_at_cpus(void)
{
        run_with(2, 20, 0, 100, cpu_work);
        check_int(machine.most_running, 2);
        run_with(4, 2048, 0, 200, cpu_work);
        check_int(machine.most_running, 4);
}

/* A mix: awake agents stay within the CPUs plus those not looked at yet. */
static void test_mix_keeps_awake_within_cpus(void)
{
        run_with(2, 64, 0, 600, coldplug_work);
        check(machine.most_awake <= 2 + 2);
        check(machine.most_running > 8);
}

/* One CPU, one agent asleep for 300 ms: an unrelated event starts within a look or two. */
static void slow_then_quick(unsigned i, double *cpu, double *sleep)
{
        *cpu = 300;
        *sleep = i == 0 ? 300000 : 0;
}

static void test_unrelated_event_does_not_wait(void)
{
        run_with(1, 20, 0, 2, slow_then_quick);
        check(machine.first_start[1] <= 2 * HP_CONCURRENCY_LOOK_USEC);
}

static void test_fixed_never_moves(void)
{
        struct concurrency c;

        concurrency_init(&c, 20, 3, 2, true);
        check_int(c.phase, CONCURRENCY_FIXED);
        check_int(c.limit, 3);
        check(!concurrency_set_asleep(&c, 10));
        check_int(c.limit, 3);
        check(!concurrency_window_due(&c, 0, 0));
        check(!concurrency_window(&c, 1000000, 100, 1000));
        check(!concurrency_idle(&c));
        check_int(c.limit, 3);
        concurrency_init(&c, 20, 50, 2, true);
        check_int(c.limit, 20);
        check_str(concurrency_phase_to_string(c.phase), "fixed");
        run_with(2, 20, 3, 100, sleepy_work);
        check_int(machine.most_running, 3);
}

static void test_reconfigure(void)
{
        static const struct level lv[] = { { 100, 5000 }, { 190, 5000 }, { 190, 5200 } };
        struct concurrency c;
        struct feed f = { 0 };

        concurrency_init(&c, 20, 0, 3, true);
        feed(&c, &f, lv, 50, 0);
        check_int(kept(&c), 2);
        (void)concurrency_set_asleep(&c, 6);
        check_int(c.limit, 9);
        /* A lower max-children clamps it; the agents asleep still count. */
        concurrency_reconfigure(&c, 5, 0);
        check_int(c.limit, 5);
        check_int(c.asleep, 6);
        /* Pinned, then adaptive again: the awake part learnt (a probe under way
         * went back) and the agents asleep stay. */
        concurrency_reconfigure(&c, 20, 4);
        check_int(c.phase, CONCURRENCY_FIXED);
        check_int(c.limit, 4);
        concurrency_reconfigure(&c, 20, 0);
        check_int(c.phase, CONCURRENCY_ADAPTIVE);
        check_int(c.limit, 9);
        check_int(c.awake_max, 3);
        check_int(c.awake, 2);
        check(!c.open);
        /* None asleep: awake_max until a window went by without. */
        (void)concurrency_set_asleep(&c, 0);
        check_int(c.limit, 3);
}

/*
 * An agent that holds the one awake slot and does not finish (one spinning
 * until its timeout): no window ends, so no probe could raise the level;
 * after CONCURRENCY_STALL_USEC without a completion while events wait, the
 * awake part goes up one, then one more after as long again, to awake_max.
 * A completion starts the watch again; the queue running empty ends it.
 */
static void test_stall_raises_the_awake_part(void)
{
        struct concurrency c;
        const usec_t S = CONCURRENCY_STALL_USEC;

        concurrency_init(&c, 8, 0, 3, true);
        check_int(c.awake, 1);
        check_int(c.limit, 1);
        check(!concurrency_stalled(&c, 1000, 5));        /* the watch starts */
        check(!concurrency_stalled(&c, 1000 + S / 2, 5));
        check(concurrency_stalled(&c, 1000 + S, 5));      /* nothing finished for a whole stall */
        check_int(c.awake, 2);
        check_int(c.limit, 2);
        check_int(c.stalls, 1);
        check(!concurrency_stalled(&c, 1000 + S + S / 2, 5));
        check(concurrency_stalled(&c, 1000 + 2 * S, 5));
        check_int(c.awake, 3);
        check(!concurrency_stalled(&c, 1000 + 3 * S, 5)); /* awake_max: no further */
        check_int(c.awake, 3);
        check_int(c.limit, 3);
        /* Something finished: the watch starts again from there. */
        check(!concurrency_stalled(&c, 1000 + 3 * S + 10, 6));
        check(!concurrency_stalled(&c, 1000 + 4 * S, 6));
        check_int(c.stalls, 2);
        /* A fixed limit never moves. */
        concurrency_init(&c, 8, 2, 3, true);
        check(!concurrency_stalled(&c, 0, 1));
        check(!concurrency_stalled(&c, 10 * S, 1));
        check_int(c.limit, 2);
}

int main(void)
{
        run_test(test_starts_at_one_awake);
        run_test(test_asleep_or_not);
        run_test(test_limit_is_awake_plus_asleep);
        run_test(test_higher_pays);
        run_test(test_spawn_bound_stays_at_one);
        run_test(test_cpu_bound_without_gain_stays_at_one);
        run_test(test_gain_that_pays_climbs);
        run_test(test_climbs_to_awake_max);
        run_test(test_goes_back_down);
        run_test(test_idle_ends_the_probe);
        run_test(test_sleepers_climb_within_ms);
        run_test(test_never_loses_to_fixed);
        run_test(test_cpu_bound_stays_at_cpus);
        run_test(test_mix_keeps_awake_within_cpus);
        run_test(test_unrelated_event_does_not_wait);
        run_test(test_fixed_never_moves);
        run_test(test_reconfigure);
        run_test(test_stall_raises_the_awake_part);
        return 0;
}
