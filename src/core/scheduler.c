/* SPDX-License-Identifier: MIT */
/*
 * PLACEHOLDER naive scheduler (O(queue) per call): correct semantics, to be
 * replaced by the indexed implementation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler.h"
#include "uevent.h"

struct item {
        struct uevent *ev;
        bool running;
        struct item *prev, *next;
};

struct scheduler {
        enum ordering mode;
        unsigned max_running;
        size_t max_held;
        size_t n_queued, n_running;
        struct item *head, *tail;
};

const char *ordering_to_string(enum ordering o)
{
        switch (o) {
        case ORDERING_DEVPATH:
                return "devpath";
        case ORDERING_STRICT:
                return "strict";
        case ORDERING_NONE:
                return "none";
        default:
                return NULL;
        }
}

int ordering_from_string(const char *s)
{
        for (int o = 0; o < _ORDERING_MAX; o++)
                if (strcmp(s, ordering_to_string((enum ordering)o)) == 0)
                        return o;
        return -EINVAL;
}

int scheduler_new(enum ordering mode, unsigned max_running, size_t max_held, struct scheduler **ret)
{
        struct scheduler *s;

        if (max_running < 1 || max_held < 1)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;
        s->max_running = max_running;
        s->max_held = max_held;
        *ret = s;
        return 0;
}

struct scheduler *scheduler_free(struct scheduler *s)
{
        if (!s)
                return NULL;
        for (struct item *i = s->head, *n; i; i = n) {
                n = i->next;
                i->ev->sched_data = NULL;
                free(i);
        }
        free(s);
        return NULL;
}

void scheduler_set_mode(struct scheduler *s, enum ordering mode, unsigned max_running)
{
        s->mode = mode;
        s->max_running = max_running ? max_running : 1;
}

int scheduler_push(struct scheduler *s, struct uevent *ev)
{
        struct item *it, *after;

        if (s->n_queued + s->n_running >= s->max_held)
                return -ENOSPC;
        it = calloc(1, sizeof(*it));
        if (!it)
                return -ENOMEM;
        it->ev = ev;
        ev->sched_data = it;
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

static bool path_related(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        return devpath_is_prefix(a, la, b, lb) || devpath_is_prefix(b, lb, a, la);
}

static bool depends(const struct uevent *later, const struct uevent *earlier)
{
        if (path_related(later->devpath, earlier->devpath))
                return true;
        if (later->devpath_old && path_related(later->devpath_old, earlier->devpath))
                return true;
        if (earlier->devpath_old && path_related(later->devpath, earlier->devpath_old))
                return true;
        return false;
}

static const struct item *blocker_of(const struct scheduler *s, const struct item *it)
{
        for (const struct item *e = s->head; e && e != it; e = e->next) {
                if (s->mode == ORDERING_STRICT)
                        return e;
                if (s->mode == ORDERING_DEVPATH && depends(it->ev, e->ev))
                        return e;
        }
        return NULL;
}

const struct uevent *scheduler_blocker(const struct scheduler *s, const struct uevent *ev)
{
        const struct item *b = blocker_of(s, ev->sched_data);
        return b ? b->ev : NULL;
}

struct uevent *scheduler_next(struct scheduler *s)
{
        if (s->n_running >= s->max_running || (s->mode == ORDERING_STRICT && s->n_running > 0))
                return NULL;
        for (struct item *it = s->head; it; it = it->next) {
                if (it->running || blocker_of(s, it))
                        continue;
                it->running = true;
                s->n_queued--;
                s->n_running++;
                return it->ev;
        }
        return NULL;
}

static void unlink_item(struct scheduler *s, struct item *it)
{
        if (it->prev)
                it->prev->next = it->next;
        else
                s->head = it->next;
        if (it->next)
                it->next->prev = it->prev;
        else
                s->tail = it->prev;
        it->ev->sched_data = NULL;
        free(it);
}

void scheduler_done(struct scheduler *s, struct uevent *ev)
{
        struct item *it = ev->sched_data;

        if (!it || !it->running)
                return;
        s->n_running--;
        unlink_item(s, it);
}

struct uevent *scheduler_pop_queued(struct scheduler *s)
{
        for (struct item *it = s->head; it; it = it->next) {
                if (it->running)
                        continue;
                struct uevent *ev = it->ev;
                s->n_queued--;
                unlink_item(s, it);
                return ev;
        }
        return NULL;
}

size_t scheduler_queued(const struct scheduler *s)
{
        return s->n_queued;
}

size_t scheduler_running(const struct scheduler *s)
{
        return s->n_running;
}
