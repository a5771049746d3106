/* SPDX-License-Identifier: MIT */
/*
 * Terminal rendering of a timeline model: first a chart of the lanes, one
 * line per sub-row, each run drawn with its outcome's character after its
 * wait for its agent ('.', and 'u' for the part of it spent waiting for
 * udevd, after-udev); then one line per agent run in start order
 * (start and end in ms, SEQNUM, wall-clock start, action, status, lane,
 * and the same bar on its own), waits under the run that waited, gaps and
 * overflows as separator lines at their time.  A recording with no agent
 * runs (hotplugctl record) is listed event by event instead, one with
 * neither runs nor events says so (and lists its gaps and overflows).
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

static const char outcome_char[_TL_OUTCOME_MAX] = {
        [TL_OK] = '#', [TL_EXIT] = 'x', [TL_SIGNAL] = 's', [TL_TIMEOUT] = 'T', [TL_EXEC] = '!', [TL_RUNNING] = '>',
};
#define WAIT_CHAR '.'
#define UDEV_CHAR 'u'

static unsigned col_of(const struct timeline *tl, usec_t t, unsigned columns)
{
        return MIN((unsigned)((double)t * columns / (double)tl->span), columns - 1);
}

/*
 * Draw @run into @line (@columns cells): its wait, the part of it for udevd
 * (at least one cell when the wait has one), then at least one cell of its
 * outcome.
 */
static void draw_run(const struct timeline *tl, const struct tl_run *run, unsigned columns, char *line)
{
        unsigned q = col_of(tl, run->queued, columns), a = col_of(tl, run->start, columns);
        unsigned u = run->udev_wait ? col_of(tl, run->udev_from, columns) : a;
        unsigned b = (unsigned)((double)run->end * columns / (double)tl->span + 0.999);

        b = MIN(MAX(b, a + 1), columns);
        if (run->udev_wait && u >= a && a > q)
                u = a - 1;
        for (unsigned i = q; i < a; i++)
                line[i] = i < u ? WAIT_CHAR : UDEV_CHAR;
        memset(line + a, outcome_char[timeline_run_outcome(run)], b - a);
}

static void put_bar(const struct timeline *tl, const struct tl_run *run, unsigned columns, char *line, FILE *f)
{
        memset(line, ' ', columns);
        draw_run(tl, run, columns, line);
        fprintf(f, "|%.*s|", (int)columns, line);
}

static void put_key(FILE *f)
{
        fprintf(f, "key: %c waiting for its agent, %c of it for udevd, + event without an agent run;\n     runs:",
                WAIT_CHAR, UDEV_CHAR);
        for (enum tl_outcome o = 0; o < _TL_OUTCOME_MAX; o++)
                fprintf(f, "%s%c %s", o == TL_TIMEOUT ? ",\n     " : o ? ", " : " ", outcome_char[o],
                        timeline_outcome_text(o));
        fputc('\n', f);
}

static int cmp_lane_row(const void *a, const void *b, void *userdata)
{
        const struct timeline *tl = userdata;
        size_t i = *(const size_t *)a, j = *(const size_t *)b;
        const struct tl_run *x = &tl->runs[i], *y = &tl->runs[j];

        if (x->lane != y->lane)
                return x->lane < y->lane ? -1 : 1;
        if (x->row != y->row)
                return x->row < y->row ? -1 : 1;
        return i < j ? -1 : i > j;
}

/* Events without a run, as '+' on the first row of their lane (@mark[lane] lists them, chained by @next). */
static void draw_events(const struct timeline *tl, long e, const long *next, unsigned columns, char *line)
{
        for (; e >= 0; e = next[e]) {
                unsigned c = col_of(tl, tl->events[e].t, columns);
                if (line[c] == ' ')
                        line[c] = '+';
        }
}

