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
#include "shared/escape.h"
#include "pipeline/filter-policy.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager.h"

enum conf_type {
        CT_PATH,     /* absolute path, char[HP_CONF_LINE_MAX] */
        CT_UINT,     /* decimal, uint64_t, min..max */
        CT_SIZE,     /* decimal with optional K/M/G suffix (x1024), uint64_t, min..max */
        CT_BOOL,     /* yes/no, true/false, on/off, 1/0; bool */
        CT_ORDERING, /* enum ordering */
        CT_LOG_LEVEL, /* syslog level name or 0-7; int */
        CT_FILTER,    /* filter policy rules (filter-policy.h), char[HP_CONF_LINE_MAX] */
        CT_SEARCH     /* ':'-separated absolute directories, char[HP_CONF_LINE_MAX] */
};

struct conf_key_info {
        const char *name;
        enum conf_type type;
        size_t offset;
        uint64_t min, max;
};

#define KEY(k, n, t, member, lo, hi) [k] = { n, t, offsetof(struct conf, member), lo, hi }

static const struct conf_key_info keys[_CONF_KEY_MAX] = {
        KEY(CONF_AGENT, "agent", CT_PATH, agent, 0, 0),
        KEY(CONF_HOTPLUG_D, "hotplug-d", CT_PATH, hotplug_d, 0, 0),
        KEY(CONF_ORDERING, "ordering", CT_ORDERING, ordering, 0, 0),
        KEY(CONF_MAX_CHILDREN, "max-children", CT_UINT, max_children, 1, HP_CHILDREN_MAX),
        KEY(CONF_MAX_QUEUE, "max-queue", CT_UINT, max_queue, 1, HP_QUEUE_MAX_LIMIT),
        KEY(CONF_TIMEOUT, "timeout", CT_UINT, timeout_sec, 1, HP_TIMEOUT_MAX_SEC),
        KEY(CONF_KILL_GRACE, "kill-grace", CT_UINT, kill_grace_sec, 1, HP_TIMEOUT_MAX_SEC),
        KEY(CONF_ALL, "all", CT_BOOL, all, 0, 0),
        KEY(CONF_HANDLER_DIR, "handler-dir", CT_PATH, handler_dir, 0, 0),
        KEY(CONF_SYSFS, "sysfs", CT_PATH, sysfs, 0, 0),
        KEY(CONF_RCVBUF, "rcvbuf", CT_SIZE, rcvbuf, 4096, INT32_MAX),
        KEY(CONF_LOG_LEVEL, "log-level", CT_LOG_LEVEL, log_level, 0, 0),
        KEY(CONF_RECORD, "record", CT_PATH, record, 0, 0),
        KEY(CONF_REBROADCAST, "rebroadcast", CT_UINT, rebroadcast, 2, 32),
        KEY(CONF_RESYNC, "resync", CT_BOOL, resync, 0, 0),
        KEY(CONF_FILTER_POLICY, "filter-policy", CT_FILTER, filter_policy, 0, 0),
        KEY(CONF_FIRMWARE_LOADER, "firmware-loader", CT_BOOL, firmware_loader, 0, 0),
        KEY(CONF_FIRMWARE_PATH, "firmware-path", CT_SEARCH, firmware_path, 0, 0),
        KEY(CONF_HANDLER_CACHE, "handler-cache", CT_UINT, handler_cache, 1, HP_DEVCACHE_MAX),
        KEY(CONF_INPUT_STRIP_QUOTES, "input-strip-quotes", CT_BOOL, input_strip_quotes, 0, 0),
};

/* Options that make sense only for one invocation, never in the file. */
static const char *const cli_only[] = { "dry-run", "listen-fd", "log-target", "config", "check-config",
                                        "ready-fd", "replay", "help", "version" };

const char *conf_key_to_string(enum conf_key k)
{
        return (unsigned)k < _CONF_KEY_MAX ? keys[k].name : NULL;
}

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

static int parse_decimal(const char *s, uint64_t *ret, const char **end)
{
        uint64_t v = 0;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *ret = v;
        *end = s;
        return 0;
}

static int parse_number(const char *s, bool suffix, uint64_t *ret)
{
        const char *end;
        uint64_t v, mult = 1;
        int r;

        r = parse_decimal(s, &v, &end);
        if (r < 0)
                return r;
        if (suffix && *end && !end[1]) {
                static const char units[] = "KMG";
                const char *u = strchr(units, *end & ~0x20);

                if (u) {
                        mult = UINT64_C(1) << (10 * (u - units + 1));
                        end++;
                }
        }
        if (*end)
                return -EINVAL;
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *ret = v * mult;
        return 0;
}

static int parse_bool(const char *s)
{
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcmp(s, yes[i]) == 0)
                        return 1;
                if (strcmp(s, no[i]) == 0)
                        return 0;
        }
        return -EINVAL;
}

/* Every ':'-separated item of @s is an absolute path. */
static bool search_path_valid(const char *s)
{
        for (;;) {
                if (*s != '/')
                        return false;
                s = strchr(s, ':');
                if (!s)
                        return true;
                s++;
        }
}

