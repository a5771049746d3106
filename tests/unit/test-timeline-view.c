/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl timeline, what the picture shows: overlapping runs of one lane
 * on sub-rows of their own (greedy packing, lowest free row), each run's
 * wait for its agent as a segment from its event's arrival to its start
 * (the part of it spent waiting for udevd a segment of its own, and no
 * arrow), one class per outcome, wall-clock times (local time, from the datagrams'
 * CLOCK_REALTIME, following a change of the clocks' offset), and the
 * choice of format: text on a terminal (a pty), SVG into a pipe, --svg and
 * --text to force either.  Every SVG goes through test-timeline-svg.py:
 * well-formed XML (python xml.etree) and no two bars or waits of one row
 * overlapping.
 *
 * argv[1]: the built hotplugctl; argv[2]: python3; argv[3]: test-timeline-svg.py.
 */
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/record.h"
#include "test-dir.h"
#include "test.h"
#include "timeline-test.h"

#define REAL0 ((usec_t)1700000000 * USEC_PER_SEC) /* 2023-11-14 22:13:20 UTC */

static char dir[] = "/tmp/test-timeline-view.XXXXXX";
static const char *hotplugctl, *python, *svg_check;

static struct record_writer *rec_open(const char *name, char *path, size_t size)
{
        return tl_test_open(dir, name, path, size);
}

/* A datagram received at @mono, with CLOCK_REALTIME @mono + @offset. */
static void rec_event(struct record_writer *w, uint64_t seqnum, usec_t mono, usec_t offset, const char *devpath,
                      const char *subsystem)
{
        tl_test_datagram(w, seqnum, mono, mono + offset, "add", devpath, subsystem);
}

/* An agent run from @start to @end (@end 0: no end recorded). */
static void rec_run(struct record_writer *w, uint64_t seqnum, usec_t start, usec_t end, enum record_agent_status st,
                    int value)
{
        bool exec_failed = st == RECORD_AGENT_EXEC_FAILED;

        if (!exec_failed)
                tl_test_start(w, seqnum, start, (uint32_t)seqnum, "/sbin/hotplug");
        if (end)
                tl_test_end(w, seqnum, end, exec_failed ? 0 : (uint32_t)seqnum, st, value);
}

/* Every record of @path, none damaged. */
static struct timeline *load(const char *path, enum timeline_lanes by)
{
        size_t problems;
        struct timeline *tl = tl_test_load(path, by, &problems);

        check_int(problems, 0);
        return tl;
}

/* Render into memory and into @name in dir; check the file with test-timeline-svg.py. */
static char *render_svg(const struct timeline *tl, const char *name, size_t bars)
{
        char path[300], cmd[1200];
        size_t size;
        char *buf = tl_test_svg(tl, "view", &size);
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        check(f && fwrite(buf, 1, size, f) == size);
        fclose(f);
        snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' %zu", python, svg_check, path, bars);
        check_int(system(cmd), 0);
        return buf;
}

struct rect {
        char cls[32];
        double x, y, w;
};

/* The @nth (from 0) <rect class="bar ..."> of @svg, or false. */
static bool find_bar(const char *svg, unsigned nth, struct rect *ret)
{
        const char *prefix = "<rect class=\"bar ", *p = svg;

        for (unsigned i = 0;; i++, p++) {
                p = strstr(p, prefix);
                if (!p)
                        return false;
                if (i == nth)
                        break;
        }
        check_int(sscanf(p, "<rect class=\"bar %31[a-z]\" x=\"%lf\" y=\"%lf\" width=\"%lf\"", ret->cls, &ret->x,
                         &ret->y, &ret->w),
                  4);
        return true;
}

/*
 * The case: vdb1 and vdb2 run at the same time, in one subsystem
 * lane; a third block run after both takes the lowest row again.
 */
static void test_subrows(void)
{
        char path[300], *svg, *txt, *p;
        struct record_writer *w = rec_open("subrows.rec", path, sizeof(path));
        struct timeline *tl;
        struct rect a, b, c;

        rec_event(w, 1, 1000, REAL0, "/devices/virtual/block/vdb1", "block");
        rec_event(w, 2, 1200, REAL0, "/devices/virtual/block/vdb2", "block");
        rec_run(w, 1, 1100, 9000, RECORD_AGENT_EXITED, 0);
        rec_run(w, 2, 1300, 8000, RECORD_AGENT_EXITED, 0);
        rec_event(w, 3, 20000, REAL0, "/devices/virtual/block/vdb3", "block");
        rec_run(w, 3, 20100, 30000, RECORD_AGENT_EXITED, 0);
        rec_event(w, 4, 1500, REAL0, "/devices/virtual/net/veth0", "net");
        rec_run(w, 4, 1600, 2000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);

        tl = load(path, TIMELINE_LANES_SUBSYSTEM);
        check_int(tl->n_lanes, 2);
        check_str(tl->lanes[0].name, "block");
        check_int(tl->lanes[0].rows, 2);
        check_int(tl->lanes[1].rows, 1);
        check_int(tl->lanes[1].first_row, 2);
        check_int(tl->n_rows, 3);
        /* Runs in start order: vdb1, vdb2, veth0, vdb3. */
        check_int(tl->runs[0].seqnum, 1);
        check_int(tl->runs[0].row, 0);
        check_int(tl->runs[1].row, 1);
        check_int(tl->runs[3].seqnum, 3);
        check_int(tl->runs[3].row, 0);

        svg = render_svg(tl, "subrows.svg", 4);
        check(find_bar(svg, 0, &a));
        check(find_bar(svg, 1, &b));
        check(find_bar(svg, 3, &c));
        /* Both visible: they overlap in time, and lie on rows a lane row apart. */
        check(a.x < b.x + b.w && b.x < a.x + a.w);
        check(b.y - a.y >= 19.9);
        check(c.y == a.y);
        /* The lane's band is two rows high, and net's label is on the third row. */
        check(strstr(svg, "height=\"40\"/><text class=\"lane-label\""));
        check(strstr(svg, ">block<title>block (3 run(s) on 2 row(s))</title>"));
        free(svg);

        /* Text: block takes two chart lines, both with a bar. */
        txt = tl_test_text(tl, 40);
        fputs(txt, stderr);
        p = strstr(txt, "\nblock ");
        check(p);
        p = strchr(p + 1, '\n');
        check(p && strncmp(p + 1, "                                          |", 43) == 0);
        check(strchr(p + 43, '#') < strchr(p + 1, '\n'));
        check(strstr(p, "\nnet "));
        free(txt);
        tl = timeline_free(tl);

        /* By device, each has a lane to itself: one row each. */
        tl = load(path, TIMELINE_LANES_DEVICE);
        check_int(tl->n_rows, tl->n_lanes);
        timeline_free(tl);
}

/* Many runs in few lanes, at random: the packing never lets two share a row while they overlap. */
static void test_packing_random(void)
{
        char path[300], *svg;
        struct record_writer *w = rec_open("random.rec", path, sizeof(path));
        static const char *const subsystems[] = { "block", "net", "usb" };
        uint32_t seed = 7;
        struct timeline *tl;

        for (uint64_t seq = 1; seq <= 300; seq++) {
                usec_t t, start, dur;
                char devpath[64];

                seed = seed * 1103515245u + 12345u;
                t = 1000 + (seed >> 8) % 200000;
                start = t + (seed >> 4) % 5000 * (seq % 3);
                dur = seq % 17 == 0 ? 0 : 100 + (seed >> 12) % 20000;
                snprintf(devpath, sizeof(devpath), "/devices/virtual/test/d%" PRIu64, seq % 40);
                rec_event(w, seq, t, REAL0, devpath, subsystems[seq % 3]);
                rec_run(w, seq, start, start + dur, seq % 17 == 0 ? RECORD_AGENT_EXEC_FAILED : RECORD_AGENT_EXITED,
                        seq % 17 == 0 ? ENOENT : 0);
        }
        record_writer_free(w);
        for (int by = 0; by < 2; by++) {
                tl = load(path, by ? TIMELINE_LANES_SUBSYSTEM : TIMELINE_LANES_DEVICE);
                check_int(tl->n_runs, 300);
                for (size_t i = 0; i < tl->n_runs; i++)
                        for (size_t j = i + 1; j < tl->n_runs; j++) {
                                const struct tl_run *x = &tl->runs[i], *y = &tl->runs[j];
                                if (x->lane == y->lane && x->row == y->row)
                                        check(MAX(x->end, x->queued) <= y->queued ||
                                              MAX(y->end, y->queued) <= x->queued);
                        }
                svg = render_svg(tl, by ? "random-subsystem.svg" : "random-device.svg", 300);
                free(svg);
                timeline_free(tl);
        }
}

/* hotplug.d: runs of several scripts carry their names, in the SVG bars and the text's run lines; one agent's do not. */
static void test_script_names(void)
{
        char path[300], *svg, *txt;
        struct record_writer *w = rec_open("scripts.rec", path, sizeof(path));
        struct timeline *tl;

        rec_event(w, 20, 100000, REAL0, "/devices/virtual/net/s0", "net");
        tl_test_start(w, 20, 100000, 201, "/etc/hotplug.d/net/10-first.hotplug");
        tl_test_end(w, 20, 400000, 201, RECORD_AGENT_EXITED, 0);
        tl_test_start(w, 20, 400000, 202, "/etc/hotplug.d/default/50-<second>.hotplug");
        tl_test_end(w, 20, 700000, 202, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);
        tl = load(path, TIMELINE_LANES_DEVICE);
        check(tl->many_programs);
        svg = render_svg(tl, "scripts.svg", 2);
        check(strstr(svg, ">20 add 10-first.hotplug</text>"));
        check(strstr(svg, ">20 add 50-&lt;second&gt;.hotplug</text>"));
        free(svg);
        txt = tl_test_text(tl, 20);
        fputs(txt, stderr);
        check(strstr(txt, "| 10-first.hotplug\n") && strstr(txt, "| 50-<second>.hotplug\n"));
        free(txt);
        timeline_free(tl);

        w = rec_open("agent.rec", path, sizeof(path));
        rec_event(w, 21, 100000, REAL0, "/devices/virtual/net/s1", "net");
        rec_run(w, 21, 100000, 700000, RECORD_AGENT_EXITED, 0);
        rec_run(w, 21, 700000, 900000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);
        tl = load(path, TIMELINE_LANES_DEVICE);
        check(!tl->many_programs);
        svg = render_svg(tl, "agent.svg", 2);
        check(strstr(svg, ">21 add</text>") && !strstr(svg, "21 add hotplug"));
        free(svg);
        txt = tl_test_text(tl, 20);
        check(!strstr(txt, "| hotplug\n"));
        free(txt);
        timeline_free(tl);
}

/* The wait for the agent: from the event's arrival to the run's start, right before the bar. */
static void test_queued(void)
{
        char path[300], *svg, *txt;
        struct record_writer *w = rec_open("queued.rec", path, sizeof(path));
        struct timeline *tl;
        struct rect q, bar, second;
        double tick_x;
        const char *p;

        rec_event(w, 10, 100000, REAL0, "/devices/virtual/net/q0", "net");
        rec_run(w, 10, 150000, 160000, RECORD_AGENT_EXITED, 0);
        /* A second run of the same event (hotplug.d): no wait of its own. */
        rec_run(w, 10, 160500, 170000, RECORD_AGENT_EXITED, 0);
        /* An event whose agent starts at once. */
        rec_event(w, 11, 180000, REAL0, "/devices/virtual/net/q1", "net");
        rec_run(w, 11, 180000, 200000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);

        tl = load(path, TIMELINE_LANES_DEVICE);
        check_int(tl->runs[0].queued, 0);
        check_int(tl->runs[0].start, 50000);
        check_int(tl->runs[1].queued, tl->runs[1].start);
        check_int(tl->runs[2].queued, tl->runs[2].start);
        svg = render_svg(tl, "queued.svg", 3);
        /* Exactly one wait segment, beginning at the event's tick and ending where the first bar starts. */
        p = strstr(svg, "<rect class=\"queued\" x=\"");
        check(p && !strstr(p + 1, "<rect class=\"queued\" x=\""));
        check_int(sscanf(p, "<rect class=\"queued\" x=\"%lf\" y=\"%*f\" width=\"%lf\"", &q.x, &q.w), 2);
        check(find_bar(svg, 0, &bar));
        check(find_bar(svg, 1, &second));
        check(second.x >= bar.x + bar.w - 0.11);
        p = strstr(svg, "<line class=\"event\" x1=\"");
        p = strstr(p + 1, "<line class=\"event\" x1=\""); /* past the legend's */
        check(p && sscanf(p, "<line class=\"event\" x1=\"%lf\"", &tick_x) == 1);
        check(q.x - tick_x < 0.11 && tick_x - q.x < 0.11);
        check(q.x + q.w - bar.x < 0.11 && bar.x - (q.x + q.w) < 0.11);
        /* 50 of a 100 ms span. */
        check(q.w > bar.w * 4.9 && q.w < bar.w * 5.1);
        check(strstr(svg, "waited 50.000 ms for its agent: received 22:13:20.100000, agent started 22:13:20.150000"));
        check(strstr(svg, "waiting for its agent (received to started)"));
        free(svg);

        txt = tl_test_text(tl, 20);
        fputs(txt, stderr);
        /* 20 columns of 5 ms: 10 of waiting, 2 of running, then the second run. */
        check(strstr(txt, "|..........####      |"));
        check(strstr(txt, "key: . waiting for its agent"));
        free(txt);
        timeline_free(tl);
}

/* The number of times @needle is in @s. */
static unsigned count_of(const char *s, const char *needle)
{
        unsigned n = 0;

        for (const char *p = s; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

/*
 * A wait for udevd (after-udev: a WAIT record whose blocker is the event's
 * own SEQNUM, written when the wait ended): its own segment from the
 * dispatch (its slot WAIT record, or its arrival) to the agent's start,
 * never an arrow from the run to itself.
 */
static void test_udev_wait(void)
{
        char path[300], *svg, *txt;
        struct record_writer *w = rec_open("udev.rec", path, sizeof(path));
        struct timeline *tl;
        struct rect bar, udev, queued;
        const char *p;

        /* 20: arrives at 0, waits for a slot until 20 ms, for udevd until 70 ms, runs 10 ms. */
        rec_event(w, 20, 100000, REAL0, "/devices/virtual/net/u0", "net");
        /* 21: arrives at 10 ms, waits for udevd at once, in vain, until 50 ms; runs to the end. */
        rec_event(w, 21, 110000, REAL0, "/devices/virtual/net/u1", "net");
        tl_test_wait(w, 20, 0, 120000, "a free slot (limit 1)");
        tl_test_wait(w, 21, 21, 150000, "udevd, not broadcast in time");
        rec_run(w, 21, 150000, 200000, RECORD_AGENT_EXITED, 0);
        tl_test_wait(w, 20, 20, 170000, "udevd");
        rec_run(w, 20, 170000, 180000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);

        tl = load(path, TIMELINE_LANES_DEVICE);
        check_int(tl->n_runs, 2);
        check_int(tl->runs[0].seqnum, 21);
        check_str(tl->runs[0].udev_wait, "udevd, not broadcast in time");
        check_int(tl->runs[0].queued, 10000);
        check_int(tl->runs[0].udev_from, 10000);
        check_int(tl->runs[0].udev_until, 50000);
        check_str(tl->runs[1].udev_wait, "udevd");
        check_str(tl->runs[1].slot_wait, "a free slot (limit 1)");
        check_int(tl->runs[1].udev_from, 20000);
        check_int(tl->runs[1].udev_until, 70000);
        for (size_t i = 0; i < tl->n_waits; i++)
                check_int(tl->waits[i].from_run, -1);
        check_int(tl->waits[1].kind, TL_WAIT_UDEV);
        check_int(tl->waits[0].kind, TL_WAIT_SLOT);

        svg = render_svg(tl, "udev.svg", 2);
        /* No arrow but the legend's, a segment each, and the legend says what they are. */
        check_int(count_of(svg, "<path class=\"wait\""), 1);
        check_int(count_of(svg, "<rect class=\"udev\""), 2);
        check(strstr(svg, "<rect class=\"legend udev\"") && strstr(svg, "waiting for udevd (after-udev)"));
        check(strstr(svg, "waited 50.000 ms for udevd (after-udev)"));
        check(strstr(svg, "waited 40.000 ms for udevd, not broadcast in time (after-udev)"));
        check(strstr(svg, "waited 70.000 ms for its agent: received 22:13:20.100000, agent started "
                          "22:13:20.170000; waited for a free slot (limit 1); of it 50.000 ms for udevd"));
        /* 20's: the wait for its agent up to 20 ms, then the one for udevd up to its bar. */
        check(find_bar(svg, 1, &bar));
        p = strstr(svg, "<rect class=\"queued\" x=\"");
        check(p && !strstr(p + 1, "<rect class=\"queued\" x=\""));
        check_int(sscanf(p, "<rect class=\"queued\" x=\"%lf\" y=\"%*f\" width=\"%lf\"", &queued.x, &queued.w), 2);
        p = strstr(svg, "<rect class=\"udev\" x=\"");
        p = strstr(p + 1, "<rect class=\"udev\" x=\"");
        check(p && sscanf(p, "<rect class=\"udev\" x=\"%lf\" y=\"%*f\" width=\"%lf\"", &udev.x, &udev.w) == 2);
        check(queued.x + queued.w - udev.x < 0.11 && udev.x - (queued.x + queued.w) < 0.11);
        check(udev.x + udev.w - bar.x < 0.11 && bar.x - (udev.x + udev.w) < 0.11);
        check(udev.w > queued.w * 2.4 && udev.w < queued.w * 2.6);
        free(svg);

        txt = tl_test_text(tl, 20);
        fputs(txt, stderr);
        /* 20 columns of 5 ms. */
        check(strstr(txt, "key: . waiting for its agent, u of it for udevd"));
        check(strstr(txt, "|....uuuuuuuuuu##    |"));
        check(strstr(txt, "|  uuuuuuuu##########|"));
        check(strstr(txt, "^ SEQNUM=20 waited for a free slot (limit 1)\n"));
        check(strstr(txt, "^ SEQNUM=20 waited 50.000 ms for udevd\n"));
        check(strstr(txt, "^ SEQNUM=21 waited 40.000 ms for udevd, not broadcast in time\n"));
        check(!strstr(txt, "waited for SEQNUM="));
        free(txt);
        timeline_free(tl);
}

/* Each outcome its own class, legend entry and tooltip words. */
static void test_outcomes(void)
{
        static const struct {
                enum record_agent_status st;
                int value;
                const char *cls, *words;
        } cases[] = {
                { RECORD_AGENT_EXITED, 0, "ok", "exit 0 (exit 0)" },
                { RECORD_AGENT_EXITED, 3, "exit", "exit 3 (exit status not 0)" },
                { RECORD_AGENT_SIGNALED, 15, "signal", "signal 15 (killed by a signal)" },
                { RECORD_AGENT_TIMEOUT, 9, "timeout", "timeout, sig 9 (killed after its timeout)" },
                { RECORD_AGENT_EXEC_FAILED, EACCES, "exec", "exec EACCES (could not be executed)" },
                { RECORD_AGENT_EXITED, 0, "running", "running (still running at the end)" },
        };
        char path[300], *svg, *txt, needle[128], fills[ELEMENTSOF(cases)][32];
        struct record_writer *w = rec_open("outcomes.rec", path, sizeof(path));
        struct timeline *tl;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char devpath[64];
                usec_t t = 1000 + i * 10000;

                snprintf(devpath, sizeof(devpath), "/devices/virtual/net/o%zu", i);
                rec_event(w, 100 + i, t, REAL0, devpath, "net");
                rec_run(w, 100 + i, t + 100, strcmp(cases[i].cls, "running") ? t + 5000 : 0, cases[i].st,
                        cases[i].value);
        }
        record_writer_free(w);
        tl = load(path, TIMELINE_LANES_DEVICE);
        svg = render_svg(tl, "outcomes.svg", ELEMENTSOF(cases));
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                snprintf(needle, sizeof(needle), "<rect class=\"bar %s\"", cases[i].cls);
                check(strstr(svg, needle) && !strstr(strstr(svg, needle) + 1, needle));
                snprintf(needle, sizeof(needle), "<rect class=\"legend %s\"", cases[i].cls);
                check(strstr(svg, needle));
                check(strstr(svg, cases[i].words));
                check_int(timeline_run_outcome(&tl->runs[i]), (int)i);
                check_str(timeline_outcome_name(timeline_run_outcome(&tl->runs[i])), cases[i].cls);
        }
        /* Colours: one per outcome, none of them a mark's (overflow, gap, event, arrow). */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                static const char *const marks[] = { "#000", "#555", "#009e73", "#4b2e83" };
                char rule[32];
                const char *r;

                snprintf(rule, sizeof(rule), "\n.%s{fill:", cases[i].cls);
                r = strstr(svg, rule);
                check(r && sscanf(r + strlen(rule), "%31[^;}]", fills[i]) == 1);
                for (size_t j = 0; j < i; j++)
                        check(strcmp(fills[i], fills[j]) != 0);
                for (size_t j = 0; j < ELEMENTSOF(marks); j++)
                        check(strcmp(fills[i], marks[j]) != 0);
        }
        check(strstr(svg, "\n.overflow{stroke:#000;"));
        check(strstr(svg, "\n.gap{stroke:#555;"));
        check(strstr(svg, "\n.event{stroke:#009e73;"));
        free(svg);
        txt = tl_test_text(tl, 40);
        fputs(txt, stderr);
        /* 40 columns of 1.25 ms; the exec failure waited until it was tried. */
        check(strstr(txt, "\n/devices/virtual/net/o1                   |       .xxxx                            |\n"));
        check(strstr(txt, "|               .ssss                    |"));
        check(strstr(txt, "|                       .TTTT            |"));
        check(strstr(txt, "|                               ....!    |"));
        check(strstr(txt, "|                                       >|"));
        free(txt);
        timeline_free(tl);
}

