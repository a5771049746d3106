/* SPDX-License-Identifier: MIT */
/*
 * The observer interface (loop/observer.h): observers added with
 * manager_add_observer() hear queued, waited, dropped and done, each in
 * the order they were added, every event leaves through exactly one of
 * dropped() and done(), close() runs last added first, and the table is
 * bounded.  Dry run, so nothing is executed.  Also: one wakeup of the
 * loop reads at most HP_INPUT_PER_WAKEUP datagrams from the uevent socket,
 * and manager_drain_input() says 1 only once the socket was read to the end.
 * And: an event read from a recording keeps only the keys kernels send
 * (counted), one from the socket keeps every key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config/options.h"
#include "shared/log.h"
#include "loop/manager-internal.h"
#include "loop/manager.h"
#include "loop/observer.h"
#include "pipeline/spawner.h"
#include "shared/bounds.h"
#include "uevent/record.h"
#include "uevent/uevent.h"
#include "manager-test.h"
#include "test.h"

static char trace[4096];

static void note(const char *who, const char *what, uint64_t seqnum)
{
        size_t n = strlen(trace);

        snprintf(trace + n, sizeof(trace) - n, "%s%s:%s%llu", n ? " " : "", who, what,
                 (unsigned long long)seqnum);
}

static uint64_t base;

static void on_queued(void *userdata, const struct uevent *ev)
{
        note(userdata, "q", ev->seqnum - base);
}

static void on_waited(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason)
{
        check(strncmp(reason, "same device ", 12) == 0);
        check_int(blocker, ev->seqnum - 1);
        note(userdata, "w", ev->seqnum - base);
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        check(!filtered);
        note(userdata, "x", view->seqnum - base);
}

static void on_done(void *userdata, const struct uevent *ev)
{
        note(userdata, "d", ev->seqnum - base);
}

static void on_close(void *userdata)
{
        note(userdata, "c", 0);
}

static const struct manager_observer_ops ops = {
        .queued = on_queued,
        .waited = on_waited,
        .dropped = on_dropped,
        .done = on_done,
        .close = on_close,
};

static const struct manager_observer_ops empty_ops = { 0 };

static void inject(struct manager *m, uint64_t seqnum)
{
        char dg[256];
        int n = snprintf(dg, sizeof(dg),
                         "change@/devices/virtual/net/obs%c"
                         "ACTION=change%cDEVPATH=/devices/virtual/net/obs%cSUBSYSTEM=net%cSEQNUM=%llu",
                         0, 0, 0, 0, (unsigned long long)(base + seqnum));

        check(n > 0 && (size_t)n < sizeof(dg));
        check_int(manager_inject(m, dg, (size_t)n + 1), 0);
}

static void test_observers(void)
{
        struct manager_config cfg;
        struct manager *m;
        int r, added = 0;

        options_defaults(&cfg);
        cfg.dry_run = true;
        cfg.agent = "/bin/true";
        cfg.control_path = "";
        m = test_manager_new(&cfg);
        base = manager_ledger(m)->baseline;
        check_int(manager_add_observer(m, &ops, "A"), 0);
        check_int(manager_add_observer(m, &ops, "B"), 0);

        manager_pause(m);
        inject(m, 1);
        inject(m, 2); /* the same device: waits for 1 */
        inject(m, 1); /* a duplicate: dropped */
        check_str(trace, "A:q1 B:q1 A:q2 B:q2 A:x1 B:x1");
        trace[0] = 0;
        manager_resume(m);
        /* What 2 waited for is said as it starts, once 1 is done. */
        check_str(trace, "A:d1 B:d1 A:w2 B:w2 A:d2 B:d2");
        check_int(manager_stats(m)->finished, 2);

        /* Bounded: fill the table, then one more is refused. */
        while ((r = manager_add_observer(m, &empty_ops, NULL)) == 0)
                added++;
        check_int(r, -ENOSPC);
        check(added > 0 && added < MANAGER_OBSERVERS_MAX);

        trace[0] = 0;
        manager_free(m);
        check_str(trace, "B:c0 A:c0");
}

static unsigned datagrams;

static void on_datagram(void *userdata, const char *data, size_t size, usec_t mono, usec_t real)
{
        datagrams++;
}

static const struct manager_observer_ops count_ops = { .datagram = on_datagram };

/*
 * A socket that stays full (a flood) must not keep the loop reading: one
 * dispatch of the socket reads at most HP_INPUT_PER_WAKEUP datagrams, the
 * rest at later turns, and all of them in the end.
 */
