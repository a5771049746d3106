/* SPDX-License-Identifier: MIT */
/*
 * A manager's configuration as the manager keeps it: a copy that owns its
 * strings, made by manager_config_copy() and released by
 * manager_config_free(), the one path that frees them.  manager_new()
 * keeps a copy, manager_reconfigure() swaps a whole new copy in, and
 * manager_free() frees the one in use.
 *
 * Invariants: in a copy, every member of text_members[] is NULL or a
 * string of its own; nothing else in struct manager_config is owned (the
 * descriptors are consumed by whoever adopts them, not by the copy).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "loop/manager.h"
#include "shared/macro.h"

/* Every text member of struct manager_config (test-options checks each option's is here). */
static const size_t text_members[] = {
        offsetof(struct manager_config, agent),
        offsetof(struct manager_config, hotplug_d),
        offsetof(struct manager_config, sysfs_root),
        offsetof(struct manager_config, handlers.sysfs_root),
        offsetof(struct manager_config, handlers.handler_dir),
        offsetof(struct manager_config, handlers.filter_policy),
        offsetof(struct manager_config, handlers.firmware_path),
        offsetof(struct manager_config, control_path),
        offsetof(struct manager_config, record_path),
        offsetof(struct manager_config, handover_path),
        offsetof(struct manager_config, replay_path),
        offsetof(struct manager_config, resync_subsystems),
        offsetof(struct manager_config, hotplug_dir),
};

static const char **text_member(struct manager_config *cfg, size_t i)
{
        return (const char **)(void *)((char *)cfg + text_members[i]);
}

int manager_config_copy(const struct manager_config *src, struct manager_config *ret)
{
        struct manager_config c = *src;

        for (size_t i = 0; i < ELEMENTSOF(text_members); i++) {
                const char **s = text_member(&c, i);

                if (*s && !(*s = strdup(*s))) {
                        /* Members from i on still borrow from @src: free only the copies. */
                        for (size_t j = i; j < ELEMENTSOF(text_members); j++)
                                *text_member(&c, j) = NULL;
                        manager_config_free(&c);
                        return -ENOMEM;
                }
        }
        *ret = c;
        return 0;
}

void manager_config_free(struct manager_config *cfg)
{
        for (size_t i = 0; i < ELEMENTSOF(text_members); i++) {
                const char **s = text_member(cfg, i);

                free((char *)*s);
                *s = NULL;
        }
}
