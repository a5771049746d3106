/* SPDX-License-Identifier: MIT */
/* Replay timing: the pure clock, --speed parsing, and the iterator over a recording. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "replay.h"
#include "test.h"

static void test_clock(void)
{
        struct replay_clock c;

        replay_clock_init(&c, 1.0, 0);
        check_int(replay_clock_step(&c, 1000000), 0);     /* first item: at once */
        check_int(replay_clock_step(&c, 1250000), 250000);
        check_int(replay_clock_step(&c, 1250000), 0);     /* same time */
        check_int(replay_clock_step(&c, 1250500), 500);
        check_int(c.due, 250500);

        /* Twice as fast halves every delay; 0.5 doubles it. */
        replay_clock_init(&c, 2.0, 0);
        replay_clock_step(&c, 10);
        check_int(replay_clock_step(&c, 1000010), 500000);
        check_int(replay_clock_step(&c, 1000013), 2);     /* 1.5 rounds to 2 */
        replay_clock_init(&c, 0.5, 0);
        replay_clock_step(&c, 10);
        check_int(replay_clock_step(&c, 1010), 2000);

        /* Speed 0 (and negative): no waiting at all, but time still advances the base. */
        replay_clock_init(&c, 0, 0);
        replay_clock_step(&c, 10);
        check_int(replay_clock_step(&c, 99999999), 0);
        check_int(c.due, 0);
        replay_clock_init(&c, -3, 0);
        check(c.speed == 0);

        /* Long pauses are cut to max_delay (before scaling). */
        replay_clock_init(&c, 2.0, 10 * USEC_PER_SEC);
        replay_clock_step(&c, 1);
        check_int(replay_clock_step(&c, 1 + 3600 * USEC_PER_SEC), 5 * USEC_PER_SEC);

        /* Clock going back (appended after a reboot) or unknown (0): no wait, new base. */
        replay_clock_init(&c, 1.0, 0);
        replay_clock_step(&c, 5000000);
        check_int(replay_clock_step(&c, 1000), 0);
        check_int(replay_clock_step(&c, 0), 0);
        check_int(c.prev, 1000);
        check_int(replay_clock_step(&c, 3000), 2000);
        check_int(c.due, 2000);
}

static void test_speed_parse(void)
{
        double v = -1;

        check_int(replay_speed_from_string("1", &v), 0);
        check(v == 1.0);
        check_int(replay_speed_from_string("2.5", &v), 0);
        check(v == 2.5);
        check_int(replay_speed_from_string("max", &v), 0);
        check(v == 0);
        check_int(replay_speed_from_string("0", &v), 0);
        check(v == 0);
        check_int(replay_speed_from_string("-1", &v), -EINVAL);
        check_int(replay_speed_from_string("fast", &v), -EINVAL);
        check_int(replay_speed_from_string("2x", &v), -EINVAL);
        check_int(replay_speed_from_string("", &v), -EINVAL);
        check_int(replay_speed_from_string("nan", &v), -EINVAL);
        check_int(replay_speed_from_string("inf", &v), -EINVAL);
        check_int(replay_speed_from_string("1e9", &v), -EINVAL);
}

static const char d1[] = "add@/devices/a\0ACTION=add\0DEVPATH=/devices/a\0SUBSYSTEM=x\0SEQNUM=1";
static const char d2[] = "add@/devices/b\0ACTION=add\0DEVPATH=/devices/b\0SUBSYSTEM=x\0SEQNUM=2";
static const char d3[] = "add@/devices/c\0ACTION=add\0DEVPATH=/devices/c\0SUBSYSTEM=x\0SEQNUM=4";

static void test_iterator(void)
{
        char path[] = "/tmp/test-replay.XXXXXX";
        struct record_writer *w;
        struct replay *rp;
        struct replay_item it;
        int fd = mkstemp(path);

        check(fd >= 0);
        close(fd);
        unlink(path);
        check_int(record_writer_open(path, &w), 0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 100, 1000000, d1, sizeof(d1) } }),
                  0);
        /* Agent records are not replayed. */
        check_int(record_append(w, &(struct record){ .type = RECORD_AGENT_START,
                                                     .agent_start = { 1, 1000100, 77, "/bin/true" } }),
                  0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 200, 1300000, d2, sizeof(d2) } }),
                  0);
        check_int(record_append(w, &(struct record){ .type = RECORD_OVERFLOW, .overflow = { 300, 1400000 } }), 0);
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { 400, 1500000, d3, sizeof(d3) } }),
                  0);
        record_writer_free(w);

        check_int(replay_open(path, 2.0, &rp), 0);
        check_int(replay_next(rp, &it), 1);
        check_int(it.kind, REPLAY_DATAGRAM);
        check_int(it.size, sizeof(d1));
        check(memcmp(it.data, d1, sizeof(d1)) == 0);
        check_int(it.delay, 0);
        check_int(it.due, 0);
        check_int(it.realtime, 100);
        check_int(replay_next(rp, &it), 1);
        check(memcmp(it.data, d2, sizeof(d2)) == 0);
        check_int(it.delay, 150000);
        check_int(it.due, 150000);
        check_int(replay_next(rp, &it), 1);
        check_int(it.kind, REPLAY_OVERFLOW);
        check_int(it.delay, 50000);
        check_int(replay_next(rp, &it), 1);
        check_int(it.kind, REPLAY_DATAGRAM);
        check(memcmp(it.data, d3, sizeof(d3)) == 0);
        check_int(it.delay, 50000);
        check_int(it.due, 250000);
        check_int(replay_next(rp, &it), 0);
        check_int(replay_stats(rp)->records, 5);
        replay_free(rp);

        /* A torn tail is reported through the iterator, then the end. */
        /* Header, datagram 1, agent start, then 5 bytes of datagram 2. */
        check(truncate(path, 16 + (32 + sizeof(d1)) + (36 + 9) + 5) == 0);
        check_int(replay_open(path, 0, &rp), 0);
        check_int(replay_next(rp, &it), 1);
        check_int(replay_next(rp, &it), RECORD_NEXT_PROBLEM);
        check_int(replay_problem(rp)->kind, RECORD_PROBLEM_TORN_TAIL);
        check_int(replay_next(rp, &it), 0);
        replay_free(rp);
        unlink(path);
        check_int(replay_open(path, 1, &rp), -ENOENT);
}

int main(void)
{
        run_test(test_clock);
        run_test(test_speed_parse);
        run_test(test_iterator);
        return 0;
}