static void test_input_per_wakeup(void)
{
        struct manager_config cfg;
        struct manager *m = NULL;
        unsigned sent = 0;
        int sv[2];

        check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
        check(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
        /* Not an event: each is rejected by the parser, cheaply, like a flood would be. */
        while (sent < 4 * HP_INPUT_PER_WAKEUP && send(sv[1], "junk", 5, 0) == 5)
                sent++;
        check(sent > 2 * HP_INPUT_PER_WAKEUP);

        options_defaults(&cfg);
        cfg.dry_run = true;
        m = manager_on_socket(&cfg, sv[0]);
        check_int(manager_add_observer(m, &count_ops, NULL), 0);

        datagrams = 0;
        while (datagrams == 0)
                check(sd_event_run(m->event, 0) >= 0);
        check_int(datagrams, HP_INPUT_PER_WAKEUP); /* one dispatch, one bound's worth */
        /* A direct read says whether it reached the end: resync and settle rely on it. */
        check_int(manager_drain_input(m), 0);
        check_int(datagrams, 2 * HP_INPUT_PER_WAKEUP);
        while (datagrams < sent)
                check(manager_drain_input(m) >= 0);
        check_int(manager_drain_input(m), 1);
        check_int(datagrams, sent);
        check_int(manager_stats(m)->rejected, sent);
        manager_free(m);
        close(sv[1]);
}

/* A new recording at @path (a mkstemp() template, filled in), open for writing. */
static struct record_writer *new_recording(char *path)
{
        struct record_writer *w;
        int fd = mkstemp(path);

        check(fd >= 0);
        close(fd);
        unlink(path);
        check_int(record_writer_open(path, &w), 0);
        return w;
}

/* A dry-run manager replaying @path as fast as possible, holding at most @max_queue events (0: the default). */
static struct manager *replay_manager(const char *path, size_t max_queue)
{
        struct manager_config cfg;
        struct manager *m = NULL;

        options_defaults(&cfg);
        cfg.dry_run = true;
        cfg.control_path = "";
        cfg.replay_path = path;
        cfg.replay_speed = 0;
        if (max_queue > 0)
                cfg.max_queue = max_queue;
        check_int(manager_new(&cfg, &m), 0);
        return m;
}

/* A replay as fast as possible feeds at most HP_INPUT_PER_WAKEUP items per turn too. */
static void test_replay_per_wakeup(void)
{
        char path[] = "/tmp/test-manager-observer.XXXXXX";
        const unsigned total = 3 * HP_INPUT_PER_WAKEUP + 5;
        struct record_writer *w = new_recording(path);
        struct manager *m;

        for (unsigned i = 0; i < total; i++)
                check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                             .datagram = { 100 + i, 1000 + i, "junk", 5 } }),
                          0);
        record_writer_free(w);

        m = replay_manager(path, 0);
        while (manager_stats(m)->received == 0)
                check(sd_event_run(m->event, 0) >= 0);
        check_int(manager_stats(m)->received, HP_INPUT_PER_WAKEUP);
        while (manager_stats(m)->received < total)
                check(sd_event_run(m->event, 0) >= 0);
        check_int(manager_stats(m)->rejected, total);
        manager_free(m);
        unlink(path);
}

/*
 * A reload swaps in a whole configuration: the manager keeps copies of the
 * new strings (the caller's are gone right after), keeps its source and
 * outputs, and frees what it replaced (LeakSanitizer checks that).
 */
static void test_reconfigure(void)
{
        struct manager_config cfg, next;
        struct manager *m;
        char *agent, *policy;
        int sv[2];

        check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
        options_defaults(&cfg);
        cfg.dry_run = true;
        m = manager_on_socket(&cfg, sv[0]);
        for (int round = 0; round < 2; round++) {
                options_defaults(&next);
                agent = strdup(round ? "/new/agent2" : "/new/agent");
                policy = strdup("usb=drop");
                check(agent && policy);
                next.agent = agent;
                next.handlers.filter_policy = policy;
                next.max_children = 3 + round;
                next.control_path = "/not/used";
                check_int(manager_reconfigure(m, &next), 0);
                free(agent);
                free(policy);
                check_str(m->cfg.agent, round ? "/new/agent2" : "/new/agent");
                check_str(m->cfg.handlers.filter_policy, "usb=drop");
                check_int(m->cfg.max_children, 3 + round);
                check_str(m->cfg.control_path, ""); /* a reload keeps the outputs */
                check(m->cfg.dry_run);
                check(m->cfg.handlers.dry_run);
        }
        manager_free(m);
        close(sv[1]);
}

/* A recording of @n valid events of distinct devices (SEQNUM 1..n) at @path. */
static void write_events(char *path, unsigned n)
{
        struct record_writer *w = new_recording(path);

        for (unsigned i = 1; i <= n; i++) {
                char dg[256];
                int len = snprintf(dg, sizeof(dg),
                                   "add@/devices/virtual/net/rq%u%cACTION=add%cDEVPATH=/devices/virtual/net/rq%u%c"
                                   "SUBSYSTEM=net%cSEQNUM=%u",
                                   i, 0, 0, i, 0, 0, i);

                check(len > 0 && (size_t)len < sizeof(dg));
                check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                             .datagram = { i, i, dg, (size_t)len + 1 } }),
                          0);
        }
        record_writer_free(w);
}

/* Run the loop until @done(m), at most @turns dispatches. */
static void run_until(struct manager *m, bool (*done)(struct manager *m), unsigned turns)
{
        while (!done(m)) {
                check(turns-- > 0);
                check(sd_event_run(m->event, 100 * USEC_PER_MSEC) >= 0);
        }
}

