/* SPDX-License-Identifier: MIT */
/*
 * The trust rule (trust.h), walked by hand: the kernel's own lookup would
 * follow links without showing where, so each component is looked up with
 * O_PATH | O_NOFOLLOW in the directory checked just before, and a link is
 * read and its target walked the same way.  No realpath(): what is checked
 * is the path as given, the one the kernel resolves when it is executed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "shared/macro.h"
#include "shared/trust.h"

const char *trust_reason(const struct stat *st)
{
        /* Root's files are as safe as our own for a daemon not running as root. */
        if (st->st_uid != 0 && st->st_uid != geteuid())
                return geteuid() == 0 ? "not owned by root" : "not owned by root or the daemon's user";
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return "writable by group or others";
        return NULL;
}

/* trust_reason() for what a symbolic link led to (@link), or for a file named by its path. */
static const char *target_reason(const struct stat *st, bool link)
{
        const char *why = trust_reason(st);

        if (!why || !link)
                return why;
        if (st->st_mode & (S_IWGRP | S_IWOTH) && (st->st_uid == 0 || st->st_uid == geteuid()))
                return "link target writable by group or others";
        return geteuid() == 0 ? "link target not owned by root" : "link target not owned by root or the daemon's user";
}

/* One walk: where it stands, and what is left of the path. */
struct walk {
        int cur;                /* O_PATH of the directory the next name is looked up in */
        bool st_is_cur;         /* st is cur's (just stepped into it) */
        char rest[PATH_MAX];    /* what is left to walk, NUL-terminated */
        unsigned links;         /* links followed so far */
        struct stat st;         /* of the last thing looked at */
        const char *why;
};

/* A directory a name is looked up in: trusted, or root's and sticky. */
static int walk_dir_ok(struct walk *w)
{
        if (!w->st_is_cur && fstat(w->cur, &w->st) < 0)
                return negative_errno();
        w->st_is_cur = false;
        if (!S_ISDIR(w->st.st_mode))
                return -ENOTDIR;
        if (trust_reason(&w->st) && !(w->st.st_uid == 0 && (w->st.st_mode & S_ISVTX))) {
                w->why = w->links ? "link target in a directory others can write" : "in a directory others can write";
                return -EPERM;
        }
        return 0;
}

/*
 * The link @fd (just looked up in w->cur): its target, then what was left
 * after it, becomes the rest of the walk, from "/" or from w->cur.
 */
static int walk_link(struct walk *w, int fd, const char *after)
{
        char target[PATH_MAX];
        size_t tlen, alen = strlen(after);
        ssize_t n;

        if (w->st.st_uid != 0 && w->st.st_uid != geteuid()) {
                w->why = geteuid() == 0 ? "symbolic link not owned by root"
                                        : "symbolic link not owned by root or the daemon's user";
                return -EPERM;
        }
        if (++w->links > HP_TRUST_MAX_LINKS)
                return -ELOOP;
        n = readlinkat(fd, "", target, sizeof(target));
        if (n < 0)
                return negative_errno();
        tlen = (size_t)n;
        if (tlen == 0)
                return -ENOENT;
        if (tlen + 1 + alen >= sizeof(target))
                return -ENAMETOOLONG;
        /* @after points into w->rest: move it into place before the target goes in front. */
        memmove(w->rest + tlen + 1, after, alen + 1);
        memcpy(w->rest, target, tlen);
        w->rest[tlen] = '/';
        if (target[0] == '/') {
                int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

                if (root < 0)
                        return negative_errno();
                close(w->cur);
                w->cur = root;
        }
        return 0;
}

/*
 * Walk w->rest from w->cur until one name is left that is not a link.
 * Return: 0 with w->cur the directory it is in and @name set to it (empty
 * when the path ends in a directory, w->cur itself), or negative errno.
 */
