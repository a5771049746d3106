/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl blame of a recording (ctl/blame.h): the waits of each event
 * told apart from its WAIT records.  An event waited for order until the
 * run it waited for ended, for a slot from then until its dispatch (its
 * last order or slot WAIT record), and for udevd (after-udev: a WAIT record
 * whose blocker is the event itself, written when that wait ended) from its
 * dispatch, or its arrival, until that record; each sum in the rows, the
 * totals, the text and the JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/blame.h"
#include "ctl/timeline.h"
#include "test.h"
#include "test-dir.h"
#include "timeline-test.h"

#define MS USEC_PER_MSEC
#define T0 ((usec_t)5 * USEC_PER_SEC)

static char dir[] = "/tmp/test-blame.XXXXXX";

static const struct blame_row *row_of(const struct blame *b, enum blame_group g, const char *name)
{
        for (size_t i = 0; i < b->n[g]; i++)
                if (strcmp(b->rows[g][i].name, name) == 0)
                        return &b->rows[g][i];
        check(!"no such row");
        return NULL;
}

static void check_waits(const struct blame_row *r, usec_t order, usec_t slot, usec_t udev)
{
        check_int(r->order_wait, order);
        check_int(r->slot_wait, slot);
        check_int(r->udev_wait, udev);
}

/* @b rendered by @render into memory. */
static char *rendered(const struct blame *b, int (*render)(const struct blame *b, size_t top, FILE *f))
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        check(f);
        check_int(render(b, 0, f), 0);
        check_int(fclose(f), 0);
        return buf;
}

/*
 * 1 runs at once from 0 to 50 ms; 2 (from 5 ms) waits for it, is dispatched
 * at 50 and waits for udevd until 80; 3 (from 10) waits for a slot until
 * 30, for udevd until 60, in vain, and starts a little later; 4 (from 20)
 * waits for udevd from its arrival until 45.
 */
static void test_waits_of_a_recording(void)
{
        char path[300], *txt, *json;
        struct record_writer *w = tl_test_open(dir, "waits.rec", path, sizeof(path));
        struct timeline *tl;
        struct blame *b;
        size_t problems;

        tl_test_datagram(w, 1, T0, T0, "add", "/devices/virtual/net/b1", "net");
        tl_test_start(w, 1, T0, 101, "/sbin/hotplug");
        tl_test_datagram(w, 2, T0 + 5 * MS, T0, "change", "/devices/virtual/net/b1", "net");
        tl_test_datagram(w, 3, T0 + 10 * MS, T0, "add", "/devices/virtual/block/b3", "block");
        tl_test_datagram(w, 4, T0 + 20 * MS, T0, "add", "/devices/virtual/block/b4", "block");
        tl_test_wait(w, 3, 0, T0 + 30 * MS, "a free slot (limit 1)");
        tl_test_wait(w, 4, 4, T0 + 45 * MS, "udevd");
        tl_test_start(w, 4, T0 + 45 * MS, 104, "/sbin/hotplug");
        tl_test_end(w, 1, T0 + 50 * MS, 101, RECORD_AGENT_EXITED, 0);
        tl_test_wait(w, 2, 1, T0 + 50 * MS, "same device /devices/virtual/net/b1");
        tl_test_end(w, 4, T0 + 55 * MS, 104, RECORD_AGENT_EXITED, 0);
        tl_test_wait(w, 3, 3, T0 + 60 * MS, "udevd, not broadcast in time");
        tl_test_start(w, 3, T0 + 60 * MS + 500, 103, "/sbin/hotplug");
        tl_test_end(w, 3, T0 + 70 * MS, 103, RECORD_AGENT_EXITED, 0);
        tl_test_wait(w, 2, 2, T0 + 80 * MS, "udevd");
        tl_test_start(w, 2, T0 + 80 * MS, 102, "/sbin/hotplug");
        tl_test_end(w, 2, T0 + 90 * MS, 102, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);

        tl = tl_test_load(path, TIMELINE_LANES_DEVICE, &problems);
        check_int(problems, 0);
        check_int(blame_new(&b), 0);
        check_int(blame_add_timeline(b, tl), 0);
        check_int(blame_finish(b), 0);
        check_int(b->events, 4);
        check_int(b->runs, 4);
        /* 2: 45 ms for order (5 to 50), 30 for udevd; 3: 20 for a slot, 30 for udevd and the
         * half millisecond to its start for the slot; 4: 25 for udevd. */
        check_int(b->order_wait, 45 * MS);
        check_int(b->slot_wait, 20 * MS + 500);
        check_int(b->udev_wait, 85 * MS);
        check_waits(row_of(b, BLAME_DEVICE, "/devices/virtual/net/b1"), 45 * MS, 0, 30 * MS);
        check_waits(row_of(b, BLAME_DEVICE, "/devices/virtual/block/b3"), 0, 20 * MS + 500, 30 * MS);
        check_waits(row_of(b, BLAME_DEVICE, "/devices/virtual/block/b4"), 0, 0, 25 * MS);
        check_waits(row_of(b, BLAME_SUBSYSTEM, "block"), 0, 20 * MS + 500, 55 * MS);
        check_waits(row_of(b, BLAME_PROGRAM, "/sbin/hotplug"), 45 * MS, 20 * MS + 500, 85 * MS);

        txt = rendered(b, blame_render_text);
        fputs(txt, stderr);
        check(strstr(txt, "4 events, 4 agent runs (0 failed): 80 ms in agents, 45 ms waiting for order, 21 ms for "
                          "a free slot, 85 ms for udevd\n"));
        check(strstr(txt, "SEQNUM WAIT ORDER  WAIT SLOT WAIT UDEVD  DEVICE\n"));
        check(strstr(txt, "     60 ms       2      -      50 ms        1      45 ms          0      30 ms  "
                          "/devices/virtual/net/b1\n"));
        check(strstr(txt, "    9.5 ms       1      -     9.5 ms        3          0      21 ms      30 ms  "
                          "/devices/virtual/block/b3\n"));
        json = rendered(b, blame_render_json);
        fputs(json, stderr);
        check(strstr(json, "\"order_wait_usec\":45000,\"slot_wait_usec\":20500,\"udev_wait_usec\":85000,"));
        check(strstr(json, "\"name\":\"/devices/virtual/block/b4\",") &&
              strstr(strstr(json, "\"name\":\"/devices/virtual/block/b4\","),
                     "\"order_wait_usec\":0,\"slot_wait_usec\":0,\"udev_wait_usec\":25000}"));
        free(txt);
        free(json);
        blame_free(b);
        timeline_free(tl);
}

