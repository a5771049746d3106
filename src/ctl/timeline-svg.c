/* SPDX-License-Identifier: MIT */
/*
 * SVG rendering of a timeline model: lanes as bands of one row per
 * sub-row, each agent run one <rect class="bar OUTCOME"> with a <title>
 * tooltip, its wait for its agent as a hatched <rect class="queued"> before
 * it (the part of it spent waiting for udevd's broadcast, after-udev, a
 * <rect class="udev"> of its own, right before the bar), waits for other
 * events as arrows from the blocker's bar end to the waiter's bar start, events as ticks, gaps and overflows as vertical
 * marks, an axis in milliseconds on top and in wall-clock time below, and a
 * legend.
 *
 * Outcomes differ in colour (a colour-blind safe palette) and also in
 * pattern or outline, and the tooltips name them; no outcome shares a
 * colour with the gap, overflow, event or arrow marks.
 *
 * Invariants: every string from the model goes through put_text() (escaped
 * to printable ASCII, then to XML); the document is well-formed for any
 * input, an empty model included (one empty row); at most
 * HP_TIMELINE_MAX_LANES rows are drawn (the rest share the last row) and the
 * plot is at most PLOT_MAX_W pixels wide.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/macro.h"
#include "ctl/timeline.h"

#define LEFT 290         /* lane label column */
#define RIGHT 40
#define PLOT_TOP 140
#define LANE_H 20        /* row height; COMPACT_LANE_H above COMPACT_ROWS rows */
#define COMPACT_LANE_H 13
#define COMPACT_ROWS 120
#define PLOT_MIN_W 1000
#define PLOT_MAX_W 4000
#define CHAR_W 6.1       /* average glyph width at 10 px, for fitting labels */
#define LABEL_CHARS 44   /* lane labels longer than this keep their tail */
#define EXEC_MIN_W 4.0   /* an exec failure has no duration: a small block (within the packing pad) */

struct svg {
        const struct timeline *tl;
        FILE *f;
        double w;            /* plot width */
        unsigned rows;       /* rows drawn */
        double lane_h, bar_h;
        double char_w;       /* label glyph width */
        double bottom;       /* y below the last row */
};

/* Escaped, XML-safe text of untrusted bytes. */
static void put_text(FILE *f, const char *s)
{
        char esc[1024];

        escape_cstr(s, esc, sizeof(esc));
        for (const char *p = esc; *p; p++)
                switch (*p) {
                case '&': fputs("&amp;", f); break;
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                case '"': fputs("&quot;", f); break;
                case '\'': fputs("&apos;", f); break;
                default: fputc(*p, f);
                }
}

static double x_of(const struct svg *g, usec_t t)
{
        return LEFT + (double)t * g->w / (double)g->tl->span;
}

/* The row drawn for sub-row @sub of @lane (rows past the cap share the last one). */
static unsigned row_of(const struct svg *g, unsigned lane, unsigned sub)
{
        size_t r = g->tl->n_lanes ? g->tl->lanes[lane].first_row + sub : 0;

        return (unsigned)MIN(r, (size_t)g->rows - 1);
}

static double y_of_row(const struct svg *g, unsigned row)
{
        return PLOT_TOP + row * g->lane_h;
}

static double y_of(const struct svg *g, const struct tl_run *run)
{
        return y_of_row(g, row_of(g, run->lane, run->row));
}

/* Light fills carry dark labels. */
static bool light_fill(enum tl_outcome o)
{
        return o != TL_OK && o != TL_EXIT;
}

