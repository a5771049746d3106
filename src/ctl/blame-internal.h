/* SPDX-License-Identifier: MIT */
#pragma once

/* What blame.c and blame-chain.c share of the blame of a recording.  Private to ctl/. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/blame.h"
#include "ctl/timeline.h"
#include "shared/json.h"

/* An element of a timeline (a run, a wait) by SEQNUM: @i its index. */
struct blame_ref {
        uint64_t seqnum;
        size_t i;
};

/* By SEQNUM, then index (for qsort). */
int blame_cmp_ref(const void *a, const void *b);

/* @run did not exit 0 (exit status, signal, timeout, not executed); still running is no failure. */
bool blame_run_failed(const struct tl_run *run);

/*
 * The waits of the event whose first run is @first, its WAIT records at
 * @w[*k..] (sorted by SEQNUM: those of lower SEQNUMs skipped already):
 * how long it waited for order, for a slot and for udevd, into *@ret;
 * *@k is moved past its records.
 */
void blame_event_waits(const struct timeline *tl, const struct blame_ref *w, size_t n_w, size_t *k,
                       const struct tl_run *first, struct blame_waits *ret);

/* A member @key with the number @v in the open JSON object. */
static inline void blame_json_u64(struct json_writer *w, const char *key, uint64_t v)
{
        json_keyz(w, key);
        json_u64(w, v);
}
