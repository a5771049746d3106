/* SPDX-License-Identifier: MIT */
/*
 * The control socket against a fake manager: a real sd-event loop, a real
 * socket in a temporary directory, clients in this process (and one forked
 * child that drops root).  Also the record format and the UUID set.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "ctl/client.h"
#include "control/control-proto.h"
#include "control/control.h"
#include "pipeline/devinfo.h"
#include "pipeline/ledger.h"
#include "shared/bounds.h"
#include "shared/json.h"
#include "test.h"
#include "control/uuid-set.h"
#include "control/monitor-filter.h"
#include "uevent/uevent.h"

#define U1 "0f8fad5b-d9cb-469f-a165-70867728950e"
#define U2 "7c9e6679-7425-40de-944b-e07fc1f90ae7"
#define U3 "16fd2706-8baf-433b-82eb-8c7fada847da"

struct fake {
        struct ledger ledger;
        struct control_progress progress;
        size_t queued, running;
        bool paused;
        int pauses, resumes, reloads, syncs;
        int sync_result;
        bool reload_fails;
        uint64_t held_on_x;     /* lowest SEQNUM held on /devices/x (and its DEVPATH_OLD) */
        unsigned blame_long;    /* blame rows of 3000-byte names after the two short ones */
        int known_x;            /* device_known() of /devices/x (1 for any other) */
        struct devinfo info;    /* hotplugctl info's history (test_info) */
};

static void fake_status(void *userdata, struct control_status *ret)
{
        struct fake *f = userdata;

        *ret = (struct control_status){
                .ledger = &f->ledger, .queued = f->queued, .running = f->running, .paused = f->paused,
                .received = 7, .started = 5, .finished = 4, .failed = 1,
                .pid = 4321, .version = "9.8", .since = 1700000000 * USEC_PER_SEC + 250000, .uptime = 1500000,
                .config = "/etc/hot plug.conf", .agent = "/sbin/hotplug", .log_level = "info", .log_target = "stderr",
        };
}

static void fake_agents(void *userdata, void (*fn)(const struct control_agent *a, void *arg), void *arg)
{
        struct control_agent a = { .seqnum = 104, .devpath = "/devices/virtual/net/x y", .program = "/sbin/hotplug",
                                   .pid = 4242, .started = now_usec(CLOCK_MONOTONIC) - 2000 * USEC_PER_MSEC };

        fn(&a, arg);
        a.seqnum = 105;
        a.pid = 4243;
        fn(&a, arg);
}

static void fake_progress(void *userdata, struct control_progress *ret)
{
        *ret = ((struct fake *)userdata)->progress;
}

static uint64_t fake_held_on(void *userdata, const char *devpath)
{
        return strcmp(devpath, "/devices/x") == 0 ? ((struct fake *)userdata)->held_on_x : 0;
}

static int fake_known(void *userdata, const char *devpath)
{
        return strcmp(devpath, "/devices/x") == 0 ? ((struct fake *)userdata)->known_x : 1;
}

static int fake_sync(void *userdata)
{
        struct fake *f = userdata;

        f->syncs++;
        return f->sync_result;
}

static int fake_pause(void *userdata)
{
        ((struct fake *)userdata)->pauses++;
        ((struct fake *)userdata)->paused = true;
        return 0;
}

static int fake_resume(void *userdata)
{
        ((struct fake *)userdata)->resumes++;
        ((struct fake *)userdata)->paused = false;
        return 0;
}

static int fake_reload(void *userdata, char *err, size_t size)
{
        struct fake *f = userdata;

        f->reloads++;
        if (!f->reload_fails)
                return 0;
        snprintf(err, size, "/etc/hotplugd/hotplugd.conf:3: unknown key 'frob'");
        return -EINVAL;
}

static void fake_blame_totals(void *userdata, struct control_blame_totals *ret)
{
        *ret = (struct control_blame_totals){ .events = 3, .runs = 4, .run_time = 700000, .order_wait = 250000,
                                              .slot_wait = 1000, .udev_wait = 212000 };
}

/* Two rows, then ((struct fake *)userdata)->blame_long rows of long names. */
static void fake_blame_rows(void *userdata, void (*fn)(const struct control_blame_row *r, void *arg), void *arg)
{
        static char long_name[3001];
        struct control_blame_row r = { .group = CONTROL_BLAME_PROGRAM, .name = "/etc/hotplug.d/net/10 slow",
                                       .count = 3, .total = 600000, .slowest = 240000, .slowest_seqnum = 2,
                                       .order_wait = 250000, .slot_wait = 1000, .udev_wait = 212000 };

        fn(&r, arg);
        r = (struct control_blame_row){ .group = CONTROL_BLAME_DEVICE, .name = "/devices/virtual/net/hpw0",
                                        .count = 2, .total = 480000, .slowest = 240000, .slowest_seqnum = 1 };
        fn(&r, arg);
        memset(long_name, 'x', sizeof(long_name) - 1);
        r.name = long_name;
        for (unsigned i = 0; i < ((struct fake *)userdata)->blame_long; i++)
                fn(&r, arg);
}

/* The history of test_info, and a model record with learnt variables for /devices/a b. */
static void fake_device_info(void *userdata, const char *devpath,
                             void (*fn)(const struct control_device_info *d, void *arg), void *arg)
{
        static const char vars[] = "PHYSDEVBUS=usb\0PHYSDEVDRIVER=usb-storage\0";
        struct fake *f = userdata;
        struct control_device_info d = { .devpath = devpath, .history = devinfo_get(&f->info, devpath),
                                         .present = strcmp(devpath, "/devices/a b") == 0 ? 1 : -ENODATA };

        if (strcmp(devpath, "/devices/a b") == 0) {
                d.modelled = true;
                d.rec = (struct devcache_entry){ .flags = DEVCACHE_LEARNT | DEVCACHE_BUS_KNOWN, .bus = "usb",
                                                 .driver = "", .data = vars, .size = sizeof(vars) - 1 };
        }
        fn(&d, arg);
}

/* The history's devices, then one only the resync set knows. */
static void fake_for_each_device(void *userdata, void (*fn)(const char *devpath, void *arg), void *arg)
{
        struct fake *f = userdata;
        const struct devinfo_device *d;
        size_t it = 0;

        while ((d = devinfo_next(&f->info, &it)))
                fn(d->devpath, arg);
        fn("/devices/known-only", arg);
}

static const struct control_ops fake_ops = {
        .status = fake_status,
        .for_each_agent = fake_agents,
        .progress = fake_progress,
        .lowest_held_on = fake_held_on,
        .device_known = fake_known,
        .sync_input = fake_sync,
        .pause = fake_pause,
        .resume = fake_resume,
        .reload = fake_reload,
        .blame_totals = fake_blame_totals,
        .for_each_blame_row = fake_blame_rows,
        .device_info = fake_device_info,
        .for_each_device = fake_for_each_device,
};

struct env {
        char dir[64];
        char path[128];
        sd_event *e;
        struct control *c;
        struct fake f;
};

static void env_up(struct env *t)
{
        memset(t, 0, sizeof(*t));
        strcpy(t->dir, "/tmp/test-control.XXXXXX");
        check(mkdtemp(t->dir));
        check(chmod(t->dir, 0755) == 0);
        snprintf(t->path, sizeof(t->path), "%s/run/control", t->dir); /* parent created by control_new */
        ledger_init(&t->f.ledger, 100);
        t->f.sync_result = 1;
        check(sd_event_new(&t->e) >= 0);
        check_int(control_new(t->e, t->path, -1, &fake_ops, &t->f, &t->c), 0);
}

static void env_down(struct env *t)
{
        char run[160];

        t->c = control_free(t->c);
        check(access(t->path, F_OK) < 0); /* we created it, so we removed it */
        sd_event_unref(t->e);
        snprintf(run, sizeof(run), "%s/run", t->dir);
        check(rmdir(run) == 0);
        check(rmdir(t->dir) == 0);
}

/* Run the loop until it has nothing to do right now. */
static void pump(struct env *t)
{
        for (int i = 0; i < 1000 && sd_event_run(t->e, 0) > 0; i++)
                ;
}

static int connect_to(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

        check(fd >= 0);
        strcpy(sa.sun_path, path);
        check(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
        return fd;
}

static void send_req(int fd, const char *req)
{
        check(send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req));
}

