/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How many agents may run at once: a limit on the agents that use the
 * CPUs, not on the ones that sleep.  A pure decision module: the caller
 * looks at the running agents (how much CPU time each used or waited for
 * since the last look, read from the kernel) and tells it how many are
 * asleep, and at the end of each window of completions it tells how many
 * events finished and how much CPU time the daemon and its agents used;
 * it answers with the limit.  It reads no clock and no file, and
 * allocates nothing.
 *
 * Why.  Too many agents at once only cost where they compete for the CPUs:
 * on a small machine, CPU-bound agents (or agents that are little more than
 * a process start, where spawning is the bottleneck) finish no more events
 * per second with more of them at once, only later each, with more memory
 * and cache thrash, and each spawn costs the daemon more CPU (on a machine
 * where two spawning loops finish 1.13x what one does, devpath ordering with
 * three awake agents spent 1.58x the daemon CPU of strict ordering for 1%
 * more events per second: bench/RESULTS.md).  Agents that sleep (a modprobe
 * waiting for firmware, a script waiting for a device node, a sleep) cost a
 * slot and nothing else, and each one more at once finishes events sooner.
 * So the limit has two parts:
 *
 *  - The agents asleep, which the kernel says at once: an agent is asleep
 *    when, since the caller's last look, it was on a CPU or waiting in a run
 *    queue for less than half the time (concurrency_agent_asleep();
 *    /proc/PID/schedstat has both), and it is not runnable at the look (the
 *    caller reads its state: the kernel adds a task's wait for a CPU only
 *    when it gets one, so a queued agent's counters stand still).  An agent
 *    not looked at yet counts as awake.  Each one asleep lets one more start,
 *    up to max-children.
 *  - The awake part: how many agents that use a CPU (or were not looked at
 *    yet) run at once, from 1 to awake_max (what the machine could run at
 *    once: the daemon says its CPUs and one spare, which keeps a CPU busy
 *    while the agent that left it is reaped and the next one spawned).  It
 *    starts at 1 and is learnt from windows of completions: what a second
 *    agent at once buys is measured, not assumed.  A window ends at the
 *    completion that makes CONCURRENCY_WINDOW_EVENTS, or
 *    CONCURRENCY_WINDOW_EVENTS_MIN once CONCURRENCY_WINDOW_USEC passed, and
 *    it gives the events finished per second and per CPU-second (the
 *    daemon's CPU and its reaped agents').  Now and then one window runs one
 *    level up or down (a probe): up after one window at the level kept, then
 *    after twice as many each time a probe up changed nothing (at most
 *    CONCURRENCY_BACKOFF_MAX); down, from a level above one, after
 *    CONCURRENCY_BACKOFF_MAX windows (each probe down costs a window at the
 *    lower level); after a probe that changed the level, one more step the
 *    same way at once.  The higher of the two levels is kept only if, in its
 *    window, events finished at least CONCURRENCY_GAIN_PCT more per second
 *    AND used at most CONCURRENCY_COST_PCT more CPU each
 *    (concurrency_higher_pays()): throughput must rise, and by more than
 *    the CPU it costs rises, give or take the noise of one window.
 *    Otherwise the lower level is kept.  A probe's window is judged only
 *    against the window just before it, at the level kept, so a machine
 *    whose load drifts slowly falls on both alike.  When nothing waits any
 *    more (the queue ran empty) the window is dropped, a probe under way
 *    goes back, and the next busy spell probes after its first window (up,
 *    where there is room).  The part learnt holds where no agent sleeps:
 *    once one was seen asleep in this window or the one before (slept,
 *    slept_before), the agents not looked at yet are likely to sleep too,
 *    and the awake part is awake_max, as if nothing had been learnt.
 *
 *  - limit = min(max, asleep + (slept ? awake_max : awake)).
 *
 * So CPU-bound agents that gain from a second CPU climb to it within two
 * windows (twice the events per second at the same CPU each), agents where
 * spawning is the bottleneck stay at one awake agent and cost no more CPU
 * per event than strict ordering (but for a probe window now and then), and
 * sleeping agents climb to max-children at awake_max more per look (the
 * caller looks at each agent HP_CONCURRENCY_LOOK_FIRST_USEC after its start,
 * then every HP_CONCURRENCY_LOOK_USEC while it sleeps, while events wait for
 * a slot)
 * whatever the awake part learnt (from one awake slot, the climb was a
 * third as fast and fell behind agents that slept 100 ms on a loaded
 * machine).  An agent that is asleep when it is
 * a script waiting for a CPU-bound child counts as asleep: the bound then is
 * max-children, as with a fixed limit.
 *
 * Windows end at completions, so agents that hold every awake slot and do
 * not finish (one spinning until its timeout) would hold the other
 * devices' events as long: when no event finished for
 * CONCURRENCY_STALL_USEC while events wait for a slot
 * (concurrency_stalled(), at the caller's looks), the awake part goes up
 * one, to awake_max at most, a probe under way being dropped; the windows
 * after judge that level as any other.
 *
 * A fixed limit (concurrency=N) is never changed, and neither is the awake
 * part where the caller says there is nothing to learn (a dry run, whose
 * jobs run nothing: it stays at awake_max).
 *
 * Invariants: 1 <= limit <= max; in FIXED the limit never changes; in
 * ADAPTIVE, 1 <= awake <= awake_max and limit == min(max, asleep + (slept ?
 * awake_max : awake)); a probe is under way only while a window is open.
 */

#include <stdbool.h>
#include <stdint.h>

#include "shared/time-util.h"

/* The windows (see above). */
#define CONCURRENCY_WINDOW_EVENTS 16
#define CONCURRENCY_WINDOW_EVENTS_MIN 4
#define CONCURRENCY_WINDOW_USEC (100 * USEC_PER_MSEC)
#define CONCURRENCY_GAIN_PCT 5
#define CONCURRENCY_COST_PCT 10
#define CONCURRENCY_BACKOFF_MAX 32
/* No event finished for this long while others wait for a slot: one awake agent more. */
#define CONCURRENCY_STALL_USEC (1 * USEC_PER_SEC)

enum concurrency_phase {
        CONCURRENCY_FIXED,      /* pinned by the configuration */
        CONCURRENCY_ADAPTIVE,   /* the awake part, learnt, plus the agents asleep */
};

enum concurrency_probe {
        CONCURRENCY_STEADY,     /* the window runs at the level kept */
        CONCURRENCY_PROBE_UP,   /* the window runs one awake agent above it */
        CONCURRENCY_PROBE_DOWN, /* the window runs one below it */
};

/* What a window measured (or, for the one open, the caller's counters when it opened). */
struct concurrency_window {
        uint64_t finished;      /* events finished */
        uint64_t cpu_ns;        /* CPU time of the daemon and its reaped children */
        usec_t usec;            /* wall time (CLOCK_MONOTONIC) */
};

struct concurrency {
        enum concurrency_phase phase;
        unsigned limit;         /* agents allowed at once now */
        unsigned max;           /* max-children */
        unsigned awake_max;     /* awake agents at once at most: the CPUs and one */
        unsigned awake;         /* learnt, 1..awake_max: awake agents at once while none sleeps */
        unsigned asleep;        /* running agents seen asleep at the last look */
        bool learn;             /* false: the awake part stays at awake_max */
        bool slept, slept_before; /* agents were seen asleep in this window, in the one before */

        /* The windows. */
        bool open;                      /* a window is open, since @start */
        struct concurrency_window start;
        struct concurrency_window base; /* the last window at the level kept */
        enum concurrency_probe probe;
        bool next_down;                 /* the next probe goes down (they take turns) */
        unsigned wait;                  /* windows at the level kept before the next probe */
        unsigned backoff;               /* windows between probes now */

        /* Stalls: since when no event finished (@stall_finished of the caller's counter). */
        usec_t stall_from;
        uint64_t stall_finished;

        /* What status shows. */
        uint64_t raised, lowered, stalls;
        uint64_t windows, probes, probes_kept;
        struct concurrency_window last; /* the last window judged */
};

/**
 * concurrency_init() - adapt, or pin the limit.
 * @c: state (overwritten)
 * @max: the upper bound (max-children, >= 1)
 * @fixed: 0 to adapt, else the pinned limit (clamped to @max)
 * @cpus: the awake agents at once at most (>= 1): the CPUs and one
 * @learn: learn the awake part from windows (starts at 1); false: it stays at @cpus
 */
void concurrency_init(struct concurrency *c, unsigned max, unsigned fixed, unsigned cpus, bool learn);

/*
 * The configuration changed (reload): a new @max or @fixed; the CPUs, the
 * awake part learnt and the agents asleep stay, and so do the counters; a
 * window open is dropped.
 */
void concurrency_reconfigure(struct concurrency *c, unsigned max, unsigned fixed);

/**
 * concurrency_set_asleep() - this many running agents are asleep now.
 * @c: state
 * @asleep: running agents seen asleep (an agent that finished no longer counts)
 *
 * Return: true if the limit changed (read it with c->limit).
 */
bool concurrency_set_asleep(struct concurrency *c, unsigned asleep);

/**
 * concurrency_agent_asleep() - was an agent asleep since the last look?
 * @busy_then_ns: its time on a CPU plus its time waiting for one, at the last look (0 at its start)
 * @busy_now_ns: the same now
 * @then: when the last look was (or when it started)
 * @now: now (@then <= @now, same clock)
 *
 * Return: true if it was on or waiting for a CPU less than half the time
 * between; false if no time passed.
 */
bool concurrency_agent_asleep(uint64_t busy_then_ns, uint64_t busy_now_ns, usec_t then, usec_t now);

/**
 * concurrency_window_due() - should the caller end the window now?
 * @c: state
 * @now: now (CLOCK_MONOTONIC)
 * @finished: events finished so far (a counter that only grows)
 *
 * Called at each event finished while others wait; cheap, so that the
 * caller reads the CPU times only when a window ends.
 *
 * Return: true if no window is open (one should open) or the open one is
 * over; false otherwise and for a fixed limit or an awake part not learnt.
 */
bool concurrency_window_due(const struct concurrency *c, usec_t now, uint64_t finished);

/**
 * concurrency_window() - end the open window (and open the next), or open one.
 * @c: state
 * @now: now (CLOCK_MONOTONIC)
 * @finished: events finished so far
 * @cpu_ns: CPU time the daemon and its reaped children used so far
 *
 * The window is judged (see above): a probe starts, is kept or goes back.
 *
 * Return: true if the limit changed (read it with c->limit).
 */
bool concurrency_window(struct concurrency *c, usec_t now, uint64_t finished, uint64_t cpu_ns);

/**
 * concurrency_idle() - nothing waits for a slot any more (the queue ran empty).
 * @c: state
 *
 * The open window is dropped, a probe under way goes back, and the next
 * busy spell probes after its first window.
 *
 * Return: true if the limit changed.
 */
bool concurrency_idle(struct concurrency *c);

/**
 * concurrency_higher_pays() - is the higher of two levels worth its CPU?
 * @lo: a window at the lower level
 * @hi: a window at the higher level
 *
 * Return: true if @hi finished at least CONCURRENCY_GAIN_PCT more events per
 * second than @lo, using at most CONCURRENCY_COST_PCT more CPU per event.
 */
bool concurrency_higher_pays(const struct concurrency_window *lo, const struct concurrency_window *hi);

/**
 * concurrency_per_cpu_second() - events a window finished per CPU-second.
 * @w: a window
 *
 * Return: the rate, rounded down; 0 if it finished nothing or used no CPU.
 */
uint64_t concurrency_per_cpu_second(const struct concurrency_window *w);

/**
 * concurrency_stalled() - events wait for a slot: has none finished for long?
 * @c: state
 * @now: now (CLOCK_MONOTONIC)
 * @finished: events finished so far (a counter that only grows)
 *
 * Called at each look while events wait for a slot.  When @finished did not
 * move for CONCURRENCY_STALL_USEC since the first call that saw it, the
 * awake part goes up one (to awake_max at most): see above.
 *
 * Return: true if the limit changed.
 */
bool concurrency_stalled(struct concurrency *c, usec_t now, uint64_t finished);

/* "fixed" or "adaptive" (status, the control protocol). */
const char *concurrency_phase_to_string(enum concurrency_phase p);
