/* SPDX-License-Identifier: MIT */
/* Resync decisions: the plan for fixture lists, SEQNUMs from the ledger's
 * gaps, the synthesised remove datagram, and the sysfs listing (fixture
 * tree, a tree built here with traps, and the real /sys). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "recovery/resync.h"
#include "test.h"
#include "uevent/uevent.h"

static void fill(struct devset *s, const char *const *list)
{
        devset_init(s, 0);
        for (; *list; list += 2)
                check(devset_put(s, list[0], list[1]) >= 0);
}

static void check_op(const struct resync_plan *p, size_t i, enum resync_action a, const char *devpath,
                     const char *subsystem)
{
        check(i < p->n);
        check_str(resync_action_to_string(p->op[i].action), resync_action_to_string(a));
        check_str(p->op[i].devpath, devpath);
        check_str(p->op[i].subsystem, subsystem);
}

/* The plan's operations, by kind; @skipped: writes left out at the bound. */
static void check_counts(const struct resync_plan *p, size_t removes, size_t adds, size_t changes, size_t skipped)
{
        check_int(p->n_remove, removes);
        check_int(p->n_add, adds);
        check_int(p->n_change, changes);
        check_int(p->skipped, skipped);
        check_int(p->n, removes + adds + changes);
}

/* resync_plan_build() of @known against @now, at most @max writes, every subsystem, no exists callback. */
static int plan(const struct devset *known, const struct devset *now, size_t max, struct resync_plan *p)
{
        return resync_plan_build(&(const struct resync_plan_args){ .known = known, .now = now, .max_writes = max },
                                 p);
}

/* Only the net queue still exists (it has no uevent file, so it is not in the listing). */
static bool fake_exists(const char *devpath, void *userdata)
{
        const char *alive = userdata;
        return strcmp(devpath, alive) == 0;
}

static void test_plan(void)
{
        static const char *const known_list[] = {
                "/devices/pci0000:00/0000:00:03.0", "pci",
                "/devices/pci0000:00/0000:00:03.0/net/eth0", "net",
                "/devices/pci0000:00/0000:00:03.0/net/eth0/queues/rx-0", "queues",
                "/devices/virtual/block/zram7", "block",
                "/devices/virtual/net/gone0", "net",
                "/devices/virtual/net/gone0/sub", "net",
                NULL,
        };
        static const char *const now_list[] = {
                "/devices/virtual/block/zram9", "block",
                "/devices/pci0000:00/0000:00:03.0/net/eth0", "net",
                "/devices/pci0000:00/0000:00:03.0", "pci",
                "/devices/virtual/net/new0", "net",
                NULL,
        };
        struct devset known, now;
        struct resync_plan p;

        fill(&known, known_list);
        fill(&now, now_list);
        check_int(resync_plan_build(&(const struct resync_plan_args){
                                            .known = &known, .now = &now, .exists = fake_exists,
                                            .userdata = (void *)"/devices/pci0000:00/0000:00:03.0/net/eth0/"
                                                                "queues/rx-0",
                                            .max_writes = HP_RESYNC_WRITES_MAX },
                                    &p),
                  0);
        check_counts(&p, 3, 2, 2, 0);
        check_int(p.n_left, 0); /* no list: nothing is left alone */
        check_int(p.left_alone, 0);
        /* Removes first, children before parents; then writes in DEVPATH order. */
        check_op(&p, 0, RESYNC_REMOVE, "/devices/virtual/net/gone0/sub", "net");
        check_op(&p, 1, RESYNC_REMOVE, "/devices/virtual/net/gone0", "net");
        check_op(&p, 2, RESYNC_REMOVE, "/devices/virtual/block/zram7", "block");
        check_op(&p, 3, RESYNC_CHANGE, "/devices/pci0000:00/0000:00:03.0", "pci");
        check_op(&p, 4, RESYNC_CHANGE, "/devices/pci0000:00/0000:00:03.0/net/eth0", "net");
        check_op(&p, 5, RESYNC_ADD, "/devices/virtual/block/zram9", "block");
        check_op(&p, 6, RESYNC_ADD, "/devices/virtual/net/new0", "net");
        for (size_t i = 0; i < p.n; i++)
                check_int(p.op[i].seqnum, 0);
        resync_plan_free(&p);
        check_int(p.n, 0);

        /* Without an exists callback everything only known is gone, the queue too. */
        check_int(plan(&known, &now, HP_RESYNC_WRITES_MAX, &p), 0);
        check_int(p.n_remove, 4);
        check_op(&p, 0, RESYNC_REMOVE, "/devices/virtual/net/gone0/sub", "net");
        check_op(&p, 3, RESYNC_REMOVE, "/devices/pci0000:00/0000:00:03.0/net/eth0/queues/rx-0", "queues");
        resync_plan_free(&p);

        /* The plan owns its strings: the sets may go. */
        check_int(plan(&known, &now, HP_RESYNC_WRITES_MAX, &p), 0);
        devset_clear(&known);
        devset_clear(&now);
        check_op(&p, 4, RESYNC_CHANGE, "/devices/pci0000:00/0000:00:03.0", "pci");
        resync_plan_free(&p);

        /* Nothing known, nothing present: an empty plan. */
        check_int(plan(&known, &now, 10, &p), 0);
        check_int(p.n, 0);
        resync_plan_free(&p);
}