static bool eight_fed(struct manager *m)
{
        return manager_stats(m)->received >= 8;
}

static bool all_finished(struct manager *m)
{
        return manager_stats(m)->finished >= 40;
}

/*
 * A replay stops feeding at a full queue, without polling, and goes on by
 * itself once events are done and the held count is down to the resume mark.
 */
static void test_replay_full_queue(void)
{
        char path[] = "/tmp/test-manager-observer.XXXXXX";
        struct manager *m;

        write_events(path, 40);
        m = replay_manager(path, 8);
        manager_pause(m); /* nothing is done: the queue fills */
        run_until(m, eight_fed, 1000);
        for (int i = 0; i < 5; i++)
                check(sd_event_run(m->event, 20 * USEC_PER_MSEC) >= 0);
        check_int(manager_stats(m)->received, 8);
        check(manager_input_paused(m));
        manager_resume(m);
        run_until(m, all_finished, 100000);
        check_int(manager_stats(m)->received, 40);
        check(!manager_input_paused(m));
        manager_free(m);
        unlink(path);
}

/* A datagram of lo carrying keys no kernel sends, as a recording could hold it. */
static size_t hostile_datagram(char *dg, size_t size, unsigned seqnum)
{
        int n = snprintf(dg, size,
                         "change@/devices/virtual/net/lo%cACTION=change%cDEVPATH=/devices/virtual/net/lo%c"
                         "SUBSYSTEM=net%cGTK_MODULES=/tmp/x.so%cINTERFACE=lo%cTZ=/tmp/zone%cSYNTH_ARG_NOTE=kept%c"
                         "SEQNUM=%u",
                         0, 0, 0, 0, 0, 0, 0, 0, seqnum);

        check(n > 0 && (size_t)n < size);
        return (size_t)n + 1;
}

static unsigned queued_events;
static bool want_all_keys;

/* What the agent would get: the kernel's keys, and the others only if the event came from the kernel. */
static void on_queued_env(void *userdata, const struct uevent *ev)
{
        struct spawn_env env;
        bool gtk = false, tz = false, iface = false, note = false;

        spawn_env_build(ev, &env);
        for (size_t i = 0; i < env.n; i++) {
                gtk = gtk || strncmp(env.envp[i], "GTK_MODULES=", 12) == 0;
                tz = tz || strcmp(env.envp[i], "TZ=/tmp/zone") == 0;
                iface = iface || strcmp(env.envp[i], "INTERFACE=lo") == 0;
                note = note || strcmp(env.envp[i], "SYNTH_ARG_NOTE=kept") == 0;
        }
        check(iface && note);
        check(gtk == want_all_keys && tz == want_all_keys);
        queued_events++;
}

static const struct manager_observer_ops env_ops = { .queued = on_queued_env };

static void test_replay_kernel_keys(void)
{
        char path[] = "/tmp/test-manager-observer.XXXXXX", dg[512];
        struct record_writer *w = new_recording(path);
        struct manager_config cfg;
        struct manager *m;
        int sv[2];

        /* From a recording: GTK_MODULES and TZ are left out of both events, and counted. */
        for (unsigned i = 1; i <= 2; i++) {
                size_t n = hostile_datagram(dg, sizeof(dg), i);

                check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM, .datagram = { i, i, dg, n } }),
                          0);
        }
        record_writer_free(w);
        m = replay_manager(path, 0);
        check_int(manager_add_observer(m, &env_ops, NULL), 0);
        queued_events = 0;
        want_all_keys = false;
        while (queued_events < 2)
                check(sd_event_run(m->event, 100 * USEC_PER_MSEC) >= 0);
        check_int(manager_stats(m)->dropped_keys, 4);
        check_int(manager_stats(m)->rejected, 0);
        manager_free(m);
        unlink(path);

        /* From the kernel's socket: the same datagram keeps every key (the block list alone applies). */
        check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
        options_defaults(&cfg);
        cfg.dry_run = true;
        m = manager_on_socket(&cfg, sv[0]);
        check_int(manager_add_observer(m, &env_ops, NULL), 0);
        queued_events = 0;
        want_all_keys = true;
        check(send(sv[1], dg, hostile_datagram(dg, sizeof(dg), 1), 0) > 0);
        while (queued_events < 1)
                check(sd_event_run(m->event, 100 * USEC_PER_MSEC) >= 0);
        check_int(manager_stats(m)->dropped_keys, 0);
        manager_free(m);
        close(sv[1]);
}

int main(void)
{
        log_open(LOG_TARGET_STDERR, "test-manager-observer");
        log_set_max_level(LOG_WARNING);
        run_test(test_observers);
        run_test(test_input_per_wakeup);
        run_test(test_replay_per_wakeup);
        run_test(test_replay_full_queue);
        run_test(test_replay_kernel_keys);
        run_test(test_reconfigure);
        return 0;
}
