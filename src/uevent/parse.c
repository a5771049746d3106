/* SPDX-License-Identifier: MIT */
/*
 * Strict parser of the kernel uevent wire format.  It validates a datagram
 * where it lies and records offsets; it never allocates and never writes to
 * the datagram (only to the caller's offset array).  Rules: see uevent.h.
 *
 * Checks run in a fixed order, so each malformed datagram gets exactly one,
 * predictable reject class: framing, then each entry in turn, then the
 * well-known keys.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "shared/macro.h"
#include "uevent/uevent.h"

_Static_assert(HP_UEVENT_MAX_SIZE <= UINT16_MAX, "a datagram's size and offsets fit struct uevent's uint16_t");

static const char *const reject_names[_UEVENT_REJECT_MAX] = {
        [UEVENT_OK] = "ok",
        [UEVENT_REJECT_EMPTY] = "empty",
        [UEVENT_REJECT_TOO_LONG] = "too-long",
        [UEVENT_REJECT_NOT_TERMINATED] = "not-terminated",
        [UEVENT_REJECT_LIBUDEV] = "libudev-framing",
        [UEVENT_REJECT_BAD_HEADER] = "bad-header",
        [UEVENT_REJECT_EMPTY_ENTRY] = "empty-entry",
        [UEVENT_REJECT_NO_EQUALS] = "no-equals",
        [UEVENT_REJECT_BAD_KEY] = "bad-key",
        [UEVENT_REJECT_DUPLICATE_KEY] = "duplicate-key",
        [UEVENT_REJECT_TOO_MANY_VARS] = "too-many-vars",
        [UEVENT_REJECT_MISSING_KEY] = "missing-key",
        [UEVENT_REJECT_EMPTY_VALUE] = "empty-value",
        [UEVENT_REJECT_HEADER_MISMATCH] = "header-mismatch",
        [UEVENT_REJECT_BAD_CHARS] = "bad-chars",
        [UEVENT_REJECT_BAD_DEVPATH] = "bad-devpath",
        [UEVENT_REJECT_BAD_SUBSYSTEM] = "bad-subsystem",
        [UEVENT_REJECT_BAD_SEQNUM] = "bad-seqnum",
        [UEVENT_REJECT_KEY_TOO_LONG] = "key-too-long",
        [UEVENT_REJECT_BAD_ACTION] = "bad-action",
};

const char *uevent_reject_to_string(enum uevent_reject r)
{
        if ((unsigned)r >= _UEVENT_REJECT_MAX)
                return "unknown";
        return reject_names[r];
}

/* The keys the parser itself looks at; their values are found while scanning. */
enum known_key {
        KEY_ACTION,
        KEY_DEVPATH,
        KEY_SUBSYSTEM,
        KEY_SEQNUM,
        KEY_DEVPATH_OLD,
        _KEY_MAX,
};

static const char *const known_names[_KEY_MAX] = {
        [KEY_ACTION] = "ACTION",
        [KEY_DEVPATH] = "DEVPATH",
        [KEY_SUBSYSTEM] = "SUBSYSTEM",
        [KEY_SEQNUM] = "SEQNUM",
        [KEY_DEVPATH_OLD] = "DEVPATH_OLD",
};

static bool key_valid(const char *k, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
                        return false;
        return true;
}

/* Single-line printable ASCII: 0x20..0x7e only. */
static bool printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        return false;
        return true;
}

/* Absolute, every component non-empty and neither "." nor ".." (so no "//"
 * and no trailing '/'; "/" alone is not a device). */
static bool devpath_valid(const char *p)
{
        if (*p != '/')
                return false;
        while (*p == '/') {
                const char *c = p + 1;
                size_t n = strcspn(c, "/");

                if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                p = c + n;
        }
        return true;
}