/* A record if one arrives within @ms while the loop runs; false otherwise. */
static bool try_recv(struct env *t, int fd, char *buf, int ms)
{
        for (int waited = 0;; waited += 5) {
                ssize_t n;

                pump(t);
                n = recv(fd, buf, CTL_RECORD_SIZE, MSG_DONTWAIT);
                if (n > 0) {
                        buf[n] = '\0';
                        return true;
                }
                if (n == 0 || waited >= ms)
                        return false;
                (void)sd_event_run(t->e, 5000);
        }
}

static void recv_rec(struct env *t, int fd, char *buf)
{
        check(try_recv(t, fd, buf, 3000));
}

static void expect_word(struct env *t, int fd, const char *word, char *buf)
{
        recv_rec(t, fd, buf);
        if (!ctlmsg_is(buf, word))
                fprintf(stderr, "got: %s\n", buf);
        check(ctlmsg_is(buf, word));
}

static uint64_t u64_of(const char *rec, const char *key)
{
        uint64_t v = 0;

        check_int(ctlmsg_get_u64(rec, key, &v), 0);
        return v;
}

static void expect_error(struct env *t, int fd, const char *req, int error)
{
        char rec[CTL_RECORD_SIZE];

        send_req(fd, req);
        expect_word(t, fd, "error", rec);
        check_int(u64_of(rec, "errno"), error);
}

static void test_proto(void)
{
        struct ctlmsg m;
        char val[64], key[16];
        const char *p;

        ctlmsg_init(&m, "received");
        ctlmsg_add_u64(&m, "seqnum", 42);
        ctlmsg_add_str(&m, "devpath", "/a b\\c\n");
        ctlmsg_add_time(&m, "time", 1700000000123456ULL);
        check_str(m.buf, "received seqnum=42 devpath=/a\\x20b\\x5cc\\x0a time=1700000000.123456");
        check(ctlmsg_is(m.buf, "received"));
        check(!ctlmsg_is(m.buf, "receive"));
        check_int(ctlmsg_get(m.buf, "devpath", val, sizeof(val)), 0);
        check_str(val, "/a b\\c\n");
        check_int(ctlmsg_get(m.buf, "nope", val, sizeof(val)), -ENOENT);
        check_int(ctlmsg_get(m.buf, "devpath", val, 4), -ENOBUFS);
        check_int(ctlmsg_get("x k=\\x00", "k", val, sizeof(val)), -EBADMSG);
        check_int(ctlmsg_get("x k=ab\\x4", "k", val, sizeof(val)), -EBADMSG);
        p = ctlmsg_next_field(m.buf, key, sizeof(key), val, sizeof(val));
        check(p);
        check_str(key, "seqnum");
        p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val));
        check_str(val, "/a b\\c\n");
        p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val));
        check_str(key, "time");
        check(!ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val)));
        /* A key outside [a-z0-9_] is a malformed field (hotplugctl monitor prints keys raw). */
        check(!ctlmsg_next_field("x KEY=1", key, sizeof(key), val, sizeof(val)));
        check(!ctlmsg_next_field("x a\x1b[2J=1", key, sizeof(key), val, sizeof(val)));
        check(ctlmsg_next_field("x a_9=1", key, sizeof(key), val, sizeof(val)));

        /* A field that does not fit is left out whole. */
        char big[HP_CONTROL_RECORD_MAX];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        ctlmsg_init(&m, "w");
        ctlmsg_add_str(&m, "big", big);
        check(m.truncated);
        check_str(m.buf, "w");
}

static void test_uuid_set(void)
{
        struct uuid_set s;
        uint8_t a[16], b[16];
        char str[UUID_STRING_MAX];

        uuid_set_init(&s);
        check_int(uuid_from_string(U1, a), 0);
        uuid_to_string(a, str);
        check_str(str, U1);
        check_int(uuid_from_string("0F8FAD5B-D9CB-469F-A165-70867728950E", b), 0);
        check(memcmp(a, b, 16) == 0);
        check_int(uuid_from_string("0f8fad5b-d9cb-469f-a165-70867728950", b), -EINVAL);
        check_int(uuid_from_string("0f8fad5b-d9cb-469f-a165-70867728950e0", b), -EINVAL);
        check_int(uuid_from_string("0f8fad5bxd9cb-469f-a165-70867728950e", b), -EINVAL);
        check_int(uuid_from_string("", b), -EINVAL);
        check(!uuid_set_mark(&s, a));
        check_int(uuid_set_add(&s, a), 1);
        check_int(uuid_set_add(&s, a), 0);
        /* Grow past several doublings; every one stays findable. */
        for (unsigned i = 0; i < 1000; i++) {
                memset(b, 0, 16);
                memcpy(b, &i, sizeof(i));
                check_int(uuid_set_add(&s, b), 1);
        }
        check_int(s.n, 1001);
        check_int(uuid_set_pending(&s), 1001);
        for (unsigned i = 0; i < 1000; i += 2) {
                memset(b, 0, 16);
                memcpy(b, &i, sizeof(i));
                check(uuid_set_mark(&s, b));
                check(!uuid_set_mark(&s, b));
        }
        check_int(uuid_set_pending(&s), 501);
        check(uuid_set_mark(&s, a));
        check_int(uuid_set_pending(&s), 500);
        uuid_set_clear(&s);
        check_int(s.n, 0);
        check(!uuid_set_mark(&s, a));
}

static void test_status(void)
{
        struct env t;
        struct ledger_gap g;
        char rec[CTL_RECORD_SIZE], val[128];
        int fd;

        env_up(&t);
        /* Counters set by hand: this tests the reply, not the ledger. */
        t.f.ledger.processed = 3;
        t.f.ledger.gaps = 1;
        t.f.ledger.missing = 2;
        t.f.ledger.duplicates = 1;
        t.f.ledger.last = 105;
        t.f.ledger.recent[0] = (struct ledger_gap){ .first = 102, .last = 103, .class = GAP_UNEXPLAINED };
        t.f.ledger.n_recent = 1;
        t.f.queued = 3;
        t.f.running = 2;
        fd = connect_to(t.path);
        send_req(fd, "status");
        expect_word(&t, fd, "status", rec);
        check_int(u64_of(rec, "processed"), 3);
        check_int(u64_of(rec, "gaps"), 1);
        check_int(u64_of(rec, "missing"), 2);
        check_int(u64_of(rec, "duplicates"), 1);
        check_int(u64_of(rec, "baseline"), 100);
        check_int(u64_of(rec, "last"), 105);
        check_int(u64_of(rec, "queued"), 3);
        check_int(u64_of(rec, "running"), 2);
        check_int(u64_of(rec, "paused"), 0);
        check_int(u64_of(rec, "received"), 7);
        check_int(u64_of(rec, "failed"), 1);
        /* Who answers, right after. */
        expect_word(&t, fd, "daemon", rec);
        check_int(u64_of(rec, "pid"), 4321);
        check_int(u64_of(rec, "uptime_usec"), 1500000);
        check_int(ctlmsg_get(rec, "config", val, sizeof(val)), 0);
        check_str(val, "/etc/hot plug.conf");
        check_int(ctlmsg_get(rec, "since", val, sizeof(val)), 0);
        check_str(val, "1700000000.250000");
        check_int(ctlmsg_get(rec, "agent", val, sizeof(val)), 0);
        check_str(val, "/sbin/hotplug");
        check(ctlmsg_get(rec, "hotplug_d", val, sizeof(val)) < 0);
        check_int(ctlmsg_get(rec, "log_level", val, sizeof(val)), 0);
        check_str(val, "info");
        /* Recent gaps as the ledger reports them (each one a record, newest first). */
        for (unsigned i = 0; ledger_recent_gap(&t.f.ledger, i, &g); i++) {
                expect_word(&t, fd, "gap", rec);
                check_int(u64_of(rec, "first"), g.first);
                check_int(u64_of(rec, "last"), g.last);
                check_int(u64_of(rec, "count"), g.last - g.first + 1);
                check_int(ctlmsg_get(rec, "class", val, sizeof(val)), 0);
                check_str(val, gap_class_to_string(g.class));
        }
        expect_word(&t, fd, "agent", rec);
        check_int(u64_of(rec, "seqnum"), 104);
        check_int(u64_of(rec, "pid"), 4242);
        check(u64_of(rec, "age_ms") >= 1900 && u64_of(rec, "age_ms") < 60000);
        check_int(ctlmsg_get(rec, "devpath", val, sizeof(val)), 0);
        check_str(val, "/devices/virtual/net/x y");
        expect_word(&t, fd, "agent", rec);
        check_int(u64_of(rec, "seqnum"), 105);
        expect_word(&t, fd, "end", rec);

        /* pause, then status says so; resume; the connection serves many requests. */
        send_req(fd, "pause");
        expect_word(&t, fd, "ok", rec);
        check_int(t.f.pauses, 1);
        send_req(fd, "status");
        expect_word(&t, fd, "status", rec);
        check_int(u64_of(rec, "paused"), 1);
        while (!ctlmsg_is(rec, "end"))
                recv_rec(&t, fd, rec);
        send_req(fd, "resume");
        expect_word(&t, fd, "ok", rec);
        check_int(t.f.resumes, 1);
        check(!t.f.paused);
        close(fd);
        env_down(&t);
}

