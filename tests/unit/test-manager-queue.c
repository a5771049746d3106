/* SPDX-License-Identifier: MIT */
/*
 * The manager's queue: the scheduler holds at most a window of events
 * (HP_QUEUE_WINDOW, or twice max-children), the rest wait in the backlog.
 * Checked here: the window holds while paused and the counts (queued,
 * held, lowest held, peak) see both parts; every event is announced
 * queued once, at once, and leaves through done() once; events run in
 * SEQNUM order across the boundary, late events included (strict order,
 * and waits on the same device announced as the event enters the
 * scheduler); a source stops reading at max-queue counting the backlog;
 * stopping and freeing with a backlog lose no memory; a takeover hands
 * the backlog on.  Dry run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config/options.h"
#include "loop/manager-internal.h"
#include "loop/manager.h"
#include "loop/observer.h"
#include "pipeline/scheduler.h"
#include "shared/bounds.h"
#include "shared/log.h"
#include "manager-test.h"
#include "test.h"
#include "uevent/uevent.h"

#define MAX_EVENTS (HP_QUEUE_WINDOW * 3)

/* What the observer heard, per event (index: SEQNUM - base). */
static struct {
        unsigned queued, waiting, dropped, done;
        unsigned done_rank;     /* 1 + how many were done before it */
} seen[MAX_EVENTS + 16];
static unsigned n_done;
static uint64_t base;

static unsigned idx(const struct uevent *ev)
{
        check(ev->seqnum > base && ev->seqnum - base < ELEMENTSOF(seen));
        return (unsigned)(ev->seqnum - base);
}

static void on_queued(void *userdata, const struct uevent *ev)
{
        seen[idx(ev)].queued++;
}

static unsigned chain_step; /* > 0: each event waited for the one this much before it */

static void on_waited(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason)
{
        if (blocker == 0) {
                check(strncmp(reason, "a free slot (limit ", 19) == 0);
                return;
        }
        check(blocker < ev->seqnum);
        /* A chain: the one before it, never the first of the chain. */
        if (chain_step)
                check_int(blocker, ev->seqnum - chain_step);
        seen[idx(ev)].waiting++;
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        seen[idx(view)].dropped++;
}

static void on_done(void *userdata, const struct uevent *ev)
{
        seen[idx(ev)].done++;
        seen[idx(ev)].done_rank = ++n_done;
}

static const struct manager_observer_ops ops = {
        .queued = on_queued,
        .waited = on_waited,
        .dropped = on_dropped,
        .done = on_done,
};

static size_t window(void)
{
        return HP_QUEUE_WINDOW; /* max_children is 4 below */
}

static struct manager *setup(enum ordering ordering, size_t max_queue, int source_fd)
{
        struct manager_config cfg;
        struct manager *m;

        options_defaults(&cfg);
        cfg.dry_run = true;
        cfg.agent = "/bin/true";
        cfg.control_path = "";
        cfg.ordering = ordering;
        cfg.max_children = 4;
        cfg.max_queue = max_queue;
        if (source_fd >= 0) {
                cfg.source_fd = source_fd;
                cfg.trust = UEVENT_TRUST_ANY;
        }
        m = test_manager_new(&cfg);
        base = manager_ledger(m)->baseline;
        memset(seen, 0, sizeof(seen));
        n_done = 0;
        check_int(manager_add_observer(m, &ops, NULL), 0);
        return m;
}

/* Event @i (SEQNUM base + i) on device "q<dev>" as a datagram in @dg; its length. */
static size_t datagram(char *dg, size_t size, unsigned i, unsigned dev)
{
        int n = snprintf(dg, size,
                         "change@/devices/virtual/net/q%u%cACTION=change%cDEVPATH=/devices/virtual/net/q%u%c"
                         "SUBSYSTEM=net%cSEQNUM=%llu",
                         dev, 0, 0, dev, 0, 0, (unsigned long long)(base + i));

        check(n > 0 && (size_t)n < size);
        return (size_t)n + 1;
}

static void inject(struct manager *m, unsigned i, unsigned dev)
{
        char dg[256];
        size_t n = datagram(dg, sizeof(dg), i, dev);

        check_int(manager_inject(m, dg, n), 0);
}

/* Every event 1..@n was queued once and is done once, in SEQNUM order. */
static void check_all_done_in_order(unsigned n)
{
        for (unsigned i = 1; i <= n; i++) {
                check_int(seen[i].queued, 1);
                check_int(seen[i].dropped, 0);
                check_int(seen[i].done, 1);
                check_int(seen[i].done_rank, i);
        }
        check_int(n_done, n);
}

/* Paused: the scheduler keeps the window, the backlog the rest, the counts see both. */
static void test_window(void)
{
        struct manager *m = setup(ORDERING_DEVPATH, MAX_EVENTS, -1);
        unsigned n = (unsigned)window() + 1000;

        manager_pause(m);
        for (unsigned i = 1; i <= n; i++) {
                inject(m, i, i % 3);
                check_int(seen[i].queued, 1); /* announced at once, wherever it went */
        }
        check_int(scheduler_held(m->scheduler), window());
        check_int(manager_queued(m), n);
        check_int(manager_held(m), n);
        check(manager_lowest_held(m) == base + 1);
        check_int(manager_stats(m)->queued, n);
        check_int(manager_stats(m)->peak_held, n);

        manager_resume(m); /* dry run: everything is done inside */
        check_all_done_in_order(n);
        check_int(manager_held(m), 0);
        check(manager_lowest_held(m) == 0);
        manager_free(m);
}