static bool filter_valid(const char *value, char *why, size_t why_size)
{
        _cleanup_free_ struct filter_policy *p = malloc(sizeof(*p));
        int r;

        r = p ? filter_policy_parse(p, value) : -ENOMEM;
        if (r == -ENOMEM)
                snprintf(why, why_size, "out of memory checking 'filter-policy'");
        else if (r == -E2BIG)
                snprintf(why, why_size, "'filter-policy' has more than %d rules with the defaults",
                         HP_FILTER_RULES_MAX);
        else if (r < 0)
                snprintf(why, why_size, "'filter-policy' wants SUBSYSTEM=keep|drop|handlers items");
        return r >= 0;
}

/* The string kinds: check, then copy into @slot (char[HP_CONF_LINE_MAX]). */
static int parse_string(const struct conf_key_info *ki, void *slot, const char *value, char *why,
                        size_t why_size)
{
        switch (ki->type) {
        case CT_PATH:
                if (value[0] != '/') {
                        snprintf(why, why_size, "'%s' needs an absolute path", ki->name);
                        return -EINVAL;
                }
                break;
        case CT_SEARCH:
                if (!search_path_valid(value)) {
                        snprintf(why, why_size, "'%s' needs absolute paths separated by ':'", ki->name);
                        return -EINVAL;
                }
                break;
        case CT_FILTER:
                if (!filter_valid(value, why, why_size))
                        return -EINVAL;
                break;
        default:
                return -EINVAL;
        }
        /* Fits: the line, and so the value, is shorter than HP_CONF_LINE_MAX. */
        memcpy(slot, value, strlen(value) + 1);
        return 0;
}

/* Parse @value for key @k into @c; on failure write the reason into @why. */
static int parse_value(struct conf *c, enum conf_key k, const char *value, char *why, size_t why_size)
{
        const struct conf_key_info *ki = &keys[k];
        void *slot = (char *)c + ki->offset;
        uint64_t v;
        int r;

        switch (ki->type) {
        case CT_PATH:
        case CT_SEARCH:
        case CT_FILTER:
                return parse_string(ki, slot, value, why, why_size);
        case CT_UINT:
        case CT_SIZE:
                r = parse_number(value, ki->type == CT_SIZE, &v);
                if (r < 0 || v < ki->min || v > ki->max) {
                        snprintf(why, why_size, "'%s' must be a number %" PRIu64 "..%" PRIu64 "%s", ki->name,
                                 ki->min, ki->max, ki->type == CT_SIZE ? " (suffix K, M or G allowed)" : "");
                        return -EINVAL;
                }
                *(uint64_t *)slot = v;
                return 0;
        case CT_BOOL:
                r = parse_bool(value);
                if (r < 0) {
                        snprintf(why, why_size, "'%s' must be yes or no", ki->name);
                        return -EINVAL;
                }
                *(bool *)slot = r;
                return 0;
        case CT_ORDERING:
                r = ordering_from_string(value);
                if (r < 0) {
                        snprintf(why, why_size, "'%s' must be devpath, strict or none", ki->name);
                        return -EINVAL;
                }
                *(enum ordering *)slot = (enum ordering)r;
                return 0;
        case CT_LOG_LEVEL:
                r = log_level_from_string(value);
                if (r < 0) {
                        snprintf(why, why_size, "'%s' must be err, warning, notice, info, debug or 0-7",
                                 ki->name);
                        return -EINVAL;
                }
                *(int *)slot = r;
                return 0;
        }
        return -EINVAL;
}

int conf_set_handler_option(enum conf_key k, const char *value, struct handler_config *h, char *why,
                            size_t why_size)
{
        _cleanup_free_ struct conf *c = NULL;

        if (k == CONF_FIRMWARE_LOADER || k == CONF_INPUT_STRIP_QUOTES) {
                *(k == CONF_FIRMWARE_LOADER ? &h->firmware_loader : &h->input_strip_quotes) = true;
                return 0;
        }
        if (!value || (k != CONF_FILTER_POLICY && k != CONF_FIRMWARE_PATH && k != CONF_HANDLER_CACHE)) {
                snprintf(why, why_size, "not a handler option");
                return -EINVAL;
        }
        if (strlen(value) >= HP_CONF_LINE_MAX) {
                snprintf(why, why_size, "'%s' is longer than %d bytes", keys[k].name, HP_CONF_LINE_MAX - 1);
                return -EINVAL;
        }
        c = calloc(1, sizeof(*c));
        if (!c || parse_value(c, k, value, why, why_size) < 0) {
                if (!c)
                        snprintf(why, why_size, "out of memory");
                return -EINVAL;
        }
        if (k == CONF_FILTER_POLICY)
                h->filter_policy = value;
        else if (k == CONF_FIRMWARE_PATH)
                h->firmware_path = value;
        else
                h->cache_size = (size_t)c->handler_cache;
        return 0;
}

static int lookup_key(const char *name)
{
        for (int k = 0; k < _CONF_KEY_MAX; k++)
                if (strcmp(name, keys[k].name) == 0)
                        return k;
        return -ENOENT;
}

