/* SPDX-License-Identifier: MIT */
/*
 * Concurrency limit: the awake part, learnt from windows of completions, plus
 * the agents asleep (see concurrency.h for the rule and why).
 *
 * Invariants: 1 <= limit <= max; in FIXED the limit never changes; in
 * ADAPTIVE, 1 <= awake <= awake_max and limit == min(max, asleep + (slept ||
 * slept_before ? awake_max : awake)), recomputed whenever one of them
 * changes; slept is set whenever asleep > 0; a probe is under way only while
 * a window is open, and then @base is the window before it, at the level kept.
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

/* The awake part in force: what was learnt, or where agents sleep, all of awake_max. */
static unsigned awake_now(const struct concurrency *c)
{
        return c->slept || c->slept_before ? c->awake_max : c->awake;
}

/* What an adaptive limit is now. */
static unsigned adaptive_limit(const struct concurrency *c)
{
        /* Both terms are below max-children and the CPUs' count: the sum cannot wrap. */
        return clamp_limit(MIN(c->asleep, c->max) + MIN(awake_now(c), c->max), c->max);
}

/* The invariants above. */
static _unused_ bool concurrency_sane(const struct concurrency *c)
{
        if (c->limit < 1 || c->limit > c->max)
                return false;
        if (c->phase == CONCURRENCY_FIXED)
                return true;
        if (c->awake < 1 || c->awake > c->awake_max || (c->probe != CONCURRENCY_STEADY && !c->open))
                return false;
        return c->limit == adaptive_limit(c);
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

void concurrency_init(struct concurrency *c, unsigned max, unsigned fixed, unsigned cpus, bool learn)
{
        max = MAX(max, 1u);
        *c = (struct concurrency){
                .phase = fixed ? CONCURRENCY_FIXED : CONCURRENCY_ADAPTIVE,
                .max = max,
                .awake_max = MAX(cpus, 1u),
                .learn = learn,
                .wait = 1,
                .backoff = 1,
        };
        c->awake = learn ? 1 : c->awake_max;
        c->limit = clamp_limit(fixed ? fixed : c->awake, max);
        assert(concurrency_sane(c));
}

void concurrency_reconfigure(struct concurrency *c, unsigned max, unsigned fixed)
{
        struct concurrency old = *c;

        concurrency_init(c, max, fixed, old.awake_max, old.learn);
        c->awake = old.probe == CONCURRENCY_PROBE_UP ? old.awake - 1 :
                   old.probe == CONCURRENCY_PROBE_DOWN ? old.awake + 1 : old.awake;
        c->asleep = old.asleep;
        c->slept = old.slept;
        c->slept_before = old.slept_before;
        c->next_down = old.next_down;
        (void)update(c);
        c->raised = old.raised;
        c->lowered = old.lowered;
        c->windows = old.windows;
        c->probes = old.probes;
        c->probes_kept = old.probes_kept;
        c->last = old.last;
        assert(concurrency_sane(c));
}

bool concurrency_set_asleep(struct concurrency *c, unsigned asleep)
{
        bool changed;

        c->asleep = asleep;
        c->slept |= asleep > 0;
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

/* ---- the awake part --------------------------------------------------------- */

bool concurrency_higher_pays(const struct concurrency_window *lo, const struct concurrency_window *hi)
{
        double rate_lo, rate_hi, cost_lo, cost_hi;

        if (hi->finished == 0 || hi->usec == 0)
                return false;
        if (lo->finished == 0 || lo->usec == 0)
                return true;
        rate_lo = (double)lo->finished / (double)lo->usec;
        rate_hi = (double)hi->finished / (double)hi->usec;
        cost_lo = (double)lo->cpu_ns / (double)lo->finished;
        cost_hi = (double)hi->cpu_ns / (double)hi->finished;
        return rate_hi * 100 >= rate_lo * (100 + CONCURRENCY_GAIN_PCT) &&
               cost_hi * 100 <= cost_lo * (100 + CONCURRENCY_COST_PCT);
}

uint64_t concurrency_per_cpu_second(const struct concurrency_window *w)
{
        if (w->cpu_ns == 0)
                return 0;
        return (uint64_t)((double)w->finished * 1e9 / (double)w->cpu_ns);
}

bool concurrency_window_due(const struct concurrency *c, usec_t now, uint64_t finished)
{
        uint64_t n;

        if (c->phase == CONCURRENCY_FIXED || !c->learn)
                return false;
        if (!c->open)
                return true;
        n = finished - c->start.finished;
        return n >= CONCURRENCY_WINDOW_EVENTS ||
               (n >= CONCURRENCY_WINDOW_EVENTS_MIN && now - c->start.usec >= CONCURRENCY_WINDOW_USEC);
}

/* Windows at the level kept, then a probe: up and down in turn, where there is room. */
static void steady(struct concurrency *c, unsigned wait)
{
        c->probe = CONCURRENCY_STEADY;
        c->wait = wait;
}

/* A window at the level kept ended (@c->base): start a probe if it is time. */
static void maybe_probe(struct concurrency *c)
{
        bool down;

        if (c->wait > 1) {
                c->wait--;
                return;
        }
        if (c->awake_max == 1)
                return;
        down = c->awake == c->awake_max || (c->next_down && c->awake > 1);
        c->probe = down ? CONCURRENCY_PROBE_DOWN : CONCURRENCY_PROBE_UP;
        c->awake = down ? c->awake - 1 : c->awake + 1;
        c->probes++;
}

/*
 * What comes after a probe: the next one goes the other way where there is
 * room, up after @c->backoff windows, down after CONCURRENCY_BACKOFF_MAX (a
 * level that paid is looked at again, but rarely: each look costs a window
 * at the lower level).
 */
static void next_probe(struct concurrency *c, bool down)
{
        c->next_down = c->awake == c->awake_max || (down && c->awake > 1);
        steady(c, c->next_down ? CONCURRENCY_BACKOFF_MAX : c->backoff);
}

/* A probe's window @w ended: keep the level it ran at, or go back. */
static void judge(struct concurrency *c, const struct concurrency_window *w)
{
        bool up = c->probe == CONCURRENCY_PROBE_UP;
        bool keep = up ? concurrency_higher_pays(&c->base, w) : !concurrency_higher_pays(w, &c->base);

        if (keep) {
                /* A change: the probe's window is the new level's first.  One
                 * more step the same way at once, where there is room; else
                 * the other way, later (that one was just measured). */
                c->probes_kept++;
                c->base = *w;
                c->backoff = up ? 1 : 2;
                if (up ? c->awake < c->awake_max : c->awake > 1) {
                        c->next_down = !up;
                        steady(c, 1);
                        maybe_probe(c);
                } else
                        next_probe(c, up);
                return;
        }
        /* Nothing changes: the next probe later. */
        c->awake = up ? c->awake - 1 : c->awake + 1;
        if (up)
                c->backoff = MIN(2 * c->backoff, (unsigned)CONCURRENCY_BACKOFF_MAX);
        next_probe(c, up);
}

bool concurrency_window(struct concurrency *c, usec_t now, uint64_t finished, uint64_t cpu_ns)
{
        struct concurrency_window w;
        bool changed;

        if (c->phase == CONCURRENCY_FIXED || !c->learn)
                return false;
        if (!c->open) {
                c->open = true;
                c->start = (struct concurrency_window){ finished, cpu_ns, now };
                return false;
        }
        w = (struct concurrency_window){
                .finished = finished - c->start.finished,
                .cpu_ns = cpu_ns > c->start.cpu_ns ? cpu_ns - c->start.cpu_ns : 0,
                .usec = now > c->start.usec ? now - c->start.usec : 0,
        };
        c->start = (struct concurrency_window){ finished, cpu_ns, now };
        if (w.finished == 0 || w.usec == 0)
                return false; /* nothing to judge: the window goes on from here */
        c->windows++;
        c->last = w;
        c->slept_before = c->slept;
        c->slept = c->asleep > 0;
        if (c->probe == CONCURRENCY_STEADY) {
                c->base = w;
                maybe_probe(c);
        } else
                judge(c, &w);
        changed = update(c);
        assert(concurrency_sane(c));
        return changed;
}

bool concurrency_stalled(struct concurrency *c, usec_t now, uint64_t finished)
{
        bool changed;

        if (c->phase == CONCURRENCY_FIXED || !c->learn)
                return false;
        if (c->stall_from == 0 || finished != c->stall_finished || now < c->stall_from) {
                c->stall_from = now; /* something finished since: a new watch */
                c->stall_finished = finished;
                return false;
        }
        if (now - c->stall_from < CONCURRENCY_STALL_USEC)
                return false;
        c->stall_from = now; /* the next step only after as long again */
        if (c->probe == CONCURRENCY_PROBE_UP)
                c->awake--;
        else if (c->probe == CONCURRENCY_PROBE_DOWN)
                c->awake++;
        c->open = false; /* a window that finished nothing judges nothing */
        steady(c, 1);
        if (c->awake >= c->awake_max) {
                changed = update(c);
                assert(concurrency_sane(c));
                return changed;
        }
        c->awake++;
        c->stalls++;
        changed = update(c);
        assert(concurrency_sane(c));
        return changed;
}

bool concurrency_idle(struct concurrency *c)
{
        bool changed;

        if (c->phase == CONCURRENCY_FIXED || !c->learn)
                return false;
        if (c->probe == CONCURRENCY_PROBE_UP)
                c->awake--;
        else if (c->probe == CONCURRENCY_PROBE_DOWN)
                c->awake++;
        c->open = false;
        c->stall_from = 0;
        c->backoff = 1;
        c->next_down = false;
        c->slept = c->asleep > 0;
        c->slept_before = false;
        steady(c, 1);
        changed = update(c);
        assert(concurrency_sane(c));
        return changed;
}
