/* SPDX-License-Identifier: MIT */
/*
 * Accessors and the single heap copy of a parsed uevent.  The copy keeps
 * the datagram byte for byte (record, replay and rebroadcast need it) and
 * appends the handler additions and argv[1] in the same allocation.
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

int uevent_dup(const struct uevent *view, const struct envbuf *extra, const char *name, struct uevent **ret)
{
        size_t name_len, extra_size = extra ? extra->used : 0;
        size_t var_bytes = (size_t)view->n_vars * sizeof(uint16_t);
        struct uevent *ev;
        char *p;

        if (!name)
                name = view->subsystem;
        name_len = strlen(name) + 1;

        ev = malloc(sizeof(*ev) + var_bytes + view->size + extra_size + name_len);
        if (!ev)
                return -ENOMEM;
        *ev = *view;

        p = (char *)(ev + 1);
        memcpy(p, view->var, var_bytes);
        ev->var = (const uint16_t *)(void *)p;
        p += var_bytes;

        memcpy(p, view->buf, view->size);
        ev->action = rebase(view->action, view->buf, p);
        ev->devpath = rebase(view->devpath, view->buf, p);
        ev->subsystem = rebase(view->subsystem, view->buf, p);
        ev->devpath_old = rebase(view->devpath_old, view->buf, p);
        ev->buf = p;
        p += view->size;

        ev->extra = p;
        ev->n_extra = 0;
        ev->extra_size = (uint16_t)extra_size;
        if (extra) {
                /* Entries are packed in insertion order; replacements were compacted by envbuf. */
                for (unsigned i = 0; i < extra->n; i++) {
                        const char *s = envbuf_entry(extra, i);
                        size_t l = strlen(s) + 1;
                        memcpy(p, s, l);
                        p += l;
                }
                ev->n_extra = extra->n;
        }

        memcpy(p, name, name_len);
        ev->name = p;
        ev->sched_data = NULL;
        ev->owner_data = NULL;
        *ret = ev;
        return 0;
}

bool devpath_is_prefix(const char *ancestor, size_t alen, const char *path, size_t plen)
{
        if (alen > plen || memcmp(ancestor, path, alen) != 0)
                return false;
        return alen == plen || path[alen] == '/';
}
