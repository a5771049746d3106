/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A set of devices, DEVPATH -> SUBSYSTEM: the devices the daemon believes
 * present (fed by the events it accepts), or a listing of sysfs.  Pure: no
 * clock, no I/O, no logging.
 *
 * The entries are kept in the shared hash table (shared/hash.h), keyed
 * by the hash of DEVPATH; the set owns them.  Each entry is one allocation
 * holding both strings.  The set holds at most @max entries (a bound set
 * at init, at most HP_RESYNC_DEVICES_MAX); beyond it inserts are refused
 * and counted.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/hash.h"

struct devset_entry {
        const char *subsystem; /* points behind devpath, in the same allocation */
        char devpath[];
};

struct devset {
        union {
                struct hash_table table; /* DEVPATH -> struct devset_entry, owned */
                struct {                 /* the table's counts under their names: read only */
                        struct hash_slot *slot_;
                        size_t cap;      /* slots, a power of two, or 0 */
                        size_t n;        /* entries */
                };
        };
        size_t max;       /* entries at most */
        uint64_t refused; /* inserts refused at the bound */
};

/* An empty set of at most @max entries (0: HP_RESYNC_DEVICES_MAX). */
void devset_init(struct devset *s, size_t max);

/* Free every entry and the table; the set is empty (and usable) afterwards. */
void devset_clear(struct devset *s);

/**
 * devset_put() - insert a device or update its subsystem.
 * @s: set
 * @devpath: DEVPATH (copied)
 * @subsystem: SUBSYSTEM (copied)
 * Return: 1 inserted, 0 already present (subsystem updated if it differed),
 * -ENOSPC at the bound (counted in @s->refused), -ENOMEM.
 */
int devset_put(struct devset *s, const char *devpath, const char *subsystem);

/* Remove @devpath. Return: true if it was present. */
bool devset_remove(struct devset *s, const char *devpath);

/* SUBSYSTEM of @devpath (borrowed until the entry changes), or NULL if absent. */
const char *devset_get(const struct devset *s, const char *devpath);

/**
 * devset_move() - a device was renamed: re-key it and every descendant.
 * @s: set
 * @old: DEVPATH_OLD
 * @new: the new DEVPATH
 * @subsystem: SUBSYSTEM of the renamed device
 *
 * Descendants (paths below @old) move below @new with their subsystems.
 * Costs one pass over the set; renames are rare.  @new is inserted even if
 * @old was unknown.
 * Return: 0, or -ENOMEM/-ENOSPC (entries that could not be re-keyed are dropped).
 */
int devset_move(struct devset *s, const char *old, const char *new, const char *subsystem);

/**
 * devset_note_event() - update the set from one accepted event.
 * @s: set
 * @action: ACTION
 * @devpath: DEVPATH
 * @subsystem: SUBSYSTEM
 * @devpath_old: DEVPATH_OLD, or NULL
 *
 * add, bind, change and online insert (the device exists); move re-keys
 * (devset_move()); remove deletes; unbind, offline and unknown actions
 * change nothing.
 * Return: 0 or negative errno from the insert (the event itself is not
 * affected; the caller may count it).
 */
int devset_note_event(struct devset *s, const char *action, const char *devpath, const char *subsystem,
                      const char *devpath_old);

/* Iterate: start with *iter = 0; returns the next entry or NULL at the end.
 * The set must not change during an iteration. */
const struct devset_entry *devset_next(const struct devset *s, size_t *iter);
