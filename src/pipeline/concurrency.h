/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How many agents may run at once: a limit on the agents that use the
 * CPUs, not on the ones that sleep.  A pure decision module: the caller
 * looks at the running agents (how much CPU time each used or waited for
 * since the last look, read from the kernel) and tells it how many are
 * asleep; it answers with the limit.  It reads no clock and no file, and
 * allocates nothing.
 *
 * Why.  Too many agents at once only cost where they compete for the CPUs:
 * on a small machine, CPU-bound agents (or agents that are little more than
 * a process start, where spawning is the bottleneck) finish no more events
 * per second with more of them at once, only later each, with more memory
 * and cache thrash.  Agents that sleep (a modprobe waiting for firmware, a
 * script waiting for a device node, a sleep) cost a slot and nothing else,
 * and each one more at once finishes events sooner.  So the rule does not
 * learn a number of agents from the completion rate (that took windows as
 * long as a whole coldplug, started at one agent and held an unrelated
 * device's event behind one long agent); it counts the agents that want a
 * CPU, which the kernel says at once:
 *
 *  - An agent is asleep when, since the caller's last look, it was on a CPU
 *    or waiting in a run queue for less than half the time
 *    (concurrency_agent_asleep(); /proc/PID/schedstat has both), and it is
 *    not runnable at the look (the caller reads its state: the kernel adds
 *    a task's wait for a CPU only when it gets one, so a queued agent's
 *    counters stand still).  An agent not looked at yet counts as awake.
 *  - limit = min(max, awake_max + asleep), awake_max being what the machine
 *    runs at once (the daemon says: its CPUs and one spare, which keeps a
 *    CPU busy while the agent that left it is reaped and the next one
 *    spawned), and any number asleep up to max-children.
 * So the limit starts where the machine says (no window to wait for),
 * CPU-bound agents never run more than awake_max at once, and sleeping
 * agents climb to max-children at awake_max more per look (the caller looks
 * every HP_CONCURRENCY_LOOK_USEC while events wait for a slot).  An agent
 * that is asleep when it is a script waiting for a CPU-bound child counts as
 * asleep: the bound then is max-children, as with a fixed limit.
 *
 * A fixed limit (concurrency=N) is never changed.
 *
 * Invariants: 1 <= limit <= max; in FIXED the limit never changes; in
 * ADAPTIVE, limit == min(max, awake_max + asleep).
 */

#include <stdbool.h>
#include <stdint.h>

#include "shared/time-util.h"

enum concurrency_phase {
        CONCURRENCY_FIXED,      /* pinned by the configuration */
        CONCURRENCY_ADAPTIVE,   /* awake_max (the CPUs and one) plus the agents asleep */
};

struct concurrency {
        enum concurrency_phase phase;
        unsigned limit;         /* agents allowed at once now */
        unsigned max;           /* max-children */
        unsigned awake_max;     /* agents allowed on (or waiting for) a CPU at once: the CPUs */
        unsigned asleep;        /* running agents seen asleep at the last look */

        /* What status shows. */
        uint64_t raised, lowered;
};

/**
 * concurrency_init() - adapt, or pin the limit.
 * @c: state (overwritten)
 * @max: the upper bound (max-children, >= 1)
 * @fixed: 0 to adapt, else the pinned limit (clamped to @max)
 * @cpus: the machine's CPUs (>= 1): how many awake agents at once
 */
void concurrency_init(struct concurrency *c, unsigned max, unsigned fixed, unsigned cpus);

/*
 * The configuration changed (reload): a new @max or @fixed; the CPUs and the
 * agents asleep stay, and so do the counters.
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

/* "fixed" or "adaptive" (status, the control protocol). */
const char *concurrency_phase_to_string(enum concurrency_phase p);
