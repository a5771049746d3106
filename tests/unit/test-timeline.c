/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl timeline: a burst synthesised with the recording writer (veth
 * pairs with queue children, parents and children waiting on each other,
 * failures, a timeout, an exec failure, an unfinished run, a gap and an
 * overflow) read back and drawn.  The SVG must be well-formed XML (xmllint,
 * when installed) with exactly one bar element per agent run; the text
 * rendering is checked line by line.  Degenerate recordings (empty, only
 * gaps, runs without events, a run without end, zero duration, one event)
 * draw too, and hotplugctl timeline -o (argv[1]: the built hotplugctl)
 * leaves no partial output or temporary file behind, even when killed
 * mid-write.  HOTPLUGD_TIMELINE_KEEP=DIR keeps the SVGs there for looking
 * at.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/record.h"
#include "test-dir.h"
#include "test.h"
#include "timeline-test.h"

static char dir[] = "/tmp/test-timeline.XXXXXX";

struct synth {
        struct record_writer *w;
        uint64_t seqnum;
        usec_t now;
        size_t runs, waits;
        uint32_t rnd;
};

static uint32_t rnd(struct synth *s)
{
        s->rnd = s->rnd * 1103515245u + 12345u;
        return (s->rnd >> 8) & 0xffff;
}

static void datagram(struct synth *s, const char *action, const char *devpath, const char *subsystem)
{
        tl_test_datagram(s->w, s->seqnum, s->now, 1700000000000000 + s->now, action, devpath, subsystem);
}

/* One event: received now, its agent runs after @after (a blocker's end, or 0), for @dur µs. */
static usec_t event(struct synth *s, const char *action, const char *devpath, const char *subsystem,
                    uint64_t blocker, usec_t after, const char *why, enum record_agent_status st, int value)
{
        usec_t start, dur = 1000 + (usec_t)rnd(s) % 14000;

        s->seqnum++;
        s->now += 200 + rnd(s) % 400;
        datagram(s, action, devpath, subsystem);
        start = MAX(s->now + 50, after + 30);
        if (blocker && after > s->now) {
                check_int(record_append(s->w, &(struct record){ .type = RECORD_WAIT,
                                                                .wait = { s->seqnum, blocker, s->now, why } }),
                          0);
                s->waits++;
        }
        tl_test_start(s->w, s->seqnum, start, 1000 + (uint32_t)s->seqnum, "/sbin/hotplug");
        tl_test_end(s->w, s->seqnum, start + dur, 1000 + (uint32_t)s->seqnum, st, value);
        s->runs++;
        return start + dur;
}

/* @n_pairs devices, each: add parent, add 2 queue children (wait on the parent), remove children, remove parent. */
static void burst(struct synth *s, unsigned first, unsigned n_pairs)
{
        for (unsigned i = first; i < first + n_pairs; i++) {
                char parent[128], rx[160], tx[160], why[200];
                uint64_t p_seq, c1, c2;
                usec_t p_end, e1, e2;
                bool bad = i % 7 == 3;

                snprintf(parent, sizeof(parent), "/devices/virtual/net/veth%u", i);
                snprintf(rx, sizeof(rx), "%s/queues/rx-0", parent);
                snprintf(tx, sizeof(tx), "%s/queues/tx-0", parent);
                snprintf(why, sizeof(why), "parent %s", parent);
                p_end = event(s, "add", parent, "net", 0, 0, NULL, RECORD_AGENT_EXITED, bad ? 1 : 0);
                p_seq = s->seqnum;
                e1 = event(s, "add", rx, "queues", p_seq, p_end, why, RECORD_AGENT_EXITED, 0);
                c1 = s->seqnum;
                e2 = event(s, "add", tx, "queues", p_seq, p_end, why, i % 11 == 5 ? RECORD_AGENT_SIGNALED : RECORD_AGENT_EXITED,
                           i % 11 == 5 ? 15 : 0);
                c2 = s->seqnum;
                snprintf(why, sizeof(why), "same devpath %s", rx);
                e1 = event(s, "remove", rx, "queues", c1, e1, why, RECORD_AGENT_EXITED, 0);
                snprintf(why, sizeof(why), "same devpath %s", tx);
                e2 = event(s, "remove", tx, "queues", c2, e2, why, RECORD_AGENT_EXITED, 0);
                snprintf(why, sizeof(why), "child %s", tx);
                event(s, "remove", parent, "net", s->seqnum, MAX(e1, e2), why,
                      i == 2 ? RECORD_AGENT_TIMEOUT : RECORD_AGENT_EXITED, i == 2 ? 9 : 0);
        }
}

