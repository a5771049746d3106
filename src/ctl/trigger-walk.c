/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl trigger's device walk (see trigger-walk.h).
 *
 * Depth first, children sorted by name: with '/' below every other byte in
 * trigger_path_cmp(), that is exactly path order.  Only directories are
 * entered (d_type, or fstatat() where a file system does not fill it), and
 * each is opened O_NOFOLLOW below its parent's fd, so a link is never taken
 * and no path is resolved twice.  A directory's entries are read whole,
 * then its device (if it is one) is reported, then its children visited;
 * at most HP_TRIGGER_WALK_DEPTH_MAX directories are open at once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl/trigger-walk.h"
#include "shared/bounds.h"
#include "shared/macro.h"

/* The kinds of devices held back to the end, in the order they are given then. */
enum late { LATE_NONE = -1, LATE_CONTROL, LATE_BLOCK, LATE_KINDS };

struct held {
        char **v;                   /* "syspath\0subsystem" each, owned */
        size_t n, cap;
};

struct walk {
        trigger_walk_fn fn;
        void *userdata;
        char path[PATH_MAX];
        struct held late[LATE_KINDS];
};

/* One directory's subdirectory names, owned. */
struct names {
        char **v;
        size_t n, cap;
};

static void names_free(struct names *ns)
{
        for (size_t i = 0; i < ns->n; i++)
                free(ns->v[i]);
        free(ns->v);
}

static int push(char ***v, size_t *n, size_t *cap, char *s)
{
        if (!s)
                return -ENOMEM;
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                char **p = realloc(*v, c * sizeof(*p));

                if (!p) {
                        free(s);
                        return -ENOMEM;
                }
                *v = p;
                *cap = c;
        }
        (*v)[(*n)++] = s;
        return 0;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_type(DIR *d, const struct dirent *de, unsigned char type, mode_t mode)
{
        struct stat st;

        if (de->d_type != DT_UNKNOWN)
                return de->d_type == type;
        return fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) == mode;
}

/* Read @d whole: its subdirectories into @ns; whether it holds "uevent" and "subsystem". */
static int read_entries(DIR *d, struct names *ns, bool *device)
{
        bool uevent = false, subsystem = false;
        struct dirent *de;
        int r;

        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
                        continue;
                if (strcmp(de->d_name, "uevent") == 0)
                        uevent = uevent || is_type(d, de, DT_REG, S_IFREG);
                else if (strcmp(de->d_name, "subsystem") == 0)
                        subsystem = subsystem || is_type(d, de, DT_LNK, S_IFLNK);
                else if (is_type(d, de, DT_DIR, S_IFDIR) && (r = push(&ns->v, &ns->n, &ns->cap, strdup(de->d_name))) < 0)
                        return r;
        }
        *device = uevent && subsystem;
        if (ns->n > 1)
                qsort(ns->v, ns->n, sizeof(*ns->v), name_cmp);
        return 0;
}

/* Held back to the end?  A device below a held one is held with it. */
static enum late late_kind(const char *path, const char *name)
{
        if (strncmp(name, "controlC", 8) == 0 && strstr(path, "/sound/card"))
                return LATE_CONTROL;
        if (strstr(path, "/block/md") || strstr(path, "/block/dm-"))
                return LATE_BLOCK;
        return LATE_NONE;
}

/* Report the device at w->path (directory @fd), or hold it back. */
static int device(struct walk *w, int fd, enum late *late)
{
        const char *name = strrchr(w->path, '/') + 1;
        char link[PATH_MAX], *held;
        const char *subsystem;
        size_t plen, slen;
        ssize_t n = readlinkat(fd, "subsystem", link, sizeof(link) - 1);

        if (n <= 0)
                return 0; /* gone meanwhile */
        link[n] = '\0';
        subsystem = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
        if (*late == LATE_NONE)
                *late = late_kind(w->path, name);
        if (*late == LATE_NONE)
                return w->fn(w->userdata, w->path, subsystem);
        plen = strlen(w->path);
        slen = strlen(subsystem);
        held = malloc(plen + slen + 2);
        if (held) {
                memcpy(held, w->path, plen + 1);
                memcpy(held + plen + 1, subsystem, slen + 1);
        }
        return push(&w->late[*late].v, &w->late[*late].n, &w->late[*late].cap, held);
}