/* Chain the events that no run is for, by lane: @head[lane], @next[event]. */
static void lone_events(const struct timeline *tl, long *head, long *next)
{
        for (size_t i = 0; i < tl->n_lanes; i++)
                head[i] = -1;
        for (size_t i = 0; i < tl->n_events; i++)
                next[i] = 0;
        for (size_t i = 0; i < tl->n_runs; i++)
                if (tl->runs[i].event >= 0)
                        next[tl->runs[i].event] = 1;
        for (size_t i = tl->n_events; i > 0; i--) {
                if (next[i - 1]) {
                        next[i - 1] = -1;
                        continue;
                }
                next[i - 1] = head[tl->events[i - 1].lane];
                head[tl->events[i - 1].lane] = (long)(i - 1);
        }
}

/* The lanes, one line per sub-row; the lane's name on its first. */
static int put_chart(const struct timeline *tl, unsigned columns, FILE *f)
{
        _cleanup_free_ size_t *order = malloc(MAX(tl->n_runs, (size_t)1) * sizeof(*order));
        _cleanup_free_ long *head = malloc(MAX(tl->n_lanes, (size_t)1) * sizeof(*head));
        _cleanup_free_ long *next = malloc(MAX(tl->n_events, (size_t)1) * sizeof(*next));
        _cleanup_free_ char *line = malloc(columns);
        char name[HP_UEVENT_MAX_SIZE];
        size_t k = 0;

        if (!order || !head || !next || !line)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++)
                order[i] = i;
        qsort_r(order, tl->n_runs, sizeof(*order), cmp_lane_row, (void *)tl);
        lone_events(tl, head, next);
        fprintf(f, "%-*s  |0 ms%*.3f ms|\n", LANE_W, "LANE", (int)columns - 7, (double)tl->span / 1000.0);
        for (size_t lane = 0; lane < tl->n_lanes; lane++)
                for (unsigned row = 0; row < tl->lanes[lane].rows; row++) {
                        memset(line, ' ', columns);
                        for (; k < tl->n_runs && tl->runs[order[k]].lane == lane && tl->runs[order[k]].row == row; k++)
                                draw_run(tl, &tl->runs[order[k]], columns, line);
                        if (row == 0)
                                draw_events(tl, head[lane], next, columns, line);
                        fprintf(f, "%-*s  |%.*s|\n", LANE_W,
                                row == 0 ? lane_tail(tl->lanes[lane].name, name, sizeof(name)) : "", (int)columns, line);
                }
        fputc('\n', f);
        return 0;
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

        for (; w >= 0; w = next[w]) {
                const struct tl_wait *wt = &tl->waits[w];
                const struct tl_run *run = &tl->runs[wt->to_run];

                escape_cstr(wt->reason, esc, sizeof(esc));
                if (wt->kind == TL_WAIT_SLOT)
                        fprintf(f, "%34s^ SEQNUM=%" PRIu64 " waited for %s\n", "", wt->seqnum, esc);
                else if (wt->kind == TL_WAIT_UDEV)
                        fprintf(f, "%34s^ SEQNUM=%" PRIu64 " waited %.3f ms for %s\n", "", wt->seqnum,
                                (double)(run->udev_until - run->udev_from) / 1000.0, esc);
                else
                        fprintf(f, "%34s^ SEQNUM=%" PRIu64 " waited for SEQNUM=%" PRIu64 " (%s)\n", "", wt->seqnum,
                                wt->blocker, esc);
        }
}

static void put_events_only(const struct timeline *tl, FILE *f)
{
        char esc[HP_UEVENT_MAX_SIZE], act[64], sub[128], wall[64];
        size_t m = 0;

        if (tl->n_events == 0)
                fputs("no events or agent runs in this recording\n", f);
        else
                fprintf(f, "no agent runs in this recording; its events:\n%10s  %10s  %-12s  %-8s %-12s %s\n",
                        "TIME ms", "SEQNUM", "RECEIVED", "ACTION", "SUBSYSTEM", "DEVPATH");
        /* Events are sorted by SEQNUM; marks by time. */
        for (size_t i = 0; i < tl->n_events; i++) {
                const struct tl_event *e = &tl->events[i];

                for (; m < tl->n_marks && tl->marks[m].t <= e->t; m++)
                        put_mark(&tl->marks[m], f);
                fprintf(f, "%10.3f  %10" PRIu64 "  %-12s  %-8s %-12s %s\n", (double)e->t / 1000.0, e->seqnum,
                        timeline_wall(tl, e->t, TL_WALL_MS, wall, sizeof(wall)), escape_cstr(e->action, act, sizeof(act)), escape_cstr(e->subsystem, sub, sizeof(sub)),
                        escape_cstr(e->devpath, esc, sizeof(esc)));
        }
        for (; m < tl->n_marks; m++)
                put_mark(&tl->marks[m], f);
}

