/* SPDX-License-Identifier: MIT */
/*
 * physdev: PHYSDEVPATH, PHYSDEVBUS and PHYSDEVDRIVER, which 2.6 kernels
 * sent and today's do not.
 *   - A bus device (its "subsystem" link points into bus/) gets
 *     PHYSDEVBUS=its bus and PHYSDEVDRIVER=its driver (DRIVER= of the event,
 *     else its "driver" link) when bound; no PHYSDEVPATH (2.6 dev_hotplug).
 *   - A class or block device gets PHYSDEVPATH=the DEVPATH of its first
 *     ancestor that is a bus device, PHYSDEVBUS and PHYSDEVDRIVER of that
 *     ancestor (2.6 class_hotplug / block_hotplug).
 *   - Virtual devices (no such ancestor) get nothing.
 * Learnt at add and recalled from the cache afterwards (remove included).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "handlers/builtin.h"
#include "shared/sysfs.h"

#define PATH_MAX_ 4096

static const char *const physdev_keys[] = { "PHYSDEVPATH", "PHYSDEVBUS", "PHYSDEVDRIVER", NULL };

/*
 * Is directory @path (open as @fd) a bus device?  Return 1 and its bus
 * name in @bus, 0 if it has another or no subsystem, negative errno.
 */
static int bus_of(int fd, const char *path, char *bus, size_t size)
{
        char target[PATH_MAX_];
        const char *name;
        int r = sysfs_link_at(fd, path, "subsystem", target, sizeof(target));

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (strncmp(target, "bus/", 4) != 0)
                return 0;
        name = target + 4;
        if (!*name || strchr(name, '/') || strlen(name) >= size)
                return 0;
        strcpy(bus, name);
        return 1;
}

static int driver_of(int fd, const char *path, char *driver, size_t size)
{
        int r = sysfs_link_name(fd, path, "driver", driver, size);

        return r < 0 ? r : 0;
}

/* The event's device is a bus device: PHYSDEVBUS and PHYSDEVDRIVER only. */
static int add_bus_device(const struct hotplugd_event *e, struct hotplugd_env *env, int fd, const char *bus)
{
        const char *driver = builtin_get(e, "DRIVER");
        char buf[256];
        int r;

        r = builtin_learn(e, env, "PHYSDEVBUS", bus);
        if (r < 0)
                return r;
        if (!driver && fd >= 0 && driver_of(fd, e->ev->devpath, buf, sizeof(buf)) >= 0)
                driver = buf;
        return driver ? builtin_learn(e, env, "PHYSDEVDRIVER", driver) : 0;
}

/* Walk up from the parent of DEVPATH to the first bus device. */
static int add_physical_ancestor(const struct hotplugd_event *e, struct hotplugd_env *env)
{
        char path[PATH_MAX_], bus[256], driver[256];

        if (strlen(e->ev->devpath) >= sizeof(path))
                return 0;
        strcpy(path, e->ev->devpath);
        for (char *s = strrchr(path, '/'); s && s != path; s = strrchr(path, '/')) {
                _cleanup_close_ int fd = -1;
                int r;

                *s = '\0';
                if (strcmp(path, "/devices") == 0)
                        break;
                fd = sysfs_open_dir(e->sysfs_fd, path);
                if (fd < 0)
                        continue;
                if (bus_of(fd, path, bus, sizeof(bus)) <= 0)
                        continue;
                r = builtin_learn(e, env, "PHYSDEVPATH", path);
                if (r >= 0)
                        r = builtin_learn(e, env, "PHYSDEVBUS", bus);
                if (r >= 0 && driver_of(fd, path, driver, sizeof(driver)) >= 0)
                        r = builtin_learn(e, env, "PHYSDEVDRIVER", driver);
                return r;
        }
        return 0;
}

static int physdev_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                           struct hotplugd_env *env)
{
        _cleanup_close_ int fd = -1;
        char bus[256], busdir[512];
        struct stat st;
        int r;

        if (builtin_recalling(e))
                return builtin_recall(e, env, physdev_keys);
        if (e->sysfs_fd < 0)
                return 0;
        fd = sysfs_open_dir(e->sysfs_fd, e->ev->devpath);
        if (fd >= 0) {
                r = bus_of(fd, e->ev->devpath, bus, sizeof(bus));
                if (r > 0)
                        return add_bus_device(e, env, fd, bus);
                return add_physical_ancestor(e, env);
        }
        /* Gone already (remove without a cached entry): bus devices are still recognisable. */
        snprintf(busdir, sizeof(busdir), "bus/%s", e->ev->subsystem);
        if (fstatat(e->sysfs_fd, busdir, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
                return add_bus_device(e, env, -1, e->ev->subsystem);
        return 0;
}

const struct hotplugd_handler builtin_physdev = {
        BUILTIN_HANDLER("physdev", NULL),
        .add_env = physdev_add_env,
};
