/* SPDX-License-Identifier: MIT */
/*
 * An example hotplugd handler (see hotplugd-handler(3)).  For network
 * interfaces it
 *   - calls the agent as "net-virtual" instead of "net" for interfaces
 *     without hardware (DEVPATH below /devices/virtual/), so that
 *     /etc/hotplug.d/net-virtual/ can hold their scripts;
 *   - adds EXAMPLE_HANDLER=1 and, while the device exists, EXAMPLE_MTU
 *     read from its sysfs "mtu" attribute.
 * Build: cc -shared -fPIC -o 50-example.so handler-example.c $(pkg-config --cflags hotplugd-handler)
 * Install root-owned, mode 0755, into the handler directory.
 */
#include <errno.h>
#include <string.h>

#include <hotplugd/handler.h>

static const char *const subsystems[] = { "net", NULL };

static int example_init(const struct hotplugd_host *host, void **data)
{
        host->log(host, HOTPLUGD_LOG_DEBUG, "ready");
        *data = NULL;
        return 0;
}

static int example_name(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev, char *buf,
                        size_t size)
{
        const char *devpath = host->event_devpath(ev);

        (void)data;
        if (strncmp(devpath, "/devices/virtual/", 17) != 0 || size < sizeof("net-virtual"))
                return 0;
        strcpy(buf, "net-virtual");
        return 1;
}

static int example_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev,
                           struct hotplugd_env *env)
{
        char mtu[32];
        int r;

        (void)data;
        r = host->env_add(env, "EXAMPLE_HANDLER", "1");
        if (r < 0)
                return r;       /* -ENOMEM: the event is aborted */
        if (host->sysfs_read(host, host->event_devpath(ev), "mtu", mtu, sizeof(mtu)) > 0)
                return host->env_add(env, "EXAMPLE_MTU", mtu);
        return 0;               /* gone already (remove): nothing to add */
}

HOTPLUGD_HANDLER_EXPORT = {
        .abi = HOTPLUGD_HANDLER_ABI,
        .size = sizeof(struct hotplugd_handler),
        .id = "example",
        .subsystems = subsystems,
        .init = example_init,
        .name = example_name,
        .add_env = example_add_env,
};
