/* SPDX-License-Identifier: MIT */
/*
 * UUID set (see uuid-set.h).  Invariants: every item of s->table is a
 * struct uuid_entry the set owns, keyed by hash_bytes() of its UUID;
 * s->done counts the entries marked done; table.n <= HP_CONTROL_UUIDS_MAX.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "control/uuid-set.h"

struct uuid_entry {
        uint8_t uuid[16];
        bool done;
};

void uuid_set_clear(struct uuid_set *s)
{
        size_t it = 0;
        void *e;

        while ((e = hash_table_next(&s->table, &it)))
                free(e);
        hash_table_clear(&s->table);
        uuid_set_init(s);
}

static bool entry_is(const void *item, const void *uuid)
{
        return memcmp(((const struct uuid_entry *)item)->uuid, uuid, 16) == 0;
}

static struct uuid_entry *find(const struct uuid_set *s, const uint8_t uuid[16])
{
        return hash_table_get(&s->table, hash_bytes(uuid, 16), entry_is, uuid);
}

int uuid_set_add(struct uuid_set *s, const uint8_t uuid[16])
{
        struct uuid_entry *e;

        if (find(s, uuid))
                return 0;
        if (s->table.n >= HP_CONTROL_UUIDS_MAX)
                return -ENOSPC;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        memcpy(e->uuid, uuid, 16);
        if (hash_table_add(&s->table, hash_bytes(uuid, 16), e) < 0) {
                free(e);
                return -ENOMEM;
        }
        return 1;
}

bool uuid_set_mark(struct uuid_set *s, const uint8_t uuid[16])
{
        struct uuid_entry *e = find(s, uuid);

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
