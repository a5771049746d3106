/* SPDX-License-Identifier: MIT */
/*
 * block: MAJOR and MINOR (2.6 block_hotplug; the kernel still sends them)
 * rebuilt from the "dev" attribute ("MAJOR:MINOR") only when missing.  The
 * PHYSDEV* variables of disks and partitions come from physdev.
 */
#include <stdio.h>

#include "handlers/builtin.h"

static const char *const block_subsystems[] = { "block", NULL };
static const char *const block_keys[] = { "MAJOR", "MINOR", NULL };

static int block_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                         struct hotplugd_env *env)
{
        unsigned major, minor;
        char dev[64], tail;
        int r;

        if (builtin_recalling(e))
                return builtin_recall(e, env, block_keys);
        if (builtin_get(e, "MAJOR") && builtin_get(e, "MINOR"))
                return 0;
        if (builtin_read(e, e->ev->devpath, "dev", dev, sizeof(dev)) < 0 ||
            sscanf(dev, "%u:%u%c", &major, &minor, &tail) != 2)
                return 0;
        r = builtin_learnf(e, env, "MAJOR", "%u", major);
        if (r >= 0)
                r = builtin_learnf(e, env, "MINOR", "%u", minor);
        return r;
}

const struct hotplugd_handler builtin_block = {
        BUILTIN_HANDLER("block", block_subsystems),
        .add_env = block_add_env,
};
