/* SPDX-License-Identifier: MIT */
/*
 * Loading external handlers: every "*.so" of the handler directory, in
 * strcmp order of the file names, with dlopen(RTLD_NOW | RTLD_LOCAL).
 * Only files that root alone can have written are loaded: the directory
 * and the file must be owned by uid 0 and not writable by group or others,
 * and the file must be a regular file (a symbolic link is refused).  Every
 * refusal is one log line naming the file and the reason; loading goes on
 * with the next file.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "handler-internal.h"
#include "log.h"

void handler_dlclose(void *dl)
{
        if (dl)
                (void)dlclose(dl);
}

/* Owned by root, not writable by group or others. */
static const char *unsafe_reason(const struct stat *st)
{
        if (st->st_uid != 0)
                return "not owned by root";
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return "writable by group or others";
        return NULL;
}

static bool is_so(const char *name)
{
        size_t n = strlen(name);

        return name[0] != '.' && n > 3 && strcmp(name + n - 3, ".so") == 0;
}

static int cmp_names(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Load one file; every refusal is logged here. */
static int load_one(struct handler_chain *c, int dirfd, const char *dir, const char *name)
{
        const struct hotplugd_handler *ops;
        char path[4096];
        struct stat st;
        const char *why;
        void *dl;
        int r;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
                return log_error_errno(-ENAMETOOLONG, "handler %s/%s: path too long; refused", dir, name);
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return log_error_errno(negative_errno(), "handler %s: cannot stat; refused", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(-EPERM, "handler %s: not a regular file; refused", path);
        why = unsafe_reason(&st);
        if (why)
                return log_error_errno(-EPERM, "handler %s: %s (mode %04o, uid %u); refused", path, why,
                                       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);

        dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
                const char *e = dlerror();
                return log_error_errno(-ENOEXEC, "handler %s: dlopen failed: %s; refused", path, e ? e : "?");
        }
        ops = dlsym(dl, HOTPLUGD_HANDLER_SYMBOL);
        if (!ops) {
                log_error_errno(-ENOENT, "handler %s: no symbol %s (built for another ABI?); refused", path,
                                HOTPLUGD_HANDLER_SYMBOL);
                dlclose(dl);
                return -ENOENT;
        }
        r = handler_chain_add(c, ops, dl, path);
        if (r < 0) {
                dlclose(dl);
                return r;
        }
        log_info("handler %s loaded from %s", ops->id, path);
        return 0;
}

static int list_dir(DIR *d, char ***ret, size_t *ret_n)
{
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;

        while ((errno = 0, de = readdir(d))) {
                char **t;
                if (!is_so(de->d_name))
                        continue;
                if (n >= HP_HANDLERS_MAX) {
                        log_warning("handler directory: more than %d *.so files, the rest ignored", HP_HANDLERS_MAX);
                        break;
                }
                t = realloc(names, (n + 1) * sizeof(*names));
                if (!t || !(t[n] = strdup(de->d_name))) {
                        names = t ? t : names;
                        while (n > 0)
                                free(names[--n]);
                        free(names);
                        return -ENOMEM;
                }
                names = t;
                n++;
        }
        if (n > 0)
                qsort(names, n, sizeof(*names), cmp_names);
        *ret = names;
        *ret_n = n;
        return 0;
}

int handler_load_dir(struct handler_chain *c, const char *dir)
{
        DIR *d = opendir(dir);
        char **names = NULL;
        struct stat st;
        const char *why;
        size_t n = 0;
        int r, loaded = 0;

        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        if (fstat(dirfd(d), &st) < 0) {
                r = negative_errno();
                closedir(d);
                return r;
        }
        why = unsafe_reason(&st);
        if (why) {
                closedir(d);
                log_error("handler directory %s: %s (mode %04o, uid %u); no handler loaded from it", dir, why,
                          (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
                return 0;
        }
        r = list_dir(d, &names, &n);
        if (r < 0) {
                closedir(d);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                if (load_one(c, dirfd(d), dir, names[i]) >= 0)
                        loaded++;
                free(names[i]);
        }
        free(names);
        closedir(d);
        return loaded;
}
