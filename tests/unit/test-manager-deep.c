/* SPDX-License-Identifier: MIT */
/*
 * A deep queue whose jobs complete synchronously (dry run, here) must be
 * dispatched iteratively: 100,000 queued events released at once by
 * "resume" run to the end without the stack growing per event.
 */
#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "manager.h"
#include "test.h"

#define N_EVENTS 100000

static void test_deep_dry_run_queue(void)
{
        struct manager_config cfg;
        struct manager *m = NULL;
        uint64_t seq;
        int r;

        manager_config_init(&cfg);
        cfg.dry_run = true;
        cfg.agent = "/bin/true";
        cfg.control_path = "";
        cfg.max_queue = N_EVENTS + 1;
        r = manager_new(&cfg, &m);
        if (r == -EPERM || r == -EACCES) {
                fprintf(stderr, "SKIP: cannot open the uevent socket here\n");
                exit(77);
        }
        check_int(r, 0);
        seq = manager_ledger(m)->baseline;
        manager_pause(m);
        for (unsigned i = 0; i < N_EVENTS; i++) {
                char dg[256];
                int n = snprintf(dg, sizeof(dg),
                                 "change@/devices/virtual/net/deep%c"
                                 "ACTION=change%cDEVPATH=/devices/virtual/net/deep%cSUBSYSTEM=net%cSEQNUM=%llu",
                                 0, 0, 0, 0, (unsigned long long)++seq);
                check(n > 0 && (size_t)n < sizeof(dg));
                check_int(manager_inject(m, dg, (size_t)n + 1), 0);
        }
        check_int(manager_stats(m)->queued, N_EVENTS);
        check_int(manager_stats(m)->finished, 0);
        /* Every event completes inside this call. */
        manager_resume(m);
        check_int(manager_stats(m)->finished, N_EVENTS);
        manager_free(m);
}

int main(void)
{
        log_open(LOG_TARGET_STDERR, "test-manager-deep");
        log_set_max_level(LOG_WARNING);
        run_test(test_deep_dry_run_queue);
        return 0;
}
