/* SPDX-License-Identifier: MIT */
/*
 * The device model (see devmodel.h).  Invariants: a record's bus, once
 * known, changes only when the device starts afresh ("add", "move"); a
 * bus device's driver is the DRIVER= of its latest event; a "remove"
 * leaves no record behind.  Sysfs reads (through shared/sysfs.h, below the
 * root only) seed the bus of a device at its first event and answer for
 * devices the model does not know; they are never stored over the stream's
 * word.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/devmodel.h"
#include "shared/macro.h"
#include "shared/sysfs.h"

#define PATH_MAX_ 4096

static bool is_device_path(const char *devpath)
{
        return strncmp(devpath, "/devices/", 9) == 0;
}

/* Is the directory @path (open as @fd) a bus device?  1 with its bus in @bus, 0 not, negative errno. */
static int sysfs_bus_of(int fd, const char *path, char *bus, size_t size)
{
        char target[PATH_MAX_];
        const char *name;
        int r = sysfs_link_at(fd, path, "subsystem", target, sizeof(target));

        if (r < 0)
                return r; /* -ENOENT: no link (not a device, or one going: device_del() took it) */
        if (strncmp(target, "bus/", 4) != 0)
                return 0;
        name = target + 4;
        if (!*name || strchr(name, '/') || strlen(name) >= size)
                return 0;
        strcpy(bus, name);
        return 1;
}

/*
 * The bus of @ev's device at its first event, into @bus ("" for a class or
 * block device): its "subsystem" link while it exists, else whether
 * SUBSYSTEM is a bus.  Return: false if it cannot be told (no sysfs).
 */