static void put_style(FILE *f, bool compact)
{
        fputs("<style>\n"
              ".bar{stroke-width:1}\n"
              ".ok{fill:#0072b2;stroke:#004a75}\n"
              ".exit{fill:#d55e00;stroke:#7a3600;stroke-width:1.5}\n"
              ".signal{fill:url(#hatch-signal);stroke:#6e3557}\n"
              ".timeout{fill:url(#hatch-timeout);stroke:#3a2800;stroke-width:2}\n"
              ".exec{fill:#f0e442;stroke:#5c5400;stroke-width:1.5}\n"
              ".running{fill:#dcd7d2;stroke:#6b635d;stroke-dasharray:3 2}\n"
              ".queued{fill:url(#hatch-wait);stroke:#8c96a1;stroke-width:.6}\n"
              ".udev{fill:url(#hatch-udev);stroke:#3d8fc4;stroke-width:.6}\n"
              ".lbl{font-size:10px;fill:#fff;pointer-events:none}\n"
              ".lbl.dark{fill:#111;stroke:#fff;stroke-width:2.5px;paint-order:stroke;stroke-linejoin:round}\n"
              ".lbl.out{fill:#333}\n"
              ".lane-label{fill:#333}\n"
              ".stripe{fill:#f2f3f5}\n"
              ".lane-bg{fill:#fff}\n"
              ".lane-sep{stroke:#d5d9de;stroke-width:.6}\n"
              ".tick{stroke:#dde0e4;stroke-width:1}\n"
              ".axis{fill:#555;font-size:10px}\n"
              ".axis-title{fill:#555;font-size:10px;font-style:italic}\n"
              ".event{stroke:#009e73;stroke-width:1.5}\n"
              ".wait{fill:none;stroke:#4b2e83;stroke-width:1.2;opacity:.8}\n"
              ".gap{stroke:#555;stroke-width:1.5;stroke-dasharray:5 3}\n"
              ".overflow{stroke:#000;stroke-width:2.5}\n"
              ".mark-label{font-size:10px}\n"
              ".title{font-size:15px;font-weight:bold;fill:#222}\n"
              ".summary{fill:#444}\n",
              f);
        if (compact)
                fputs(".lane-label{font-size:9px}\n.lbl{font-size:8px}\n", f);
        fputs("</style>\n", f);
}

/* Hatching: @id, background @bg, stripes @fg, at @angle degrees. */
static void put_hatch(FILE *f, const char *id, const char *bg, const char *fg, int angle)
{
        fprintf(f, "<pattern id=\"%s\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                   "patternTransform=\"rotate(%d)\"><rect width=\"6\" height=\"6\" fill=\"%s\"/>"
                   "<line x1=\"1\" y1=\"0\" x2=\"1\" y2=\"6\" stroke=\"%s\" stroke-width=\"2\"/></pattern>\n",
                id, angle, bg, fg);
}

static void put_head(const struct svg *g, const char *title, double width, double height)
{
        FILE *f = g->f;

        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
                   "font-size=\"11\">\n",
                width, height, width, height);
        put_style(f, g->lane_h < LANE_H);
        fputs("<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" "
              "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#4b2e83\"/></marker>\n",
              f);
        put_hatch(f, "hatch-wait", "#eef0f3", "#aab3bd", 45);
        put_hatch(f, "hatch-udev", "#e1f0fa", "#56b4e9", -45);
        put_hatch(f, "hatch-signal", "#cc79a7", "#8e4a73", 45);
        put_hatch(f, "hatch-timeout", "#e69f00", "#8a5f00", -45);
        fputs("</defs>\n", f);
        fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", width, height);
        fputs("<text class=\"title\" x=\"12\" y=\"24\">", f);
        put_text(f, title);
        fputs("</text>\n", f);
}

static void put_summary(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        char from[64], to[64];
        size_t gaps = 0;

        for (size_t i = 0; i < tl->n_marks; i++)
                gaps += !tl->marks[i].overflow;
        fprintf(g->f,
                "<text class=\"summary\" x=\"12\" y=\"44\">%zu agent run(s), %zu event(s), %zu lane(s) by %s, "
                "span %.3f ms, %zu SEQNUM gap(s), %zu overflow(s)",
                tl->n_runs, tl->n_events, tl->n_lanes, tl->by == TIMELINE_LANES_SUBSYSTEM ? "subsystem" : "device",
                (double)tl->span / 1000.0, gaps, tl->n_marks - gaps);
        if (tl->rejected)
                fprintf(g->f, ", %" PRIu64 " invalid datagram(s) left out", tl->rejected);
        if (tl->n_rows > g->rows)
                fprintf(g->f, "; the last row holds what did not fit");
        fputs("</text>\n<text class=\"summary\" x=\"12\" y=\"62\">", g->f);
        if (tl->n_clock > 0 && timeline_wall(tl, 0, TL_WALL_DATE, from, sizeof(from)) &&
            timeline_wall(tl, tl->span, TL_WALL_DATE, to, sizeof(to)))
                fprintf(g->f, "from %s to %s (local time, as the journal shows it; bottom axis)", from, to);
        else
                fputs("no wall-clock time in this recording (it holds no datagram)", g->f);
        fputs("</text>\n", g->f);
}

