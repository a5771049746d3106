/* SPDX-License-Identifier: MIT */
/*
 * The SEQNUM ledger, table-driven: each case is a baseline, a script of
 * SEQNUMs and overflow reports with the verdict (and gap) expected for each,
 * then the counters and the open gaps expected at the end.
 */
#include "pipeline/ledger.h"
#include "test.h"

#define MAX_STEPS 40
#define U64MAX UINT64_MAX
#define ELEMENTS_OPEN 8

struct step {
        bool overflow;       /* report ENOBUFS instead of a SEQNUM */
        uint64_t seqnum;
        enum ledger_verdict v;
        uint64_t gap_first, gap_last; /* for LEDGER_GAP */
        enum gap_class class;
};

struct counters {
        uint64_t processed, gaps, missing, gaps_overflow, duplicates, late, overflows, last;
};

struct ledger_case {
        const char *name;
        uint64_t baseline;
        struct step steps[MAX_STEPS];
        struct counters want;
        struct ledger_gap open[ELEMENTS_OPEN]; /* expected open gaps; first == 0 ends the list */
};

#define N(s) { .seqnum = (s), .v = LEDGER_NEXT }
#define L(s) { .seqnum = (s), .v = LEDGER_LATE }
#define D(s) { .seqnum = (s), .v = LEDGER_DUPLICATE }
#define G(s, a, b) { .seqnum = (s), .v = LEDGER_GAP, .gap_first = (a), .gap_last = (b), .class = GAP_UNEXPLAINED }
#define GO(s, a, b) { .seqnum = (s), .v = LEDGER_GAP, .gap_first = (a), .gap_last = (b), .class = GAP_OVERFLOW }
#define O { .overflow = true }
#define END { .seqnum = 0, .v = (enum ledger_verdict)-1 }

