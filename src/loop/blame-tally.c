/* SPDX-License-Identifier: MIT */
/*
 * A blame table (blame-tally.h).  Invariants: t->v[0..n) sorted by name,
 * names distinct and owned, n <= max; t->other holds what came past max
 * (count 0: nothing did).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "loop/blame-tally.h"
#include "shared/macro.h"

#define OTHER "(other)"

void tally_init(struct tally *t, size_t max)
{
        *t = (struct tally){ .max = max };
}

void tally_clear(struct tally *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i].name);
        free(t->v);
        tally_init(t, t->max);
}

/* Index of @name in @t, or where it would go (*@found false). */
static size_t tally_find(const struct tally *t, const char *name, bool *found)
{
        size_t lo = 0, hi = t->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(t->v[mid].name, name);

                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

/* The row of @name, made if there is room; else the "(other)" row.  NULL: no memory. */
static struct tally_row *tally_row(struct tally *t, const char *name)
{
        bool found;
        size_t i = tally_find(t, name, &found);
        char *copy;

        if (found)
                return &t->v[i];
        if (t->n >= t->max)
                return &t->other;
        if (t->n == t->a) {
                size_t a = t->a ? t->a * 2 : 16;
                struct tally_row *v = realloc(t->v, a * sizeof(*v));

                if (!v)
                        return NULL;
                t->v = v;
                t->a = a;
        }
        copy = strdup(name);
        if (!copy)
                return NULL;
        memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
        t->v[i] = (struct tally_row){ .name = copy };
        t->n++;
        return &t->v[i];
}

void tally_add(struct tally *t, const char *name, uint64_t seqnum, usec_t wall, const struct tally_waits *w,
               bool failed)
{
        struct tally_row *r = tally_row(t, name ? name : "(unknown)");

        if (!r)
                r = &t->other; /* no memory for a new name: still counted */
        if (r->count == 0 || wall > r->slowest) {
                r->slowest = wall;
                r->slowest_seqnum = seqnum;
        }
        r->count++;
        r->failed += failed;
        r->total += wall;
        r->waits.order += w->order;
        r->waits.slot += w->slot;
        r->waits.udev += w->udev;
}

static int cmp_total(const void *a, const void *b)
{
        const struct tally_row *x = *(const struct tally_row *const *)a, *y = *(const struct tally_row *const *)b;

        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return strcmp(x->name ? x->name : OTHER, y->name ? y->name : OTHER);
}

int tally_visit(const struct tally *t, enum control_blame_group g,
                void (*fn)(const struct control_blame_row *r, void *arg), void *arg)
{
        _cleanup_free_ const struct tally_row **v = calloc(t->n + 1, sizeof(*v));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < t->n; i++)
                v[n++] = &t->v[i];
        if (t->other.count > 0)
                v[n++] = &t->other;
        qsort(v, n, sizeof(*v), cmp_total);
        for (size_t i = 0; i < n; i++) {
                const struct control_blame_row row = {
                        .group = g, .name = v[i]->name ? v[i]->name : OTHER, .count = v[i]->count,
                        .total = v[i]->total, .slowest = v[i]->slowest, .slowest_seqnum = v[i]->slowest_seqnum,
                        .order_wait = v[i]->waits.order, .slot_wait = v[i]->waits.slot,
                        .udev_wait = v[i]->waits.udev, .failed = v[i]->failed,
                };

                fn(&row, arg);
        }
        return 0;
}
