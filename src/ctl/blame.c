/* SPDX-License-Identifier: MIT */
/*
 * The blame model (blame.h): facts are appended as rows of count 1, then
 * blame_finish() sorts each group by name, merges equal names and sorts the
 * merged rows by total.  Nothing is looked up while facts come in, so no
 * table is needed; a recording holds at most HP_TIMELINE_MAX_RUNS runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/blame-internal.h"
#include "ctl/blame.h"
#include "ctl/timeline.h"
#include "shared/escape.h"
#include "shared/json.h"
#include "shared/macro.h"

int blame_new(struct blame **ret)
{
        *ret = calloc(1, sizeof(**ret));
        return *ret ? 0 : -ENOMEM;
}

struct blame *blame_free(struct blame *b)
{
        if (!b)
                return NULL;
        for (int g = 0; g < _BLAME_GROUP_MAX; g++)
                free(b->rows[g]);
        for (size_t i = 0; i < b->n_names; i++)
                free(b->names[i]);
        free(b->names);
        free(b);
        return NULL;
}

const char *blame_group_name(enum blame_group g)
{
        static const char *const names[_BLAME_GROUP_MAX] = { "subsystem", "program", "device", "module" };

        return (unsigned)g < _BLAME_GROUP_MAX ? names[g] : NULL;
}

static int add_row(struct blame *b, enum blame_group g, const struct blame_row *row)
{
        if (b->n[g] == b->a[g]) {
                size_t a = b->a[g] ? b->a[g] * 2 : 64;
                struct blame_row *v = realloc(b->rows[g], a * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                b->rows[g] = v;
                b->a[g] = a;
        }
        b->rows[g][b->n[g]++] = *row;
        return 0;
}

int blame_add_event(struct blame *b, const char *subsystem, const char *devpath, uint64_t seqnum, usec_t wall,
                    const struct blame_waits *w, bool failed)
{
        struct blame_row row = { .total = wall, .count = 1, .slowest = wall, .slowest_seqnum = seqnum,
                                 .order_wait = w->order, .slot_wait = w->slot, .udev_wait = w->udev,
                                 .failed = failed };
        int r;

        row.name = subsystem;
        r = add_row(b, BLAME_SUBSYSTEM, &row);
        if (r < 0)
                return r;
        row.name = devpath;
        r = add_row(b, BLAME_DEVICE, &row);
        if (r < 0)
                return r;
        b->events++;
        b->failed_events += failed;
        b->order_wait += w->order;
        b->slot_wait += w->slot;
        b->udev_wait += w->udev;
        return 0;
}

int blame_add_run(struct blame *b, const char *program, uint64_t seqnum, usec_t duration,
                  const struct blame_waits *w, bool failed)
{
        struct blame_row row = { .name = program, .total = duration, .count = 1, .slowest = duration,
                                 .slowest_seqnum = seqnum, .order_wait = w->order, .slot_wait = w->slot,
                                 .udev_wait = w->udev, .failed = failed };
        int r = add_row(b, BLAME_PROGRAM, &row);

        if (r < 0)
                return r;
        b->runs++;
        b->failed_runs += failed;
        b->run_time += duration;
        return 0;
}

int blame_add_row(struct blame *b, enum blame_group g, const struct blame_row *row)
{
        struct blame_row copy = *row;
        char **v = realloc(b->names, (b->n_names + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        b->names = v;
        copy.name = b->names[b->n_names] = strdup(row->name ? row->name : "(unknown)");
        if (!copy.name)
                return -ENOMEM;
        b->n_names++;
        return add_row(b, g, &copy);
}

/* ---- from a recording ---------------------------------------------------- */

int blame_cmp_ref(const void *a, const void *b)
{
        const struct blame_ref *x = a, *y = b;

        if (x->seqnum != y->seqnum)
                return x->seqnum < y->seqnum ? -1 : 1;
        return x->i < y->i ? -1 : x->i > y->i;
}