/* Wall-clock times: local time of the datagrams' CLOCK_REALTIME, the offset taken from the nearest datagram. */
static void test_wall_clock(void)
{
        char path[300], *svg, *txt, buf[64];
        struct record_writer *w = rec_open("wall.rec", path, sizeof(path));
        struct timeline *tl;

        rec_event(w, 1, 5000000, REAL0 + 123000, "/devices/virtual/net/w0", "net");
        rec_run(w, 1, 5001100, 5002000, RECORD_AGENT_EXITED, 0);
        /* A suspend later: CLOCK_MONOTONIC stood still for an hour. */
        rec_event(w, 2, 5003000, REAL0 + 123000 + 3600 * USEC_PER_SEC, "/devices/virtual/net/w0", "net");
        rec_run(w, 2, 5003500, 5004000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);
        tl = load(path, TIMELINE_LANES_DEVICE);

        check_str(timeline_wall(tl, 0, TL_WALL_DATE, buf, sizeof(buf)), "2023-11-14 22:13:25.123 UTC");
        check_str(timeline_wall(tl, 1100, TL_WALL_US, buf, sizeof(buf)), "22:13:25.124100");
        check_str(timeline_wall(tl, 3500, TL_WALL_MS, buf, sizeof(buf)), "23:13:25.126");
        svg = render_svg(tl, "wall.svg", 2);
        check(strstr(svg, "from 2023-11-14 22:13:25.123 UTC to 2023-11-14 23:13:25.127 UTC (local time"));
        check(strstr(svg, "\n22:13:25.124100 to 22:13:25.125000, 0.900 ms (+1.100 to +2.000 ms)</title>"));
        check(strstr(svg, "\n23:13:25.126500 to 23:13:25.127000, 0.500 ms"));
        /* The bottom axis: wall clock at each tick (spans under a ms show microseconds). */
        check(strstr(svg, "<text class=\"axis wall\" x=\"290.0\" y=\""));
        check(strstr(svg, "text-anchor=\"middle\">22:13:25.123000</text>"));
        free(svg);
        txt = tl_test_text(tl, 40);
        check(strstr(txt, "from 2023-11-14 22:13:25.123 UTC to 2023-11-14 23:13:25.127 UTC"));
        check(strstr(txt, "           1  22:13:25.124  add "));
        check(strstr(txt, "           2  23:13:25.126  add "));
        free(txt);
        tl = timeline_free(tl);

        /* In another zone, another local time. */
        check(setenv("TZ", "Europe/Berlin", 1) == 0);
        tzset();
        tl = load(path, TIMELINE_LANES_DEVICE);
        timeline_wall(tl, 0, TL_WALL_DATE, buf, sizeof(buf));
        check(strcmp(buf, "2023-11-14 23:13:25.123 CET") == 0 || strcmp(buf, "2023-11-14 22:13:25.123 UTC") == 0);
        tl = timeline_free(tl);
        check(setenv("TZ", "UTC", 1) == 0);
        tzset();

        /* Without a datagram there is no wall clock, and the picture says so. */
        w = rec_open("nowall.rec", path, sizeof(path));
        rec_run(w, 5, 1000, 2000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);
        tl = load(path, TIMELINE_LANES_DEVICE);
        check_str(timeline_wall(tl, 0, TL_WALL_MS, buf, sizeof(buf)), "?"); /* never NULL: it goes into printf */
        svg = render_svg(tl, "nowall.svg", 1);
        check(strstr(svg, "no wall-clock time in this recording"));
        check(!strstr(svg, "(null)"));
        free(svg);
        {
                char *text = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&text, &size);

                check(f != NULL);
                check_int(timeline_render_text(tl, 80, f), 0);
                fclose(f);
                check(strstr(text, "no wall-clock time in this recording"));
                check(!strstr(text, "(null)"));
                free(text);
        }
        timeline_free(tl);
}

