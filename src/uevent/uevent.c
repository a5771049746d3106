/* SPDX-License-Identifier: MIT */
/*
 * Accessors and the single heap copy of a parsed uevent.  The copy keeps
 * the datagram byte for byte (record, replay and rebroadcast need it) and
 * appends the handler additions and argv[1] in the same allocation:
 * struct uevent, var offsets, datagram, additions, argv[1].
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/envbuf.h"
#include "uevent/uevent.h"

static const char *lookup(const char *entries, const uint16_t *off, unsigned n, const char *key)
{
        size_t klen = strlen(key);

        for (unsigned i = 0; i < n; i++) {
                const char *s = entries + off[i];
                /* strncmp, not memcmp: an entry may be shorter than @key and
                 * be the last bytes of the buffer. */
                if (strncmp(s, key, klen) == 0 && s[klen] == '=')
                        return s + klen + 1;
        }
        return NULL;
}

const char *uevent_get(const struct uevent *ev, const char *key)
{
        return lookup(ev->buf, ev->var, ev->n_vars, key);
}

const char *uevent_get_extra(const struct uevent *ev, const char *key)
{
        size_t klen = strlen(key);
        const char *s = ev->extra;

        for (unsigned i = 0; i < ev->n_extra; i++) {
                if (strncmp(s, key, klen) == 0 && s[klen] == '=')
                        return s + klen + 1;
                s += strlen(s) + 1;
        }
        return NULL;
}

static const char *rebase(const char *p, const char *old, const char *new)
{
        return p ? new + (p - old) : NULL;
}

size_t uevent_copy_size(const struct uevent *ev)
{
        const char *name = ev->name ? ev->name : ev->subsystem;

        return sizeof(*ev) + (size_t)ev->n_vars * sizeof(uint16_t) + ev->size + ev->extra_size + strlen(name) + 1;
}

int uevent_clone(const struct uevent *ev, struct uevent **ret)
{
        size_t var_bytes = (size_t)ev->n_vars * sizeof(uint16_t);
        const char *name = ev->name ? ev->name : ev->subsystem;
        size_t name_len = strlen(name) + 1;
        struct uevent *c;
        char *p;

        c = malloc(uevent_copy_size(ev));
        if (!c)
                return -ENOMEM;
        *c = *ev;

        p = (char *)(c + 1);
        memcpy(p, ev->var, var_bytes);
        c->var = (const uint16_t *)(void *)p;
        p += var_bytes;

        memcpy(p, ev->buf, ev->size);
        c->action = rebase(ev->action, ev->buf, p);
        c->devpath = rebase(ev->devpath, ev->buf, p);
        c->subsystem = rebase(ev->subsystem, ev->buf, p);
        c->devpath_old = rebase(ev->devpath_old, ev->buf, p);
        c->buf = p;
        p += ev->size;

        /* Entries back to back, as envbuf keeps them (replacements compacted). */
        if (ev->extra_size > 0)
                memcpy(p, ev->extra, ev->extra_size);
        c->extra = p;
        p += ev->extra_size;

        memcpy(p, name, name_len);
        c->name = p;
        c->sched_data = NULL;
        c->owner_data = NULL;
        *ret = c;
        return 0;
}

int uevent_dup(const struct uevent *view, const struct envbuf *extra, const char *name, struct uevent **ret)
{
        struct uevent ev = *view;

        ev.extra = extra ? extra->data : NULL;
        ev.n_extra = extra ? extra->n : 0;
        ev.extra_size = extra ? extra->used : 0;
        ev.name = name;
        return uevent_clone(&ev, ret);
}

bool devpath_is_prefix(const char *ancestor, size_t alen, const char *path, size_t plen)
{
        if (alen > plen || memcmp(ancestor, path, alen) != 0)
                return false;
        return alen == plen || path[alen] == '/';
}
