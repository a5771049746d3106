/* SPDX-License-Identifier: MIT */
/*
 * physdev: PHYSDEVPATH, PHYSDEVBUS and PHYSDEVDRIVER, which 2.6 kernels
 * sent and today's do not, as they held when the kernel sent the event
 * (the device model, pipeline/devmodel.h, says what held):
 *   - A bus device gets PHYSDEVBUS=its bus and, when bound, PHYSDEVDRIVER=
 *     its driver, which is exactly the DRIVER= of the event; no
 *     PHYSDEVPATH (2.6 dev_hotplug).
 *   - A class or block device gets PHYSDEVPATH=the DEVPATH of its nearest
 *     ancestor on a bus and PHYSDEVBUS of that ancestor, both learnt once
 *     and recalled for the device's later events (remove included), and
 *     PHYSDEVDRIVER=the ancestor's driver at this event, which changes with
 *     the ancestor's bind and unbind (2.6 class_hotplug / block_hotplug).
 *   - Virtual devices (no such ancestor) get nothing.
 * A variable the kernel sent itself passes through and is not added.
 */
#include <string.h>

#include "handlers/builtin.h"

#define PATH_MAX_ 4096

static int add_unsent(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key, const char *value)
{
        if (!value[0] || builtin_get(e, key))
                return 0;
        return handler_env_add(env, key, value);
}

static int add_bus_device(const struct hotplugd_event *e, struct hotplugd_env *env)
{
        const char *driver = builtin_get(e, "DRIVER");
        int r = add_unsent(e, env, "PHYSDEVBUS", e->dev->rec.bus);

        return r < 0 || !driver ? r : add_unsent(e, env, "PHYSDEVDRIVER", driver);
}

/* PHYSDEVPATH and PHYSDEVBUS of a class or block device: from its record, else found and learnt. */
static int physical_of(const struct hotplugd_event *e, char *path, size_t path_size, char *bus, size_t bus_size)
{
        const char *p, *b;

        if (builtin_recalling(e)) {
                p = packed_get(e->recalled, e->recalled_size, "PHYSDEVPATH");
                b = packed_get(e->recalled, e->recalled_size, "PHYSDEVBUS");
                if (!p || !b || strlen(p) >= path_size || strlen(b) >= bus_size)
                        return 0;
                strcpy(path, p);
                strcpy(bus, b);
                return 1;
        }
        if (devmodel_physical(e->cache, e->sysfs_fd, e->ev->devpath, path, path_size, bus, bus_size) <= 0)
                return 0;
        /* Remembered for the device's later events; best effort, as every learnt value. */
        (void)envbuf_add(e->learn, "PHYSDEVPATH", path);
        (void)envbuf_add(e->learn, "PHYSDEVBUS", bus);
        return 1;
}

static int physdev_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                           struct hotplugd_env *env)
{
        char path[PATH_MAX_], bus[DEVMODEL_NAME_MAX], driver[DEVMODEL_NAME_MAX];
        int r;

        if (devmodel_is_bus(e->dev))
                return add_bus_device(e, env);
        if (physical_of(e, path, sizeof(path), bus, sizeof(bus)) <= 0)
                return 0;
        devmodel_driver(e->cache, e->sysfs_fd, path, driver, sizeof(driver));
        r = add_unsent(e, env, "PHYSDEVPATH", path);
        if (r >= 0)
                r = add_unsent(e, env, "PHYSDEVBUS", bus);
        if (r >= 0)
                r = add_unsent(e, env, "PHYSDEVDRIVER", driver);
        return r;
}

const struct hotplugd_handler builtin_physdev = {
        BUILTIN_HANDLER("physdev", NULL),
        .add_env = physdev_add_env,
};
