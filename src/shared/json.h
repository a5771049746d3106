/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A small JSON (RFC 8259) writer for hotplugctl's --json output: objects,
 * arrays, strings, numbers and booleans written to a stdio stream as they
 * come, one value after another, with the commas and colons put in for the
 * caller.
 *
 * Strings are bytes, not text: a value that is valid UTF-8 is written as a
 * JSON string holding exactly those characters (control characters, DEL
 * and the C1 controls U+0080-U+009F escaped, '"' and '\' too); a value that
 * is not valid UTF-8 (a stray or missing continuation byte, an overlong
 * form, a surrogate, a code point above U+10FFFF) is written as an array of
 * its byte values, 0-255, so nothing is lost or replaced.  A number is
 * written only from an integer or from text that already is a JSON number;
 * nothing is guessed from what a string looks like.
 *
 * Invariants: depth <= JSON_DEPTH_MAX; need_comma[d] says a value was
 * written at depth d; after a key, the next value takes no comma.  Misuse
 * (a key outside an object, a value where a key is due, nesting too deep,
 * closing what is not open, a second top-level value) sets the error flag
 * and stops all further output; json_done() reports it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_DEPTH_MAX 8

struct json_writer {
        FILE *f;                              /* borrowed */
        unsigned depth;
        bool need_comma[JSON_DEPTH_MAX + 1];
        bool in_object[JSON_DEPTH_MAX + 1];
        bool after_key;
        bool error;
};

/* Start writing to @f (borrowed). */
void json_init(struct json_writer *w, FILE *f);

void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);

/* A member name in the open object: @len bytes of @key (borrowed), as json_bytes() writes a string. */
void json_key(struct json_writer *w, const char *key, size_t len);
/* json_key() of a NUL-terminated name. */
void json_keyz(struct json_writer *w, const char *key);

/**
 * json_bytes() - write @len bytes of @s (borrowed) as a value.
 *
 * Valid UTF-8: a string.  Otherwise: an array of the byte values (0-255).
 */
void json_bytes(struct json_writer *w, const char *s, size_t len);
/* json_bytes() of a NUL-terminated value; NULL writes null. */
void json_str(struct json_writer *w, const char *s);
void json_u64(struct json_writer *w, uint64_t v);
void json_i64(struct json_writer *w, int64_t v);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);

/**
 * json_number_text() - write @text as a number if it is one.
 * @text: e.g. "42" or "1712345678.000123" (borrowed)
 *
 * Text that follows the JSON number grammar is written as it is (all its
 * digits kept); anything else is written as a string, so the output is
 * valid JSON whatever the text.
 */
void json_number_text(struct json_writer *w, const char *text);

/* True if @text (NUL-terminated) follows the JSON number grammar (RFC 8259, section 6). */
bool json_is_number(const char *text);

/**
 * utf8_char_len() - length of the valid UTF-8 character at @p.
 * @p: bytes (borrowed)
 * @n: bytes available at @p
 * Return: 1-4, or 0 if @p does not start a valid, shortest-form UTF-8
 * encoding of a Unicode scalar value (surrogates and values above
 * U+10FFFF are invalid) within @n bytes.
 */
size_t utf8_char_len(const unsigned char *p, size_t n);

/* True if all @len bytes of @s are valid UTF-8. */
bool utf8_valid(const char *s, size_t len);

/**
 * json_done() - check that one whole value was written.
 * Return: 0 if exactly one complete top-level value was written without
 * misuse, -EINVAL if not (the stream then holds no valid JSON: drop it),
 * -EIO if the stream failed.  Write a line to a memory stream and copy it
 * out only when this says 0.
 */
int json_done(struct json_writer *w);

/**
 * json_print_line() - one JSON value on one line of @out.
 * @out: where the line goes (borrowed)
 * @fn: writes exactly one value with @w
 * @arg: passed to @fn
 *
 * The value is built in memory and written, with a newline, only when
 * json_done() accepts it, so @out never gets a partial or invalid line.
 * Return: 0, -EINVAL (misuse: nothing written), -ENOMEM, or -EIO.
 */
int json_print_line(FILE *out, void (*fn)(struct json_writer *w, const void *arg), const void *arg);
