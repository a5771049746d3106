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
 */

#include <stdbool.h>
#include <stddef.h>

#include "pipeline/devcache.h"
#include "uevent/uevent.h"

#define DEVMODEL_NAME_MAX 256

/* The event's device as the model sees it, for one handler chain run. */
struct devmodel_event {
        struct devcache_entry rec;    /* as of this event; strings borrowed (cache, event or below) */
        char bus[DEVMODEL_NAME_MAX];  /* storage for a bus learnt at this event */
};

/**
 * devmodel_begin() - apply @ev to its device's record, before the handlers.
 * @c: the store
 * @sysfs_fd: sysfs root, borrowed (-1: none)
 * @ev: the event, borrowed until devmodel_end()
 * @ret: the device's record as of @ev: learnt data only if the handlers may
 *       recall it (not at "add" or "move", which start a device afresh)
 */
void devmodel_begin(struct devcache *c, int sysfs_fd, const struct uevent *ev, struct devmodel_event *ret);

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
