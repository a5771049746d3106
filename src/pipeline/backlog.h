/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The backlog: queued events kept in compact form behind the scheduler.
 *
 * An event in the scheduler costs its struct uevent allocation plus the
 * scheduler's item, heap slots and path index entries.  An event far back
 * in a long queue needs none of that until it can be looked at; the
 * backlog keeps only its bytes (of an event much like an earlier one, as
 * a burst's are, only those that set it apart), and gives it back as a
 * struct uevent (as uevent_dup() made it) when the manager moves it into
 * the scheduler.  A pure module: no clock, no loop, no logging.
 *
 * Invariants:
 *  - events leave lowest SEQNUM first, whatever order they came in
 *    (a late, lower SEQNUM is placed where it belongs);
 *  - what goes in comes out byte for byte: the datagram, received and
 *    received_real, the handler additions and argv[1];
 *  - a SEQNUM is pushed at most once (the ledger drops duplicates).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"

struct uevent;
struct backlog;

/* Room for one event taken out as a view (backlog_peek()): its datagram,
 * handler additions and argv[1], and the parser's offsets. */
struct backlog_slot {
        uint16_t vars[HP_UEVENT_MAX_VARS];
        char data[HP_UEVENT_MAX_SIZE + HP_ENV_ADD_MAX_BYTES + HP_NAME_MAX];
};

/**
 * backlog_new() - an empty backlog.
 * @ret: the backlog, owned by the caller (backlog_free())
 * Return: 0 or -ENOMEM.
 */
int backlog_new(struct backlog **ret);

/* Frees the backlog and every event in it.  Accepts NULL; returns NULL. */
struct backlog *backlog_free(struct backlog *b);

/**
 * backlog_push() - keep a copy of an event.
 * @b: backlog
 * @ev: a dup'd event, or a view from uevent_parse() (no handler additions,
 *      argv[1] SUBSYSTEM); borrowed, its bytes are copied
 *
 * Return: 0 or -ENOMEM (nothing kept).
 */
int backlog_push(struct backlog *b, const struct uevent *ev);

/**
 * backlog_peek() - the event with the lowest SEQNUM, as a view.
 * @b: backlog, not empty
 * @slot: where the event's bytes are rebuilt (borrowed; @ret points into it)
 * @ret: filled as uevent_dup() would fill a copy: extra, n_extra,
 *       extra_size and name are set; sched_data and owner_data are NULL
 *
 * The event stays in the backlog.
 * Return: 0, -ENOENT if @b is empty.
 */
int backlog_peek(const struct backlog *b, struct backlog_slot *slot, struct uevent *ret);

/* Forget the event backlog_peek() shows (the one with the lowest SEQNUM); nothing if empty. */
void backlog_drop_first(struct backlog *b);

/**
 * backlog_pop() - take out the event with the lowest SEQNUM.
 * @b: backlog
 * @ret: the event, a single allocation owned by the caller (free()), equal to
 *       the uevent_dup() it was pushed from
 *
 * Return: 0, -ENOENT if @b is empty, -ENOMEM (the event stays in @b).
 */
int backlog_pop(struct backlog *b, struct uevent **ret);

/* Lowest SEQNUM in @b, 0 if it is empty. */
uint64_t backlog_lowest(const struct backlog *b);

/* Events in @b. */
size_t backlog_count(const struct backlog *b);

/* Bytes @b has allocated: storage chunks, late entries and their heap. */
size_t backlog_bytes(const struct backlog *b);
