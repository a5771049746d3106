/* SPDX-License-Identifier: MIT */
/* The min-heap: order out, equal keys, reserve, removal and re-keying in
 * place with the items' positions checked, and a randomised comparison
 * against a plain array. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "shared/heap.h"
#include "shared/macro.h"
#include "test.h"

struct thing {
        uint64_t key;
        uint32_t pos;
        bool in;
};

/* Heap order, and each item's position where the heap says it is. */
static void check_invariants(const struct heap *h)
{
        check(h->n <= h->cap);
        for (size_t i = 0; i < h->n; i++) {
                const struct thing *x = h->v[i].item;

                check(h->v[i].key == x->key);
                check_int(x->pos, i);
                if (i > 0)
                        check(h->v[(i - 1) / 4].key <= h->v[i].key);
        }
}

static void test_basic(void)
{
        uint64_t keys[] = { 5, 3, 9, 1, 7, 3, 8, 2, 6, 4, 0, 10 };
        struct thing v[ELEMENTSOF(keys)];
        struct heap h;
        uint64_t last = 0;

        heap_init(&h, HEAP_NO_INDEX);
        check(heap_top(&h) == NULL);
        check(heap_pop(&h) == NULL);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                v[i].key = keys[i];
                check_int(heap_push(&h, keys[i], &v[i]), 0);
        }
        check_int(heap_count(&h), ELEMENTSOF(keys));
        check(heap_top_key(&h) == 0);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                struct thing *x = heap_top(&h);

                check(x);
                check(heap_top_key(&h) == x->key);
                check(heap_pop(&h) == x);
                check(x->key >= last);
                last = x->key;
        }
        check(heap_top(&h) == NULL);
        check_int(h.cap, 16);
        heap_clear(&h);
        check_int(h.cap, 0);
        check(h.index_offset == HEAP_NO_INDEX);
        heap_clear(&h);
}

static void test_reserve(void)
{
        struct heap h;
        struct thing x = { .key = 1 };

        heap_init(&h, offsetof(struct thing, pos));
        check_int(heap_reserve(&h, 100), 0);
        check_int(h.cap, 100);
        check_int(heap_reserve(&h, 50), 0);
        check_int(h.cap, 100);
        check_int(heap_reserve(&h, 101), 0);
        check_int(h.cap, 200);
        check(heap_reserve(&h, (size_t)UINT32_MAX + 1) < 0);
        check_int(h.cap, 200);
        check_int(heap_push(&h, 1, &x), 0);
        heap_remove(&h, &x);
        check_int(heap_count(&h), 0);
        heap_clear(&h);
}

/* Random pushes, pops, removals and re-keyings against an array of flags. */
static void test_random(void)
{
        enum { N = 2000, OPS = 200000 };
        struct thing *v = calloc(N, sizeof(*v));
        struct heap h;
        size_t n = 0;

        check(v);
        heap_init(&h, offsetof(struct thing, pos));
        srand(25);
        for (int op = 0; op < OPS; op++) {
                int k = rand() % N, what = rand() % 4;

                if (!v[k].in) {
                        v[k].key = (uint64_t)(rand() % 500);
                        check_int(heap_push(&h, v[k].key, &v[k]), 0);
                        v[k].in = true;
                        n++;
                } else if (what == 0) {
                        heap_remove(&h, &v[k]);
                        v[k].in = false;
                        n--;
                } else if (what == 1) {
                        v[k].key = (uint64_t)(rand() % 500);
                        heap_update(&h, &v[k], v[k].key);
                } else if (what == 2) {
                        struct thing *top = heap_top(&h);
                        uint64_t lowest = UINT64_MAX;

                        check(top);
                        for (int i = 0; i < N; i++)
                                if (v[i].in && v[i].key < lowest)
                                        lowest = v[i].key;
                        check(top->key == lowest);
                        check(heap_pop(&h) == top);
                        top->in = false;
                        n--;
                }
                if (op % 997 == 0)
                        check_invariants(&h);
        }
        check_int(heap_count(&h), n);
        check_invariants(&h);
        heap_clear(&h);
        free(v);
}

int main(void)
{
        run_test(test_basic);
        run_test(test_reserve);
        run_test(test_random);
        return 0;
}
