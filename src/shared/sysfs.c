/* SPDX-License-Identifier: MIT */
/*
 * Confined sysfs reads (see sysfs.h).  Invariant: no path handed to the
 * kernel here contains "..", starts with '/', or is resolved through a
 * symbolic link; openat2(RESOLVE_BENEATH) makes the kernel enforce it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/number.h"
#include "shared/sysfs.h"

#define SYSFS_PATH_MAX 4096

static bool no_openat2;

void sysfs_force_fallback(bool on)
{
        no_openat2 = on;
}

bool sysfs_path_valid(const char *path)
{
        const char *p = path;

        if (!path || !*path || *path == '/')
                return false;
        while (*p) {
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += n;
                if (*p == '/' && *++p == '\0')
                        return false; /* trailing slash */
        }
        return true;
}

const char *sysfs_basename(const char *path)
{
        const char *s = strrchr(path, '/');

        return s ? s + 1 : path;
}

/* Component by component, never following a link (kernels without openat2). */
static int open_walk(int dirfd, const char *path, int flags)
{
        char comp[256];
        int fd = -1;

        for (const char *p = path;;) {
                size_t n = strcspn(p, "/");
                bool last = p[n] == '\0';
                int nfd;

                if (n >= sizeof(comp)) {
                        safe_close(fd);
                        return -ENAMETOOLONG;
                }
                memcpy(comp, p, n);
                comp[n] = '\0';
                nfd = openat(fd >= 0 ? fd : dirfd, comp,
                             last ? flags | O_NOFOLLOW : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0) {
                        int r = negative_errno();
                        safe_close(fd);
                        return r == -ENOTDIR ? -ELOOP : r;
                }
                safe_close(fd);
                fd = nfd;
                if (last)
                        return fd;
                p += n + 1;
        }
}

static int open_beneath(int dirfd, const char *path, int flags)
{
        int fd;

        if (!sysfs_path_valid(path))
                return -EINVAL;
        if (!no_openat2) {
                struct open_how how = {
                        .flags = (unsigned)(flags | O_CLOEXEC),
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
                };
                fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != ENOSYS)
                        return negative_errno();
                no_openat2 = true;
        }
        return open_walk(dirfd, path, flags | O_CLOEXEC);
}

int sysfs_open_root(const char *root)
{
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

int sysfs_open_dir(int rootfd, const char *path)
{
        while (*path == '/')
                path++;
        if (!*path) {
                int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
                return fd < 0 ? negative_errno() : fd;
        }
        return open_beneath(rootfd, path, O_PATH | O_DIRECTORY);
}

int sysfs_read_at(int dirfd, const char *attr, char *buf, size_t size)
{
        _cleanup_close_ int fd = -1;
        ssize_t n;

        if (size < 2)
                return -ENOBUFS;
        fd = open_beneath(dirfd, attr, O_RDONLY | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return fd;
        n = read(fd, buf, size);
        if (n < 0)
                return negative_errno();
        if ((size_t)n >= size)
                return -ENOBUFS;
        while (n > 0 && buf[n - 1] == '\n')
                n--;
        buf[n] = '\0';
        return (int)n;
}

int sysfs_read(int rootfd, const char *path, const char *attr, char *buf, size_t size)
{
        _cleanup_close_ int fd = sysfs_open_dir(rootfd, path);

        if (fd < 0)
                return fd;
        return sysfs_read_at(fd, attr, buf, size);
}

/* Append component @c (length @n) to the normalised path in @out (length *@len). */
static int push(char *out, size_t *len, size_t size, const char *c, size_t n)
{
        if (n == 0 || (n == 1 && c[0] == '.'))
                return 0;
        if (n == 2 && c[0] == '.' && c[1] == '.') {
                char *s;
                if (*len == 0)
                        return -EXDEV;
                out[*len] = '\0';
                s = strrchr(out, '/');
                *len = s ? (size_t)(s - out) : 0;
                out[*len] = '\0';
                return 0;
        }
        if (*len + (*len ? 1 : 0) + n + 1 > size)
                return -ENAMETOOLONG;
        if (*len)
                out[(*len)++] = '/';
        memcpy(out + *len, c, n);
        *len += n;
        out[*len] = '\0';
        return 0;
}

static int push_all(char *out, size_t *len, size_t size, const char *path)
{
        for (const char *p = path; *p;) {
                size_t n = strcspn(p, "/");
                int r = push(out, len, size, p, n);
                if (r < 0)
                        return r;
                p += n;
                if (*p == '/')
                        p++;
        }
        return 0;
}

int sysfs_link_at(int dirfd, const char *dir_path, const char *name, char *buf, size_t size)
{
        char target[SYSFS_PATH_MAX];
        size_t len = 0;
        ssize_t n;
        int r;

        if (!sysfs_path_valid(name) || size == 0)
                return -EINVAL;
        n = readlinkat(dirfd, name, target, sizeof(target));
        if (n < 0)
                return negative_errno();
        if ((size_t)n >= sizeof(target))
                return -ENAMETOOLONG;
        target[n] = '\0';
        if (target[0] == '/')
                return -EXDEV;
        buf[0] = '\0';
        while (*dir_path == '/')
                dir_path++;
        r = push_all(buf, &len, size, dir_path);
        if (r < 0)
                return r;
        r = push_all(buf, &len, size, target);
        if (r < 0)
                return r;
        return len == 0 ? -EXDEV : (int)len;
}

int sysfs_link_name(int dirfd, const char *dir_path, const char *name, char *buf, size_t size)
{
        char target[SYSFS_PATH_MAX];
        const char *base;
        size_t len;
        int r = sysfs_link_at(dirfd, dir_path, name, target, sizeof(target));

        if (r < 0)
                return r;
        base = sysfs_basename(target);
        len = strlen(base);
        if (len >= size)
                return -ENOBUFS;
        memcpy(buf, base, len + 1);
        return (int)len;
}

int sysfs_read_seqnum(int rootfd, uint64_t *ret)
{
        char buf[32];
        int r = sysfs_read(rootfd, "kernel", "uevent_seqnum", buf, sizeof(buf));

        if (r < 0)
                return r;
        return decimal_u64(buf, ret) < 0 ? -EIO : 0;
}