/* Run hotplugctl timeline @args with stdout on a pty (@tty) or a pipe; its output and exit status. */
static char *run_ctl(bool tty, const char *const *args, int *ret_status)
{
        const char *argv[12] = { hotplugctl, "timeline" };
        char *out = NULL;
        size_t size = 0, i = 2;
        FILE *f = open_memstream(&out, &size);
        char buf[4096];
        int fd, pipefd[2];
        pid_t pid;
        ssize_t n;

        check(f);
        for (; *args && i < 11; args++)
                argv[i++] = *args;
        argv[i] = NULL;
        if (tty) {
                struct winsize ws = { .ws_row = 50, .ws_col = 200 };
                pid = forkpty(&fd, NULL, NULL, &ws);
        } else {
                check(pipe2(pipefd, O_CLOEXEC) == 0);
                pid = fork();
                if (pid == 0)
                        (void)dup2(pipefd[1], STDOUT_FILENO);
                fd = pipefd[0];
                if (pid > 0)
                        close(pipefd[1]);
        }
        check(pid >= 0);
        if (pid == 0) {
                execv(argv[0], (char **)argv);
                _exit(127);
        }
        /* A pty reports EIO once the child is gone. */
        while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
                if (n > 0)
                        fwrite(buf, 1, (size_t)n, f);
        close(fd);
        check(waitpid(pid, ret_status, 0) == pid);
        fclose(f);
        return out;
}

