/* SPDX-License-Identifier: MIT */
/* The hash function (FNV-1a test vectors, step by step equals whole) and the
 * hash table: add, get, replace, remove, iteration, colliding hashes, and a
 * randomised comparison against a plain array with the invariants checked. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hash.h"
#include "test.h"

struct thing {
        char key[32];
        int value;
};

static bool thing_eq(const void *item, const void *key)
{
        return strcmp(((const struct thing *)item)->key, key) == 0;
}

/* Every item at its home or after it with no empty slot between; n * 2 <= cap. */
static void check_invariants(const struct hash_table *t)
{
        size_t n = 0, mask = t->cap - 1;

        check(t->n * 2 <= t->cap || (t->cap == 0 && t->n == 0));
        for (size_t i = 0; i < t->cap; i++) {
                if (!t->slot[i].item)
                        continue;
                n++;
                for (size_t j = t->slot[i].hash & mask; j != i; j = (j + 1) & mask)
                        check(t->slot[j].item != NULL);
        }
        check_int(n, t->n);
}

static void test_function(void)
{
        size_t len = 99;

        /* FNV-1a 64 test vectors. */
        check(hash_bytes("", 0) == 0xcbf29ce484222325ULL);
        check(hash_bytes("a", 1) == 0xaf63dc4c8601ec8cULL);
        check(hash_bytes("foobar", 6) == 0x85944171f73967e8ULL);
        check(hash_string("foobar", &len) == 0x85944171f73967e8ULL);
        check_int(len, 6);
        check(hash_string("", NULL) == HASH_SEED);

        /* Step by step, a prefix's hash is on the way to the whole one's. */
        const char *p = "/devices/pci0000:00/net/eth0";
        uint64_t h = HASH_SEED;
        for (size_t i = 0; p[i]; i++) {
                if (p[i] == '/')
                        check(h == hash_bytes(p, i));
                h = hash_step(h, (unsigned char)p[i]);
        }
        check(h == hash_string(p, NULL));
        /* Bytes above 127 hash as unsigned. */
        check(hash_bytes("\xff", 1) == hash_step(HASH_SEED, 0xff));
}

static void test_basic(void)
{
        struct hash_table t;
        struct thing a = { "a", 1 }, a2 = { "a", 2 }, b = { "b", 3 };
        size_t it = 0;

        hash_table_init(&t);
        check(hash_table_get(&t, hash_string("a", NULL), thing_eq, "a") == NULL);
        check(hash_table_remove(&t, hash_string("a", NULL), thing_eq, "a") == NULL);
        check(hash_table_replace(&t, hash_string("a", NULL), thing_eq, "a", &a2) == NULL);
        check(hash_table_next(&t, &it) == NULL);

        check_int(hash_table_add(&t, hash_string("a", NULL), &a), 0);
        check_int(hash_table_add(&t, hash_string("b", NULL), &b), 0);
        check_int(t.n, 2);
        check_int(t.cap, 64);
        check(hash_table_get(&t, hash_string("a", NULL), thing_eq, "a") == &a);
        check(hash_table_get(&t, hash_string("b", NULL), thing_eq, "b") == &b);
        check(hash_table_get(&t, hash_string("c", NULL), thing_eq, "c") == NULL);

        /* Replace keeps the slot: iteration order is unchanged. */
        void *first = hash_table_next(&t, &it);
        check(hash_table_replace(&t, hash_string("a", NULL), thing_eq, "a", &a2) == &a);
        it = 0;
        check(hash_table_next(&t, &it) == (first == &a ? (void *)&a2 : first));
        check(hash_table_get(&t, hash_string("a", NULL), thing_eq, "a") == &a2);
        check_int(t.n, 2);

        /* Remove by identity. */
        check(hash_table_remove(&t, hash_string("b", NULL), hash_item_is, &a2) == NULL);
        check(hash_table_remove(&t, hash_string("b", NULL), hash_item_is, &b) == &b);
        check(hash_table_get(&t, hash_string("b", NULL), thing_eq, "b") == NULL);
        check_int(t.n, 1);
        check_invariants(&t);

        hash_table_clear(&t);
        check_int(t.n, 0);
        check_int(t.cap, 0);
        check(hash_table_get(&t, hash_string("a", NULL), thing_eq, "a") == NULL);
        hash_table_clear(&t);
}

/* All items of one hash: a single probe run, then removals from its middle. */
static void test_collisions(void)
{
        enum { N = 20 };
        struct thing v[N];
        struct hash_table t;
        size_t it = 0, seen = 0;

        hash_table_init(&t);
        for (int i = 0; i < N; i++) {
                snprintf(v[i].key, sizeof(v[i].key), "k%d", i);
                check_int(hash_table_add(&t, 7, &v[i]), 0);
        }
        /* Also runs that wrap around the end of the table. */
        struct thing w = { "w", 0 }, x = { "x", 0 };
        check_int(hash_table_add(&t, t.cap - 1, &w), 0);
        check_int(hash_table_add(&t, 2 * t.cap - 1, &x), 0);
        check_invariants(&t);
        for (int i = 0; i < N; i += 3)
                check(hash_table_remove(&t, 7, thing_eq, v[i].key) == &v[i]);
        check(hash_table_remove(&t, t.cap - 1, thing_eq, "w") == &w);
        check_invariants(&t);
        for (int i = 0; i < N; i++)
                check(hash_table_get(&t, 7, thing_eq, v[i].key) == (i % 3 == 0 ? NULL : &v[i]));
        check(hash_table_get(&t, 2 * t.cap - 1, thing_eq, "x") == &x);
        while (hash_table_next(&t, &it))
                seen++;
        check_int(seen, t.n);
        hash_table_clear(&t);
}

/* Random adds and removes over a small key space, against an array of flags. */
static void test_random(void)
{
        enum { KEYS = 3000, OPS = 100000 };
        struct thing *v = calloc(KEYS, sizeof(*v));
        struct hash_table t;
        size_t n = 0;

        check(v);
        hash_table_init(&t);
        srand(25);
        for (int k = 0; k < KEYS; k++)
                snprintf(v[k].key, sizeof(v[k].key), "/devices/platform/dev%d", k);
        for (int op = 0; op < OPS; op++) {
                int k = rand() % KEYS;
                uint64_t h = hash_string(v[k].key, NULL);
                bool in = hash_table_get(&t, h, thing_eq, v[k].key) != NULL;

                check(in == (v[k].value != 0));
                if (!in && rand() % 3 != 0) {
                        check_int(hash_table_add(&t, h, &v[k]), 0);
                        v[k].value = 1;
                        n++;
                } else if (in) {
                        check(hash_table_remove(&t, h, thing_eq, v[k].key) == &v[k]);
                        v[k].value = 0;
                        n--;
                }
                if (op % 9973 == 0)
                        check_invariants(&t);
        }
        check_int(t.n, n);
        check_invariants(&t);
        hash_table_clear(&t);
        free(v);
}

int main(void)
{
        run_test(test_function);
        run_test(test_basic);
        run_test(test_collisions);
        run_test(test_random);
        return 0;
}
