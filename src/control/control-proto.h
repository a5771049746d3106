/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The wire format of the control socket, shared by the daemon (control.c)
 * and hotplugctl (client.c).  The protocol itself is described at the top of
 * control.h; this module only builds and reads records.
 *
 * A record is one packet: a word, then zero or more " key=value" fields.
 * Keys are [a-z0-9_]+.  Values are escaped so that a record never holds a
 * space, control byte, backslash or non-ASCII byte inside a value: each such
 * byte is written "\xNN".  A field that does not fit in the record is left
 * out whole and the record is marked truncated, so a record is always well
 * formed.  Nothing here allocates.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"

struct ctlmsg {
        char buf[HP_CONTROL_RECORD_MAX + 1]; /* NUL-terminated */
        size_t len;
        bool truncated;
};

/* Start a record with @word (trusted, no escaping). */
void ctlmsg_init(struct ctlmsg *m, const char *word);
/* An "error" record: errno=ERROR (made positive) message=MESSAGE. */
void ctlmsg_init_error(struct ctlmsg *m, int error, const char *message);
/* Append " key=value", escaping @value; NULL @value appends nothing. */
void ctlmsg_add_str(struct ctlmsg *m, const char *key, const char *value);
void ctlmsg_add_u64(struct ctlmsg *m, const char *key, uint64_t value);
void ctlmsg_add_i64(struct ctlmsg *m, const char *key, int64_t value);
/* " key=SECONDS.MICROSECONDS" of a CLOCK_REALTIME timestamp in microseconds. */
void ctlmsg_add_time(struct ctlmsg *m, const char *key, uint64_t usec);

/**
 * ctlmsg_escape() - escape a value for a record.
 * @src: NUL-terminated value (borrowed)
 * @dst: output (borrowed), NUL-terminated
 * @size: size of @dst
 * Return: the length written, or -ENOBUFS if it did not fit (@dst then holds a prefix).
 */
int ctlmsg_escape(const char *src, char *dst, size_t size);

/* True if @rec's first word is @word. */
bool ctlmsg_is(const char *rec, const char *word);

/**
 * ctlmsg_get() - value of @key in @rec, unescaped.
 * @rec: NUL-terminated record (borrowed)
 * @key: key to find
 * @out: output (borrowed), NUL-terminated; a value holding "\x00" is refused
 * @size: size of @out
 * Return: 0, -ENOENT if absent, -ENOBUFS if too long, -EBADMSG if badly escaped.
 */
int ctlmsg_get(const char *rec, const char *key, char *out, size_t size);
/* Decimal value of @key. Return: 0, -ENOENT, -EBADMSG. */
int ctlmsg_get_u64(const char *rec, const char *key, uint64_t *ret);

/**
 * ctlmsg_next_field() - iterate over the fields of a record.
 * @p: cursor; start with the record itself, the word is skipped
 * @key/@ksize, @val/@vsize: outputs (unescaped value)
 * Return: the cursor for the next call, or NULL when no field is left or the
 * field is malformed (no '=', a key outside [a-z0-9_], bad escape) or too long.
 */
const char *ctlmsg_next_field(const char *p, char *key, size_t ksize, char *val, size_t vsize);
