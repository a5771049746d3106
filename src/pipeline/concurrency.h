/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Adaptive concurrency: how many agents may run at once, learned from the
 * measured completion rate.  A pure decision module: it is told when an
 * event finished (with the time, read by the caller) and when a slot was
 * free with nothing to run; it answers with the limit.  It reads no clock
 * and allocates nothing.
 *
 * The rule.  The limit L stays within 1..max.  Time is cut into windows
 * during which every one of the L slots was busy the whole time ("busy
 * windows"): a window ends after at least 2*L completions and
 * HP_CONCURRENCY_WINDOW_USEC, and its rate is completions per second.  A
 * window in which a slot was ever free with nothing runnable, or the
 * limit changed, measures the input, not the machine, and is thrown away.
 *  - Start: L = 1 (strict's pace; the caller may choose another start);
 *    slow start doubles L after each busy window while the rate rises by
 *    more than HP_CONCURRENCY_GAIN_PCT.
 *  - Then additive increase: after a window at L, probe L+1; keep it if its
 *    rate beats L's by more than HP_CONCURRENCY_GAIN_PCT, else go back to
 *    L and wait before the next probe (1, 3, 7 ... windows, at most
 *    HP_CONCURRENCY_HOLD_MAX).  Probes alternate with probes of L-1, kept
 *    unless slower than L by more than half HP_CONCURRENCY_GAIN_PCT: about
 *    the same work with fewer agents (less CPU, less contention) is better.
 *  - Multiplicative decrease: a window at L whose rate fell more than
 *    HP_CONCURRENCY_DROP_PCT below the previous one at L (the machine got
 *    busier) cuts L by a quarter, kept unless that is slower still.
 *  - Stall: when nothing completed for HP_CONCURRENCY_STALL_USEC while
 *    events waited for a slot, L rises by one, and again after each such
 *    period: agents that sleep or wait for each other (one agent waiting
 *    for another device's agent) are never held up by the limit for long.
 * A probe costs at most one window at a worse limit and probes back off
 * exponentially, so on a machine where one agent at a time is fastest the
 * limit stays at 1 and devpath runs at strict's pace; where agents wait
 * (sleep, I/O) or the machine has cores to spare, it climbs to what helps.
 *
 * A fixed limit (concurrency=N) is never changed.
 */

#include <stdbool.h>
#include <stdint.h>

#include "shared/time-util.h"

enum concurrency_phase {
        CONCURRENCY_FIXED,      /* pinned by the configuration */
        CONCURRENCY_SLOW_START, /* doubling while it pays */
        CONCURRENCY_STEADY,     /* probing one step up or down now and then */
};

struct concurrency {
        enum concurrency_phase phase;
        unsigned limit;         /* agents allowed at once now */
        unsigned max;           /* max-children */
        unsigned start;         /* where adapting starts */

        /* The window being measured (start 0: none). */
        usec_t win_start;
        unsigned win_done;

        /* The last busy window at the settled limit, which probes are compared with. */
        unsigned ref_limit;     /* the settled limit (limit differs from it while probing) */
        double ref_rate;        /* its completions per second, 0 if not measured yet */
        unsigned hold;          /* windows to wait before the next probe */
        unsigned backoff;       /* next value of hold after a rejected probe */
        bool probe_down;        /* the next probe is L-1 */

        /* What status shows. */
        double last_rate;       /* rate of the last busy window */
        unsigned last_limit;    /* its limit */
        uint64_t windows;       /* busy windows measured */
        uint64_t raised, lowered;
        uint64_t stalls;        /* raises because nothing completed */
};

/**
 * concurrency_init() - start adapting, or pin the limit.
 * @c: state (overwritten)
 * @max: the upper bound (max-children, >= 1)
 * @fixed: 0 to adapt, else the pinned limit (clamped to @max)
 * @start: where adapting starts (clamped to 1..@max); the daemon uses 1
 */
void concurrency_init(struct concurrency *c, unsigned max, unsigned fixed, unsigned start);

/*
 * The configuration changed (reload).  A new @fixed or @max keeps what was
 * learned where it still applies: the limit is clamped to the new @max; from
 * fixed to adaptive, adapting starts again from the start.
 */
void concurrency_reconfigure(struct concurrency *c, unsigned max, unsigned fixed);

/**
 * concurrency_done() - an event finished at @now with every slot busy
 * before it (call concurrency_idle() instead of this whenever a slot was
 * left free since).
 * Return: true if the limit changed (read it with c->limit).
 */
bool concurrency_done(struct concurrency *c, usec_t now);

/**
 * concurrency_idle() - a slot is free and nothing may start.
 * @c: state
 * @running: events running now
 * @blocked: events are queued, each waiting for an earlier related one
 *
 * The window being measured is void.  With @blocked, the events' own
 * dependencies allow only @running at once now: a limit above that is the
 * same as @running and could never be measured, so it comes down to it (a
 * probe above it is over).
 */
void concurrency_idle(struct concurrency *c, unsigned running, bool blocked);

/*
 * Nothing completed for HP_CONCURRENCY_STALL_USEC while events waited for a
 * slot: the agents running are waiting, not working (or wait for each
 * other), so one more may start.  Return: true if the limit rose.
 */
bool concurrency_stalled(struct concurrency *c);

/* "fixed", "slow-start" or "adaptive" (status, the control protocol). */
const char *concurrency_phase_to_string(enum concurrency_phase p);
