/* SPDX-License-Identifier: MIT */
/*
 * SVG rendering of a timeline model: lanes as rows, each agent run one
 * <rect class="bar STATUS"> with a <title> tooltip, waits as arrows from
 * the blocker's bar end to the waiter's bar start, events as ticks, gaps
 * and overflows as vertical marks, a millisecond axis and a legend.
 *
 * Invariants: every string from the model goes through put_text() (escaped
 * to printable ASCII, then to XML); the document is well-formed for any
 * input, an empty model included (one empty row); at most
 * HP_TIMELINE_MAX_LANES rows are drawn (the rest share the last row) and the
 * plot is at most PLOT_MAX_W pixels wide.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/macro.h"
#include "ctl/timeline.h"

#define LEFT 290         /* lane label column */
#define RIGHT 30
#define PLOT_TOP 104
#define LANE_H 20        /* row height; COMPACT_LANE_H above COMPACT_ROWS rows */
#define COMPACT_LANE_H 13
#define COMPACT_ROWS 120
#define PLOT_MIN_W 1000
#define PLOT_MAX_W 4000
#define CHAR_W 6.1       /* average glyph width at 10 px, for fitting labels */
#define LABEL_CHARS 44   /* lane labels longer than this keep their tail */

struct svg {
        const struct timeline *tl;
        FILE *f;
        double w;            /* plot width */
        unsigned rows;       /* lanes drawn */
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

static unsigned row_of(const struct svg *g, unsigned lane)
{
        return MIN(lane, g->rows - 1);
}

static double y_of(const struct svg *g, unsigned lane)
{
        return PLOT_TOP + row_of(g, lane) * g->lane_h;
}

static const char *run_class(const struct tl_run *run)
{
        if (!run->finished)
                return "running";
        if (run->status == RECORD_AGENT_TIMEOUT)
                return "timeout";
        if (run->status == RECORD_AGENT_EXITED && run->value == 0)
                return "ok";
        return "fail";
}

static void put_head(const struct svg *g, const char *title, double width, double height)
{
        FILE *f = g->f;
        bool compact = g->lane_h < LANE_H;

        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                   "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" "
                   "font-size=\"11\">\n",
                width, height, width, height);
        fputs("<style>\n"
              ".bar{stroke-width:1}\n"
              ".ok{fill:#4e79a7;stroke:#35557a}\n"
              ".fail{fill:#e15759;stroke:#a83a3c}\n"
              ".timeout{fill:#f28e2b;stroke:#b0651c}\n"
              ".running{fill:#c9c3bf;stroke:#8a827d;stroke-dasharray:3 2}\n"
              ".lbl{font-size:10px;fill:#fff;pointer-events:none}\n"
              ".lbl.out{fill:#333}\n"
              ".lane-label{fill:#333}\n"
              ".stripe{fill:#f4f5f7}\n"
              ".tick{stroke:#dde0e4;stroke-width:1}\n"
              ".axis{fill:#555;font-size:10px}\n"
              ".event{stroke:#3f8f3a;stroke-width:1.5}\n"
              ".wait{fill:none;stroke:#7a5195;stroke-width:1.2;opacity:.75}\n"
              ".gap{stroke:#d62728;stroke-width:1.5;stroke-dasharray:5 3}\n"
              ".overflow{stroke:#ff7f0e;stroke-width:2.5}\n"
              ".mark-label{font-size:10px}\n"
              ".title{font-size:15px;font-weight:bold;fill:#222}\n"
              ".summary{fill:#444}\n",
              f);
        if (compact)
                fputs(".lane-label{font-size:9px}\n.lbl{font-size:8px}\n", f);
        fputs("</style>\n"
              "<defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" "
              "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#7a5195\"/></marker></defs>\n",
              f);
        fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", width, height);
        fputs("<text class=\"title\" x=\"12\" y=\"24\">", f);
        put_text(f, title);
        fputs("</text>\n", f);
}

static void put_summary(const struct svg *g)
{
        const struct timeline *tl = g->tl;
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
        if (tl->n_lanes > g->rows)
                fprintf(g->f, "; the last row holds %zu lanes", tl->n_lanes - g->rows + 1);
        fputs("</text>\n", g->f);
}