static bool learn_bus(int sysfs_fd, const struct uevent *ev, char *bus, size_t size)
{
        _cleanup_close_ int fd = -1;
        char busdir[PATH_MAX_];
        struct stat st;

        bus[0] = '\0';
        if (!is_device_path(ev->devpath))
                return true;
        if (sysfs_fd < 0)
                return false;
        fd = sysfs_open_dir(sysfs_fd, ev->devpath);
        if (fd >= 0 && sysfs_bus_of(fd, ev->devpath, bus, size) >= 0)
                return true;
        /* Gone, or going: device_del() takes the subsystem link away before the directory (a
         * device read late, in between).  Its SUBSYSTEM is a bus if the bus is there. */
        bus[0] = '\0';
        if ((size_t)snprintf(busdir, sizeof(busdir), "bus/%s", ev->subsystem) >= sizeof(busdir))
                return true;
        if (fstatat(sysfs_fd, busdir, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            strlen(ev->subsystem) < size)
                strcpy(bus, ev->subsystem);
        return true;
}

static bool starts_afresh(const char *action)
{
        return strcmp(action, "add") == 0 || strcmp(action, "move") == 0;
}

/* Remember that the probe of @devpath, unbound after @from, ended with @ev's bind of @driver. */
static void binds_add(struct devmodel_binds *b, const struct uevent *ev, uint64_t from, const char *driver)
{
        struct devmodel_bind *x = &b->b[b->next];

        if (ev->devpath_len >= sizeof(x->devpath) || strlen(driver) >= sizeof(x->driver))
                return;
        x->from = from;
        x->bind = ev->seqnum;
        memcpy(x->devpath, ev->devpath, ev->devpath_len + 1u);
        strcpy(x->driver, driver);
        b->next = (b->next + 1) % HP_PROBE_BINDS;
        if (ev->seqnum > b->newest)
                b->newest = ev->seqnum;
}

/*
 * A bus device's probe window: unbound from an "add" or "unbind" (or an
 * event that says no driver) on, until a "bind" ends it (a bind of a
 * device unbound till then goes into @b).  An event with DRIVER= other
 * than a bind (one sent while the probe runs) leaves the window as it is.
 */
static void note_probe(struct devmodel_binds *b, const struct uevent *ev, struct devcache_entry *rec)
{
        if (strcmp(ev->action, "bind") == 0) {
                if (rec->since && rec->driver[0])
                        binds_add(b, ev, rec->since, rec->driver);
                rec->since = 0;
        } else if (strcmp(ev->action, "unbind") == 0 || (!rec->driver[0] && !rec->since))
                rec->since = rec->driver[0] ? 0 : ev->seqnum;
}

void devmodel_begin(struct devcache *c, struct devmodel_binds *binds, int sysfs_fd, const struct uevent *ev,
                    struct devmodel_event *ret)
{
        struct devcache_entry *rec = &ret->rec;
        const char *driver;

        if (!devcache_get(c, ev->devpath, rec) || starts_afresh(ev->action))
                *rec = (struct devcache_entry){ .bus = "", .driver = "" };
        if (!(rec->flags & DEVCACHE_BUS_KNOWN) && learn_bus(sysfs_fd, ev, ret->bus, sizeof(ret->bus))) {
                rec->bus = ret->bus;
                rec->flags |= DEVCACHE_BUS_KNOWN;
        }
        driver = uevent_get(ev, "DRIVER");
        if (devmodel_is_bus(ret)) {
                rec->driver = driver ? driver : "";
                note_probe(binds, ev, rec);
        }
        /* What devmodel_end() stores: a bus and a driver, empty if unknown, and a known bus only with its flag. */
        assert(rec->bus && rec->driver && (rec->bus[0] == '\0' || (rec->flags & DEVCACHE_BUS_KNOWN)));
}

void devmodel_end(struct devcache *c, const struct uevent *ev, struct devmodel_event *m, const char *learnt,
                  size_t size)
{
        if (strcmp(ev->action, "remove") == 0) {
                devcache_drop(c, ev->devpath);
                return;
        }
        if (ev->devpath_old)
                devcache_drop(c, ev->devpath_old);
        if (learnt) {
                m->rec.data = learnt;
                m->rec.size = size;
                m->rec.flags |= DEVCACHE_LEARNT;
        }
        /*
         * Kept: bus devices (their driver), and devices the handlers learnt
         * something of.  Not the many filtered class objects (queues, a
         * filtered subsystem) nor modules and drivers: a walk over them
         * reads sysfs.  A record that does not fit is not kept either.
         */
        if (!is_device_path(ev->devpath) || (!(m->rec.flags & DEVCACHE_LEARNT) && !devmodel_is_bus(m)))
                return;
        (void)devcache_put(c, ev->devpath, &m->rec);
}

int devmodel_seed(struct devcache *c, int sysfs_fd, int dirfd, const char *devpath)
{
        char path[PATH_MAX_], bus[DEVMODEL_NAME_MAX], driver[DEVMODEL_NAME_MAX];
        struct devcache_entry rec = { .flags = DEVCACHE_BUS_KNOWN, .bus = bus, .driver = driver };
        _cleanup_close_ int fd = -1;

        /* A bus device's own events say its driver: only class and block devices look further. */
        if (!is_device_path(devpath) || sysfs_bus_of(dirfd, devpath, bus, sizeof(bus)) != 0)
                return 0;
        if (devmodel_physical(c, sysfs_fd, devpath, path, sizeof(path), bus, sizeof(bus)) <= 0 ||
            devcache_contains(c, path))
                return 0;
        if (devcache_full(c))
                return -ENOSPC;
        fd = sysfs_open_dir(sysfs_fd, path);
        if (fd < 0 || sysfs_link_name(fd, path, "driver", driver, sizeof(driver)) < 0)
                driver[0] = '\0';
        return devcache_put(c, path, &rec) < 0 ? -E2BIG : 1;
}

/* Cut the last component off @path; false at the top of the device tree. */
static bool to_parent(char *path)
{
        char *s = strrchr(path, '/');

        if (!s || s == path)
                return false;
        *s = '\0';
        return strcmp(path, "/devices") != 0;
}

int devmodel_physical(struct devcache *c, int sysfs_fd, const char *devpath, char *path, size_t path_size,
                      char *bus, size_t bus_size)
{
        bool sysfs_ok = sysfs_fd >= 0;
        struct devcache_entry rec;

        if (!is_device_path(devpath) || strlen(devpath) >= path_size)
                return 0;
        strcpy(path, devpath);
        while (to_parent(path)) {
                _cleanup_close_ int fd = -1;
                int r;

                if (devcache_get(c, path, &rec) && (rec.flags & DEVCACHE_BUS_KNOWN)) {
                        if (!rec.bus[0])
                                continue;
                        if (strlen(rec.bus) >= bus_size)
                                return 0;
                        strcpy(bus, rec.bus);
                        return 1;
                }
                if (!sysfs_ok)
                        continue;
                fd = sysfs_open_dir(sysfs_fd, path);
                if (fd < 0) {
                        sysfs_ok = false; /* gone: what is left above may not be its ancestry */
                        continue;
                }
                r = sysfs_bus_of(fd, path, bus, bus_size);
                if (r > 0)
                        return 1;
        }
        return 0;
}

void devmodel_driver(struct devcache *c, int sysfs_fd, const char *devpath, char *driver, size_t size)
{
        _cleanup_close_ int fd = -1;
        struct devcache_entry rec;

        driver[0] = '\0';
        if (devcache_get(c, devpath, &rec) && rec.driver[0]) {
                if (strlen(rec.driver) < size)
                        strcpy(driver, rec.driver);
                return;
        }
        if (sysfs_fd < 0)
                return;
        fd = sysfs_open_dir(sysfs_fd, devpath);
        if (fd < 0 || sysfs_link_name(fd, devpath, "driver", driver, size) < 0)
                driver[0] = '\0';
}

enum devmodel_probe devmodel_probe_at(const struct devcache *c, const struct devmodel_binds *binds,
                                      const char *physpath, uint64_t seqnum, char *driver, size_t size)
{
        struct devcache_entry rec;

        /* A bind read after the event: did it end the probe the event was sent in? */
        for (unsigned i = 0; binds->newest > seqnum && i < HP_PROBE_BINDS; i++) {
                const struct devmodel_bind *x = &binds->b[i];

                if (x->from < seqnum && seqnum < x->bind && strcmp(x->devpath, physpath) == 0) {
                        if (!driver)
                                return DEVMODEL_PROBE_BOUND;
                        if (strlen(x->driver) >= size)
                                return DEVMODEL_PROBE_NONE;
                        strcpy(driver, x->driver);
                        return DEVMODEL_PROBE_BOUND;
                }
        }
        if (devcache_peek(c, physpath, &rec) && rec.since && rec.since < seqnum)
                return DEVMODEL_PROBE_OPEN;
        return DEVMODEL_PROBE_NONE;
}
