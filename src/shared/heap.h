/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The one priority queue of the daemon: a min-heap of items by a 64-bit
 * key (a SEQNUM, a time).  No daemon state; no I/O.
 *
 * Each slot holds the key next to the item pointer, so that sifting reads
 * no item; the heap is 4-ary (shallower than a binary heap, and the
 * children of a slot share a cache line).  Items are the caller's (any
 * non-NULL pointer); the heap never frees one.
 *
 * An item that must be removed or re-keyed where it stands (not only at
 * the top) keeps its position in a uint32_t of its own, at the offset given
 * to heap_init(); the heap writes it whenever the item moves.  A heap
 * initialised with HEAP_NO_INDEX writes nothing and supports only the top.
 *
 * Invariants:
 *  - no slot's key is below its parent's ((i - 1) / 4), so v[0] has the
 *    lowest key; among equal keys the order is unspecified;
 *  - n <= cap <= UINT32_MAX, and with an index, the uint32_t of the item at
 *    v[i] holds i.
 */

#include <stddef.h>
#include <stdint.h>

#define HEAP_NO_INDEX SIZE_MAX

struct heap_slot {
        uint64_t key;
        void *item; /* borrowed from the caller */
};

struct heap {
        struct heap_slot *v;
        size_t n, cap;
        size_t index_offset; /* where an item keeps its position, or HEAP_NO_INDEX */
};

/* An empty heap whose items keep their position (a uint32_t) at @index_offset
 * bytes into themselves, or HEAP_NO_INDEX.  It allocates nothing yet. */
static inline void heap_init(struct heap *h, size_t index_offset)
{
        *h = (struct heap){ .index_offset = index_offset };
}

/* Free the slots (not the items); the heap is empty and usable afterwards. */
void heap_clear(struct heap *h);

/* Make room for @n items in all, so that pushes up to @n cannot fail.
 * Return: 0 or -ENOMEM (the heap is unchanged). */
int heap_reserve(struct heap *h, size_t n);

/**
 * heap_push() - add an item.
 * @h: heap
 * @key: its key
 * @item: the item (not NULL), borrowed: it must outlive its time in @h
 *
 * Return: 0, or -ENOMEM (nothing added; not after heap_reserve() made room).
 */
int heap_push(struct heap *h, uint64_t key, void *item);

/* The item with the lowest key (borrowed), or NULL if @h is empty. */
static inline void *heap_top(const struct heap *h)
{
        return h->n > 0 ? h->v[0].item : NULL;
}

/* The lowest key; @h must not be empty. */
static inline uint64_t heap_top_key(const struct heap *h)
{
        return h->v[0].key;
}

static inline size_t heap_count(const struct heap *h)
{
        return h->n;
}

/* Take out the item with the lowest key.  Return: it (now the caller's), or NULL if empty. */
void *heap_pop(struct heap *h);

/* Take out @item, which is in @h (a heap with an index). */
void heap_remove(struct heap *h, void *item);

/* Give @item, which is in @h (a heap with an index), the key @key. */
void heap_update(struct heap *h, void *item, uint64_t key);
