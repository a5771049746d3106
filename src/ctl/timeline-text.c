/* SPDX-License-Identifier: MIT */
/*
 * Terminal rendering of a timeline model: one line per agent run in start
 * order (start and end in ms, SEQNUM, action, status, lane, and a bar
 * proportional to the recording's span), waits under the run that waited,
 * gaps and overflows as separator lines at their time.  A recording with
 * no agent runs (hotplugctl record) is listed event by event instead, one
 * with neither runs nor events says so (and lists its gaps and overflows).
 * Every string from the model is escaped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/macro.h"
#include "ctl/timeline.h"

#define LANE_W 40

/* Lane names longer than LANE_W keep their tail (the device's own name). */
static const char *lane_tail(const char *name, char *buf, size_t size)
{
        size_t len;

        escape_cstr(name, buf, size);
        len = strlen(buf);
        if (len <= LANE_W)
                return buf;
        memcpy(buf + len - (LANE_W - 3), "...", 3);
        return buf + len - (LANE_W - 3);
}

static void put_bar(const struct timeline *tl, const struct tl_run *run, unsigned columns, FILE *f)
{
        unsigned a = (unsigned)((double)run->start * columns / (double)tl->span);
        unsigned b = (unsigned)((double)run->end * columns / (double)tl->span + 0.999);

        a = MIN(a, columns - 1);
        b = MIN(MAX(b, a + 1), columns);
        fputc('|', f);
        for (unsigned i = 0; i < columns; i++)
                fputc(i < a || i >= b ? ' ' : run->finished ? '#' : '=', f);
        fputc('|', f);
}

static void put_mark(const struct tl_mark *m, FILE *f)
{
        if (m->overflow)
                fprintf(f, "%10.3f  ---- receive buffer overflow: the kernel dropped events ----\n",
                        (double)m->t / 1000.0);
        else
                fprintf(f, "%10.3f  ---- SEQNUM gap %" PRIu64 "-%" PRIu64 " (%" PRIu64 " missing, %s) ----\n",
                        (double)m->t / 1000.0, m->first, m->last, m->last - m->first + 1,
                        record_gap_class_to_string(m->class));
}

/* Waits, listed under the run that waited: @next chains the waits of one run, starting at head[run]. */
static void put_waits_of(const struct timeline *tl, long w, const long *next, FILE *f)
{
        char esc[512];

        for (; w >= 0; w = next[w])
                fprintf(f, "%34s^ SEQNUM=%" PRIu64 " waited for SEQNUM=%" PRIu64 " (%s)\n", "",
                        tl->waits[w].seqnum, tl->waits[w].blocker, escape_cstr(tl->waits[w].reason, esc, sizeof(esc)));
}

static void put_events_only(const struct timeline *tl, FILE *f)
{
        char esc[HP_UEVENT_MAX_SIZE], act[64], sub[128];
        size_t m = 0;

        if (tl->n_events == 0)
                fputs("no events or agent runs in this recording\n", f);
        else
                fprintf(f, "no agent runs in this recording; its events:\n%10s  %10s  %-8s %-12s %s\n", "TIME ms",
                        "SEQNUM", "ACTION", "SUBSYSTEM", "DEVPATH");
        /* Events are sorted by SEQNUM; marks by time. */
        for (size_t i = 0; i < tl->n_events; i++) {
                const struct tl_event *e = &tl->events[i];

                for (; m < tl->n_marks && tl->marks[m].t <= e->t; m++)
                        put_mark(&tl->marks[m], f);
                fprintf(f, "%10.3f  %10" PRIu64 "  %-8s %-12s %s\n", (double)e->t / 1000.0, e->seqnum,
                        escape_cstr(e->action, act, sizeof(act)), escape_cstr(e->subsystem, sub, sizeof(sub)),
                        escape_cstr(e->devpath, esc, sizeof(esc)));
        }
        for (; m < tl->n_marks; m++)
                put_mark(&tl->marks[m], f);
}

static void put_run(const struct timeline *tl, const struct tl_run *run, unsigned columns, FILE *f)
{
        char lane[HP_UEVENT_MAX_SIZE], act[64], status[160];

        timeline_run_status(run, status, sizeof(status));
        fprintf(f, "%10.3f  %10.3f  %10" PRIu64 "  %-8s %-14s %-*s  ", (double)run->start / 1000.0,
                (double)run->end / 1000.0, run->seqnum,
                escape_cstr(run->event >= 0 ? tl->events[run->event].action : "?", act, sizeof(act)), status, LANE_W,
                lane_tail(tl->lanes[run->lane].name, lane, sizeof(lane)));
        put_bar(tl, run, columns, f);
        fputc('\n', f);
}

int timeline_render_text(const struct timeline *tl, unsigned columns, FILE *f)
{
        _cleanup_free_ long *head = NULL, *next = NULL;
        size_t m = 0;

        columns = MAX(columns, 10u);
        fprintf(f, "%zu agent run(s), %zu event(s), %zu lane(s) by %s, span %.3f ms\n", tl->n_runs, tl->n_events,
                tl->n_lanes, tl->by == TIMELINE_LANES_SUBSYSTEM ? "subsystem" : "device", (double)tl->span / 1000.0);
        if (tl->n_runs == 0) {
                put_events_only(tl, f);
                return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
        }
        head = malloc(tl->n_runs * sizeof(*head));
        next = malloc(MAX(tl->n_waits, (size_t)1) * sizeof(*next));
        if (!head || !next)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++)
                head[i] = -1;
        for (size_t i = tl->n_waits; i > 0; i--) {
                long to = tl->waits[i - 1].to_run;
                next[i - 1] = to >= 0 ? head[to] : -1;
                if (to >= 0)
                        head[to] = (long)(i - 1);
        }

        fprintf(f, "%10s  %10s  %10s  %-8s %-14s %-*s  0 ms%*s%.3f ms\n", "START ms", "END ms", "SEQNUM", "ACTION",
                "STATUS", LANE_W, "LANE", (int)columns - 8, "", (double)tl->span / 1000.0);
        for (size_t i = 0; i < tl->n_runs; i++) {
                for (; m < tl->n_marks && tl->marks[m].t <= tl->runs[i].start; m++)
                        put_mark(&tl->marks[m], f);
                put_run(tl, &tl->runs[i], columns, f);
                put_waits_of(tl, head[i], next, f);
        }
        for (; m < tl->n_marks; m++)
                put_mark(&tl->marks[m], f);
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}
