/* SPDX-License-Identifier: MIT */
/* The DEVPATH cache: lookups, replacement, LRU eviction, subtree drop, size bound. */
#include <errno.h>

#include "pipeline/devcache.h"
#include "test.h"

static void test_basic(void)
{
        struct devcache *c = NULL;
        struct devcache_stats st;
        const char *data;
        size_t size;

        check_int(devcache_new(3, &c), 0);
        check_int(devcache_get(c, "/devices/a", &data, &size), 0);
        check_int(devcache_put(c, "/devices/a", "K=1\0L=2", 8), 0);
        check_int(devcache_get(c, "/devices/a", &data, &size), 1);
        check_int(size, 8);
        check_str(packed_get(data, size, "L"), "2");
        check_str(packed_get(data, size, "K"), "1");
        check(!packed_get(data, size, "M"));
        check_int(devcache_put(c, "/devices/a", "K=3", 4), 0); /* replace */
        check_int(devcache_get(c, "/devices/a", &data, &size), 1);
        check_str(packed_get(data, size, "K"), "3");
        check(!packed_get(data, size, "L"));
        check_int(devcache_put(c, "/devices/b", NULL, 0), 0);
        check_int(devcache_put(c, "/devices/c", "X=c", 4), 0);
        check_int(devcache_get(c, "/devices/a", &data, &size), 1); /* a is now most recent; b is LRU */
        check_int(devcache_put(c, "/devices/d", "X=d", 4), 0);
        check_int(devcache_get(c, "/devices/b", &data, &size), 0);
        check_int(devcache_get(c, "/devices/a", &data, &size), 1);
        check_int(devcache_get(c, "/devices/c", &data, &size), 1);
        check_int(devcache_get(c, "/devices/d", &data, &size), 1);
        devcache_get_stats(c, &st);
        check_int(st.evictions, 1);
        check_int(st.used, 3);
        devcache_drop(c, "/devices/c");
        check_int(devcache_get(c, "/devices/c", &data, &size), 0);
        devcache_free(c);
}

static void test_tree_and_bound(void)
{
        static char big[HP_DEVCACHE_SLOT_BYTES];
        struct devcache *c = NULL;
        const char *data;
        size_t size;
        char p[64];

        check_int(devcache_new(100, &c), 0);
        check_int(devcache_put(c, "/devices/p", "A=1", 4), 0);
        check_int(devcache_put(c, "/devices/p/q", "A=2", 4), 0);
        check_int(devcache_put(c, "/devices/p/q/r", "A=3", 4), 0);
        check_int(devcache_put(c, "/devices/pq", "A=4", 4), 0);
        devcache_drop_tree(c, "/devices/p/q");
        check_int(devcache_get(c, "/devices/p", &data, &size), 1);
        check_int(devcache_get(c, "/devices/p/q", &data, &size), 0);
        check_int(devcache_get(c, "/devices/p/q/r", &data, &size), 0);
        check_int(devcache_get(c, "/devices/pq", &data, &size), 1);

        memset(big, 'x', sizeof(big) - 1);
        check_int(devcache_put(c, "/devices/p", big, sizeof(big)), -E2BIG);
        check_int(devcache_get(c, "/devices/p", &data, &size), 0); /* the stale entry went too */

        /* Many more devices than slots: never more than the capacity, always the newest kept. */
        for (int i = 0; i < 1000; i++) {
                snprintf(p, sizeof(p), "/devices/n%d", i);
                check_int(devcache_put(c, p, "A=1", 4), 0);
        }
        struct devcache_stats st;
        devcache_get_stats(c, &st);
        check_int(st.used, 100);
        check_int(devcache_get(c, "/devices/n999", &data, &size), 1);
        check_int(devcache_get(c, "/devices/n899", &data, &size), 0);
        devcache_free(c);
}

int main(void)
{
        run_test(test_basic);
        run_test(test_tree_and_bound);
        return 0;
}
