/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A set of SYNTH_UUIDs one control client waits for, each either pending
 * or done.  Open addressing over 16-byte binary UUIDs; grows by doubling,
 * holds at most HP_CONTROL_UUIDS_MAX.  Pure: no clock, no I/O.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/uuid.h"

struct uuid_set {
        uint8_t (*slot)[17];  /* 16 bytes of UUID + state (0 empty, 1 pending, 2 done) */
        size_t cap;           /* slots, a power of two, or 0 */
        size_t n;             /* UUIDs held */
        size_t done;          /* of which done */
};

static inline void uuid_set_init(struct uuid_set *s)
{
        *s = (struct uuid_set){ .slot = NULL };
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
