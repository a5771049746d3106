/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Helpers for the built-in handlers (one subsystem per file in this
 * directory, listed in builtin.c).  Built-ins use the public ops struct and
 * may look inside the event (handler-internal.h).
 *
 * Legacy variables derived from sysfs are "learnt": at a device's add or
 * move (or its first event hotplugd sees) a built-in reads sysfs and calls
 * builtin_learn(), which adds the variable and keeps it in the device's
 * record (pipeline/devmodel.h); on later events of the device it calls
 * builtin_recall() instead, which never touches sysfs.  What changes over
 * a device's life (the driver bound to it) comes from the device model,
 * never from a record of an earlier event.  Values the kernel sent are
 * passed through and never recomputed.
 */

#include <stdbool.h>
#include <stddef.h>

#include "pipeline/handler-internal.h"

static inline bool builtin_recalling(const struct hotplugd_event *e)
{
        return e->recalled != NULL;
}

static inline const char *builtin_get(const struct hotplugd_event *e, const char *key)
{
        return uevent_get(e->ev, key);
}

/* Add the cached value of each of @keys (NULL-terminated) the kernel did not send.  0 or -ENOMEM. */
int builtin_recall(const struct hotplugd_event *e, struct hotplugd_env *env, const char *const *keys);

/* Add @key=@value and remember it for the device.  0 or -ENOMEM. */
int builtin_learn(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key, const char *value);
int builtin_learnf(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key, const char *fmt, ...)
        _printf_(4, 5);

/* Attribute @attr of the device directory @devpath; as sysfs_read(). */
int builtin_read(const struct hotplugd_event *e, const char *devpath, const char *attr, char *buf, size_t size);

/* Attribute as an unsigned number in @base (0: C rules); -EINVAL if it is not one. */
int builtin_read_ulong(const struct hotplugd_event *e, const char *devpath, const char *attr, int base,
                       unsigned long *ret);

/* Read several attributes of @devpath as numbers in @base; stops at the first failure. */
int builtin_read_ulongs(const struct hotplugd_event *e, const char *devpath, const char *const *attrs, int base,
                        unsigned long *ret);

/* @devpath without its last component, into @buf; -ENOENT for a top-level path. */
int builtin_parent(const char *devpath, char *buf, size_t size);

/* The handlers. */
extern const struct hotplugd_handler builtin_physdev;
extern const struct hotplugd_handler builtin_usb;
extern const struct hotplugd_handler builtin_pci;
extern const struct hotplugd_handler builtin_net;
extern const struct hotplugd_handler builtin_block;
extern const struct hotplugd_handler builtin_input;
extern const struct hotplugd_handler builtin_firmware;
extern const struct hotplugd_handler builtin_scsi;

#define BUILTIN_HANDLER(ident, list)                                                                       \
        .abi = HOTPLUGD_HANDLER_ABI, .size = sizeof(struct hotplugd_handler), .id = (ident), .subsystems = (list)
