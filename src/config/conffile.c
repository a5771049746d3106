/* SPDX-License-Identifier: MIT */
/*
 * The configuration file parser.
 *
 * Format: one "key = value" per line; blank lines and lines whose first
 * non-blank character is '#' are ignored.  Blanks (space, tab) around the
 * key and the value are dropped; the value is everything else up to the end
 * of the line, taken literally (no quoting, no trailing comments).
 *
 * Invariants: the whole file is parsed into a local struct conf and copied
 * to the caller only when every line is valid; the first error stops
 * parsing and is reported as "FILE:LINE: reason".  Every key may appear at
 * most once.  The only allocations are the struct being built and, in
 * conf_load(), the file buffer; both are freed before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/conffile.h"
#include "config/options.h"
#include "shared/distance.h"
#include "shared/escape.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager.h"

_printf_(4, 5) static int conf_fail(struct conf_error *err, const char *name, unsigned line,
                                    const char *fmt, ...)
{
        char reason[512];
        va_list ap;

        if (!err)
                return -EINVAL;
        va_start(ap, fmt);
        (void)vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        err->line = line;
        if (line > 0)
                (void)snprintf(err->msg, sizeof(err->msg), "%s:%u: %s", name, line, reason);
        else
                (void)snprintf(err->msg, sizeof(err->msg), "%s: %s", name, reason);
        return -EINVAL;
}

static bool is_blank(char c)
{
        return c == ' ' || c == '\t';
}

/* Trim blanks in place; returns the start of the trimmed string. */
static char *trim(char *s)
{
        size_t n;

        while (is_blank(*s))
                s++;
        n = strlen(s);
        while (n > 0 && is_blank(s[n - 1]))
                s[--n] = '\0';
        return s;
}

/*
 * Keep @v as row @oi's value in @c.  Text is copied into @c's buffer,
 * which holds every value of a file that fits HP_CONF_FILE_MAX: a value
 * and its NUL take no more than its line and the newline.
 */
static void conf_store(struct conf *c, const struct option_info *oi, union option_value v)
{
        if (option_is_text(oi->type)) {
                size_t n = strlen(v.s) + 1;

                memcpy(c->text + c->text_used, v.s, n);
                v.s = c->text + c->text_used;
                c->text_used += n;
        }
        (void)option_store(&c->values, oi, &v, sizeof(c->values));
}

/* Point @c's text values, copied from @from, into @c's own buffer. */
static void conf_rebase(struct conf *c, const struct conf *from)
{
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char *p = (char *)&c->values + oi->offset;
                const char *s;

                if (!(c->set & option_bit(oi)) || !option_is_text(oi->type))
                        continue;
                memcpy(&s, p, sizeof(s));
                s = c->text + (s - from->text);
                memcpy(p, &s, sizeof(s));
        }
}

/* The handler chain's keys: members of struct handler_config. */
static bool is_handler_key(const struct option_info *oi)
{
        size_t at = offsetof(struct options, cfg.handlers);

        return oi && oi->key && oi->offset >= at && oi->offset + oi->size <= at + sizeof(struct handler_config);
}

int conf_set_handler_option(const char *key, const char *value, struct handler_config *h, char *why,
                            size_t why_size)
{
        const struct option_info *oi = option_by_key(key);
        struct options o;
        union option_value v = { .b = true };
        char name[64];

        if (!is_handler_key(oi) || (!value && oi->type != OPTION_BOOL)) {
                snprintf(why, why_size, "not a handler option");
                return -EINVAL;
        }
        if (value && strlen(value) >= HP_CONF_LINE_MAX) {
                snprintf(why, why_size, "'%s' is longer than %d bytes", oi->key, HP_CONF_LINE_MAX - 1);
                return -EINVAL;
        }
        snprintf(name, sizeof(name), "'%s'", oi->key);
        if (value && option_parse(oi, name, value, true, &v, why, why_size) < 0)
                return -EINVAL;
        o.cfg.handlers = *h;
        (void)option_store(&o, oi, &v, sizeof(o));
        *h = o.cfg.handlers;
        return 0;
}

/*
 * The file key nearest to @key (edit_distance()): at most one slip for a
 * key of up to 4 characters, two for a longer one, and nearer than every
 * other key; else NULL.
 */