static int fail_unknown_key(struct conf_error *err, const char *file, unsigned line, const char *key)
{
        char esc[128], alt[HP_CONF_LINE_MAX + 1];

        escape_cstr(key, esc, sizeof(esc));
        for (size_t i = 0; i < ELEMENTSOF(cli_only); i++)
                if (strcmp(key, cli_only[i]) == 0)
                        return conf_fail(err, file, line, "'%s' can only be given on the command line", esc);

        /* "max_children" or "MaxChildren"-ish spellings: suggest the real name. */
        snprintf(alt, sizeof(alt), "%s", key);
        for (char *p = alt; *p; p++)
                *p = *p == '_' ? '-' : (char)(*p | ((*p >= 'A' && *p <= 'Z') ? 0x20 : 0));
        if (lookup_key(alt) >= 0)
                return conf_fail(err, file, line, "unknown key '%s' (did you mean '%s'?)", esc, alt);
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

static int parse_line(struct conf *c, const char *s, size_t len, const char *file, unsigned line,
                      struct conf_error *err)
{
        char buf[HP_CONF_LINE_MAX + 1], why[256], esc[128];
        char *p, *eq, *key, *value;
        int k, r;

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
        k = lookup_key(key);
        if (k < 0)
                return fail_unknown_key(err, file, line, key);
        if (c->set & CONF_BIT(k))
                return conf_fail(err, file, line, "duplicate key '%s' (first set on line %u)", key,
                                 c->line[k]);
        if (*value == '\0')
                return conf_fail(err, file, line, "missing value for '%s'", key);
        if (k == CONF_AGENT || k == CONF_HOTPLUG_D) {
                enum conf_key other = k == CONF_AGENT ? CONF_HOTPLUG_D : CONF_AGENT;

                if (c->set & CONF_BIT(other))
                        return conf_fail(err, file, line,
                                         "'agent' and 'hotplug-d' exclude each other ('%s' set on line %u)",
                                         keys[other].name, c->line[other]);
        }
        r = parse_value(c, (enum conf_key)k, value, why, sizeof(why));
        if (r < 0)
                return conf_fail(err, file, line, "%s: '%s'", why, escape_cstr(value, esc, sizeof(esc)));
        c->set |= CONF_BIT(k);
        c->line[k] = line;
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

void conf_apply(const struct conf *c, struct manager_config *cfg, uint32_t cli_set)
{
        uint32_t use = c->set & ~cli_set;

        if (!(cli_set & (CONF_BIT(CONF_AGENT) | CONF_BIT(CONF_HOTPLUG_D)))) {
                if (use & CONF_BIT(CONF_AGENT))
                        cfg->agent = c->agent;
                if (use & CONF_BIT(CONF_HOTPLUG_D))
                        cfg->hotplug_d = c->hotplug_d;
        }
        if (use & CONF_BIT(CONF_ORDERING))
                cfg->ordering = c->ordering;
        if (use & CONF_BIT(CONF_MAX_CHILDREN))
                cfg->max_children = (unsigned)c->max_children;
        if (use & CONF_BIT(CONF_MAX_QUEUE))
                cfg->max_queue = (size_t)c->max_queue;
        if (use & CONF_BIT(CONF_TIMEOUT))
                cfg->timeout_usec = c->timeout_sec * USEC_PER_SEC;
        if (use & CONF_BIT(CONF_KILL_GRACE))
                cfg->kill_grace_usec = c->kill_grace_sec * USEC_PER_SEC;
        if (use & CONF_BIT(CONF_ALL))
                cfg->handlers.pass_all = c->all;
        if (use & CONF_BIT(CONF_HANDLER_DIR))
                cfg->handlers.handler_dir = c->handler_dir;
        if (use & CONF_BIT(CONF_SYSFS)) {
                cfg->sysfs_root = c->sysfs;
                cfg->handlers.sysfs_root = c->sysfs;
        }
        if (use & CONF_BIT(CONF_RCVBUF))
                cfg->rcvbuf = (int)c->rcvbuf;
        if (use & CONF_BIT(CONF_RECORD))
                cfg->record_path = c->record;
        if (use & CONF_BIT(CONF_REBROADCAST))
                cfg->rebroadcast_group = (unsigned)c->rebroadcast;
        if (use & CONF_BIT(CONF_FILTER_POLICY))
                cfg->handlers.filter_policy = c->filter_policy;
        if (use & CONF_BIT(CONF_FIRMWARE_LOADER))
                cfg->handlers.firmware_loader = c->firmware_loader;
        if (use & CONF_BIT(CONF_FIRMWARE_PATH))
                cfg->handlers.firmware_path = c->firmware_path;
        if (use & CONF_BIT(CONF_HANDLER_CACHE))
                cfg->handlers.cache_size = (size_t)c->handler_cache;
        if (use & CONF_BIT(CONF_INPUT_STRIP_QUOTES))
                cfg->handlers.input_strip_quotes = c->input_strip_quotes;
        if (use & CONF_BIT(CONF_RESYNC))
                cfg->resync = c->resync;
}
