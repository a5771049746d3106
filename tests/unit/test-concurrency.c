/* SPDX-License-Identifier: MIT */
/*
 * The concurrency limit against a modelled machine: CPUs shared fairly
 * among the agents that want one, agents that compute for a while and then
 * sleep for a while, and a caller that starts what the limit allows and,
 * while events wait for a slot, looks at the running agents every
 * HP_CONCURRENCY_LOOK_USEC as the daemon does (CPU plus run-queue time, as
 * /proc/PID/schedstat gives it).  The checks are the properties the rule
 * promises: sleeping agents reach max-children within a few looks (the old
 * rate-learning rule started at one agent and opened a slot per 200 ms
 * stall), CPU-bound agents never run more than one per CPU however long
 * they run, and an unrelated event does not wait behind a long sleeping
 * agent.
 */
#include "pipeline/concurrency.h"
#include "shared/bounds.h"
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
                tick(c, m);
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
        concurrency_init(&c, max, fixed, cpus);
        simulate(&c, &machine, events, work);
        return machine.makespan;
}

static void test_starts_at_the_cpus(void)
{
        struct concurrency c;

        /* Not at one: where the machine says, with nothing learnt yet. */
        concurrency_init(&c, 20, 0, 4);
        check_int(c.phase, CONCURRENCY_ADAPTIVE);
        check_int(c.limit, 4);
        concurrency_init(&c, 3, 0, 8);
        check_int(c.limit, 3);
        concurrency_init(&c, 20, 0, 0);
        check_int(c.limit, 1);
        check_str(concurrency_phase_to_string(c.phase), "adaptive");
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

static void test_limit_is_cpus_plus_asleep(void)
{
        struct concurrency c;

        concurrency_init(&c, 20, 0, 2);
        check(concurrency_set_asleep(&c, 5));
        check_int(c.limit, 7);
        check(!concurrency_set_asleep(&c, 5));
        check(concurrency_set_asleep(&c, 30));
        check_int(c.limit, 20);
        check(concurrency_set_asleep(&c, 1));
        check_int(c.limit, 3);
        check_int(c.raised, 2);
        check_int(c.lowered, 1);
}

/* Sleeping agents: within a few looks (ms), not after learning windows or 200 ms stalls. */
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

        concurrency_init(&c, 20, 3, 2);
        check_int(c.phase, CONCURRENCY_FIXED);
        check_int(c.limit, 3);
        check(!concurrency_set_asleep(&c, 10));
        check_int(c.limit, 3);
        concurrency_init(&c, 20, 50, 2);
        check_int(c.limit, 20);
        check_str(concurrency_phase_to_string(c.phase), "fixed");
        run_with(2, 20, 3, 100, sleepy_work);
        check_int(machine.most_running, 3);
}

static void test_reconfigure(void)
{
        struct concurrency c;

        concurrency_init(&c, 20, 0, 2);
        (void)concurrency_set_asleep(&c, 6);
        check_int(c.limit, 8);
        /* A lower max-children clamps it; the agents asleep still count. */
        concurrency_reconfigure(&c, 5, 0);
        check_int(c.limit, 5);
        check_int(c.asleep, 6);
        /* Pinned, then adaptive again: the CPUs plus the agents asleep. */
        concurrency_reconfigure(&c, 20, 4);
        check_int(c.phase, CONCURRENCY_FIXED);
        check_int(c.limit, 4);
        concurrency_reconfigure(&c, 20, 0);
        check_int(c.phase, CONCURRENCY_ADAPTIVE);
        check_int(c.limit, 8);
        check_int(c.awake_max, 2);
}

int main(void)
{
        run_test(test_starts_at_the_cpus);
        run_test(test_asleep_or_not);
        run_test(test_limit_is_cpus_plus_asleep);
        run_test(test_sleepers_climb_within_ms);
        run_test(test_never_loses_to_fixed);
        run_test(test_cpu_bound_stays_at_cpus);
        run_test(test_mix_keeps_awake_within_cpus);
        run_test(test_unrelated_event_does_not_wait);
        run_test(test_fixed_never_moves);
        run_test(test_reconfigure);
        return 0;
}
