/* SPDX-License-Identifier: MIT */
/*
 * Adaptive concurrency (see concurrency.h for the rule).
 *
 * Invariants: 1 <= limit <= max; in FIXED the limit never changes; while a
 * probe is out, limit != ref_limit and the window being measured is the
 * probe's; a window is measured only at one limit (any change voids it).
 */
#include "shared/bounds.h"
#include "shared/macro.h"
#include "pipeline/concurrency.h"

const char *concurrency_phase_to_string(enum concurrency_phase p)
{
        switch (p) {
        case CONCURRENCY_FIXED:
                return "fixed";
        case CONCURRENCY_SLOW_START:
                return "slow-start";
        default:
                return "adaptive";
        }
}

static unsigned clamp_limit(unsigned v, unsigned max)
{
        return v < 1 ? 1 : v > max ? max : v;
}

void concurrency_init(struct concurrency *c, unsigned max, unsigned fixed, unsigned start)
{
        max = max ? max : 1;
        *c = (struct concurrency){
                .phase = fixed ? CONCURRENCY_FIXED : CONCURRENCY_SLOW_START,
                .limit = clamp_limit(fixed ? fixed : start, max),
                .max = max,
                .start = start,
        };
        c->ref_limit = c->limit;
}

void concurrency_reconfigure(struct concurrency *c, unsigned max, unsigned fixed)
{
        struct concurrency old = *c;

        max = max ? max : 1;
        if (fixed || old.phase == CONCURRENCY_FIXED) {
                concurrency_init(c, max, fixed, old.start);
        } else {
                /* Still adaptive: keep the learned limit within the new bound. */
                c->max = max;
                c->limit = clamp_limit(old.ref_limit, max);
                c->ref_limit = c->limit;
                c->win_start = 0;
                c->ref_rate = old.ref_limit == c->limit ? old.ref_rate : 0;
        }
        c->last_rate = old.last_rate;
        c->last_limit = old.last_limit;
        c->windows = old.windows;
        c->raised = old.raised;
        c->stalls = old.stalls;
        c->lowered = old.lowered;
}

static void set_limit(struct concurrency *c, unsigned limit);
static void reject_probe(struct concurrency *c, bool up);

void concurrency_idle(struct concurrency *c, unsigned running, bool blocked)
{
        c->win_start = 0;
        if (c->phase == CONCURRENCY_FIXED || !blocked || running >= c->limit)
                return;
        running = MAX(running, 1u);
        if (c->limit > c->ref_limit && running <= c->ref_limit) {
                reject_probe(c, true); /* more could not even be used */
                return;
        }
        set_limit(c, running);
        if (c->limit <= c->ref_limit) {
                /* Settled where the dependencies leave it; measured afresh there. */
                c->ref_limit = c->limit;
                c->ref_rate = 0;
        }
}

bool concurrency_stalled(struct concurrency *c)
{
        if (c->phase == CONCURRENCY_FIXED || c->limit >= c->max)
                return false;
        c->limit++;
        c->raised++;
        c->stalls++;
        /* Settled there: the next busy window measures it, probes go on from it. */
        c->ref_limit = c->limit;
        c->ref_rate = 0;
        c->win_start = 0;
        c->hold = 0;
        return true;
}

/* Move to @limit (a probe, or back to the settled limit); the next window starts afresh. */
static void set_limit(struct concurrency *c, unsigned limit)
{
        limit = clamp_limit(limit, c->max);
        if (limit > c->limit)
                c->raised++;
        else if (limit < c->limit)
                c->lowered++;
        c->limit = limit;
        c->win_start = 0;
}

/* The probe (or a settled window) measured @rate at c->limit: keep it or go back. */
static void judge_probe(struct concurrency *c, double rate)
{
        double gain = 1.0 + HP_CONCURRENCY_GAIN_PCT / 100.0;
        double fewer = 1.0 - HP_CONCURRENCY_GAIN_PCT / 200.0;
        bool up = c->limit > c->ref_limit;
        /* More agents must pay clearly; fewer may cost up to half that (less CPU, the same work). */
        bool keep = up ? rate > c->ref_rate * gain : rate >= c->ref_rate * fewer;

        if (keep) {
                c->ref_limit = c->limit;
                c->ref_rate = rate;
                c->hold = 0;
                if (up)
                        c->backoff = 0; /* more paid: climbing is worth probing again soon */
                if (c->phase == CONCURRENCY_SLOW_START && up)
                        set_limit(c, c->limit * 2); /* and on: the next probe is already out */
                else
                        c->probe_down = !up;  /* the same direction paid: try it again next */
                if (c->limit == c->ref_limit)
                        c->phase = CONCURRENCY_STEADY;
                return;
        }
        reject_probe(c, up);
}

/* The probe did not pay: back to the settled limit, wait longer before the next one. */
static void reject_probe(struct concurrency *c, bool up)
{
        c->phase = CONCURRENCY_STEADY;
        set_limit(c, c->ref_limit);
        c->hold = c->backoff;
        c->backoff = MIN(2 * c->backoff + 1, (unsigned)HP_CONCURRENCY_HOLD_MAX);
        c->probe_down = up;
}

/* A busy window at the settled limit measured @rate: maybe probe, maybe cut. */
static void judge_settled(struct concurrency *c, double rate)
{
        double drop = 1.0 - HP_CONCURRENCY_DROP_PCT / 100.0;
        unsigned next;

        if (c->ref_rate > 0 && rate < c->ref_rate * drop && c->limit > 1) {
                /* Much slower at the same limit: cut by a quarter, compared with the new pace. */
                c->ref_rate = rate;
                set_limit(c, c->limit - MAX(1u, c->limit / 4));
                return;
        }
        c->ref_rate = rate;
        if (c->hold > 0) {
                c->hold--;
                return;
        }
        if (c->phase == CONCURRENCY_SLOW_START)
                next = c->limit * 2;
        else if (c->probe_down && c->limit > 1)
                next = c->limit - 1;
        else if (c->probe_down) {
                /* Down at 1: wait before trying more again, longer each time. */
                c->probe_down = false;
                c->hold = c->backoff;
                c->backoff = MIN(2 * c->backoff + 1, (unsigned)HP_CONCURRENCY_HOLD_MAX);
                return;
        } else if (c->limit < c->max)
                next = c->limit + 1;
        else
                next = c->limit - 1;
        if (clamp_limit(next, c->max) == c->limit) {
                c->phase = CONCURRENCY_STEADY; /* max is 1: nothing to learn */
                return;
        }
        set_limit(c, next);
}

bool concurrency_done(struct concurrency *c, usec_t now)
{
        unsigned before = c->limit;
        double rate;

        if (c->phase == CONCURRENCY_FIXED)
                return false;
        if (c->win_start == 0 || now < c->win_start) {
                /* This completion opens a window: the ones after it are counted. */
                c->win_start = now;
                c->win_done = 0;
                return false;
        }
        c->win_done++;
        if (c->win_done < 2 * c->limit || now - c->win_start < HP_CONCURRENCY_WINDOW_USEC)
                return false;

        rate = (double)c->win_done * (double)USEC_PER_SEC / (double)(now - c->win_start);
        c->windows++;
        c->last_rate = rate;
        c->last_limit = c->limit;
        /* The next window starts here. */
        c->win_start = now;
        c->win_done = 0;
        if (c->limit != c->ref_limit)
                judge_probe(c, rate);
        else
                judge_settled(c, rate);
        return c->limit != before;
}