static void test_reload(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], msg[256];
        int fd;

        env_up(&t);
        fd = connect_to(t.path);
        send_req(fd, "reload");
        expect_word(&t, fd, "ok", rec);
        t.f.reload_fails = true;
        send_req(fd, "reload");
        expect_word(&t, fd, "error", rec);
        check_int(u64_of(rec, "errno"), EINVAL);
        check_int(ctlmsg_get(rec, "message", msg, sizeof(msg)), 0);
        check_str(msg, "/etc/hotplugd/hotplugd.conf:3: unknown key 'frob'");
        check_int(t.f.reloads, 2);
        close(fd);
        env_down(&t);
}

static void test_blame(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], val[CTL_RECORD_SIZE];
        size_t rows = 0, bytes = 0;
        int fd;

        env_up(&t);
        fd = connect_to(t.path);
        send_req(fd, "blame");
        expect_word(&t, fd, "blame", rec);
        check_int(u64_of(rec, "events"), 3);
        check_int(u64_of(rec, "runs"), 4);
        check_int(u64_of(rec, "run_usec"), 700000);
        check_int(u64_of(rec, "order_wait_usec"), 250000);
        check_int(u64_of(rec, "slot_wait_usec"), 1000);
        check_int(u64_of(rec, "udev_wait_usec"), 212000);
        expect_word(&t, fd, "row", rec);
        check_int(ctlmsg_get(rec, "group", val, sizeof(val)), 0);
        check_str(val, "program");
        check_int(ctlmsg_get(rec, "name", val, sizeof(val)), 0);
        check_str(val, "/etc/hotplug.d/net/10 slow");
        check_int(u64_of(rec, "count"), 3);
        check_int(u64_of(rec, "total_usec"), 600000);
        check_int(u64_of(rec, "slowest_usec"), 240000);
        check_int(u64_of(rec, "slowest_seqnum"), 2);
        check_int(u64_of(rec, "order_wait_usec"), 250000);
        check_int(u64_of(rec, "slot_wait_usec"), 1000);
        check_int(u64_of(rec, "udev_wait_usec"), 212000);
        expect_word(&t, fd, "row", rec);
        check_int(ctlmsg_get(rec, "group", val, sizeof(val)), 0);
        check_str(val, "device");
        check_int(u64_of(rec, "slowest_seqnum"), 1);
        check_int(u64_of(rec, "udev_wait_usec"), 0);
        expect_word(&t, fd, "end", rec);
        check_int(u64_of(rec, "left_out"), 0);
        check_int(ctlmsg_field_type("total_usec"), CTLMSG_UINT);
        check_int(ctlmsg_field_type("udev_wait_usec"), CTLMSG_UINT);

        /* More than half the output bound in rows: the rest are left out and counted, the
         * connection stays. */
        t.f.blame_long = 300;
        send_req(fd, "blame");
        expect_word(&t, fd, "blame", rec);
        for (recv_rec(&t, fd, rec); ctlmsg_is(rec, "row"); recv_rec(&t, fd, rec)) {
                rows++;
                bytes += strlen(rec) + 2;
        }
        check(ctlmsg_is(rec, "end"));
        check(rows > 2 && rows < 302);
        check(bytes <= HP_CONTROL_OUTPUT_MAX / 2);
        check_int(u64_of(rec, "left_out"), 302 - rows);
        expect_error(&t, fd, "blame now", EINVAL);
        send_req(fd, "status");
        expect_word(&t, fd, "status", rec);
        close(fd);
        env_down(&t);
}

static void test_settle(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE];
        int fd;

        env_up(&t);
        fd = connect_to(t.path);

        /* Event 108 still held: settle 110 waits, other requests meanwhile are busy. */
        t.f.progress = (struct control_progress){ .last_seen = 112, .lowest_held = 108 };
        send_req(fd, "settle 110 5000");
        check(!try_recv(&t, fd, rec, 50));
        check_int(t.f.syncs, 1);
        expect_error(&t, fd, "status", EBUSY);
        /* Something else finished, 108 still held: no answer. */
        control_notify_processed(t.c, 111);
        check(!try_recv(&t, fd, rec, 20));
        /* Held only above the target now. */
        t.f.progress.lowest_held = 111;
        control_notify_processed(t.c, 108);
        expect_word(&t, fd, "ok", rec);
        check_int(u64_of(rec, "seqnum"), 110);

        /* Nothing held, ledger already past: at once. */
        t.f.progress = (struct control_progress){ .last_seen = 120 };
        send_req(fd, "settle 115 5000");
        expect_word(&t, fd, "ok", rec);

        /* Target not seen, socket read to the end: it was not for us, at once. */
        t.f.progress = (struct control_progress){ .last_seen = 120 };
        send_req(fd, "settle 130 5000");
        expect_word(&t, fd, "ok", rec);

        /* Not seen and reading is paused: wait for a drain. */
        t.f.sync_result = 0;
        send_req(fd, "settle 130 5000");
        check(!try_recv(&t, fd, rec, 30));
        control_notify_processed(t.c, 119);
        check(!try_recv(&t, fd, rec, 20));
        control_notify_input_drained(t.c);
        expect_word(&t, fd, "ok", rec);

        /* Held forever: times out, saying what blocks. */
        t.f.progress = (struct control_progress){ .last_seen = 140, .lowest_held = 133 };
        send_req(fd, "settle 135 60");
        expect_word(&t, fd, "timeout", rec);
        check_int(u64_of(rec, "lowest_held"), 133);
        check_int(u64_of(rec, "seqnum"), 135);
        /* And the connection is idle again. */
        t.f.progress.lowest_held = 0;
        send_req(fd, "settle 135 60");
        expect_word(&t, fd, "ok", rec);

        /* A client that leaves while waiting is forgotten. */
        t.f.progress.lowest_held = 133;
        send_req(fd, "settle 135 5000");
        pump(&t);
        close(fd);
        pump(&t);
        check_int(control_clients(t.c), 0);
        control_notify_processed(t.c, 133);
        env_down(&t);
}

/* settle with a DEVPATH (hotplugctl wait): only the events on that path hold it. */
static void test_settle_device(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE];
        int fd;

        env_up(&t);
        fd = connect_to(t.path);
        /* Another device's event 100 is held: /devices/y is settled at once. */
        t.f.progress = (struct control_progress){ .last_seen = 120, .lowest_held = 100 };
        t.f.held_on_x = 110;
        send_req(fd, "settle 120 5000 /devices/y");
        expect_word(&t, fd, "ok", rec);
        /* /devices/x waits for its own event 110, not for 100. */
        send_req(fd, "settle 120 5000 /devices/x");
        check(!try_recv(&t, fd, rec, 30));
        control_notify_processed(t.c, 100);
        check(!try_recv(&t, fd, rec, 20));
        t.f.held_on_x = 0;
        control_notify_processed(t.c, 110);
        expect_word(&t, fd, "ok", rec);
        check_int(u64_of(rec, "seqnum"), 120);
        /* Held above the target only: done. */
        t.f.held_on_x = 121;
        send_req(fd, "settle 120 5000 /devices/x");
        expect_word(&t, fd, "ok", rec);
        /* A timeout names the device's lowest held event, not the whole queue's. */
        t.f.held_on_x = 115;
        send_req(fd, "settle 120 40 /devices/x");
        expect_word(&t, fd, "timeout", rec);
        check_int(u64_of(rec, "lowest_held"), 115);
        /* The device is forgotten with the wait: a plain settle sees the whole queue again. */
        t.f.held_on_x = 0;
        send_req(fd, "settle 120 40");
        expect_word(&t, fd, "timeout", rec);
        check_int(u64_of(rec, "lowest_held"), 100);
        expect_error(&t, fd, "settle 120 40 devices/x", EINVAL);
        expect_error(&t, fd, "settle 120 40 /a /b", EINVAL);
        close(fd);
        env_down(&t);
}

