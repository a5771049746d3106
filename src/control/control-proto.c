/* SPDX-License-Identifier: MIT */
/*
 * Control socket records: building and reading " key=value" fields.
 * Invariant of a built record: buf[len] == '\0' and len <= HP_CONTROL_RECORD_MAX.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "control/control-proto.h"
#include "shared/number.h"

static bool plain_byte(unsigned char c)
{
        return c > ' ' && c < 0x7f && c != '\\';
}

int ctlmsg_escape(const char *src, char *dst, size_t size)
{
        static const char hex[] = "0123456789abcdef";
        size_t n = 0;

        if (size == 0)
                return -ENOBUFS;
        for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
                if (plain_byte(*s)) {
                        if (n + 1 >= size)
                                goto full;
                        dst[n++] = (char)*s;
                        continue;
                }
                if (n + 4 >= size)
                        goto full;
                dst[n++] = '\\';
                dst[n++] = 'x';
                dst[n++] = hex[*s >> 4];
                dst[n++] = hex[*s & 15];
        }
        dst[n] = '\0';
        return (int)n;
full:
        dst[n] = '\0';
        return -ENOBUFS;
}

void ctlmsg_init(struct ctlmsg *m, const char *word)
{
        size_t len = strlen(word);

        if (len > HP_CONTROL_RECORD_MAX)
                len = HP_CONTROL_RECORD_MAX;
        memcpy(m->buf, word, len);
        m->buf[len] = '\0';
        m->len = len;
        m->truncated = false;
}

/* Append " key=" plus an already escaped or trusted value, or nothing if it does not fit. */
static void add_raw(struct ctlmsg *m, const char *key, const char *value)
{
        size_t klen = strlen(key), vlen = strlen(value);

        if (m->len + 2 + klen + vlen > HP_CONTROL_RECORD_MAX) {
                m->truncated = true;
                return;
        }
        m->buf[m->len++] = ' ';
        memcpy(m->buf + m->len, key, klen);
        m->len += klen;
        m->buf[m->len++] = '=';
        memcpy(m->buf + m->len, value, vlen);
        m->len += vlen;
        m->buf[m->len] = '\0';
}

void ctlmsg_add_str(struct ctlmsg *m, const char *key, const char *value)
{
        char esc[HP_CONTROL_RECORD_MAX + 1];

        if (!value)
                return;
        if (ctlmsg_escape(value, esc, sizeof(esc)) < 0) {
                m->truncated = true;
                return;
        }
        add_raw(m, key, esc);
}

void ctlmsg_init_error(struct ctlmsg *m, int error, const char *message)
{
        ctlmsg_init(m, "error");
        ctlmsg_add_i64(m, "errno", error < 0 ? -error : error);
        ctlmsg_add_str(m, "message", message);
}

void ctlmsg_add_u64(struct ctlmsg *m, const char *key, uint64_t value)
{
        char buf[32];

        snprintf(buf, sizeof(buf), "%" PRIu64, value);
        add_raw(m, key, buf);
}

void ctlmsg_add_i64(struct ctlmsg *m, const char *key, int64_t value)
{
        char buf[32];

        snprintf(buf, sizeof(buf), "%" PRId64, value);
        add_raw(m, key, buf);
}

void ctlmsg_add_time(struct ctlmsg *m, const char *key, uint64_t usec)
{
        char buf[48];

        snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, usec / 1000000, usec % 1000000);
        add_raw(m, key, buf);
}

bool ctlmsg_is(const char *rec, const char *word)
{
        size_t len = strlen(word);

        return strncmp(rec, word, len) == 0 && (rec[len] == '\0' || rec[len] == ' ');
}


/* Unescape @src[0..len) into @out. */
static int unescape(const char *src, size_t len, char *out, size_t size)
{
        size_t n = 0;

        for (size_t i = 0; i < len; i++) {
                char c = src[i];

                if (c == '\\') {
                        int hi, lo;

                        if (i + 3 >= len)
                                return -EBADMSG;
                        if (src[i + 1] != 'x' || (hi = hexval(src[i + 2])) < 0 || (lo = hexval(src[i + 3])) < 0)
                                return -EBADMSG;
                        c = (char)(hi * 16 + lo);
                        if (c == '\0')
                                return -EBADMSG;
                        i += 3;
                }
                if (n + 1 >= size)
                        return -ENOBUFS;
                out[n++] = c;
        }
        if (size == 0)
                return -ENOBUFS;
        out[n] = '\0';
        return 0;
}

const char *ctlmsg_next_field(const char *p, char *key, size_t ksize, char *val, size_t vsize)
{
        const char *k, *eq, *end;

        /* Skip the word (or the previous field), then the separating space. */
        p += strcspn(p, " ");
        if (*p != ' ')
                return NULL;
        k = p + 1;
        end = k + strcspn(k, " ");
        eq = memchr(k, '=', (size_t)(end - k));
        if (!eq || eq == k || (size_t)(eq - k) >= ksize)
                return NULL;
        /* Keys are [a-z0-9_]+: anything else is a malformed field, not a key to print. */
        if (strspn(k, "abcdefghijklmnopqrstuvwxyz0123456789_") != (size_t)(eq - k))
                return NULL;
        memcpy(key, k, (size_t)(eq - k));
        key[eq - k] = '\0';
        if (unescape(eq + 1, (size_t)(end - eq - 1), val, vsize) < 0)
                return NULL;
        return end;
}

int ctlmsg_get(const char *rec, const char *key, char *out, size_t size)
{
        size_t klen = strlen(key);
        const char *p = rec;

        for (;;) {
                p = strchr(p, ' ');
                if (!p)
                        return -ENOENT;
                p++;
                if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
                        const char *v = p + klen + 1;
                        return unescape(v, strcspn(v, " "), out, size);
                }
        }
}

int ctlmsg_get_u64(const char *rec, const char *key, uint64_t *ret)
{
        char buf[32];
        int r;

        r = ctlmsg_get(rec, key, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOBUFS ? -EBADMSG : r;
        return decimal_u64(buf, ret) < 0 ? -EBADMSG : 0;
}
