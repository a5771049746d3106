/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Resync after a receive-buffer overflow: the decisions, without the loop.
 *
 *  - resync_scan() lists the devices sysfs has now (directories below
 *    ROOT/devices holding a `uevent` file and a `subsystem` link), never
 *    following a symbolic link;
 *  - resync_plan_build() compares the devices the daemon believes present
 *    with that listing and says what to do: `change` for a device both
 *    know, `add` for one only sysfs has, `remove` for one that is gone;
 *    with a subsystem list (resync-subsystems), only devices of those
 *    subsystems get any of these, and the others are left alone: the plan
 *    only says how to bring the device set up to date for them;
 *  - resync_pick_seqnums() chooses SEQNUMs for the synthesised removes
 *    from the ledger's open gaps and from the numbers the kernel spent
 *    since the last event received: numbers of events this daemon never
 *    received, so they are unique, and they order each remove where the
 *    lost event was, before everything received after the loss;
 *  - resync_remove_datagram() builds such a remove in the kernel's format.
 *
 * Everything but resync_scan() is pure (no clock, no I/O); resync_scan()
 * only reads directories and links.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recovery/devset.h"
#include "pipeline/ledger.h"

/* The kernel accepts "ACTION UUID KEY=VALUE" with an alphanumeric key and
 * value and sends it back as SYNTH_ARG_KEY=VALUE. */
#define RESYNC_SYNTH_ARG "HOTPLUGD=resync"
#define RESYNC_SYNTH_KEY "SYNTH_ARG_HOTPLUGD"
#define RESYNC_SYNTH_VALUE "resync"
/* The variable every resync event carries for its agents. */
#define RESYNC_ENV_KEY "HOTPLUGD_RESYNC"

/**
 * resync_scan() - list the devices in sysfs now.
 * @root: sysfs root, e.g. "/sys" (borrowed)
 * @ret: receives one entry per device, DEVPATH ("/devices/...") ->
 *       basename of its `subsystem` link (borrowed; the caller initialised it)
 *
 * Directories are opened with O_NOFOLLOW, so a symbolic link (`device`,
 * `subsystem`, a link planted in a fixture) is never entered; a directory
 * that vanishes during the walk is skipped; the walk goes at most
 * HP_RESYNC_DEPTH_MAX levels deep.  A directory with a `uevent` file but no
 * `subsystem` link is left out: the kernel sends no event for it.
 * Return: 0 (devices beyond the set's bound are counted in @ret->refused),
 * or negative errno if ROOT/devices cannot be opened or memory runs out.
 */
int resync_scan(const char *root, struct devset *ret);

/* Shown each device the listing finds: its directory @dirfd (borrowed for the call) at @devpath. */
typedef void (*resync_visit_fn)(void *userdata, int dirfd, const char *devpath);

/**
 * resync_scan_visit() - resync_scan() that also shows each device to @visit.
 * @visit: called once per device listed (those beyond the set's bound too),
 *         parents after their children; NULL: none
 * @userdata: for @visit
 * One walk serves both: the daemon seeds its device model from it at start.
 */
int resync_scan_visit(const char *root, struct devset *ret, resync_visit_fn visit, void *userdata);

enum resync_action {
        RESYNC_REMOVE,
        RESYNC_ADD,
        RESYNC_CHANGE,
        RESYNC_LEARN,  /* left alone, but present: the device set gets it, nothing is written */
        RESYNC_FORGET, /* left alone, but gone: the device set drops it, no remove runs */
};

struct resync_op {
        enum resync_action action;
        char *devpath;   /* owned by the plan */
        char *subsystem; /* owned by the plan */
        uint64_t seqnum; /* RESYNC_REMOVE: the SEQNUM it is given, 0 if none */
};

/* What one pass does: removes first (children before parents), then adds
 * and changes (parents before children, i.e. in DEVPATH order).  Devices
 * whose subsystem is not listed are in neither: @left says how the device
 * set follows sysfs for them (learns first, then forgets, each in DEVPATH
 * order), without an event. */
