/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The device model: what the event stream says of each device, fed every
 * event in SEQNUM order (filtered ones too) and kept in the devcache
 * records, so that the legacy variables are what held when the kernel sent
 * an event, not what sysfs shows when hotplugd gets to it:
 *   - a device's bus (or that it is a class or block device), learnt at its
 *     first event and kept until its remove;
 *   - the driver bound to a bus device: today's kernel sends DRIVER= with
 *     every event of a bound device, so each event of the device says which
 *     driver is bound (none: no DRIVER=);
 *   - the variables the handlers learnt from sysfs while the device was
 *     there (devcache_entry.data).
 * Sysfs is read only to seed what the stream has not said: the devices
 * present when hotplugd starts (devmodel_seed(): their events would have
 * said the bus and the driver bound then), or an ancestor whose probe is
 * under way (the
 * kernel sets the driver before probe() and announces "bind" after it, so
 * children created by the probe come before the bind that names it).  A
 * read of sysfs never overwrites what the stream said.
 *
 * Probes: a bus device is unbound, as the stream says, from its "add" or
 * "unbind" (or an event without DRIVER=) on; the SEQNUM of that event is
 * kept in its record (devcache_entry.since) until a "bind", which ends the
 * probe and names the driver the probe's children were born under.  Each
 * such window (from, bind] is kept in a small ring (struct devmodel_binds)
 * after the device's record is gone, so that a child's event read, or
 * started, after its parent's bind, unbind and remove still finds the
 * driver its parent had when the kernel sent it (devmodel_probe_at()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/devcache.h"
#include "shared/bounds.h"
#include "uevent/uevent.h"

#define DEVMODEL_NAME_MAX 256

/* A probe the stream saw end with a bind: the device was unbound after @from, bound to @driver at @bind. */
struct devmodel_bind {
        uint64_t from, bind;           /* SEQNUMs; 0: an empty slot */
        char devpath[HP_PROBE_BIND_PATH_MAX];
        char driver[DEVMODEL_NAME_MAX];
};

/* The last HP_PROBE_BINDS probes that ended with a bind, oldest overwritten first. */
struct devmodel_binds {
        struct devmodel_bind b[HP_PROBE_BINDS];
        unsigned next;                 /* the slot the next bind takes */
        uint64_t newest;               /* highest bind SEQNUM kept, 0: none */
};

/* What the stream says of a class device's physical device at one of its events (devmodel_probe_at()). */
enum devmodel_probe {
        DEVMODEL_PROBE_NONE,   /* nothing to add to what the handlers said at intake */
        DEVMODEL_PROBE_OPEN,   /* unbound since before the event, no bind, unbind or remove read since */
        DEVMODEL_PROBE_BOUND,  /* a probe under way at the event ended with a bind: its driver */
};

/* The event's device as the model sees it, for one handler chain run. */
struct devmodel_event {
        struct devcache_entry rec;    /* as of this event; strings borrowed (cache, event or below) */
        char bus[DEVMODEL_NAME_MAX];  /* storage for a bus learnt at this event */
};

/**
 * devmodel_begin() - apply @ev to its device's record, before the handlers.
 * @c: the store
 * @binds: the probes ended by a bind (a bind of a device unbound till then is added)
 * @sysfs_fd: sysfs root, borrowed (-1: none)
 * @ev: the event, borrowed until devmodel_end()
 * @ret: the device's record as of @ev: learnt data only if the handlers may
 *       recall it (not at "add" or "move", which start a device afresh)
 */
void devmodel_begin(struct devcache *c, struct devmodel_binds *binds, int sysfs_fd, const struct uevent *ev,
                    struct devmodel_event *ret);

/**
 * devmodel_end() - store the record after the handlers ran (or not).
 * @learnt: packed variables the handlers learnt from sysfs at this event
 *          (NULL: keep those the record had)
 * @size: bytes of @learnt
 * A "remove" forgets the device; a "move" forgets DEVPATH_OLD.
 */
void devmodel_end(struct devcache *c, const struct uevent *ev, struct devmodel_event *m, const char *learnt,
                  size_t size);

/**
 * devmodel_seed() - what a device present at start had, before any event.
 * @c: the store
 * @sysfs_fd: sysfs root, borrowed
 * @dirfd: the device's directory (borrowed), opened at @devpath below the sysfs root
 * @devpath: its DEVPATH ("/devices/...")
 *
 * For a class or block device, its physical device (devmodel_physical())
 * gets a record with its bus and the driver its "driver" link names now
 * (none: unbound): what that device's events would have said, so that the
 * class device's events after its directory or the link is gone (a
 * "remove" sent from the driver's unbind) still get PHYSDEVPATH,
 * PHYSDEVBUS and PHYSDEVDRIVER.  Nothing else is kept: a bus device's own
 * events carry its driver, and a class device finds its physical device's
 * record.  A device the stream told of already keeps what the stream said,
 * and a full store is not made to evict anything.
 * Return: 1 seeded, 0 nothing to keep, -ENOSPC the store is full, -E2BIG
 * the record does not fit a slot.
 */
int devmodel_seed(struct devcache *c, int sysfs_fd, int dirfd, const char *devpath);

/* True if @m is a bus device (rec.bus names its bus). */
static inline bool devmodel_is_bus(const struct devmodel_event *m)
{
        return (m->rec.flags & DEVCACHE_BUS_KNOWN) && m->rec.bus[0];
}

/**
 * devmodel_physical() - the nearest ancestor of @devpath on a bus.
 * @path, @bus: receive its DEVPATH and bus name (@path_size, @bus_size bytes)
 *
 * Ancestors are taken from the model; sysfs is read for those it does not
 * know only while the directories down to @devpath exist (a device that is
 * gone is never matched to an ancestor further up that happens to be left).
 * Return: 1 if found, 0 if there is none or it cannot be known.
 */
int devmodel_physical(struct devcache *c, int sysfs_fd, const char *devpath, char *path, size_t path_size,
                      char *bus, size_t bus_size);

/**
 * devmodel_driver() - the driver bound to bus device @devpath at this moment.
 * @driver: receives its name, "" for none (@size bytes)
 *
 * As the stream says; when it says none (or nothing), the device's
 * "driver" link, which a probe under way already shows.
 */
void devmodel_driver(struct devcache *c, int sysfs_fd, const char *devpath, char *driver, size_t size);

/**
 * devmodel_probe_at() - the driver bound to @physpath when the kernel sent event @seqnum, as known now.
 * @c: the store
 * @binds: the probes ended by a bind
 * @physpath: the physical device (PHYSDEVPATH) of the event's class or block device
 * @seqnum: the event's SEQNUM
 * @driver: receives the driver for DEVMODEL_PROBE_BOUND (@size bytes); NULL: only the answer
 *
 * Reads no sysfs.  Return: DEVMODEL_PROBE_BOUND when a bind ended the probe
 * under way at @seqnum (the device unbound from a SEQNUM below @seqnum, the
 * bind above it, nothing between); DEVMODEL_PROBE_OPEN when @physpath is
 * unbound since a SEQNUM below @seqnum and the stream has said nothing
 * more of it yet; DEVMODEL_PROBE_NONE otherwise (bound or unbound before
 * the probe, the probe failed: no bind before an unbind or remove, or not
 * known).
 */
enum devmodel_probe devmodel_probe_at(const struct devcache *c, const struct devmodel_binds *binds,
                                      const char *physpath, uint64_t seqnum, char *driver, size_t size);