/*
 * "present" (hotplugctl wait for a device that is there): sysfs shows a
 * device before the kernel sends its add, so the settle waits until the
 * daemon has the add, and for it even when its SEQNUM is above the target
 * (read before the add was sent).
 */
static void test_settle_present(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE];
        int fd;

        env_up(&t);
        fd = connect_to(t.path);
        t.f.progress = (struct control_progress){ .last_seen = 120 };
        /* Not known, nothing held: a plain device settle answers, a present one waits. */
        send_req(fd, "settle 120 5000 /devices/x");
        expect_word(&t, fd, "ok", rec);
        send_req(fd, "settle 120 5000 /devices/x present");
        check(!try_recv(&t, fd, rec, 30));
        /* The add arrives as 125, above the target: known, held; still no answer. */
        t.f.known_x = 1;
        t.f.held_on_x = 125;
        t.f.progress.last_seen = 125;
        control_notify_processed(t.c, 124);
        check(!try_recv(&t, fd, rec, 20));
        t.f.held_on_x = 0;
        control_notify_processed(t.c, 125);
        expect_word(&t, fd, "ok", rec);
        /* Known and nothing held: at once; a timeout while not known says nothing is held. */
        send_req(fd, "settle 120 5000 /devices/x present");
        expect_word(&t, fd, "ok", rec);
        t.f.known_x = 0;
        send_req(fd, "settle 120 40 /devices/x present");
        expect_word(&t, fd, "timeout", rec);
        check_int(u64_of(rec, "lowest_held"), 0);
        /* The flag goes with the wait. */
        send_req(fd, "settle 120 5000 /devices/x");
        expect_word(&t, fd, "ok", rec);
        expect_error(&t, fd, "settle 120 40 /devices/x absent", EINVAL);
        expect_error(&t, fd, "settle 120 40 present", EINVAL);
        close(fd);
        env_down(&t);
}

static void test_uuids(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], missing[256];
        int fd;

        env_up(&t);
        fd = connect_to(t.path);
        send_req(fd, "watch-uuids " U1 " " U2);
        expect_word(&t, fd, "ok", rec);
        check_int(u64_of(rec, "watched"), 2);
        /* Processed before wait-uuids arrives: still counted. */
        control_notify_uuid(t.c, U1);
        control_notify_uuid(t.c, U3);           /* not ours */
        control_notify_uuid(t.c, "0");          /* not a UUID */
        send_req(fd, "wait-uuids 5000");
        check(!try_recv(&t, fd, rec, 30) || ctlmsg_is(rec, "progress"));
        control_notify_uuid(t.c, U2);
        do
                recv_rec(&t, fd, rec);
        while (ctlmsg_is(rec, "progress"));
        check(ctlmsg_is(rec, "ok"));
        check_int(u64_of(rec, "done"), 2);
        check_int(u64_of(rec, "total"), 2);

        /* The list is cleared after a wait; a missing UUID times out and is named. */
        send_req(fd, "watch-uuids " U3 " " U1);
        expect_word(&t, fd, "ok", rec);
        check_int(u64_of(rec, "watched"), 2);
        control_notify_uuid(t.c, U1);
        send_req(fd, "wait-uuids 50");
        do
                recv_rec(&t, fd, rec);
        while (ctlmsg_is(rec, "progress"));
        check(ctlmsg_is(rec, "timeout"));
        check_int(u64_of(rec, "done"), 1);
        check_int(ctlmsg_get(rec, "missing", missing, sizeof(missing)), 0);
        check_str(missing, U3);

        /* forget-uuids ticks off writes that failed. */
        send_req(fd, "watch-uuids " U2 " " U3);
        expect_word(&t, fd, "ok", rec);
        send_req(fd, "forget-uuids " U3);
        expect_word(&t, fd, "ok", rec);
        check_int(u64_of(rec, "pending"), 1);
        control_notify_uuid(t.c, U2);
        send_req(fd, "wait-uuids 5000");
        expect_word(&t, fd, "ok", rec);

        expect_error(&t, fd, "watch-uuids not-a-uuid", EINVAL);
        expect_error(&t, fd, "watch-uuids", EINVAL);
        expect_error(&t, fd, "wait-uuids", EINVAL);
        close(fd);
        env_down(&t);
}

/* "progress" records of one wait come at most every HP_CONTROL_PROGRESS_USEC,
 * and an advance held back by it is told once the interval is over. */
static void test_uuids_progress(void)
{
        enum { N = 50 };
        struct env t;
        char rec[CTL_RECORD_SIZE], req[64 + N * 37], uuid[N][37];
        int fd, records = 0, last = -1;
        size_t len;

        env_up(&t);
        fd = connect_to(t.path);
        len = (size_t)snprintf(req, sizeof(req), "watch-uuids");
        for (int i = 0; i < N; i++) {
                snprintf(uuid[i], sizeof(uuid[i]), "%08x-0000-4000-8000-%012x", 0x1000u + (unsigned)i, (unsigned)i);
                len += (size_t)snprintf(req + len, sizeof(req) - len, " %s", uuid[i]);
        }
        send_req(fd, req);
        expect_word(&t, fd, "ok", rec);
        check_int(u64_of(rec, "watched"), N);
        send_req(fd, "wait-uuids 5000");
        pump(&t);
        /* 40 of 50 done at once (each a step of 1%): at most one record. */
        for (int i = 0; i < 40; i++) {
                control_notify_uuid(t.c, uuid[i]);
                pump(&t);
        }
        while (try_recv(&t, fd, rec, 20)) {
                check(ctlmsg_is(rec, "progress"));
                records++;
                last = (int)u64_of(rec, "done");
        }
        /* One, or two if this machine took longer than the interval for them. */
        check(records <= 2);
        /* Nothing more done: once the interval is over, the held-back advance is told. */
        if (last != 40) {
                expect_word(&t, fd, "progress", rec);
                check_int(u64_of(rec, "done"), 40);
                check_int(u64_of(rec, "total"), N);
        }
        /* The next advance is told too, at once or after another interval. */
        control_notify_uuid(t.c, uuid[40]);
        expect_word(&t, fd, "progress", rec);
        check_int(u64_of(rec, "done"), 41);
        for (int i = 41; i < N; i++)
                control_notify_uuid(t.c, uuid[i]);
        do
                recv_rec(&t, fd, rec);
        while (ctlmsg_is(rec, "progress"));
        check(ctlmsg_is(rec, "ok"));
        check_int(u64_of(rec, "done"), N);
        /* The wait is over: nothing held back is told after it. */
        check(!try_recv(&t, fd, rec, (int)(HP_CONTROL_PROGRESS_USEC / 1000) + 50));
        close(fd);
        env_down(&t);
}

static void notify_received(struct env *t, uint64_t seqnum, const char *devpath)
{
        struct control_event e = {
                .kind = CONTROL_EVENT_RECEIVED, .seqnum = seqnum, .time = 1700000000000001ULL,
                .action = "add", .devpath = devpath, .subsystem = "net", .verdict = LEDGER_NEXT,
        };

        control_notify_event(t->c, &e);
}

/* A new connection that asked for @req ("monitor ..."), answered "ok". */
static int monitor_client(struct env *t, const char *req)
{
        char rec[CTL_RECORD_SIZE];
        int fd = connect_to(t->path);

        send_req(fd, req);
        expect_word(t, fd, "ok", rec);
        return fd;
}