static const struct option_info *nearest_key(const char *key)
{
        const struct option_info *best = NULL;
        size_t best_d = SIZE_MAX, limit = strlen(key) <= 4 ? 1 : 2;
        bool tie = false;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                size_t d;

                if (!oi->key)
                        continue;
                d = edit_distance(key, oi->key);
                if (d < best_d) {
                        best = oi;
                        best_d = d;
                        tie = false;
                } else if (d == best_d)
                        tie = true;
        }
        return best && best_d <= limit && !tie ? best : NULL;
}

static int fail_unknown_key(struct conf_error *err, const char *file, unsigned line, const char *key)
{
        const struct option_info *oi = option_by_name(key);
        char esc[128], alt[HP_CONF_LINE_MAX + 1];

        escape_cstr(key, esc, sizeof(esc));
        if (oi && !oi->key)
                return conf_fail(err, file, line, "'%s' is a command-line option only (--%s)", esc, oi->name);
        /* "no-resync": a boolean's --no-NAME is "NAME = no" here. */
        oi = strncmp(key, "no-", 3) == 0 ? option_by_key(key + 3) : NULL;
        if (oi && oi->type == OPTION_BOOL)
                return conf_fail(err, file, line, "unknown key '%s' (did you mean '%s = no'?)", esc, oi->key);

        /* "max_children" or "MaxChildren"-ish spellings: suggest the real name. */
        snprintf(alt, sizeof(alt), "%s", key);
        for (char *p = alt; *p; p++)
                *p = *p == '_' ? '-' : (char)(*p | ((*p >= 'A' && *p <= 'Z') ? 0x20 : 0));
        if (option_by_key(alt))
                return conf_fail(err, file, line, "unknown key '%s' (did you mean '%s'?)", esc, alt);
        /* A typing slip: the one key nearest, if it is near enough. */
        oi = nearest_key(alt);
        if (oi)
                return conf_fail(err, file, line, "unknown key '%s' (did you mean '%s'?)", esc, oi->key);
        return conf_fail(err, file, line, "unknown key '%s'", esc);
}

/* Check the raw bytes of a line: length, NUL, control characters. */
static int check_raw_line(const char *s, size_t len, const char *file, unsigned line, struct conf_error *err)
{
        if (len > HP_CONF_LINE_MAX)
                return conf_fail(err, file, line, "line longer than %d bytes", HP_CONF_LINE_MAX);
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)s[i];

                if (ch == '\0')
                        return conf_fail(err, file, line, "NUL byte at column %zu", i + 1);
                if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
                        return conf_fail(err, file, line, "control character 0x%02x at column %zu", ch,
                                         i + 1);
        }
        return 0;
}

/* agent and hotplug-d are one choice: the row of the other, for either; else NULL. */
static const struct option_info *other_agent_key(const struct option_info *oi)
{
        if (strcmp(oi->key, "agent") == 0)
                return option_by_key("hotplug-d");
        if (strcmp(oi->key, "hotplug-d") == 0)
                return option_by_key("agent");
        return NULL;
}

static int parse_line(struct conf *c, const char *s, size_t len, const char *file, unsigned line,
                      struct conf_error *err)
{
        char buf[HP_CONF_LINE_MAX + 1], why[256], esc[128], name[64];
        const struct option_info *oi, *other;
        union option_value v;
        char *p, *eq, *key, *value;
        int r;

        r = check_raw_line(s, len, file, line, err);
        if (r < 0)
                return r;
        memcpy(buf, s, len);
        buf[len] = '\0';
        p = trim(buf);
        if (*p == '\0' || *p == '#')
                return 0;