/* One legend entry: a box of @cls (a line of @line_cls if set), and @text; returns the next x. */
static double put_key(FILE *f, double x, double y, const char *cls, bool line, const char *text)
{
        if (line)
                fprintf(f, "<line class=\"%s\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", cls, x + 9, y - 11,
                        x + 9, y + 2);
        else
                fprintf(f, "<rect class=\"legend %s\" x=\"%.0f\" y=\"%.0f\" width=\"18\" height=\"11\" rx=\"2\"/>", cls,
                        x, y - 9);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x + 23, y, text);
        return x + 36 + 6.0 * (double)strlen(text);
}

static void put_legend(const struct svg *g)
{
        FILE *f = g->f;
        double x = 12, y = 86;

        x = put_key(f, x, y, "queued", false, "waiting for its agent (received to started)");
        for (enum tl_outcome o = 0; o < _TL_OUTCOME_MAX; o++)
                x = put_key(f, x, y, timeline_outcome_name(o), false, timeline_outcome_text(o));
        x = 12, y = 106;
        fprintf(f, "<path class=\"wait\" d=\"M%.0f,%.0f L%.0f,%.0f\" marker-end=\"url(#arrow)\"/>", x, y - 4, x + 24, y - 4);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">waited for another event</text>\n", x + 30, y);
        x += 190;
        x = put_key(f, x, y, "event", true, "event received");
        x = put_key(f, x, y, "gap", true, "SEQNUM gap");
        x = put_key(f, x, y, "overflow", true, "receive buffer overflow");
        put_key(f, x, y, "udev", false, "waiting for udevd (after-udev)");
}

/* 1, 2 or 5 times a power of ten, in ms, giving at most @max_ticks ticks over @span_ms. */
static double tick_step(double span_ms, double max_ticks)
{
        double step = 0.001;

        for (;;)
                for (int m = 1; m <= 5; m = m == 1 ? 2 : m + 3) {
                        if (span_ms / (step * m) <= max_ticks)
                                return step * m;
                        if (m == 5)
                                step *= 10;
                }
}

/* Ticks; above them ms since the start, below them the wall-clock time (when the recording has it). */
static void put_axis(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        double span_ms = (double)tl->span / 1000.0;
        bool wall = tl->n_clock > 0;
        double step = tick_step(span_ms, g->w / (wall ? 115.0 : 90.0));
        enum tl_wall how = step < 1.0 ? TL_WALL_US : TL_WALL_MS;
        FILE *f = g->f;
        char buf[64];

        fputs("<g class=\"grid\">\n", f);
        /* Axis titles clear of the first tick's label, which is centred on LEFT. */
        fprintf(f, "<text class=\"axis-title\" x=\"%d\" y=\"%d\" text-anchor=\"end\">since the start</text>",
                LEFT - 30, PLOT_TOP - 8);
        fprintf(f, "<text class=\"axis-title\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                wall ? LEFT - 50 : LEFT - 30, g->bottom + 16, wall ? "local time" : "since the start");
        for (double t = 0; t <= span_ms + step / 1000.0; t += step) {
                double x = LEFT + t * g->w / span_ms;
                const char *label;

                fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>", x, PLOT_TOP - 4, x,
                        g->bottom + 4);
                fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g ms</text>", x,
                        PLOT_TOP - 8, t);
                if (!wall || !(label = timeline_wall(tl, (usec_t)(t * 1000.0 + 0.5), how, buf, sizeof(buf))))
                        snprintf(buf, sizeof(buf), "%g ms", t), label = buf;
                fprintf(f, "<text class=\"axis wall\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                        g->bottom + 16, label);
        }
        fputs("</g>\n", f);
}