/* A burst plus the odd cases; return the path.  *runs and *waits get the expected counts. */
static const char *synthesise(const char *name, unsigned n_pairs, size_t *runs, size_t *waits)
{
        static char path[300];
        struct synth s = { .seqnum = 1000, .now = 5000000, .rnd = 42 };

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        check_int(record_writer_open(path, &s.w), 0);
        burst(&s, 0, n_pairs / 2);
        /* Lost events, then an overflow, then more. */
        check_int(record_append(s.w, &(struct record){ .type = RECORD_OVERFLOW, .overflow = { 1, s.now + 100 } }), 0);
        check_int(record_append(s.w, &(struct record){ .type = RECORD_GAP,
                                                       .gap = { s.now + 200, s.seqnum + 1, s.seqnum + 5,
                                                                RECORD_GAP_OVERFLOW } }),
                  0);
        s.seqnum += 5;
        burst(&s, n_pairs / 2, n_pairs - n_pairs / 2);
        /* An agent that could not be executed, and one still running at the end; odd bytes in names. */
        s.seqnum++;
        s.now += 500;
        datagram(&s, "change", "/devices/platform/serial8250/tty/ttyS0", "tty");
        check_int(record_append(s.w, &(struct record){ .type = RECORD_AGENT_END,
                                                       .agent_end = { s.seqnum, s.now + 10, 0,
                                                                      RECORD_AGENT_EXEC_FAILED, ENOENT } }),
                  0);
        s.seqnum++;
        datagram(&s, "add", "/devices/virtual/misc/<odd>&\"name'", "misc");
        check_int(record_append(s.w, &(struct record){ .type = RECORD_AGENT_START,
                                                       .agent_start = { s.seqnum, s.now + 50, 99,
                                                                        "/etc/hotplug.d/misc/a<b>&\x01\xff.hotplug" } }),
                  0);
        record_writer_free(s.w);
        *runs = s.runs + 2;
        *waits = s.waits;
        return path;
}

static size_t problems;

static struct timeline *load(const char *path, enum timeline_lanes by)
{
        return tl_test_load(path, by, &problems);
}