bool blame_run_failed(const struct tl_run *run)
{
        enum tl_outcome o = timeline_run_outcome(run);

        return o != TL_OK && o != TL_RUNNING;
}

/*
 * The model has its wait for udevd
 * on its first run (udev_from, its dispatch, to udev_until); what is left
 * of its wait before that was for order, then for a slot.
 */
void blame_event_waits(const struct timeline *tl, const struct blame_ref *w, size_t n_w, size_t *k,
                       const struct tl_run *first, struct blame_waits *ret)
{
        usec_t waited = first->start - first->queued, ready = 0;
        bool order = false, slot = false, ready_known = false;

        for (; *k < n_w && w[*k].seqnum == first->seqnum; (*k)++) {
                const struct tl_wait *wt = &tl->waits[w[*k].i];

                if (wt->kind == TL_WAIT_SLOT) {
                        slot = true;
                } else if (wt->kind == TL_WAIT_ORDER) {
                        order = true;
                        if (wt->from_run >= 0) {
                                ready = MAX(ready, tl->runs[wt->from_run].end);
                                ready_known = true;
                        }
                }
        }
        ret->udev = first->udev_until - first->udev_from;
        waited -= ret->udev;
        /* Runnable once the last blocker finished (unknown: the whole wait was for order). */
        ret->order = !order ? 0 : ready_known ? MIN(ready > first->queued ? ready - first->queued : 0, waited) : waited;
        ret->slot = slot ? waited - ret->order : 0;
}

/* The runs @refs[lo..hi) of one event (in start order): its facts. */
static int add_event_runs(struct blame *b, const struct timeline *tl, const struct blame_ref *refs, size_t lo, size_t hi,
                          const struct blame_waits *w)
{
        const struct tl_run *first = &tl->runs[refs[lo].i];
        const struct tl_event *ev = first->event >= 0 ? &tl->events[first->event] : NULL;
        usec_t end = first->end;
        bool failed = false;
        int r;

        for (size_t k = lo; k < hi; k++) {
                const struct tl_run *run = &tl->runs[refs[k].i];
                bool run_failed = blame_run_failed(run);

                end = MAX(end, run->end);
                failed |= run_failed;
                r = blame_add_run(b, run->program ? run->program : "(not started)", run->seqnum,
                                  run->end > run->start ? run->end - run->start : 0, w, run_failed);
                if (r < 0)
                        return r;
        }
        if (!ev)
                b->unknown_events++;
        return blame_add_event(b, ev ? ev->subsystem : "(event not in recording)",
                               ev ? ev->devpath : "(event not in recording)", first->seqnum, end - first->start,
                               w, failed);
}

