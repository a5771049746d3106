/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A kernel uevent, parsed in place.
 *
 * Wire format: "ACTION@DEVPATH\0KEY=VALUE\0KEY=VALUE\0...".  uevent_parse()
 * validates a datagram without allocating and fills a struct uevent whose
 * strings point into the caller's buffer (a "view").  uevent_dup() then makes
 * the one heap copy an event ever gets: the datagram, the handler chain's
 * additions and argv[1], all in a single allocation.
 *
 * Invariants of a parsed event: buf[size-1] == '\0'; every var[i] is the
 * offset of a "KEY=VALUE" entry with KEY in [A-Z0-9_]+, at most
 * HP_UEVENT_KEY_MAX bytes, and no key repeated;
 * the header "ACTION@DEVPATH" agrees with ACTION= and DEVPATH=; ACTION,
 * DEVPATH, SUBSYSTEM and SEQNUM are present and not empty, in any position;
 * action/devpath/subsystem/devpath_old are single-line printable ASCII;
 * action is [a-z0-9_]+ (unknown actions pass);
 * devpath and devpath_old are absolute with no empty, "." or ".." component
 * (so no "//" and no trailing '/'); subsystem has no '/' and does not start
 * with '.' (so it is not ".", ".." or a hidden name).  SEQNUM is canonical decimal (no sign, space or leading zero) and
 * fits 64 bits.  Every other value is bytes passed through as they are (any
 * byte but NUL, newlines included); HOME, PATH and the other keys that
 * env_key_refused() keeps from agents are kept in the view.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "shared/bounds.h"
#include "shared/log.h"
#include "shared/time-util.h"

struct envbuf;

struct uevent {
        uint64_t seqnum;
        usec_t received;       /* CLOCK_MONOTONIC when read, 0 if unknown */
        usec_t received_real;  /* CLOCK_REALTIME when read, 0 if unknown */

        const char *buf;       /* the datagram (view: caller's buffer; dup: inline) */
        uint16_t size;         /* bytes of buf, including the final NUL */
        uint16_t n_vars;       /* KEY=VALUE entries in buf after the header */
        const uint16_t *var;   /* offsets of those entries in buf */

        /* Values (not "KEY=") of the well-known keys; devpath_old may be NULL. */
        const char *action;
        const char *devpath;
        const char *subsystem;
        const char *devpath_old;
        uint16_t devpath_len;

        /* Set by uevent_dup(): handler additions and argv[1]. */
        const char *extra;     /* n_extra "KEY=VALUE\0" entries back to back */
        uint16_t n_extra;
        uint16_t extra_size;
        const char *name;      /* argv[1]; SUBSYSTEM unless a handler renamed it */

        /* Bookkeeping slots of a dup'd event: one for the scheduler, one for its owner. */
        void *sched_data;
        void *owner_data;
};

enum uevent_reject {
        UEVENT_OK = 0,
        UEVENT_REJECT_EMPTY,            /* zero length */
        UEVENT_REJECT_TOO_LONG,         /* > HP_UEVENT_MAX_SIZE */
        UEVENT_REJECT_NOT_TERMINATED,   /* last byte is not NUL */
        UEVENT_REJECT_LIBUDEV,          /* "libudev\0" framing, not from the kernel */
        UEVENT_REJECT_BAD_HEADER,       /* first string is not "ACTION@/DEVPATH" */
        UEVENT_REJECT_EMPTY_ENTRY,      /* "\0\0": an empty entry */
        UEVENT_REJECT_NO_EQUALS,        /* entry without '=' */
        UEVENT_REJECT_BAD_KEY,          /* key not [A-Z0-9_]+ */
        UEVENT_REJECT_DUPLICATE_KEY,
        UEVENT_REJECT_TOO_MANY_VARS,    /* > HP_UEVENT_MAX_VARS */
        UEVENT_REJECT_MISSING_KEY,      /* ACTION, DEVPATH, SUBSYSTEM or SEQNUM absent */
        UEVENT_REJECT_EMPTY_VALUE,      /* ACTION/DEVPATH/SUBSYSTEM/SEQNUM/DEVPATH_OLD empty */
        UEVENT_REJECT_HEADER_MISMATCH,  /* header disagrees with ACTION= / DEVPATH= */
        UEVENT_REJECT_BAD_CHARS,        /* byte outside 0x20-0x7e in ACTION/DEVPATH/SUBSYSTEM/DEVPATH_OLD */
        UEVENT_REJECT_BAD_DEVPATH,      /* DEVPATH(_OLD) not absolute, "//", ".", "..", trailing '/' */
        UEVENT_REJECT_BAD_SUBSYSTEM,    /* contains '/', or starts with '.' */
        UEVENT_REJECT_BAD_SEQNUM,       /* not canonical decimal, or > UINT64_MAX */
        UEVENT_REJECT_KEY_TOO_LONG,     /* key longer than HP_UEVENT_KEY_MAX bytes */
        UEVENT_REJECT_BAD_ACTION,       /* ACTION not [a-z0-9_]+ */
        _UEVENT_REJECT_MAX,
};

