/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The one hash function (FNV-1a, 64 bits) and the one hash table of the
 * daemon.  No daemon state; no I/O.
 *
 * The table maps 64-bit hashes to items the caller owns (any non-NULL
 * pointer): open addressing with linear probing and backward-shift
 * deletion (no tombstones), the hash kept in the slot so that a probe
 * touches no item unless the hashes are equal.  The caller hashes its key
 * (hash_bytes(), hash_string(), or step by step with hash_step()) and says
 * what "equal" means with a callback; the table never frees an item.
 *
 * Invariants:
 *  - cap is 0 or a power of two, and n * 2 <= cap (a probe always ends at
 *    an empty slot);
 *  - every item sits at its home slot (hash & (cap - 1)) or after it,
 *    cyclically, with no empty slot in between;
 *  - the layout, and so the iteration order, depends only on the sequence
 *    of adds and removes, not on the items.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 0xcbf29ce484222325ULL /* FNV-1a offset basis */

/* One more byte into hash @h (start from HASH_SEED): for keys hashed by prefix. */
static inline uint64_t hash_step(uint64_t h, unsigned char c)
{
        return (h ^ c) * 0x100000001b3ULL; /* FNV-1a prime */
}

/* The hash of @n bytes at @p. */
uint64_t hash_bytes(const void *p, size_t n);

/* The hash of the string @s; its length in *@ret_len if that is not NULL. */
uint64_t hash_string(const char *s, size_t *ret_len);

struct hash_slot {
        uint64_t hash;
        void *item; /* borrowed from the caller; NULL: empty */
};

struct hash_table {
        struct hash_slot *slot;
        size_t cap; /* slots: 0 or a power of two */
        size_t n;   /* items */
};

/* Is @item the one @key stands for?  Called only for items of the same hash. */
typedef bool (*hash_eq_fn)(const void *item, const void *key);

/* An empty table; it allocates nothing until the first add. */
static inline void hash_table_init(struct hash_table *t)
{
        *t = (struct hash_table){ .slot = NULL };
}

/* Free the slots (not the items: walk them with hash_table_next() first if
 * they are owned); the table is empty and usable afterwards. */
void hash_table_clear(struct hash_table *t);

/* An hash_eq_fn for "the very item @key" (to remove an item one holds). */
bool hash_item_is(const void *item, const void *key);

/**
 * hash_table_get() - find an item.
 * @t: table
 * @hash: the hash of @key
 * @eq: the equality of items and keys
 * @key: what to look for, passed to @eq
 *
 * Return: the item (borrowed), or NULL if none is equal to @key.
 */
void *hash_table_get(const struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key);

/**
 * hash_table_add() - add an item that is not in the table yet.
 * @t: table
 * @hash: the hash of @item's key
 * @item: the item (not NULL), borrowed: it must outlive its time in @t
 *
 * The caller makes sure no equal item is present (hash_table_get()).
 * Grows the table (doubling, from 64 slots) when it would be more than
 * half full.
 * Return: 0, or -ENOMEM (nothing added).
 */
int hash_table_add(struct hash_table *t, uint64_t hash, void *item);

/**
 * hash_table_replace() - put @item in the slot of the item equal to @key.
 * @t: table
 * @hash: the hash of @key, which is @item's key too
 * @eq: the equality of items and keys
 * @key: the key of the item replaced
 * @item: the new item (not NULL), borrowed
 *
 * The layout does not change (nor does the iteration order).
 * Return: the item replaced (now the caller's), or NULL if none was equal
 * to @key (then nothing changed).
 */
void *hash_table_replace(struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key, void *item);

/**
 * hash_table_remove() - take out the item equal to @key.
 * @t: table
 * @hash: the hash of @key
 * @eq: the equality of items and keys (hash_item_is() with the item itself)
 * @key: what to remove
 *
 * Return: the item removed (now the caller's), or NULL if none was equal.
 */
void *hash_table_remove(struct hash_table *t, uint64_t hash, hash_eq_fn eq, const void *key);

/* Iterate: start with *iter = 0; returns the next item or NULL at the end.
 * The table must not change during an iteration. */
void *hash_table_next(const struct hash_table *t, size_t *iter);
