/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The manager's resync after a receive-buffer overflow (manager-resync.c):
 * the set of devices believed present, the debounce timer, and a pass that
 * re-triggers devices and synthesises removes a few at a time.  It is an
 * observer (observe_resync_open(), observe-builtin.h): it hears accepted
 * events (received()) and overflows (overflow()); the core does not call
 * it.  It tells the core which events to mark (manager_set_resync_uuids()).
 * Only src/loop/ includes this.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct manager;
struct uevent;

struct resync_stats {
        bool enabled;                     /* resync = yes */
        bool running;                     /* a pass is in progress */
        uint64_t passes;                  /* passes completed */
        uint64_t targeted;                /* of them, targeted passes after a handover file */
        uint64_t changed, added, removed; /* totals over all passes */
        uint64_t failed;                  /* uevent writes that failed */
        uint64_t skipped;                 /* writes left out at HP_RESYNC_WRITES_MAX */
        uint64_t left_alone;              /* devices not written or removed: not of resync-subsystems */
        size_t devices;                   /* devices believed present now */
};

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

/* Every DEVPATH the daemon believes present (the resync set), to @fn (borrowed for the call). */
void manager_for_each_known_device(const struct manager *m, void (*fn)(const char *devpath, void *arg), void *arg);

void manager_resync_stats(const struct manager *m, struct resync_stats *ret);

struct devset;

/**
 * manager_resync_handover() - take over the previous instance's device set.
 * @present: the devices it believed present after SEQNUM @last (its
 *           entries are taken; @present is left empty)
 * @last: its ledger's last SEQNUM
 *
 * The set replaces the listing made at start, and a targeted pass follows
 * at once (unless resync is off): `add` written for each device sysfs has
 * and the set lacks, a `remove` synthesised for each device the set has
 * and sysfs lacks, with the SEQNUMs the kernel spent while no instance
 * listened; no `change` for the others.  An overflow before the pass
 * starts makes it a full one.
 * Return: 0 or negative errno.
 */
int manager_resync_handover(struct manager *m, struct devset *present, uint64_t last);

/* A targeted pass is due and has not made its plan yet (its adds are not counted as handled yet). */
bool manager_resync_handover_due(const struct manager *m);

/* The devices believed present (the resync set), NULL without resync's observer. */
const struct devset *manager_resync_known(const struct manager *m);
