/* SPDX-License-Identifier: MIT */
/* shared/list.h: order, unlinking while iterating, double unlink, empty lists. */
#include "shared/list.h"
#include "test.h"

struct item {
        int v;
        struct list_node link;
};

static void check_order(struct list_node *head, const int *want, size_t n)
{
        struct item *it;
        size_t i = 0;

        list_for_each(it, head, link) {
                check(i < n);
                check_int(it->v, want[i]);
                i++;
        }
        check_int(i, n);
        check_int(list_length(head), n);
}

static void test_order(void)
{
        struct list_node head = LIST_HEAD_INIT(head);
        struct item a = { .v = 1 }, b = { .v = 2 }, c = { .v = 3 };

        check(list_empty(&head));
        check(list_first(&head, struct item, link) == NULL);
        list_add_tail(&head, &b.link);
        list_add_tail(&head, &c.link);
        list_add_head(&head, &a.link);
        check(!list_empty(&head));
        check_order(&head, (const int[]){ 1, 2, 3 }, 3);
        check(list_first(&head, struct item, link) == &a);
        check(list_next(&head, &a, link) == &b);
        check(list_next(&head, &c, link) == NULL);
}

static void test_unlink(void)
{
        struct list_node head;
        struct item items[5], *it, *n;

        list_init(&head);
        for (int i = 0; i < 5; i++) {
                items[i].v = i;
                list_node_init(&items[i].link);
                check(!list_linked(&items[i].link));
                list_add_tail(&head, &items[i].link);
                check(list_linked(&items[i].link));
        }
        /* Unlink every odd element while walking. */
        list_for_each_safe(it, n, &head, link)
                if (it->v % 2)
                        list_unlink(&it->link);
        check_order(&head, (const int[]){ 0, 2, 4 }, 3);
        check(!list_linked(&items[1].link));
        list_unlink(&items[1].link); /* twice: a no-op */
        check_order(&head, (const int[]){ 0, 2, 4 }, 3);
        list_for_each_safe(it, n, &head, link)
                list_unlink(&it->link);
        check(list_empty(&head));
        check_int(list_length(&head), 0);
}

int main(void)
{
        run_test(test_order);
        run_test(test_unlink);
        return 0;
}
