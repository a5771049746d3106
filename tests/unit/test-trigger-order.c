/* SPDX-License-Identifier: MIT */
/*
 * The order hotplugctl trigger keeps with parallel writes (ctl/trigger-order.c):
 * the path order libudev sorts by, segments cut where a list leaves it, and
 * each device's nearest ancestor within its segment, --prioritized-subsystem's
 * order; and trigger-walk.c's walks of a made-up tree: devices, and modules,
 * buses and drivers (--type=subsystems).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/trigger-order.h"
#include "ctl/trigger-walk.h"
#include "test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_path_cmp(void)
{
        check(trigger_path_cmp("/a", "/a") == 0);
        check(trigger_path_cmp("/a", "/a/b") < 0);
        /* '/' before '-' and '.': a device's descendants follow it directly. */
        check(trigger_path_cmp("/a/b", "/a-b") < 0);
        check(trigger_path_cmp("/a.1", "/a/z") > 0);
        check(trigger_path_cmp("/a/b", "/a/c") < 0);
        check(trigger_path_cmp("/b", "/a/c") > 0);
}

static void test_segments(void)
{
        /* libudev's list: sorted, then dm and md moved to the end. */
        char *paths[] = { "/d/pci0", "/d/pci0/sda", "/d/pci0/sda/sda1", "/d/v/block/loop0", "/d/v/block/dm-0",
                          "/d/v/block/md0" };
        char *given[] = { "/d/b", "/d/a", "/d/a/x", "/d/c", "/d/c" };
        size_t want_paths[] = { 0, 0, 0, 0, 4, 4 }, want_given[] = { 0, 1, 1, 1, 4 }, s = 0;

        for (size_t i = 0; i < N(paths); i++) {
                s = trigger_segment(paths, i, s);
                check_int(s, want_paths[i]);
        }
        /* DEVICEs as given: each step back starts a segment; so does a repeat. */
        s = 99;
        for (size_t i = 0; i < N(given); i++) {
                s = trigger_segment(given, i, s);
                check_int(s, want_given[i]);
        }
}

static void test_parents(void)
{
        char *paths[] = { "/d/p",      "/d/p/a",   "/d/p/a/b/c", "/d/p/a-1", "/d/p/a.x/y",
                          "/d/p/a1/z", "/d/p0",    "/d/p0/q",    "/d/q/r" };
        size_t want[] = { TRIGGER_NO_PARENT, 0, 1, 0, 0, 0, TRIGGER_NO_PARENT, 6, TRIGGER_NO_PARENT };

        for (size_t i = 1; i < N(paths); i++)
                check(trigger_path_cmp(paths[i - 1], paths[i]) < 0);
        for (size_t i = 0; i < N(paths); i++)
                check_int(trigger_parent(paths, 0, i), want[i]);
        /* Only within the segment: an ancestor before @from does not count. */
        check_int(trigger_parent(paths, 1, 2), 1);
        check_int(trigger_parent(paths, 2, 3), TRIGGER_NO_PARENT);
        check_int(trigger_parent(paths, 7, 7), TRIGGER_NO_PARENT);
        /* "/" itself and a path of one component have none. */
        check_int(trigger_parent((char *[]){ "/", "/x" }, 0, 1), TRIGGER_NO_PARENT);
}

/*
 * --prioritized-subsystem: each subsystem's devices in turn, each right after
 * its ancestors in the list not placed yet; then the rest in list order.
 */
static void test_prioritize(void)
{
        char *paths[] = { "/d/p", "/d/p/a", "/d/p/a/net0", "/d/p/b", "/d/p/b/sda", "/d/p/b/sda/sda1", "/d/v/lo",
                          "/d/v/null" };
        char *subs[] = { "pci", "pci", "net", "pci", "block", "block", "net", "mem" };
        char *prio[] = { "block", "net" };
        size_t order[N(paths)], want[] = { 0, 3, 4, 5, 1, 2, 6, 7 }, want_none[] = { 0, 1, 2, 3, 4, 5, 6, 7 };
        bool placed[N(paths)];

        trigger_prioritize(paths, subs, N(paths), prio, N(prio), order, placed);
        for (size_t i = 0; i < N(paths); i++)
                check_int(order[i], want[i]);
        /* No subsystem given, or none of the list's: the list's order. */
        trigger_prioritize(paths, subs, N(paths), (char *[]){ "sound" }, 1, order, placed);
        for (size_t i = 0; i < N(paths); i++)
                check_int(order[i], want_none[i]);
}

