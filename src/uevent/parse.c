/* SPDX-License-Identifier: MIT */
/*
 * Strict parser of the kernel uevent wire format.  It validates a datagram
 * where it lies and records offsets; it never allocates and never writes to
 * the datagram.  Rules: see uevent.h.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "uevent.h"

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
};

const char *uevent_reject_to_string(enum uevent_reject r)
{
        if ((unsigned)r >= _UEVENT_REJECT_MAX)
                return "unknown";
        return reject_names[r];
}

static int reject(enum uevent_reject why, enum uevent_reject *ret_reason)
{
        if (ret_reason)
                *ret_reason = why;
        return -EBADMSG;
}

static bool key_valid(const char *k, size_t len)
{
        if (len == 0)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
                        return false;
        return true;
}

/* Single-line printable ASCII, no space-only restrictions beyond that. */
static bool printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        return false;
        return true;
}

static bool devpath_valid(const char *p, size_t len)
{
        if (len == 0 || p[0] != '/' || (len > 1 && p[len - 1] == '/'))
                return false;
        for (size_t i = 0; i < len; i++) {
                if (p[i] != '/')
                        continue;
                /* A component starts at i + 1. */
                const char *c = p + i + 1;
                size_t rest = len - i - 1;
                if (rest == 0)
                        return len == 1 ? false : false;
                if (c[0] == '/')
                        return false;
                if (c[0] == '.' && (rest == 1 || c[1] == '/'))
                        return false;
                if (c[0] == '.' && c[1] == '.' && (rest == 2 || c[2] == '/'))
                        return false;
        }
        return true;
}

static bool seqnum_parse(const char *s, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*s)
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                unsigned d = (unsigned)(*s - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *ret = v;
        return true;
}

int uevent_parse(const char *data, size_t size, uint16_t *var_storage, struct uevent *ret,
                 enum uevent_reject *ret_reason)
{
        const char *action = NULL, *devpath = NULL, *subsystem = NULL, *seqnum = NULL, *devpath_old = NULL;
        const char *at, *end;
        size_t hlen, pos;
        uint16_t n = 0;
        uint64_t seq;

        if (size == 0)
                return reject(UEVENT_REJECT_EMPTY, ret_reason);
        if (size > HP_UEVENT_MAX_SIZE)
                return reject(UEVENT_REJECT_TOO_LONG, ret_reason);
        if (data[size - 1] != '\0')
                return reject(UEVENT_REJECT_NOT_TERMINATED, ret_reason);
        if (size >= 8 && memcmp(data, "libudev", 8) == 0)
                return reject(UEVENT_REJECT_LIBUDEV, ret_reason);

        /* Header: "ACTION@/DEVPATH". */
        hlen = strlen(data);
        at = memchr(data, '@', hlen);
        if (!at || at == data || at[1] != '/')
                return reject(UEVENT_REJECT_BAD_HEADER, ret_reason);

        end = data + size;
        for (pos = hlen + 1; pos < size; pos += strlen(data + pos) + 1) {
                const char *e = data + pos, *eq;
                size_t elen = strlen(e), klen;

                if (elen == 0)
                        return reject(UEVENT_REJECT_EMPTY_ENTRY, ret_reason);
                eq = memchr(e, '=', elen);
                if (!eq)
                        return reject(UEVENT_REJECT_NO_EQUALS, ret_reason);
                klen = (size_t)(eq - e);
                if (!key_valid(e, klen))
                        return reject(UEVENT_REJECT_BAD_KEY, ret_reason);
                if (n >= HP_UEVENT_MAX_VARS)
                        return reject(UEVENT_REJECT_TOO_MANY_VARS, ret_reason);
                for (uint16_t i = 0; i < n; i++) {
                        const char *o = data + var_storage[i];
                        if (memcmp(o, e, klen + 1) == 0)
                                return reject(UEVENT_REJECT_DUPLICATE_KEY, ret_reason);
                }
                var_storage[n++] = (uint16_t)pos;

#define KEY_IS(name) (klen == STRLEN_(name) && memcmp(e, name, klen) == 0)
#define STRLEN_(s) (sizeof(s) - 1)
                if (KEY_IS("ACTION"))
                        action = eq + 1;
                else if (KEY_IS("DEVPATH"))
                        devpath = eq + 1;
                else if (KEY_IS("SUBSYSTEM"))
                        subsystem = eq + 1;
                else if (KEY_IS("SEQNUM"))
                        seqnum = eq + 1;
                else if (KEY_IS("DEVPATH_OLD"))
                        devpath_old = eq + 1;
#undef KEY_IS
#undef STRLEN_
        }
        (void)end;

        if (!action || !devpath || !subsystem || !seqnum)
                return reject(UEVENT_REJECT_MISSING_KEY, ret_reason);
        if (!*action || !*devpath || !*subsystem || !*seqnum)
                return reject(UEVENT_REJECT_EMPTY_VALUE, ret_reason);

        /* Header must agree with ACTION= and DEVPATH=. */
        if ((size_t)(at - data) != strlen(action) || memcmp(data, action, (size_t)(at - data)) != 0 ||
            strcmp(at + 1, devpath) != 0)
                return reject(UEVENT_REJECT_HEADER_MISMATCH, ret_reason);

        if (!printable(action) || !printable(devpath) || !printable(subsystem) ||
            (devpath_old && !printable(devpath_old)))
                return reject(UEVENT_REJECT_BAD_CHARS, ret_reason);
        size_t dlen = strlen(devpath);
        if (dlen > UINT16_MAX || !devpath_valid(devpath, dlen) ||
            (devpath_old && !devpath_valid(devpath_old, strlen(devpath_old))))
                return reject(UEVENT_REJECT_BAD_DEVPATH, ret_reason);
        if (strchr(subsystem, '/'))
                return reject(UEVENT_REJECT_BAD_SUBSYSTEM, ret_reason);
        if (!seqnum_parse(seqnum, &seq))
                return reject(UEVENT_REJECT_BAD_SEQNUM, ret_reason);

        *ret = (struct uevent){
                .seqnum = seq,
                .buf = data,
                .size = (uint16_t)size,
                .n_vars = n,
                .var = var_storage,
                .action = action,
                .devpath = devpath,
                .subsystem = subsystem,
                .devpath_old = devpath_old,
                .devpath_len = (uint16_t)dlen,
        };
        if (ret_reason)
                *ret_reason = UEVENT_OK;
        return 0;
}
