/* SPDX-License-Identifier: MIT */
/*
 * Real agents through the manager's job spawner (loop/manager-job.c): how
 * an agent ended reaches observers once per run, every agent is reaped (no
 * zombie is left), and a job freed while its agent runs (manager_free())
 * kills and reaps it; the blame observer's sums, its waits for udevd
 * among them.  The agents are small shell scripts in a temporary
 * directory; no root, no kernel events (the source is a socketpair).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "control/control.h"
#include "loop/manager-internal.h"
#include "loop/manager-observe.h"
#include "loop/observe-builtin.h"
#include "loop/manager-resync.h"
#include "loop/observer.h"
#include "manager-test.h"
#include "pipeline/scheduler.h"
#include "shared/log.h"
#include "uevent/uevent.h"

static char tmpdir[64];
static char statuses[1024]; /* "STATUS;" for each finished run, in order */
static pid_t last_pid;

static void on_started(void *userdata, const struct manager_agent *a)
{
        last_pid = a->pid;
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        size_t n = strlen(statuses);

        check(a->pid > 0 && si->si_pid == a->pid);
        snprintf(statuses + n, sizeof(statuses) - n, "%s;", status);
}

static const struct manager_observer_ops ops = { .started = on_started, .finished = on_finished };

/* An executable script @name in the temporary directory: @body after "#!/bin/sh". */
static const char *script(const char *name, const char *body)
{
        static char path[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        f = fopen(path, "we");
        check(f);
        fprintf(f, "#!/bin/sh\n%s\n", body);
        check_int(fclose(f), 0);
        check_int(chmod(path, 0755), 0);
        return path;
}

/* A manager running @agent, fed through a socketpair (@sv, closed by the caller). */
static struct manager *manager_for(const char *agent, int sv[2])
{
        struct manager_config cfg;
        struct manager *m;

        check(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
        options_defaults(&cfg);
        cfg.agent = agent;
        m = manager_on_socket(&cfg, sv[0]);
        check_int(manager_add_observer(m, &ops, NULL), 0);
        return m;
}

/* An event of its own device @n (so that events run side by side). */
static void inject(struct manager *m, unsigned n)
{
        char dg[256];
        int len = snprintf(dg, sizeof(dg),
                           "change@/devices/virtual/net/job%u%cACTION=change%cDEVPATH=/devices/virtual/net/job%u%c"
                           "SUBSYSTEM=net%cSEQNUM=%llu",
                           n, 0, 0, n, 0, 0, (unsigned long long)(manager_ledger(m)->baseline + n));

        check(len > 0 && (size_t)len < sizeof(dg));
        check_int(manager_inject(m, dg, (size_t)len + 1), 0);
        manager_dispatch(m);
}

static void run_until_finished(struct manager *m, uint64_t n)
{
        for (unsigned turns = 0; manager_stats(m)->finished < n; turns++) {
                check(turns < 10000);
                check(sd_event_run(m->event, 100 * USEC_PER_MSEC) >= 0);
        }
}

static void check_no_children(void)
{
        siginfo_t si;

        check(waitid(P_ALL, 0, &si, WEXITED | WNOHANG) < 0 && errno == ECHILD);
}

static void test_exit_statuses(void)
{
        struct manager *m;
        int sv[2];

        m = manager_for(script("status", "case $DEVPATH in\n"
                                         "*job1) exit 0;;\n"
                                         "*job2) exit 3;;\n"
                                         "*) kill -USR1 $$;;\n"
                                         "esac"),
                        sv);
        statuses[0] = '\0';
        inject(m, 1);
        run_until_finished(m, 1);
        inject(m, 2);
        run_until_finished(m, 2);
        inject(m, 3);
        run_until_finished(m, 3);
        check_str(statuses, "exit 0;exit 3;signal 10 (User defined signal 1);");
        check_int(manager_stats(m)->failed, 2);
        check_no_children();

        /* Several at once, each reaped once. */
        statuses[0] = '\0';
        for (unsigned i = 4; i < 12; i++)
                inject(m, i);
        run_until_finished(m, 11);
        check_int(strlen(statuses), 8 * strlen("signal 10 (User defined signal 1);"));
        check_no_children();
        manager_free(m);
        close(sv[1]);
}

static void test_free_kills_and_reaps(void)
{
        struct manager *m;
        int sv[2];

        m = manager_for(script("hang", "exec sleep 1000"), sv);
        last_pid = 0;
        inject(m, 1);
        for (unsigned turns = 0; manager_stats(m)->started < 1; turns++) {
                check(turns < 100);
                check(sd_event_run(m->event, 10 * USEC_PER_MSEC) >= 0);
        }
        check(last_pid > 0);
        check_int(kill(last_pid, 0), 0);
        manager_free(m); /* the running job goes, and with it the agent */
        check(kill(last_pid, 0) < 0 && errno == ESRCH);
        check_no_children();
        close(sv[1]);
}

/* An event @action of device @dev with SEQNUM baseline + @n. */
static void inject_action(struct manager *m, unsigned n, const char *action, const char *dev)
{
        char dg[256];
        int len = snprintf(dg, sizeof(dg),
                           "%s@/devices/virtual/net/%s%cACTION=%s%cDEVPATH=/devices/virtual/net/%s%c"
                           "SUBSYSTEM=net%cSEQNUM=%llu",
                           action, dev, 0, action, 0, dev, 0, 0,
                           (unsigned long long)(manager_ledger(m)->baseline + n));

        check(len > 0 && (size_t)len < sizeof(dg));
        check_int(manager_inject(m, dg, (size_t)len + 1), 0);
}

static void inject_on(struct manager *m, unsigned n, const char *dev)
{
        inject_action(m, n, "change", dev);
}

struct blame_seen {
        unsigned rows[_CONTROL_BLAME_MAX];
        struct control_blame_row slow, other, program, first_device;
        char program_name[128];
};

static void see_row(const struct control_blame_row *r, void *arg)
{
        struct blame_seen *s = arg;

        if (r->group == CONTROL_BLAME_DEVICE && s->rows[r->group] == 0)
                s->first_device = *r;
        s->rows[r->group]++;
        if (r->group == CONTROL_BLAME_DEVICE && strcmp(r->name, "/devices/virtual/net/slow") == 0)
                s->slow = *r;
        if (r->group == CONTROL_BLAME_DEVICE && strcmp(r->name, "(other)") == 0)
                s->other = *r;
        if (r->group == CONTROL_BLAME_PROGRAM) {
                s->program = *r;
                snprintf(s->program_name, sizeof(s->program_name), "%s", r->name);
        }
}

/*
 * The blame observer (loop/observe-blame.c) sums what ran: two events of a
 * slow device (the second waits for the first), and a few quick ones.  (The
 * bound on names: test-blame-tally.)
 */
static void test_blame(void)
{
        const unsigned n = 5;
        const char *agent = script("blame", "case $DEVPATH in *slow) sleep 0.1;; esac");
        struct control_blame_totals t;
        struct blame_seen s;
        struct manager *m;
        char dev[32];
        int sv[2];

        memset(&s, 0, sizeof(s));
        m = manager_for(agent, sv);
        manager_pause(m);
        inject_on(m, 1, "slow");
        inject_on(m, 2, "slow");
        for (unsigned i = 3; i <= n; i++) {
                snprintf(dev, sizeof(dev), "job%u", i);
                inject_on(m, i, dev);
        }
        manager_resume(m);
        run_until_finished(m, n);
        for (unsigned turns = 0; manager_lowest_held(m) != 0; turns++) {
                check(turns < 10000);
                check(sd_event_run(m->event, 100 * USEC_PER_MSEC) >= 0);
        }
        manager_blame_totals(m, &t);
        check_int(t.events, n);
        check_int(t.runs, n);
        check(t.run_time >= 200 * USEC_PER_MSEC);
        check_int(manager_for_each_blame_row(m, see_row, &s), 0);
        check_int(s.rows[CONTROL_BLAME_SUBSYSTEM], 1);
        check_int(s.rows[CONTROL_BLAME_PROGRAM], 1);
        check_str(s.program_name, agent);
        check_int(s.program.count, n);
        check_int(s.rows[CONTROL_BLAME_DEVICE], n - 1);
        check_int(s.other.count, 0);
        /* The slow device first: two events of 100 ms, the second waited about one for order. */
        check_str(s.first_device.name, "/devices/virtual/net/slow");
        check_int(s.slow.count, 2);
        check(s.slow.total >= 200 * USEC_PER_MSEC && s.slow.slowest >= 100 * USEC_PER_MSEC);
        check(s.slow.slowest_seqnum == manager_ledger(m)->baseline + 1 ||
              s.slow.slowest_seqnum == manager_ledger(m)->baseline + 2);
        check(s.slow.order_wait >= 90 * USEC_PER_MSEC && s.slow.order_wait <= t.order_wait);
        manager_free(m);
        close(sv[1]);
        check_no_children();
        check_int(unlink(agent), 0);
}

/* A parsed event @n of its own device, arrived @ago before now (@dg holds its datagram). */
static void event_ago(struct manager *m, unsigned n, usec_t ago, char dg[static 256], uint16_t vars[static HP_UEVENT_MAX_VARS],
                      struct uevent *ret)
{
        int len = snprintf(dg, 256, "change@/devices/virtual/net/u%u%cACTION=change%cDEVPATH=/devices/virtual/net/u%u%c"
                                    "SUBSYSTEM=net%cSEQNUM=%llu",
                           n, 0, 0, n, 0, 0, (unsigned long long)(manager_ledger(m)->baseline + n));

        check(len > 0 && len < 256);
        check_int(uevent_parse(dg, (size_t)len + 1, vars, ret, NULL), 0);
        ret->received = now_usec(CLOCK_MONOTONIC) - ago;
}

/* @ev's agent ran and ended, as the job spawner tells it (an agent of pid @pid). */
static void ran(struct manager *m, const struct uevent *ev, pid_t pid)
{
        struct manager_agent a = { .ev = ev, .program = "/sbin/hotplug", .pid = pid,
                                   .started = now_usec(CLOCK_MONOTONIC) };
        siginfo_t si = { .si_pid = pid, .si_code = CLD_EXITED };

        observe_starting(m, ev);
        observe_finished(m, &a, &si, "exit 0");
}

/*
 * The blame observer's wait for udevd (after-udev): waited() with the
 * event's own SEQNUM, said when that wait ended, counts from the dispatch
 * (after its wait for a slot, said then) or from its arrival; while an
 * event waits for udevd others are dispatched and start, each with its own
 * waits.  Told through the core's observer calls (manager-observe.h) for
 * events that arrived some time ago.
 */
static void test_blame_udev(void)
{
        const struct scheduler_wait slot = { .slot_limit = 4 };
        char dg[3][256];
        uint16_t vars[3][HP_UEVENT_MAX_VARS];
        struct uevent a, b, c;
        struct blame_seen s;
        struct manager *m;
        usec_t t0, took;
        int sv[2];

        memset(&s, 0, sizeof(s));
        m = manager_for("/bin/true", sv);
        t0 = now_usec(CLOCK_MONOTONIC);
        event_ago(m, 1, 300 * USEC_PER_MSEC, dg[0], vars[0], &a);
        event_ago(m, 2, 100 * USEC_PER_MSEC, dg[1], vars[1], &b);
        event_ago(m, 3, 20 * USEC_PER_MSEC, dg[2], vars[2], &c);
        /* 1 waited 300 ms for a slot and is dispatched; it waits for udevd while 2 waits for a
         * slot too and runs. */
        observe_waited(m, &a, &slot);
        observe_waited(m, &b, &slot);
        ran(m, &b, 12302);
        check_int(usleep(50 * USEC_PER_MSEC), 0);
        /* udevd broadcast 1 after 50 ms; 3 waited for it from its arrival, in vain. */
        observe_udev_waited(m, &a, 50 * USEC_PER_MSEC, false);
        ran(m, &a, 12301);
        observe_udev_waited(m, &c, 70 * USEC_PER_MSEC, true);
        ran(m, &c, 12303);
        took = now_usec(CLOCK_MONOTONIC) - t0;

        check_int(manager_for_each_blame_row(m, see_row, &s), 0);
        check_int(s.program.count, 3);
        check_int(s.program.order_wait, 0);
        check(s.program.slot_wait >= 400 * USEC_PER_MSEC && s.program.slot_wait <= 400 * USEC_PER_MSEC + 2 * took);
        check(s.program.udev_wait >= 120 * USEC_PER_MSEC && s.program.udev_wait <= 20 * USEC_PER_MSEC + 2 * took);
        manager_free(m);
        close(sv[1]);
}

/*
 * What hotplugctl wait's "present" settle asks (manager_device_known()): a
 * device is known once the daemon received its add, not when sysfs shows
 * it, and no longer after its remove.
 */
static void test_device_known(void)
{
        const char *dev = "/devices/virtual/net/job-not-in-sysfs";
        struct manager *m;
        int sv[2];

        m = manager_for("/bin/true", sv);
        manager_pause(m);
        check_int(manager_device_known(m, dev), 0);
        check_int(manager_device_known(m, "/devices/virtual/net/lo"), access("/sys/devices/virtual/net/lo", F_OK) == 0);
        inject_action(m, 1, "add", "job-not-in-sysfs");
        check_int(manager_device_known(m, dev), 1);
        inject_action(m, 2, "remove", "job-not-in-sysfs");
        check_int(manager_device_known(m, dev), 0);
        inject_action(m, 3, "change", "job-not-in-sysfs"); /* a change: there after all */
        check_int(manager_device_known(m, dev), 1);
        manager_free(m);
        close(sv[1]);
}

int main(void)
{
        log_open(LOG_TARGET_STDERR, "test-manager-job");
        log_set_max_level(LOG_ERR);
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-manager-job.%ld.XXXXXX", (long)getpid());
        check(mkdtemp(tmpdir));

        run_test(test_exit_statuses);
        run_test(test_free_kills_and_reaps);
        run_test(test_blame);
        run_test(test_blame_udev);
        run_test(test_device_known);

        unlink(script("status", ""));
        unlink(script("hang", ""));
        check_int(rmdir(tmpdir), 0);
        return 0;
}
