/* SPDX-License-Identifier: MIT */
/*
 * UUID set: open addressing with linear probing.  Invariant: n <= cap / 2,
 * so a probe always ends at an empty slot.  Nothing is ever removed, only
 * marked done, so no tombstones are needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "control/uuid-set.h"

enum { SLOT_EMPTY, SLOT_PENDING, SLOT_DONE };

void uuid_set_clear(struct uuid_set *s)
{
        free(s->slot);
        uuid_set_init(s);
}

static size_t hash(const uint8_t uuid[16])
{
        uint64_t h;

        /* Version 4 UUIDs are random; still mix both halves in case they are not. */
        memcpy(&h, uuid, 8);
        for (int i = 8; i < 16; i++)
                h = h * 1099511628211ULL ^ uuid[i];
        return (size_t)(h ^ (h >> 29));
}

static uint8_t *find(const struct uuid_set *s, const uint8_t uuid[16])
{
        size_t i = hash(uuid) & (s->cap - 1);

        while (s->slot[i][16] != SLOT_EMPTY) {
                if (memcmp(s->slot[i], uuid, 16) == 0)
                        return s->slot[i];
                i = (i + 1) & (s->cap - 1);
        }
        return s->slot[i];
}

static int grow(struct uuid_set *s)
{
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct uuid_set bigger = { .cap = cap, .n = s->n, .done = s->done };

        bigger.slot = calloc(cap, sizeof(*bigger.slot));
        if (!bigger.slot)
                return -ENOMEM;
        for (size_t i = 0; i < s->cap; i++)
                if (s->slot[i][16] != SLOT_EMPTY)
                        memcpy(find(&bigger, s->slot[i]), s->slot[i], 17);
        free(s->slot);
        *s = bigger;
        return 0;
}

int uuid_set_add(struct uuid_set *s, const uint8_t uuid[16])
{
        uint8_t *slot;
        int r;

        if (s->cap > 0 && find(s, uuid)[16] != SLOT_EMPTY)
                return 0;
        if (s->n >= HP_CONTROL_UUIDS_MAX)
                return -ENOSPC;
        if ((s->n + 1) * 2 > s->cap) {
                r = grow(s);
                if (r < 0)
                        return r;
        }
        slot = find(s, uuid);
        memcpy(slot, uuid, 16);
        slot[16] = SLOT_PENDING;
        s->n++;
        return 1;
}

bool uuid_set_mark(struct uuid_set *s, const uint8_t uuid[16])
{
        uint8_t *slot;

        if (s->cap == 0)
                return false;
        slot = find(s, uuid);
        if (slot[16] != SLOT_PENDING)
                return false;
        slot[16] = SLOT_DONE;
        s->done++;
        return true;
}

void uuid_set_foreach_pending(const struct uuid_set *s, bool (*fn)(const char *uuid, void *arg), void *arg)
{
        char buf[UUID_STRING_MAX];

        for (size_t i = 0; i < s->cap; i++) {
                if (s->slot[i][16] != SLOT_PENDING)
                        continue;
                uuid_to_string(s->slot[i], buf);
                if (!fn(buf, arg))
                        return;
        }
}