static void test_plan_bound(void)
{
        static const char *const known_list[] = { "/devices/a", "x", "/devices/b", "x", NULL };
        static const char *const now_list[] = {
                "/devices/a", "x", "/devices/b", "x", "/devices/c", "x",
                "/devices/d", "x", "/devices/e", "x", NULL,
        };
        struct devset known, now;
        struct resync_plan p;

        fill(&known, known_list);
        fill(&now, now_list);
        /* Room for 4 writes: the 3 unknown devices get their add first, 1 change fits. */
        check_int(plan(&known, &now, 4, &p), 0);
        check_counts(&p, 0, 3, 1, 1);
        for (size_t i = 1; i < p.n; i++)
                check(strcmp(p.op[i - 1].devpath, p.op[i].devpath) < 0);
        resync_plan_free(&p);
        check_int(plan(&known, &now, 2, &p), 0);
        check_counts(&p, 0, 2, 0, 3);
        resync_plan_free(&p);
        devset_clear(&known);
        devset_clear(&now);
}

/* The plan's ops: only the subsystems listed; the rest of the device set follows sysfs silently. */
static void test_plan_subsystems(void)
{
        static const char *const known_list[] = {
                "/devices/pci0000:00/0000:00:03.0", "pci",
                "/devices/pci0000:00/0000:00:03.0/net/eth0", "net",
                "/devices/virtual/net/gone0", "net",
                "/devices/virtual/tty/gone1", "tty",
                "/devices/virtual/tty/gone2", "tty",
                "/devices/virtual/block/zram7", "block",
                "/devices/virtual/misc/nouevent", "misc", /* exists, not listed by the scan */
                NULL,
        };
        static const char *const now_list[] = {
                "/devices/pci0000:00/0000:00:03.0", "pci",
                "/devices/pci0000:00/0000:00:03.0/net/eth0", "net",
                "/devices/virtual/net/new0", "net",
                "/devices/virtual/tty/tty1", "tty",
                "/devices/virtual/input/input3", "input",
                "/devices/virtual/block/zram9", "block",
                NULL,
        };
        static const char *const lists[] = { "net,block", " block , net ", "block net" };
        struct resync_plan_args a = { .exists = fake_exists, .userdata = (void *)"/devices/virtual/misc/nouevent",
                                      .max_writes = HP_RESYNC_WRITES_MAX };
        struct devset known, now;
        struct resync_plan p;

        fill(&known, known_list);
        fill(&now, now_list);
        a.known = &known;
        a.now = &now;
        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                a.subsystems = lists[i];
                check_int(resync_plan_build(&a, &p), 0);
                check_counts(&p, 2, 2, 1, 0);
                check_op(&p, 0, RESYNC_REMOVE, "/devices/virtual/net/gone0", "net");
                check_op(&p, 1, RESYNC_REMOVE, "/devices/virtual/block/zram7", "block");
                check_op(&p, 2, RESYNC_CHANGE, "/devices/pci0000:00/0000:00:03.0/net/eth0", "net");
                check_op(&p, 3, RESYNC_ADD, "/devices/virtual/block/zram9", "block");
                check_op(&p, 4, RESYNC_ADD, "/devices/virtual/net/new0", "net");
                /* Left alone: pci (known), input3 and tty1 (new: learnt), gone1 and gone2 (forgotten);
                 * misc still exists: neither removed nor forgotten. */
                check_int(p.left_alone, 5);
                check_int(p.n_learn, 2);
                check_int(p.n_forget, 2);
                check_int(p.n_left, 4);
                check(p.left[0].action == RESYNC_LEARN);
                check_str(p.left[0].devpath, "/devices/virtual/input/input3");
                check_str(p.left[1].devpath, "/devices/virtual/tty/tty1");
                check_str(p.left[1].subsystem, "tty");
                check(p.left[2].action == RESYNC_FORGET);
                check_str(p.left[2].devpath, "/devices/virtual/tty/gone1");
                check_str(p.left[3].devpath, "/devices/virtual/tty/gone2");
                resync_plan_free(&p);
                check(p.left == NULL && p.n_left == 0);
        }

        /* The bound counts listed devices only: 3 to write, 1 fits (an add). */
        a.max_writes = 1;
        check_int(resync_plan_build(&a, &p), 0);
        check_counts(&p, 2, 1, 0, 2);
        check_int(p.left_alone, 5);
        resync_plan_free(&p);
        a.max_writes = HP_RESYNC_WRITES_MAX;

        /* Once the set follows the plan (what the manager does), the next pass has nothing left to
         * learn or forget, and still writes to no device of another subsystem. */
        check_int(resync_plan_build(&a, &p), 0);
        for (size_t i = 0; i < p.n_left; i++) {
                if (p.left[i].action == RESYNC_LEARN)
                        check(devset_put(&known, p.left[i].devpath, p.left[i].subsystem) == 1);
                else
                        check(devset_remove(&known, p.left[i].devpath));
        }
        resync_plan_free(&p);
        check_int(resync_plan_build(&a, &p), 0);
        check_int(p.n_left, 0);
        check_int(p.left_alone, 3);
        check_int(p.n, 5);
        for (size_t i = 0; i < p.n; i++)
                check(strcmp(p.op[i].subsystem, "net") == 0 || strcmp(p.op[i].subsystem, "block") == 0);
        resync_plan_free(&p);

        /* A list naming no present subsystem: no operation at all. */
        a.subsystems = "usb";
        check_int(resync_plan_build(&a, &p), 0);
        check_int(p.n, 0);
        check_int(p.left_alone, 6 + 2); /* the 6 present, and the 2 gone listed ones above */
        resync_plan_free(&p);
        devset_clear(&known);
        devset_clear(&now);
}

