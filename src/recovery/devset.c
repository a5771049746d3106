/* SPDX-License-Identifier: MIT */
/*
 * The device set (see devset.h).
 *
 * Invariants: every item of s->table is a struct devset_entry the set owns,
 * keyed by hash_string() of its devpath; table.n <= max.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "recovery/devset.h"
#include "shared/macro.h"
#include "uevent/uevent.h"

void devset_init(struct devset *s, size_t max)
{
        *s = (struct devset){ .max = max ? max : HP_RESYNC_DEVICES_MAX };
        hash_table_init(&s->table);
}

void devset_clear(struct devset *s)
{
        size_t it = 0;
        void *e;

        while ((e = hash_table_next(&s->table, &it)))
                free(e);
        hash_table_clear(&s->table);
}

static bool entry_is(const void *item, const void *devpath)
{
        return strcmp(((const struct devset_entry *)item)->devpath, devpath) == 0;
}

static struct devset_entry *entry_new(const char *devpath, const char *subsystem)
{
        size_t dl = strlen(devpath) + 1, sl = strlen(subsystem) + 1;
        struct devset_entry *e = malloc(sizeof(*e) + dl + sl);

        if (!e)
                return NULL;
        memcpy(e->devpath, devpath, dl);
        memcpy(e->devpath + dl, subsystem, sl);
        e->subsystem = e->devpath + dl;
        return e;
}

int devset_put(struct devset *s, const char *devpath, const char *subsystem)
{
        uint64_t h = hash_string(devpath, NULL);
        const struct devset_entry *old = hash_table_get(&s->table, h, entry_is, devpath);
        struct devset_entry *e;

        assert(s->table.n <= s->max);
        if (old && strcmp(old->subsystem, subsystem) == 0)
                return 0;
        if (!old && s->table.n >= s->max) {
                s->refused++;
                return -ENOSPC;
        }
        e = entry_new(devpath, subsystem);
        if (!e)
                return -ENOMEM;
        if (old) {
                free(hash_table_replace(&s->table, h, entry_is, devpath, e));
                return 0;
        }
        if (hash_table_add(&s->table, h, e) < 0) {
                free(e);
                return -ENOMEM;
        }
        assert(s->table.n <= s->max);
        return 1;
}

const char *devset_get(const struct devset *s, const char *devpath)
{
        const struct devset_entry *e = hash_table_get(&s->table, hash_string(devpath, NULL), entry_is, devpath);

        return e ? e->subsystem : NULL;
}

bool devset_remove(struct devset *s, const char *devpath)
{
        struct devset_entry *e = hash_table_remove(&s->table, hash_string(devpath, NULL), entry_is, devpath);

        free(e);
        return e != NULL;
}

/* @path (equal to or below @old) re-based below @new, in one entry with @subsystem. */
static struct devset_entry *rebased_entry(const char *path, size_t old_len, const char *new,
                                          const char *subsystem)
{
        size_t nl = strlen(new), rest = strlen(path + old_len);
        _cleanup_free_ char *p = malloc(nl + rest + 1);

        if (!p)
                return NULL;
        memcpy(p, new, nl);
        memcpy(p + nl, path + old_len, rest + 1);
        return entry_new(p, subsystem);
}

static bool is_below(const char *old, size_t old_len, const char *path)
{
        return strcmp(path, old) != 0 && devpath_is_prefix(old, old_len, path, strlen(path));
}

int devset_move(struct devset *s, const char *old, const char *new, const char *subsystem)
{
        size_t old_len = strlen(old), n = 0, it = 0;
        const struct devset_entry *e;
        struct devset_entry **moved = NULL;
        char **from = NULL;
        int r = 0, k;

        /* Collect first: the table must not change while it is walked. */
        while ((e = devset_next(s, &it)))
                n += is_below(old, old_len, e->devpath);
        if (n > 0) {
                moved = calloc(n, sizeof(*moved));
                from = calloc(n, sizeof(*from));
                if (!moved || !from) {
                        free(moved);
                        free(from);
                        return -ENOMEM;
                }
        }
        n = 0;
        it = 0;
        while ((e = devset_next(s, &it))) {
                if (!is_below(old, old_len, e->devpath))
                        continue;
                from[n] = strdup(e->devpath);
                moved[n] = rebased_entry(e->devpath, old_len, new, e->subsystem);
                n++;
        }
        (void)devset_remove(s, old);
        for (size_t i = 0; i < n; i++)
                if (from[i])
                        (void)devset_remove(s, from[i]);
        k = devset_put(s, new, subsystem);
        if (k < 0)
                r = k;
        for (size_t i = 0; i < n; i++) {
                if (!moved[i] || !from[i])
                        r = -ENOMEM;
                if (moved[i] && (k = devset_put(s, moved[i]->devpath, moved[i]->subsystem)) < 0)
                        r = k;
                free(moved[i]);
                free(from[i]);
        }
        free(moved);
        free(from);
        assert(s->table.n <= s->max);
        return r;
}

int devset_note_event(struct devset *s, const char *action, const char *devpath, const char *subsystem,
                      const char *devpath_old)
{
        int r;

        if (strcmp(action, "remove") == 0) {
                (void)devset_remove(s, devpath);
                return 0;
        }
        if (strcmp(action, "move") == 0 && devpath_old)
                return devset_move(s, devpath_old, devpath, subsystem);
        if (strcmp(action, "add") == 0 || strcmp(action, "change") == 0 || strcmp(action, "bind") == 0 ||
            strcmp(action, "online") == 0 || strcmp(action, "move") == 0) {
                r = devset_put(s, devpath, subsystem);
                return r < 0 ? r : 0;
        }
        return 0;
}

const struct devset_entry *devset_next(const struct devset *s, size_t *iter)
{
        return hash_table_next(&s->table, iter);
}
