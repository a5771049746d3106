/* SPDX-License-Identifier: MIT */
/*
 * The usb usermaps: parsing lines into compact entries, matching a device
 * against them, the blacklist, and the REMOVER path (usermap.h).  Reading
 * the files of a hotplug directory is usermap-load.c's.
 *
 * Invariants: every entry's name and file index are valid; names are
 * interned (one struct usermap_name per distinct name, found through
 * name_index); n_entries <= HP_USERMAP_ENTRIES_MAX (< 65536, so a name
 * index fits 16 bits); a line buffer never holds more than
 * HP_USERMAP_LINE_MAX bytes.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/usermap-internal.h"
#include "shared/escape.h"
#include "shared/hash.h"
#include "shared/macro.h"

_Static_assert(HP_USERMAP_ENTRIES_MAX <= UINT16_MAX, "a name index is 16 bits");
_Static_assert(HP_USERMAP_FILES_MAX <= UINT16_MAX, "a file index is 16 bits");
_Static_assert(sizeof(struct usermap_entry) == 24, "entries stay compact");

#define MATCH_KNOWN 0x03ff

int usermap_new(struct usermap **ret)
{
        struct usermap *m = calloc(1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        hash_table_init(&m->name_index);
        *ret = m;
        return 0;
}

struct usermap *usermap_free(struct usermap *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_names; i++)
                free(m->names[i]);
        for (size_t i = 0; i < m->n_files; i++)
                free(m->files[i].name);
        for (size_t i = 0; i < m->n_black; i++)
                free(m->black[i]);
        hash_table_clear(&m->name_index);
        free(m->names);
        free(m->files);
        free(m->black);
        free(m->entries);
        free(m);
        return NULL;
}

size_t usermap_entries(const struct usermap *m)
{
        return m->n_entries;
}

size_t usermap_names(const struct usermap *m)
{
        return m->n_names;
}

size_t usermap_files(const struct usermap *m)
{
        return m->n_files;
}

bool usermap_name_ok(const char *s, size_t n)
{
        if (n == 0 || n > HP_USERMAP_NAME_MAX || s[0] == '.' || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '.' || c == '-' || c == '+'))
                        return false;
        }
        return true;
}

/* Grow *@p (of *@cap elements of @size bytes) to hold @n, doubling.  Return: 0 or -ENOMEM. */
static int grow(void *p, size_t *cap, size_t n, size_t size)
{
        size_t c = *cap ? *cap : 16;
        void *q;

        if (n <= *cap)
                return 0;
        while (c < n)
                c *= 2;
        q = reallocarray(*(void **)p, c, size);
        if (!q)
                return -ENOMEM;
        *(void **)p = q;
        *cap = c;
        return 0;
}

static bool name_eq(const void *item, const void *key)
{
        return strcmp(((const struct usermap_name *)item)->text, key) == 0;
}

/* The index of the interned @name (validated), added if new.  Return: >= 0, or -ENOMEM. */
static int intern(struct usermap *m, const char *name)
{
        uint64_t h = hash_string(name, NULL);
        struct usermap_name *n = hash_table_get(&m->name_index, h, name_eq, name);
        size_t len = strlen(name);

        if (n)
                return n->index;
        if (grow(&m->names, &m->cap_names, m->n_names + 1, sizeof(*m->names)) < 0 ||
            hash_table_reserve(&m->name_index, m->n_names + 1) < 0)
                return -ENOMEM;
        n = malloc(sizeof(*n) + len + 1);
        if (!n)
                return -ENOMEM;
        n->index = (uint16_t)m->n_names;
        memcpy(n->text, name, len + 1);
        (void)hash_table_add(&m->name_index, h, n);
        m->names[m->n_names++] = n;
        return n->index;
}

/* A number as the agent's shell arithmetic read it: 0x hex, 0 octal, decimal; at most @max.
 * Return: 0, -EINVAL (not a number), -ERANGE (past @max). */
