/* SPDX-License-Identifier: MIT */
/*
 * The per-device event history of hotplugctl info (devinfo.h): devices in
 * the shared hash table and on one LRU list; every allocation's size added
 * to the device's and the store's byte counts when made and taken off when
 * freed, so that the bounds hold exactly.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/devinfo.h"
#include "shared/macro.h"

static bool device_is(const void *item, const void *key)
{
        return strcmp(((const struct devinfo_device *)item)->devpath, key) == 0;
}

void devinfo_init(struct devinfo *s, size_t max_devices, size_t max_bytes)
{
        *s = (struct devinfo){ .max_devices = max_devices ? max_devices : 1, .max_bytes = max_bytes };
        hash_table_init(&s->table);
        list_init(&s->lru);
}

/* A copy of @text cut at HP_INFO_TEXT_MAX - 1 bytes, its size added to *@bytes; NULL without memory. */
static char *text_dup(const char *text, size_t *bytes)
{
        size_t n = strnlen(text ? text : "", HP_INFO_TEXT_MAX - 1);
        char *p = malloc(n + 1);

        if (!p)
                return NULL;
        memcpy(p, text ? text : "", n);
        p[n] = '\0';
        *bytes += n + 1;
        return p;
}

static size_t text_size(const char *text)
{
        return text ? strlen(text) + 1 : 0;
}

/* Free @e, its size taken off *@bytes. */
static void event_free(struct devinfo_event *e, size_t *bytes)
{
        if (!e)
                return;
        for (uint32_t i = 0; i < e->n_run; i++) {
                *bytes -= text_size(e->run[i].program) + text_size(e->run[i].status);
                free(e->run[i].program);
                free(e->run[i].status);
        }
        for (uint32_t i = 0; i < e->n_wait; i++) {
                *bytes -= text_size(e->wait[i].reason);
                free(e->wait[i].reason);
        }
        *bytes -= e->a_run * sizeof(*e->run);
        *bytes -= sizeof(*e);
        free(e->run);
        free(e);
}

/* Forget @d whole. */
static void device_drop(struct devinfo *s, struct devinfo_device *d)
{
        size_t before = d->bytes;

        (void)hash_table_remove(&s->table, d->hash, hash_item_is, d);
        list_unlink(&d->lru);
        for (size_t i = 0; i < ELEMENTSOF(d->ev); i++)
                event_free(d->ev[i], &d->bytes);
        assert(d->bytes == sizeof(*d) + strlen(d->devpath) + 1);
        s->bytes -= before;
        s->n--;
        free(d);
}

void devinfo_clear(struct devinfo *s)
{
        struct devinfo_device *d, *next;

        list_for_each_safe(d, next, &s->lru, lru)
                device_drop(s, d);
        assert(s->n == 0 && s->bytes == 0);
        hash_table_clear(&s->table);
}

static struct devinfo_device *device_find(const struct devinfo *s, const char *devpath)
{
        return hash_table_get(&s->table, hash_string(devpath, NULL), device_is, devpath);
}

/* The device of @devpath, new if need be, made the most recently heard of; NULL without memory. */
static struct devinfo_device *device_get(struct devinfo *s, const char *devpath)
{
        size_t len;
        uint64_t h = hash_string(devpath, &len);
        struct devinfo_device *d = hash_table_get(&s->table, h, device_is, devpath);

        if (!d) {
                d = calloc(1, sizeof(*d) + len + 1);
                if (!d)
                        return NULL;
                memcpy(d->devpath, devpath, len + 1);
                d->hash = h;
                if (hash_table_add(&s->table, h, d) < 0) {
                        free(d);
                        return NULL;
                }
                d->bytes = sizeof(*d) + len + 1;
                s->bytes += d->bytes;
                s->n++;
        } else {
                list_unlink(&d->lru);
        }
        list_add_head(&s->lru, &d->lru);
        return d;
}

/* Forget the devices heard of least recently while past a bound, never @keep. */
static void evict(struct devinfo *s, const struct devinfo_device *keep)
{
        while (s->n > s->max_devices || s->bytes > s->max_bytes) {
                struct devinfo_device *old = list_entry(s->lru.prev, struct devinfo_device, lru);

                if (old == keep)
                        break;
                device_drop(s, old);
                s->evicted++;
        }
}

/* @d's bytes changed from @before: the store's count follows. */
static void device_resized(struct devinfo *s, struct devinfo_device *d, size_t before)
{
        s->bytes = s->bytes - before + d->bytes;
}

static struct devinfo_event *ring_find(const struct devinfo_device *d, uint64_t seqnum)
{
        for (size_t i = 0; d && i < ELEMENTSOF(d->ev); i++)
                if (d->ev[i] && d->ev[i]->seqnum == seqnum)
                        return d->ev[i];
        return NULL;
}