/* Lanes that do not fit in the rows drawn. */
static size_t lanes_past(const struct svg *g)
{
        size_t n = 0;

        for (size_t i = 0; i < g->tl->n_lanes; i++)
                n += g->tl->lanes[i].first_row >= g->rows - 1;
        return n;
}

/* A lane's label (the tail of a long one), with the whole name and @more as its tooltip. */
static void put_lane_label(const struct svg *g, const char *name, double y, const char *more)
{
        size_t len = strlen(name);
        FILE *f = g->f;

        fprintf(f, "<text class=\"lane-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 10, y + g->lane_h * 0.7);
        if (len > LABEL_CHARS) {
                fputs("&#8230;", f);
                put_text(f, name + len - (LABEL_CHARS - 1));
        } else
                put_text(f, name);
        fputs("<title>", f);
        put_text(f, name);
        put_text(f, more);
        fputs("</title></text>\n", f);
}

static void put_stripe(const struct svg *g, size_t i, unsigned first, unsigned last)
{
        double y = y_of_row(g, first), h = (last - first + 1) * g->lane_h;

        fprintf(g->f, "<rect class=\"%s\" x=\"%d\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"/>",
                i % 2 == 0 ? "stripe" : "lane-bg", 4, y, LEFT + g->w + RIGHT / 2 - 4, h);
        if (i > 0)
                fprintf(g->f, "<line class=\"lane-sep\" x1=\"4\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", y,
                        LEFT + g->w + RIGHT / 2, y);
}

/*
 * A band per lane, as high as its rows.  When the rows do not all fit, the
 * last row drawn holds the rest (lanes and rows), and says so.
 */
static void put_lanes(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        bool capped = tl->n_rows > g->rows;
        char title[160];
        size_t i;

        fputs("<g class=\"lanes\">\n", g->f);
        if (tl->n_lanes == 0) {
                /* Nothing recorded but gaps and overflows, or nothing at all: one empty row says so. */
                put_stripe(g, 0, 0, 0);
                put_lane_label(g, "(no events or agent runs)", PLOT_TOP, "");
        }
        for (i = 0; i < tl->n_lanes && (!capped || tl->lanes[i].first_row < g->rows - 1); i++) {
                put_stripe(g, i, row_of(g, (unsigned)i, 0), row_of(g, (unsigned)i, tl->lanes[i].rows - 1));
                snprintf(title, sizeof(title), " (%u run(s) on %u row(s))", tl->lanes[i].n_runs, tl->lanes[i].rows);
                put_lane_label(g, tl->lanes[i].name, y_of_row(g, row_of(g, (unsigned)i, 0)), title);
        }
        if (capped) {
                size_t past = lanes_past(g);

                if (past)
                        snprintf(title, sizeof(title), "(%zu more lanes)", past);
                else
                        snprintf(title, sizeof(title), "(more rows of the lane above)");
                if (i < tl->n_lanes && tl->lanes[i].first_row == g->rows - 1)
                        put_stripe(g, i, g->rows - 1, g->rows - 1);
                put_lane_label(g, title, y_of_row(g, g->rows - 1), ": what did not fit in the picture");
        }
        fputs("</g>\n", g->f);
}

/* The row an event's tick goes on: where its first run's wait starts; UINT_MAX: it has no run. */
static unsigned *event_rows(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        unsigned *rows = calloc(MAX(tl->n_events, (size_t)1), sizeof(*rows));

        if (!rows)
                return NULL;
        for (size_t i = 0; i < tl->n_events; i++)
                rows[i] = UINT_MAX;
        for (size_t i = tl->n_runs; i > 0; i--)
                if (tl->runs[i - 1].event >= 0)
                        rows[tl->runs[i - 1].event] = row_of(g, tl->runs[i - 1].lane, tl->runs[i - 1].row);
        return rows;
}

static int put_events(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        _cleanup_free_ unsigned *rows = event_rows(g);
        FILE *f = g->f;
        char wall[64];

        if (!rows)
                return -ENOMEM;
        fputs("<g class=\"events\">\n", f);
        for (size_t i = 0; i < tl->n_events; i++) {
                const struct tl_event *e = &tl->events[i];
                double x = x_of(g, e->t), y = y_of_row(g, rows[i] == UINT_MAX ? row_of(g, e->lane, 0) : rows[i]);

                fprintf(f, "<line class=\"event\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>SEQNUM=%" PRIu64
                           " ",
                        x, y + 2, x, y + g->lane_h - 2, e->seqnum);
                put_text(f, e->action);
                fputc(' ', f);
                put_text(f, e->devpath);
                fprintf(f, " received at %s (+%.3f ms)%s</title></line>\n",
                        timeline_wall(tl, e->t, TL_WALL_US, wall, sizeof(wall)), (double)e->t / 1000.0,
                        rows[i] == UINT_MAX ? "\nno agent run recorded (filtered, a duplicate, or not run)" : "");
        }
        fputs("</g>\n", f);
        return 0;
}

/* The bar's label, "SEQNUM action" (and the script's name, with more than one
 * program), inside if it fits, else after it if the row is free there. */
static void put_bar_label(const struct svg *g, const struct tl_run *run, double x, double w, double next_x)
{
        char label[160];
        const char *action = run->event >= 0 ? g->tl->events[run->event].action : "";
        const char *name = g->tl->many_programs ? timeline_run_name(run) : "";
        double need, y = y_of(g, run) + g->lane_h * 0.7;

        snprintf(label, sizeof(label), "%" PRIu64 "%s%s%s%.64s", run->seqnum, *action ? " " : "", action,
                 *name ? " " : "", name);
        need = g->char_w * (double)strlen(label) + 6;
        if (w >= need)
                fprintf(g->f, "<text class=\"lbl%s\" x=\"%.1f\" y=\"%.1f\">",
                        light_fill(timeline_run_outcome(run)) ? " dark" : "", x + 3, y);
        else if (x + w + 3 + need <= next_x)
                fprintf(g->f, "<text class=\"lbl out\" x=\"%.1f\" y=\"%.1f\">", x + w + 3, y);
        else
                return;
        put_text(g->f, label);
        fputs("</text>\n", g->f);
}

/* "SEQNUM=N add /devices/... (net)" */
static void put_run_event(const struct svg *g, const struct tl_run *run)
{
        const struct tl_event *e = run->event >= 0 ? &g->tl->events[run->event] : NULL;

        fprintf(g->f, "SEQNUM=%" PRIu64, run->seqnum);
        if (!e)
                return;
        fputc(' ', g->f);
        put_text(g->f, e->action);
        fputc(' ', g->f);
        put_text(g->f, e->devpath);
        fputs(" (", g->f);
        put_text(g->f, e->subsystem);
        fputc(')', g->f);
}

/* The part of the wait spent waiting for udevd: from the dispatch to the run's start. */
static void put_udev_wait(const struct svg *g, const struct tl_run *run)
{
        double x = x_of(g, run->udev_from), w = x_of(g, run->start) - x;
        double y = y_of(g, run) + (g->lane_h - g->bar_h) / 2.0;
        char a[64], b[64];

        if (!run->udev_wait || run->start <= run->udev_from)
                return;
        fprintf(g->f, "<rect class=\"udev\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\"><title>", x, y + 1,
                w, g->bar_h - 2);
        put_run_event(g, run);
        fprintf(g->f, "\nwaited %.3f ms for ", (double)(run->udev_until - run->udev_from) / 1000.0);
        put_text(g->f, run->udev_wait);
        fprintf(g->f, " (after-udev): ready %s, went on %s</title></rect>\n",
                timeline_wall(g->tl, run->udev_from, TL_WALL_US, a, sizeof(a)),
                timeline_wall(g->tl, run->udev_until, TL_WALL_US, b, sizeof(b)));
}

/* The wait for the agent: from the event's arrival to the run's start (to its wait for udevd, if any). */
static void put_queued(const struct svg *g, const struct tl_run *run)
{
        double x = x_of(g, run->queued), w = x_of(g, run->udev_wait ? run->udev_from : run->start) - x;
        double y = y_of(g, run) + (g->lane_h - g->bar_h) / 2.0;
        char a[64], b[64];

        put_udev_wait(g, run);
        if (run->start <= run->queued || w <= 0)
                return;
        fprintf(g->f, "<rect class=\"queued\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\"><title>", x, y + 1,
                w, g->bar_h - 2);
        put_run_event(g, run);
        fprintf(g->f, "\nwaited %.3f ms for its agent: received %s, agent started %s",
                (double)(run->start - run->queued) / 1000.0, timeline_wall(g->tl, run->queued, TL_WALL_US, a, sizeof(a)),
                timeline_wall(g->tl, run->start, TL_WALL_US, b, sizeof(b)));
        if (run->slot_wait) {
                fputs("; waited for ", g->f);
                put_text(g->f, run->slot_wait);
        }
        if (run->udev_wait)
                fprintf(g->f, "; of it %.3f ms for udevd", (double)(run->udev_until - run->udev_from) / 1000.0);
        fputs("</title></rect>\n", g->f);
}

static void put_bar(const struct svg *g, const struct tl_run *run, double next_x)
{
        enum tl_outcome o = timeline_run_outcome(run);
        double x = x_of(g, run->start), w = MAX(x_of(g, run->end) - x, o == TL_EXEC ? EXEC_MIN_W : 2.0);
        double y = y_of(g, run) + (g->lane_h - g->bar_h) / 2.0;
        char status[160], a[64], b[64];
        FILE *f = g->f;

        put_queued(g, run);
        timeline_run_status(run, status, sizeof(status));
        fprintf(f, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" rx=\"2\"><title>",
                timeline_outcome_name(o), x, y, w, g->bar_h);
        put_run_event(g, run);
        fputs("\n", f);
        put_text(f, run->program ? run->program : "(not started)");
        fprintf(f, ": %s (%s)\n%s to %s, %.3f ms (+%.3f to +%.3f ms)</title></rect>\n", status,
                timeline_outcome_text(o), timeline_wall(g->tl, run->start, TL_WALL_US, a, sizeof(a)),
                timeline_wall(g->tl, run->end, TL_WALL_US, b, sizeof(b)), (double)(run->end - run->start) / 1000.0,
                (double)run->start / 1000.0, (double)run->end / 1000.0);
        put_bar_label(g, run, x, w, next_x);
}

static int put_bars(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        _cleanup_free_ double *next_x = calloc(MAX(tl->n_runs, (size_t)1), sizeof(double));
        _cleanup_free_ double *row_next = calloc(g->rows, sizeof(double));

        if (!next_x || !row_next)
                return -ENOMEM;
        /* Where the next wait or bar of the same row starts, so outside labels never cover it. */
        for (unsigned i = 0; i < g->rows; i++)
                row_next[i] = LEFT + g->w + RIGHT;
        for (size_t i = tl->n_runs; i > 0; i--) {
                const struct tl_run *run = &tl->runs[i - 1];
                unsigned row = row_of(g, run->lane, run->row);

                next_x[i - 1] = row_next[row];
                row_next[row] = MIN(row_next[row], x_of(g, run->queued));
        }
        fputs("<g class=\"bars\">\n", g->f);
        for (size_t i = 0; i < tl->n_runs; i++)
                put_bar(g, &tl->runs[i], next_x[i]);
        fputs("</g>\n", g->f);
        return 0;
}

static void put_waits(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        FILE *f = g->f;

        fputs("<g class=\"waits\">\n", f);
        for (size_t i = 0; i < tl->n_waits; i++) {
                const struct tl_wait *w = &tl->waits[i];
                const struct tl_run *from, *to;
                double x1, y1, x2, y2, bend;

                if (w->from_run < 0 || w->to_run < 0)
                        continue;
                from = &tl->runs[w->from_run];
                to = &tl->runs[w->to_run];
                x1 = x_of(g, from->end);
                y1 = y_of(g, from) + g->lane_h / 2.0;
                x2 = x_of(g, to->start);
                y2 = y_of(g, to) + g->lane_h / 2.0;
                if (y1 == y2) {
                        /* Same row: a small arc over the bars, landing on the waiter's start. */
                        double top = y_of(g, to) + (g->lane_h - g->bar_h) / 2.0;
                        fprintf(f, "<path class=\"wait\" d=\"M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f\" ", MIN(x1, x2 - 6), top,
                                (MIN(x1, x2 - 6) + x2) / 2, top - g->lane_h * 0.45, x2, top + 1);
                } else {
                        bend = MAX((x2 - x1) / 2, 8.0);
                        fprintf(f, "<path class=\"wait\" d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\" ", x1, y1,
                                x1 + bend, y1, x2 - bend, y2, x2, y2);
                }
                fprintf(f, "marker-end=\"url(#arrow)\"><title>SEQNUM=%" PRIu64 " waited for SEQNUM=%" PRIu64 " (",
                        w->seqnum, w->blocker);
                put_text(f, w->reason);
                fputs(")</title></path>\n", f);
        }
        fputs("</g>\n", f);
}

static void put_marks(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        FILE *f = g->f;
        double free_x[2] = { 0, 0 }; /* labels: gaps on the first line, overflows on the second */
        char wall[64];

        fputs("<g class=\"marks\">\n", f);
        for (size_t i = 0; i < tl->n_marks; i++) {
                const struct tl_mark *m = &tl->marks[i];
                double x = x_of(g, m->t);
                int line = m->overflow;
                char label[96];

                if (m->overflow)
                        snprintf(label, sizeof(label), "overflow");
                else if (m->first == m->last)
                        snprintf(label, sizeof(label), "gap %" PRIu64, m->first);
                else
                        snprintf(label, sizeof(label), "gap %" PRIu64 "-%" PRIu64, m->first, m->last);
                fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"><title>%s at %s (+%.3f ms)%s%s</title></line>\n",
                        m->overflow ? "overflow" : "gap", x, PLOT_TOP - 2, x, g->bottom + 2, label,
                        timeline_wall(tl, m->t, TL_WALL_US, wall, sizeof(wall)), (double)m->t / 1000.0,
                        m->overflow ? "" : ", ", m->overflow ? "" : record_gap_class_to_string(m->class));
                if (x >= free_x[line]) {
                        fprintf(f, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", x + 3,
                                g->bottom + 32 + 12 * line, m->overflow ? "#000" : "#555", label);
                        free_x[line] = x + CHAR_W * (double)strlen(label) + 10;
                }
        }
        fputs("</g>\n", f);
}

int timeline_render_svg(const struct timeline *tl, const char *title, FILE *f)
{
        struct svg g = { .tl = tl, .f = f };
        double width, height;
        int r;

        g.rows = (unsigned)MAX(MIN(tl->n_rows, (size_t)HP_TIMELINE_MAX_LANES), (size_t)1);
        g.w = (double)MIN(MAX((size_t)PLOT_MIN_W, 600 + 2 * tl->n_runs), (size_t)PLOT_MAX_W);
        g.lane_h = g.rows > COMPACT_ROWS ? COMPACT_LANE_H : LANE_H;
        g.bar_h = g.lane_h - 6;
        g.char_w = g.rows > COMPACT_ROWS ? CHAR_W * 0.8 : CHAR_W;
        g.bottom = PLOT_TOP + g.rows * g.lane_h;
        width = LEFT + g.w + RIGHT;
        height = g.bottom + 60;

        put_head(&g, title, width, height);
        put_summary(&g);
        put_legend(&g);
        put_lanes(&g);
        put_axis(&g);
        r = put_events(&g);
        if (r >= 0)
                r = put_bars(&g);
        put_waits(&g);
        put_marks(&g);
        fputs("</svg>\n", f);
        if (r < 0)
                return r;
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}
