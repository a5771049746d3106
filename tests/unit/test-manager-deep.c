/* SPDX-License-Identifier: MIT */
/*
 * A deep queue whose jobs complete synchronously must be dispatched
 * iteratively: queued events released at once by "resume" run to the end
 * without the stack growing per event.  Dry run (100,000 events) and an
 * agent that cannot be executed (every spawn fails; 5,000 events, as each
 * costs a clone()).  Each case runs on a thread with a 1 MiB stack, so that
 * per-event stack growth shows with a few thousand events already.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "shared/log.h"
#include "config/options.h"
#include "loop/manager.h"
#include "manager-test.h"
#include "test.h"

#define N_EVENTS 100000

static void deep_queue(bool dry_run, const char *agent, unsigned n_events)
{
        struct manager_config cfg;
        struct manager *m;
        uint64_t seq;

        options_defaults(&cfg);
        cfg.dry_run = dry_run;
        cfg.agent = agent;
        cfg.control_path = "";
        cfg.max_queue = n_events + 1;
        m = test_manager_new(&cfg);
        seq = manager_ledger(m)->baseline;
        manager_pause(m);
        for (unsigned i = 0; i < n_events; i++) {
                char dg[256];
                int n = snprintf(dg, sizeof(dg),
                                 "change@/devices/virtual/net/deep%c"
                                 "ACTION=change%cDEVPATH=/devices/virtual/net/deep%cSUBSYSTEM=net%cSEQNUM=%llu",
                                 0, 0, 0, 0, (unsigned long long)++seq);
                check(n > 0 && (size_t)n < sizeof(dg));
                check_int(manager_inject(m, dg, (size_t)n + 1), 0);
        }
        check_int(manager_stats(m)->queued, n_events);
        check_int(manager_stats(m)->finished, 0);
        /* Every event completes inside this call. */
        manager_resume(m);
        check_int(manager_stats(m)->finished, n_events);
        if (!dry_run)
                check_int(manager_stats(m)->failed, n_events);
        manager_free(m);
}

#define CASE_STACK_SIZE (1024 * 1024)

static void *dry_run_case(void *arg)
{
        deep_queue(true, "/bin/true", N_EVENTS);
        return NULL;
}

static void *failing_spawn_case(void *arg)
{
        deep_queue(false, "/nonexistent/hotplugd-test-agent", 5000);
        return NULL;
}

static void run_on_small_stack(void *(*fn)(void *))
{
        pthread_attr_t attr;
        pthread_t t;

        check_int(pthread_attr_init(&attr), 0);
        check_int(pthread_attr_setstacksize(&attr, CASE_STACK_SIZE), 0);
        check_int(pthread_create(&t, &attr, fn, NULL), 0);
        check_int(pthread_join(t, NULL), 0);
        pthread_attr_destroy(&attr);
}

static void test_deep_dry_run_queue(void)
{
        run_on_small_stack(dry_run_case);
}

static void test_deep_failing_spawn_queue(void)
{
        run_on_small_stack(failing_spawn_case);
}

int main(void)
{
        log_open(LOG_TARGET_STDERR, "test-manager-deep");
        log_set_max_level(LOG_WARNING);
        run_test(test_deep_dry_run_queue);
        run_test(test_deep_failing_spawn_queue);
        return 0;
}