static size_t count(const char *hay, const char *needle)
{
        size_t n = 0;

        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static char *render_svg(const struct timeline *tl, const char *name, char **ret_path)
{
        static char path[300];
        size_t size;
        char *buf = tl_test_svg(tl, "hotplugd timeline: test <burst> & co", &size);
        const char *keep = getenv("HOTPLUGD_TIMELINE_KEEP");
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", keep ? keep : dir, name);
        f = fopen(path, "we");
        check(f);
        check(fwrite(buf, 1, size, f) == size);
        fclose(f);
        *ret_path = path;
        return buf;
}

/* Well-formed, and exactly @bars bar elements as an XML reader counts them. */
static void check_xml(const char *path, size_t bars)
{
        char cmd[400];

        if (system("command -v xmllint >/dev/null 2>&1") != 0) {
                fprintf(stderr, "  xmllint not installed (Debian libxml2-utils): well-formedness not checked\n");
                return;
        }
        snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", path);
        check_int(system(cmd), 0);
        snprintf(cmd, sizeof(cmd),
                 "test \"$(xmllint --xpath \"count(//*[local-name()='rect'][contains(concat(' ',@class,' '),' bar ')])\" "
                 "'%s')\" = %zu",
                 path, bars);
        check_int(system(cmd), 0);
}

static void test_small_svg(void)
{
        size_t runs, waits;
        const char *rec = synthesise("small.rec", 6, &runs, &waits);
        struct timeline *tl = load(rec, TIMELINE_LANES_DEVICE);
        char *svg, *path;

        check_int(tl->n_runs, runs);
        check_int(tl->n_waits, waits);
        check_int(tl->n_lanes, 6 * 3 + 2);
        check_int(tl->n_marks, 2);
        check(waits > 0);
        svg = render_svg(tl, "small.svg", &path);
        check_xml(path, runs);
        check_int(count(svg, "<rect class=\"bar "), runs);
        check_int(count(svg, "<rect class=\"bar exit\""), 1);   /* veth3 add */
        check_int(count(svg, "<rect class=\"bar exec\""), 1);   /* the exec failure */
        check_int(count(svg, "<rect class=\"bar signal\""), 1); /* veth5 tx */
        check_int(count(svg, "<rect class=\"bar timeout\""), 1);
        check_int(count(svg, "<rect class=\"bar running\""), 1);
        check_int(count(svg, "<path class=\"wait\""), waits + 1); /* plus the legend's */
        check_int(count(svg, "<line class=\"gap\""), 2);          /* the mark and the legend */
        check_int(count(svg, "<line class=\"overflow\""), 2);
        /* A labelled bar, named by its program: the recording has runs of two (hotplug.d). */
        check(tl->many_programs && strstr(svg, ">1001 add hotplug</text>"));
        check(strstr(svg, "misc/&lt;odd&gt;&amp;&quot;name&apos;"));
        check(strstr(svg, "a&lt;b&gt;&amp;\\x01\\xff.hotplug"));
        check(!strstr(svg, "<odd>"));
        free(svg);

        /* By subsystem: net, queues, tty, misc. */
        tl = timeline_free(tl);
        tl = load(rec, TIMELINE_LANES_SUBSYSTEM);
        check_int(tl->n_lanes, 4);
        check_str(tl->lanes[0].name, "net");
        check_str(tl->lanes[1].name, "queues");
        timeline_free(tl);
}

static void test_big_svg(void)
{
        size_t runs, waits;
        const char *rec = synthesise("big.rec", 2000 / 6, &runs, &waits);
        struct timeline *tl = load(rec, TIMELINE_LANES_DEVICE);
        char *svg, *path, more[64];
        size_t drawn = 0;

        check_int(tl->n_runs, runs);
        check(runs >= 2000);
        svg = render_svg(tl, "big.svg", &path);
        check_xml(path, runs);
        check_int(count(svg, "<rect class=\"bar "), runs);
        /* Rows are capped; the last row says how many lanes it holds. */
        check(tl->n_rows > HP_TIMELINE_MAX_LANES);
        for (size_t i = 0; i < tl->n_lanes; i++)
                drawn += tl->lanes[i].first_row < HP_TIMELINE_MAX_LANES - 1;
        snprintf(more, sizeof(more), ">(%zu more lanes)<", tl->n_lanes - drawn);
        check(strstr(svg, more));
        check_int(count(svg, "<text class=\"lane-label\""), drawn + 1);
        free(svg);
        timeline_free(tl);
}

static void test_text(void)
{
        size_t runs, waits, lines = 0;
        const char *rec = synthesise("text.rec", 3, &runs, &waits);
        struct timeline *tl = load(rec, TIMELINE_LANES_DEVICE);
        char *txt = tl_test_text(tl, 40), *save = NULL;

        fputs(txt, stderr);
        check(tl->many_programs); /* /sbin/hotplug and a hotplug.d script: run lines end in the program's name */
        for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                const char *end = strrchr(l, '|');
                size_t len = end ? (size_t)(end - l) + 1 : 0;
                double a, b;

                /* A run line (start and end first) has a 42-column bar with at least one mark in it,
                 * then nothing (a run that never started) or its program's name. */
                if (sscanf(l, "%lf %lf", &a, &b) == 2 && len > 42 && l[len - 42] == '|' &&
                    strpbrk(l + len - 41, "#xsT!>")) {
                        lines++;
                        check(l[len] == '\0' || (l[len] == ' ' && l[len + 1] && l[len + 1] != ' '));
                }
        }
        check_int(lines, runs);
        free(txt);

        txt = tl_test_text(tl, 40);
        /* The first run starts at 0 (t0 is the first event) and its bar starts in column 0. */
        check(strstr(txt, "20 agent run(s), 20 event(s), 11 lane(s) by device"));
        check(strstr(txt, "\n     0.050       8.136        1001  22:13:25.000  add      exit 0          "
                          "/devices/virtual/net/veth0                |#########                               | hotplug\n"));
        check(strstr(txt, "^ SEQNUM=1002 waited for SEQNUM=1001 (parent /devices/virtual/net/veth0)"));
        check(strstr(txt, "---- receive buffer overflow: the kernel dropped events ----"));
        check(strstr(txt, "---- SEQNUM gap 1007-1011 (5 missing, overflow) ----"));
        check(strstr(txt, "timeout, sig 9"));
        check(strstr(txt, "exec ENOENT"));
        check(strstr(txt, "running"));
        free(txt);
        timeline_free(tl);
}

