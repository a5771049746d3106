/* SPDX-License-Identifier: MIT */
/* hotplugctl trigger's match options, checked against sysfs (trigger-match.h). */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/trigger-match.h"
#include "shared/macro.h"
#include "shared/sysfs.h"

/* A sysfs attribute holds at most a page; the uevent file too. */
#define ATTR_SIZE 8192

/* An --attr-match FILE: a relative path without "." or ".." components. */
static bool plain_attr(const char *file, size_t len)
{
        if (len == 0 || file[0] == '/')
                return false;
        for (const char *c = file; c < file + len;) {
                size_t k = strcspn(c, "/");

                k = MIN(k, (size_t)(file + len - c));
                if (k == 0 || (k == 1 && c[0] == '.') || (k == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += k + 1;
        }
        return true;
}

int trigger_match_add(struct trigger_match *m, enum trigger_match_kind kind, const char *value)
{
        size_t *n = &m->n[kind];

        if (*n == TRIGGER_MATCH_MAX)
                return -E2BIG;
        if (kind == TRIGGER_MATCH_PROPERTY && (!strchr(value, '=') || value[0] == '='))
                return -EINVAL;
        if ((kind == TRIGGER_MATCH_ATTR || kind == TRIGGER_NOMATCH_ATTR) && !plain_attr(value, strcspn(value, "=")))
                return -EINVAL;
        if (kind == TRIGGER_MATCH_PARENT) {
                m->parents[*n] = strdup(value);
                if (!m->parents[*n])
                        return -ENOMEM;
                value = m->parents[*n];
        }
        m->v[kind][(*n)++] = value;
        return 0;
}

void trigger_match_done(struct trigger_match *m)
{
        for (size_t i = 0; i < m->n[TRIGGER_MATCH_PARENT]; i++)
                free(m->parents[i]);
        m->n[TRIGGER_MATCH_PARENT] = 0;
}

static bool any_glob(const struct trigger_match *m, enum trigger_match_kind kind, const char *s)
{
        for (size_t i = 0; i < m->n[kind]; i++)
                if (fnmatch(m->v[kind][i], s, 0) == 0)
                        return true;
        return false;
}

/* FILE or FILE=GLOB of the device open as @fd: readable, and its value matches. */
static bool attr_holds(int fd, const char *match)
{
        char file[PATH_MAX], value[ATTR_SIZE];
        size_t flen = strcspn(match, "=");
        int len;

        if (fd < 0 || flen >= sizeof(file))
                return false;
        memcpy(file, match, flen);
        file[flen] = '\0';
        len = sysfs_read_at(fd, file, value, sizeof(value));
        if (len < 0)
                return false;
        if (!match[flen])
                return true;
        while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t' || value[len - 1] == '\n'))
                value[--len] = '\0';
        return fnmatch(match + flen + 1, value, 0) == 0;
}

/* Does "KEY=VALUE" match any --property-match? */
static bool property_matches(const struct trigger_match *m, const char *key, size_t klen, const char *value)
{
        char k[256];

        if (klen >= sizeof(k))
                return false;
        memcpy(k, key, klen);
        k[klen] = '\0';
        for (size_t i = 0; i < m->n[TRIGGER_MATCH_PROPERTY]; i++) {
                const char *p = m->v[TRIGGER_MATCH_PROPERTY][i], *eq = strchr(p, '=');
                char kp[256];

                if ((size_t)(eq - p) >= sizeof(kp))
                        continue;
                memcpy(kp, p, (size_t)(eq - p));
                kp[eq - p] = '\0';
                if (fnmatch(kp, k, 0) == 0 && fnmatch(eq + 1, value, 0) == 0)
                        return true;
        }
        return false;
}

/* Any --property-match against SUBSYSTEM, DEVPATH and the uevent file's lines. */
static bool properties_match(const struct trigger_match *m, int fd, const char *devpath, const char *subsystem)
{
        char buf[ATTR_SIZE];

        if (property_matches(m, "SUBSYSTEM", strlen("SUBSYSTEM"), subsystem) ||
            property_matches(m, "DEVPATH", strlen("DEVPATH"), devpath))
                return true;
        if (fd < 0 || sysfs_read_at(fd, "uevent", buf, sizeof(buf)) < 0)
                return false;
        for (char *line = buf, *next; *line; line = next) {
                char *eq;

                next = line + strcspn(line, "\n");
                if (*next)
                        *next++ = '\0';
                eq = strchr(line, '=');
                if (eq && property_matches(m, line, (size_t)(eq - line), eq + 1))
                        return true;
        }
        return false;
}

static bool below_parent(const struct trigger_match *m, const char *syspath)
{
        for (size_t i = 0; i < m->n[TRIGGER_MATCH_PARENT]; i++) {
                size_t len = strlen(m->parents[i]);

                if (strncmp(syspath, m->parents[i], len) == 0 && (!syspath[len] || syspath[len] == '/'))
                        return true;
        }
        return false;
}

bool trigger_match_passes(const struct trigger_match *m, const char *syspath, const char *devpath,
                          const char *subsystem)
{
        _cleanup_close_ int fd = -1;
        char sysname[NAME_MAX + 1];

        if ((m->n[TRIGGER_MATCH_SUBSYSTEM] && !any_glob(m, TRIGGER_MATCH_SUBSYSTEM, subsystem)) ||
            any_glob(m, TRIGGER_NOMATCH_SUBSYSTEM, subsystem))
                return false;
        if (m->n[TRIGGER_MATCH_PARENT] && !below_parent(m, syspath))
                return false;
        if (m->n[TRIGGER_MATCH_SYSNAME]) {
                /* The sysname as libudev has it: '!' for '/'. */
                snprintf(sysname, sizeof(sysname), "%s", sysfs_basename(syspath));
                for (char *c = sysname; (c = strchr(c, '!')); c++)
                        *c = '/';
                if (!any_glob(m, TRIGGER_MATCH_SYSNAME, sysname))
                        return false;
        }
        if (!m->n[TRIGGER_MATCH_ATTR] && !m->n[TRIGGER_NOMATCH_ATTR] && !m->n[TRIGGER_MATCH_PROPERTY])
                return true;
        fd = open(syspath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; i < m->n[TRIGGER_MATCH_ATTR]; i++)
                if (!attr_holds(fd, m->v[TRIGGER_MATCH_ATTR][i]))
                        return false;
        for (size_t i = 0; i < m->n[TRIGGER_NOMATCH_ATTR]; i++)
                if (attr_holds(fd, m->v[TRIGGER_NOMATCH_ATTR][i]))
                        return false;
        return !m->n[TRIGGER_MATCH_PROPERTY] || properties_match(m, fd, devpath, subsystem);
}
