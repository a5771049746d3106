/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A blame table of the running daemon (observe-blame.c): sums per name
 * (count, wall time, the slowest with its SEQNUM, the waits for order, for
 * a slot and for udevd), at most @max names; facts under a new name past that are
 * summed in one row "(other)".  Names are copied.  Lookups are a binary
 * search in the rows, kept sorted by name.
 *
 * Private to loop/.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/control.h"

/* What an event waited for, each in microseconds. */
struct tally_waits {
        usec_t order, slot, udev;
};

struct tally_row {
        char *name; /* owned; NULL: the "(other)" row */
        uint64_t count, slowest_seqnum;
        uint64_t failed;          /* of count: with a failed run, or failed runs */
        usec_t total, slowest;
        struct tally_waits waits; /* summed */
};

struct tally {
        struct tally_row *v; /* sorted by name */
        size_t n, a, max;
        struct tally_row other;
};

/* An empty table of at most @max names. */
void tally_init(struct tally *t, size_t max);

/* Free the rows and their names; @t is empty (of the same @max) after. */
void tally_clear(struct tally *t);

/**
 * tally_add() - one fact: an event or a run of @wall, whose event waited @w.
 * @name: borrowed (copied if new); NULL counts as "(unknown)"
 * @w: borrowed for the call
 * @failed: the run failed (exit status not 0, signal, not executed), or one of the event's did
 *
 * Never fails: without memory for a new name the fact goes to "(other)".
 */
void tally_add(struct tally *t, const char *name, uint64_t seqnum, usec_t wall, const struct tally_waits *w,
               bool failed);

/**
 * tally_visit() - the rows of @t, longest total first ("(other)" among them), to @fn.
 * @g: the group the rows are said to be of
 * Return: 0 or -ENOMEM (nothing visited).
 */
int tally_visit(const struct tally *t, enum control_blame_group g,
                void (*fn)(const struct control_blame_row *r, void *arg), void *arg);
