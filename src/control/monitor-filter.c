/* SPDX-License-Identifier: MIT */
/*
 * A monitor client's filter (monitor-filter.h).  Each match's strings are
 * appended to the filter's buffer, NUL-terminated, and never move.
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "control/monitor-filter.h"
#include "uevent/uevent.h"

/* Copy @len bytes of @s into @f's buffer. Return: the copy, or NULL if it is full. */
static const char *keep(struct monitor_filter *f, const char *s, size_t len)
{
        char *d = f->buf + f->used;

        if (len >= sizeof(f->buf) - f->used)
                return NULL;
        memcpy(d, s, len);
        d[len] = '\0';
        f->used += len + 1;
        return d;
}

static int add_subsystem(struct monitor_filter *f, const char *value)
{
        size_t slen = strcspn(value, "/"), i = f->n_subsystem;
        const char *dt = value[slen] ? value + slen + 1 : NULL;

        if (!uevent_subsystem_valid(value, slen) || (dt && (!*dt || strchr(dt, '/'))))
                return -EINVAL;
        if (i == HP_CONTROL_MONITOR_MATCHES_MAX)
                return -E2BIG;
        f->subsystem[i] = keep(f, value, slen);
        f->devtype[i] = dt ? keep(f, dt, strlen(dt)) : NULL;
        if (!f->subsystem[i] || (dt && !f->devtype[i]))
                return -E2BIG;
        f->n_subsystem = i + 1;
        return 0;
}

static int add_property(struct monitor_filter *f, const char *value)
{
        size_t klen = strcspn(value, "="), i = f->n_property;

        if (klen == 0 || !value[klen] || klen > HP_UEVENT_KEY_MAX ||
            strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != klen)
                return -EINVAL;
        if (i == HP_CONTROL_MONITOR_MATCHES_MAX)
                return -E2BIG;
        f->key[i] = keep(f, value, klen);
        f->pattern[i] = keep(f, value + klen + 1, strlen(value + klen + 1));
        if (!f->key[i] || !f->pattern[i])
                return -E2BIG;
        f->n_property = i + 1;
        return 0;
}

int monitor_filter_add(struct monitor_filter *f, const char *kind, const char *value)
{
        if (strcmp(kind, "subsystem") == 0)
                return add_subsystem(f, value);
        if (strcmp(kind, "property") == 0)
                return add_property(f, value);
        return -EINVAL;
}

static bool subsystem_matches(const struct monitor_filter *f, const struct uevent *ev)
{
        const char *devtype = uevent_get(ev, "DEVTYPE");

        for (size_t i = 0; i < f->n_subsystem; i++)
                if (strcmp(ev->subsystem, f->subsystem[i]) == 0 &&
                    (!f->devtype[i] || (devtype && strcmp(devtype, f->devtype[i]) == 0)))
                        return true;
        return false;
}

static bool property_matches(const struct monitor_filter *f, const struct uevent *ev)
{
        for (size_t i = 0; i < f->n_property; i++) {
                const char *v = uevent_get(ev, f->key[i]);

                if (v && fnmatch(f->pattern[i], v, 0) == 0)
                        return true;
        }
        return false;
}

bool monitor_filter_match(const struct monitor_filter *f, const struct uevent *ev)
{
        return (f->n_subsystem == 0 || subsystem_matches(f, ev)) && (f->n_property == 0 || property_matches(f, ev));
}

void monitor_filter_clear(struct monitor_filter *f)
{
        f->used = 0;
        f->n_subsystem = 0;
        f->n_property = 0;
}
