/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER: accepts everything in order; the real ledger replaces this. */
#include "ledger.h"

void ledger_init(struct ledger *l, uint64_t baseline)
{
        *l = (struct ledger){ .baseline = baseline };
}

void ledger_note_overflow(struct ledger *l)
{
        l->overflows++;
        l->overflow_pending = true;
}

enum ledger_verdict ledger_account(struct ledger *l, uint64_t seqnum, struct ledger_gap *ret_gap)
{
        (void)ret_gap;
        l->processed++;
        if (seqnum > l->last)
                l->last = seqnum;
        l->overflow_pending = false;
        return LEDGER_NEXT;
}

bool ledger_recent_gap(const struct ledger *l, unsigned i, struct ledger_gap *ret)
{
        (void)l;
        (void)i;
        (void)ret;
        return false;
}

const char *gap_class_to_string(enum gap_class c)
{
        return c == GAP_OVERFLOW ? "overflow" : "unexplained";
}

const char *ledger_verdict_to_string(enum ledger_verdict v)
{
        static const char *const n[] = { "next", "gap", "late", "duplicate" };
        return (unsigned)v < 4 ? n[v] : "unknown";
}
