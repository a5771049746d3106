/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The SEQNUM ledger: a pure decision module.  It is told each SEQNUM as it
 * arrives (and each receive-buffer overflow) and answers what that SEQNUM
 * means; it reads no clock, opens nothing and never allocates.
 *
 * The kernel's counter is global but delivery is per network namespace, so
 * a gap is not always a loss: each gap is classified `overflow` if an
 * ENOBUFS was seen since the previous gap was opened, else `unexplained`.
 * (The kernel reports ENOBUFS before the datagrams still queued and drops
 * only what came after them, so the loss shows as the first gap after the
 * datagrams read since the ENOBUFS, not right after it.)
 *
 * Open gaps are remembered (bounded: LEDGER_MAX_OPEN_GAPS, oldest forgotten
 * first) so that a late arrival inside a gap is told apart from a duplicate.
 */

#include <stdbool.h>
#include <stdint.h>

#define LEDGER_MAX_OPEN_GAPS 64
#define LEDGER_RECENT_GAPS 16

enum gap_class {
        GAP_UNEXPLAINED,
        GAP_OVERFLOW,
};

struct ledger_gap {
        uint64_t first;  /* first missing SEQNUM */
        uint64_t last;   /* last missing SEQNUM (inclusive) */
        enum gap_class class;
};

enum ledger_verdict {
        LEDGER_NEXT,       /* the expected next SEQNUM (or the first seen): process */
        LEDGER_GAP,        /* process; a gap just before it was opened (*ret_gap) */
        LEDGER_LATE,       /* arrived after a higher SEQNUM, inside an open gap: process */
        LEDGER_DUPLICATE,  /* seen before (or older than anything we can place): drop */
};

struct ledger {
        uint64_t baseline;      /* /sys/kernel/uevent_seqnum at start, 0 if unknown */
        uint64_t last;          /* highest SEQNUM accepted, 0 before the first */
        bool overflow_pending;  /* ENOBUFS since the last gap was opened */

        uint64_t processed;     /* accepted events (NEXT + GAP + LATE) */
        uint64_t gaps;          /* gaps opened */
        uint64_t missing;       /* SEQNUMs inside gaps, minus late arrivals */
        uint64_t gaps_overflow; /* gaps classified overflow */
        uint64_t duplicates;    /* dropped */
        uint64_t late;          /* out-of-order arrivals that filled a gap */
        uint64_t overflows;     /* ENOBUFS reports */

        /* Open gaps, kept sorted by first; late arrivals split or shrink them. */
        struct ledger_gap open[LEDGER_MAX_OPEN_GAPS];
        unsigned n_open;

        /* The most recent gaps as opened (ring), for status output. */
        struct ledger_gap recent[LEDGER_RECENT_GAPS];
        unsigned n_recent;      /* total ever stored; index = n_recent % LEDGER_RECENT_GAPS */
};

/**
 * ledger_init() - start a ledger.
 * @l: ledger (borrowed)
 * @baseline: the kernel's SEQNUM when we started listening, 0 if unknown.
 *
 * The first SEQNUM accepted opens a gap only if it is above @baseline + 1.
 * SEQNUMs at or below @baseline seen before any event above it were in
 * flight when we opened the socket; they are accepted, in order.  With
 * @baseline 0 (unknown) the first SEQNUM is accepted as NEXT, whatever it is.
 * SEQNUMs never wrap: once UINT64_MAX is accepted, nothing is above it.
 */
void ledger_init(struct ledger *l, uint64_t baseline);

/* Record an ENOBUFS (receive-buffer overflow). */
void ledger_note_overflow(struct ledger *l);

/**
 * ledger_account() - account one SEQNUM.
 * @l: ledger
 * @seqnum: SEQNUM of a valid event
 * @ret_gap: when the verdict is LEDGER_GAP, the gap opened (may be NULL)
 *
 * Return: the verdict.
 */
enum ledger_verdict ledger_account(struct ledger *l, uint64_t seqnum, struct ledger_gap *ret_gap);

/* Gap i of the most recent ones, 0 = newest; false if fewer were stored. */
bool ledger_recent_gap(const struct ledger *l, unsigned i, struct ledger_gap *ret);

const char *gap_class_to_string(enum gap_class c);
const char *ledger_verdict_to_string(enum ledger_verdict v);
