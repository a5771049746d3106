/* SPDX-License-Identifier: MIT */
/*
 * UUID set (see uuid-set.h).  Invariants: the items of s->table are the
 * used entries of s->chunks (each chunk full but the first), keyed by
 * hash_bytes() of their UUID; s->done counts the entries marked done;
 * table.n <= HP_CONTROL_UUIDS_MAX.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "control/uuid-set.h"

#define UUID_CHUNK 256

struct uuid_entry {
        uint8_t uuid[16];
        bool done;
};

struct uuid_chunk {
        struct uuid_chunk *next; /* older */
        size_t used;
        struct uuid_entry e[UUID_CHUNK];
};

void uuid_set_clear(struct uuid_set *s)
{
        struct uuid_chunk *c;

        while ((c = s->chunks)) {
                s->chunks = c->next;
                free(c);
        }
        hash_table_clear(&s->table);
        uuid_set_init(s);
}

/* An unused entry, or NULL. */
static struct uuid_entry *entry_new(struct uuid_set *s)
{
        struct uuid_chunk *c = s->chunks;

        if (!c || c->used == UUID_CHUNK) {
                c = malloc(sizeof(*c));
                if (!c)
                        return NULL;
                c->next = s->chunks;
                c->used = 0;
                s->chunks = c;
        }
        return &c->e[c->used];
}

static bool entry_is(const void *item, const void *uuid)
{
        return memcmp(((const struct uuid_entry *)item)->uuid, uuid, 16) == 0;
}

int uuid_set_add(struct uuid_set *s, const uint8_t uuid[16])
{
        uint64_t h = hash_bytes(uuid, 16);
        struct uuid_entry *e;

        if (hash_table_get(&s->table, h, entry_is, uuid))
                return 0;
        if (s->table.n >= HP_CONTROL_UUIDS_MAX)
                return -ENOSPC;
        e = entry_new(s);
        if (!e)
                return -ENOMEM;
        memcpy(e->uuid, uuid, 16);
        e->done = false;
        if (hash_table_add(&s->table, h, e) < 0)
                return -ENOMEM;
        s->chunks->used++;
        return 1;
}

bool uuid_set_mark(struct uuid_set *s, const uint8_t uuid[16])
{
        struct uuid_entry *e = hash_table_get(&s->table, hash_bytes(uuid, 16), entry_is, uuid);

        if (!e || e->done)
                return false;
        e->done = true;
        s->done++;
        return true;
}

void uuid_set_foreach_pending(const struct uuid_set *s, bool (*fn)(const char *uuid, void *arg), void *arg)
{
        char buf[UUID_STRING_MAX];
        const struct uuid_entry *e;
        size_t it = 0;

        while ((e = hash_table_next(&s->table, &it))) {
                if (e->done)
                        continue;
                uuid_to_string(e->uuid, buf);
                if (!fn(buf, arg))
                        return;
        }
}
