/* SPDX-License-Identifier: MIT */
/*
 * The dependency scheduler (see scheduler.h for the rule).
 *
 * Every held event has an item (ev->sched_data) in one of three states:
 *  - BLOCKED: queued, and parked on the waiter list of one earlier related
 *    held item (its "blocker"); it is looked at again only when that one
 *    leaves.  It parks on a late blocker, usually its predecessor on the same
 *    path, so a chain of events on one device wakes one event per finish.
 *  - READY: queued, in the ready heap; when it was placed there no earlier
 *    held item was related to it.  Only a late push (lower SEQNUM than one
 *    already pushed) can change that; it bumps the epoch, and READY items of
 *    an older epoch are checked again before they start.
 *  - RUNNING: on the running list.
 * All queued items are also in the queue heap (by SEQNUM), which serves
 * ordering=strict and =none and scheduler_pop_queued().  These structures do
 * not depend on the mode, so the mode can change at any time.
 *
 * What a started event waited for: a BLOCKED item is woken by the leave of
 * the item it is parked on, and parks again while any related earlier item
 * is held, so the item whose leave made it READY is the last of its blockers
 * to finish (waited_seq, with a copy of its DEVPATH).  In strict order it is
 * the event done last before it started, if any was done after it was
 * pushed.  A slot wait is seen through a counter of the times
 * scheduler_next() refused a runnable event for want of a slot: an item that
 * started after such a refusal, since it became runnable, waited for one.
 *
 * Earlier related held items are found through the path index
 * (pathindex.h) in O(path depth), never by a scan of the queue.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/heap.h"
#include "shared/list.h"
#include "shared/macro.h"
#include "pipeline/pathindex.h"
#include "pipeline/scheduler.h"
#include "uevent/uevent.h"

enum item_state {
        ITEM_BLOCKED,
        ITEM_READY,
        ITEM_RUNNING,
};

enum { HEAP_QUEUED, HEAP_READY, _HEAP_MAX };

struct item {
        struct uevent *ev;
        struct item *blocker;       /* BLOCKED: the item it waits for */
        struct list_node waiters;   /* items parked on this one, newest first */
        struct list_node link;      /* in blocker->waiters, or (RUNNING) in s->running */
        uint32_t hidx[_HEAP_MAX];   /* position in each heap */
        uint32_t epoch;             /* READY: s->epoch when it became ready */
        uint8_t state;
        bool has_old;
        unsigned slot_limit;        /* RUNNING: waited for a slot, limit then; 0: did not */
        uint64_t slot_mark;         /* s->slot_refusals when it became runnable */
        uint64_t done_mark;         /* s->n_done when it was pushed (strict) */
        uint64_t waited_seq;        /* the last blocker to leave, 0: none yet */
        char *waited_path;          /* its DEVPATH (owned), NULL if unknown */
        struct pi_entry d;          /* by DEVPATH; d.seq is the SEQNUM */
        struct pi_entry o;          /* by DEVPATH_OLD, if has_old */
        size_t bytes;               /* this item's allocation and its event's (uevent_copy_size()) */
        struct pi_link links[];     /* d's, then o's (pathindex_links()) */
};

