/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A set of SYNTH_UUIDs one control client waits for, each either pending
 * or done.  The shared hash table (shared/hash.h) over 16-byte binary
 * UUIDs kept in chunks the set owns; holds at most HP_CONTROL_UUIDS_MAX.
 * Nothing is removed but by uuid_set_clear().
 * Pure: no clock, no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/hash.h"
#include "shared/uuid.h"

struct uuid_set {
        union {
                struct hash_table table; /* UUID -> struct uuid_entry (uuid-set.c), owned */
                struct {                 /* the table's count under its name: read only */
                        struct hash_slot *slot_;
                        size_t cap_;
                        size_t n;        /* UUIDs held */
                };
        };
        size_t done;               /* of which done */
        struct uuid_chunk *chunks; /* the entries, newest chunk first (uuid-set.c) */
};

static inline void uuid_set_init(struct uuid_set *s)
{
        *s = (struct uuid_set){ .done = 0 };
        hash_table_init(&s->table);
}

/* Forget everything and free the table. */
void uuid_set_clear(struct uuid_set *s);

/* Return: 1 added, 0 already held, -ENOSPC at HP_CONTROL_UUIDS_MAX, -ENOMEM. */
int uuid_set_add(struct uuid_set *s, const uint8_t uuid[16]);

/* Mark @uuid done.  Return: true if it was held and pending. */
bool uuid_set_mark(struct uuid_set *s, const uint8_t uuid[16]);

static inline size_t uuid_set_pending(const struct uuid_set *s)
{
        return s->n - s->done;
}

/* Call @fn for each pending UUID (as text) until it returns false. */
void uuid_set_foreach_pending(const struct uuid_set *s, bool (*fn)(const char *uuid, void *arg), void *arg);