static void test_monitor(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], val[64];
        struct control_event e;
        int plain, full;

        env_up(&t);
        plain = monitor_client(&t, "monitor");
        full = monitor_client(&t, "monitor processed");

        notify_received(&t, 200, "/devices/a");
        e = (struct control_event){ .kind = CONTROL_EVENT_GAP, .gap = { .first = 201, .last = 203,
                                                                        .class = GAP_OVERFLOW } };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_RECEIVED, .seqnum = 204, .devpath = "/devices/b",
                                    .verdict = LEDGER_GAP, .uuid = U1 };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_STARTED, .seqnum = 200, .pid = 77,
                                    .devpath = "/devices/a", .program = "/sbin/hotplug" };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_FINISHED, .seqnum = 200, .devpath = "/devices/a",
                                    .program = "/sbin/hotplug", .status = "exit 0", .duration_usec = 1234 };
        control_notify_event(t.c, &e);

        /* The plain monitor: kernel-side records only, in order. */
        expect_word(&t, plain, "received", rec);
        check_int(u64_of(rec, "seqnum"), 200);
        check_int(ctlmsg_get(rec, "time", val, sizeof(val)), 0);
        check_str(val, "1700000000.000001");
        expect_word(&t, plain, "gap", rec);
        check_int(u64_of(rec, "first"), 201);
        check_int(u64_of(rec, "count"), 3);
        check_int(ctlmsg_get(rec, "class", val, sizeof(val)), 0);
        check_str(val, "overflow");
        expect_word(&t, plain, "received", rec);
        check_int(u64_of(rec, "seqnum"), 204);
        check_int(ctlmsg_get(rec, "verdict", val, sizeof(val)), 0);
        check_str(val, "gap");
        check_int(ctlmsg_get(rec, "uuid", val, sizeof(val)), 0);
        check_str(val, U1);
        check(!try_recv(&t, plain, rec, 20));

        /* The processed monitor gets everything, in order. */
        expect_word(&t, full, "received", rec);
        expect_word(&t, full, "gap", rec);
        expect_word(&t, full, "received", rec);
        expect_word(&t, full, "started", rec);
        check_int(u64_of(rec, "pid"), 77);
        expect_word(&t, full, "finished", rec);
        check_int(u64_of(rec, "duration_us"), 1234);
        check_int(ctlmsg_get(rec, "status", val, sizeof(val)), 0);
        check_str(val, "exit 0");

        expect_error(&t, plain, "status", EBUSY);
        close(plain);
        close(full);
        env_down(&t);
}

/* The entries of @n env records read into @out (joined "var"/"cont" fields, one entry per line). */
static void join_entries(const char *rec, char *out, size_t size)
{
        char key[16], val[HP_CONTROL_RECORD_MAX + 1];
        size_t len = strlen(out);

        for (const char *p = rec; (p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val)));) {
                bool var = strcmp(key, "var") == 0;

                if (!var && strcmp(key, "cont") != 0)
                        continue;
                check(len + strlen(val) + 2 < size);
                if (var && len > 0)
                        out[len++] = '\n';
                strcpy(out + len, val);
                len += strlen(val);
        }
}

static void test_entries(void)
{
        static char big[8000], joined[40000], want[40000];
        const char *entries[3] = { "A=1", big, "C=" };
        struct ctlmsg_cursor cur = { .entries = entries, .n = 3 };
        struct ctlmsg m;
        int records = 0;
        bool done;

        /* 8000 bytes, most escaped to 4: far more than one record. */
        strcpy(big, "BIG=");
        for (size_t i = 4; i < sizeof(big) - 1; i++)
                big[i] = i % 3 ? (char)0xc3 : ' ';
        big[sizeof(big) - 1] = '\0';
        joined[0] = '\0';
        do {
                ctlmsg_init(&m, "env");
                ctlmsg_add_u64(&m, "seqnum", 1);
                done = ctlmsg_add_entries(&m, &cur);
                check(m.len <= HP_CONTROL_RECORD_MAX && m.buf[m.len] == '\0' && strlen(m.buf) == m.len);
                check(!m.truncated);
                /* Every record after the first starts where the last one stopped. */
                check(records == 0 || strstr(m.buf, " cont=") == strchr(strchr(m.buf, ' ') + 1, ' '));
                join_entries(m.buf, joined, sizeof(joined));
                records++;
        } while (!done);
        check(records >= 8);
        snprintf(want, sizeof(want), "A=1\n%s\nC=", big);
        check(strcmp(joined, want) == 0);

        /* Nothing at all: a record of no entries, done at once. */
        cur = (struct ctlmsg_cursor){ .entries = entries, .n = 0 };
        ctlmsg_init(&m, "env");
        check(ctlmsg_add_entries(&m, &cur));
        check_str(m.buf, "env");
}

/* Write @rec's fields as one JSON object into @out. */
static void json_of(const char *rec, char *out, size_t size)
{
        struct json_writer w;
        FILE *f = fmemopen(out, size, "w");

        check(f);
        json_init(&w, f);
        json_begin_object(&w);
        ctlmsg_json_fields(&w, rec);
        json_end_object(&w);
        check_int(json_done(&w), 0);
        check(fclose(f) == 0);
}

static void test_json_fields(void)
{
        char out[512];

        /* Numbers where the protocol has them; text stays text whatever it looks like. */
        json_of("status processed=5 paused=1 resync=0 ordering=007 asleep=12", out, sizeof(out));
        check_str(out, "{\"processed\":5,\"paused\":true,\"resync\":false,\"ordering\":\"007\",\"asleep\":12}");
        json_of("received seqnum=42 time=1700000000.000001 devpath=42 action=1. uuid=" U1, out, sizeof(out));
        check_str(out, "{\"seqnum\":42,\"time\":1700000000.000001,\"devpath\":\"42\",\"action\":\"1.\","
                       "\"uuid\":\"" U1 "\"}");
        /* A number field that is not a number is text, never a guess. */
        json_of("x seqnum=007 pid=-1 time=1. paused=yes", out, sizeof(out));
        check_str(out, "{\"seqnum\":\"007\",\"pid\":\"-1\",\"time\":\"1.\",\"paused\":\"yes\"}");
        /* Escaped bytes come back: UTF-8 as text, anything else as bytes. */
        json_of("x program=caf\\xc3\\xa9\\x0a status=\\xff", out, sizeof(out));
        check_str(out, "{\"program\":\"caf\xc3\xa9\\n\",\"status\":[255]}");
}

/* One env record of @set (sets that fit one record), its entries joined into @out; returns its more= value. */
static uint64_t expect_env(struct env *t, int fd, uint64_t seqnum, const char *set, char *out, size_t size)
{
        char rec[CTL_RECORD_SIZE], val[32];

        out[0] = '\0';
        expect_word(t, fd, "env", rec);
        check_int(u64_of(rec, "seqnum"), seqnum);
        check_int(ctlmsg_get(rec, "set", val, sizeof(val)), 0);
        check_str(val, set);
        join_entries(rec, out, size);
        return u64_of(rec, "more");
}

/* A parsed event for the monitor filters: "KEY=VALUE" entries after the header. */
struct fev {
        char buf[512];
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent ev;
};

static void fev_make(struct fev *f, const char *action, const char *devpath, const char *subsystem, uint64_t seq,
                     const char *extra)
{
        int n = snprintf(f->buf, sizeof(f->buf), "%s@%s%cACTION=%s%cDEVPATH=%s%cSUBSYSTEM=%s%cSEQNUM=%llu%c%s",
                         action, devpath, 0, action, 0, devpath, 0, subsystem, 0, (unsigned long long)seq, 0,
                         extra ? extra : "");
        size_t size = (size_t)n + (extra && *extra ? 1 : 0);

        for (char *p = f->buf; p < f->buf + size; p++) /* extra holds its entries separated by '|' */
                if (*p == '|')
                        *p = '\0';
        check_int(uevent_parse(f->buf, size, f->vars, &f->ev, NULL), 0);
}