static void put_legend(const struct svg *g)
{
        static const struct {
                const char *cls, *text;
        } boxes[] = {
                { "ok", "agent run, exit 0" },
                { "fail", "failed (exit status, signal, exec)" },
                { "timeout", "timed out" },
                { "running", "unfinished at end" },
        };
        FILE *f = g->f;
        double x = 12, y = 66;

        for (size_t i = 0; i < ELEMENTSOF(boxes); i++) {
                fprintf(f, "<rect class=\"legend %s\" x=\"%.0f\" y=\"%.0f\" width=\"18\" height=\"10\" rx=\"2\"/>",
                        boxes[i].cls, x, y - 9);
                fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x + 23, y, boxes[i].text);
                x += 34 + 5.7 * (double)strlen(boxes[i].text);
        }
        fprintf(f, "<path class=\"wait\" d=\"M%.0f,%.0f L%.0f,%.0f\" marker-end=\"url(#arrow)\"/>", x, y - 4, x + 24, y - 4);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">waited for</text>\n", x + 30, y);
        x += 110;
        fprintf(f, "<line class=\"event\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", x, y - 10, x, y + 1);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">event received</text>\n", x + 6, y);
        x += 110;
        fprintf(f, "<line class=\"gap\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", x, y - 11, x, y + 2);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">SEQNUM gap</text>\n", x + 6, y);
        x += 90;
        fprintf(f, "<line class=\"overflow\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>", x, y - 11, x, y + 2);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">receive buffer overflow</text>\n", x + 6, y);
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

static void put_axis(const struct svg *g)
{
        double span_ms = (double)g->tl->span / 1000.0;
        double step = tick_step(span_ms, g->w / 90.0);
        FILE *f = g->f;

        fputs("<g class=\"grid\">\n", f);
        for (double t = 0; t <= span_ms + step / 1000.0; t += step) {
                double x = LEFT + t * g->w / span_ms;
                fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>", x, PLOT_TOP - 4, x,
                        g->bottom + 4);
                fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g ms</text>", x,
                        PLOT_TOP - 8, t);
                fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g ms</text>\n", x,
                        g->bottom + 16, t);
        }
        fputs("</g>\n", f);
}

static void put_lanes(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        FILE *f = g->f;

        fputs("<g class=\"lanes\">\n", f);
        if (tl->n_lanes == 0)
                /* Nothing recorded but gaps and overflows, or nothing at all: one empty row says so. */
                fprintf(f, "<rect class=\"stripe\" x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\"/>"
                           "<text class=\"lane-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">"
                           "(no events or agent runs)</text>\n",
                        4, PLOT_TOP, LEFT + g->w + RIGHT / 2 - 4, g->lane_h, LEFT - 10, PLOT_TOP + g->lane_h * 0.7);
        for (unsigned i = 0; i < g->rows && i < tl->n_lanes; i++) {
                const char *name = tl->lanes[i].name;
                size_t len = strlen(name);
                double y = PLOT_TOP + i * g->lane_h;

                if (i % 2 == 0)
                        fprintf(f, "<rect class=\"stripe\" x=\"%d\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"/>", 4, y,
                                LEFT + g->w + RIGHT / 2 - 4, g->lane_h);
                fprintf(f, "<text class=\"lane-label\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 10,
                        y + g->lane_h * 0.7);
                if (i == g->rows - 1 && tl->n_lanes > g->rows)
                        fprintf(f, "(%zu more lanes)", tl->n_lanes - i);
                else if (len > LABEL_CHARS) {
                        fputs("&#8230;", f);
                        put_text(f, name + len - (LABEL_CHARS - 1));
                } else
                        put_text(f, name);
                fputs("<title>", f);
                put_text(f, name);
                fputs("</title></text>\n", f);
        }
        fputs("</g>\n", f);
}

static void put_events(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        FILE *f = g->f;

        fputs("<g class=\"events\">\n", f);
        for (size_t i = 0; i < tl->n_events; i++) {
                const struct tl_event *e = &tl->events[i];
                double x = x_of(g, e->t), y = y_of(g, e->lane);

                fprintf(f, "<line class=\"event\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>SEQNUM=%" PRIu64
                           " ",
                        x, y + 2, x, y + g->lane_h - 2, e->seqnum);
                put_text(f, e->action);
                fputc(' ', f);
                put_text(f, e->devpath);
                fprintf(f, " received at %.3f ms</title></line>\n", (double)e->t / 1000.0);
        }
        fputs("</g>\n", f);
}

/* The bar's label, "SEQNUM action", inside if it fits, else after it if the lane is free there. */
static void put_bar_label(const struct svg *g, const struct tl_run *run, double x, double w, double next_x)
{
        char label[96];
        const char *action = run->event >= 0 ? g->tl->events[run->event].action : "";
        double need, y = y_of(g, run->lane) + g->lane_h * 0.7;

        snprintf(label, sizeof(label), "%" PRIu64 "%s%s", run->seqnum, *action ? " " : "", action);
        need = g->char_w * (double)strlen(label) + 6;
        if (w >= need)
                fprintf(g->f, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\">", x + 3, y);
        else if (x + w + 3 + need <= next_x)
                fprintf(g->f, "<text class=\"lbl out\" x=\"%.1f\" y=\"%.1f\">", x + w + 3, y);
        else
                return;
        put_text(g->f, label);
        fputs("</text>\n", g->f);
}

