/* SPDX-License-Identifier: MIT */
/*
 * The order hotplugctl trigger keeps with parallel writes (ctl/trigger-order.c):
 * the path order libudev sorts by, segments cut where a list leaves it, and
 * each device's nearest ancestor within its segment.
 */
#include "ctl/trigger-order.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_path_cmp(void)
{
        check(trigger_path_cmp("/a", "/a") == 0);
        check(trigger_path_cmp("/a", "/a/b") < 0);
        /* '/' before '-' and '.': a device's descendants follow it directly. */
        check(trigger_path_cmp("/a/b", "/a-b") < 0);
        check(trigger_path_cmp("/a.1", "/a/z") > 0);
        check(trigger_path_cmp("/a/b", "/a/c") < 0);
        check(trigger_path_cmp("/b", "/a/c") > 0);
}

static void test_segments(void)
{
        /* libudev's list: sorted, then dm and md moved to the end. */
        char *paths[] = { "/d/pci0", "/d/pci0/sda", "/d/pci0/sda/sda1", "/d/v/block/loop0", "/d/v/block/dm-0",
                          "/d/v/block/md0" };
        char *given[] = { "/d/b", "/d/a", "/d/a/x", "/d/c", "/d/c" };
        size_t want_paths[] = { 0, 0, 0, 0, 4, 4 }, want_given[] = { 0, 1, 1, 1, 4 }, s = 0;

        for (size_t i = 0; i < N(paths); i++) {
                s = trigger_segment(paths, i, s);
                check_int(s, want_paths[i]);
        }
        /* DEVICEs as given: each step back starts a segment; so does a repeat. */
        s = 99;
        for (size_t i = 0; i < N(given); i++) {
                s = trigger_segment(given, i, s);
                check_int(s, want_given[i]);
        }
}

static void test_parents(void)
{
        char *paths[] = { "/d/p",      "/d/p/a",   "/d/p/a/b/c", "/d/p/a-1", "/d/p/a.x/y",
                          "/d/p/a1/z", "/d/p0",    "/d/p0/q",    "/d/q/r" };
        size_t want[] = { TRIGGER_NO_PARENT, 0, 1, 0, 0, 0, TRIGGER_NO_PARENT, 6, TRIGGER_NO_PARENT };

        for (size_t i = 1; i < N(paths); i++)
                check(trigger_path_cmp(paths[i - 1], paths[i]) < 0);
        for (size_t i = 0; i < N(paths); i++)
                check_int(trigger_parent(paths, 0, i), want[i]);
        /* Only within the segment: an ancestor before @from does not count. */
        check_int(trigger_parent(paths, 1, 2), 1);
        check_int(trigger_parent(paths, 2, 3), TRIGGER_NO_PARENT);
        check_int(trigger_parent(paths, 7, 7), TRIGGER_NO_PARENT);
        /* "/" itself and a path of one component have none. */
        check_int(trigger_parent((char *[]){ "/", "/x" }, 0, 1), TRIGGER_NO_PARENT);
}

int main(void)
{
        run_test(test_path_cmp);
        run_test(test_segments);
        run_test(test_parents);
        return 0;
}
