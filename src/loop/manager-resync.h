/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The manager's resync after a receive-buffer overflow (manager-resync.c):
 * the set of devices believed present, the debounce timer, and a pass that
 * re-triggers devices and synthesises removes a few at a time.  It is an
 * observer (observe_resync_open(), manager-internal.h): it hears accepted
 * events (received()) and overflows (overflow()), and the core does not
 * call it but for the mark below.  Only src/loop/ includes this.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct envbuf;
struct manager;
struct uevent;

struct resync_stats {
        bool enabled;                     /* resync = yes */
        bool running;                     /* a pass is in progress */
        uint64_t passes;                  /* passes completed */
        uint64_t changed, added, removed; /* totals over all passes */
        uint64_t failed;                  /* uevent writes that failed */
        uint64_t skipped;                 /* writes left out at HP_RESYNC_WRITES_MAX */
        uint64_t left_alone;              /* devices not written or removed: not of resync-subsystems */
        size_t devices;                   /* devices believed present now */
};

/**
 * manager_resync_mark() - add HOTPLUGD_RESYNC=1 to an event a pass re-triggered.
 * @m: manager
 * @view: the event (borrowed)
 * @env: the handler chain's additions (borrowed)
 *
 * Only events carrying SYNTH_ARG_HOTPLUGD=resync with the SYNTH_UUID of
 * this daemon's current or previous pass are marked.
 */
void manager_resync_mark(struct manager *m, const struct uevent *view, struct envbuf *env);

void manager_resync_stats(const struct manager *m, struct resync_stats *ret);
