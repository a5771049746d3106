/* SPDX-License-Identifier: MIT */
/*
 * The chain of waits that ended last (blame.h): built from a recording's
 * timeline, or link by link from the daemon's reply; and its two
 * renderings.  A chain is short (HP_BLAME_CHAIN_LINKS at most), so each
 * link is found by a scan of the runs and waits.
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

void blame_chain_clear(struct blame_chain *c)
{
        for (size_t i = 0; i < c->n_links; i++) {
                struct blame_link *l = &c->links[i];

                free(l->action);
                free(l->subsystem);
                free(l->devpath);
                free(l->failed);
                free(l->failed_status);
        }
        *c = (struct blame_chain){ 0 };
}

/* A copy of @s in *@ret (NULL stays NULL).  Return: 0 or -ENOMEM. */
static int copy_or_null(const char *s, char **ret)
{
        *ret = s ? strdup(s) : NULL;
        return s && !*ret ? -ENOMEM : 0;
}

int blame_chain_add(struct blame_chain *c, const struct blame_link *l)
{
        struct blame_link *n;

        if (c->n_links >= ELEMENTSOF(c->links))
                return -ENOSPC;
        n = &c->links[c->n_links];
        *n = *l;
        n->action = n->subsystem = n->devpath = n->failed = n->failed_status = NULL;
        c->n_links++; /* cleared by blame_chain_clear() from now on, whatever is copied */
        if (copy_or_null(l->action, &n->action) < 0 || copy_or_null(l->subsystem, &n->subsystem) < 0 ||
            copy_or_null(l->devpath, &n->devpath) < 0 || copy_or_null(l->failed, &n->failed) < 0 ||
            copy_or_null(l->failed_status, &n->failed_status) < 0)
                return -ENOMEM;
        return 0;
}

/* ---- from a recording ---------------------------------------------------- */

struct span {
        usec_t from, to;
};

static int cmp_span(const void *a, const void *b)
{
        const struct span *x = a, *y = b;

        if (x->from != y->from)
                return x->from < y->from ? -1 : 1;
        return x->to < y->to ? -1 : x->to > y->to;
}

/*
 * The last busy period of @tl into *@ret: the union of every event's time
 * held (its arrival to its last run's end; a run's own start to end when
 * its event is not in the recording), the stretch holding the run that
 * ended last.  Return: 0 or -ENOMEM.
 */
static int last_period(const struct timeline *tl, usec_t last_end, struct span *ret)
{
        size_t n = tl->n_runs + tl->n_events;
        _cleanup_free_ struct span *v = calloc(MAX(n, (size_t)1), sizeof(*v));
        struct span cur;
        bool found = false;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++)
                v[i] = (struct span){ MIN(tl->runs[i].queued, tl->runs[i].start), tl->runs[i].end };
        for (size_t i = 0; i < tl->n_events; i++)
                v[tl->n_runs + i] = (struct span){ tl->events[i].t, tl->events[i].t };
        qsort(v, n, sizeof(*v), cmp_span);
        cur = v[0];
        for (size_t i = 1; i <= n; i++) {
                if (i < n && v[i].from <= cur.to) {
                        cur.to = MAX(cur.to, v[i].to);
                        continue;
                }
                if (cur.from <= last_end && last_end <= cur.to) {
                        *ret = cur;
                        found = true;
                }
                if (i < n)
                        cur = v[i];
        }
        if (!found)
                *ret = (struct span){ 0, last_end };
        return 0;
}