int blame_add_timeline(struct blame *b, const struct timeline *tl)
{
        _cleanup_free_ struct blame_ref *runs = calloc(MAX(tl->n_runs, (size_t)1), sizeof(*runs));
        _cleanup_free_ struct blame_ref *waits = calloc(MAX(tl->n_waits, (size_t)1), sizeof(*waits));
        size_t k = 0, lo, hi;
        int r;

        if (!runs || !waits)
                return -ENOMEM;
        /* Runs are in start order: by SEQNUM, each event's first run comes first. */
        for (size_t i = 0; i < tl->n_runs; i++)
                runs[i] = (struct blame_ref){ tl->runs[i].seqnum, i };
        for (size_t i = 0; i < tl->n_waits; i++)
                waits[i] = (struct blame_ref){ tl->waits[i].seqnum, i };
        qsort(runs, tl->n_runs, sizeof(*runs), blame_cmp_ref);
        qsort(waits, tl->n_waits, sizeof(*waits), blame_cmp_ref);
        for (lo = 0; lo < tl->n_runs; lo = hi) {
                const struct tl_run *first = &tl->runs[runs[lo].i];
                struct blame_waits w;

                for (hi = lo + 1; hi < tl->n_runs && runs[hi].seqnum == runs[lo].seqnum; hi++)
                        ;
                while (k < tl->n_waits && waits[k].seqnum < first->seqnum)
                        k++;
                blame_event_waits(tl, waits, tl->n_waits, &k, first, &w);
                r = add_event_runs(b, tl, runs, lo, hi, &w);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- summing ------------------------------------------------------------- */

static int cmp_name(const void *a, const void *b)
{
        const struct blame_row *x = a, *y = b;

        return strcmp(x->name, y->name);
}

static int cmp_total(const void *a, const void *b)
{
        const struct blame_row *x = a, *y = b;

        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Merge the rows of equal names of @v (sorted by name) in place.  Return: rows left. */
static size_t merge(struct blame_row *v, size_t n)
{
        size_t out = 0;

        for (size_t i = 0; i < n; i++) {
                struct blame_row *o = out > 0 ? &v[out - 1] : NULL;

                if (o && strcmp(o->name, v[i].name) == 0) {
                        o->total += v[i].total;
                        o->count += v[i].count;
                        o->order_wait += v[i].order_wait;
                        o->slot_wait += v[i].slot_wait;
                        o->udev_wait += v[i].udev_wait;
                        o->failed += v[i].failed;
                        if (v[i].slowest > o->slowest) {
                                o->slowest = v[i].slowest;
                                o->slowest_seqnum = v[i].slowest_seqnum;
                        }
                } else {
                        v[out++] = v[i];
                }
        }
        return out;
}

int blame_finish(struct blame *b)
{
        if (b->finished)
                return 0;
        for (int g = 0; g < _BLAME_GROUP_MAX; g++) {
                for (size_t i = 0; i < b->n[g]; i++)
                        if (!b->rows[g][i].name)
                                b->rows[g][i].name = "(unknown)";
                if (b->n[g] == 0)
                        continue;
                qsort(b->rows[g], b->n[g], sizeof(*b->rows[g]), cmp_name);
                b->n[g] = merge(b->rows[g], b->n[g]);
                qsort(b->rows[g], b->n[g], sizeof(*b->rows[g]), cmp_total);
        }
        b->finished = true;
        return 0;
}

/* ---- output -------------------------------------------------------------- */

const char *blame_format_time(usec_t t, char *buf, size_t size)
{
        if (t == 0)
                snprintf(buf, size, "0");
        else if (t < 10 * USEC_PER_MSEC)
                snprintf(buf, size, "%.1f ms", (double)t / (double)USEC_PER_MSEC);
        else if (t < USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 " ms", (t + USEC_PER_MSEC / 2) / USEC_PER_MSEC);
        else if (t < 60 * USEC_PER_SEC)
                snprintf(buf, size, "%.1f s", (double)t / (double)USEC_PER_SEC);
        else if (t < 3600 * USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 " min %" PRIu64 " s", t / (60 * USEC_PER_SEC),
                         t / USEC_PER_SEC % 60);
        else
                snprintf(buf, size, "%" PRIu64 " h %" PRIu64 " min", t / (3600 * USEC_PER_SEC),
                         t / (60 * USEC_PER_SEC) % 60);
        return buf;
}

static void put_table(const struct blame *b, enum blame_group g, size_t top, FILE *f)
{
        static const char *const heads[_BLAME_GROUP_MAX] = { "SUBSYSTEM", "PROGRAM", "DEVICE", "MODULE" };
        size_t n = top && top < b->n[g] ? top : b->n[g];
        char esc[1024], t[5][24], failed[24];

        if (g == BLAME_MODULE && b->n[g] == 0)
                return; /* no load-modules: the table of a recording, or of a daemon without it */
        fprintf(f, "\n%10s %7s %6s %10s %8s %10s %10s %10s  %s\n", "TOTAL",
                g == BLAME_PROGRAM ? "RUNS" : g == BLAME_MODULE ? "LOADS" : "EVENTS",
                "FAILED", "SLOWEST", "SEQNUM", "WAIT ORDER", "WAIT SLOT", "WAIT UDEVD", heads[g]);
        for (size_t i = 0; i < n; i++) {
                const struct blame_row *r = &b->rows[g][i];

                if (r->failed)
                        snprintf(failed, sizeof(failed), "%" PRIu64, r->failed);
                else
                        strcpy(failed, "-");
                fprintf(f, "%10s %7" PRIu64 " %6s %10s %8" PRIu64 " %10s %10s %10s  %s\n",
                        blame_format_time(r->total, t[0], sizeof(t[0])), r->count,
                        failed,
                        blame_format_time(r->slowest, t[1], sizeof(t[1])), r->slowest_seqnum,
                        blame_format_time(r->order_wait, t[2], sizeof(t[2])),
                        blame_format_time(r->slot_wait, t[3], sizeof(t[3])),
                        blame_format_time(r->udev_wait, t[4], sizeof(t[4])), escape_cstr(r->name, esc, sizeof(esc)));
        }
        if (n < b->n[g])
                fprintf(f, "%10s (%zu more)\n", "", b->n[g] - n);
}

int blame_render_text(const struct blame *b, size_t top, FILE *f)
{
        char t[4][24];

        fprintf(f, "%" PRIu64 " events, %" PRIu64 " agent runs (%" PRIu64 " failed): %s in agents, %s waiting for "
                   "order, %s for a free slot, %s for udevd\n",
                b->events, b->runs, b->failed_runs, blame_format_time(b->run_time, t[0], sizeof(t[0])),
                blame_format_time(b->order_wait, t[1], sizeof(t[1])), blame_format_time(b->slot_wait, t[2], sizeof(t[2])),
                blame_format_time(b->udev_wait, t[3], sizeof(t[3])));
        if (b->events == 0) {
                fputs("no agent ran\n", f);
                return ferror(f) ? -EIO : 0;
        }
        for (int g = 0; g < _BLAME_GROUP_MAX; g++)
                put_table(b, (enum blame_group)g, top, f);
        return ferror(f) ? -EIO : 0;
}

struct json_arg {
        const struct blame *b;
        size_t top;
};

static void put_json(struct json_writer *w, const void *arg)
{
        const struct json_arg *a = arg;
        const struct blame *b = a->b;

        json_begin_object(w);
        blame_json_u64(w, "events", b->events);
        blame_json_u64(w, "runs", b->runs);
        blame_json_u64(w, "failed_events", b->failed_events);
        blame_json_u64(w, "failed_runs", b->failed_runs);
        blame_json_u64(w, "run_usec", b->run_time);
        blame_json_u64(w, "order_wait_usec", b->order_wait);
        blame_json_u64(w, "slot_wait_usec", b->slot_wait);
        blame_json_u64(w, "udev_wait_usec", b->udev_wait);
        for (int g = 0; g < _BLAME_GROUP_MAX; g++) {
                size_t n = a->top && a->top < b->n[g] ? a->top : b->n[g];
                static const char *const keys[_BLAME_GROUP_MAX] = { "subsystems", "programs", "devices", "modules" };

                if (g == BLAME_MODULE && b->n[g] == 0)
                        continue;
                json_keyz(w, keys[g]);
                json_begin_array(w);
                for (size_t i = 0; i < n; i++) {
                        const struct blame_row *r = &b->rows[g][i];

                        json_begin_object(w);
                        json_keyz(w, "name");
                        json_str(w, r->name);
                        blame_json_u64(w, "total_usec", r->total);
                        blame_json_u64(w, "count", r->count);
                        blame_json_u64(w, "failed", r->failed);
                        blame_json_u64(w, "slowest_usec", r->slowest);
                        blame_json_u64(w, "slowest_seqnum", r->slowest_seqnum);
                        blame_json_u64(w, "order_wait_usec", r->order_wait);
                        blame_json_u64(w, "slot_wait_usec", r->slot_wait);
                        blame_json_u64(w, "udev_wait_usec", r->udev_wait);
                        json_end_object(w);
                }
                json_end_array(w);
        }
        json_end_object(w);
}

int blame_render_json(const struct blame *b, size_t top, FILE *f)
{
        struct json_arg a = { b, top };

        return json_print_line(f, put_json, &a);
}
