/* SPDX-License-Identifier: MIT */
/*
 * Control socket records: building and reading " key=value" fields.
 * Invariant of a built record: buf[len] == '\0' and len <= HP_CONTROL_RECORD_MAX.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "control/control-proto.h"
#include "shared/number.h"

/* The invariant above. */
static _unused_ bool ctlmsg_sane(const struct ctlmsg *m)
{
        return m->len <= HP_CONTROL_RECORD_MAX && m->buf[m->len] == '\0';
}

static bool plain_byte(unsigned char c)
{
        return c > ' ' && c < 0x7f && c != '\\';
}

/* Bytes @c takes escaped: 1 or 4. */
static size_t escaped_len(unsigned char c)
{
        return plain_byte(c) ? 1 : 4;
}

/* Write @c escaped at @dst (room for escaped_len(c) bytes). */
static void escape_byte(unsigned char c, char *dst)
{
        static const char hex[] = "0123456789abcdef";

        if (plain_byte(c)) {
                dst[0] = (char)c;
                return;
        }
        dst[0] = '\\';
        dst[1] = 'x';
        dst[2] = hex[c >> 4];
        dst[3] = hex[c & 15];
}

int ctlmsg_escape(const char *src, char *dst, size_t size)
{
        size_t n = 0;

        if (size == 0)
                return -ENOBUFS;
        for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
                if (n + escaped_len(*s) >= size)
                        goto full;
                escape_byte(*s, dst + n);
                n += escaped_len(*s);
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
        assert(ctlmsg_sane(m));
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

bool ctlmsg_add_entries(struct ctlmsg *m, struct ctlmsg_cursor *cur)
{
        for (; cur->i < cur->n; cur->i++, cur->off = 0) {
                const unsigned char *e = (const unsigned char *)cur->entries[cur->i];
                const char *key = cur->off == 0 ? "var" : "cont";
                size_t klen = strlen(key);

                /* The field's " key=" and at least one escaped byte (or an empty entry). */
                if (m->len + 2 + klen + (e[cur->off] ? 4 : 0) > HP_CONTROL_RECORD_MAX)
                        return false;
                m->buf[m->len++] = ' ';
                memcpy(m->buf + m->len, key, klen);
                m->len += klen;
                m->buf[m->len++] = '=';
                for (; e[cur->off]; cur->off++) {
                        unsigned char c = e[cur->off];

                        if (m->len + escaped_len(c) > HP_CONTROL_RECORD_MAX) {
                                m->buf[m->len] = '\0';
                                return false;
                        }
                        escape_byte(c, m->buf + m->len);
                        m->len += escaped_len(c);
                }
                m->buf[m->len] = '\0';
                assert(ctlmsg_sane(m));
        }
        return true;
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

enum ctlmsg_type ctlmsg_field_type(const char *key)
{
        /* Numbers of the replies and of the status record (control.h). */
        static const char *const uints[] = {
                "seqnum", "pid", "first", "last", "count", "duration_us", "age_ms", "errno", "done", "total",
                "watched", "pending", "lowest_held",
                "processed", "gaps", "gaps_overflow", "missing", "duplicates", "late", "overflows", "baseline",
                "received", "rejected", "filtered", "started", "finished", "failed", "timeouts", "queued",
                "spawn_retries", "spawn_waiting",
                "running", "resyncs", "resync_changed", "resync_added", "resync_removed", "resync_left_alone",
                "devices", "limit", "limit_max", "awake_max", "asleep", "raised", "lowered",
                "awake", "windows", "probes", "probes_kept", "per_cpu_second",
                "taken_over", "reruns", "set_aside", "dropped_keys",
                "overloads", "bytes_held", "peak_bytes", "max_queue_bytes",
                "udev_confirmed", "udev_waited", "udev_wait_usec", "udev_timeouts", "udev_mismatched",
                "udev_overflows", "udev_forgotten", "udev_waiting", "log_dropped",
                "kmod_aliases", "kmod_invalid", "kmod_lookups", "kmod_not_found", "kmod_loads", "kmod_saved",
                "kmod_loaded", "kmod_failed", "kmod_blacklisted", "kmod_timeouts", "kmod_skipped", "kmod_waiting",
                "kmod_in_flight",
                "firmware_failed", "firmware_missing", "firmware_untracked", "requests",
                "events", "runs", "run_usec", "order_wait_usec", "slot_wait_usec", "total_usec", "slowest_usec",
                "slowest_seqnum", "left_out",
                "blocker", "waited_us", "uptime_usec",
        };

        if (strcmp(key, "time") == 0 || strcmp(key, "since") == 0)
                return CTLMSG_TIME;
        if (strcmp(key, "paused") == 0 || strcmp(key, "resync") == 0 || strcmp(key, "overloaded") == 0 ||
            strcmp(key, "log_gone") == 0)
                return CTLMSG_FLAG;
        for (size_t i = 0; i < sizeof(uints) / sizeof(uints[0]); i++)
                if (strcmp(key, uints[i]) == 0)
                        return CTLMSG_UINT;
        return CTLMSG_TEXT;
}

static void json_field(struct json_writer *w, const char *key, const char *val)
{
        uint64_t u;

        json_keyz(w, key);
        switch (ctlmsg_field_type(key)) {
        case CTLMSG_UINT:
                if (json_is_number(val) && decimal_u64(val, &u) == 0) {
                        json_u64(w, u);
                        return;
                }
                break;
        case CTLMSG_TIME:
                if (val[strspn(val, "0123456789.")] == '\0' && json_is_number(val)) {
                        json_number_text(w, val);
                        return;
                }
                break;
        case CTLMSG_FLAG:
                if (strcmp(val, "0") == 0 || strcmp(val, "1") == 0) {
                        json_bool(w, val[0] == '1');
                        return;
                }
                break;
        case CTLMSG_TEXT:
                break;
        }
        json_str(w, val);
}

void ctlmsg_json_fields(struct json_writer *w, const char *rec)
{
        char val[HP_CONTROL_RECORD_MAX + 1];
        char key[64];

        for (const char *p = rec; (p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val)));)
                json_field(w, key, val);
}