/* The link of the event @seqnum (it has runs) into *@l, borrowing from @tl; @from: the period's start. */
static int link_of(const struct timeline *tl, uint64_t seqnum, usec_t from, struct blame_link *l,
                   char *status, size_t status_size)
{
        _cleanup_free_ struct blame_ref *w = NULL;
        const struct tl_run *first = NULL, *failed = NULL;
        size_t n_w = 0, k = 0;
        usec_t end = 0;

        *l = (struct blame_link){ .seqnum = seqnum };
        for (size_t i = 0; i < tl->n_runs; i++) { /* in start order */
                const struct tl_run *run = &tl->runs[i];

                if (run->seqnum != seqnum)
                        continue;
                if (!first)
                        first = run;
                end = MAX(end, run->end);
                l->runs++;
                if (blame_run_failed(run)) {
                        l->failed_runs++;
                        if (!failed)
                                failed = run;
                }
        }
        if (!first)
                return -ENOENT;
        for (size_t i = 0; i < tl->n_waits; i++)
                n_w += tl->waits[i].seqnum == seqnum;
        w = calloc(MAX(n_w, (size_t)1), sizeof(*w));
        if (!w)
                return -ENOMEM;
        n_w = 0;
        for (size_t i = 0; i < tl->n_waits; i++) {
                const struct tl_wait *wt = &tl->waits[i];

                if (wt->seqnum != seqnum)
                        continue;
                w[n_w++] = (struct blame_ref){ seqnum, i };
                /* The last of those it waited for; an earlier event, so that the chain ends. */
                if (wt->kind == TL_WAIT_ORDER && wt->blocker < seqnum)
                        l->blocker = MAX(l->blocker, wt->blocker);
        }
        blame_event_waits(tl, w, n_w, &k, first, &l->waits);
        l->at = first->start > from ? first->start - from : 0;
        l->ran = end - first->start;
        if (first->event >= 0) {
                const struct tl_event *ev = &tl->events[first->event];

                l->action = ev->action;
                l->subsystem = ev->subsystem;
                l->devpath = ev->devpath;
        }
        if (failed) {
                l->failed = failed->program ? failed->program : (char *)"(not started)";
                timeline_run_status(failed, status, status_size);
                l->failed_status = status;
        }
        return 0;
}

int blame_chain_of_timeline(struct blame_chain *c, const struct timeline *tl)
{
        const struct tl_run *last = NULL;
        struct span period;
        uint64_t seqnum;
        int r;

        blame_chain_clear(c);
        for (size_t i = 0; i < tl->n_runs; i++)
                if (!last || tl->runs[i].end > last->end ||
                    (tl->runs[i].end == last->end && tl->runs[i].seqnum > last->seqnum))
                        last = &tl->runs[i];
        if (!last)
                return 0;
        r = last_period(tl, last->end, &period);
        if (r < 0)
                return r;
        c->known = true;
        c->span = period.to - period.from;
        c->settled = true;
        for (size_t i = 0; i < tl->n_runs; i++)
                if (!tl->runs[i].finished && tl->runs[i].start >= period.from)
                        c->settled = false;
        for (size_t i = 0; i < tl->n_events; i++)
                c->events += tl->events[i].t >= period.from && tl->events[i].t <= period.to;
        for (seqnum = last->seqnum; seqnum != 0;) {
                struct blame_link l;
                char status[64];

                if (c->n_links == ELEMENTSOF(c->links)) {
                        c->cut_seqnum = seqnum;
                        break;
                }
                r = link_of(tl, seqnum, period.from, &l, status, sizeof(status));
                if (r == -ENOENT) {
                        c->cut_seqnum = seqnum; /* it waited for an event with no run in the recording */
                        break;
                }
                if (r >= 0)
                        r = blame_chain_add(c, &l);
                if (r < 0)
                        return r;
                seqnum = l.blocker;
        }
        return 0;
}

/* ---- output -------------------------------------------------------------- */

/* "waited 1.2 s for order, 30 ms for a free slot" into @buf, or "" when it did not wait. */
static const char *waits_text(const struct blame_waits *w, char *buf, size_t size)
{
        const usec_t v[] = { w->order, w->slot, w->udev };
        const char *const what[] = { "for order", "for a free slot", "for udevd" };
        size_t len = 0;
        char t[24];

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                if (v[i] == 0)
                        continue;
                len += (size_t)snprintf(buf + len, size - MIN(len, size), "%s%s %s", len ? ", " : "  waited ",
                                        blame_format_time(v[i], t, sizeof(t)), what[i]);
                if (len >= size)
                        break;
        }
        return buf;
}

