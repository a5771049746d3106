/* SPDX-License-Identifier: MIT */
/*
 * The hash function and the hash table (see hash.h for the invariants).
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "shared/hash.h"
#include "shared/macro.h"

#define HASH_TABLE_MIN_CAP 64

/* The load bounds of hash.h: cap is 0 or a power of two, and at most half full. */
static _unused_ bool load_ok(const struct hash_table *t)
{
        return (t->cap & (t->cap - 1)) == 0 && t->n * 2 <= t->cap && (t->cap > 0 || !t->slot);
}

uint64_t hash_bytes(const void *p, size_t n)
{
        const unsigned char *b = p;
        uint64_t h = HASH_SEED;

        for (size_t i = 0; i < n; i++)
                h = hash_step(h, b[i]);
        return h;
}

uint64_t hash_string(const char *s, size_t *ret_len)
{
        const char *p = s;
        uint64_t h = HASH_SEED;

        for (; *p; p++)
                h = hash_step(h, (unsigned char)*p);
        if (ret_len)
                *ret_len = (size_t)(p - s);
        return h;
}

void hash_table_clear(struct hash_table *t)
{
        free(t->slot);
        hash_table_init(t);
}

bool hash_item_is(const void *item, const void *key)
{
        return item == key;
}

/* The slot holding the item equal to @key, or the empty slot where a probe for it ends. */
static size_t find_slot(const struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key)
{
        size_t mask = t->cap - 1, i = hash & mask;

        while (t->slot[i].item && (t->slot[i].hash != hash || !eq(t->slot[i].item, key)))
                i = (i + 1) & mask;
        return i;
}

/* The first empty slot from @hash's home on (the table must have one). */
static size_t free_slot(const struct hash_slot *slot, size_t cap, uint64_t hash)
{
        size_t i;

        for (i = hash & (cap - 1); slot[i].item; i = (i + 1) & (cap - 1))
                ;
        return i;
}

void *hash_table_get(const struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key)
{
        if (t->n == 0)
                return NULL;
        return t->slot[find_slot(t, hash, eq, key)].item;
}

/* Grow to @cap slots (a power of two above t->cap), re-placing the items in slot order. */
static int grow(struct hash_table *t, size_t cap)
{
        struct hash_slot *slot;

        assert(cap > t->cap && (cap & (cap - 1)) == 0);
        slot = calloc(cap, sizeof(*slot));
        if (!slot)
                return -ENOMEM;
        for (size_t i = 0; i < t->cap; i++)
                if (t->slot[i].item)
                        slot[free_slot(slot, cap, t->slot[i].hash)] = t->slot[i];
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
        return 0;
}

int hash_table_reserve(struct hash_table *t, size_t n)
{
        size_t cap = t->cap ? t->cap : HASH_TABLE_MIN_CAP;

        if (n > SIZE_MAX / 4)
                return -ENOMEM;
        while (n * 2 > cap)
                cap *= 2;
        return cap > t->cap ? grow(t, cap) : 0;
}

int hash_table_add(struct hash_table *t, uint64_t hash, void *item)
{
        if ((t->n + 1) * 2 > t->cap && hash_table_reserve(t, t->n + 1) < 0)
                return -ENOMEM;
        assert(item);
        t->slot[free_slot(t->slot, t->cap, hash)] = (struct hash_slot){ .hash = hash, .item = item };
        t->n++;
        assert(load_ok(t));
        return 0;
}

void *hash_table_replace(struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key, void *item)
{
        struct hash_slot *s;
        void *old;

        if (t->n == 0)
                return NULL;
        assert(item);
        s = &t->slot[find_slot(t, hash, eq, key)];
        old = s->item;
        if (old)
                s->item = item;
        return old;
}

/* Slot @i was emptied: pull later items of its probe run back so none is cut off from home. */
static void backward_shift(struct hash_table *t, size_t i)
{
        size_t mask = t->cap - 1, j = i;

        for (;;) {
                size_t home;

                j = (j + 1) & mask;
                if (!t->slot[j].item)
                        return;
                home = t->slot[j].hash & mask;
                /* The item at j may move to i unless its home lies cyclically in (i, j]. */
                if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
                        continue;
                t->slot[i] = t->slot[j];
                t->slot[j].item = NULL;
                i = j;
        }
}

void *hash_table_remove(struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key)
{
        size_t i;
        void *item;

        if (t->n == 0)
                return NULL;
        i = find_slot(t, hash, eq, key);
        item = t->slot[i].item;
        if (!item)
                return NULL;
        t->slot[i].item = NULL;
        t->n--;
        backward_shift(t, i);
        return item;
}

void *hash_table_next(const struct hash_table *t, size_t *iter)
{
        while (*iter < t->cap) {
                void *item = t->slot[(*iter)++].item;
                if (item)
                        return item;
        }
        return NULL;
}