/* A recording of events only (hotplugctl record) lists the events; a torn copy still draws. */
static void test_events_only_and_torn(void)
{
        char path[300], *txt, *svg, *p;
        struct record_writer *w;
        struct timeline *tl;
        struct synth s = { .seqnum = 50, .now = 1000 };
        uint64_t torn_at;

        snprintf(path, sizeof(path), "%s/events.rec", dir);
        check_int(record_writer_open(path, &w), 0);
        s.w = w;
        for (int i = 0; i < 3; i++) {
                s.seqnum++;
                s.now += 1500;
                datagram(&s, "change", "/devices/virtual/net/lo", "net");
        }
        /* Not a valid uevent: left out of the model, counted. */
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 0, s.now + 10, "libudev\0junk", 12 } }),
                  0);
        /* Then a record torn by a crash. */
        torn_at = record_writer_size(w) + 10;
        check_int(record_append(w, &(struct record){ .type = RECORD_OVERFLOW, .overflow = { 1, s.now + 20 } }), 0);
        record_writer_free(w);
        check(truncate(path, (off_t)torn_at) == 0);

        tl = load(path, TIMELINE_LANES_DEVICE);
        check_int(tl->n_runs, 0);
        check_int(tl->n_events, 3);
        check_int(tl->n_marks, 0);
        check_int(tl->rejected, 1);
        check_int(problems, 1);
        txt = tl_test_text(tl, 40);
        fputs(txt, stderr);
        check(strstr(txt, "no agent runs in this recording; its events:"));
        check(strstr(txt, "     1.500          52  22:13:20.004  change   net          /devices/virtual/net/lo\n"));
        free(txt);
        svg = render_svg(tl, "events.svg", &p);
        check_xml(p, 0);
        check_int(count(svg, "<rect class=\"bar "), 0);
        check_int(count(svg, "<line class=\"event\" x1"), 3 + 1);
        free(svg);
        timeline_free(tl);
}

/* ---- degenerate recordings --------------------------------------------------- */

static const char *hotplugctl_path; /* argv[1]: the built hotplugctl, if given */

static struct record_writer *deg_open(const char *name, char *path, size_t size)
{
        char file[64];

        snprintf(file, sizeof(file), "%s.rec", name);
        return tl_test_open(dir, file, path, size);
}

static void deg_datagram(struct record_writer *w, uint64_t seqnum, usec_t t, const char *devpath)
{
        struct synth s = { .w = w, .seqnum = seqnum, .now = t };

        datagram(&s, "add", devpath, "net");
}

static void deg_start(struct record_writer *w, uint64_t seqnum, usec_t t)
{
        tl_test_start(w, seqnum, t, 7, "/sbin/hotplug");
}

static void deg_end(struct record_writer *w, uint64_t seqnum, usec_t t, enum record_agent_status st, int value)
{
        tl_test_end(w, seqnum, t, st == RECORD_AGENT_EXEC_FAILED ? 0 : 7, st, value);
}

/* Files in dir whose name ends in ".tmp". */
static size_t tmp_files(void)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        check(d);
        while ((e = readdir(d))) {
                size_t len = strlen(e->d_name);
                if (len >= 4 && strcmp(e->d_name + len - 4, ".tmp") == 0) {
                        fprintf(stderr, "  left behind: %s\n", e->d_name);
                        n++;
                }
        }
        closedir(d);
        return n;
}

/*
 * Run hotplugctl timeline with @args (NULL-terminated, after the verb);
 * @fsize > 0: under that RLIMIT_FSIZE, with SIGXFSZ killing it, or ignored
 * (the write fails with EFBIG) if @xfsz_ignored.  Return: the wait status.
 */