static void test_pick_seqnums(void)
{
        struct ledger l;
        uint64_t out[16];

        ledger_init(&l, 100);
        ledger_account(&l, 101, NULL);
        ledger_account(&l, 105, NULL); /* gap 102-104, unexplained */
        ledger_note_overflow(&l);
        ledger_account(&l, 110, NULL); /* gap 106-109, overflow */
        check_int(l.n_open, 2);

        check_int(resync_pick_seqnums(&l, 0, 0, out, 5), 5);
        check_int(out[0], 102);
        check_int(out[2], 104);
        check_int(out[3], 106);
        check_int(out[4], 107);
        /* Above a floor: never a number given out before. */
        check_int(resync_pick_seqnums(&l, 104, 0, out, 2), 2);
        check_int(out[0], 106);
        check_int(out[1], 107);
        check_int(resync_pick_seqnums(&l, 107, 110, out, 16), 2);
        check_int(out[0], 108);
        check_int(out[1], 109);
        check_int(resync_pick_seqnums(&l, 109, 0, out, 16), 0);
        check_int(resync_pick_seqnums(&l, 0, 0, out, 0), 0);

        /* A late arrival fills its number: it is not offered any more. */
        check_int(ledger_account(&l, 103, NULL), LEDGER_LATE);
        check_int(resync_pick_seqnums(&l, 0, 0, out, 16), 6);
        check_int(out[0], 102);
        check_int(out[1], 104);
        check_int(out[2], 106);
        check_int(out[5], 109);

        /* The kernel is at 113: 111-113 were spent on events never received. */
        check_int(resync_pick_seqnums(&l, 0, 113, out, 16), 9);
        check_int(out[5], 109);
        check_int(out[6], 111);
        check_int(out[8], 113);
        check_int(resync_pick_seqnums(&l, 111, 113, out, 16), 2);
        check_int(out[0], 112);
        check_int(resync_pick_seqnums(&l, 113, 113, out, 16), 0);

        /* No gap, and the kernel no further than the ledger: no number. */
        ledger_init(&l, 0);
        ledger_account(&l, 7, NULL);
        ledger_account(&l, 8, NULL);
        check_int(resync_pick_seqnums(&l, 0, 8, out, 4), 0);
        check_int(resync_pick_seqnums(&l, 0, 0, out, 4), 0);
        /* Nothing received yet: above the baseline. */
        ledger_init(&l, 50);
        check_int(resync_pick_seqnums(&l, 0, 52, out, 4), 2);
        check_int(out[0], 51);
        check_int(out[1], 52);
}