/* A directory @dir below @root, with a uevent file and a subsystem link to "../bus/@subsystem" unless NULL. */
static void make_dir(const char *root, const char *dir, const char *subsystem)
{
        char path[PATH_MAX], file[PATH_MAX + 32], link[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", root, dir);
        check(mkdir(path, 0755) == 0);
        if (!subsystem)
                return;
        snprintf(file, sizeof(file), "%s/uevent", path);
        fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        check(fd >= 0);
        close(fd);
        snprintf(file, sizeof(file), "%s/subsystem", path);
        snprintf(link, sizeof(link), "../bus/%s", subsystem);
        check(symlink(link, file) == 0);
}

struct walked {
        char out[4096];
        size_t len;
        size_t root_len;
};

static int collect(void *userdata, const char *syspath, const char *subsystem)
{
        struct walked *w = userdata;
        const char *rel = strstr(syspath, "/devices/");

        w->len += (size_t)snprintf(w->out + w->len, sizeof(w->out) - w->len, "%s:%s ", rel, subsystem);
        return 0;
}

/*
 * The walk: devices in path order ('/' first), a directory without uevent or
 * without subsystem passed over (its children not), links not followed, a
 * sound card's controlC* and md/dm block devices (with their partitions)
 * last, in that order.
 */
static void test_walk(void)
{
        static const char *const tree[][2] = {
                { "devices", NULL },
                { "devices/platform", NULL },
                { "devices/platform/a", "platform" },
                { "devices/platform/a/power", NULL },
                { "devices/platform/a/x", "misc" },
                { "devices/platform/a-1", "platform" },
                { "devices/platform/a.b", "platform" },
                { "devices/platform/a/sound", NULL },
                { "devices/platform/a/sound/card0", "sound" },
                { "devices/platform/a/sound/card0/controlC0", "sound" },
                { "devices/platform/a/sound/card0/pcmC0D0p", "sound" },
                { "devices/virtual", NULL },
                { "devices/virtual/block", NULL },
                { "devices/virtual/block/dm-0", "block" },
                { "devices/virtual/block/loop0", "block" },
                { "devices/virtual/block/md0", "block" },
                { "devices/virtual/block/md0/md0p1", "block" },
        };
        char root[] = "/tmp/test-trigger-walk.XXXXXX", link[PATH_MAX + 32], cmd[PATH_MAX + 16];
        struct walked w = { .len = 0 };

        check(mkdtemp(root) != NULL);
        for (size_t i = 0; i < N(tree); i++)
                make_dir(root, tree[i][0], tree[i][1]);
        /* A link to a device directory: never followed, so nothing twice. */
        snprintf(link, sizeof(link), "%s/devices/virtual/block/link", root);
        check(symlink("loop0", link) == 0);
        check_int(trigger_walk(root, collect, &w), 0);
        check_str(w.out, "/devices/platform/a:platform /devices/platform/a/sound/card0:sound "
                         "/devices/platform/a/sound/card0/pcmC0D0p:sound /devices/platform/a/x:misc "
                         "/devices/platform/a-1:platform /devices/platform/a.b:platform "
                         "/devices/virtual/block/loop0:block /devices/platform/a/sound/card0/controlC0:sound "
                         "/devices/virtual/block/dm-0:block /devices/virtual/block/md0:block "
                         "/devices/virtual/block/md0/md0p1:block ");
        check_int(trigger_walk("/nonexistent-root", collect, &w), -ENOENT);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        check(system(cmd) == 0);
}

/* trigger_walk_subsystems(): the syspath below the root, and the subsystem. */
static int collect_below(void *userdata, const char *syspath, const char *subsystem)
{
        struct walked *w = userdata;

        w->len += (size_t)snprintf(w->out + w->len, sizeof(w->out) - w->len, "%s:%s ", syspath + w->root_len,
                                   subsystem);
        return 0;
}

/* --type=subsystems: modules, then buses, then drivers, each holding a uevent file, by name. */
static void test_walk_subsystems(void)
{
        static const char *const dirs[] = { "module", "module/zz", "module/aa", "module/nouevent", "bus", "bus/usb",
                                            "bus/usb/drivers", "bus/usb/drivers/hub", "bus/pci", "bus/pci/drivers",
                                            "bus/pci/drivers/e1000", "bus/pci/drivers/bare" };
        static const char *const with_uevent[] = { "module/zz", "module/aa", "bus/usb", "bus/usb/drivers/hub",
                                                   "bus/pci", "bus/pci/drivers/e1000" };
        char root[] = "/tmp/test-trigger-subsys.XXXXXX", path[PATH_MAX + 32], cmd[PATH_MAX + 16];
        struct walked w = { .len = 0 };

        check(mkdtemp(root) != NULL);
        w.root_len = strlen(root);
        for (size_t i = 0; i < N(dirs); i++) {
                snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
                check(mkdir(path, 0755) == 0);
        }
        for (size_t i = 0; i < N(with_uevent); i++) {
                int fd;

                snprintf(path, sizeof(path), "%s/%s/uevent", root, with_uevent[i]);
                fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                check(fd >= 0);
                close(fd);
        }
        check_int(trigger_walk_subsystems(root, collect_below, &w), 0);
        check_str(w.out, "/module/aa:module /module/zz:module /bus/pci:subsystem /bus/usb:subsystem "
                         "/bus/pci/drivers/e1000:drivers /bus/usb/drivers/hub:drivers ");
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        check(system(cmd) == 0);
}

int main(void)
{
        run_test(test_path_cmp);
        run_test(test_segments);
        run_test(test_parents);
        run_test(test_prioritize);
        run_test(test_walk);
        run_test(test_walk_subsystems);
        return 0;
}
