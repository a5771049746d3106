/* SPDX-License-Identifier: MIT */
/*
 * firmware: FIRMWARE and TIMEOUT pass through (a missing TIMEOUT is read
 * from class/firmware/timeout).  With handler_config.firmware_loader the
 * handler also answers the kernel's fallback request itself, as 2.6
 * firmware.agent did: for an "add" with FIRMWARE=NAME it looks for NAME in
 * each directory of handler_config.firmware_path in turn, writes "1" to
 * the device's "loading", the file to "data" and "0" to "loading" (or "-1"
 * if the copy failed), and then drops the event: no agent runs for a
 * request already answered.  When no file matches, the event goes to the
 * agents as usual.  NAME must be a relative path without "." or "..".
 * Files above HP_FIRMWARE_MAX_BYTES are refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "sysfs.h"

static const char *const firmware_subsystems[] = { "firmware", NULL };

/* Open @name in the first directory of @search that has it; -ENOENT if none. */
static int firmware_open(const char *search, const char *name, size_t *ret_size)
{
        char path[4096];
        struct stat st;

        if (!sysfs_path_valid(name))
                return -EINVAL;
        for (const char *p = search; *p;) {
                size_t n = strcspn(p, ":");
                int fd;

                if (n > 0 && n + 1 + strlen(name) < sizeof(path)) {
                        snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, name);
                        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                        if (fd >= 0) {
                                if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                                    st.st_size <= HP_FIRMWARE_MAX_BYTES) {
                                        *ret_size = (size_t)st.st_size;
                                        return fd;
                                }
                                close(fd);
                        }
                }
                p += n;
                if (*p == ':')
                        p++;
        }
        return -ENOENT;
}

static int write_str(int dirfd, const char *attr, const char *s)
{
        _cleanup_close_ int fd = openat(dirfd, attr, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        size_t n = strlen(s);

        if (fd < 0)
                return negative_errno();
        return write(fd, s, n) == (ssize_t)n ? 0 : -EIO;
}

static int copy_data(int dirfd, int src)
{
        _cleanup_close_ int dst = openat(dirfd, "data", O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        char buf[65536];
        ssize_t n;

        if (dst < 0)
                return negative_errno();
        while ((n = read(src, buf, sizeof(buf))) > 0)
                for (ssize_t o = 0; o < n;) {
                        ssize_t w = write(dst, buf + o, (size_t)(n - o));
                        if (w <= 0)
                                return w < 0 ? negative_errno() : -EIO;
                        o += w;
                }
        return n < 0 ? negative_errno() : 0;
}

/* Return 1 if the request was answered, 0 if no file matched, negative errno. */
static int firmware_load(const struct hotplugd_host *host, const struct hotplugd_event *e, const char *name)
{
        _cleanup_close_ int dirfd = -1, src = -1;
        size_t size = 0;
        int r;

        src = firmware_open(e->cfg->firmware_path, name, &size);
        if (src < 0)
                return src == -ENOENT || src == -EINVAL ? 0 : src;
        dirfd = sysfs_open_dir(e->sysfs_fd, e->ev->devpath);
        if (dirfd < 0)
                return dirfd;
        r = write_str(dirfd, "loading", "1");
        if (r >= 0)
                r = copy_data(dirfd, src);
        if (r < 0) {
                (void)write_str(dirfd, "loading", "-1");
                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s: loading failed: %s", name, strerror(-r));
                return 1;
        }
        r = write_str(dirfd, "loading", "0");
        host->log(host, r < 0 ? HOTPLUGD_LOG_ERR : HOTPLUGD_LOG_INFO, "firmware %s: %zu bytes %s", name, size,
                  r < 0 ? "copied, but completing failed" : "loaded");
        return 1;
}

static int firmware_filter(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e)
{
        const char *name = builtin_get(e, "FIRMWARE");

        if (!e->cfg->firmware_loader || !name || strcmp(e->ev->action, "add") != 0 || e->sysfs_fd < 0)
                return HOTPLUGD_KEEP;
        return firmware_load(host, e, name) > 0 ? HOTPLUGD_DROP : HOTPLUGD_KEEP;
}

static int firmware_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                            struct hotplugd_env *env)
{
        unsigned long timeout;

        if (builtin_get(e, "TIMEOUT") || builtin_read_ulong(e, "/class/firmware", "timeout", 10, &timeout) < 0)
                return 0;
        return handler_env_addf(env, "TIMEOUT", "%lu", timeout);
}

const struct hotplugd_handler builtin_firmware = {
        BUILTIN_HANDLER("firmware", firmware_subsystems),
        .filter = firmware_filter,
        .add_env = firmware_add_env,
};
