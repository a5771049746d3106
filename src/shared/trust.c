/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/trust.h"

const char *trust_reason(const struct stat *st)
{
        /* Root's files are as safe as our own for a daemon not running as root. */
        if (st->st_uid != geteuid() && st->st_uid != 0)
                return geteuid() == 0 ? "not owned by root" : "not owned by root or the daemon's user";
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return "writable by group or others";
        return NULL;
}

/* trust_reason() for the target of a symbolic link (@link), or for a file named by its path. */
static const char *target_reason(const struct stat *st, bool link)
{
        const char *why = trust_reason(st);

        if (!why || !link)
                return why;
        if (st->st_mode & (S_IWGRP | S_IWOTH) && (st->st_uid == geteuid() || st->st_uid == 0))
                return "link target writable by group or others";
        return geteuid() == 0 ? "link target not owned by root" : "link target not owned by root or the daemon's user";
}

static bool kind_ok(const struct stat *st, bool want_dir)
{
        return want_dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode);
}

/*
 * Walk the resolved (link-free) absolute @path from "/", checking every
 * component; @link: @path is where a symbolic link led (the wording says so).
 */
static int check_resolved(const char *path, bool want_dir, bool link, struct stat *ret_st, const char **ret_why)
{
        _cleanup_close_ int cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        char comp[NAME_MAX + 1];
        const char *p = path;
        struct stat st;

        if (cur < 0)
                return negative_errno();
        for (;;) {
                const char *why;
                size_t n;
                int fd;

                if (fstat(cur, &st) < 0)
                        return negative_errno();
                while (*p == '/')
                        p++;
                if (!*p)
                        break;
                /* @cur is a directory on the way: trusted, or root's and sticky. */
                why = trust_reason(&st);
                if (why && !(st.st_uid == 0 && (st.st_mode & S_ISVTX))) {
                        *ret_why = link ? "link target in a directory others can write"
                                        : "in a directory others can write";
                        *ret_st = st;
                        return -EPERM;
                }
                n = strcspn(p, "/");
                if (n > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(comp, p, n);
                comp[n] = '\0';
                p += n;
                fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                close(cur);
                cur = fd;
        }
        *ret_st = st;
        if (!kind_ok(&st, want_dir)) {
                *ret_why = want_dir ? (link ? "link target is not a directory" : "not a directory")
                                    : (link ? "link target is not a regular file" : "not a regular file");
                return -EMEDIUMTYPE;
        }
        if ((*ret_why = target_reason(&st, link)))
                return -EPERM;
        return 0;
}

int trust_check_at(int dirfd, const char *name, bool want_dir, struct stat *ret_st, const char **ret_why)
{
        char self[64], *dirpath, *full, *real;
        struct stat st;
        int r;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        if (!S_ISLNK(st.st_mode)) {
                *ret_st = st;
                if (!kind_ok(&st, want_dir)) {
                        *ret_why = want_dir ? "not a directory" : "not a regular file";
                        return -EMEDIUMTYPE;
                }
                if ((*ret_why = trust_reason(&st)))
                        return -EPERM;
                return 0;
        }
        /* A symbolic link: resolve it, then check the whole way to the target. */
        snprintf(self, sizeof(self), "/proc/self/fd/%d", dirfd);
        dirpath = realpath(self, NULL);
        if (!dirpath)
                return negative_errno();
        r = asprintf(&full, "%s/%s", dirpath, name);
        free(dirpath);
        if (r < 0)
                return -ENOMEM;
        real = realpath(full, NULL);
        r = real ? 0 : negative_errno();
        free(full);
        if (r < 0)
                return r;
        r = check_resolved(real, want_dir, true, ret_st, ret_why);
        free(real);
        return r;
}

int trust_check_path(const char *path, bool want_dir, struct stat *ret_st, const char **ret_why)
{
        _cleanup_free_ char *real = NULL;
        struct stat st;

        if (path[0] != '/')
                return -EINVAL;
        if (lstat(path, &st) < 0)
                return negative_errno();
        real = realpath(path, NULL);
        if (!real)
                return negative_errno();
        return check_resolved(real, want_dir, S_ISLNK(st.st_mode), ret_st, ret_why);
}