static void test_monitor_filter_match(void)
{
        struct monitor_filter *f = calloc(1, sizeof(*f));
        struct fev disk, part, net, loop;

        check(f);
        fev_make(&disk, "add", "/devices/virtual/block/zram0", "block", 1, "DEVTYPE=disk|MAJOR=252");
        fev_make(&part, "add", "/devices/x/block/sda/sda1", "block", 2, "DEVTYPE=partition");
        fev_make(&net, "change", "/devices/virtual/net/lo", "net", 3, "INTERFACE=lo|SYNTH_UUID=" U1);
        fev_make(&loop, "add", "/devices/virtual/bdi/7:0", "bdi", 4, NULL);
        monitor_filter_clear(f);
        check(monitor_filter_match(f, &loop.ev)); /* empty: everything */
        check_int(monitor_filter_add(f, "subsystem", "block/disk"), 0);
        check(monitor_filter_match(f, &disk.ev));
        check(!monitor_filter_match(f, &part.ev));
        check(!monitor_filter_match(f, &net.ev));
        check_int(monitor_filter_add(f, "subsystem", "net"), 0); /* alternatives of a kind */
        check(monitor_filter_match(f, &net.ev));
        check(!monitor_filter_match(f, &loop.ev));
        check_int(monitor_filter_add(f, "property", "SYNTH_UUID=0f8fad5b-*"), 0); /* and across kinds */
        check(monitor_filter_match(f, &net.ev));
        check(!monitor_filter_match(f, &disk.ev));
        monitor_filter_clear(f);
        check_int(monitor_filter_add(f, "property", "MAJOR=25[0-9]"), 0);
        check_int(monitor_filter_add(f, "property", "ACTION=change"), 0);
        check(monitor_filter_match(f, &disk.ev));
        check(monitor_filter_match(f, &net.ev));
        check(!monitor_filter_match(f, &part.ev));
        /* Refused: no subsystem, a slash too many, empty DEVTYPE, no '=', a lower-case key, an unknown kind. */
        check_int(monitor_filter_add(f, "subsystem", ""), -EINVAL);
        check_int(monitor_filter_add(f, "subsystem", "block/disk/x"), -EINVAL);
        check_int(monitor_filter_add(f, "subsystem", "block/"), -EINVAL);
        check_int(monitor_filter_add(f, "property", "MAJOR"), -EINVAL);
        check_int(monitor_filter_add(f, "property", "major=1"), -EINVAL);
        check_int(monitor_filter_add(f, "tag", "x"), -EINVAL);
        /* Bounded: HP_CONTROL_MONITOR_MATCHES_MAX of a kind. */
        monitor_filter_clear(f);
        for (int i = 0; i < HP_CONTROL_MONITOR_MATCHES_MAX; i++)
                check_int(monitor_filter_add(f, "subsystem", "net"), 0);
        check_int(monitor_filter_add(f, "subsystem", "net"), -E2BIG);
        free(f);
}

/* The filter travels in the request: what does not pass is never sent, gaps always are. */
static void test_monitor_filter(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], val[64];
        struct control_event e;
        struct fev disk, net;
        int nets, disks, all;

        env_up(&t);
        fev_make(&disk, "add", "/devices/virtual/block/zram0", "block", 10, "DEVTYPE=disk");
        fev_make(&net, "change", "/devices/virtual/net/lo", "net", 11, "INTERFACE=lo");
        nets = monitor_client(&t, "monitor processed subsystem=net");
        /* Values are escaped as in records: "block/disk" with its slash as \x2f works too. */
        disks = monitor_client(&t, "monitor property=DEVTYPE=d\\x69sk subsystem=block\\x2fdisk");
        all = monitor_client(&t, "monitor processed");
        e = (struct control_event){ .kind = CONTROL_EVENT_RECEIVED, .seqnum = 10, .devpath = disk.ev.devpath,
                                    .subsystem = "block", .ev = &disk.ev };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_GAP, .gap = { .first = 9, .last = 9 } };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_RECEIVED, .seqnum = 11, .devpath = net.ev.devpath,
                                    .subsystem = "net", .ev = &net.ev };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_STARTED, .seqnum = 10, .pid = 7, .devpath = disk.ev.devpath,
                                    .program = "/sbin/hotplug", .name = "block", .ev = &disk.ev };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_STARTED, .seqnum = 11, .pid = 8, .devpath = net.ev.devpath,
                                    .program = "/sbin/hotplug", .name = "net", .ev = &net.ev };
        control_notify_event(t.c, &e);

        expect_word(&t, nets, "gap", rec);
        expect_word(&t, nets, "received", rec);
        check_int(u64_of(rec, "seqnum"), 11);
        expect_word(&t, nets, "started", rec);
        check_int(u64_of(rec, "seqnum"), 11);
        check_int(ctlmsg_get(rec, "name", val, sizeof(val)), 0);
        check_str(val, "net");
        check(!try_recv(&t, nets, rec, 20));
        expect_word(&t, disks, "received", rec);
        check_int(u64_of(rec, "seqnum"), 10);
        expect_word(&t, disks, "gap", rec);
        check(!try_recv(&t, disks, rec, 20));
        for (int i = 0; i < 5; i++)
                check(try_recv(&t, all, rec, 200));
        /* Bad filters are refused with the usage, and the connection stays usable. */
        close(all);
        all = connect_to(t.path);
        expect_error(&t, all, "monitor subsystem=a/b/c", EINVAL);
        expect_error(&t, all, "monitor tag=x", EINVAL);
        expect_error(&t, all, "monitor property=lower=1", EINVAL);
        expect_error(&t, all, "monitor subsystem=", EINVAL);
        close(nets);
        close(disks);
        close(all);
        env_down(&t);
}

static void test_monitor_properties(void)
{
        static char big[6000], got[30000];
        const char *kernel[] = { "ACTION=add", "DEVPATH=/devices/a", "NOTE=caf\xc3\xa9 \"x\"", big, "SEQNUM=300" };
        const char *added[] = { "PHYSDEVPATH=/devices/p" };
        const char *argv[] = { "/sbin/hotplug", "net" };
        const char *agent_env[] = { "HOME=/", "PATH=/sbin:/bin", "ACTION=add" };
        char rec[CTL_RECORD_SIZE];
        struct control_event e;
        struct env t;
        int plain, props, full;

        snprintf(big, sizeof(big), "BIG=%0*d", (int)sizeof(big) - 6, 7);
        env_up(&t);
        plain = monitor_client(&t, "monitor processed");
        props = monitor_client(&t, "monitor properties");
        full = monitor_client(&t, "monitor properties processed");

        e = (struct control_event){ .kind = CONTROL_EVENT_RECEIVED, .seqnum = 300, .action = "add",
                                    .devpath = "/devices/a", .subsystem = "net", .env = kernel, .n_env = 5 };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_QUEUED, .seqnum = 300, .devpath = "/devices/a",
                                    .env = added, .n_env = 1 };
        control_notify_event(t.c, &e);
        e = (struct control_event){ .kind = CONTROL_EVENT_STARTED, .seqnum = 300, .pid = 9, .devpath = "/devices/a",
                                    .program = "/sbin/hotplug", .env = agent_env, .n_env = 3, .argv = argv,
                                    .n_argv = 2 };
        control_notify_event(t.c, &e);

        /* Without properties: the records as they always were, nothing more. */
        expect_word(&t, plain, "received", rec);
        expect_word(&t, plain, "queued", rec);
        expect_word(&t, plain, "started", rec);
        check(!try_recv(&t, plain, rec, 20));

        /* properties alone: the kernel's entries after the received record, cut across records. */
        expect_word(&t, props, "received", rec);
        got[0] = '\0';
        for (int n = 0;; n++) {
                expect_word(&t, props, "env", rec);
                check(strstr(rec, " set=kernel "));
                join_entries(rec, got, sizeof(got));
                if (u64_of(rec, "more") == 0)
                        break;
                check(n < 10);
        }
        char want[sizeof(got)];
        snprintf(want, sizeof(want), "ACTION=add\nDEVPATH=/devices/a\nNOTE=caf\xc3\xa9 \"x\"\n%s\nSEQNUM=300", big);
        check(strcmp(got, want) == 0);
        check(!try_recv(&t, props, rec, 20));

        /* properties and processed: handler additions, argv, then the agent's environment. */
        expect_word(&t, full, "received", rec);
        do
                expect_word(&t, full, "env", rec);
        while (u64_of(rec, "more") == 1);
        expect_word(&t, full, "queued", rec);
        check_int(expect_env(&t, full, 300, "handlers", got, sizeof(got)), 0);
        check_str(got, "PHYSDEVPATH=/devices/p");
        expect_word(&t, full, "started", rec);
        check_int(expect_env(&t, full, 300, "argv", got, sizeof(got)), 1);
        check_str(got, "/sbin/hotplug\nnet");
        check_int(expect_env(&t, full, 300, "agent", got, sizeof(got)), 0);
        check_str(got, "HOME=/\nPATH=/sbin:/bin\nACTION=add");
        check(!try_recv(&t, full, rec, 20));

        /* An empty set still ends the event's entries. */
        e = (struct control_event){ .kind = CONTROL_EVENT_QUEUED, .seqnum = 301, .devpath = "/devices/a" };
        control_notify_event(t.c, &e);
        expect_word(&t, full, "queued", rec);
        expect_word(&t, full, "env", rec);
        check_str(rec, "env seqnum=301 set=handlers more=0");

        close(plain);
        close(props);
        close(full);
        env_down(&t);
}