static const struct ledger_case cases[] = {
        { .name = "in order from unknown baseline", .baseline = 0,
          .steps = { N(500), N(501), N(502), END },
          .want = { .processed = 3, .last = 502 } },
        { .name = "first event above baseline+1 opens a gap", .baseline = 100,
          .steps = { G(105, 101, 104), N(106), END },
          .want = { .processed = 2, .gaps = 1, .missing = 4, .last = 106 },
          .open = { { 101, 104, GAP_UNEXPLAINED } } },
        { .name = "baseline+1 first is next", .baseline = 100,
          .steps = { N(101), N(102), END },
          .want = { .processed = 2, .last = 102 } },
        { .name = "in flight at start: at or below baseline, in order, no gap", .baseline = 100,
          .steps = { N(90), N(95), N(100), N(101), END },
          .want = { .processed = 4, .last = 101 } },
        { .name = "in flight, then a jump above baseline: gap from baseline+1", .baseline = 100,
          .steps = { N(97), N(99), G(104, 101, 103), D(98), D(100), D(99), END },
          .want = { .processed = 3, .gaps = 1, .missing = 3, .duplicates = 3, .last = 104 },
          .open = { { 101, 103, GAP_UNEXPLAINED } } },
        { .name = "below baseline out of order is a duplicate", .baseline = 100,
          .steps = { N(97), D(96), D(97), N(98), END },
          .want = { .processed = 2, .duplicates = 2, .last = 98 } },
        { .name = "duplicates of next and of the first", .baseline = 0,
          .steps = { N(10), D(10), N(11), D(11), D(10), D(3), END },
          .want = { .processed = 2, .duplicates = 4, .last = 11 } },
        { .name = "late arrivals shrink a gap from both ends, then close it", .baseline = 0,
          .steps = { N(10), G(15, 11, 14), L(11), L(14), D(11), L(12), L(13), D(13), N(16), END },
          .want = { .processed = 7, .gaps = 1, .missing = 0, .late = 4, .duplicates = 2, .last = 16 } },
        { .name = "late arrival splits a gap", .baseline = 0,
          .steps = { N(1), G(10, 2, 9), L(5), L(3), D(5), END },
          .want = { .processed = 4, .gaps = 1, .missing = 6, .late = 2, .duplicates = 1, .last = 10 },
          .open = { { 2, 2, GAP_UNEXPLAINED }, { 4, 4, GAP_UNEXPLAINED }, { 6, 9, GAP_UNEXPLAINED } } },
        { .name = "several gaps: late lands in the right one", .baseline = 0,
          .steps = { N(1), G(5, 2, 4), G(9, 6, 8), G(20, 10, 19), L(7), L(19), L(2), D(5), D(9), END },
          .want = { .processed = 7, .gaps = 3, .missing = 13, .late = 3, .duplicates = 2, .last = 20 },
          .open = { { 3, 4, GAP_UNEXPLAINED }, { 6, 6, GAP_UNEXPLAINED }, { 8, 8, GAP_UNEXPLAINED },
            { 10, 18, GAP_UNEXPLAINED } } },
        { .name = "overflow classifies the next gap only", .baseline = 0,
          .steps = { N(1), O, GO(5, 2, 4), G(9, 6, 8), O, O, GO(12, 10, 11), END },
          .want = { .processed = 4, .gaps = 3, .gaps_overflow = 2, .missing = 8, .overflows = 3, .last = 12 },
          .open = { { 2, 4, GAP_OVERFLOW }, { 6, 8, GAP_UNEXPLAINED }, { 10, 11, GAP_OVERFLOW } } },
        /* The kernel reports ENOBUFS before the datagrams still queued: those arrive
         * in order, and the loss is the gap after them. */
        { .name = "overflow, in-order events still queued, then the gap", .baseline = 0,
          .steps = { N(1), O, N(2), N(3), GO(6, 4, 5), G(8, 7, 7), END },
          .want = { .processed = 5, .gaps = 2, .gaps_overflow = 1, .missing = 3, .overflows = 1, .last = 8 },
          .open = { { 4, 5, GAP_OVERFLOW }, { 7, 7, GAP_UNEXPLAINED } } },
        { .name = "overflow then a late event: still pending", .baseline = 0,
          .steps = { N(1), G(5, 2, 4), O, L(3), GO(7, 6, 6), END },
          .want = { .processed = 4, .gaps = 2, .gaps_overflow = 1, .missing = 3, .late = 1, .overflows = 1,
            .last = 7 },
          .open = { { 2, 2, GAP_UNEXPLAINED }, { 4, 4, GAP_UNEXPLAINED }, { 6, 6, GAP_OVERFLOW } } },
        { .name = "overflow then a duplicate: still pending", .baseline = 0,
          .steps = { N(1), N(2), O, D(2), GO(4, 3, 3), END },
          .want = { .processed = 3, .gaps = 1, .gaps_overflow = 1, .missing = 1, .duplicates = 1, .overflows = 1,
            .last = 4 },
          .open = { { 3, 3, GAP_OVERFLOW } } },
        { .name = "overflow before the first event classifies the baseline gap", .baseline = 100,
          .steps = { O, GO(110, 101, 109), END },
          .want = { .processed = 1, .gaps = 1, .gaps_overflow = 1, .missing = 9, .overflows = 1, .last = 110 },
          .open = { { 101, 109, GAP_OVERFLOW } } },
        { .name = "seqnum 0 first, unknown baseline", .baseline = 0,
          .steps = { N(0), D(0), N(1), G(3, 2, 2), D(0), END },
          .want = { .processed = 3, .gaps = 1, .missing = 1, .duplicates = 2, .last = 3 },
          .open = { { 2, 2, GAP_UNEXPLAINED } } },
        { .name = "seqnum 0 while in flight below baseline", .baseline = 5,
          .steps = { N(0), D(0), N(4), N(6), END },
          .want = { .processed = 3, .duplicates = 1, .last = 6 } },
        { .name = "near UINT64_MAX: next, gap, then nothing above", .baseline = 0,
          .steps = { N(U64MAX - 5), G(U64MAX - 1, U64MAX - 4, U64MAX - 2), N(U64MAX), D(U64MAX), L(U64MAX - 3),
            D(0), D(1), END },
          .want = { .processed = 4, .gaps = 1, .missing = 2, .late = 1, .duplicates = 3, .last = U64MAX },
          .open = { { U64MAX - 4, U64MAX - 4, GAP_UNEXPLAINED }, { U64MAX - 2, U64MAX - 2, GAP_UNEXPLAINED } } },
        { .name = "widest possible gap", .baseline = 0,
          .steps = { N(0), G(U64MAX, 1, U64MAX - 1), L(U64MAX - 1), L(1), END },
          .want = { .processed = 4, .gaps = 1, .missing = U64MAX - 3, .late = 2, .last = U64MAX },
          .open = { { 2, U64MAX - 2, GAP_UNEXPLAINED } } },
        { .name = "baseline UINT64_MAX: everything in flight, in order", .baseline = U64MAX,
          .steps = { N(7), N(U64MAX - 1), D(8), N(U64MAX), D(U64MAX), END },
          .want = { .processed = 3, .duplicates = 2, .last = U64MAX } },
        { .name = "baseline UINT64_MAX-1 then MAX is next", .baseline = U64MAX - 1,
          .steps = { N(U64MAX), END },
          .want = { .processed = 1, .last = U64MAX } },
        { .name = "baseline UINT64_MAX-2 then MAX is a gap", .baseline = U64MAX - 2,
          .steps = { G(U64MAX, U64MAX - 1, U64MAX - 1), L(U64MAX - 1), END },
          .want = { .processed = 2, .gaps = 1, .late = 1, .last = U64MAX } },
};