/*
 * Two busy periods.  The first: 1 (a parent) runs from 0 to 100 ms and
 * fails, 2 waits for it and runs to 150, 3 runs from 10 to 20.  The second,
 * from 2 s: 5 runs to 2.01 s; 6 arrives at 2.005 s, waits for 5, for a slot
 * until 2.02 s and runs to 2.3 s; 7 waits for 6 and runs two scripts, one
 * ending at 2.4 s, the other killed by signal 9 at 2.35 s.  The chain that
 * ended last is 7, 6, 5; its period settled in 400 ms with 3 events.
 */
static void test_critical_chain(void)
{
        const usec_t S2 = T0 + 2 * USEC_PER_SEC;
        char path[300], *buf = NULL;
        struct record_writer *w = tl_test_open(dir, "chain.rec", path, sizeof(path));
        struct blame_chain c = { 0 };
        struct timeline *tl;
        struct blame *b;
        size_t problems, size = 0;
        FILE *f;

        tl_test_datagram(w, 1, T0, T0, "add", "/devices/p", "usb");
        tl_test_start(w, 1, T0, 101, "/sbin/hotplug");
        tl_test_datagram(w, 2, T0 + 1 * MS, T0, "add", "/devices/p/c", "usb");
        tl_test_datagram(w, 3, T0 + 10 * MS, T0, "add", "/devices/q", "net");
        tl_test_start(w, 3, T0 + 10 * MS, 103, "/sbin/hotplug");
        tl_test_end(w, 3, T0 + 20 * MS, 103, RECORD_AGENT_EXITED, 0);
        tl_test_end(w, 1, T0 + 100 * MS, 101, RECORD_AGENT_EXITED, 1);
        tl_test_wait(w, 2, 1, T0 + 100 * MS, "parent /devices/p");
        tl_test_start(w, 2, T0 + 100 * MS, 102, "/sbin/hotplug");
        tl_test_end(w, 2, T0 + 150 * MS, 102, RECORD_AGENT_EXITED, 0);

        tl_test_datagram(w, 5, S2, T0, "add", "/devices/r", "block");
        tl_test_start(w, 5, S2, 105, "/sbin/hotplug");
        tl_test_datagram(w, 6, S2 + 5 * MS, T0, "add", "/devices/r/s", "block");
        tl_test_datagram(w, 7, S2 + 6 * MS, T0, "change", "/devices/r/s", "block");
        tl_test_end(w, 5, S2 + 10 * MS, 105, RECORD_AGENT_EXITED, 0);
        tl_test_wait(w, 6, 5, S2 + 10 * MS, "parent /devices/r");
        tl_test_wait(w, 6, 0, S2 + 20 * MS, "a free slot (limit 1)");
        tl_test_start(w, 6, S2 + 20 * MS, 106, "/sbin/hotplug");
        tl_test_end(w, 6, S2 + 300 * MS, 106, RECORD_AGENT_EXITED, 0);
        tl_test_wait(w, 7, 6, S2 + 300 * MS, "same device /devices/r/s");
        tl_test_start(w, 7, S2 + 300 * MS, 107, "/etc/hotplug.d/block/10-a.hotplug");
        tl_test_end(w, 7, S2 + 350 * MS, 107, RECORD_AGENT_SIGNALED, 9);
        tl_test_start(w, 7, S2 + 350 * MS, 108, "/etc/hotplug.d/block/20-b.hotplug");
        tl_test_end(w, 7, S2 + 400 * MS, 108, RECORD_AGENT_EXITED, 0);
        record_writer_free(w);

        tl = tl_test_load(path, TIMELINE_LANES_DEVICE, &problems);
        check_int(problems, 0);
        check_int(blame_chain_of_timeline(&c, tl), 0);
        check(c.known && c.settled);
        check_int(c.events, 3);
        check_int(c.span, 400 * MS);
        check_int(c.cut_seqnum, 0);
        check_int(c.n_links, 3);
        check_int(c.links[0].seqnum, 7);
        check_int(c.links[0].blocker, 6);
        check_int(c.links[0].at, 300 * MS);
        check_int(c.links[0].ran, 100 * MS);
        check_int(c.links[0].waits.order, 294 * MS);
        check_int(c.links[0].runs, 2);
        check_int(c.links[0].failed_runs, 1);
        check_str(c.links[0].failed, "/etc/hotplug.d/block/10-a.hotplug");
        check_str(c.links[0].failed_status, "signal 9");
        check_int(c.links[1].seqnum, 6);
        check_int(c.links[1].blocker, 5);
        check_int(c.links[1].waits.order, 5 * MS);
        check_int(c.links[1].waits.slot, 10 * MS);
        check(!c.links[1].failed);
        check_int(c.links[2].seqnum, 5);
        check_int(c.links[2].blocker, 0);
        check_int(c.links[2].at, 0);
        check_str(c.links[2].devpath, "/devices/r");

        f = open_memstream(&buf, &size);
        check(f);
        check_int(blame_chain_render_text(&c, f), 0);
        check_int(fclose(f), 0);
        fputs(buf, stderr);
        check(strstr(buf, "settled in 400 ms: 3 events,"));
        check(strstr(buf, "\n7 change block /devices/r/s @300 ms +100 ms  waited 294 ms for order  FAILED "
                          "/etc/hotplug.d/block/10-a.hotplug (signal 9)\n"));
        check(strstr(buf, "\n└─6 add block /devices/r/s @20 ms +280 ms  waited 5.0 ms for order, 10 ms for a free "
                          "slot\n"));
        check(strstr(buf, "\n  └─5 add block /devices/r @0 +10 ms\n"));
        free(buf);
        buf = NULL;
        f = open_memstream(&buf, &size);
        check(f);
        check_int(blame_chain_render_json(&c, f), 0);
        check_int(fclose(f), 0);
        check(strstr(buf, "{\"events\":3,\"span_usec\":400000,\"settled\":true,\"cut_seqnum\":0,\"chain\":[{\"seqnum\":7,"));
        check(strstr(buf, "\"failed_program\":\"/etc/hotplug.d/block/10-a.hotplug\",\"failed_status\":\"signal 9\"}"));
        free(buf);
        blame_chain_clear(&c);

        /* The tables count the failed runs, and the events with one. */
        check_int(blame_new(&b), 0);
        check_int(blame_add_timeline(b, tl), 0);
        check_int(blame_finish(b), 0);
        check_int(b->failed_runs, 2);
        check_int(b->failed_events, 2);
        check_int(row_of(b, BLAME_SUBSYSTEM, "usb")->failed, 1);
        check_int(row_of(b, BLAME_SUBSYSTEM, "block")->failed, 1);
        check_int(row_of(b, BLAME_PROGRAM, "/sbin/hotplug")->failed, 1);
        check_int(row_of(b, BLAME_PROGRAM, "/etc/hotplug.d/block/20-b.hotplug")->failed, 0);
        check_int(row_of(b, BLAME_DEVICE, "/devices/r/s")->failed, 1);
        check_int(row_of(b, BLAME_DEVICE, "/devices/r/s")->count, 2);
        blame_free(b);
        timeline_free(tl);
}