static int parse_number(const char *s, uint64_t max, uint64_t *ret)
{
        unsigned base = 10;
        uint64_t v = 0;

        if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
                base = 16;
                s += 2;
        } else if (s[0] == '0' && s[1]) {
                base = 8;
                s++;
        }
        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                int d = hexval(*s);

                if (d < 0 || (unsigned)d >= base)
                        return -EINVAL;
                if (v > (max - (uint64_t)d) / base)
                        return -ERANGE;
                v = v * base + (uint64_t)d;
        }
        *ret = v;
        return 0;
}

/* Split @line (NUL-terminated, changed) at blanks into at most @max fields.  Return: fields seen (may exceed @max). */
static size_t split(char *line, char **fields, size_t max)
{
        size_t n = 0;
        char *p = line;

        for (;;) {
                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        return n;
                if (n < max)
                        fields[n] = p;
                n++;
                while (*p && *p != ' ' && *p != '\t')
                        p++;
                if (*p)
                        *p++ = '\0';
        }
}

/* Tell the caller "PATH:LINE: ..." (or "PATH: ..." for @line 0). */
static void feed_vsay(struct line_feed *f, unsigned line, const char *fmt, va_list ap) _printf_(3, 0);
static void feed_vsay(struct line_feed *f, unsigned line, const char *fmt, va_list ap)
{
        char msg[sizeof(f->epath) + 256];
        int k;

        if (!f->on_error)
                return;
        k = line ? snprintf(msg, sizeof(msg), "%s:%u: ", f->epath, line) : snprintf(msg, sizeof(msg), "%s: ", f->epath);
        vsnprintf(msg + k, sizeof(msg) - (size_t)k, fmt, ap);
        f->on_error(msg, f->userdata);
}

void feed_say(struct line_feed *f, unsigned line, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        feed_vsay(f, line, fmt, ap);
        va_end(ap);
}

/* A malformed line: said while fewer than HP_USERMAP_ERRORS_MAX were, else counted. */
static void feed_report(struct line_feed *f, unsigned line, const char *fmt, ...) _printf_(3, 4);
static void feed_report(struct line_feed *f, unsigned line, const char *fmt, ...)
{
        va_list ap;

        if (++f->errors > HP_USERMAP_ERRORS_MAX)
                return;
        va_start(ap, fmt);
        feed_vsay(f, line, fmt, ap);
        va_end(ap);
}

static const char *const field_names[] = {
        "module", "match_flags", "idVendor", "idProduct", "bcdDevice_lo", "bcdDevice_hi", "bDeviceClass",
        "bDeviceSubClass", "bDeviceProtocol", "bInterfaceClass", "bInterfaceSubClass", "bInterfaceProtocol",
        "driver_info",
};

/* The numbers of fields 1-12 of a map line into @e; 0, or reported and -EINVAL. */
static int parse_numbers(struct line_feed *f, char **fields, struct usermap_entry *e)
{
        uint64_t v[13];

        for (size_t i = 1; i < 13; i++) {
                uint64_t max = i == 12 ? UINT64_MAX : i >= 6 ? UINT8_MAX : UINT16_MAX;
                char esc[64];
                int r = parse_number(fields[i], max, &v[i]);

                if (r < 0) {
                        feed_report(f, f->lineno, "%s %s: %s", field_names[i], escape_cstr(fields[i], esc, sizeof(esc)),
                                    r == -ERANGE ? "out of range" : "not a number");
                        return -EINVAL;
                }
        }
        if (v[1] & ~(uint64_t)MATCH_KNOWN) {
                feed_report(f, f->lineno, "match_flags 0x%llx: unknown bits 0x%llx", (unsigned long long)v[1],
                            (unsigned long long)(v[1] & ~(uint64_t)MATCH_KNOWN));
                return -EINVAL;
        }
        *e = (struct usermap_entry){
                .flags = (uint16_t)v[1], .vendor = (uint16_t)v[2], .product = (uint16_t)v[3],
                .bcd_lo = (uint16_t)v[4], .bcd_hi = (uint16_t)v[5],
                .dev = { (uint8_t)v[6], (uint8_t)v[7], (uint8_t)v[8] },
                .intf = { (uint8_t)v[9], (uint8_t)v[10], (uint8_t)v[11] },
        };
        return 0;
}

