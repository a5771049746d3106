/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the built-in handlers learnt from sysfs about a device, keyed by
 * DEVPATH, so that later events (above all "remove", when the sysfs
 * directory is gone) still get the legacy variables.  Bounded: a fixed
 * number of fixed-size slots allocated once; when full, the least recently
 * used entry is evicted.  No allocation after devcache_new().
 */

#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"

struct devcache;

struct devcache_stats {
        uint64_t hits, misses, stores, evictions, too_big;
        size_t used, capacity;
};

/**
 * devcache_new() - allocate a cache of @capacity entries (0: default).
 * @ret: the cache, owned by the caller (devcache_free())
 * Return: 0 or -ENOMEM.
 */
int devcache_new(size_t capacity, struct devcache **ret);
struct devcache *devcache_free(struct devcache *c);

/**
 * devcache_get() - the data stored for @devpath.
 * @data: set to packed "KEY=VALUE\0" entries (borrowed; valid until the next
 *        devcache_put/drop/clear call)
 * @size: set to their total length in bytes
 * Return: 1 if found (and marked most recently used), 0 if not.
 */
int devcache_get(struct devcache *c, const char *devpath, const char **data, size_t *size);

/**
 * devcache_put() - store (or replace) the data of @devpath.
 * @data: packed "KEY=VALUE\0" entries (copied); @size bytes, may be 0
 * Return: 0, or -E2BIG when devpath plus data exceed HP_DEVCACHE_SLOT_BYTES
 * (any old entry for @devpath is dropped then).
 */
int devcache_put(struct devcache *c, const char *devpath, const char *data, size_t size);

/* Forget @devpath (no-op if absent). */
void devcache_drop(struct devcache *c, const char *devpath);

/* Forget every entry whose devpath lies at or below @devpath. */
void devcache_drop_tree(struct devcache *c, const char *devpath);

void devcache_get_stats(const struct devcache *c, struct devcache_stats *ret);

/* Value of @key in packed "KEY=VALUE\0" data, or NULL (borrowed). */
const char *packed_get(const char *data, size_t size, const char *key);
