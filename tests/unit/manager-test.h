/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * For the tests that run a whole manager, without root or kernel events:
 *  - test_manager_new(): one made from @cfg, or exit 77 (skipped) where this
 *    machine does not let the test open the uevent socket;
 *  - manager_on_socket(): one that reads its uevents from a socket the test
 *    writes into (a socketpair's end), trusting every sender, with no
 *    control socket.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "config/options.h"
#include "loop/manager.h"
#include "test.h"

static inline struct manager *test_manager_new(const struct manager_config *cfg)
{
        struct manager *m = NULL;
        int r = manager_new(cfg, &m);

        if (r == -EPERM || r == -EACCES) {
                fprintf(stderr, "SKIP: cannot open the uevent socket here\n");
                exit(77);
        }
        check_int(r, 0);
        return m;
}

/* A manager for @cfg (the rest as the test set it) reading uevents from @fd (owned by the manager). */
static inline struct manager *manager_on_socket(struct manager_config *cfg, int fd)
{
        struct manager *m = NULL;

        cfg->control_path = "";
        cfg->source_fd = fd;
        cfg->trust = UEVENT_TRUST_ANY;
        check_int(manager_new(cfg, &m), 0);
        return m;
}