int blame_chain_render_text(const struct blame_chain *c, FILE *f)
{
        char t[2][24], waits[128], esc[4][1024];

        if (!c->known) {
                fputs("no agent ran\n", f);
                return ferror(f) ? -EIO : 0;
        }
        if (c->settled)
                fprintf(f, "settled in %s: %" PRIu64 " events, from the first one's arrival to the last agent's end\n",
                        blame_format_time(c->span, t[0], sizeof(t[0])), c->events);
        else
                fprintf(f, "not settled: %" PRIu64 " events so far, agents still running %s after the first one's "
                           "arrival\n", c->events, blame_format_time(c->span, t[0], sizeof(t[0])));
        fputs("The chain of waits that ended last (SEQNUM ACTION SUBSYSTEM DEVPATH, @ its first agent's start "
              "after that arrival, + its agents' time):\n", f);
        for (size_t i = 0; i < c->n_links; i++) {
                const struct blame_link *l = &c->links[i];

                fprintf(f, "%*s%s%" PRIu64 " %s %s %s @%s +%s%s", (int)(i > 0 ? 2 * (i - 1) : 0), "",
                        i > 0 ? "└─" : "", l->seqnum, l->action ? escape_cstr(l->action, esc[0], sizeof(esc[0])) : "?",
                        l->subsystem ? escape_cstr(l->subsystem, esc[1], sizeof(esc[1])) : "?",
                        l->devpath ? escape_cstr(l->devpath, esc[2], sizeof(esc[2])) : "(event not known)",
                        blame_format_time(l->at, t[0], sizeof(t[0])), blame_format_time(l->ran, t[1], sizeof(t[1])),
                        waits_text(&l->waits, waits, sizeof(waits)));
                if (l->failed)
                        fprintf(f, "  FAILED %s (%s)%s", escape_cstr(l->failed, esc[3], sizeof(esc[3])),
                                l->failed_status ? escape_cstr(l->failed_status, esc[0], sizeof(esc[0])) : "?",
                                l->failed_runs > 1 ? ", and more runs" : "");
                fputc('\n', f);
        }
        if (c->cut_seqnum)
                fprintf(f, "%*s└─%" PRIu64 ": not known (earlier than what is kept), the chain is cut here\n",
                        (int)(c->n_links > 0 ? 2 * (c->n_links - 1) : 0), "", c->cut_seqnum);
        return ferror(f) ? -EIO : 0;
}

static void member_str(struct json_writer *w, const char *key, const char *v)
{
        json_keyz(w, key);
        if (v)
                json_str(w, v);
        else
                json_null(w);
}

static void put_json(struct json_writer *w, const void *arg)
{
        const struct blame_chain *c = arg;

        json_begin_object(w);
        blame_json_u64(w, "events", c->events);
        blame_json_u64(w, "span_usec", c->span);
        json_keyz(w, "settled");
        json_bool(w, c->known && c->settled);
        blame_json_u64(w, "cut_seqnum", c->cut_seqnum);
        json_keyz(w, "chain");
        json_begin_array(w);
        for (size_t i = 0; i < c->n_links; i++) {
                const struct blame_link *l = &c->links[i];

                json_begin_object(w);
                blame_json_u64(w, "seqnum", l->seqnum);
                blame_json_u64(w, "blocker", l->blocker);
                member_str(w, "action", l->action);
                member_str(w, "subsystem", l->subsystem);
                member_str(w, "devpath", l->devpath);
                blame_json_u64(w, "at_usec", l->at);
                blame_json_u64(w, "run_usec", l->ran);
                blame_json_u64(w, "order_wait_usec", l->waits.order);
                blame_json_u64(w, "slot_wait_usec", l->waits.slot);
                blame_json_u64(w, "udev_wait_usec", l->waits.udev);
                blame_json_u64(w, "runs", l->runs);
                blame_json_u64(w, "failed_runs", l->failed_runs);
                member_str(w, "failed_program", l->failed);
                member_str(w, "failed_status", l->failed_status);
                json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
}

int blame_chain_render_json(const struct blame_chain *c, FILE *f)
{
        return json_print_line(f, put_json, c);
}