static void test_format_choice(void)
{
        char path[300], out[320], cmd[1200], *o;
        struct record_writer *w = rec_open("choice.rec", path, sizeof(path));
        int status;

        if (!hotplugctl) {
                fprintf(stderr, "  no hotplugctl given: skipped\n");
                return;
        }
        rec_event(w, 1, 1000, REAL0, "/devices/virtual/net/c0", "net");
        rec_run(w, 1, 1500, 3000, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);

        /* On a terminal: text. */
        o = run_ctl(true, (const char *const[]){ path, NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check(strstr(o, "1 agent run(s), 1 event(s)") && strstr(o, "key: . waiting"));
        check(!strstr(o, "<svg"));
        free(o);
        /* Into a pipe: SVG. */
        o = run_ctl(false, (const char *const[]){ path, NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check(strncmp(o, "<?xml version=\"1.0\"", 19) == 0 && strstr(o, "</svg>\n"));
        free(o);
        /* Forced either way. */
        o = run_ctl(true, (const char *const[]){ path, "--svg", NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check(strstr(o, "<?xml version=\"1.0\"") && strstr(o, "</svg>"));
        free(o);
        o = run_ctl(false, (const char *const[]){ "--text", path, NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check(strstr(o, "key: . waiting") && !strstr(o, "<svg"));
        free(o);
        /* -o on a terminal: SVG into the file, nothing on the terminal. */
        snprintf(out, sizeof(out), "%s/choice.svg", dir);
        o = run_ctl(true, (const char *const[]){ path, "-o", out, NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check_str(o, "");
        free(o);
        snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' 1", python, svg_check, out);
        check_int(system(cmd), 0);
        /* Both, or text into a file: usage errors that say so. */
        snprintf(path, sizeof(path), "%s/choice.rec", dir);
        o = run_ctl(false, (const char *const[]){ path, "--text", "--svg", NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 64);
        free(o);
        o = run_ctl(false, (const char *const[]){ path, "--text", "-o", out, NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 64);
        free(o);
        o = run_ctl(false, (const char *const[]){ "--help", NULL }, &status);
        check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        check(strstr(o, "      --svg ") && strstr(o, "Text on a terminal, SVG otherwise."));
        free(o);
}

static void cleanup(void)
{
        (void)test_dir_remove(dir);
}

int main(int argc, char *argv[])
{
        check(argc >= 4);
        hotplugctl = argv[1];
        python = argv[2];
        svg_check = argv[3];
        check(setenv("TZ", "UTC", 1) == 0);
        tzset();
        check(mkdtemp(dir));
        atexit(cleanup);
        run_test(test_subrows);
        run_test(test_packing_random);
        run_test(test_queued);
        run_test(test_script_names);
        run_test(test_udev_wait);
        run_test(test_outcomes);
        run_test(test_wall_clock);
        run_test(test_format_choice);
        return 0;
}