static void check_counters(const struct ledger *l, const struct counters *w)
{
        check_int(l->processed, w->processed);
        check_int(l->gaps, w->gaps);
        check(l->missing == w->missing);
        check_int(l->gaps_overflow, w->gaps_overflow);
        check_int(l->duplicates, w->duplicates);
        check_int(l->late, w->late);
        check_int(l->overflows, w->overflows);
        check(l->last == w->last);
}

static void run_case(const struct ledger_case *c)
{
        struct ledger l;
        unsigned n_open = 0;

        fprintf(stderr, "   case: %s\n", c->name);
        ledger_init(&l, c->baseline);
        for (const struct step *s = c->steps; s->overflow || s->v != (enum ledger_verdict)-1; s++) {
                struct ledger_gap gap = { 7, 7, GAP_OVERFLOW };
                enum ledger_verdict v;

                if (s->overflow) {
                        ledger_note_overflow(&l);
                        check(l.overflow_pending);
                        continue;
                }
                v = ledger_account(&l, s->seqnum, &gap);
                if (v != s->v)
                        fprintf(stderr, "   seqnum %" PRIu64 ": %s, expected %s\n", s->seqnum,
                                ledger_verdict_to_string(v), ledger_verdict_to_string(s->v));
                check_int(v, s->v);
                if (v == LEDGER_GAP) {
                        check(gap.first == s->gap_first);
                        check(gap.last == s->gap_last);
                        check_int(gap.class, s->class);
                } else {
                        /* *ret_gap untouched unless a gap was opened */
                        check(gap.first == 7 && gap.last == 7 && gap.class == GAP_OVERFLOW);
                }
                /* Only an opened gap clears the pending overflow. */
                if (v == LEDGER_GAP)
                        check(!l.overflow_pending);
        }
        check_counters(&l, &c->want);

        while (n_open < ELEMENTS_OPEN && c->open[n_open].first != 0)
                n_open++;
        check_int(l.n_open, n_open);
        for (unsigned i = 0; i < n_open; i++) {
                check(l.open[i].first == c->open[i].first);
                check(l.open[i].last == c->open[i].last);
                check_int(l.open[i].class, c->open[i].class);
        }
}

static void test_table(void)
{
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                run_case(&cases[i]);
}

/* Open N single-SEQNUM gaps at 2, 4, ..., 2N (after a first event 1). */
static void open_single_gaps(struct ledger *l, unsigned n)
{
        check_int(ledger_account(l, 1, NULL), LEDGER_NEXT);
        for (unsigned k = 1; k <= n; k++)
                check_int(ledger_account(l, 2 * k + 1, NULL), LEDGER_GAP);
}

static void test_eviction(void)
{
        struct ledger l;

        ledger_init(&l, 0);
        open_single_gaps(&l, LEDGER_MAX_OPEN_GAPS + 6);
        check_int(l.gaps, LEDGER_MAX_OPEN_GAPS + 6);
        check_int(l.n_open, LEDGER_MAX_OPEN_GAPS);
        /* The six oldest (2 .. 12) are forgotten; the rest stay sorted. */
        check_int(l.open[0].first, 14);
        for (unsigned i = 0; i < l.n_open; i++)
                check_int(l.open[i].first, 14 + 2 * i);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 1].last, 2 * (LEDGER_MAX_OPEN_GAPS + 6));

        /* A late arrival in a forgotten gap can no longer be placed: duplicate. */
        check_int(ledger_account(&l, 2, NULL), LEDGER_DUPLICATE);
        check_int(ledger_account(&l, 12, NULL), LEDGER_DUPLICATE);
        check_int(ledger_account(&l, 14, NULL), LEDGER_LATE);
        check_int(l.duplicates, 2);
        check_int(l.late, 1);
        check_int(l.n_open, LEDGER_MAX_OPEN_GAPS - 1);
        /* Forgotten SEQNUMs are still missing. */
        check_int(l.missing, LEDGER_MAX_OPEN_GAPS + 6 - 1);
}