static void test_slow_monitor(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], devpath[2048];
        int fd, fast;
        uint64_t n_sent = 0, got = 0, last = 0;
        bool error_seen = false;

        env_up(&t);
        fd = connect_to(t.path);
        fast = connect_to(t.path);
        send_req(fd, "monitor");
        expect_word(&t, fd, "ok", rec);
        send_req(fast, "status");
        do
                recv_rec(&t, fast, rec);
        while (!ctlmsg_is(rec, "end"));
        memset(devpath, 'd', sizeof(devpath) - 1);
        devpath[0] = '/';
        devpath[sizeof(devpath) - 1] = '\0';
        /* Far more than the socket buffer plus HP_CONTROL_OUTPUT_MAX; the reader sleeps. */
        while (n_sent < 3 * HP_CONTROL_OUTPUT_MAX / sizeof(devpath)) {
                notify_received(&t, ++n_sent, devpath);
                if (n_sent % 64 == 0)
                        pump(&t);
        }
        /* The other client is unaffected. */
        send_req(fast, "pause");
        expect_word(&t, fast, "ok", rec);

        /* The slow reader gets what was already in its socket, in order, then why. */
        while (try_recv(&t, fd, rec, 1000)) {
                if (ctlmsg_is(rec, "error")) {
                        check_int(u64_of(rec, "errno"), ENOBUFS);
                        error_seen = true;
                        break;
                }
                check(ctlmsg_is(rec, "received"));
                check(u64_of(rec, "seqnum") == last + 1);
                last++;
                got++;
        }
        check(error_seen);
        check(got > 0 && got < n_sent);
        fprintf(stderr, "   slow monitor: %" PRIu64 " of %" PRIu64 " records delivered, then dropped\n", got, n_sent);
        check(!try_recv(&t, fd, rec, 50)); /* closed */
        check_int(control_clients(t.c), 1);
        close(fd);
        close(fast);
        env_down(&t);
}

static void test_malformed(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], big[HP_CONTROL_REQUEST_MAX + 100];
        int fd;

        env_up(&t);
        fd = connect_to(t.path);
        expect_error(&t, fd, "frobnicate", EINVAL);
        expect_error(&t, fd, "status now", EINVAL);
        expect_error(&t, fd, "status ", EINVAL);
        expect_error(&t, fd, " status", EINVAL);
        expect_error(&t, fd, "settle  1 2", EINVAL);
        expect_error(&t, fd, "settle 1", EINVAL);
        expect_error(&t, fd, "settle x 100", EINVAL);
        expect_error(&t, fd, "settle 1 -5", EINVAL);
        expect_error(&t, fd, "settle 1 99999999999999", EINVAL);
        expect_error(&t, fd, "settle 99999999999999999999999 1", EINVAL);
        expect_error(&t, fd, "monitor everything", EINVAL);
        expect_error(&t, fd, "monitor processed processed", EINVAL);
        expect_error(&t, fd, "monitor properties properties", EINVAL);
        expect_error(&t, fd, "monitor properties processed x", EINVAL);
        expect_error(&t, fd, "status\n", EINVAL);
        expect_error(&t, fd, "st\x01tus", EINVAL);
        expect_error(&t, fd, "\xff\xfe", EINVAL);
        /* An embedded NUL. */
        check(send(fd, "status\0x", 8, MSG_NOSIGNAL) == 8);
        expect_word(&t, fd, "error", rec);
        /* Oversized: an error, not a crash, and the connection lives on. */
        memset(big, 'a', sizeof(big));
        check(send(fd, big, sizeof(big), MSG_NOSIGNAL) == (ssize_t)sizeof(big));
        expect_word(&t, fd, "error", rec);
        check_int(u64_of(rec, "errno"), EMSGSIZE);
        /* Exactly the limit is read whole (and is merely unknown). */
        check(send(fd, big, HP_CONTROL_REQUEST_MAX, MSG_NOSIGNAL) == HP_CONTROL_REQUEST_MAX);
        expect_word(&t, fd, "error", rec);
        check_int(u64_of(rec, "errno"), EINVAL);
        send_req(fd, "status");
        expect_word(&t, fd, "status", rec);
        close(fd);
        env_down(&t);
}

static void test_too_many_clients(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE];
        int fds[HP_CONTROL_CLIENTS_MAX], extra;

        env_up(&t);
        for (int i = 0; i < HP_CONTROL_CLIENTS_MAX; i++) {
                fds[i] = connect_to(t.path);
                pump(&t);
        }
        check_int(control_clients(t.c), HP_CONTROL_CLIENTS_MAX);
        extra = connect_to(t.path);
        send_req(extra, "status");
        expect_word(&t, extra, "error", rec);
        check_int(u64_of(rec, "errno"), EBUSY);
        check(!try_recv(&t, extra, rec, 20)); /* and closed */
        close(extra);
        /* Everyone admitted still works; a freed slot is reusable. */
        send_req(fds[HP_CONTROL_CLIENTS_MAX - 1], "resume");
        expect_word(&t, fds[HP_CONTROL_CLIENTS_MAX - 1], "ok", rec);
        close(fds[0]);
        pump(&t);
        check_int(control_clients(t.c), HP_CONTROL_CLIENTS_MAX - 1);
        fds[0] = connect_to(t.path);
        send_req(fds[0], "pause");
        expect_word(&t, fds[0], "ok", rec);
        for (int i = 0; i < HP_CONTROL_CLIENTS_MAX; i++)
                close(fds[i]);
        pump(&t);
        check_int(control_clients(t.c), 0);
        env_down(&t);
}

/* Drop every group and become @uid (gid @uid too); in a forked child. */
static bool become(uid_t uid)
{
        return setgroups(0, NULL) == 0 && setgid((gid_t)uid) == 0 && setuid(uid) == 0;
}

/* In a forked child: become @uid, connect to @path, ask to pause; exit 0 if refused with EPERM. */
static void refused_client(const char *path, uid_t uid)
{
        char rec[CTL_RECORD_SIZE];
        struct pollfd p;
        uint64_t e = 0;
        ssize_t n;
        int fd;

        if (!become(uid))
                _exit(10);
        fd = connect_to(path);
        (void)send(fd, "pause", 5, MSG_NOSIGNAL);
        p = (struct pollfd){ .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 5000) != 1)
                _exit(11);
        n = recv(fd, rec, sizeof(rec) - 1, 0);
        if (n < 0 && errno == ECONNRESET)
                n = recv(fd, rec, sizeof(rec) - 1, MSG_DONTWAIT);
        if (n <= 0)
                _exit(12);
        rec[n] = '\0';
        if (!ctlmsg_is(rec, "error") || ctlmsg_get_u64(rec, "errno", &e) < 0 || e != EPERM)
                _exit(13);
        _exit(0);
}

/* Serve @t until refused_client() @pid exits; it must have been refused. */
static void wait_refused(struct env *t, pid_t pid)
{
        int status = -1;

        for (int i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) == 0; i++)
                (void)sd_event_run(t->e, 10000);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
        check_int(t->f.pauses, 0);
        check_int(control_clients(t->c), 0);
}

/* As root: a child drops to nobody, connects, and must be refused with EPERM. */
static void test_not_root(void)
{
        struct env t;
        pid_t pid;

        if (geteuid() != 0) {
                fprintf(stderr, "   skipped: not root\n");
                return;
        }
        env_up(&t);
        pid = fork();
        check(pid >= 0);
        if (pid == 0)
                refused_client(t.path, 65534);
        wait_refused(&t, pid);
        env_down(&t);
}

/*
 * As root: a control socket set up by a process running as nobody serves
 * nobody (its own user) and refuses another ordinary user.
 */