/* One map line (NUL-terminated, without its newline). */
static void map_line(struct line_feed *f, char *line)
{
        struct usermap *m = f->m;
        struct usermap_entry e;
        char *fields[13], esc[HP_USERMAP_NAME_MAX * 4 + 8];
        size_t n = split(line, fields, ELEMENTSOF(fields));
        int k;

        if (n == 0 || fields[0][0] == '#')
                return;
        if (n != 13) {
                feed_report(f, f->lineno, "%zu fields, not 13", n);
                return;
        }
        if (!usermap_name_ok(fields[0], strlen(fields[0]))) {
                feed_report(f, f->lineno, "module name \"%s\" is not a safe file name",
                            escape_cstr(fields[0], esc, sizeof(esc)));
                return;
        }
        if (parse_numbers(f, fields, &e) < 0)
                return;
        if (m->n_entries >= HP_USERMAP_ENTRIES_MAX) {
                feed_say(f, f->lineno, "more than %d entries: this line and the rest of the maps are ignored",
                         HP_USERMAP_ENTRIES_MAX);
                m->full = true;
                f->stop = true;
                return;
        }
        if (grow(&m->entries, &m->cap_entries, m->n_entries + 1, sizeof(*m->entries)) < 0 ||
            (k = intern(m, fields[0])) < 0) {
                f->r = -ENOMEM;
                f->stop = true;
                return;
        }
        e.name = (uint16_t)k;
        e.file = (uint16_t)f->file;
        e.line = f->lineno;
        m->entries[m->n_entries++] = e;
}

/* One blacklist line. */
static void blacklist_line(struct line_feed *f, char *line)
{
        struct usermap *m = f->m;
        char *fields[2], esc[HP_USERMAP_NAME_MAX * 4 + 8], *s;
        size_t n = split(line, fields, ELEMENTSOF(fields));

        if (n == 0 || fields[0][0] == '#')
                return;
        if (n != 1 || !usermap_name_ok(fields[0], strlen(fields[0]))) {
                feed_report(f, f->lineno, "\"%s\" is not a module name", escape_cstr(fields[0], esc, sizeof(esc)));
                return;
        }
        if (m->n_black >= HP_USERMAP_BLACKLIST_MAX) {
                feed_say(f, f->lineno, "more than %d blacklisted names: the rest are ignored",
                            HP_USERMAP_BLACKLIST_MAX);
                f->stop = true;
                return;
        }
        s = strdup(fields[0]);
        if (!s || grow(&m->black, &m->cap_black, m->n_black + 1, sizeof(*m->black)) < 0) {
                free(s);
                f->r = -ENOMEM;
                f->stop = true;
                return;
        }
        for (char *p = s; *p; p++)
                if (*p == '-')
                        *p = '_';
        m->black[m->n_black++] = s;
}

/* The line in f->buf is complete: judge it. */
static void feed_line(struct line_feed *f)
{
        f->lineno++;
        if (f->overlong) {
                feed_report(f, f->lineno, "longer than %d bytes", HP_USERMAP_LINE_MAX);
        } else {
                if (f->len > 0 && f->buf[f->len - 1] == '\r')
                        f->len--;
                f->buf[f->len] = '\0';
                if (memchr(f->buf, '\0', f->len))
                        feed_report(f, f->lineno, "contains a NUL byte");
                else if (f->blacklist)
                        blacklist_line(f, f->buf);
                else
                        map_line(f, f->buf);
        }
        f->len = 0;
        f->overlong = false;
}

void feed_bytes(struct line_feed *f, const char *data, size_t size)
{
        while (size > 0 && !f->stop) {
                const char *nl = memchr(data, '\n', size);
                size_t take = nl ? (size_t)(nl - data) : size;

                if (f->bytes + take + (nl != NULL) > HP_USERMAP_FILE_MAX) {
                        feed_say(f, 0, "larger than %d bytes: the rest is ignored", HP_USERMAP_FILE_MAX);
                        f->stop = true;
                        f->len = 0;
                        return;
                }
                f->bytes += take + (nl != NULL);
                if (!f->overlong && f->len + take <= HP_USERMAP_LINE_MAX) {
                        memcpy(f->buf + f->len, data, take);
                        f->len += take;
                } else {
                        f->overlong = true;
                }
                if (!nl)
                        return;
                feed_line(f);
                data = nl + 1;
                size -= take + 1;
        }
}

