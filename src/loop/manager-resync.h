/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The manager's resync after a receive-buffer overflow (manager-resync.c):
 * the set of devices believed present, the debounce timer, and a pass that
 * re-triggers devices and synthesises removes a few at a time.  Only
 * src/loop/ includes this.
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
 * manager_resync_open() - seed the device set from sysfs and set up the timer.
 * @m: manager (borrowed; must have its event loop); m->resync is set
 *
 * A sysfs that cannot be read is logged and leaves the set empty.
 * Return: 0 or -ENOMEM.
 */
int manager_resync_open(struct manager *m);

/* Stop any pass, free the set and the sources. Safe if open failed or never ran. */
void manager_resync_close(struct manager *m);

/* An event the ledger accepted (view borrowed for the call): update the device set. */
void manager_resync_note(struct manager *m, const struct uevent *view);

/**
 * manager_device_known() - does the daemon believe @devpath present?
 * @devpath: a DEVPATH (borrowed)
 *
 * Present: it was in sysfs when the daemon started, or an event the ledger
 * accepted since added it (and none removed it).  A device whose sysfs
 * directory is there but whose add was not received yet is not.
 * Return: 1, 0, or when it cannot tell: -ENOSPC (the set is full and
 * @devpath is not in it), -ENODATA (sysfs could not be listed at the start).
 */
int manager_device_known(const struct manager *m, const char *devpath);

/* The source reported ENOBUFS: schedule a pass (debounced), if resync is on. */
void manager_resync_overflow(struct manager *m);

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
