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

struct json_writer;

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

/*
 * A list of entries (environment "KEY=VALUE" strings, or arguments) cut into
 * records: each entry is a field " var=ENTRY"; an entry that does not fit
 * whole in what is left of a record is cut there (never inside an escape)
 * and goes on in the next record as a first field " cont=REST".  Readers
 * join a cont= to the entry before it.
 */
struct ctlmsg_cursor {
        const char *const *entries; /* borrowed */
        size_t n;
        size_t i;                   /* the entry being written */
        size_t off;                 /* bytes of entries[i] written already */
};

/**
 * ctlmsg_add_entries() - append entries from @cur until @m is full.
 * @m: a started record
 * @cur: where to go on from; advanced past what was written
 * Return: true when every entry is in (@m may take more fields), false
 * when @m is full and entries remain (send it, start the next record and
 * call again; a fresh record always takes part of the next entry).
 */
bool ctlmsg_add_entries(struct ctlmsg *m, struct ctlmsg_cursor *cur);

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

/* What a field's value is, by its key (the types listed in control.h). */
enum ctlmsg_type {
        CTLMSG_TEXT,   /* bytes */
        CTLMSG_UINT,   /* unsigned decimal */
        CTLMSG_TIME,   /* SECONDS.MICROSECONDS */
        CTLMSG_FLAG,   /* 0 or 1 */
};

enum ctlmsg_type ctlmsg_field_type(const char *key);

/**
 * ctlmsg_json_fields() - the fields of @rec as members of an open JSON object.
 * @w: writer, inside an object
 * @rec: NUL-terminated record (borrowed); its word is not written
 *
 * Each field becomes "key": value by ctlmsg_field_type(): a number for
 * UINT and TIME (as sent, all digits kept), true/false for FLAG, and
 * json_bytes() of the unescaped value for TEXT.  A value that does not
 * have its type's form is written as text, never as a guess.
 */
void ctlmsg_json_fields(struct json_writer *w, const char *rec);