int feed_end(struct line_feed *f)
{
        unsigned more;

        if (!f->stop && (f->len > 0 || f->overlong))
                feed_line(f); /* a last line without its newline */
        if (f->errors > HP_USERMAP_ERRORS_MAX) {
                more = f->errors - HP_USERMAP_ERRORS_MAX;
                feed_say(f, 0, "%u more malformed lines not reported one by one", more);
        }
        return f->r;
}

int feed_begin(struct line_feed *f, struct usermap *m, const char *file, const char *path, int kind,
               usermap_error_fn on_error, void *userdata)
{
        *f = (struct line_feed){ .m = m, .on_error = on_error, .userdata = userdata, .blacklist = kind < 0 };
        escape_cstr(path, f->epath, sizeof(f->epath));
        if (f->blacklist)
                return 0;
        if (m->full) {
                f->stop = true; /* reported once, at the line that reached the limit */
                return 0;
        }
        if (m->n_files >= HP_USERMAP_FILES_MAX) {
                feed_say(f, 0, "more than %d map files: ignored", HP_USERMAP_FILES_MAX);
                return -E2BIG;
        }
        if (grow(&m->files, &m->cap_files, m->n_files + 1, sizeof(*m->files)) < 0)
                return -ENOMEM;
        m->files[m->n_files].name = strdup(file);
        if (!m->files[m->n_files].name)
                return -ENOMEM;
        m->files[m->n_files].kind = (enum usermap_kind)kind;
        f->file = (unsigned)m->n_files++;
        return 0;
}

int usermap_parse(struct usermap *m, const char *file, enum usermap_kind kind, const void *data, size_t size,
                  usermap_error_fn on_error, void *userdata)
{
        struct line_feed f;
        int r = feed_begin(&f, m, file, file, (int)kind, on_error, userdata);

        if (r < 0)
                return r;
        feed_bytes(&f, data, size);
        return feed_end(&f);
}

int usermap_parse_blacklist(struct usermap *m, const char *file, const void *data, size_t size,
                            usermap_error_fn on_error, void *userdata)
{
        struct line_feed f;
        int r = feed_begin(&f, m, file, file, -1, on_error, userdata);

        if (r < 0)
                return r;
        feed_bytes(&f, data, size);
        return feed_end(&f);
}

/* Exactly 3 fields of 1 to @digits digits in @base (10 or 16) separated by '/', each at most @max. */
static int parse_triple(const char *s, unsigned base, unsigned digits, unsigned max, unsigned v[3])
{
        for (int i = 0; i < 3; i++) {
                unsigned k = 0;

                v[i] = 0;
                for (; *s && *s != '/'; s++, k++) {
                        int d = hexval(*s);

                        if (d < 0 || (unsigned)d >= base || k >= digits)
                                return -EINVAL;
                        v[i] = v[i] * base + (unsigned)d;
                }
                if (k == 0 || v[i] > max || (i < 2 && *s++ != '/'))
                        return -EINVAL;
        }
        return *s ? -EINVAL : 0;
}

int usermap_device_parse(const char *product, const char *type, const char *interface,
                         struct usermap_device *ret)
{
        struct usermap_device d = { .dev = { -1, -1, -1 }, .intf = { -1, -1, -1 } };
        unsigned v[3];

        if (!product || parse_triple(product, 16, 4, UINT16_MAX, v) < 0)
                return -EINVAL;
        d.vendor = (uint16_t)v[0];
        d.product = (uint16_t)v[1];
        d.bcd = (uint16_t)v[2];
        if (type) {
                if (parse_triple(type, 10, 3, UINT8_MAX, v) < 0)
                        return -EINVAL;
                for (int i = 0; i < 3; i++)
                        d.dev[i] = (int16_t)v[i];
        }
        if (interface) {
                if (parse_triple(interface, 10, 3, UINT8_MAX, v) < 0)
                        return -EINVAL;
                for (int i = 0; i < 3; i++)
                        d.intf[i] = (int16_t)v[i];
        }
        *ret = d;
        return 0;
}

