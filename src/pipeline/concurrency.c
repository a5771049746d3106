/* SPDX-License-Identifier: MIT */
/*
 * Concurrency limit: the CPUs (and one) plus the agents asleep (see concurrency.h for
 * the rule and why).
 *
 * Invariants: 1 <= limit <= max; in FIXED the limit never changes; in
 * ADAPTIVE, limit == min(max, awake_max + asleep), recomputed whenever one
 * of them changes.
 */
#include <assert.h>

#include "shared/macro.h"
#include "pipeline/concurrency.h"

const char *concurrency_phase_to_string(enum concurrency_phase p)
{
        return p == CONCURRENCY_FIXED ? "fixed" : "adaptive";
}

static unsigned clamp_limit(unsigned v, unsigned max)
{
        return v < 1 ? 1 : v > max ? max : v;
}

/* What an adaptive limit is now. */
static unsigned adaptive_limit(const struct concurrency *c)
{
        /* Both terms are below max-children and the CPUs' count: the sum cannot wrap. */
        return clamp_limit(MIN(c->asleep, c->max) + MIN(c->awake_max, c->max), c->max);
}

/* The invariants above. */
static _unused_ bool concurrency_sane(const struct concurrency *c)
{
        if (c->limit < 1 || c->limit > c->max)
                return false;
        return c->phase == CONCURRENCY_FIXED || c->limit == adaptive_limit(c);
}

/* Recompute an adaptive limit; count the change.  Return: true if it changed. */
static bool update(struct concurrency *c)
{
        unsigned limit;

        if (c->phase == CONCURRENCY_FIXED)
                return false;
        limit = adaptive_limit(c);
        if (limit == c->limit)
                return false;
        if (limit > c->limit)
                c->raised++;
        else
                c->lowered++;
        c->limit = limit;
        return true;
}

void concurrency_init(struct concurrency *c, unsigned max, unsigned fixed, unsigned cpus)
{
        max = MAX(max, 1u);
        *c = (struct concurrency){
                .phase = fixed ? CONCURRENCY_FIXED : CONCURRENCY_ADAPTIVE,
                .max = max,
                .awake_max = MAX(cpus, 1u),
        };
        c->limit = clamp_limit(fixed ? fixed : c->awake_max, max);
        assert(concurrency_sane(c));
}

void concurrency_reconfigure(struct concurrency *c, unsigned max, unsigned fixed)
{
        struct concurrency old = *c;

        concurrency_init(c, max, fixed, old.awake_max);
        c->asleep = old.asleep;
        (void)update(c);
        c->raised = old.raised;
        c->lowered = old.lowered;
        assert(concurrency_sane(c));
}

bool concurrency_set_asleep(struct concurrency *c, unsigned asleep)
{
        bool changed;

        c->asleep = asleep;
        changed = update(c);
        assert(concurrency_sane(c));
        return changed;
}

bool concurrency_agent_asleep(uint64_t busy_then_ns, uint64_t busy_now_ns, usec_t then, usec_t now)
{
        uint64_t busy = busy_now_ns > busy_then_ns ? busy_now_ns - busy_then_ns : 0;

        if (now <= then)
                return false;
        return busy / 1000 * 2 < now - then;
}