        eq = strchr(p, '=');
        if (!eq)
                return conf_fail(err, file, line, "expected 'key = value'");
        *eq = '\0';
        key = trim(p);
        value = trim(eq + 1);
        if (*key == '\0')
                return conf_fail(err, file, line, "missing key before '='");
        oi = option_by_key(key);
        if (!oi)
                return fail_unknown_key(err, file, line, key);
        if (c->set & option_bit(oi))
                return conf_fail(err, file, line, "duplicate key '%s' (first set on line %u)", key,
                                 c->line[oi - option_table]);
        if (*value == '\0')
                return conf_fail(err, file, line, "missing value for '%s': it must be %s", key,
                                 option_form(oi, why, sizeof(why)));
        other = other_agent_key(oi);
        if (other && (c->set & option_bit(other)))
                return conf_fail(err, file, line, "'agent' and 'hotplug-d' exclude each other ('%s' set on line %u)",
                                 other->key, c->line[other - option_table]);
        snprintf(name, sizeof(name), "'%s'", key);
        r = option_parse(oi, name, value, false, &v, why, sizeof(why));
        if (r < 0)
                return conf_fail(err, file, line, "%s: '%s'", why, escape_cstr(value, esc, sizeof(esc)));
        conf_store(c, oi, v);
        c->set |= option_bit(oi);
        c->line[oi - option_table] = line;
        return 0;
}

int conf_parse(const char *name, const char *data, size_t size, struct conf *ret, struct conf_error *err)
{
        _cleanup_free_ struct conf *c = NULL;
        const char *p = data, *end = data + size;
        unsigned line = 1;
        int r;

        if (size > HP_CONF_FILE_MAX) {
                conf_fail(err, name, 0, "larger than %d bytes", HP_CONF_FILE_MAX);
                return -EFBIG;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

                r = parse_line(c, p, len, name, line, err);
                if (r < 0)
                        return r;
                p += len + (nl ? 1 : 0);
                line++;
        }
        memcpy(ret, c, sizeof(*c));
        conf_rebase(ret, c);
        return 0;
}

/* Open @path as a configuration file we may trust; @err says why not. */
static int conf_open(const char *path, struct stat *st, struct conf_error *err)
{
        _cleanup_close_ int fd = -1;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int e = errno;

                conf_fail(err, path, 0, "cannot open: %s", strerror(e));
                return -e;
        }
        if (fstat(fd, st) < 0) {
                int e = errno;

                conf_fail(err, path, 0, "cannot stat: %s", strerror(e));
                return -e;
        }
        if (!S_ISREG(st->st_mode)) {
                conf_fail(err, path, 0, "not a regular file");
                return -EINVAL;
        }
        if (st->st_uid != 0 && st->st_uid != geteuid()) {
                conf_fail(err, path, 0, "owned by uid %u, not by root; refusing it", (unsigned)st->st_uid);
                return -EPERM;
        }
        if (st->st_mode & (S_IWGRP | S_IWOTH)) {
                conf_fail(err, path, 0, "writable by group or others (mode %04o); refusing it",
                          (unsigned)(st->st_mode & 07777));
                return -EPERM;
        }
        return take_fd(&fd);
}

int conf_load(const char *path, struct conf *ret, struct conf_error *err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t size = 0;

        fd = conf_open(path, &st, err);
        if (fd < 0)
                return fd;
        buf = malloc(HP_CONF_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        /* Read one byte more than allowed to notice a file that is too large. */
        while (size <= HP_CONF_FILE_MAX) {
                ssize_t n = read(fd, buf + size, HP_CONF_FILE_MAX + 1 - size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;

                        conf_fail(err, path, 0, "cannot read: %s", strerror(e));
                        return -e;
                }
                if (n == 0)
                        break;
                size += (size_t)n;
        }
        return conf_parse(path, buf, size, ret, err);
}

/* Every key @c sets and @cli_set does not, into @o's first @limit bytes. */
static void apply(const struct conf *c, void *o, size_t limit, uint64_t cli_set)
{
        const uint64_t agent_bits = option_key_bit("agent") | option_key_bit("hotplug-d");

        /* agent and hotplug-d are one choice: the command line's, if it made one. */
        if (cli_set & agent_bits)
                cli_set |= agent_bits;
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];

                if (!(c->set & option_bit(oi)) || (cli_set & option_bit(oi)) || oi->offset + oi->size > limit)
                        continue;
                memcpy((char *)o + oi->offset, (const char *)&c->values + oi->offset, oi->size);
        }
}

void conf_apply(const struct conf *c, struct manager_config *cfg, uint64_t cli_set)
{
        apply(c, cfg, sizeof(*cfg), cli_set);
        cfg->handlers.sysfs_root = cfg->sysfs_root;
}

void conf_apply_options(const struct conf *c, struct options *o)
{
        apply(c, o, sizeof(*o), o->set);
        o->cfg.handlers.sysfs_root = o->cfg.sysfs_root;
}