static void put_bar(const struct svg *g, const struct tl_run *run, double next_x)
{
        const struct timeline *tl = g->tl;
        double x = x_of(g, run->start), w = MAX(x_of(g, run->end) - x, 2.0);
        double y = y_of(g, run->lane) + (g->lane_h - g->bar_h) / 2.0;
        char status[160];
        FILE *f = g->f;

        timeline_run_status(run, status, sizeof(status));
        fprintf(f, "<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" rx=\"2\">",
                run_class(run), x, y, w, g->bar_h);
        fprintf(f, "<title>SEQNUM=%" PRIu64 " ", run->seqnum);
        if (run->event >= 0) {
                put_text(f, tl->events[run->event].action);
                fputc(' ', f);
                put_text(f, tl->events[run->event].devpath);
                fputs(" (", f);
                put_text(f, tl->events[run->event].subsystem);
                fputs(")", f);
        }
        fputs("\n", f);
        put_text(f, run->program ? run->program : "(not started)");
        fprintf(f, ": %s\n%.3f to %.3f ms, %.3f ms</title></rect>\n", status, (double)run->start / 1000.0,
                (double)run->end / 1000.0, (double)(run->end - run->start) / 1000.0);
        put_bar_label(g, run, x, w, next_x);
}

static int put_bars(const struct svg *g)
{
        const struct timeline *tl = g->tl;
        _cleanup_free_ double *next_x = calloc(MAX(tl->n_runs, (size_t)1), sizeof(double));
        _cleanup_free_ double *row_next = calloc(g->rows, sizeof(double));

        if (!next_x || !row_next)
                return -ENOMEM;
        /* Where the next bar of the same row starts, so outside labels never cover it. */
        for (unsigned i = 0; i < g->rows; i++)
                row_next[i] = LEFT + g->w + RIGHT;
        for (size_t i = tl->n_runs; i > 0; i--) {
                unsigned row = row_of(g, tl->runs[i - 1].lane);
                next_x[i - 1] = row_next[row];
                row_next[row] = x_of(g, tl->runs[i - 1].start);
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
                y1 = y_of(g, from->lane) + g->lane_h / 2.0;
                x2 = x_of(g, to->start);
                y2 = y_of(g, to->lane) + g->lane_h / 2.0;
                if (row_of(g, from->lane) == row_of(g, to->lane)) {
                        /* Same row: a small arc over the bars, landing on the waiter's start. */
                        double top = y_of(g, to->lane) + (g->lane_h - g->bar_h) / 2.0;
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
                fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"><title>%s at %.3f ms%s%s</title></line>\n",
                        m->overflow ? "overflow" : "gap", x, PLOT_TOP - 2, x, g->bottom + 2, label,
                        (double)m->t / 1000.0, m->overflow ? "" : ", ", m->overflow ? "" : record_gap_class_to_string(m->class));
                if (x >= free_x[line]) {
                        fprintf(f, "<text class=\"mark-label\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>\n", x + 3,
                                g->bottom + 30 + 12 * line, m->overflow ? "#c45f00" : "#d62728", label);
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

        g.rows = (unsigned)MAX(MIN(tl->n_lanes, (size_t)HP_TIMELINE_MAX_LANES), (size_t)1);
        g.w = (double)MIN(MAX((size_t)PLOT_MIN_W, 600 + 2 * tl->n_runs), (size_t)PLOT_MAX_W);
        g.lane_h = g.rows > COMPACT_ROWS ? COMPACT_LANE_H : LANE_H;
        g.bar_h = g.lane_h - 6;
        g.char_w = g.rows > COMPACT_ROWS ? CHAR_W * 0.8 : CHAR_W;
        g.bottom = PLOT_TOP + g.rows * g.lane_h;
        width = LEFT + g.w + RIGHT;
        height = g.bottom + 56;

        put_head(&g, title, width, height);
        put_summary(&g);
        put_legend(&g);
        put_lanes(&g);
        put_axis(&g);
        put_events(&g);
        r = put_bars(&g);
        put_waits(&g);
        put_marks(&g);
        fputs("</svg>\n", f);
        if (r < 0)
                return r;
        return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}