/* Does @e match @d?  Each flag set asks for its field; a field not sent (-1) never equals. */
static bool entry_matches(const struct usermap_entry *e, const struct usermap_device *d)
{
        unsigned f = e->flags;

        /* An interface event acts on the lines about interfaces only: a line about the
         * device acts once per device, on its own event, not again for each interface. */
        if (d->intf[0] >= 0 && !(f & USERMAP_MATCH_INTERFACE))
                return false;
        if ((f & USERMAP_MATCH_VENDOR) && e->vendor != d->vendor)
                return false;
        if ((f & USERMAP_MATCH_PRODUCT) && e->product != d->product)
                return false;
        if ((f & USERMAP_MATCH_DEV_LO) && e->bcd_lo > d->bcd)
                return false;
        if ((f & USERMAP_MATCH_DEV_HI) && e->bcd_hi < d->bcd)
                return false;
        for (int i = 0; i < 3; i++) {
                if ((f & (USERMAP_MATCH_DEV_CLASS << i)) && e->dev[i] != d->dev[i])
                        return false;
                if ((f & (USERMAP_MATCH_INT_CLASS << i)) && e->intf[i] != d->intf[i])
                        return false;
        }
        return true;
}

size_t usermap_match(const struct usermap *m, const struct usermap_device *dev, struct usermap_match *ret,
                     size_t max)
{
        size_t n = 0;

        for (size_t i = 0; i < m->n_entries; i++) {
                const struct usermap_entry *e = &m->entries[i];
                const struct usermap_file *file = &m->files[e->file];
                const char *module = m->names[e->name]->text;
                bool repeat = false;

                if (!entry_matches(e, dev))
                        continue;
                if (n < max) {
                        for (size_t j = 0; j < n && !repeat; j++)
                                repeat = ret[j].module == module; /* interned: one pointer per name */
                        ret[n] = (struct usermap_match){ .module = module, .file = file->name, .line = e->line,
                                                         .kind = file->kind, .repeat = repeat };
                }
                n++;
        }
        return n;
}

bool usermap_blacklisted(const struct usermap *m, const char *module)
{
        char norm[HP_USERMAP_NAME_MAX + 1];
        size_t len = strlen(module);

        if (!usermap_name_ok(module, len))
                return true; /* nothing may act on what is no module name */
        for (size_t i = 0; i <= len; i++)
                norm[i] = module[i] == '-' ? '_' : module[i];
        for (size_t i = 0; i < m->n_black; i++)
                if (strcmp(m->black[i], norm) == 0)
                        return true;
        return false;
}

char *usermap_describe(const struct usermap_match *match, char *buf, size_t size)
{
        if (size > 0)
                snprintf(buf, size, "%s:%u %s", match->file, match->line, match->module);
        return buf;
}

int usermap_remover_path(const char *base, const char *devpath, char *buf, size_t size)
{
        size_t blen = strlen(base), pos, start;

        if (devpath[0] != '/')
                return -EINVAL;
        if (blen + 2 > size)
                return -ENAMETOOLONG;
        memcpy(buf, base, blen);
        buf[blen] = '/';
        pos = start = blen + 1;
        for (const unsigned char *p = (const unsigned char *)devpath; *p; p++) {
                bool esc = *p == '%' || *p == '\\' || *p < 0x21 || *p > 0x7e;
                size_t w = esc ? 4 : 1;

                if (pos - start + w > NAME_MAX || pos + w + 1 > size)
                        return -ENAMETOOLONG;
                if (esc)
                        snprintf(buf + pos, 5, "\\x%02x", *p);
                else
                        buf[pos] = *p == '/' ? '%' : (char)*p;
                pos += w;
        }
        buf[pos] = '\0';
        assert(buf[start] == '%' && !memchr(buf + start, '/', pos - start));
        return 0;
}
