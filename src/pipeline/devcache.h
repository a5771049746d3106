/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The device model's store: one record per DEVPATH with what the event
 * stream says of the device (its bus, the driver bound to it) and the
 * legacy variables the built-in handlers learnt from sysfs, so that later
 * events (above all "remove", when the sysfs directory is gone) still get
 * them.  Bounded: a fixed number of fixed-size slots allocated once; when
 * full, the least recently used record is evicted.  No allocation after
 * devcache_new().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"

struct devcache;

struct devcache_stats {
        uint64_t hits, misses, stores, evictions, too_big;
        size_t used, capacity;
};

/* @data holds the variables the handlers learnt (absent: they have not run for the device yet). */
#define DEVCACHE_LEARNT 0x1u
/* @bus is known: the device is a bus device of bus @bus, or ("") a class or block device. */
#define DEVCACHE_BUS_KNOWN 0x2u

/*
 * One record.  From devcache_get() its pointers are borrowed from the cache
 * (valid until the next devcache_put/drop); devcache_put() copies them and
 * they may point into the cache themselves.
 */
struct devcache_entry {
        unsigned flags;
        const char *bus;      /* bus name, "" for a class/block device or unknown */
        const char *driver;   /* driver bound as the stream says, "" for none */
        const char *data;     /* packed "KEY=VALUE\0" learnt variables */
        size_t size;          /* bytes of @data */
        uint64_t since;       /* unbound since this SEQNUM as the stream says, a probe may be under way; 0: not */
};

/**
 * devcache_new() - allocate a cache of @capacity records (0: default).
 * @ret: the cache, owned by the caller (devcache_free())
 * Return: 0 or -ENOMEM.
 */
int devcache_new(size_t capacity, struct devcache **ret);
struct devcache *devcache_free(struct devcache *c);

/**
 * devcache_get() - the record of @devpath.
 * @ret: set to the record (borrowed, see struct devcache_entry)
 * Return: 1 if found (and marked most recently used), 0 if not.
 */
int devcache_get(struct devcache *c, const char *devpath, struct devcache_entry *ret);

/**
 * devcache_put() - store (or replace) the record of @devpath.
 * @e: the record (copied; NULL strings are stored as "")
 * Return: 0, or -E2BIG when devpath, names and data exceed
 * HP_DEVCACHE_SLOT_BYTES (any old record for @devpath is dropped then).
 */
int devcache_put(struct devcache *c, const char *devpath, const struct devcache_entry *e);

/**
 * devcache_peek() - devcache_get() without touching the LRU order or the counters.
 * Return: 1 if found, 0 if not.
 */
int devcache_peek(const struct devcache *c, const char *devpath, struct devcache_entry *ret);

/* Whether @devpath has a record, without touching its place in the LRU order or the counters. */
bool devcache_contains(const struct devcache *c, const char *devpath);

/* Whether every slot holds a record (the next new record evicts the least recently used). */
bool devcache_full(const struct devcache *c);

/* Forget @devpath (no-op if absent). */
void devcache_drop(struct devcache *c, const char *devpath);

void devcache_get_stats(const struct devcache *c, struct devcache_stats *ret);

/* Value of @key in packed "KEY=VALUE\0" data, or NULL (borrowed). */
const char *packed_get(const char *data, size_t size, const char *key);