static void test_datagram(void)
{
        char buf[HP_UEVENT_MAX_SIZE];
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent ev;
        enum uevent_reject why;
        int len;

        len = resync_remove_datagram("/devices/virtual/net/gone0", "net", 4242,
                                     "01234567-89ab-4def-8123-456789abcdef", buf, sizeof(buf));
        check(len > 0);
        check_int(uevent_parse(buf, (size_t)len, vars, &ev, &why), 0);
        check_str(ev.action, "remove");
        check_str(ev.devpath, "/devices/virtual/net/gone0");
        check_str(ev.subsystem, "net");
        check_int(ev.seqnum, 4242);
        check_str(uevent_get(&ev, "HOTPLUGD_RESYNC"), "1");
        check_str(uevent_get(&ev, "SYNTH_UUID"), "01234567-89ab-4def-8123-456789abcdef");
        check_int(ev.n_vars, 6);
        /* SEQNUM last, as the kernel sends it. */
        check_str(uevent_var(&ev, ev.n_vars - 1), "SEQNUM=4242");

        len = resync_remove_datagram("/devices/x", "block", 1, NULL, buf, sizeof(buf));
        check(len > 0);
        check_int(uevent_parse(buf, (size_t)len, vars, &ev, &why), 0);
        check(uevent_get(&ev, "SYNTH_UUID") == NULL);
        check_int(ev.n_vars, 5);

        check_int(resync_remove_datagram("/devices/x", "block", 1, NULL, buf, 20), -ENOBUFS);
        check_int(resync_remove_datagram("/devices/x", "block", 1, NULL, buf, (size_t)len), len);
        check_int(resync_remove_datagram("/devices/x", "block", 1, NULL, buf, (size_t)len - 1), -ENOBUFS);
}

static void test_scan_fixture(void)
{
        struct devset s;
        size_t it = 0;
        const struct devset_entry *e;

        devset_init(&s, 0);
        check_int(resync_scan(FIXTURE_DIR "/sysfs", &s), 0);
        check_int(s.n, 11);
        check_str(devset_get(&s, "/devices/pci0000:00/0000:00:1f.6"), "pci");
        check_str(devset_get(&s, "/devices/pci0000:00/0000:00:1f.6/net/enp0s31f6"), "net");
        check_str(devset_get(&s, "/devices/pci0000:00/0000:00:1f.6/firmware/0000:00:1f.6"), "firmware");
        check_str(devset_get(&s,
                             "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0001/input/"
                             "input5/event3"),
                  "input");
        /* devices/virtual/net/evil0 is a link to /etc: never entered. */
        while ((e = devset_next(&s, &it)))
                check(strncmp(e->devpath, "/devices/virtual/net/evil0", 26) != 0);
        devset_clear(&s);

        devset_init(&s, 0);
        check(resync_scan(FIXTURE_DIR "/no-such-dir", &s) < 0);
        check_int(s.n, 0);
        /* At the bound the rest is counted, not listed. */
        devset_init(&s, 4);
        check_int(resync_scan(FIXTURE_DIR "/sysfs", &s), 0);
        check_int(s.n, 4);
        check_int(s.refused, 7);
        devset_clear(&s);
}

static void mk(const char *root, const char *rel, bool dir)
{
        char p[8192];

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        if (dir)
                check(mkdir(p, 0755) == 0);
        else
                check(close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == 0);
}

static void ln(const char *root, const char *target, const char *rel)
{
        char p[8192];

        snprintf(p, sizeof(p), "%s/%s", root, rel);
        check(symlink(target, p) == 0);
}

