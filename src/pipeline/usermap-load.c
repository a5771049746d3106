/* SPDX-License-Identifier: MIT */
/*
 * usermap_load(): the files of a hotplug directory, each opened through
 * the trust rule and read in chunks through the line feed (usermap.c).
 *
 * Invariants: no file is read but through a descriptor trust_open_at()
 * returned for it; a directory listing keeps at most HP_USERMAP_FILES_MAX
 * names (the lexically first); a map that cannot be read acts not at all,
 * a blacklist that cannot be read fails the load.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/usermap-internal.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "shared/trust.h"


struct loader {
        struct usermap *m;
        usermap_error_fn on_error;
        void *userdata;
};

/* Tell the caller "PATH: ...", @path escaped (the arguments must be printable already). */
_printf_(3, 4) static void say(const struct loader *l, const char *path, const char *fmt, ...)
{
        char esc[PATH_MAX], msg[PATH_MAX + 256];
        va_list ap;
        int k;

        if (!l->on_error)
                return;
        k = snprintf(msg, sizeof(msg), "%s: ", escape_cstr(path, esc, sizeof(esc)));
        va_start(ap, fmt);
        vsnprintf(msg + k, sizeof(msg) - (size_t)k, fmt, ap);
        va_end(ap);
        l->on_error(msg, l->userdata);
}

/*
 * Open @name in @dirfd (AT_FDCWD: @name is the path as given) by the trust
 * rule; @path names it in messages.  Return: 1 opened (*@ret_fd), 0 missing,
 * else a negative errno after saying why (-EPERM: refused; -EMEDIUMTYPE:
 * not a directory or not a regular file).
 */
static int open_checked(const struct loader *l, int dirfd, const char *name, const char *path, bool dir,
                        int *ret_fd)
{
        const char *why = NULL;
        struct stat st;
        int r = trust_open_at(dirfd, name, TRUST_READ | (dir ? TRUST_DIR : 0), ret_fd, &st, &why);

        if (r == -ENOENT)
                return 0;
        if (r == -EPERM)
                say(l, path, "refused: %s", why ? why : "not trusted");
        else if (r < 0)
                say(l, path, "%s", why ? why : strerror(-r));
        return r < 0 ? r : 1;
}

/* Read the open @fd to its end (or a limit) through @f.  Return: 0, or a negative errno of read(). */
static int read_through(struct line_feed *f, int fd)
{
        char chunk[4096];

        while (!f->stop) {
                ssize_t k = read(fd, chunk, sizeof(chunk));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                feed_bytes(f, chunk, (size_t)k);
        }
        return 0;
}

/*
 * The file @name of @dirfd, stored as @file, said as @path: a map of @kind,
 * or a blacklist (@kind -1).  Return: 1 read, 0 missing or (a map) left
 * out, -ENOMEM, or (a blacklist) the negative errno that left it unread.
 */
static int load_file(const struct loader *l, int dirfd, const char *name, const char *file, const char *path,
                     int kind)
{
        _cleanup_close_ int fd = -1;
        struct line_feed f;
        int r;

        r = open_checked(l, dirfd, name, path, false, &fd);
        if (r <= 0)
                return kind < 0 ? r : 0;
        r = feed_begin(&f, l->m, file, path, kind, l->on_error, l->userdata);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        r = read_through(&f, fd);
        if (r < 0) {
                say(l, path, "%s", strerror(-r));
                if (kind < 0)
                        return r;
        }
        r = feed_end(&f);
        return r < 0 ? r : 1;
}

/* Insert @name into the sorted @names (*@n of at most @cap), dropping the last one when full.
 * Return: 1 inserted, 0 not (it sorts after a full list), -ENOMEM. */
static int insert_sorted(char **names, size_t *n, size_t cap, const char *name)
{
        size_t pos = *n;
        char *s;

        while (pos > 0 && strcmp(names[pos - 1], name) > 0)
                pos--;
        if (pos >= cap)
                return 0;
        s = strdup(name);
        if (!s)
                return -ENOMEM;
        if (*n == cap)
                free(names[--*n]);
        memmove(names + pos + 1, names + pos, (*n - pos) * sizeof(*names));
        names[pos] = s;
        (*n)++;
        return 1;
}

static bool printable(const char *s)
{
        for (; *s; s++)
                if (*s < 0x20 || *s > 0x7e)
                        return false;
        return true;
}

