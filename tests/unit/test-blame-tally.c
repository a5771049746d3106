/* SPDX-License-Identifier: MIT */
/*
 * A blame table of the running daemon (loop/blame-tally.h): sums per name
 * (the waits for order, a slot and udevd each apart), the slowest with its SEQNUM, names past the bound summed as "(other)",
 * rows visited longest total first.
 */
#include <string.h>

#include "loop/blame-tally.h"
#include "test.h"

static struct control_blame_row seen[8];
static size_t n_seen;
static char names[8][32];

static void see(const struct control_blame_row *r, void *arg)
{
        check(n_seen < 8);
        check_int(r->group, CONTROL_BLAME_DEVICE);
        snprintf(names[n_seen], sizeof(names[n_seen]), "%s", r->name);
        seen[n_seen] = *r;
        seen[n_seen].name = names[n_seen];
        n_seen++;
}

static void test_sums_and_bound(void)
{
        struct tally t;

        tally_init(&t, 3);
        tally_add(&t, "/b", 1, 100, &(struct tally_waits){ 10, 1, 100 }, true);
        tally_add(&t, "/a", 2, 50, &(struct tally_waits){ 0 }, false);
        tally_add(&t, "/b", 3, 300, &(struct tally_waits){ 20, 2, 200 }, true);
        tally_add(&t, "/c", 4, 10, &(struct tally_waits){ 0 }, false);
        tally_add(&t, "/d", 6, 1000, &(struct tally_waits){ 5, 0, 0 }, true); /* past the bound: "(other)" */
        tally_add(&t, "/e", 7, 2000, &(struct tally_waits){ 0, 7, 70 }, false);
        tally_add(&t, "/a", 8, 60, &(struct tally_waits){ 0 }, false);        /* a known name still has its row */
        check_int(t.n, 3);
        check_int(tally_visit(&t, CONTROL_BLAME_DEVICE, see, NULL), 0);
        check_int(n_seen, 4);
        check_str(seen[0].name, "(other)");
        check_int(seen[0].count, 2);
        check_int(seen[0].total, 3000);
        check_int(seen[0].slowest, 2000);
        check_int(seen[0].slowest_seqnum, 7);
        check_int(seen[0].order_wait, 5);
        check_int(seen[0].slot_wait, 7);
        check_int(seen[0].udev_wait, 70);
        check_int(seen[0].failed, 1);
        check_str(seen[1].name, "/b");
        check_int(seen[1].count, 2);
        check_int(seen[1].total, 400);
        check_int(seen[1].slowest, 300);
        check_int(seen[1].slowest_seqnum, 3);
        check_int(seen[1].order_wait, 30);
        check_int(seen[1].slot_wait, 3);
        check_int(seen[1].udev_wait, 300);
        check_int(seen[1].failed, 2);
        check_str(seen[2].name, "/a");
        check_int(seen[2].count, 2);
        check_int(seen[2].total, 110);
        check_int(seen[2].slowest_seqnum, 8);
        check_int(seen[2].udev_wait, 0);
        check_int(seen[2].failed, 0);
        check_str(seen[3].name, "/c");
        tally_clear(&t);
        check_int(t.n, 0);
        check_int(t.max, 3);
        n_seen = 0;
        check_int(tally_visit(&t, CONTROL_BLAME_DEVICE, see, NULL), 0);
        check_int(n_seen, 0);
        tally_add(&t, NULL, 9, 1, &(struct tally_waits){ 0 }, false);
        check_str(t.v[0].name, "(unknown)");
        tally_clear(&t);
}

int main(void)
{
        run_test(test_sums_and_bound);
        return 0;
}
