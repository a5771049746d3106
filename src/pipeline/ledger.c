/* SPDX-License-Identifier: MIT */
/*
 * The SEQNUM ledger.  Pure: plain data in, a verdict out; no clock, no I/O,
 * no allocation.
 *
 * Invariants:
 *  - l->last only grows; it is meaningful once l->processed > 0 (so a
 *    SEQNUM of 0 is an ordinary value, not "nothing seen").
 *  - A gap is only ever opened directly above max(last, baseline), so open
 *    gaps are disjoint, lie below l->last, and appending keeps them sorted.
 *    Every gap lies inside [1, UINT64_MAX - 1], so neither its size nor the
 *    sum of all sizes (l->missing) can overflow.
 *  - l->open[0 .. n_open) is sorted by first; when full, open[0] (the oldest
 *    and lowest) is forgotten.  A forgotten range stays counted in
 *    l->missing, but a late arrival inside it is then a duplicate.
 *  - l->recent keeps gaps as they were opened, never shrunk by late arrivals.
 * There is no wrap-around: after UINT64_MAX every SEQNUM is late or a duplicate.
 */
#include <assert.h>
#include <string.h>

#include "pipeline/ledger.h"
#include "shared/macro.h"

void ledger_init(struct ledger *l, uint64_t baseline)
{
        memset(l, 0, sizeof(*l));
        l->baseline = baseline;
}

void ledger_note_overflow(struct ledger *l)
{
        l->overflows++;
        l->overflow_pending = true;
}

/* The invariants above over the open gaps: sorted, disjoint, below l->last, inside [1, UINT64_MAX - 1]. */
static _unused_ bool open_gaps_sane(const struct ledger *l)
{
        if (l->n_open > LEDGER_MAX_OPEN_GAPS)
                return false;
        for (unsigned i = 0; i < l->n_open; i++) {
                const struct ledger_gap *g = &l->open[i];

                if (g->first == 0 || g->first > g->last || g->last >= l->last)
                        return false;
                if (i > 0 && l->open[i - 1].last >= g->first)
                        return false;
        }
        return true;
}

static void open_forget_oldest(struct ledger *l)
{
        memmove(&l->open[0], &l->open[1], (l->n_open - 1) * sizeof(l->open[0]));
        l->n_open--;
}

/* Record a new gap [first, last]; it lies above every open gap. */
static void gap_open(struct ledger *l, uint64_t first, uint64_t last, struct ledger_gap *ret_gap)
{
        struct ledger_gap g = {
                .first = first,
                .last = last,
                .class = l->overflow_pending ? GAP_OVERFLOW : GAP_UNEXPLAINED,
        };

        assert(first >= 1 && first <= last && last < UINT64_MAX);
        assert(l->n_open == 0 || l->open[l->n_open - 1].last < first);
        assert(l->missing <= UINT64_MAX - (last - first + 1));

        l->gaps++;
        if (g.class == GAP_OVERFLOW)
                l->gaps_overflow++;
        l->overflow_pending = false; /* this gap is that overflow's loss */
        l->missing += last - first + 1;

        if (l->n_open == LEDGER_MAX_OPEN_GAPS)
                open_forget_oldest(l);
        l->open[l->n_open++] = g;

        l->recent[l->n_recent % LEDGER_RECENT_GAPS] = g;
        l->n_recent++;

        if (ret_gap)
                *ret_gap = g;
}

/* Index of the open gap containing @seqnum, or -1. */
static int open_find(const struct ledger *l, uint64_t seqnum)
{
        unsigned lo = 0, hi = l->n_open;

        while (lo < hi) {
                unsigned mid = lo + (hi - lo) / 2;

                if (seqnum < l->open[mid].first)
                        hi = mid;
                else if (seqnum > l->open[mid].last)
                        lo = mid + 1;
                else
                        return (int)mid;
        }
        return -1;
}