/*
 * The names in the directory @d (said as @path) that do not start with
 * '.' and end in @suffix (NULL: any), in strcmp order, the first
 * HP_USERMAP_FILES_MAX of them.  Return: 0 or -ENOMEM (*@ret freed).
 */
static int list_dir(const struct loader *l, DIR *d, const char *path, const char *suffix, char **ret, size_t *ret_n)
{
        size_t slen = suffix ? strlen(suffix) : 0, n = 0, seen = 0;
        struct dirent *de;

        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                int r;

                if (de->d_name[0] == '.' || len < slen || (suffix && strcmp(de->d_name + len - slen, suffix) != 0))
                        continue;
                if (!printable(de->d_name)) {
                        char esc[NAME_MAX * 4 + 1];

                        say(l, path, "a file name with control characters, \"%s\": ignored",
                            escape_cstr(de->d_name, esc, sizeof(esc)));
                        continue;
                }
                seen++;
                r = insert_sorted(ret, &n, HP_USERMAP_FILES_MAX, de->d_name);
                if (r < 0) {
                        for (size_t i = 0; i < n; i++)
                                free(ret[i]);
                        return r;
                }
        }
        if (seen > n)
                say(l, path, "more than %d files: the last %zu are ignored", HP_USERMAP_FILES_MAX, seen - n);
        *ret_n = n;
        return 0;
}

/*
 * Every listed file of the subdirectory @sub of @topfd (@dir/@sub in
 * messages): maps of @kind, or blacklists (-1).  Return: 0, or a negative
 * errno that fails the load (-EPERM: the directory was refused).
 */
static int load_dir(const struct loader *l, int topfd, const char *dir, const char *sub, const char *suffix, int kind)
{
        _cleanup_free_ char **names = NULL;
        char path[PATH_MAX], file[NAME_MAX + 64], fpath[PATH_MAX + NAME_MAX + 64];
        size_t n = 0;
        int r, fd = -1;
        DIR *d;

        snprintf(path, sizeof(path), "%s/%s", dir, sub);
        r = open_checked(l, topfd, sub, path, true, &fd);
        if (r <= 0)
                return r == -EPERM ? r : r == -ENOMEM ? r : 0;
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                close(fd);
                return r;
        }
        names = calloc(HP_USERMAP_FILES_MAX, sizeof(*names));
        r = names ? list_dir(l, d, path, suffix, names, &n) : -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                snprintf(file, sizeof(file), "%s/%s", sub, names[i]);
                snprintf(fpath, sizeof(fpath), "%s/%s", dir, file);
                if (r >= 0) {
                        r = load_file(l, dirfd(d), names[i], file, fpath, kind);
                        r = kind < 0 && r == 0 ? 0 : r; /* a blacklist.d entry gone since the listing */
                }
                free(names[i]);
        }
        closedir(d);
        return r < 0 ? r : 0;
}

static int load_all(const struct loader *l, const char *dir)
{
        _cleanup_close_ int fd = -1;
        char path[PATH_MAX];
        int r;

        r = open_checked(l, AT_FDCWD, dir, dir, true, &fd);
        if (r == -EPERM || r == -ENOMEM)
                return r;
        if (r <= 0)
                return 0; /* missing, or not a directory (said): nothing to read */
        snprintf(path, sizeof(path), "%s/usb.handmap", dir);
        r = load_file(l, fd, "usb.handmap", "usb.handmap", path, USERMAP_HANDMAP);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/usb.usermap", dir);
        r = load_file(l, fd, "usb.usermap", "usb.usermap", path, USERMAP_USERMAP);
        if (r < 0)
                return r;
        r = load_dir(l, fd, dir, "usb", ".usermap", USERMAP_USERMAP);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/blacklist", dir);
        r = load_file(l, fd, "blacklist", "blacklist", path, -1);
        if (r < 0)
                return r;
        return load_dir(l, fd, dir, "blacklist.d", NULL, -1);
}

int usermap_load(const char *dir, struct usermap **ret, usermap_error_fn on_error, void *userdata)
{
        _cleanup_(usermap_freep) struct usermap *m = NULL;
        struct loader l = { .on_error = on_error, .userdata = userdata };
        int r;

        if (strlen(dir) > PATH_MAX - 64)
                return -ENAMETOOLONG;
        r = usermap_new(&m);
        if (r < 0)
                return r;
        l.m = m;
        r = load_all(&l, dir);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}