static int run_ctl(const char *const *args, rlim_t fsize, bool xfsz_ignored)
{
        const char *argv[16] = { hotplugctl_path, "timeline" };
        int status, i = 2;
        pid_t pid;

        for (; *args && i < 15; args++)
                argv[i++] = *args;
        argv[i] = NULL;
        pid = fork();
        check(pid >= 0);
        if (pid == 0) {
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                if (null >= 0)
                        (void)dup2(null, STDOUT_FILENO);
                if (fsize > 0) {
                        (void)setrlimit(RLIMIT_FSIZE, &(struct rlimit){ fsize, fsize });
                        (void)signal(SIGXFSZ, xfsz_ignored ? SIG_IGN : SIG_DFL);
                }
                execv(argv[0], (char **)argv);
                _exit(127);
        }
        check(waitpid(pid, &status, 0) == pid);
        return status;
}

/* Draw @rec with the model (SVG and text) and with hotplugctl (to a file, and as text). */
static void draw_degenerate(const char *rec, size_t runs, size_t events, size_t lanes)
{
        char out[320], *svg, *txt, *p;
        struct timeline *tl;
        struct stat st;
        int status;

        fprintf(stderr, "  %s\n", rec);
        tl = load(rec, TIMELINE_LANES_DEVICE);
        check_int(problems, 0);
        check_int(tl->n_runs, runs);
        check_int(tl->n_events, events);
        check_int(tl->n_lanes, lanes);
        check(tl->span >= USEC_PER_MSEC);
        for (size_t i = 0; i < tl->n_runs; i++)
                check(tl->runs[i].start <= tl->runs[i].end && tl->runs[i].end <= tl->span);
        svg = render_svg(tl, "degenerate.svg", &p);
        check_xml(p, runs);
        check_int(count(svg, "<rect class=\"bar "), runs);
        check(strstr(svg, "</svg>\n"));
        free(svg);
        txt = tl_test_text(tl, 40);
        fputs(txt, stderr);
        check(strstr(txt, " agent run(s), "));
        check(!!strstr(txt, "no events or agent runs in this recording\n") == (runs == 0 && events == 0));
        free(txt);
        timeline_free(tl);
        tl = load(rec, TIMELINE_LANES_SUBSYSTEM);
        txt = tl_test_text(tl, 40);
        free(txt);
        timeline_free(tl);

        if (!hotplugctl_path)
                return;
        snprintf(out, sizeof(out), "%s/out.svg", dir);
        (void)unlink(out);
        status = run_ctl((const char *const[]){ rec, "-o", out, NULL }, 0, false);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
        check(stat(out, &st) == 0 && st.st_size > 0);
        check_xml(out, runs);
        check_int(tmp_files(), 0);
        status = run_ctl((const char *const[]){ rec, "--text", NULL }, 0, false);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
        status = run_ctl((const char *const[]){ rec, "--lanes", "subsystem", NULL }, 0, false);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
}

/* Recordings with nothing to draw, or nearly: every one draws, and no ".tmp" file stays behind. */
static void test_degenerate(void)
{
        struct record_writer *w;
        char path[300];

        /* A fresh recording made while idle: the header only. */
        w = deg_open("idle", path, sizeof(path));
        record_writer_free(w);
        draw_degenerate(path, 0, 0, 0);

        /* Only a gap and an overflow. */
        w = deg_open("gaps", path, sizeof(path));
        check_int(record_append(w, &(struct record){ .type = RECORD_GAP,
                                                     .gap = { 5000, 10, 12, RECORD_GAP_UNEXPLAINED } }),
                  0);
        check_int(record_append(w, &(struct record){ .type = RECORD_OVERFLOW, .overflow = { 1, 9000 } }), 0);
        record_writer_free(w);
        draw_degenerate(path, 0, 0, 0);

        /* Agent runs whose events are not in the recording, and an exec failure that never started. */
        w = deg_open("runs", path, sizeof(path));
        deg_start(w, 20, 1000);
        deg_end(w, 20, 3000, RECORD_AGENT_EXITED, 0);
        deg_end(w, 21, 4000, RECORD_AGENT_EXEC_FAILED, ENOENT);
        record_writer_free(w);
        draw_degenerate(path, 2, 0, 1);

        /* A run that never ends, nothing else. */
        w = deg_open("noend", path, sizeof(path));
        deg_start(w, 30, 123456);
        record_writer_free(w);
        draw_degenerate(path, 1, 0, 1);

        /* Zero duration: event, start and end at the same instant (also at 0: times unknown). */
        for (usec_t t = 777, i = 0; i < 2; i++, t = 0) {
                w = deg_open(t ? "zero" : "zero0", path, sizeof(path));
                deg_datagram(w, 40 + i, t, "/devices/virtual/net/z0");
                deg_start(w, 40 + i, t);
                deg_end(w, 40 + i, t, t ? RECORD_AGENT_EXITED : RECORD_AGENT_SIGNALED, t ? 0 : 9);
                record_writer_free(w);
                draw_degenerate(path, 1, 1, 1);
        }

        /* One event. */
        w = deg_open("one", path, sizeof(path));
        deg_datagram(w, 50, 42, "/devices/virtual/net/one0");
        record_writer_free(w);
        draw_degenerate(path, 0, 1, 1);

        /* Times at the ends of the clock. */
        w = deg_open("far", path, sizeof(path));
        deg_datagram(w, 60, 1, "/devices/virtual/net/far0");
        deg_start(w, 60, 2);
        deg_end(w, 60, UINT64_MAX, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);
        draw_degenerate(path, 1, 1, 1);

        /* Only a run that never ends, started at the last instant of the clock. */
        w = deg_open("last", path, sizeof(path));
        deg_start(w, 70, UINT64_MAX);
        record_writer_free(w);
        draw_degenerate(path, 1, 0, 1);
}

