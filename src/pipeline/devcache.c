/* SPDX-License-Identifier: MIT */
/*
 * DEVPATH-keyed device records (see devcache.h).
 *
 * Layout: one array of fixed-size slots; the shared hash table
 * (shared/hash.h) from hash_string() of the devpath to the slot, sized for
 * every slot at devcache_new() so that an add never fails (16 bytes per
 * table slot, two to four table slots per record); and an LRU list
 * through prev/lru_next.  Invariants: a slot below c->fresh is either on
 * the free list (through next) or in the table and on the LRU list; the
 * slots from c->fresh on were never used and are not touched (the array is
 * calloc'd, so a cache of 1 MiB costs memory only for the devices it
 * holds); slot->buf holds the devpath, the bus and the driver (each
 * NUL-terminated) followed by data_size bytes of packed entries.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/devcache.h"
#include "shared/hash.h"
#include "shared/macro.h"

#define NIL UINT32_MAX

struct slot {
        uint64_t hash;               /* of the devpath: to leave the table without hashing it again */
        uint32_t next;               /* free list */
        uint32_t prev, lru_next;     /* LRU list (head = most recent) */
        uint16_t devpath_len, bus_len, driver_len;
        uint16_t data_size;
        unsigned flags;
        uint64_t since;
        char buf[HP_DEVCACHE_SLOT_BYTES];
};

struct devcache {
        struct slot *slots;
        struct hash_table table;     /* devpath -> slot (struct slot *) */
        uint32_t capacity, used;
        uint32_t free_head, lru_head, lru_tail;
        uint32_t fresh;              /* slots from here on were never used */
        struct devcache_stats stats;
};

/* A devpath as a key of the table: its bytes without the NUL. */
struct key {
        const char *devpath;
        size_t len;
};

static bool slot_is(const void *item, const void *key)
{
        const struct slot *s = item;
        const struct key *k = key;

        return s->devpath_len == k->len && memcmp(s->buf, k->devpath, k->len) == 0;
}

/* The counts of the invariants above: every used slot is in the table once, and used <= fresh <= capacity. */
static _unused_ bool counts_ok(const struct devcache *c)
{
        return c->used == c->table.n && c->used <= c->fresh && c->fresh <= c->capacity;
}

int devcache_new(size_t capacity, struct devcache **ret)
{
        _cleanup_free_ struct devcache *c = NULL;

        if (capacity == 0)
                capacity = HP_DEVCACHE_DEFAULT;
        capacity = MIN(capacity, (size_t)HP_DEVCACHE_MAX);
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        hash_table_init(&c->table);
        c->slots = calloc(capacity, sizeof(struct slot));
        if (!c->slots || hash_table_reserve(&c->table, capacity) < 0) {
                free(c->slots);
                return -ENOMEM;
        }
        c->capacity = (uint32_t)capacity;
        c->free_head = NIL;
        c->fresh = 0;
        c->lru_head = c->lru_tail = NIL;
        c->stats.capacity = capacity;
        *ret = TAKE_PTR(c);
        return 0;
}

struct devcache *devcache_free(struct devcache *c)
{
        if (c) {
                free(c->slots);
                hash_table_clear(&c->table);
                free(c);
        }
        return NULL;
}

static void lru_unlink(struct devcache *c, uint32_t i)
{
        struct slot *s = &c->slots[i];

        if (s->prev != NIL)
                c->slots[s->prev].lru_next = s->lru_next;
        else
                c->lru_head = s->lru_next;
        if (s->lru_next != NIL)
                c->slots[s->lru_next].prev = s->prev;
        else
                c->lru_tail = s->prev;
}

static void lru_push_front(struct devcache *c, uint32_t i)
{
        struct slot *s = &c->slots[i];

        s->prev = NIL;
        s->lru_next = c->lru_head;
        if (c->lru_head != NIL)
                c->slots[c->lru_head].prev = i;
        c->lru_head = i;
        if (c->lru_tail == NIL)
                c->lru_tail = i;
}

static uint32_t find(const struct devcache *c, const struct key *k, uint64_t h)
{
        const struct slot *s = hash_table_get(&c->table, h, slot_is, k);

        return s ? (uint32_t)(s - c->slots) : NIL;
}

/* Take slot @i out of the table and the LRU list and put it on the free list. */
static void release(struct devcache *c, uint32_t i)
{
        assert(i < c->fresh && c->used > 0);
        (void)hash_table_remove(&c->table, c->slots[i].hash, hash_item_is, &c->slots[i]);
        lru_unlink(c, i);
        c->slots[i].next = c->free_head;
        c->free_head = i;
        c->used--;
        assert(counts_ok(c));
}

