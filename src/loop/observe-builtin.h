/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the built-in observers (observe-*.c, manager-resync.c) share with
 * the core beyond manager-internal.h: each registers itself and finds its
 * state again; the handover journal guards the intake and restores a
 * takeover's ledger and counters; resync names the events it marks; blame
 * answers the control socket.  The core does not call an observer but
 * through its ops.  Only src/loop/ includes this.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"

struct control_blame_chain;
struct control_blame_link;
struct control_blame_row;
struct control_blame_totals;
struct devcache_entry;
struct devinfo_device;
struct manager;
struct manager_observer_ops;
struct uevent;

/* ---- manager-observe.c: registration ------------------------------------- */

/* The built-in observers (observe-*.c), each registering itself.  Return: 0 or negative errno (logged). */
int observe_record_open(struct manager *m);
int observe_rebroadcast_open(struct manager *m);
int observe_handover_open(struct manager *m);
int observe_status_open(struct manager *m);
int observe_firmware_open(struct manager *m);
int observe_blame_open(struct manager *m);
int observe_control_open(struct manager *m);
int observe_info_open(struct manager *m);
/* Resync (manager-resync.c): hears accepted events and overflows; seeds its device set from sysfs. */
int observe_resync_open(struct manager *m);
/* The userdata of the observer registered with @ops; NULL if there is none (or it was closed). */
void *manager_observer_data(const struct manager *m, const struct manager_observer_ops *ops);

/* ---- manager.c: hooks and counters the observers set ---------------------- */

/**
 * manager_seed_device() - the device model learns a device present at start.
 * @m: manager
 * @dirfd: the device's directory (borrowed for the call)
 * @devpath: its DEVPATH (borrowed for the call)
 *
 * For the listing of sysfs at start (manager-resync.c), before any event:
 * handler_chain_seed().  Return: as handler_chain_seed().
 */
int manager_seed_device(struct manager *m, int dirfd, const char *devpath);

/* The device model's record of @devpath (borrowed until the next event), for hotplugctl info.
 * Return: 1, or 0 if there is none. */
int manager_device_record(const struct manager *m, const char *devpath, struct devcache_entry *ret);

/*
 * The intake guard: what looks at each valid datagram read (or restored)
 * before the ledger does, and at each held event before it starts.  The
 * handover journal's poison guard (observe-handover.c) is the one there
 * is; the core calls it through these hooks and does not know whose they
 * are.
 */
struct manager_intake_ops {
        /* @view (borrowed) was run already (the datagram a takeover finds in the socket again): drop it. */
        bool (*repeated)(void *userdata, const struct uevent *view);
        /* @view (borrowed) is about to go through ledger and handlers: mark it.  Return: the tries of a
         * datagram to set aside (it killed that many instances: it is dropped, loudly), else 0. */
        uint32_t (*begin)(void *userdata, const struct uevent *view);
        /* The datagram begun last was processed (or set aside): clear the mark. */
        void (*end)(void *userdata);
        /* @ev (borrowed), held, is about to be started (manager-job.c: dispatched, its job set up, its
         * program's environment built and the program spawned): mark it.  Return: as begin() (the event
         * is then done without a run, loudly). */
        uint32_t (*start_begin)(void *userdata, const struct uevent *ev);
        /* The event begun last with start_begin() was started (or its start failed): clear its mark. */
        void (*start_end)(void *userdata);
};
/* Install the intake guard (@ops borrowed, all five hooks set; NULL: none). */
void manager_set_intake_guard(struct manager *m, const struct manager_intake_ops *ops, void *userdata);
/**
 * manager_set_resync_uuids() - the SYNTH_UUIDs of this daemon's resync passes.
 * @m: manager
 * @current: the pass running now, or NULL (borrowed until the next call)
 * @previous: the last pass completed, or NULL (borrowed until the next call)
 *
 * An event with SYNTH_ARG_HOTPLUGD=resync and one of these SYNTH_UUIDs gets
 * HOTPLUGD_RESYNC=1 beside the handler chain's additions.  Set by
 * manager-resync.c whenever a pass starts or ends, NULL both when it closes.
 */
void manager_set_resync_uuids(struct manager *m, const char *current, const char *previous);
/**
 * manager_continue_ledger() - a takeover: the ledger continues after @last.
 * @m: manager
 * @last: the previous instance's last SEQNUM (the handover journal's)
 *
 * Only when @last is of this boot (not above the kernel's baseline) and
 * nothing was processed yet; else the ledger keeps the kernel's baseline.
 * Return: whether the ledger restarted after @last.
 */
bool manager_continue_ledger(struct manager *m, uint64_t last);
/* A takeover restored @n events, @again of them to run again: counted. */
void manager_count_taken_over(struct manager *m, size_t n, size_t again);

/* ---- observe-firmware.c -------------------------------------------------- */

/* A firmware name the loader found no file for, and its requests failed at once. */
struct firmware_missing {
        char name[HP_FIRMWARE_NAME_MAX];
        uint64_t requests;
};

struct firmware_missing_totals {
        uint64_t failed;    /* requests failed at once (loading -1) */
        uint64_t untracked; /* of those, with a name not kept (the list was full, or too long) */
        size_t n;
        const struct firmware_missing *names; /* borrowed from the observer, @n of them */
};

/* What the firmware observer failed since the start (all zero without it). */
void manager_firmware_missing(const struct manager *m, struct firmware_missing_totals *ret);

/* ---- observe-info.c ------------------------------------------------------- */

/* The events kept of @devpath (hotplugctl info; borrowed until the next event), NULL: none. */
const struct devinfo_device *manager_info_history(const struct manager *m, const char *devpath);

/* Every DEVPATH whose events are kept, to @fn (borrowed for the call). */
void manager_for_each_info_device(const struct manager *m, void (*fn)(const char *devpath, void *arg), void *arg);

/* ---- observe-blame.c ------------------------------------------------------ */

/* hotplugctl blame's sums since the start (all zero without the observer). */
void manager_blame_totals(const struct manager *m, struct control_blame_totals *ret);

/**
 * manager_for_each_blame_row() - every row of the blame tables.
 * @fn: called per row (borrowed for the call), subsystems, programs, then
 *      devices, each longest total first
 * Return: 0, or -ENOMEM (rows of the table being sorted are not visited).
 */
int manager_for_each_blame_row(const struct manager *m, void (*fn)(const struct control_blame_row *r, void *arg),
                               void *arg);

/**
 * manager_blame_chain() - the chain of waits that ended last (blame --critical-chain).
 * @ret: what is known of it
 * @fn: called once per link, the event that ended last first (may be NULL)
 * Return: 0.
 */
int manager_blame_chain(const struct manager *m, struct control_blame_chain *ret,
                        void (*fn)(const struct control_blame_link *l, void *arg), void *arg);
