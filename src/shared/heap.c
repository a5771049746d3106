/* SPDX-License-Identifier: MIT */
/*
 * The min-heap (see heap.h for the invariants).
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "shared/heap.h"
#include "shared/macro.h"

#define HEAP_ARITY 4
#define HEAP_MIN_CAP 16

void heap_clear(struct heap *h)
{
        free(h->v);
        heap_init(h, h->index_offset);
}

static uint32_t *index_of(const struct heap *h, void *item)
{
        return (uint32_t *)((char *)item + h->index_offset);
}

static void set(struct heap *h, size_t i, struct heap_slot x)
{
        h->v[i] = x;
        if (h->index_offset != HEAP_NO_INDEX)
                *index_of(h, x.item) = (uint32_t)i;
}

/* The heap property around slot @i: its parent's key is not above its key, nor its key above a
 * child's (O(HEAP_ARITY): checked where a slot settles). */
static _unused_ bool slot_in_order(const struct heap *h, size_t i)
{
        size_t c = HEAP_ARITY * i + 1;

        if (i > 0 && h->v[(i - 1) / HEAP_ARITY].key > h->v[i].key)
                return false;
        for (size_t j = c; j < MIN(c + HEAP_ARITY, h->n); j++)
                if (h->v[j].key < h->v[i].key)
                        return false;
        return true;
}

/* An item with an index sits where its index says. */
static _unused_ bool index_right(const struct heap *h, size_t i)
{
        return h->index_offset == HEAP_NO_INDEX || *index_of(h, h->v[i].item) == i;
}

/* Put @x at @i or above it. */
static void sift_up(struct heap *h, size_t i, struct heap_slot x)
{
        while (i > 0 && h->v[(i - 1) / HEAP_ARITY].key > x.key) {
                set(h, i, h->v[(i - 1) / HEAP_ARITY]);
                i = (i - 1) / HEAP_ARITY;
        }
        set(h, i, x);
        assert(slot_in_order(h, i) && index_right(h, i));
}

/* Put @x at @i or below it. */
static void sift_down(struct heap *h, size_t i, struct heap_slot x)
{
        for (;;) {
                size_t c = HEAP_ARITY * i + 1, end = MIN(c + HEAP_ARITY, h->n), best = c;

                if (c >= h->n)
                        break;
                for (size_t j = c + 1; j < end; j++)
                        if (h->v[j].key < h->v[best].key)
                                best = j;
                if (h->v[best].key >= x.key)
                        break;
                set(h, i, h->v[best]);
                i = best;
        }
        set(h, i, x);
        assert(slot_in_order(h, i) && index_right(h, i));
}

/* Put @x at @i, which is free, up or down as its key says. */
static void place(struct heap *h, size_t i, struct heap_slot x)
{
        if (i > 0 && h->v[(i - 1) / HEAP_ARITY].key > x.key)
                sift_up(h, i, x);
        else
                sift_down(h, i, x);
}

int heap_reserve(struct heap *h, size_t n)
{
        struct heap_slot *v;
        size_t cap;

        if (n <= h->cap)
                return 0;
        if (n > UINT32_MAX)
                return -ENOMEM;
        cap = MIN(MAX(n, h->cap ? h->cap * 2 : HEAP_MIN_CAP), (size_t)UINT32_MAX);
        v = realloc(h->v, cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        h->v = v;
        h->cap = cap;
        return 0;
}

int heap_push(struct heap *h, uint64_t key, void *item)
{
        int r = heap_reserve(h, h->n + 1);

        if (r < 0)
                return r;
        assert(item && h->n < h->cap && h->cap <= UINT32_MAX);
        sift_up(h, h->n++, (struct heap_slot){ .key = key, .item = item });
        return 0;
}

/* Empty slot @i: fill it with the last slot. */
static void take_out(struct heap *h, size_t i)
{
        struct heap_slot last;

        assert(i < h->n);
        last = h->v[--h->n];

        if (i < h->n)
                place(h, i, last);
}

void *heap_pop(struct heap *h)
{
        void *item;

        if (h->n == 0)
                return NULL;
        item = h->v[0].item;
        take_out(h, 0);
        return item;
}

void heap_remove(struct heap *h, void *item)
{
        assert(h->index_offset != HEAP_NO_INDEX && *index_of(h, item) < h->n && h->v[*index_of(h, item)].item == item);
        take_out(h, *index_of(h, item));
}

void heap_update(struct heap *h, void *item, uint64_t key)
{
        size_t i = *index_of(h, item);

        assert(h->index_offset != HEAP_NO_INDEX && i < h->n && h->v[i].item == item);
        place(h, i, (struct heap_slot){ .key = key, .item = item });
}