/* The record in slot @i, as struct devcache_entry (borrowed). */
static void fill(const struct devcache *c, uint32_t i, struct devcache_entry *ret)
{
        const struct slot *s = &c->slots[i];

        ret->flags = s->flags;
        ret->bus = s->buf + s->devpath_len + 1;
        ret->driver = ret->bus + s->bus_len + 1;
        ret->data = ret->driver + s->driver_len + 1;
        ret->size = s->data_size;
        ret->since = s->since;
}

int devcache_get(struct devcache *c, const char *devpath, struct devcache_entry *ret)
{
        struct key k = { devpath, 0 };
        uint64_t h = hash_string(devpath, &k.len);
        uint32_t i = find(c, &k, h);

        if (i == NIL) {
                c->stats.misses++;
                return 0;
        }
        c->stats.hits++;
        if (c->lru_head != i) {
                lru_unlink(c, i);
                lru_push_front(c, i);
        }
        fill(c, i, ret);
        return 1;
}

int devcache_peek(const struct devcache *c, const char *devpath, struct devcache_entry *ret)
{
        struct key k = { devpath, 0 };
        uint64_t h = hash_string(devpath, &k.len);
        uint32_t i = find(c, &k, h);

        if (i == NIL)
                return 0;
        fill(c, i, ret);
        return 1;
}

/* Append @n bytes of @src at *@o in @buf; false when they do not fit in HP_DEVCACHE_SLOT_BYTES. */
static bool append(char *buf, size_t *o, const void *src, size_t n)
{
        if (n > HP_DEVCACHE_SLOT_BYTES - *o)
                return false;
        if (n)
                memcpy(buf + *o, src, n);
        *o += n;
        return true;
}

/* A slot in neither the table nor the LRU list, for a new record: never used, free, or the LRU one evicted. */
static uint32_t take_slot(struct devcache *c)
{
        uint32_t i;

        if (c->free_head == NIL && c->fresh < c->capacity)
                return c->fresh++;
        if (c->free_head == NIL) {
                assert(c->lru_tail != NIL && c->used == c->capacity);
                release(c, c->lru_tail);
                c->stats.evictions++;
        }
        i = c->free_head;
        c->free_head = c->slots[i].next;
        return i;
}

int devcache_put(struct devcache *c, const char *devpath, const struct devcache_entry *e)
{
        const char *bus = e->bus ? e->bus : "", *driver = e->driver ? e->driver : "";
        size_t bus_len = strlen(bus), driver_len = strlen(driver), o = 0;
        struct key k = { devpath, 0 };
        uint64_t h = hash_string(devpath, &k.len);
        uint32_t i = find(c, &k, h);
        char buf[HP_DEVCACHE_SLOT_BYTES];
        struct slot *s;

        /* Assembled first: @e may point into the slot it replaces. */
        if (!append(buf, &o, devpath, k.len + 1) || !append(buf, &o, bus, bus_len + 1) ||
            !append(buf, &o, driver, driver_len + 1) || !append(buf, &o, e->data, e->size)) {
                if (i != NIL)
                        release(c, i);
                c->stats.too_big++;
                return -E2BIG;
        }
        if (i != NIL) {
                /* A replaced record keeps its slot (and its place in the table). */
                lru_unlink(c, i);
        } else {
                i = take_slot(c);
                c->slots[i].hash = h;
                (void)hash_table_add(&c->table, h, &c->slots[i]); /* cannot fail: room for every slot was reserved */
                c->used++;
        }
        s = &c->slots[i];
        s->devpath_len = (uint16_t)k.len;
        s->bus_len = (uint16_t)bus_len;
        s->driver_len = (uint16_t)driver_len;
        s->data_size = (uint16_t)e->size;
        s->flags = e->flags;
        s->since = e->since;
        memcpy(s->buf, buf, o);
        lru_push_front(c, i);
        assert(counts_ok(c) && c->lru_head == i);
        c->stats.stores++;
        return 0;
}

bool devcache_contains(const struct devcache *c, const char *devpath)
{
        struct key k = { devpath, 0 };
        uint64_t h = hash_string(devpath, &k.len);

        return find(c, &k, h) != NIL;
}

bool devcache_full(const struct devcache *c)
{
        return c->used == c->capacity;
}

void devcache_drop(struct devcache *c, const char *devpath)
{
        struct key k = { devpath, 0 };
        uint64_t h = hash_string(devpath, &k.len);
        uint32_t i = find(c, &k, h);

        if (i != NIL)
                release(c, i);
}

void devcache_get_stats(const struct devcache *c, struct devcache_stats *ret)
{
        *ret = c->stats;
        ret->used = c->used;
}

const char *packed_get(const char *data, size_t size, const char *key)
{
        size_t klen = strlen(key);

        for (size_t o = 0; o < size;) {
                const char *e = data + o;
                size_t l = strlen(e);
                if (l > klen && e[klen] == '=' && memcmp(e, key, klen) == 0)
                        return e + klen + 1;
                o += l + 1;
        }
        return NULL;
}