static void test_split_when_full(void)
{
        struct ledger l;

        /* The oldest gap is the wide one: splitting it forgets its lower half. */
        ledger_init(&l, 0);
        check_int(ledger_account(&l, 1, NULL), LEDGER_NEXT);
        check_int(ledger_account(&l, 100, NULL), LEDGER_GAP); /* 2..99 */
        for (unsigned k = 1; k < LEDGER_MAX_OPEN_GAPS; k++)
                check_int(ledger_account(&l, 100 + 2 * k, NULL), LEDGER_GAP);
        check_int(l.n_open, LEDGER_MAX_OPEN_GAPS);
        check_int(ledger_account(&l, 50, NULL), LEDGER_LATE);
        check_int(l.n_open, LEDGER_MAX_OPEN_GAPS);
        check_int(l.open[0].first, 51);
        check_int(l.open[0].last, 99);
        check_int(l.open[1].first, 101);
        check_int(ledger_account(&l, 20, NULL), LEDGER_DUPLICATE);
        check_int(ledger_account(&l, 51, NULL), LEDGER_LATE);
        check_int(l.missing, 98 + (LEDGER_MAX_OPEN_GAPS - 1) - 2);

        /* The wide gap is the newest: splitting it forgets the oldest gap. */
        ledger_init(&l, 0);
        open_single_gaps(&l, LEDGER_MAX_OPEN_GAPS - 1); /* 2, 4, .., 126 */
        check_int(ledger_account(&l, 200, NULL), LEDGER_GAP); /* 128..199 */
        check_int(l.n_open, LEDGER_MAX_OPEN_GAPS);
        check_int(ledger_account(&l, 150, NULL), LEDGER_LATE);
        check_int(l.n_open, LEDGER_MAX_OPEN_GAPS);
        check_int(l.open[0].first, 4);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 2].first, 128);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 2].last, 149);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 1].first, 151);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 1].last, 199);
        check_int(ledger_account(&l, 2, NULL), LEDGER_DUPLICATE);
        check_int(ledger_account(&l, 4, NULL), LEDGER_LATE);
        check_int(ledger_account(&l, 149, NULL), LEDGER_LATE);
        check_int(ledger_account(&l, 151, NULL), LEDGER_LATE);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 3].first, 128);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 3].last, 148);
        check_int(l.open[LEDGER_MAX_OPEN_GAPS - 2].first, 152);
}

static void test_recent_ring(void)
{
        struct ledger_gap g;
        struct ledger l;

        ledger_init(&l, 0);
        check(!ledger_recent_gap(&l, 0, &g));
        open_single_gaps(&l, 3);
        check(ledger_recent_gap(&l, 0, &g));
        check_int(g.first, 6);
        check(ledger_recent_gap(&l, 2, &g));
        check_int(g.first, 2);
        check(!ledger_recent_gap(&l, 3, &g));

        /* Kept as opened: a late arrival does not shrink the recorded gap. */
        check_int(ledger_account(&l, 100, NULL), LEDGER_GAP); /* 8..99 */
        check_int(ledger_account(&l, 8, NULL), LEDGER_LATE);
        check(ledger_recent_gap(&l, 0, &g));
        check_int(g.first, 8);
        check_int(g.last, 99);

        /* Wrap: 20 more gaps, newest first, only the last LEDGER_RECENT_GAPS kept. */
        ledger_note_overflow(&l);
        for (unsigned k = 0; k < 20; k++)
                check_int(ledger_account(&l, 102 + 2 * k, NULL), LEDGER_GAP); /* gap 101 + 2k */
        check_int(l.n_recent, 24);
        for (unsigned i = 0; i < LEDGER_RECENT_GAPS; i++) {
                check(ledger_recent_gap(&l, i, &g));
                check_int(g.first, 101 + 2 * (19 - i));
                check_int(g.last, g.first);
                check_int(g.class, i == 19 ? GAP_OVERFLOW : GAP_UNEXPLAINED);
        }
        check(!ledger_recent_gap(&l, LEDGER_RECENT_GAPS, &g));
}

static void test_strings(void)
{
        check_str(ledger_verdict_to_string(LEDGER_NEXT), "next");
        check_str(ledger_verdict_to_string(LEDGER_GAP), "gap");
        check_str(ledger_verdict_to_string(LEDGER_LATE), "late");
        check_str(ledger_verdict_to_string(LEDGER_DUPLICATE), "duplicate");
        check_str(ledger_verdict_to_string((enum ledger_verdict)42), "unknown");
        check_str(gap_class_to_string(GAP_OVERFLOW), "overflow");
        check_str(gap_class_to_string(GAP_UNEXPLAINED), "unexplained");
}

int main(void)
{
        run_test(test_table);
        run_test(test_eviction);
        run_test(test_split_when_full);
        run_test(test_recent_ring);
        run_test(test_strings);
        return 0;
}