/* A chain whose first event waited for one the recording does not hold is cut there. */
static void test_critical_chain_cut(void)
{
        char path[300];
        struct record_writer *w = tl_test_open(dir, "cut.rec", path, sizeof(path));
        struct blame_chain c = { 0 };
        struct timeline *tl;
        size_t problems;

        tl_test_datagram(w, 9, T0, T0, "add", "/devices/p/c", "usb");
        tl_test_wait(w, 9, 8, T0 + 5 * MS, "parent /devices/p");
        tl_test_start(w, 9, T0 + 5 * MS, 109, "/sbin/hotplug");
        record_writer_free(w); /* still running at the end */

        tl = tl_test_load(path, TIMELINE_LANES_DEVICE, &problems);
        check_int(blame_chain_of_timeline(&c, tl), 0);
        check(c.known && !c.settled);
        check_int(c.n_links, 1);
        check_int(c.cut_seqnum, 8);
        check_int(c.links[0].failed_runs, 0);
        blame_chain_clear(&c);
        timeline_free(tl);
}

static void cleanup(void)
{
        (void)test_dir_remove(dir);
}

int main(void)
{
        check(mkdtemp(dir));
        atexit(cleanup);
        run_test(test_waits_of_a_recording);
        run_test(test_critical_chain);
        run_test(test_critical_chain_cut);
        return 0;
}
