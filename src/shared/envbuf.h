/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Bounded environment builder: the handler chain appends "KEY=VALUE\0"
 * entries here.  It never allocates; when either bound (bytes or entries)
 * would be exceeded it returns -ENOMEM and leaves the contents unchanged,
 * as the kernel's add_uevent_var() did.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"

struct envbuf {
        uint16_t used;                     /* bytes in data */
        uint16_t n;                        /* entries */
        uint16_t off[HP_ENV_ADD_MAX_VARS]; /* start of each entry in data */
        char data[HP_ENV_ADD_MAX_BYTES];
};

static inline void envbuf_init(struct envbuf *e)
{
        e->used = 0;
        e->n = 0;
}

/* Valid environment key: [A-Za-z0-9_]+, not starting with a digit. */
int env_key_valid(const char *key, size_t len);

/**
 * env_key_refused() - a variable no agent is given, whoever supplies it.
 * @key: the key, or an entry "KEY=VALUE" (borrowed, NUL-terminated when
 *       @key[@len] is '='); only the key's @len bytes count, except for
 *       the locale variables (LANG, LANGUAGE, LC_*) of an entry: refused
 *       when the value holds a '/' (a path glibc would load locales from)
 * @len: bytes of the key
 *
 * HOME and PATH (the agent contract fixes them), and the variables that
 * change how programs are loaded or how shells behave: see hotplugd(8),
 * ENVIRONMENT.  The kernel sends none of them.  A block list is never
 * complete: it is the second line of defence behind trusting what is
 * replayed (source-replay.c) and handlers.
 * Return: 1 if refused, else 0 (also for NULL or an empty key).
 */
int env_key_refused(const char *key, size_t len);

/**
 * envbuf_add() - append KEY=VALUE.
 * @e: builder (borrowed)
 * @key: variable name, must satisfy env_key_valid() (borrowed)
 * @value: value bytes up to NUL, any byte but NUL (borrowed; may point into @e)
 *
 * A key already present is replaced only if the new entry fits; the new
 * entry then moves to the end.  On any error @e is unchanged.
 * Return: 0, -EINVAL for a bad key or a NULL value, -ENOMEM when either
 * bound (HP_ENV_ADD_MAX_BYTES, HP_ENV_ADD_MAX_VARS) would be exceeded.
 */
int envbuf_add(struct envbuf *e, const char *key, const char *value);
/* envbuf_add() of a formatted value; -ENOMEM also when the value alone
 * exceeds HP_ENV_ADD_MAX_BYTES. */
int envbuf_addf(struct envbuf *e, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/**
 * format_bounded() - vsnprintf() into @buf that reports truncation.
 * Return: 0, -EINVAL on a format error, -ENOMEM when the result does not fit.
 */
int format_bounded(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Value of @key or NULL (borrowed from @e; NULL too for an invalid key). */
const char *envbuf_get(const struct envbuf *e, const char *key);

/* Entry i as "KEY=VALUE" (borrowed). */
static inline const char *envbuf_entry(const struct envbuf *e, unsigned i)
{
        return e->data + e->off[i];
}