struct devinfo_event *devinfo_event_add(struct devinfo *s, const char *devpath, uint64_t seqnum, const char *action,
                                        usec_t real, usec_t mono)
{
        struct devinfo_device *d = device_get(s, devpath);
        struct devinfo_event *e;
        size_t before;

        if (!d)
                return NULL;
        e = ring_find(d, seqnum);
        if (e)
                return e;
        e = calloc(1, sizeof(*e));
        if (!e) {
                evict(s, d);
                return NULL;
        }
        before = d->bytes;
        event_free(d->ev[d->next], &d->bytes);
        d->ev[d->next] = e;
        d->next = (d->next + 1) % HP_INFO_EVENTS;
        d->bytes += sizeof(*e);
        *e = (struct devinfo_event){ .seqnum = seqnum, .real = real, .mono = mono, .outcome = DEVINFO_HELD };
        strncpy(e->action, action ? action : "", sizeof(e->action) - 1);
        device_resized(s, d, before);
        evict(s, d);
        return e;
}

struct devinfo_event *devinfo_event_find(const struct devinfo *s, const char *devpath, uint64_t seqnum)
{
        return ring_find(device_find(s, devpath), seqnum);
}

void devinfo_event_waited(struct devinfo *s, const char *devpath, uint64_t seqnum, uint64_t blocker,
                          usec_t waited, const char *reason)
{
        struct devinfo_device *d = device_find(s, devpath);
        struct devinfo_event *e = ring_find(d, seqnum);
        size_t before;

        if (!e || e->n_wait >= ELEMENTSOF(e->wait))
                return;
        before = d->bytes;
        e->wait[e->n_wait++] = (struct devinfo_wait){ .blocker = blocker, .waited = waited,
                                                      .reason = text_dup(reason, &d->bytes) };
        device_resized(s, d, before);
        evict(s, d);
}

void devinfo_run_start(struct devinfo *s, const char *devpath, uint64_t seqnum, const char *program, pid_t pid,
                       usec_t started)
{
        struct devinfo_device *d = device_find(s, devpath);
        struct devinfo_event *e = ring_find(d, seqnum);
        size_t before;

        if (!e)
                return;
        if (e->n_run >= HP_INFO_RUNS) {
                e->runs_left_out++;
                return;
        }
        before = d->bytes;
        if (e->n_run == e->a_run) { /* 1, 2, 4, ... HP_INFO_RUNS */
                uint32_t a = e->a_run ? MIN(e->a_run * 2, (uint32_t)HP_INFO_RUNS) : 1;
                struct devinfo_run *v = reallocarray(e->run, a, sizeof(*e->run));

                if (!v) {
                        e->runs_left_out++;
                        return;
                }
                e->run = v;
                d->bytes += (a - e->a_run) * sizeof(*e->run);
                e->a_run = a;
        }
        e->run[e->n_run++] = (struct devinfo_run){ .program = text_dup(program, &d->bytes), .pid = pid,
                                                   .started = started };
        device_resized(s, d, before);
        evict(s, d);
}

void devinfo_run_end(struct devinfo *s, const char *devpath, uint64_t seqnum, pid_t pid, const char *status,
                     bool failed, bool timed_out, usec_t duration)
{
        struct devinfo_device *d = device_find(s, devpath);
        struct devinfo_event *e = ring_find(d, seqnum);
        struct devinfo_run *r = NULL;
        size_t before;

        for (uint32_t i = e ? e->n_run : 0; i > 0 && !r; i--)
                if (e->run[i - 1].pid == pid && !e->run[i - 1].status)
                        r = &e->run[i - 1];
        if (!r)
                return; /* not kept (past HP_INFO_RUNS, without memory, or the event is gone) */
        before = d->bytes;
        r->status = text_dup(status, &d->bytes);
        r->failed = failed;
        r->timed_out = timed_out;
        r->duration = duration;
        device_resized(s, d, before);
        evict(s, d);
}

void devinfo_event_outcome(struct devinfo *s, const char *devpath, uint64_t seqnum, enum devinfo_outcome outcome)
{
        struct devinfo_event *e = devinfo_event_find(s, devpath, seqnum);

        if (e)
                e->outcome = outcome;
}

const struct devinfo_device *devinfo_get(const struct devinfo *s, const char *devpath)
{
        return device_find(s, devpath);
}

const struct devinfo_event *devinfo_device_event(const struct devinfo_device *d, size_t i)
{
        size_t seen = 0;

        for (size_t k = 0; k < HP_INFO_EVENTS; k++) {
                const struct devinfo_event *e = d->ev[(d->next + k) % HP_INFO_EVENTS];

                if (e && seen++ == i)
                        return e;
        }
        return NULL;
}

const struct devinfo_device *devinfo_next(const struct devinfo *s, size_t *iter)
{
        return hash_table_next(&s->table, iter);
}

const char *devinfo_outcome_to_string(enum devinfo_outcome o)
{
        static const char *const names[_DEVINFO_OUTCOME_MAX] = { "held", "done", "filtered", "dropped" };

        return o < _DEVINFO_OUTCOME_MAX ? names[o] : "unknown";
}
