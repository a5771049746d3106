/* SPDX-License-Identifier: MIT */
/* hotplugctl info's per-device history: the ring, runs and waits, the
 * device and byte bounds (least recently heard of evicted), and the byte
 * count back to 0 when emptied. */
#include <stdio.h>
#include <string.h>

#include "pipeline/devinfo.h"
#include "test.h"

#define DEV_A "/devices/virtual/net/a"
#define DEV_B "/devices/virtual/net/b"
#define DEV_C "/devices/virtual/net/c"

static void test_ring(void)
{
        const struct devinfo_device *d;
        const struct devinfo_event *e;
        struct devinfo s;

        devinfo_init(&s, 16, HP_INFO_BYTES);
        for (uint64_t i = 1; i <= HP_INFO_EVENTS + 3; i++)
                check(devinfo_event_add(&s, DEV_A, 100 + i, i == 1 ? "add" : "change", 1000 + i, 10 + i));
        /* The same SEQNUM again is the same event. */
        check(devinfo_event_add(&s, DEV_A, 100 + HP_INFO_EVENTS + 3, "change", 0, 0) ==
              devinfo_event_find(&s, DEV_A, 100 + HP_INFO_EVENTS + 3));
        d = devinfo_get(&s, DEV_A);
        check(d != NULL);
        /* The oldest three went: the ring holds the last HP_INFO_EVENTS, oldest first. */
        for (size_t i = 0; i < HP_INFO_EVENTS; i++) {
                e = devinfo_device_event(d, i);
                check(e != NULL);
                check_int(e->seqnum, 100 + 4 + i);
                check_str(e->action, "change");
                check_int(e->real, 1000 + 4 + i);
                check_int(e->outcome, DEVINFO_HELD);
        }
        check(devinfo_device_event(d, HP_INFO_EVENTS) == NULL);
        check(devinfo_event_find(&s, DEV_A, 101) == NULL);
        check(devinfo_get(&s, DEV_B) == NULL);
        devinfo_clear(&s);
        check_int(s.bytes, 0);
}

static void test_runs(void)
{
        const struct devinfo_event *e;
        char program[HP_INFO_TEXT_MAX + 64];
        struct devinfo s;

        devinfo_init(&s, 16, HP_INFO_BYTES);
        check(devinfo_event_add(&s, DEV_A, 7, "add", 1, 1));
        devinfo_event_waited(&s, DEV_A, 7, 5, 300, "parent /devices/virtual");
        devinfo_event_waited(&s, DEV_A, 7, 0, 400, "a free slot (limit 1)");
        devinfo_event_waited(&s, DEV_A, 7, 7, 500, "udevd");
        devinfo_event_waited(&s, DEV_A, 7, 8, 600, "a fourth is not kept");
        devinfo_run_start(&s, DEV_A, 7, "/sbin/agent", 42, 10);
        devinfo_run_start(&s, DEV_A, 7, "/etc/hotplug.d/net/x", 43, 11);
        devinfo_run_end(&s, DEV_A, 7, 43, "exit 3", true, false, 99);
        devinfo_run_end(&s, DEV_A, 7, 42, "exit 0", false, false, 120);
        devinfo_run_end(&s, DEV_A, 7, 42, "twice: ignored", true, false, 1);
        /* A program path longer than the bound is cut. */
        memset(program, 'p', sizeof(program) - 1);
        program[0] = '/';
        program[sizeof(program) - 1] = '\0';
        devinfo_run_start(&s, DEV_A, 7, program, 0, 12);
        devinfo_run_end(&s, DEV_A, 7, 0, "exec ENOENT", true, false, 0);
        for (int i = 0; i < HP_INFO_RUNS; i++)
                devinfo_run_start(&s, DEV_A, 7, "/sbin/more", 100 + i, 20);
        devinfo_event_outcome(&s, DEV_A, 7, DEVINFO_DONE);
        /* Of an event that is not kept: nothing happens. */
        devinfo_run_start(&s, DEV_B, 7, "/sbin/agent", 1, 1);
        devinfo_event_outcome(&s, DEV_A, 8, DEVINFO_FILTERED);

        e = devinfo_event_find(&s, DEV_A, 7);
        check(e != NULL);
        check_int(e->outcome, DEVINFO_DONE);
        check_int(e->n_wait, 3);
        check_int(e->wait[0].blocker, 5);
        check_str(e->wait[0].reason, "parent /devices/virtual");
        check_int(e->wait[2].waited, 500);
        check_int(e->n_run, HP_INFO_RUNS);
        check_int(e->runs_left_out, 3);
        check_str(e->run[0].program, "/sbin/agent");
        check_str(e->run[0].status, "exit 0");
        check(!e->run[0].failed);
        check_int(e->run[0].duration, 120);
        check_str(e->run[1].status, "exit 3");
        check(e->run[1].failed);
        check_int(strlen(e->run[2].program), HP_INFO_TEXT_MAX - 1);
        check_int(e->run[2].pid, 0);
        check_str(e->run[2].status, "exec ENOENT");
        check(e->run[3].status == NULL); /* still running */
        check(devinfo_get(&s, DEV_B) == NULL);
        check_str(devinfo_outcome_to_string(e->outcome), "done");
        devinfo_clear(&s);
        check_int(s.bytes, 0);
        check_int(s.n, 0);
}

static void test_device_bound(void)
{
        struct devinfo s;
        size_t it = 0, n = 0;

        devinfo_init(&s, 2, HP_INFO_BYTES);
        check(devinfo_event_add(&s, DEV_A, 1, "add", 1, 1));
        check(devinfo_event_add(&s, DEV_B, 2, "add", 2, 2));
        check(devinfo_event_add(&s, DEV_A, 3, "change", 3, 3)); /* A heard of last: B is the oldest */
        check(devinfo_event_add(&s, DEV_C, 4, "add", 4, 4));
        check(devinfo_get(&s, DEV_A) != NULL);
        check(devinfo_get(&s, DEV_B) == NULL);
        check(devinfo_get(&s, DEV_C) != NULL);
        check_int(s.n, 2);
        check_int(s.evicted, 1);
        while (devinfo_next(&s, &it))
                n++;
        check_int(n, 2);
        devinfo_clear(&s);
        check_int(s.bytes, 0);
}

static void test_byte_bound(void)
{
        char path[64];
        size_t max = 64 * 1024, peak = 0;
        struct devinfo s;

        devinfo_init(&s, 100000, max);
        for (unsigned i = 0; i < 2000; i++) {
                snprintf(path, sizeof(path), "/devices/virtual/misc/dev%u", i);
                check(devinfo_event_add(&s, path, i + 1, "add", i, i));
                devinfo_event_waited(&s, path, i + 1, 0, 1, "a free slot (limit 1)");
                devinfo_run_start(&s, path, i + 1, "/sbin/agent", (pid_t)(i + 2), i);
                devinfo_run_end(&s, path, i + 1, (pid_t)(i + 2), "exit 0", false, false, 3);
                check(s.bytes <= max);
                peak = s.bytes > peak ? s.bytes : peak;
        }
        /* The newest devices stay, the oldest were evicted. */
        check(devinfo_get(&s, "/devices/virtual/misc/dev1999") != NULL);
        check(devinfo_get(&s, "/devices/virtual/misc/dev0") == NULL);
        check(s.evicted > 0);
        check_int(s.evicted + s.n, 2000);
        check(peak > max / 2);
        devinfo_clear(&s);
        check_int(s.bytes, 0);
}

int main(void)
{
        run_test(test_ring);
        run_test(test_runs);
        run_test(test_device_bound);
        run_test(test_byte_bound);
        return 0;
}
