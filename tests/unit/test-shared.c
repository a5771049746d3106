/* SPDX-License-Identifier: MIT */
/*
 * The shared toolkit: shared/list.h (order, unlinking while iterating,
 * double unlink, empty lists), uuid_random(), sysfs_read_seqnum(),
 * decimal_prefix()/decimal_u64().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/list.h"
#include "shared/macro.h"
#include "shared/number.h"
#include "shared/sysfs.h"
#include "shared/uuid.h"
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
}

static void test_uuid(void)
{
        char a[UUID_STRING_MAX], b[UUID_STRING_MAX], back[UUID_STRING_MAX];
        uint8_t bin[16];

        check_int(uuid_random(a), 0);
        check_int(uuid_random(b), 0);
        check_int(strlen(a), 36);
        check(strcmp(a, b) != 0);
        check(a[14] == '4');                          /* version 4 */
        check(strchr("89ab", a[19]) != NULL);         /* RFC 4122 variant */
        check_int(uuid_from_string(a, bin), 0);
        uuid_to_string(bin, back);
        check_str(back, a);
        check_int(uuid_from_string("not-a-uuid", bin), -EINVAL);
}

/* A sysfs root holding kernel/uevent_seqnum with @text; returns its fd. */
static int seqnum_root(char dir[64], const char *text)
{
        char path[128];
        FILE *f;

        strcpy(dir, "/tmp/hotplugd-test-shared.XXXXXX");
        check(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/kernel", dir);
        check(mkdir(path, 0755) == 0);
        snprintf(path, sizeof(path), "%s/kernel/uevent_seqnum", dir);
        check((f = fopen(path, "w")) != NULL);
        fputs(text, f);
        fclose(f);
        return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static void seqnum_case(const char *text, int want_r, uint64_t want)
{
        char dir[64], path[128];
        uint64_t v = 12345;
        int fd = seqnum_root(dir, text);

        check(fd >= 0);
        check_int(sysfs_read_seqnum(fd, &v), want_r);
        check_int(v, want_r == 0 ? want : 12345); /* untouched on failure */
        close(fd);
        snprintf(path, sizeof(path), "%s/kernel/uevent_seqnum", dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/kernel", dir);
        rmdir(path);
        rmdir(dir);
}

static void test_seqnum(void)
{
        seqnum_case("4711\n", 0, 4711);
        seqnum_case("18446744073709551615\n", 0, UINT64_MAX);
        seqnum_case("", -EIO, 0);
        seqnum_case("12x\n", -EIO, 0);
        seqnum_case("-1\n", -EIO, 0);
        seqnum_case("18446744073709551616\n", -EIO, 0); /* out of range */
}

static void test_decimal(void)
{
        const char *end;
        uint64_t v = 7;

        check_int(decimal_prefix("16M", &v, &end), 0);
        check_int(v, 16);
        check_str(end, "M");
        check_int(decimal_u64("18446744073709551615", &v), 0);
        check(v == UINT64_MAX);
        v = 7;
        check_int(decimal_u64("18446744073709551616", &v), -ERANGE);
        check_int(decimal_u64("+1", &v), -EINVAL);
        check_int(decimal_u64(" 1", &v), -EINVAL);
        check_int(decimal_u64("-1", &v), -EINVAL);
        check_int(decimal_u64("1 ", &v), -EINVAL);
        check_int(decimal_u64("", &v), -EINVAL);
        check_int(v, 7); /* untouched on failure */
}

int main(void)
{
        run_test(test_order);
        run_test(test_unlink);
        run_test(test_uuid);
        run_test(test_seqnum);
        run_test(test_decimal);
        return 0;
}
