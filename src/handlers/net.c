/* SPDX-License-Identifier: MIT */
/*
 * net: INTERFACE, the variable 2.6 net.agent keys on (and IFINDEX).  The
 * kernel still sends both; a missing INTERFACE is the device's name (the
 * last DEVPATH component), a missing IFINDEX the ifindex attribute.  The
 * rx-N/tx-N queue kobjects come as SUBSYSTEM=queues and are dropped by the
 * default filter policy, not here.
 */
#include "handlers/builtin.h"
#include "shared/sysfs.h"

static const char *const net_subsystems[] = { "net", NULL };
static const char *const net_keys[] = { "INTERFACE", "IFINDEX", NULL };

static int net_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                       struct hotplugd_env *env)
{
        unsigned long ifindex;
        int r = 0;

        if (builtin_recalling(e))
                return builtin_recall(e, env, net_keys);
        if (!builtin_get(e, "INTERFACE"))
                r = builtin_learn(e, env, "INTERFACE", sysfs_basename(e->ev->devpath));
        if (r >= 0 && !builtin_get(e, "IFINDEX") &&
            builtin_read_ulong(e, e->ev->devpath, "ifindex", 10, &ifindex) >= 0)
                r = builtin_learnf(e, env, "IFINDEX", "%lu", ifindex);
        return r;
}

const struct hotplugd_handler builtin_net = {
        BUILTIN_HANDLER("net", net_subsystems),
        .add_env = net_add_env,
};
