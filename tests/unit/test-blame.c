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
        check(strstr(txt, "4 events, 4 agent runs: 79.5 ms in agents, 45.0 ms waiting for order, 20.5 ms for a "
                          "free slot, 85.0 ms for udevd\n"));
        check(strstr(txt, "  WAIT ORDER    WAIT SLOT   WAIT UDEVD  DEVICE\n"));
        check(strstr(txt, "      45.0 ms       0.0 ms      30.0 ms  /devices/virtual/net/b1\n"));
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

static void cleanup(void)
{
        (void)test_dir_remove(dir);
}

int main(void)
{
        check(mkdtemp(dir));
        atexit(cleanup);
        run_test(test_waits_of_a_recording);
        return 0;
}