static int walk_to_last(struct walk *w, char name[static NAME_MAX + 1])
{
        for (;;) {
                const char *p = w->rest;
                size_t len;
                int fd, r;

                while (*p == '/')
                        p++;
                len = strcspn(p, "/");
                if (len > NAME_MAX)
                        return -ENAMETOOLONG;
                memcpy(name, p, len);
                name[len] = '\0';
                p += len;
                while (*p == '/')
                        p++;
                if (len == 0)
                        return 0; /* the path ends in w->cur */
                r = walk_dir_ok(w);
                if (r < 0)
                        return r;
                fd = openat(w->cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        return negative_errno();
                if (fstat(fd, &w->st) < 0) {
                        r = negative_errno();
                        close(fd);
                        return r;
                }
                if (S_ISLNK(w->st.st_mode)) {
                        r = walk_link(w, fd, p);
                        close(fd);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!*p) {
                        close(fd);
                        return 0; /* the last name, looked up once more by the caller */
                }
                if (!S_ISDIR(w->st.st_mode)) {
                        close(fd);
                        return -ENOTDIR;
                }
                close(w->cur);
                w->cur = fd;
                w->st_is_cur = true;
                memmove(w->rest, p, strlen(p) + 1);
        }
}

/* Open what the walk reached: @name in w->cur, or w->cur itself. */
static int walk_open_last(struct walk *w, const char *name, unsigned flags, int *ret_fd)
{
        int how = flags & TRUST_READ ? O_RDONLY | O_NONBLOCK | O_NOCTTY : O_PATH;
        struct stat st;
        int fd, r;

        if (flags & TRUST_DIR)
                how |= O_DIRECTORY;
        /* No link can be here: the walk found none at this name, and only a trusted user can put one. */
        fd = openat(w->cur, *name ? name : ".", how | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                close(fd);
                return r;
        }
        if (*name && (st.st_dev != w->st.st_dev || st.st_ino != w->st.st_ino)) {
                close(fd);
                return -ESTALE;
        }
        *ret_fd = fd;
        return 0;
}

/* Is what the walk reached (w->st) of the kind wanted, and trusted? */
static int walk_verdict(struct walk *w, unsigned flags)
{
        bool want_dir = flags & TRUST_DIR, link = w->links > 0;

        if (want_dir ? !S_ISDIR(w->st.st_mode) : !S_ISREG(w->st.st_mode)) {
                w->why = want_dir ? (link ? "link target is not a directory" : "not a directory")
                                  : (link ? "link target is not a regular file" : "not a regular file");
                return -EMEDIUMTYPE;
        }
        w->why = target_reason(&w->st, link);
        return w->why ? -EPERM : 0;
}

/*
 * @name (no '/', not "." nor "..") in the directory @dirfd that the caller
 * found trusted: one lookup, no walk, unless it is a link.  Return: 1 for
 * a link (to be walked), else as trust_open_at() (w->st, w->why set).
 */
static int open_in_trusted(struct walk *w, int dirfd, const char *name, unsigned flags, int *ret_fd)
{
        int fd, r;

        /* A directory to read can be opened as such at once: opening one does nothing to it. */
        if ((flags & (TRUST_DIR | TRUST_READ)) == (TRUST_DIR | TRUST_READ) && ret_fd) {
                fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                /* A link fails with ENOTDIR (O_DIRECTORY is looked at first) or ELOOP: walk it. */
                if (fd < 0)
                        return errno == ENOTDIR || errno == ELOOP ? 1 : negative_errno();
                r = fstat(fd, &w->st) < 0 ? negative_errno() : walk_verdict(w, flags);
                if (r < 0)
                        close(fd);
                else
                        *ret_fd = fd;
                return r;
        }
        fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = fstat(fd, &w->st) < 0 ? negative_errno() : S_ISLNK(w->st.st_mode) ? 1 : walk_verdict(w, flags);
        if (r == 0 && ret_fd && (flags & TRUST_READ)) {
                int cur = w->cur;

                w->cur = dirfd;
                r = walk_open_last(w, name, flags, ret_fd);
                w->cur = cur;
        } else if (r == 0 && ret_fd) {
                *ret_fd = fd;
                return 0;
        }
        close(fd);
        return r;
}

int trust_open_at(int dirfd, const char *path, unsigned flags, int *ret_fd, struct stat *ret_st,
                  const char **ret_why)
{
        struct walk w = { .cur = -1 };
        char name[NAME_MAX + 1];
        int fd = -1, r;

        if (strlen(path) >= sizeof(w.rest))
                return -ENAMETOOLONG;
        if (!*path)
                return -ENOENT;
        if (dirfd != AT_FDCWD && !strchr(path, '/') && strcmp(path, ".") != 0 && strcmp(path, "..") != 0) {
                r = open_in_trusted(&w, dirfd, path, flags, ret_fd);
                if (r <= 0) {
                        if (w.why && ret_why)
                                *ret_why = w.why;
                        if (ret_st)
                                *ret_st = w.st;
                        return r;
                }
        }
        strcpy(w.rest, path);
        w.cur = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                               : openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        r = w.cur < 0 ? negative_errno() : walk_to_last(&w, name);
        if (r == 0 && !*name)
                r = fstat(w.cur, &w.st) < 0 ? negative_errno() : 0;
        if (r == 0)
                r = walk_verdict(&w, flags);
        if (r == 0 && ret_fd)
                r = walk_open_last(&w, name, flags, &fd);
        if (w.why && ret_why)
                *ret_why = w.why;
        if (ret_st)
                *ret_st = w.st;
        if (r == 0 && ret_fd)
                *ret_fd = fd;
        safe_close(w.cur);
        return r;
}

int trust_check_at(int dirfd, const char *name, bool want_dir, struct stat *ret_st, const char **ret_why)
{
        struct walk w = { .cur = dirfd };
        int r;

        /* A name that is no link, in a directory the caller checked: one look (the walk costs ~6 calls). */
        if (strchr(name, '/') || strcmp(name, "..") == 0 || fstatat(dirfd, name, &w.st, AT_SYMLINK_NOFOLLOW) < 0 ||
            S_ISLNK(w.st.st_mode))
                return trust_open_at(dirfd, name, want_dir ? TRUST_DIR : 0, NULL, ret_st, ret_why);
        r = walk_verdict(&w, want_dir ? TRUST_DIR : 0);
        *ret_st = w.st;
        if (w.why)
                *ret_why = w.why;
        return r;
}

int trust_check_path(const char *path, bool want_dir, struct stat *ret_st, const char **ret_why)
{
        if (path[0] != '/')
                return -EINVAL;
        return trust_open_at(AT_FDCWD, path, want_dir ? TRUST_DIR : 0, NULL, ret_st, ret_why);
}