static void put_run(const struct timeline *tl, const struct tl_run *run, unsigned columns, char *line, FILE *f)
{
        char lane[HP_UEVENT_MAX_SIZE], act[64], status[160], wall[64];

        timeline_run_status(run, status, sizeof(status));
        fprintf(f, "%10.3f  %10.3f  %10" PRIu64 "  %-12s  %-8s %-15s %-*s  ", (double)run->start / 1000.0,
                (double)run->end / 1000.0, run->seqnum, timeline_wall(tl, run->start, TL_WALL_MS, wall, sizeof(wall)),
                escape_cstr(run->event >= 0 ? tl->events[run->event].action : "?", act, sizeof(act)), status, LANE_W,
                lane_tail(tl->lanes[run->lane].name, lane, sizeof(lane)));
        put_bar(tl, run, columns, line, f);
        if (tl->many_programs && *timeline_run_name(run)) /* hotplug.d: which script the bar is */
                fprintf(f, " %s", escape_cstr(timeline_run_name(run), lane, sizeof(lane)));
        fputc('\n', f);
}

/* The first line after the counts: when, in local time. */
static void put_when(const struct timeline *tl, FILE *f)
{
        char from[64], to[64];

        if (tl->n_clock > 0 && timeline_wall(tl, 0, TL_WALL_DATE, from, sizeof(from)) &&
            timeline_wall(tl, tl->span, TL_WALL_DATE, to, sizeof(to)))
                fprintf(f, "from %s to %s (local time, as the journal shows it)\n", from, to);
        else
                fputs("no wall-clock time in this recording (it holds no datagram)\n", f);
}

int timeline_render_text(const struct timeline *tl, unsigned columns, FILE *f)
{
        _cleanup_free_ long *head = NULL, *next = NULL;
        _cleanup_free_ char *line = NULL;
        size_t m = 0;
        int r;

        columns = MAX(columns, 10u);
        fprintf(f, "%zu agent run(s), %zu event(s), %zu lane(s) by %s, span %.3f ms\n", tl->n_runs, tl->n_events,
                tl->n_lanes, tl->by == TIMELINE_LANES_SUBSYSTEM ? "subsystem" : "device", (double)tl->span / 1000.0);
        put_when(tl, f);
        if (tl->n_runs == 0) {
                put_events_only(tl, f);
                return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
        }
        put_key(f);
        r = put_chart(tl, columns, f);
        if (r < 0)
                return r;
        head = malloc(tl->n_runs * sizeof(*head));
        next = malloc(MAX(tl->n_waits, (size_t)1) * sizeof(*next));
        line = malloc(columns);
        if (!head || !next || !line)
                return -ENOMEM;
        for (size_t i = 0; i < tl->n_runs; i++)
                head[i] = -1;
        for (size_t i = tl->n_waits; i > 0; i--) {
                long to = tl->waits[i - 1].to_run;
                next[i - 1] = to >= 0 ? head[to] : -1;
                if (to >= 0)
                        head[to] = (long)(i - 1);
        }

        fprintf(f, "%10s  %10s  %10s  %-12s  %-8s %-15s %-*s  |0 ms%*.3f ms|\n", "START ms", "END ms", "SEQNUM",
                "STARTED", "ACTION", "STATUS", LANE_W, "LANE", (int)columns - 7, (double)tl->span / 1000.0);
        for (size_t i = 0; i < tl->n_runs; i++) {
                for (; m < tl->n_marks && tl->marks[m].t <= tl->runs[i].start; m++)
                        put_mark(&tl->marks[m], f);
                put_run(tl, &tl->runs[i], columns, line, f);
                put_waits_of(tl, head[i], next, f);
        }
        for (; m < tl->n_marks; m++)
                put_mark(&tl->marks[m], f);
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}
