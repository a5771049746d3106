/* SPDX-License-Identifier: MIT */
/*
 * JSON writer (json.h).  Invariant: whatever the calls, what reaches the
 * stream is valid JSON so far, or the error flag is set and the line must be
 * dropped by the caller (json_done() says so).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"

void json_init(struct json_writer *w, FILE *f)
{
        memset(w, 0, sizeof(*w));
        w->f = f;
}

size_t utf8_char_len(const unsigned char *p, size_t n)
{
        unsigned char c = p[0];
        unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
        size_t len;

        if (n == 0)
                return 0;
        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                len = 2;
        else if (c >= 0xe0 && c <= 0xef) {
                len = 3;
                if (c == 0xe0)
                        lo = 0xa0;      /* overlong below U+0800 */
                else if (c == 0xed)
                        hi = 0x9f;      /* U+D800-U+DFFF: surrogates */
        } else if (c >= 0xf0 && c <= 0xf4) {
                len = 4;
                if (c == 0xf0)
                        lo = 0x90;      /* overlong below U+10000 */
                else if (c == 0xf4)
                        hi = 0x8f;      /* above U+10FFFF */
        } else
                return 0;               /* continuation byte, 0xc0/0xc1 (overlong), 0xf5-0xff */
        if (n < len || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        return len;
}

bool utf8_valid(const char *s, size_t len)
{
        const unsigned char *p = (const unsigned char *)s;

        for (size_t i = 0; i < len;) {
                size_t k = utf8_char_len(p + i, len - i);
                if (k == 0)
                        return false;
                i += k;
        }
        return true;
}

/* Before a value: the comma, or nothing after a key; refuses a value where a key is due. */
static bool value_start(struct json_writer *w)
{
        if (w->error)
                return false;
        assert(w->depth <= JSON_DEPTH_MAX);
        if (w->after_key) {
                w->after_key = false;
                return true;
        }
        if (w->in_object[w->depth] || (w->depth == 0 && w->need_comma[0])) {
                w->error = true; /* a value where a key is due, or a second top-level value */
                return false;
        }
        if (w->need_comma[w->depth])
                fputc(',', w->f);
        w->need_comma[w->depth] = true;
        return true;
}

static void open_container(struct json_writer *w, char c, bool object)
{
        if (!value_start(w))
                return;
        if (w->depth == JSON_DEPTH_MAX) {
                w->error = true;
                return;
        }
        fputc(c, w->f);
        w->depth++;
        w->need_comma[w->depth] = false;
        w->in_object[w->depth] = object;
}

static void close_container(struct json_writer *w, char c, bool object)
{
        if (w->error)
                return;
        if (w->depth == 0 || w->in_object[w->depth] != object || w->after_key) {
                w->error = true;
                return;
        }
        fputc(c, w->f);
        w->depth--;
}

void json_begin_object(struct json_writer *w)
{
        open_container(w, '{', true);
}

void json_end_object(struct json_writer *w)
{
        close_container(w, '}', true);
}

void json_begin_array(struct json_writer *w)
{
        open_container(w, '[', false);
}

void json_end_array(struct json_writer *w)
{
        close_container(w, ']', false);
}

/* The characters of a string, without the quotes; @s is valid UTF-8. */
static void write_chars(FILE *f, const unsigned char *s, size_t len)
{
        for (size_t i = 0; i < len; i++) {
                unsigned char c = s[i];

                if (c == '"' || c == '\\')
                        fprintf(f, "\\%c", c);
                else if (c == '\n')
                        fputs("\\n", f);
                else if (c == '\t')
                        fputs("\\t", f);
                else if (c == '\r')
                        fputs("\\r", f);
                else if (c == '\b')
                        fputs("\\b", f);
                else if (c == '\f')
                        fputs("\\f", f);
                else if (c < 0x20 || c == 0x7f)
                        fprintf(f, "\\u%04x", c);
                else if (c == 0xc2 && i + 1 < len && s[i + 1] < 0xa0) {
                        /* U+0080-U+009F, the C1 controls: escaped like the C0 ones. */
                        fprintf(f, "\\u%04x", s[i + 1]);
                        i++;
                } else
                        fputc(c, f);
        }
}

/* A string for a key: valid UTF-8 as it is, any other byte as U+FFFD (keys are ASCII by protocol). */
void json_key(struct json_writer *w, const char *key, size_t len)
{
        const unsigned char *p = (const unsigned char *)key;

        if (w->error)
                return;
        if (!w->in_object[w->depth] || w->after_key || w->depth == 0) {
                w->error = true;
                return;
        }
        if (w->need_comma[w->depth])
                fputc(',', w->f);
        w->need_comma[w->depth] = true;
        fputc('"', w->f);
        for (size_t i = 0; i < len;) {
                size_t k = utf8_char_len(p + i, len - i);
                if (k == 0) {
                        fputs("\\ufffd", w->f);
                        i++;
                        continue;
                }
                write_chars(w->f, p + i, k);
                i += k;
        }
        fputs("\":", w->f);
        w->after_key = true;
}

void json_keyz(struct json_writer *w, const char *key)
{
        json_key(w, key, strlen(key));
}

void json_bytes(struct json_writer *w, const char *s, size_t len)
{
        if (!utf8_valid(s, len)) {
                json_begin_array(w);
                for (size_t i = 0; i < len; i++)
                        json_u64(w, (unsigned char)s[i]);
                json_end_array(w);
                return;
        }
        if (!value_start(w))
                return;
        fputc('"', w->f);
        write_chars(w->f, (const unsigned char *)s, len);
        fputc('"', w->f);
}

void json_str(struct json_writer *w, const char *s)
{
        if (!s)
                json_null(w);
        else
                json_bytes(w, s, strlen(s));
}

void json_u64(struct json_writer *w, uint64_t v)
{
        if (value_start(w))
                fprintf(w->f, "%" PRIu64, v);
}

void json_i64(struct json_writer *w, int64_t v)
{
        if (value_start(w))
                fprintf(w->f, "%" PRId64, v);
}

void json_bool(struct json_writer *w, bool v)
{
        if (value_start(w))
                fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w)
{
        if (value_start(w))
                fputs("null", w->f);
}

static const char *digits(const char *p)
{
        while (*p >= '0' && *p <= '9')
                p++;
        return p;
}

bool json_is_number(const char *t)
{
        const char *p = t, *q;

        if (*p == '-')
                p++;
        if (*p == '0')
                p++;
        else if (*p >= '1' && *p <= '9')
                p = digits(p);
        else
                return false;
        if (*p == '.') {
                q = digits(p + 1);
                if (q == p + 1)
                        return false;
                p = q;
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                q = digits(p);
                if (q == p)
                        return false;
                p = q;
        }
        return *p == '\0';
}

void json_number_text(struct json_writer *w, const char *text)
{
        if (!json_is_number(text)) {
                json_str(w, text);
                return;
        }
        if (value_start(w))
                fputs(text, w->f);
}

int json_done(struct json_writer *w)
{
        if (w->error || w->depth != 0 || w->after_key || !w->need_comma[0])
                return -EINVAL;
        if (fflush(w->f) != 0 || ferror(w->f))
                return -EIO;
        return 0;
}

int json_print_line(FILE *out, void (*fn)(struct json_writer *w, const void *arg), const void *arg)
{
        struct json_writer w;
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        int r;

        if (!f)
                return -ENOMEM;
        json_init(&w, f);
        fn(&w, arg);
        r = json_done(&w);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        if (r == 0 && (fwrite(buf, 1, size, out) != size || fputc('\n', out) == EOF || fflush(out) != 0))
                r = -EIO;
        free(buf);
        return r;
}