/* Take @seqnum out of open gap @i: drop, shrink or split it. */
static void gap_fill(struct ledger *l, unsigned i, uint64_t seqnum)
{
        struct ledger_gap *g = &l->open[i];

        assert(i < l->n_open && g->first <= seqnum && seqnum <= g->last);
        if (g->first == seqnum && g->last == seqnum) {
                memmove(&l->open[i], &l->open[i + 1], (l->n_open - i - 1) * sizeof(l->open[0]));
                l->n_open--;
        } else if (g->first == seqnum) {
                g->first++;
        } else if (g->last == seqnum) {
                g->last--;
        } else if (l->n_open == LEDGER_MAX_OPEN_GAPS && i == 0) {
                /* No room to split: the lower half is the oldest range; forget it. */
                g->first = seqnum + 1;
        } else {
                struct ledger_gap upper = { .first = seqnum + 1, .last = g->last, .class = g->class };

                if (l->n_open == LEDGER_MAX_OPEN_GAPS) {
                        open_forget_oldest(l);
                        i--;
                }
                memmove(&l->open[i + 2], &l->open[i + 1], (l->n_open - i - 1) * sizeof(l->open[0]));
                l->open[i].last = seqnum - 1;
                l->open[i + 1] = upper;
                l->n_open++;
        }
}

/* Above everything seen: NEXT, or GAP from @expected (the lowest SEQNUM that implies no gap). */
static enum ledger_verdict account_ahead(struct ledger *l, uint64_t seqnum, uint64_t expected,
                                         struct ledger_gap *ret_gap)
{
        enum ledger_verdict v = LEDGER_NEXT;

        assert(seqnum >= expected && expected >= 1);
        if (seqnum > expected) {
                gap_open(l, expected, seqnum - 1, ret_gap);
                v = LEDGER_GAP;
        }
        l->last = seqnum;
        return v;
}

enum ledger_verdict ledger_account(struct ledger *l, uint64_t seqnum, struct ledger_gap *ret_gap)
{
        bool started = l->processed > 0;
        _unused_ uint64_t last_before = l->last;
        enum ledger_verdict v;
        int i;

        if (started && seqnum <= l->last) {
                /* Behind: inside a remembered gap, or seen (or unplaceable) before. */
                i = open_find(l, seqnum);
                if (i < 0) {
                        l->duplicates++;
                        return LEDGER_DUPLICATE;
                }
                gap_fill(l, (unsigned)i, seqnum);
                assert(l->missing > 0);
                l->missing--;
                l->late++;
                v = LEDGER_LATE;
        } else if (seqnum <= l->baseline || (!started && l->baseline == 0)) {
                /* In flight when we started (or the first seen, baseline unknown): in order, no gap. */
                l->last = seqnum;
                v = LEDGER_NEXT;
        } else {
                /* seqnum > baseline here, and > last if started, so neither + 1 overflows. */
                uint64_t expected = l->baseline + 1;

                if (started && l->last >= expected)
                        expected = l->last + 1;
                v = account_ahead(l, seqnum, expected, ret_gap);
        }

        l->processed++;
        assert(!started || l->last >= last_before);
        assert(open_gaps_sane(l));
        return v;
}

bool ledger_recent_gap(const struct ledger *l, unsigned i, struct ledger_gap *ret)
{
        unsigned stored = MIN(l->n_recent, (unsigned)LEDGER_RECENT_GAPS);

        if (i >= stored)
                return false;
        *ret = l->recent[(l->n_recent - 1 - i) % LEDGER_RECENT_GAPS];
        return true;
}

const char *gap_class_to_string(enum gap_class c)
{
        return c == GAP_OVERFLOW ? "overflow" : "unexplained";
}

const char *ledger_verdict_to_string(enum ledger_verdict v)
{
        static const char *const n[] = {
                [LEDGER_NEXT] = "next",
                [LEDGER_GAP] = "gap",
                [LEDGER_LATE] = "late",
                [LEDGER_DUPLICATE] = "duplicate",
        };

        return (unsigned)v < ELEMENTSOF(n) ? n[v] : "unknown";
}
