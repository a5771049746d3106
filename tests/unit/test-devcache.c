/* SPDX-License-Identifier: MIT */
/* The device records: lookups, replacement (also from the record itself), state, LRU eviction, size bound, peeks. */
#include <errno.h>

#include "pipeline/devcache.h"
#include "test.h"

static int put(struct devcache *c, const char *devpath, const char *data, size_t size)
{
        struct devcache_entry e = { .flags = DEVCACHE_LEARNT, .data = data, .size = size };

        return devcache_put(c, devpath, &e);
}

static void test_basic(void)
{
        struct devcache *c = NULL;
        struct devcache_stats st;
        struct devcache_entry e;

        check_int(devcache_new(3, &c), 0);
        check_int(devcache_get(c, "/devices/a", &e), 0);
        check_int(put(c, "/devices/a", "K=1\0L=2", 8), 0);
        check_int(devcache_get(c, "/devices/a", &e), 1);
        check_int(e.size, 8);
        check_int(e.flags, DEVCACHE_LEARNT);
        check_str(e.bus, "");
        check_str(e.driver, "");
        check_str(packed_get(e.data, e.size, "L"), "2");
        check_str(packed_get(e.data, e.size, "K"), "1");
        check(!packed_get(e.data, e.size, "M"));
        check_int(put(c, "/devices/a", "K=3", 4), 0); /* replace */
        check_int(devcache_get(c, "/devices/a", &e), 1);
        check_str(packed_get(e.data, e.size, "K"), "3");
        check(!packed_get(e.data, e.size, "L"));
        check_int(put(c, "/devices/b", NULL, 0), 0);
        check_int(put(c, "/devices/c", "X=c", 4), 0);
        check_int(devcache_get(c, "/devices/a", &e), 1); /* a is now most recent; b is LRU */
        check_int(put(c, "/devices/d", "X=d", 4), 0);
        check_int(devcache_get(c, "/devices/b", &e), 0);
        check_int(devcache_get(c, "/devices/a", &e), 1);
        check_int(devcache_get(c, "/devices/c", &e), 1);
        check_int(devcache_get(c, "/devices/d", &e), 1);
        devcache_get_stats(c, &st);
        check_int(st.evictions, 1);
        check_int(st.used, 3);
        devcache_drop(c, "/devices/c");
        check_int(devcache_get(c, "/devices/c", &e), 0);
        devcache_free(c);
}

/* Bus and driver kept beside the data; a record rewritten from itself (the model updates a driver so). */
static void test_state(void)
{
        struct devcache *c = NULL;
        struct devcache_entry e = { .flags = DEVCACHE_BUS_KNOWN | DEVCACHE_LEARNT, .bus = "usb", .driver = "usbhid",
                                    .data = "DEVICE=/proc/bus/usb/001/002", .size = 29 };

        check_int(devcache_new(4, &c), 0);
        check_int(devcache_put(c, "/devices/u/1-1:1.0", &e), 0);
        check_int(devcache_get(c, "/devices/u/1-1:1.0", &e), 1);
        check_int(e.flags, DEVCACHE_BUS_KNOWN | DEVCACHE_LEARNT);
        check_str(e.bus, "usb");
        check_str(e.driver, "usbhid");
        check_str(packed_get(e.data, e.size, "DEVICE"), "/proc/bus/usb/001/002");
        e.driver = ""; /* unbind: everything else from the record itself */
        check_int(devcache_put(c, "/devices/u/1-1:1.0", &e), 0);
        check_int(devcache_get(c, "/devices/u/1-1:1.0", &e), 1);
        check_str(e.bus, "usb");
        check_str(e.driver, "");
        check_str(packed_get(e.data, e.size, "DEVICE"), "/proc/bus/usb/001/002");
        devcache_free(c);
}

static void test_bound(void)
{
        static char big[HP_DEVCACHE_SLOT_BYTES];
        struct devcache *c = NULL;
        struct devcache_stats st;
        struct devcache_entry e;
        char p[64];

        check_int(devcache_new(100, &c), 0);
        check_int(put(c, "/devices/p", "A=1", 4), 0);
        memset(big, 'x', sizeof(big) - 1);
        check_int(put(c, "/devices/p", big, sizeof(big)), -E2BIG);
        check_int(devcache_get(c, "/devices/p", &e), 0); /* the stale record went too */

        /* Many more devices than slots: never more than the capacity, always the newest kept. */
        for (int i = 0; i < 1000; i++) {
                snprintf(p, sizeof(p), "/devices/n%d", i);
                check_int(put(c, p, "A=1", 4), 0);
        }
        devcache_get_stats(c, &st);
        check_int(st.used, 100);
        check_int(devcache_get(c, "/devices/n999", &e), 1);
        check_int(devcache_get(c, "/devices/n899", &e), 0);
        devcache_free(c);
}

/* A probe's start (since) is kept with the record; a peek reads it without reordering or counting. */
static void test_since_peek(void)
{
        struct devcache *c = NULL;
        struct devcache_entry e = { .flags = DEVCACHE_BUS_KNOWN, .bus = "hid", .since = 4242 };
        struct devcache_stats st;

        check_int(devcache_new(2, &c), 0);
        check_int(devcache_put(c, "/devices/h", &e), 0);
        check_int(put(c, "/devices/x", "X=1", 4), 0);
        check_int(devcache_peek(c, "/devices/h", &e), 1); /* h stays the least recently used */
        check_int((int)e.since, 4242);
        check_str(e.bus, "hid");
        check_int(devcache_peek(c, "/devices/none", &e), 0);
        devcache_get_stats(c, &st);
        check_int(st.hits, 0);
        check_int(st.misses, 0);
        check_int(put(c, "/devices/y", "Y=1", 4), 0);
        check_int(devcache_peek(c, "/devices/h", &e), 0);
        check_int(devcache_get(c, "/devices/x", &e), 1);
        check_int((int)e.since, 0);
        devcache_free(c);
}

int main(void)
{
        run_test(test_basic);
        run_test(test_state);
        run_test(test_bound);
        run_test(test_since_peek);
        return 0;
}