struct scheduler {
        enum ordering mode;
        unsigned max_running;
        size_t max_held;
        size_t n_running;
        uint64_t max_seq;
        uint32_t epoch;
        bool pushed;
        uint64_t rechecks;
        uint64_t slot_refusals;     /* scheduler_next() refusals of a runnable event for want of a slot */
        uint64_t n_done;            /* events done (strict: who ran last) */
        uint64_t last_done_seq;     /* strict, while events are queued: the last done */
        char *last_done_path;       /* its DEVPATH (owned) */
        struct heap heap[_HEAP_MAX];
        struct list_node running;
        struct pathindex index;
        size_t bytes;               /* the held items' bytes (item->bytes summed): 0 when nothing is held */
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

static inline uint64_t seq_of(const struct item *it)
{
        return it->d.seq;
}

/* Room must have been reserved (heap_reserve()), so this cannot fail. */
static void heap_add(struct heap *h, struct item *it)
{
        (void)heap_push(h, seq_of(it), it);
}

/* ---- dependencies -------------------------------------------------------- */

static struct item *item_of(const struct pi_entry *e)
{
        size_t off = e->kind == PI_DEVPATH ? offsetof(struct item, d) : offsetof(struct item, o);
        return (struct item *)((const char *)e - off);
}

static void find_earlier_related(const struct item *it, struct pi_hits *hits)
{
        *hits = (struct pi_hits){ .earliest.e = NULL };
        pathindex_related(&it->d, hits);
        if (it->has_old)
                pathindex_related(&it->o, hits);
}

/* Put a queued, detached item where it belongs: parked on a blocker, or ready. */
static void settle(struct scheduler *s, struct item *it)
{
        struct pi_hits hits;

        assert(!it->blocker);
        find_earlier_related(it, &hits);
        if (hits.wait_on.e) {
                it->state = ITEM_BLOCKED;
                it->blocker = item_of(hits.wait_on.e);
                assert(seq_of(it->blocker) < seq_of(it));
                list_add_head(&it->blocker->waiters, &it->link);
        } else {
                it->state = ITEM_READY;
                it->epoch = s->epoch;
                if (s->mode == ORDERING_DEVPATH)
                        it->slot_mark = s->slot_refusals;
                heap_add(&s->heap[HEAP_READY], it);
        }
}

/* Take a queued item out of the ready heap or its blocker's waiter list. */
static void detach(struct scheduler *s, struct item *it)
{
        assert(it->state != ITEM_RUNNING);
        if (it->state == ITEM_READY) {
                heap_remove(&s->heap[HEAP_READY], it);
        } else if (it->state == ITEM_BLOCKED) {
                list_unlink(&it->link);
                it->blocker = NULL;
        }
}

/* @w was parked on @it, which leaves: remember it as what @w waited for (so far). */
static void note_blocker(struct item *w, const struct item *it)
{
        w->waited_seq = seq_of(it);
        free(w->waited_path);
        w->waited_path = strdup(it->ev->devpath); /* NULL: the reason names no path */
}

static void item_free(struct scheduler *s, struct item *it)
{
        assert(s->bytes >= it->bytes);
        s->bytes -= it->bytes;
        it->ev->sched_data = NULL;
        free(it->waited_path);
        free(it);
}

/* @it is no longer held: unindex it, look again at what waited for it, free it. */
static void leave(struct scheduler *s, struct item *it)
{
        struct item *w, *next;

        pathindex_remove(&s->index, &it->d);
        if (it->has_old)
                pathindex_remove(&s->index, &it->o);
        list_for_each_safe(w, next, &it->waiters, link) {
                list_unlink(&w->link);
                w->blocker = NULL;
                s->rechecks++;
                note_blocker(w, it);
                settle(s, w);
        }
        assert(list_empty(&it->waiters));
        item_free(s, it);
        /* What the window holds is counted to the byte: nothing held, nothing counted. */
        assert(heap_count(&s->heap[HEAP_QUEUED]) + s->n_running > 0 || (s->bytes == 0 && s->index.bytes == 0));
}

/* ---- the interface ------------------------------------------------------- */

int scheduler_new(enum ordering mode, unsigned max_running, size_t max_held, struct scheduler **ret)
{
        struct scheduler *s;

        if ((unsigned)mode >= _ORDERING_MAX || max_running < 1 || max_held < 1)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;
        s->max_running = max_running;
        s->max_held = max_held;
        for (int h = 0; h < _HEAP_MAX; h++)
                heap_init(&s->heap[h], offsetof(struct item, hidx) + (size_t)h * sizeof(uint32_t));
        list_init(&s->running);
        *ret = s;
        return 0;
}

struct scheduler *scheduler_free(struct scheduler *s)
{
        struct item *it, *next;