struct resync_plan {
        struct resync_op *op;
        size_t n;
        size_t n_remove, n_add, n_change;
        size_t skipped;        /* writes left out: more than @max_writes */
        struct resync_op *left; /* RESYNC_LEARN and RESYNC_FORGET */
        size_t n_left;
        size_t n_learn, n_forget;
        size_t left_alone;     /* devices not listed: in sysfs (not written) or gone (not removed) */
};

/* Return: true if @devpath still exists (as a directory) and must not be removed. */
typedef bool (*resync_exists_fn)(const char *devpath, void *userdata);

/* What resync_plan_build() compares, and within which limits. */
struct resync_plan_args {
        const struct devset *known; /* devices the daemon believes present (borrowed) */
        const struct devset *now;   /* devices in sysfs now, from resync_scan() (borrowed) */
        /* Asked about each device only @known has; NULL means "gone".  A known
         * device without a `uevent` file (a net queue) is not in @now but still
         * exists, and must not be removed (nor forgotten). */
        resync_exists_fn exists;
        void *userdata;           /* for @exists */
        size_t max_writes;        /* at most this many adds and changes (the rest are
                                   * counted in skipped; adds are kept before changes) */
        const char *subsystems;   /* resync-subsystems: a list subsystem_list_check() accepted
                                   * (uevent/subsystem-list.h); NULL or "": every subsystem */
        bool no_changes;          /* a targeted pass: adds and removes only, no `change` for
                                   * the devices both know (what changed is only what is new
                                   * or gone) */
};

/**
 * resync_plan_build() - the reconciliation decision.
 * @a: what to compare (borrowed)
 * @ret: the plan (owned by the caller: resync_plan_free()); untouched on failure
 *
 * A device is judged by its SUBSYSTEM in @a->now if present, in @a->known
 * if gone.  One whose subsystem @a->subsystems does not list gets no
 * operation and counts in @ret->left_alone; if only sysfs has it, it is
 * in @ret->left as RESYNC_LEARN, if it is gone, as RESYNC_FORGET.
 * Return: 0 or -ENOMEM.
 */
int resync_plan_build(const struct resync_plan_args *a, struct resync_plan *ret);

void resync_plan_free(struct resync_plan *p);

/**
 * resync_pick_seqnums() - SEQNUMs for synthesised removes.
 * @l: ledger (borrowed)
 * @floor: only numbers above this (the highest one given out before)
 * @kernel: the kernel's SEQNUM now (/sys/kernel/uevent_seqnum), read
 *          before the socket was last drained, 0 if unknown.  Numbers
 *          above everything the ledger has seen, up to it, belong to
 *          events that were lost (the gap the next event will open).
 * @out: receives the numbers, ascending
 * @n: how many are wanted
 *
 * Takes the lowest such numbers above @floor: first from the ledger's open
 * gaps, then from the range up to @kernel.
 * Return: how many were found (may be fewer than @n).
 */
size_t resync_pick_seqnums(const struct ledger *l, uint64_t floor, uint64_t kernel, uint64_t *out, size_t n);

/**
 * resync_remove_datagram() - a remove event in the kernel's wire format.
 * @devpath, @subsystem: of the device (borrowed)
 * @seqnum: its SEQNUM
 * @uuid: SYNTH_UUID of the pass (borrowed), NULL for none
 * @buf: receives "remove@DEVPATH\0ACTION=remove\0DEVPATH=...\0SUBSYSTEM=...\0
 *       SEQNUM=...\0HOTPLUGD_RESYNC=1\0[SYNTH_UUID=...\0]"
 * @size: size of @buf
 * Return: the datagram's length, or -ENOBUFS if it does not fit.
 */
int resync_remove_datagram(const char *devpath, const char *subsystem, uint64_t seqnum, const char *uuid,
                           char *buf, size_t size);

const char *resync_action_to_string(enum resync_action a);
