/* SPDX-License-Identifier: MIT */
/*
 * The device set (see devset.h).
 *
 * Invariants: the load factor stays at or below one half; every entry sits
 * at its home slot (hash & (cap - 1)) or after it with no empty slot in
 * between (the linear-probing rule that backward-shift deletion keeps);
 * n <= max.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "recovery/devset.h"
#include "shared/macro.h"
#include "uevent/uevent.h"

#define DEVSET_MIN_CAP 64

static uint64_t hash_path(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

        for (; *s; s++) {
                h ^= (uint8_t)*s;
                h *= 0x100000001b3ULL;
        }
        return h;
}

void devset_init(struct devset *s, size_t max)
{
        *s = (struct devset){ .max = max ? max : HP_RESYNC_DEVICES_MAX };
}

void devset_clear(struct devset *s)
{
        for (size_t i = 0; i < s->cap; i++)
                free(s->slot[i]);
        free(s->slot);
        s->slot = NULL;
        s->cap = s->n = 0;
}

/* Slot holding @devpath, or the empty slot where it would go. */
static size_t find_slot(const struct devset *s, const char *devpath, uint64_t h)
{
        size_t mask = s->cap - 1, i = h & mask;

        while (s->slot[i] && (s->slot[i]->hash != h || strcmp(s->slot[i]->devpath, devpath) != 0))
                i = (i + 1) & mask;
        return i;
}

static int grow(struct devset *s)
{
        size_t cap = s->cap ? s->cap * 2 : DEVSET_MIN_CAP;
        struct devset_entry **slot = calloc(cap, sizeof(*slot));

        if (!slot)
                return -ENOMEM;
        for (size_t i = 0; i < s->cap; i++) {
                struct devset_entry *e = s->slot[i];
                size_t j;

                if (!e)
                        continue;
                for (j = e->hash & (cap - 1); slot[j]; j = (j + 1) & (cap - 1))
                        ;
                slot[j] = e;
        }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
        return 0;
}

static struct devset_entry *entry_new(const char *devpath, const char *subsystem, uint64_t h)
{
        size_t dl = strlen(devpath) + 1, sl = strlen(subsystem) + 1;
        struct devset_entry *e = malloc(sizeof(*e) + dl + sl);

        if (!e)
                return NULL;
        e->hash = h;
        memcpy(e->devpath, devpath, dl);
        memcpy(e->devpath + dl, subsystem, sl);
        e->subsystem = e->devpath + dl;
        return e;
}

int devset_put(struct devset *s, const char *devpath, const char *subsystem)
{
        uint64_t h = hash_path(devpath);
        struct devset_entry *e;
        size_t i;

        if (s->cap > 0) {
                i = find_slot(s, devpath, h);
                if (s->slot[i]) {
                        if (strcmp(s->slot[i]->subsystem, subsystem) == 0)
                                return 0;
                        e = entry_new(devpath, subsystem, h);
                        if (!e)
                                return -ENOMEM;
                        free(s->slot[i]);
                        s->slot[i] = e;
                        return 0;
                }
        }
        if (s->n >= s->max) {
                s->refused++;
                return -ENOSPC;
        }
        if ((s->n + 1) * 2 > s->cap && grow(s) < 0)
                return -ENOMEM;
        e = entry_new(devpath, subsystem, h);
        if (!e)
                return -ENOMEM;
        s->slot[find_slot(s, devpath, h)] = e;
        s->n++;
        return 1;
}

const char *devset_get(const struct devset *s, const char *devpath)
{
        size_t i;

        if (s->cap == 0)
                return NULL;
        i = find_slot(s, devpath, hash_path(devpath));
        return s->slot[i] ? s->slot[i]->subsystem : NULL;
}

/* Empty slot @i: pull later entries of the probe run back so none is cut off from home. */
static void backward_shift(struct devset *s, size_t i)
{
        size_t mask = s->cap - 1, j = i;

        for (;;) {
                size_t home;

                j = (j + 1) & mask;
                if (!s->slot[j])
                        return;
                home = s->slot[j]->hash & mask;
                /* The entry at j may move to i unless its home lies cyclically in (i, j]. */
                if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
                        continue;
                s->slot[i] = s->slot[j];
                s->slot[j] = NULL;
                i = j;
        }
}

bool devset_remove(struct devset *s, const char *devpath)
{
        size_t i;

        if (s->cap == 0)
                return false;
        i = find_slot(s, devpath, hash_path(devpath));
        if (!s->slot[i])
                return false;
        free(s->slot[i]);
        s->slot[i] = NULL;
        s->n--;
        backward_shift(s, i);
        return true;
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
        return entry_new(p, subsystem, hash_path(p));
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
        while (*iter < s->cap) {
                const struct devset_entry *e = s->slot[(*iter)++];
                if (e)
                        return e;
        }
        return NULL;
}