static void test_unprivileged_server(void)
{
        int status = -1;
        pid_t pid;

        if (geteuid() != 0) {
                fprintf(stderr, "   skipped: not root\n");
                return;
        }
        pid = fork();
        check(pid >= 0);
        if (pid == 0) {
                char rec[CTL_RECORD_SIZE], path[sizeof(((struct env *)NULL)->path)] = "";
                struct env t;
                pid_t other;
                int p[2], fd;

                /* The other user's client is forked while we are still root. */
                check(pipe(p) == 0);
                other = fork();
                check(other >= 0);
                if (other == 0) {
                        close(p[1]);
                        if (read(p[0], path, sizeof(path) - 1) <= 0)
                                _exit(14);
                        refused_client(path, 65533);
                }
                close(p[0]);
                check(become(65534));
                env_up(&t);
                check(write(p[1], t.path, strlen(t.path)) == (ssize_t)strlen(t.path));
                close(p[1]);
                wait_refused(&t, other);
                fd = connect_to(t.path);
                send_req(fd, "pause");
                expect_word(&t, fd, "ok", rec);
                check_int(t.f.pauses, 1);
                close(fd);
                env_down(&t);
                _exit(0);
        }
        check(waitpid(pid, &status, 0) == pid);
        check(WIFEXITED(status));
        check_int(WEXITSTATUS(status), 0);
}

static void test_socket_setup(void)
{
        struct env t;
        struct control *second = NULL;
        struct stat st;

        env_up(&t);
        check(stat(t.path, &st) == 0);
        check(S_ISSOCK(st.st_mode));
        check_int(st.st_mode & 0777, 0666);
        /* A live daemon's socket is not taken over. */
        check_int(control_new(t.e, t.path, -1, &fake_ops, &t.f, &second), -EADDRINUSE);
        check(control_fd(t.c) >= 0);
        check(fcntl(control_fd(t.c), F_GETFD) & FD_CLOEXEC);
        env_down(&t);

        /* A stale one (nobody listening) is replaced. */
        env_up(&t);
        t.c = control_free(t.c);
        {
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
                strcpy(sa.sun_path, t.path);
                check(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
                close(fd);
        }
        check_int(control_new(t.e, t.path, -1, &fake_ops, &t.f, &t.c), 0);
        check_int(control_new(t.e, "/tmp/x/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                              -1, &fake_ops, NULL, &second),
                  -ENAMETOOLONG);
        env_down(&t);
}

/* info: one device's records; export a page at a time, every device once, in order. */
static void test_info(void)
{
        struct env t;
        char rec[CTL_RECORD_SIZE], val[CTL_RECORD_SIZE], last[CTL_RECORD_SIZE] = "", req[2 * CTL_RECORD_SIZE];
        char after[CTL_RECORD_SIZE] = "";
        size_t devices = 0, pages = 0;
        uint64_t more = 1;
        int fd;

        env_up(&t);
        devinfo_init(&t.f.info, 100000, 64 * 1024 * 1024);
        check(devinfo_event_add(&t.f.info, "/devices/a b", 41, "add", 1700000000 * USEC_PER_SEC, 5));
        devinfo_event_waited(&t.f.info, "/devices/a b", 41, 40, 300, "parent /devices");
        devinfo_run_start(&t.f.info, "/devices/a b", 41, "/sbin/hotplug", 77, 6);
        devinfo_run_end(&t.f.info, "/devices/a b", 41, 77, "exit 2", true, false, 1234);
        devinfo_event_outcome(&t.f.info, "/devices/a b", 41, DEVINFO_DONE);
        fd = connect_to(t.path);
        send_req(fd, "info devpath=/devices/a\\x20b");
        expect_word(&t, fd, "device", rec);
        check_int(ctlmsg_get(rec, "devpath", val, sizeof(val)), 0);
        check_str(val, "/devices/a b");
        check_int(u64_of(rec, "history"), 1);
        check_int(u64_of(rec, "events"), 1);
        check_int(ctlmsg_get(rec, "bus", val, sizeof(val)), 0);
        check_str(val, "usb");
        check_int(ctlmsg_get(rec, "in_resync_set", val, sizeof(val)), 0);
        check_str(val, "1");
        expect_word(&t, fd, "vars", rec);
        check(strstr(rec, " var=PHYSDEVBUS=usb var=PHYSDEVDRIVER=usb-storage") != NULL);
        check_int(u64_of(rec, "more"), 0);
        expect_word(&t, fd, "event", rec);
        check_int(u64_of(rec, "seqnum"), 41);
        check_int(ctlmsg_get(rec, "outcome", val, sizeof(val)), 0);
        check_str(val, "done");
        expect_word(&t, fd, "wait", rec);
        check_int(u64_of(rec, "blocker"), 40);
        check_int(u64_of(rec, "waited_us"), 300);
        expect_word(&t, fd, "run", rec);
        check_int(u64_of(rec, "pid"), 77);
        check_int(u64_of(rec, "failed"), 1);
        check_int(u64_of(rec, "duration_us"), 1234);
        check_int(ctlmsg_get(rec, "status", val, sizeof(val)), 0);
        check_str(val, "exit 2");
        expect_word(&t, fd, "end", rec);
        /* A device nothing is known of: a device record that says so. */
        send_req(fd, "info devpath=/devices/none");
        expect_word(&t, fd, "device", rec);
        check_int(u64_of(rec, "history"), 0);
        check_int(u64_of(rec, "modelled"), 0);
        check_int(ctlmsg_get(rec, "in_resync_set", val, sizeof(val)), 0);
        check_str(val, "unknown");
        expect_word(&t, fd, "end", rec);
        expect_error(&t, fd, "info", EINVAL);
        expect_error(&t, fd, "info devpath=relative", EINVAL);
        expect_error(&t, fd, "info export now please", EINVAL);

        /* 2000 devices of 16 runs each: more than half the output bound, so several pages. */
        for (unsigned i = 0; i < 2000; i++) {
                snprintf(val, sizeof(val), "/devices/virtual/misc/d%04u", i);
                check(devinfo_event_add(&t.f.info, val, 100 + i, "change", 0, 0));
                for (int k = 0; k < HP_INFO_RUNS; k++)
                        devinfo_run_start(&t.f.info, val, 100 + i, "/etc/hotplug.d/misc/a-rather-long-name.hotplug",
                                          k + 1, 1);
        }
        while (more) {
                size_t bytes = 0;

                snprintf(req, sizeof(req), "info export%s%s", after[0] ? " after=" : "", after);
                send_req(fd, req);
                for (recv_rec(&t, fd, rec); !ctlmsg_is(rec, "end"); recv_rec(&t, fd, rec)) {
                        bytes += strlen(rec) + 2;
                        if (!ctlmsg_is(rec, "device"))
                                continue;
                        check_int(ctlmsg_get(rec, "devpath", val, sizeof(val)), 0);
                        check(strcmp(val, last) > 0); /* in order, none twice */
                        snprintf(last, sizeof(last), "%s", val);
                        devices++;
                }
                check(bytes <= HP_CONTROL_OUTPUT_MAX);
                more = u64_of(rec, "more");
                if (more) {
                        check_int(ctlmsg_get(rec, "last", val, sizeof(val)), 0);
                        check_str(val, last);
                        check(ctlmsg_escape(val, after, sizeof(after)) > 0);
                }
                pages++;
        }
        check_int(devices, 2002);
        check(pages > 1);
        close(fd);
        devinfo_clear(&t.f.info);
        env_down(&t);
}

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        run_test(test_proto);
        run_test(test_entries);
        run_test(test_json_fields);
        run_test(test_uuid_set);
        run_test(test_socket_setup);
        run_test(test_status);
        run_test(test_reload);
        run_test(test_blame);
        run_test(test_info);
        run_test(test_settle);
        run_test(test_settle_device);
        run_test(test_settle_present);
        run_test(test_monitor_filter_match);
        run_test(test_monitor_filter);
        run_test(test_uuids);
        run_test(test_uuids_progress);
        run_test(test_monitor);
        run_test(test_monitor_properties);
        run_test(test_slow_monitor);
        run_test(test_malformed);
        run_test(test_too_many_clients);
        run_test(test_not_root);
        run_test(test_unprivileged_server);
        return 0;
}
