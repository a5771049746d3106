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
        if (st->st_uid != geteuid())
                return geteuid() == 0 ? "not owned by root" : "not owned by the daemon's user";
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return "writable by group or others";
        return NULL;
}

/* trust_reason() for the target of a symbolic link. */
static const char *link_reason(const struct stat *st)
{
        const char *why = trust_reason(st);

        if (!why)
                return NULL;
        if (st->st_mode & (S_IWGRP | S_IWOTH) && st->st_uid == geteuid())
                return "link target writable by group or others";
        return geteuid() == 0 ? "link target not owned by root" : "link target not owned by the daemon's user";
}

static bool kind_ok(const struct stat *st, bool want_dir)
{
        return want_dir ? S_ISDIR(st->st_mode) : S_ISREG(st->st_mode);
}

/* Walk the resolved (link-free) absolute @path from "/", checking every component. */
static int check_resolved(const char *path, bool want_dir, struct stat *ret_st, const char **ret_why)
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
                        *ret_why = "link target in a directory others can write";
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
                *ret_why = want_dir ? "link target is not a directory" : "link target is not a regular file";
                return -EMEDIUMTYPE;
        }
        if ((*ret_why = link_reason(&st)))
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
        r = check_resolved(real, want_dir, ret_st, ret_why);
        free(real);
        return r;
}