/* hotplugctl timeline -o: the output appears whole or not at all, even when it fails or dies mid-write. */
static void test_output_file(void)
{
        size_t runs, waits;
        const char *rec;
        char out[320], tmp[330];
        struct stat st;
        int status, fd;

        if (!hotplugctl_path) {
                fprintf(stderr, "  no hotplugctl given: skipped\n");
                return;
        }
        rec = synthesise("out.rec", 60, &runs, &waits);
        snprintf(out, sizeof(out), "%s/out-killed.svg", dir);

        /* Killed mid-write (SIGXFSZ past a 4 KiB file size limit): no output and no temporary file. */
        status = run_ctl((const char *const[]){ rec, "-o", out, NULL }, 4096, false);
        check(WIFSIGNALED(status));
        check_int(WTERMSIG(status), SIGXFSZ);
        check(stat(out, &st) < 0 && errno == ENOENT);
        fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0) {
                close(fd);
                check_int(tmp_files(), 0);
        } else {
                /* Without O_TMPFILE (overlayfs before Linux 6.6) hotplugctl falls back to OUT.tmp. */
                fprintf(stderr, "  %s has no O_TMPFILE (%s): the fallback leaves OUT.tmp when killed\n", dir,
                        strerror(errno));
                snprintf(tmp, sizeof(tmp), "%s.tmp", out);
                check(unlink(tmp) == 0);
        }

        /* A write error (EFBIG with SIGXFSZ ignored): exit 1, no output, no temporary file. */
        status = run_ctl((const char *const[]){ rec, "-o", out, NULL }, 4096, true);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 1);
        check(stat(out, &st) < 0 && errno == ENOENT);
        check_int(tmp_files(), 0);

        /* The output path is a directory: exit 1, the directory untouched, no temporary file. */
        check(mkdir(out, 0700) == 0);
        status = run_ctl((const char *const[]){ rec, "-o", out, NULL }, 0, false);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 1);
        check(stat(out, &st) == 0 && S_ISDIR(st.st_mode));
        check_int(tmp_files(), 0);
        check(rmdir(out) == 0);

        /* An empty output name: exit 1, nothing written. */
        status = run_ctl((const char *const[]){ rec, "-o", "", NULL }, 0, false);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 1);
        check_int(tmp_files(), 0);

        /* An existing output is replaced whole. */
        check(close(open(out, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == 0);
        status = run_ctl((const char *const[]){ rec, "-o", out, NULL }, 0, false);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
        check_xml(out, runs);
        check_int(tmp_files(), 0);
}

static void cleanup(void)
{
        (void)test_dir_remove(dir);
}

int main(int argc, char *argv[])
{
        hotplugctl_path = argc > 1 ? argv[1] : NULL;
        /* Wall-clock times in the renderings are local time: make it one zone. */
        check(setenv("TZ", "UTC", 1) == 0);
        tzset();
        check(mkdtemp(dir));
        atexit(cleanup);
        run_test(test_small_svg);
        run_test(test_big_svg);
        run_test(test_text);
        run_test(test_events_only_and_torn);
        run_test(test_degenerate);
        run_test(test_output_file);
        return 0;
}