bool uevent_subsystem_valid(const char *s, size_t n)
{
        if (n == 0 || s[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '/')
                        return false;
        return true;
}

/* [a-z0-9_]+, as every action the kernel sends; unknown ones pass. */
static bool action_valid(const char *s)
{
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
                        return false;
        return true;
}

/* Canonical decimal as the kernel prints it (%llu): digits only, no sign,
 * no spaces, no leading zero, at most UINT64_MAX. */
static bool seqnum_parse(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*s || (s[0] == '0' && s[1] != '\0'))
                return false;
        for (; *s; s++) {
                unsigned d;

                if (*s < '0' || *s > '9')
                        return false;
                d = (unsigned)(*s - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

static enum uevent_reject check_framing(const char *data, size_t size)
{
        if (size == 0)
                return UEVENT_REJECT_EMPTY;
        if (size > HP_UEVENT_MAX_SIZE)
                return UEVENT_REJECT_TOO_LONG;
        /* Before the NUL check: libudev's binary framing need not end in NUL. */
        if (size >= 8 && memcmp(data, "libudev", 8) == 0)
                return UEVENT_REJECT_LIBUDEV;
        if (data[size - 1] != '\0')
                return UEVENT_REJECT_NOT_TERMINATED;
        return UEVENT_OK;
}

/* One "KEY=VALUE" entry at @pos (NUL-terminated, inside @data).  Records it
 * in @var and, for a well-known key, its value in @known. */
static enum uevent_reject scan_entry(const char *data, size_t pos, uint16_t *var, uint16_t *n,
                                     const char *known[_KEY_MAX])
{
        const char *e = data + pos, *eq;
        size_t klen;

        if (*e == '\0')
                return UEVENT_REJECT_EMPTY_ENTRY;
        eq = strchr(e, '=');
        if (!eq)
                return UEVENT_REJECT_NO_EQUALS;
        klen = (size_t)(eq - e);
        if (!key_valid(e, klen))
                return UEVENT_REJECT_BAD_KEY;
        if (klen > HP_UEVENT_KEY_MAX)
                return UEVENT_REJECT_KEY_TOO_LONG;
        for (uint16_t i = 0; i < *n; i++)
                /* Both sides are inside @data: the earlier entry lies before @e. */
                if (memcmp(data + var[i], e, klen + 1) == 0)
                        return UEVENT_REJECT_DUPLICATE_KEY;
        if (*n >= HP_UEVENT_MAX_VARS)
                return UEVENT_REJECT_TOO_MANY_VARS;
        var[(*n)++] = (uint16_t)pos;

        for (size_t k = 0; k < _KEY_MAX; k++)
                if (strlen(known_names[k]) == klen && memcmp(e, known_names[k], klen) == 0)
                        known[k] = eq + 1;
        return UEVENT_OK;
}

/* The well-known keys against each other, the header and their own rules. */
static enum uevent_reject check_known(const char *header, size_t action_len, const char *known[_KEY_MAX],
                                      uint64_t *ret_seqnum)
{
        const char *action = known[KEY_ACTION], *devpath = known[KEY_DEVPATH];
        const char *subsystem = known[KEY_SUBSYSTEM], *old = known[KEY_DEVPATH_OLD];

        if (!action || !devpath || !subsystem || !known[KEY_SEQNUM])
                return UEVENT_REJECT_MISSING_KEY;
        if (!*action || !*devpath || !*subsystem || !*known[KEY_SEQNUM] || (old && !*old))
                return UEVENT_REJECT_EMPTY_VALUE;
        if (strlen(action) != action_len || memcmp(header, action, action_len) != 0 ||
            strcmp(header + action_len + 1, devpath) != 0)
                return UEVENT_REJECT_HEADER_MISMATCH;
        if (!printable(action) || !printable(devpath) || !printable(subsystem) || (old && !printable(old)))
                return UEVENT_REJECT_BAD_CHARS;
        if (!action_valid(action))
                return UEVENT_REJECT_BAD_ACTION;
        if (!devpath_valid(devpath) || (old && !devpath_valid(old)))
                return UEVENT_REJECT_BAD_DEVPATH;
        if (!uevent_subsystem_valid(subsystem, strlen(subsystem)))
                return UEVENT_REJECT_BAD_SUBSYSTEM;
        if (!seqnum_parse(known[KEY_SEQNUM], ret_seqnum))
                return UEVENT_REJECT_BAD_SEQNUM;
        return UEVENT_OK;
}

/* Some of the invariants uevent.h states of a parsed event: the ones a
 * caller indexes by (terminated buffer, offsets and values inside it). */
static _unused_ bool parsed_sane(const struct uevent *ev)
{
        const char *end = ev->buf + ev->size;

        if (ev->size == 0 || ev->buf[ev->size - 1] != '\0' || ev->n_vars > HP_UEVENT_MAX_VARS)
                return false;
        for (uint16_t i = 0; i < ev->n_vars; i++)
                if (ev->var[i] >= ev->size || !strchr(ev->buf + ev->var[i], '='))
                        return false;
        if (!ev->action || !ev->devpath || !ev->subsystem)
                return false;
        if (ev->action >= end || ev->devpath >= end || ev->subsystem >= end)
                return false;
        return ev->devpath[0] == '/' && ev->devpath_len == strlen(ev->devpath) && *ev->action && *ev->subsystem;
}

static int reject(enum uevent_reject why, enum uevent_reject *ret_reason)
{
        if (ret_reason)
                *ret_reason = why;
        return -EBADMSG;
}

int uevent_parse(const char *data, size_t size, uint16_t *var_storage, struct uevent *ret,
                 enum uevent_reject *ret_reason)
{
        const char *known[_KEY_MAX] = { NULL };
        const char *at;
        enum uevent_reject why;
        uint16_t n = 0;
        uint64_t seqnum;

        why = check_framing(data, size);
        if (why != UEVENT_OK)
                return reject(why, ret_reason);

        /* Header "ACTION@/DEVPATH"; the first '@' ends ACTION (a DEVPATH may hold '@'). */
        at = strchr(data, '@');
        if (!at || at == data || at[1] != '/')
                return reject(UEVENT_REJECT_BAD_HEADER, ret_reason);

        for (size_t pos = strlen(data) + 1; pos < size; pos += strlen(data + pos) + 1) {
                why = scan_entry(data, pos, var_storage, &n, known);
                if (why != UEVENT_OK)
                        return reject(why, ret_reason);
        }

        why = check_known(data, (size_t)(at - data), known, &seqnum);
        if (why != UEVENT_OK)
                return reject(why, ret_reason);

        *ret = (struct uevent){
                .seqnum = seqnum,
                .buf = data,
                .size = (uint16_t)size,
                .n_vars = n,
                .var = var_storage,
                .action = known[KEY_ACTION],
                .devpath = known[KEY_DEVPATH],
                .subsystem = known[KEY_SUBSYSTEM],
                .devpath_old = known[KEY_DEVPATH_OLD],
                .devpath_len = (uint16_t)strlen(known[KEY_DEVPATH]),
        };
        assert(parsed_sane(ret));
        if (ret_reason)
                *ret_reason = UEVENT_OK;
        return 0;
}
