/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The dependency scheduler: a pure decision module.  It holds events that
 * are queued or running and says which may run next; it never runs
 * anything, reads no clock and knows nothing of the event loop.
 *
 * Rule (ordering=devpath): an event may start only when no earlier (lower
 * SEQNUM) unfinished event is on the same DEVPATH, on an ancestor or
 * descendant path (path-component prefix), or has DEVPATH_OLD equal to its
 * DEVPATH or DEVPATH equal to its DEVPATH_OLD (and the same prefix rules for
 * DEVPATH_OLD).  Among runnable events the lowest SEQNUM goes first.
 * ordering=strict: one event at a time, in SEQNUM order.
 * ordering=none: every event is runnable at once (the kernel helper's way),
 * still bounded by max_running.
 *
 * Cost: push, next and done are amortised O(path depth + log held events);
 * no operation scans the whole queue.  A late push also steps past the
 * held events with a higher SEQNUM on its path and below its ancestors
 * (from whichever side is shorter; see pipeline/pathindex.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct uevent;

enum ordering {
        ORDERING_DEVPATH,
        ORDERING_STRICT,
        ORDERING_NONE,
        _ORDERING_MAX,
};

const char *ordering_to_string(enum ordering o);
/* Return: the ordering, or -EINVAL. */
int ordering_from_string(const char *s);

struct scheduler;

/**
 * scheduler_new() - create an empty scheduler.
 * @mode: ordering mode
 * @max_running: events allowed to run at once (>= 1)
 * @max_held: events held (queued + running) at most (>= 1)
 * @ret: the scheduler, owned by the caller (scheduler_free()).
 * Return: 0 or -ENOMEM / -EINVAL.
 */
int scheduler_new(enum ordering mode, unsigned max_running, size_t max_held, struct scheduler **ret);

/* Frees the scheduler, not the events (they remain the caller's). Accepts NULL; returns NULL. */
struct scheduler *scheduler_free(struct scheduler *s);

/* Change mode or max_running at run time (reload); held events keep their places. */
void scheduler_set_mode(struct scheduler *s, enum ordering mode, unsigned max_running);

/**
 * scheduler_push() - queue an event.
 * @s: scheduler
 * @ev: event (borrowed until scheduler_done() or scheduler_pop_queued() gives it back;
 *      meanwhile the scheduler owns ev->sched_data)
 *
 * Events are normally pushed in SEQNUM order; a late (lower) SEQNUM is
 * placed where it belongs.  The same SEQNUM must not be pushed twice.
 * Return: 0; -ENOSPC when max_held events are held (nothing is changed; the
 * caller must stop reading input until scheduler_held() drops); -ENOMEM.
 */
int scheduler_push(struct scheduler *s, struct uevent *ev);

/**
 * scheduler_next() - take the next event that may start now.
 * Return: the event (now counted as running), or NULL if none may start
 * (queue empty, all blocked, max_running reached, or paused).
 */
struct uevent *scheduler_next(struct scheduler *s);

/* The event returned by scheduler_next() has finished. The caller owns @ev again. */
void scheduler_done(struct scheduler *s, struct uevent *ev);

/**
 * scheduler_blocker() - why is a queued event waiting?
 * @s: scheduler
 * @ev: a queued (not running) event
 * Return: the earliest unfinished event it depends on (borrowed), or NULL if it is runnable
 * or its wait is only for a free slot.  This is what it waits for now; what
 * it waited for in the end (the last of these to finish) is scheduler_waited()'s.
 */
const struct uevent *scheduler_blocker(const struct scheduler *s, const struct uevent *ev);

/**
 * struct scheduler_wait - what an event that has just started waited for.
 * @blocker: SEQNUM of the event it waited for last (the last of its blockers
 *      to finish; strict: the one that ran before it), 0 if it waited for none
 * @blocker_devpath: that event's DEVPATH (borrowed, valid until the event is
 *      done or the next scheduler_next()); NULL if @blocker is 0 or it is not known
 * @slot_limit: > 0 if it was runnable but had to wait for a free slot: the
 *      limit (max_running) when it started
 */
struct scheduler_wait {
        uint64_t blocker;
        const char *blocker_devpath;
        unsigned slot_limit;
};

/**
 * scheduler_waited() - why the event scheduler_next() just returned waited.
 * @s: scheduler
 * @ev: a running event
 * @ret: filled in (all zero if it did not wait or is not running)
 */
void scheduler_waited(const struct scheduler *s, const struct uevent *ev, struct scheduler_wait *ret);

/* Remove and return queued (not running) events one by one, lowest SEQNUM first (shutdown, hand-over). */
struct uevent *scheduler_pop_queued(struct scheduler *s);

/* Times a queued event was looked at again because what it waited for left
 * (or a late push came): about one per event; much more would mean a chain. */
uint64_t scheduler_rechecks(const struct scheduler *s);

/* Lowest SEQNUM queued or running, 0 if nothing is held (settle). */
uint64_t scheduler_lowest_held(const struct scheduler *s);

/* Lowest SEQNUM queued or running whose DEVPATH or DEVPATH_OLD is exactly @devpath, 0 if none (wait). */
uint64_t scheduler_lowest_held_on(const struct scheduler *s, const char *devpath);

size_t scheduler_queued(const struct scheduler *s);
/* True if an event waits only for a free slot (max_running reached); never in strict. */
bool scheduler_slot_wanted(const struct scheduler *s);
size_t scheduler_running(const struct scheduler *s);
/* Bytes the held events cost: their copies (uevent_copy_size()), items, path index nodes and heaps. */
size_t scheduler_bytes(const struct scheduler *s);
static inline size_t scheduler_held(const struct scheduler *s)
{
        return scheduler_queued(s) + scheduler_running(s);
}