        if (!s)
                return NULL;
        for (size_t i = 0; i < heap_count(&s->heap[HEAP_QUEUED]); i++)
                item_free(s, s->heap[HEAP_QUEUED].v[i].item);
        list_for_each_safe(it, next, &s->running, link)
                item_free(s, it);
        free(s->last_done_path);
        for (int h = 0; h < _HEAP_MAX; h++)
                heap_clear(&s->heap[h]);
        pathindex_clear(&s->index);
        free(s);
        return NULL;
}

void scheduler_set_mode(struct scheduler *s, enum ordering mode, unsigned max_running)
{
        s->mode = mode;
        s->max_running = max_running ? max_running : 1;
}

static int item_new(struct scheduler *s, struct uevent *ev, struct item **ret)
{
        size_t old_len = ev->devpath_old ? strlen(ev->devpath_old) : 0;
        size_t nd = pathindex_links(ev->devpath, ev->devpath_len);
        size_t no = ev->devpath_old ? pathindex_links(ev->devpath_old, old_len) : 0;
        size_t size = sizeof(struct item) + (nd + no) * sizeof(((struct item *)0)->links[0]);
        struct item *it;
        int r;

        it = calloc(1, size);
        if (!it)
                return -ENOMEM;
        it->ev = ev;
        it->has_old = ev->devpath_old != NULL;
        list_init(&it->waiters);
        r = pathindex_add(&s->index, &it->d, PI_DEVPATH, ev->devpath, ev->devpath_len, ev->seqnum, it->links);
        if (r >= 0 && it->has_old) {
                r = pathindex_add(&s->index, &it->o, PI_OLD, ev->devpath_old, old_len, ev->seqnum, it->links + nd);
                if (r < 0)
                        pathindex_remove(&s->index, &it->d);
        }
        if (r < 0) {
                free(it);
                return r;
        }
        it->bytes = size + uevent_copy_size(ev);
        s->bytes += it->bytes;
        *ret = it;
        return 0;
}

int scheduler_push(struct scheduler *s, struct uevent *ev)
{
        size_t n_queued = heap_count(&s->heap[HEAP_QUEUED]);
        struct item *it;
        int r;

        if (n_queued + s->n_running >= s->max_held)
                return -ENOSPC;
        for (int h = 0; h < _HEAP_MAX; h++) {
                r = heap_reserve(&s->heap[h], n_queued + 1);
                if (r < 0)
                        return r;
        }
        r = item_new(s, ev, &it);
        if (r < 0)
                return r;
        ev->sched_data = it;
        it->slot_mark = s->slot_refusals;
        it->done_mark = s->n_done;
        /* A late event may be earlier than, and related to, a READY one. */
        if (s->pushed && ev->seqnum < s->max_seq)
                s->epoch++;
        if (!s->pushed || ev->seqnum > s->max_seq)
                s->max_seq = ev->seqnum;
        s->pushed = true;
        heap_add(&s->heap[HEAP_QUEUED], it);
        settle(s, it);
        assert(heap_count(&s->heap[HEAP_QUEUED]) + s->n_running <= s->max_held);
        assert(heap_count(&s->heap[HEAP_READY]) <= heap_count(&s->heap[HEAP_QUEUED]));
        return 0;
}

/* The rule of scheduler.h for an item about to start in devpath order: no
 * earlier related event is held (queued or running).  O(path depth), as much
 * as the push: checked for every start while few events are queued (the
 * unit tests), for one in 16 SEQNUMs in a long queue (bench-scheduler). */
static _unused_ bool may_start(const struct scheduler *s, const struct item *it)
{
        struct pi_hits hits;

        if (heap_count(&s->heap[HEAP_QUEUED]) > 256 && (seq_of(it) & 15) != 0)
                return true;
        find_earlier_related(it, &hits);
        return !hits.earliest.e && !hits.wait_on.e;
}

/* Lowest READY item that is still runnable after a late push, or NULL. */
static struct item *next_ready(struct scheduler *s)
{
        struct item *it;

        while ((it = heap_top(&s->heap[HEAP_READY])) && it->epoch != s->epoch) {
                heap_remove(&s->heap[HEAP_READY], it);
                s->rechecks++;
                settle(s, it);
        }
        return it;
}

/* @it starts: settle what it waited for (slot; strict: the event done last). */
static void note_start(struct scheduler *s, struct item *it)
{
        it->slot_limit = it->slot_mark != s->slot_refusals ? s->max_running : 0;
        if (s->mode == ORDERING_NONE)
                it->waited_seq = 0; /* parked only in the index: it never waited for an event */
        if (s->mode != ORDERING_STRICT || it->done_mark == s->n_done || s->last_done_seq == 0 ||
            s->last_done_seq >= seq_of(it))
                return;
        it->waited_seq = s->last_done_seq;
        free(it->waited_path);
        it->waited_path = s->last_done_path ? strdup(s->last_done_path) : NULL;
}

struct uevent *scheduler_next(struct scheduler *s)
{
        struct item *it;

