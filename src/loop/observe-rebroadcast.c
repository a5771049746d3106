/* SPDX-License-Identifier: MIT */
/*
 * The rebroadcast observer (--rebroadcast GROUP): every event whose job is
 * done is re-sent in the kernel's format on another netlink group, so
 * consumers there (libudev-zero listens on group 4) see a device only once
 * its agent finished.
 *
 * Invariants: nothing is sent in a dry run (nothing ran); a failed send is
 * never fatal and is logged at most once per HP_REJECT_LOG_INTERVAL_USEC
 * with the number of failures since the last report.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "shared/log.h"
#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "uevent/rebroadcast.h"

struct observe_rebroadcast {
        struct rebroadcast *rb;
        bool dry_run;
        struct ratelimit fail_log; /* failures: one line per HP_REJECT_LOG_INTERVAL_USEC */
};

static void on_done(void *userdata, const struct uevent *ev)
{
        struct observe_rebroadcast *o = userdata;
        struct log_fields f;
        uint64_t suppressed;

        if (o->dry_run || rebroadcast_send(o->rb, ev->buf, ev->size) >= 0)
                return;
        /* Never fatal; one line per 5 s at most. */
        if (!ratelimit_pass(&o->fail_log, HP_REJECT_LOG_INTERVAL_USEC, &suppressed))
                return;
        uevent_log_fields(ev, &f);
        log_internal(LOG_WARNING, o->rb->last_error, &f, "rebroadcast failed (%" PRIu64
                     " failures since the last report)", suppressed + 1);
}

static void on_close(void *userdata)
{
        struct observe_rebroadcast *o = userdata;

        rebroadcast_free(o->rb);
        free(o);
}

static const struct manager_observer_ops rebroadcast_ops = {
        .done = on_done,
        .close = on_close,
};

/**
 * observe_rebroadcast_open() - open the rebroadcast socket if --rebroadcast asked for one.
 * @m: manager
 *
 * Return: 0 (also without --rebroadcast), or negative errno (logged).
 */
int observe_rebroadcast_open(struct manager *m)
{
        const struct manager_config *cfg = manager_cfg(m);
        struct observe_rebroadcast *o;
        int r;

        if (!cfg->rebroadcast_group)
                return 0;
        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        o->dry_run = cfg->dry_run;
        r = rebroadcast_new(cfg->rebroadcast_group, &o->rb);
        if (r < 0) {
                free(o);
                return log_error_errno(r, "cannot rebroadcast on netlink group %u", cfg->rebroadcast_group);
        }
        r = manager_add_observer(m, &rebroadcast_ops, o);
        if (r < 0) {
                on_close(o);
                return r;
        }
        log_info("rebroadcasting processed events on netlink group %u", cfg->rebroadcast_group);
        return 0;
}