/*
 * Late events: one below everything in the backlog goes to the scheduler
 * (beyond the window), one between backlog events waits in its place; in
 * strict order all run in SEQNUM order.
 */
static void test_late(void)
{
        struct manager *m = setup(ORDERING_STRICT, MAX_EVENTS, -1);
        unsigned n = (unsigned)window() + 1000, low = 100, mid = (unsigned)window() + 500;

        manager_pause(m);
        for (unsigned i = 1; i <= n; i++)
                if (i != low && i != mid)
                        inject(m, i, i % 3);
        check_int(scheduler_held(m->scheduler), window());
        inject(m, mid, 7);
        check_int(scheduler_held(m->scheduler), window());
        inject(m, low, 7);
        check_int(scheduler_held(m->scheduler), window() + 1);
        check_int(manager_queued(m), n);
        manager_resume(m);
        check_all_done_in_order(n);
        manager_free(m);
}

/* One device: each event waited for the one before it, said once as it starts, also for the backlog's. */
static void test_waiting(void)
{
        struct manager *m = setup(ORDERING_DEVPATH, MAX_EVENTS, -1);
        unsigned n = (unsigned)window() + 100;

        chain_step = 1;
        manager_pause(m);
        for (unsigned i = 1; i <= n; i++)
                inject(m, i, 0);
        check_int(seen[2].waiting, 0); /* not started: not yet */
        manager_resume(m);
        check_all_done_in_order(n);
        check_int(seen[1].waiting, 0);
        for (unsigned i = 2; i <= n; i++)
                check_int(seen[i].waiting, 1);
        chain_step = 0;
        manager_free(m);
}

/* A paused manager with a backlog. */
static struct manager *paused_with_backlog(void)
{
        struct manager *m = setup(ORDERING_DEVPATH, MAX_EVENTS, -1);

        manager_pause(m);
        for (unsigned i = 1; i <= window() + 10; i++)
                inject(m, i, i % 5);
        check(manager_queued(m) > scheduler_queued(m->scheduler));
        return m;
}

/* Stopping, or freeing, with a backlog: nothing runs any more, nothing is leaked. */
static void test_stop(void)
{
        struct manager *m = paused_with_backlog();

        manager_stop(m);
        check_int(manager_held(m), 0);
        check_int(n_done, 0);
        manager_free(m);

        manager_free(paused_with_backlog());
}

/*
 * A takeover with a backlog: the handover journal has every queued event,
 * the backlog's too (they are journalled when queued), and the next
 * instance queues them all again and runs each once, in SEQNUM order.
 */
static void test_handover(void)
{
        struct manager *m = setup(ORDERING_DEVPATH, MAX_EVENTS, -1);
        unsigned n = (unsigned)window() + 100;
        uint64_t first_base = base;
        int fd;

        check_int(manager_handover(m, -1), 1);
        manager_pause(m);
        for (unsigned i = 1; i <= n; i++)
                inject(m, i, i % 3);
        check(manager_queued(m) > scheduler_queued(m->scheduler));
        fd = fcntl(manager_handover_fd(m), F_DUPFD_CLOEXEC, 3);
        check(fd >= 0);
        manager_stop(m);
        manager_free(m);

        m = setup(ORDERING_DEVPATH, MAX_EVENTS, -1);
        base = first_base;
        manager_pause(m);
        check_int(manager_handover(m, fd), 0);
        check_int(manager_queued(m), n);
        check_int(scheduler_held(m->scheduler), window());
        check_int(manager_stats(m)->taken_over, n);
        manager_resume(m);
        check_all_done_in_order(n);
        manager_free(m);
}

static int send_event(int fd, unsigned i)
{
        char dg[256];
        size_t len = datagram(dg, sizeof(dg), i, i % 3);

        return send(fd, dg, len, 0) == (ssize_t)len ? 0 : -errno;
}

/* The socket is read until max-queue events are held, backlog included; then again after resume. */
static void test_max_queue(void)
{
        const size_t max_queue = window() + 300;
        const unsigned total = (unsigned)max_queue + 200;
        unsigned sent = 0;
        struct manager *m;
        int sv[2];

        check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
        check(fcntl(sv[1], F_SETFL, O_NONBLOCK) == 0);
        m = setup(ORDERING_DEVPATH, max_queue, sv[0]);
        manager_pause(m);
        /* A datagram socket takes a few hundred at a time: send, read, send ... */
        while (!manager_input_paused(m)) {
                while (sent < total && send_event(sv[1], sent + 1) == 0)
                        sent++;
                check(manager_drain_input(m) >= 0);
        }
        while (sent < total) {
                check_int(send_event(sv[1], sent + 1), 0);
                sent++;
        }
        check_int(manager_held(m), max_queue);
        check_int(scheduler_held(m->scheduler), window());
        check_int(manager_stats(m)->received, max_queue);

        manager_resume(m);
        while (manager_stats(m)->finished < total)
                check(sd_event_run(m->event, 100 * USEC_PER_MSEC) >= 0);
        check_all_done_in_order(total);
        manager_free(m);
        close(sv[1]);
}

int main(void)
{
        log_open(LOG_TARGET_STDERR, "test-manager-queue");
        log_set_max_level(LOG_WARNING);
        run_test(test_window);
        run_test(test_late);
        run_test(test_waiting);
        run_test(test_stop);
        run_test(test_handover);
        run_test(test_max_queue);
        return 0;
}
