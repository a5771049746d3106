/* SPDX-License-Identifier: MIT */
/* The device set: insert, update, remove, bound, rename with descendants,
 * the event rules, and a randomised comparison against a plain array. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recovery/devset.h"
#include "test.h"

static size_t count_by_iteration(const struct devset *s)
{
        size_t it = 0, n = 0;

        while (devset_next(s, &it))
                n++;
        return n;
}

static void test_basic(void)
{
        struct devset s;

        devset_init(&s, 0);
        check(devset_get(&s, "/devices/a") == NULL);
        check(!devset_remove(&s, "/devices/a"));
        check_int(devset_put(&s, "/devices/a", "pci"), 1);
        check_int(devset_put(&s, "/devices/a/net/eth0", "net"), 1);
        check_int(devset_put(&s, "/devices/a", "pci"), 0);
        check_int(s.n, 2);
        check_str(devset_get(&s, "/devices/a"), "pci");
        check_str(devset_get(&s, "/devices/a/net/eth0"), "net");
        check(devset_get(&s, "/devices/a/net") == NULL);
        /* A changed subsystem replaces the old one. */
        check_int(devset_put(&s, "/devices/a", "platform"), 0);
        check_str(devset_get(&s, "/devices/a"), "platform");
        check_int(s.n, 2);
        check(devset_remove(&s, "/devices/a"));
        check(!devset_remove(&s, "/devices/a"));
        check(devset_get(&s, "/devices/a") == NULL);
        check_str(devset_get(&s, "/devices/a/net/eth0"), "net");
        check_int(count_by_iteration(&s), 1);
        devset_clear(&s);
        check_int(s.n, 0);
        check(devset_get(&s, "/devices/a/net/eth0") == NULL);
        /* Usable again after clear. */
        check_int(devset_put(&s, "/devices/b", "block"), 1);
        devset_clear(&s);
}

static void test_bound(void)
{
        struct devset s;

        devset_init(&s, 3);
        check_int(devset_put(&s, "/devices/1", "x"), 1);
        check_int(devset_put(&s, "/devices/2", "x"), 1);
        check_int(devset_put(&s, "/devices/3", "x"), 1);
        check_int(devset_put(&s, "/devices/4", "x"), -ENOSPC);
        check_int(s.refused, 1);
        check(devset_get(&s, "/devices/4") == NULL);
        /* Updating a known one at the bound is fine; after a remove there is room. */
        check_int(devset_put(&s, "/devices/3", "y"), 0);
        check(devset_remove(&s, "/devices/1"));
        check_int(devset_put(&s, "/devices/4", "x"), 1);
        check_int(s.n, 3);
        devset_clear(&s);
}

static void test_move(void)
{
        struct devset s;

        devset_init(&s, 0);
        devset_put(&s, "/devices/virtual/net/a", "net");
        devset_put(&s, "/devices/virtual/net/a/queues/rx-0", "queues");
        devset_put(&s, "/devices/virtual/net/a/queues/tx-0", "queues");
        devset_put(&s, "/devices/virtual/net/ab", "net"); /* not below a: a prefix, not a component */
        check_int(devset_move(&s, "/devices/virtual/net/a", "/devices/virtual/net/b", "net"), 0);
        check(devset_get(&s, "/devices/virtual/net/a") == NULL);
        check(devset_get(&s, "/devices/virtual/net/a/queues/rx-0") == NULL);
        check_str(devset_get(&s, "/devices/virtual/net/b"), "net");
        check_str(devset_get(&s, "/devices/virtual/net/b/queues/rx-0"), "queues");
        check_str(devset_get(&s, "/devices/virtual/net/b/queues/tx-0"), "queues");
        check_str(devset_get(&s, "/devices/virtual/net/ab"), "net");
        check_int(s.n, 4);
        /* An unknown old name still inserts the new one. */
        check_int(devset_move(&s, "/devices/virtual/net/zz", "/devices/virtual/net/yy", "net"), 0);
        check_str(devset_get(&s, "/devices/virtual/net/yy"), "net");
        check_int(s.n, 5);
        devset_clear(&s);
}

static void test_events(void)
{
        struct devset s;

        devset_init(&s, 0);
        check_int(devset_note_event(&s, "add", "/devices/p", "pci", NULL), 0);
        check_int(devset_note_event(&s, "change", "/devices/c", "block", NULL), 0);
        check_int(devset_note_event(&s, "bind", "/devices/b", "usb", NULL), 0);
        check_int(devset_note_event(&s, "online", "/devices/o", "cpu", NULL), 0);
        check_int(s.n, 4);
        /* unbind and offline: the device is still there. */
        devset_note_event(&s, "unbind", "/devices/b", "usb", NULL);
        devset_note_event(&s, "offline", "/devices/o", "cpu", NULL);
        devset_note_event(&s, "frobnicate", "/devices/f", "x", NULL);
        check_int(s.n, 4);
        check_str(devset_get(&s, "/devices/b"), "usb");
        devset_note_event(&s, "remove", "/devices/p", "pci", NULL);
        check(devset_get(&s, "/devices/p") == NULL);
        devset_note_event(&s, "add", "/devices/c/sub", "block", NULL);
        devset_note_event(&s, "move", "/devices/d", "block", "/devices/c");
        check(devset_get(&s, "/devices/c") == NULL);
        check_str(devset_get(&s, "/devices/d"), "block");
        check_str(devset_get(&s, "/devices/d/sub"), "block");
        check_int(s.n, 4);
        devset_clear(&s);
}

/* Random puts and removes over a small key space, checked against an array. */
static void test_random(void)
{
        enum { KEYS = 700, OPS = 60000 };
        static char present[KEYS];
        struct devset s;
        char path[64];
        unsigned seed = 12345;
        size_t n = 0;

        devset_init(&s, 0);
        for (int op = 0; op < OPS; op++) {
                seed = seed * 1103515245u + 12345u;
                unsigned k = (seed >> 8) % KEYS;
                snprintf(path, sizeof(path), "/devices/platform/dev%u", k);
                if ((seed >> 4) & 1) {
                        check_int(devset_put(&s, path, "platform"), present[k] ? 0 : 1);
                        n += !present[k];
                        present[k] = 1;
                } else {
                        check(devset_remove(&s, path) == (bool)present[k]);
                        n -= present[k];
                        present[k] = 0;
                }
                if (op % 997 == 0)
                        for (unsigned j = 0; j < KEYS; j++) {
                                snprintf(path, sizeof(path), "/devices/platform/dev%u", j);
                                check((devset_get(&s, path) != NULL) == (bool)present[j]);
                        }
        }
        check_int(s.n, n);
        check_int(count_by_iteration(&s), n);
        check(s.n * 2 <= s.cap);
        devset_clear(&s);
}

int main(void)
{
        run_test(test_basic);
        run_test(test_bound);
        run_test(test_move);
        run_test(test_events);
        run_test(test_random);
        return 0;
}