/* A tree with traps: no subsystem link, a linked directory, depth beyond the bound. */
static void test_scan_traps(void)
{
        char root[] = "/tmp/hotplugd-resync.XXXXXX", rel[1024], cmd[256];
        struct devset s;
        size_t len;

        check(mkdtemp(root) != NULL);
        mk(root, "devices", true);
        mk(root, "devices/good", true);
        mk(root, "devices/good/uevent", false);
        ln(root, "../../class/misc", "devices/good/subsystem");
        mk(root, "devices/nosub", true);
        mk(root, "devices/nosub/uevent", false);
        mk(root, "devices/hidden", true);
        mk(root, "devices/hidden/dev", true);
        mk(root, "devices/hidden/dev/uevent", false);
        ln(root, "../../../class/misc", "devices/hidden/dev/subsystem");
        ln(root, "hidden", "devices/link"); /* would list devices/link/dev twice */
        /* A chain deeper than the walk goes, with a device at every level. */
        len = (size_t)snprintf(rel, sizeof(rel), "devices/deep");
        for (int d = 0; d < HP_RESYNC_DEPTH_MAX + 4; d++) {
                mk(root, rel, true);
                snprintf(rel + len, sizeof(rel) - len, "/uevent");
                mk(root, rel, false);
                snprintf(rel + len, sizeof(rel) - len, "/subsystem");
                ln(root, "/nowhere/deep", rel);
                len += (size_t)snprintf(rel + len, sizeof(rel) - len, "/d");
        }

        devset_init(&s, 0);
        check_int(resync_scan(root, &s), 0);
        check_str(devset_get(&s, "/devices/good"), "misc");
        check_str(devset_get(&s, "/devices/hidden/dev"), "misc");
        check(devset_get(&s, "/devices/nosub") == NULL);
        check(devset_get(&s, "/devices/link/dev") == NULL);
        check_str(devset_get(&s, "/devices/deep"), "deep");
        /* /devices is level 1, /devices/deep level 2: HP_RESYNC_DEPTH_MAX - 1 levels of deep. */
        check_int(s.n, 2 + HP_RESYNC_DEPTH_MAX - 1);
        devset_clear(&s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        check(system(cmd) == 0);
}

static double ms_since(const struct timespec *a)
{
        struct timespec b;

        clock_gettime(CLOCK_MONOTONIC, &b);
        return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/* The real /sys: every listed device has a uevent file; lo is there as net. */
static void test_scan_sys(void)
{
        struct devset s, known;
        struct resync_plan p;
        struct timespec t;
        size_t it = 0;
        const struct devset_entry *e;
        char path[4200];

        if (access("/sys/devices", R_OK) < 0) {
                fprintf(stderr, "no /sys/devices, skipped\n");
                return;
        }
        devset_init(&s, 0);
        clock_gettime(CLOCK_MONOTONIC, &t);
        check_int(resync_scan("/sys", &s), 0);
        fprintf(stderr, "/sys: %zu devices listed in %.2f ms\n", s.n, ms_since(&t));
        check(s.n > 0);
        if (access("/sys/devices/virtual/net/lo", F_OK) == 0)
                check_str(devset_get(&s, "/devices/virtual/net/lo"), "net");
        while ((e = devset_next(&s, &it))) {
                snprintf(path, sizeof(path), "/sys%s/uevent", e->devpath);
                check(access(path, F_OK) == 0 || errno == ENOENT); /* ENOENT: gone meanwhile */
        }
        devset_init(&known, 0);
        clock_gettime(CLOCK_MONOTONIC, &t);
        check_int(plan(&known, &s, HP_RESYNC_WRITES_MAX, &p), 0);
        fprintf(stderr, "/sys: plan for %zu devices in %.2f ms\n", p.n, ms_since(&t));
        check_int(p.n_add, s.n);
        resync_plan_free(&p);
        /* Limited to net: one write per network interface, every other device left alone. */
        check_int(resync_plan_build(&(const struct resync_plan_args){ .known = &known, .now = &s,
                                                                      .max_writes = HP_RESYNC_WRITES_MAX,
                                                                      .subsystems = "net" },
                                    &p),
                  0);
        fprintf(stderr, "/sys: resync-subsystems=net writes %zu of %zu, leaves %zu alone\n", p.n, s.n,
                p.left_alone);
        check_int(p.n + p.left_alone, s.n);
        for (size_t i = 0; i < p.n; i++)
                check_str(p.op[i].subsystem, "net");
        resync_plan_free(&p);
        devset_clear(&s);
}

int main(void)
{
        run_test(test_plan);
        run_test(test_plan_bound);
        run_test(test_plan_subsystems);
        run_test(test_pick_seqnums);
        run_test(test_datagram);
        run_test(test_scan_fixture);
        run_test(test_scan_traps);
        run_test(test_scan_sys);
        return 0;
}