/* Visit the directory w->path (length @len), open as @fd (consumed). */
static int visit(struct walk *w, int fd, size_t len, unsigned depth, enum late late)
{
        struct names ns = { 0 };
        bool is_device = false;
        DIR *d = fdopendir(fd);
        int r;

        if (!d) {
                close(fd);
                return errno == ENOMEM ? -ENOMEM : 0;
        }
        r = read_entries(d, &ns, &is_device);
        if (r >= 0 && is_device)
                r = device(w, dirfd(d), &late);
        for (size_t i = 0; r >= 0 && i < ns.n && depth < HP_TRIGGER_WALK_DEPTH_MAX; i++) {
                size_t nlen = strlen(ns.v[i]);
                int child;

                if (len + 1 + nlen >= sizeof(w->path))
                        continue;
                child = openat(dirfd(d), ns.v[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child < 0)
                        continue; /* removed meanwhile, or not ours to read */
                w->path[len] = '/';
                memcpy(w->path + len + 1, ns.v[i], nlen + 1);
                r = visit(w, child, len + 1 + nlen, depth + 1, late);
                w->path[len] = '\0';
        }
        names_free(&ns);
        closedir(d);
        return r;
}

int trigger_walk(const char *root, trigger_walk_fn fn, void *userdata)
{
        struct walk *w = calloc(1, sizeof(*w));
        int fd, r;

        if (!w)
                return -ENOMEM;
        w->fn = fn;
        w->userdata = userdata;
        r = snprintf(w->path, sizeof(w->path), "%s/devices", root);
        fd = r > 0 && (size_t)r < sizeof(w->path) ? open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (fd < 0) {
                r = r > 0 && (size_t)r < sizeof(w->path) ? -errno : -ENAMETOOLONG;
                free(w);
                return r;
        }
        r = visit(w, fd, strlen(w->path), 0, LATE_NONE);
        for (int k = 0; k < LATE_KINDS; k++) {
                for (size_t i = 0; i < w->late[k].n; i++) {
                        char *p = w->late[k].v[i];

                        if (r >= 0)
                                r = fn(userdata, p, p + strlen(p) + 1);
                        free(p);
                }
                free(w->late[k].v);
        }
        free(w);
        return r;
}

/* Call @fn for each subdirectory of @dir holding a regular file "uevent", in name order. */
static int each_with_uevent(const char *dir, const char *subsystem, trigger_walk_fn fn, void *userdata)
{
        struct names ns = { 0 };
        char path[PATH_MAX];
        bool unused;
        DIR *d = opendir(dir);
        int r;

        if (!d)
                return errno == ENOMEM ? -ENOMEM : 0;
        r = read_entries(d, &ns, &unused);
        for (size_t i = 0; r >= 0 && i < ns.n; i++) {
                struct stat st;

                if (fstatat(dirfd(d), ns.v[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
                    snprintf(path, sizeof(path), "%s/%s/uevent", dir, ns.v[i]) >= (int)sizeof(path) ||
                    stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                path[strlen(path) - strlen("/uevent")] = '\0';
                r = fn(userdata, path, subsystem);
        }
        names_free(&ns);
        closedir(d);
        return r;
}

/* trigger_walk_subsystems()'s second pass: each bus's drivers. */
static int bus_drivers(void *userdata, const char *syspath, const char *subsystem)
{
        const struct walk *w = userdata;
        char dir[PATH_MAX];

        (void)subsystem;
        if (snprintf(dir, sizeof(dir), "%s/drivers", syspath) >= (int)sizeof(dir))
                return 0;
        return each_with_uevent(dir, "drivers", w->fn, w->userdata);
}

int trigger_walk_subsystems(const char *root, trigger_walk_fn fn, void *userdata)
{
        struct walk w = { .fn = fn, .userdata = userdata };
        char dir[PATH_MAX];
        int r;

        snprintf(dir, sizeof(dir), "%s/module", root);
        r = each_with_uevent(dir, "module", fn, userdata);
        snprintf(dir, sizeof(dir), "%s/bus", root);
        if (r >= 0)
                r = each_with_uevent(dir, "subsystem", fn, userdata);
        if (r >= 0)
                r = each_with_uevent(dir, "", bus_drivers, &w);
        return r;
}