        if (s->n_running >= s->max_running) {
                if (heap_count(&s->heap[s->mode == ORDERING_DEVPATH ? HEAP_READY : HEAP_QUEUED]) > 0 &&
                    s->mode != ORDERING_STRICT)
                        s->slot_refusals++;
                return NULL;
        }
        switch (s->mode) {
        case ORDERING_STRICT:
                it = s->n_running == 0 ? heap_top(&s->heap[HEAP_QUEUED]) : NULL;
                break;
        case ORDERING_NONE:
                it = heap_top(&s->heap[HEAP_QUEUED]);
                break;
        default:
                it = next_ready(s);
                break;
        }
        if (!it)
                return NULL;
        assert(s->mode != ORDERING_DEVPATH || (it->state == ITEM_READY && it->epoch == s->epoch && may_start(s, it)));
        assert(s->mode != ORDERING_STRICT || s->n_running == 0);
        detach(s, it);
        heap_remove(&s->heap[HEAP_QUEUED], it);
        note_start(s, it);
        it->state = ITEM_RUNNING;
        list_add_head(&s->running, &it->link);
        s->n_running++;
        return it->ev;
}

void scheduler_done(struct scheduler *s, struct uevent *ev)
{
        struct item *it = ev->sched_data;

        if (!it || it->state != ITEM_RUNNING)
                return;
        assert(s->n_running > 0);
        list_unlink(&it->link);
        s->n_running--;
        s->n_done++;
        /* Strict: the next to start waited for this one (copied only if one is queued). */
        if (s->mode == ORDERING_STRICT && heap_count(&s->heap[HEAP_QUEUED]) > 0) {
                s->last_done_seq = seq_of(it);
                free(s->last_done_path);
                s->last_done_path = strdup(ev->devpath);
        }
        leave(s, it);
}

void scheduler_waited(const struct scheduler *s, const struct uevent *ev, struct scheduler_wait *ret)
{
        const struct item *it = ev->sched_data;

        (void)s;
        *ret = (struct scheduler_wait){ .blocker = 0 };
        if (!it || it->state != ITEM_RUNNING)
                return;
        ret->slot_limit = it->slot_limit;
        if (it->waited_seq != 0) {
                ret->blocker = it->waited_seq;
                ret->blocker_devpath = it->waited_path;
        }
}

struct uevent *scheduler_pop_queued(struct scheduler *s)
{
        struct item *it = heap_top(&s->heap[HEAP_QUEUED]);
        struct uevent *ev;

        if (!it)
                return NULL;
        ev = it->ev;
        detach(s, it);
        heap_remove(&s->heap[HEAP_QUEUED], it);
        leave(s, it);
        return ev;
}

const struct uevent *scheduler_blocker(const struct scheduler *s, const struct uevent *ev)
{
        const struct item *it = ev->sched_data, *first;
        struct pi_hits hits;

        if (!it)
                return NULL;
        switch (s->mode) {
        case ORDERING_DEVPATH:
                find_earlier_related(it, &hits);
                return hits.earliest.e ? item_of(hits.earliest.e)->ev : NULL;
        case ORDERING_STRICT:
                /* The earliest held event, if earlier; running ones are at most max_running. */
                first = heap_top(&s->heap[HEAP_QUEUED]);
                const struct item *r;

                list_for_each(r, &s->running, link)
                        if (!first || seq_of(r) < seq_of(first))
                                first = r;
                return first && seq_of(first) < seq_of(it) ? first->ev : NULL;
        default:
                return NULL;
        }
}

uint64_t scheduler_rechecks(const struct scheduler *s)
{
        return s->rechecks;
}

size_t scheduler_queued(const struct scheduler *s)
{
        return heap_count(&s->heap[HEAP_QUEUED]);
}

bool scheduler_slot_wanted(const struct scheduler *s)
{
        switch (s->mode) {
        case ORDERING_NONE:
                return heap_count(&s->heap[HEAP_QUEUED]) > 0;
        case ORDERING_DEVPATH:
                return heap_count(&s->heap[HEAP_READY]) > 0;
        default:
                return false;
        }
}

size_t scheduler_bytes(const struct scheduler *s)
{
        size_t n = s->bytes + s->index.bytes;

        for (int h = 0; h < _HEAP_MAX; h++)
                n += s->heap[h].cap * sizeof(struct heap_slot);
        return n;
}

size_t scheduler_running(const struct scheduler *s)
{
        return s->n_running;
}

uint64_t scheduler_lowest_held(const struct scheduler *s)
{
        const struct item *q = heap_top(&s->heap[HEAP_QUEUED]);
        uint64_t low = q ? seq_of(q) : 0;

        /* Running events are at most max_running: a short walk. */
        const struct item *it;

        list_for_each(it, &s->running, link)
                if (low == 0 || seq_of(it) < low)
                        low = seq_of(it);
        return low;
}

uint64_t scheduler_lowest_held_on(const struct scheduler *s, const char *devpath)
{
        size_t len = strlen(devpath);
        uint64_t d = pathindex_first_on(&s->index, devpath, len, PI_DEVPATH);
        uint64_t o = pathindex_first_on(&s->index, devpath, len, PI_OLD);

        return d == 0 || (o != 0 && o < d) ? o : d;
}