/* Short stable name of a reject class, e.g. "bad-devpath" (for logs and counters). */
const char *uevent_reject_to_string(enum uevent_reject r);

/**
 * uevent_parse() - validate a kernel datagram and describe it.
 * @data: the datagram (borrowed; @ret keeps pointers into it)
 * @size: its length in bytes as received
 * @var_storage: room for HP_UEVENT_MAX_VARS offsets (borrowed; @ret->var points here)
 * @ret: filled on success; untouched on failure
 * @ret_reason: set to the reject class on failure (may be NULL)
 *
 * Never allocates and never writes to @data.  HOME, PATH, LD_PRELOAD and
 * the other keys env_key_refused() names are accepted and kept in the
 * view; the agent environment builder leaves them out.  @var_storage may be written even when the datagram is
 * rejected.  Each malformed datagram gets one reject class, by the first
 * failing check in this order: framing (EMPTY, TOO_LONG, LIBUDEV,
 * NOT_TERMINATED), BAD_HEADER, each entry in turn (EMPTY_ENTRY, NO_EQUALS,
 * BAD_KEY, KEY_TOO_LONG, DUPLICATE_KEY, TOO_MANY_VARS), then MISSING_KEY,
 * EMPTY_VALUE, HEADER_MISMATCH, BAD_CHARS, BAD_ACTION, BAD_DEVPATH,
 * BAD_SUBSYSTEM, BAD_SEQNUM.
 *
 * Return: 0, or -EBADMSG with *@ret_reason set.
 */
int uevent_parse(const char *data, size_t size, uint16_t *var_storage, struct uevent *ret,
                 enum uevent_reject *ret_reason);

/**
 * uevent_subsystem_valid() - the rule a SUBSYSTEM value follows.
 * @s: the name (borrowed; need not be NUL-terminated)
 * @n: its length
 *
 * The name is used as argv[1] and as a hotplug.d directory: single-line
 * printable ASCII, no '/', no leading '.' (so not ".", ".." or a hidden
 * directory), not empty.  uevent_parse() rejects an event whose SUBSYSTEM
 * breaks it (BAD_CHARS or BAD_SUBSYSTEM); a setting that names
 * subsystems (subsystem-list.h) checks its names with it.
 * Return: true if @s is a valid subsystem name.
 */
bool uevent_subsystem_valid(const char *s, size_t n);

/**
 * uevent_get() - value of @key in the kernel part of @ev.
 * Return: pointer into the event (borrowed), or NULL.
 */
const char *uevent_get(const struct uevent *ev, const char *key);

/* Value of @key among the handler additions of a dup'd event, or NULL. */
const char *uevent_get_extra(const struct uevent *ev, const char *key);

/* Entry i as "KEY=VALUE" (borrowed). */
static inline const char *uevent_var(const struct uevent *ev, unsigned i)
{
        return ev->buf + ev->var[i];
}

/**
 * uevent_dup() - the single heap copy of an event.
 * @view: a parsed event (borrowed)
 * @extra: handler additions (borrowed, may be NULL)
 * @name: argv[1] (borrowed, NULL means SUBSYSTEM)
 * @ret: the new event, owned by the caller, freed with free()
 *
 * Return: 0 or -ENOMEM.
 */
int uevent_dup(const struct uevent *view, const struct envbuf *extra, const char *name, struct uevent **ret);

/**
 * uevent_clone() - the single heap copy of an event that has its additions.
 * @ev: a dup'd event, or a view whose extra, n_extra, extra_size and name
 *      are set (extra: entries back to back; name NULL means SUBSYSTEM); borrowed
 * @ret: the new event, owned by the caller, freed with free()
 *
 * What uevent_dup() makes of a view and an envbuf, made from an event
 * that carries them already (the backlog rebuilds events this way).
 * Return: 0 or -ENOMEM.
 */
int uevent_clone(const struct uevent *ev, struct uevent **ret);

/* The bytes uevent_clone() allocates for @ev (a dup's own size: what holding it costs). */
size_t uevent_copy_size(const struct uevent *ev);

/* The structured log fields of @ev (borrowed from it); none for NULL. */
static inline void uevent_log_fields(const struct uevent *ev, struct log_fields *f)
{
        *f = (struct log_fields)LOG_FIELDS_INIT;
        if (!ev)
                return;
        f->seqnum = ev->seqnum;
        f->devpath = ev->devpath;
        f->action = ev->action;
        f->subsystem = ev->subsystem;
}

static inline void uevent_freep(struct uevent **ev)
{
        free(*ev);
}

/* True if @ancestor is @path itself or a path-component prefix of it. */
bool devpath_is_prefix(const char *ancestor, size_t alen, const char *path, size_t plen);
