/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * For the tests that run a whole manager: one made from @cfg, or exit 77
 * (skipped) where this machine does not let the test open the uevent
 * socket.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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
