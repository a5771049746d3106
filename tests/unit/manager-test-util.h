/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Manager tests without root or kernel events: a manager that reads its
 * uevents from a socket the test writes into (a socketpair's end), trusting
 * every sender, with no control socket.
 */

#include "config/options.h"
#include "loop/manager.h"
#include "test.h"

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
