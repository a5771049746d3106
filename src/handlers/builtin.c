/* SPDX-License-Identifier: MIT */
/*
 * The table of built-in handlers, in run order, and their shared helpers.
 * physdev runs first (every subsystem), then one handler per subsystem.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/builtin.h"
#include "pipeline/devcache.h"
#include "shared/sysfs.h"

const struct hotplugd_handler *const builtin_handlers[] = {
        &builtin_physdev,
        &builtin_usb,
        &builtin_pci,
        &builtin_net,
        &builtin_block,
        &builtin_input,
        &builtin_firmware,
        &builtin_scsi,
};
const size_t builtin_handlers_count = ELEMENTSOF(builtin_handlers);

int builtin_recall(const struct hotplugd_event *e, struct hotplugd_env *env, const char *const *keys)
{
        for (; *keys; keys++) {
                const char *v;
                int r;

                if (uevent_get(e->ev, *keys))
                        continue;
                v = packed_get(e->recalled, e->recalled_size, *keys);
                if (!v)
                        continue;
                r = handler_env_add(env, *keys, v);
                if (r < 0)
                        return r;
        }
        return 0;
}

int builtin_learn(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key, const char *value)
{
        int r = handler_env_add(env, key, value);

        if (r < 0)
                return r;
        /* The cache is best effort: a full learn buffer only means no caching of this key. */
        (void)envbuf_add(e->learn, key, value);
        return 0;
}

int builtin_learnf(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key, const char *fmt, ...)
{
        char value[HP_SYSFS_ATTR_MAX];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = handler_env_vformat(env, value, sizeof(value), fmt, ap);
        va_end(ap);
        return r < 0 ? r : builtin_learn(e, env, key, value);
}

int builtin_read(const struct hotplugd_event *e, const char *devpath, const char *attr, char *buf, size_t size)
{
        if (e->sysfs_fd < 0)
                return -ENOENT;
        return sysfs_read(e->sysfs_fd, devpath, attr, buf, size);
}

int builtin_read_ulong(const struct hotplugd_event *e, const char *devpath, const char *attr, int base,
                       unsigned long *ret)
{
        const char *const attrs[] = { attr, NULL };

        return builtin_read_ulongs(e, devpath, attrs, base, ret);
}

int builtin_read_ulongs(const struct hotplugd_event *e, const char *devpath, const char *const *attrs, int base,
                        unsigned long *ret)
{
        _cleanup_close_ int fd = -1;

        if (e->sysfs_fd < 0)
                return -ENOENT;
        fd = sysfs_open_dir(e->sysfs_fd, devpath);
        if (fd < 0)
                return fd;
        for (size_t i = 0; attrs[i]; i++) {
                char buf[64], *end;
                int r = sysfs_read_at(fd, attrs[i], buf, sizeof(buf));

                if (r < 0)
                        return r;
                if (r == 0 || buf[0] == '-' || buf[0] == ' ')
                        return -EINVAL;
                errno = 0;
                ret[i] = strtoul(buf, &end, base);
                if (errno != 0 || *end != '\0')
                        return -EINVAL;
        }
        return 0;
}

int builtin_parent(const char *devpath, char *buf, size_t size)
{
        const char *s = strrchr(devpath, '/');
        size_t n;

        if (!s || s == devpath)
                return -ENOENT;
        n = (size_t)(s - devpath);
        if (n >= size)
                return -ENAMETOOLONG;
        memcpy(buf, devpath, n);
        buf[n] = '\0';
        return 0;
}
