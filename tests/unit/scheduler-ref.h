/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The reference model of the scheduler: the first, naive implementation
 * (O(queue) per call), kept as the specification that the indexed one in
 * src/pipeline/scheduler.c is compared against (tests/unit/test-scheduler.c) and
 * timed against (bench/bench-scheduler.c).  It keeps its per-event record in
 * ev->owner_data, so one event can be held by both at once.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/scheduler.h"
#include "uevent/uevent.h"

struct ref_item {
        struct uevent *ev;
        bool running;
        struct ref_item *prev, *next;
};

struct ref_sched {
        enum ordering mode;
        unsigned max_running;
        size_t max_held;
        size_t n_queued, n_running;
        struct ref_item *head, *tail;
};

static inline struct ref_sched *ref_new(enum ordering mode, unsigned max_running, size_t max_held)
{
        struct ref_sched *s = calloc(1, sizeof(*s));

        if (!s)
                abort();
        s->mode = mode;
        s->max_running = max_running;
        s->max_held = max_held;
        return s;
}

static inline void ref_free(struct ref_sched *s)
{
        for (struct ref_item *i = s->head, *n; i; i = n) {
                n = i->next;
                i->ev->owner_data = NULL;
                free(i);
        }
        free(s);
}

static inline void ref_set_mode(struct ref_sched *s, enum ordering mode, unsigned max_running)
{
        s->mode = mode;
        s->max_running = max_running ? max_running : 1;
}

/* Sorted insertion, scanning back from the tail. */
static inline int ref_push(struct ref_sched *s, struct uevent *ev)
{
        struct ref_item *it, *after;

        if (s->n_queued + s->n_running >= s->max_held)
                return -ENOSPC;
        it = calloc(1, sizeof(*it));
        if (!it)
                return -ENOMEM;
        it->ev = ev;
        ev->owner_data = it;
        for (after = s->tail; after && after->ev->seqnum > ev->seqnum; after = after->prev)
                ;
        it->prev = after;
        it->next = after ? after->next : s->head;
        if (it->next)
                it->next->prev = it;
        else
                s->tail = it;
        if (after)
                after->next = it;
        else
                s->head = it;
        s->n_queued++;
        return 0;
}

static inline bool ref_path_related(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        return devpath_is_prefix(a, la, b, lb) || devpath_is_prefix(b, lb, a, la);
}

/* The rule itself: does @later have to wait for @earlier? */
static inline bool ref_depends(const struct uevent *later, const struct uevent *earlier)
{
        if (ref_path_related(later->devpath, earlier->devpath))
                return true;
        if (later->devpath_old && ref_path_related(later->devpath_old, earlier->devpath))
                return true;
        if (earlier->devpath_old && ref_path_related(later->devpath, earlier->devpath_old))
                return true;
        return false;
}

static inline const struct ref_item *ref_blocker_of(const struct ref_sched *s, const struct ref_item *it)
{
        for (const struct ref_item *e = s->head; e && e != it; e = e->next) {
                if (s->mode == ORDERING_STRICT)
                        return e;
                if (s->mode == ORDERING_DEVPATH && ref_depends(it->ev, e->ev))
                        return e;
        }
        return NULL;
}

static inline const struct uevent *ref_blocker(const struct ref_sched *s, const struct uevent *ev)
{
        const struct ref_item *b = ref_blocker_of(s, ev->owner_data);
        return b ? b->ev : NULL;
}

static inline struct uevent *ref_next(struct ref_sched *s)
{
        if (s->n_running >= s->max_running || (s->mode == ORDERING_STRICT && s->n_running > 0))
                return NULL;
        for (struct ref_item *it = s->head; it; it = it->next) {
                if (it->running || ref_blocker_of(s, it))
                        continue;
                it->running = true;
                s->n_queued--;
                s->n_running++;
                return it->ev;
        }
        return NULL;
}

static inline void ref_unlink(struct ref_sched *s, struct ref_item *it)
{
        if (it->prev)
                it->prev->next = it->next;
        else
                s->head = it->next;
        if (it->next)
                it->next->prev = it->prev;
        else
                s->tail = it->prev;
        it->ev->owner_data = NULL;
        free(it);
}

static inline void ref_done(struct ref_sched *s, struct uevent *ev)
{
        struct ref_item *it = ev->owner_data;

        if (!it || !it->running)
                return;
        s->n_running--;
        ref_unlink(s, it);
}

static inline struct uevent *ref_pop_queued(struct ref_sched *s)
{
        for (struct ref_item *it = s->head; it; it = it->next) {
                if (it->running)
                        continue;
                struct uevent *ev = it->ev;
                s->n_queued--;
                ref_unlink(s, it);
                return ev;
        }
        return NULL;
}
