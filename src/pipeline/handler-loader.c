/* SPDX-License-Identifier: MIT */
/*
 * Loading external handlers: every "*.so" of the handler directory, in
 * strcmp order of the file names, with dlopen(RTLD_NOW | RTLD_LOCAL).
 * Only files that root alone can have written are loaded: the directory's
 * whole path passes the trust rule (every directory and link on the way),
 * the file must be owned by uid 0 and not writable by group or others,
 * and it must be a regular file (a symbolic link is refused).  The
 * file is opened once (O_NOFOLLOW), checked through that descriptor and
 * mapped through it (/proc/self/fd/N), so what is loaded is the file that
 * was checked even if the name is replaced in between.  Every refusal is
 * one log line naming the file and the reason; loading goes on with the
 * next file.  The ownership rule is trust_reason() (src/shared/trust.h),
 * shared with the hotplug.d multiplexer.  What is done with a loaded
 * handler is the caller's (handler_accept_fn): the loader knows no chain.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/handler-internal.h"
#include "shared/log.h"
#include "shared/trust.h"
#include <unistd.h>

void handler_dlclose(void *dl)
{
        if (dl)
                (void)dlclose(dl);
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

/*
 * glibc knows a loaded object by the name it was opened under, and a name
 * "/proc/self/fd/N" from an earlier load (of another file) would hand back
 * that object.  Move @fd to a number whose name no loaded object has.
 * Return: the (possibly new) descriptor, @self set to its name; on error
 * @fd is closed.
 */
static int fd_name_unused(int fd, char *self, size_t size)
{
        for (int tries = 0; tries < 4 * HP_HANDLERS_MAX; tries++) {
                struct link_map *lm = NULL;
                bool stale = false;
                void *h;
                int nfd;

                snprintf(self, size, "/proc/self/fd/%d", fd);
                h = dlopen(self, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
                if (!h)
                        return fd;
                if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && strcmp(lm->l_name, self) == 0)
                        stale = true;
                dlclose(h);
                if (!stale)
                        return fd; /* this very file is loaded already, under another name */
                nfd = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
                if (nfd < 0) {
                        nfd = negative_errno();
                        close(fd);
                        return nfd;
                }
                close(fd);
                fd = nfd;
        }
        close(fd);
        return -EMFILE;
}

/* Load one file; every refusal is logged here. */
struct loader {
        handler_accept_fn accept;
        void *userdata;
};

static int load_one(const struct loader *l, int dirfd, const char *dir, const char *name)
{
        const struct hotplugd_handler *ops;
        _cleanup_close_ int fd = -1;
        char path[4096], self[64];
        struct stat st;
        const char *why;
        void *dl;
        int r;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
                return log_error_errno(-ENAMETOOLONG, "handler %s/%s: path too long; refused", dir, name);
        /* One open: the checks and the load see the same file.  O_NONBLOCK: a FIFO does not hang us. */
        fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0 && errno == ELOOP)
                return log_error_errno(-EPERM, "handler %s: a symbolic link; refused", path);
        if (fd < 0)
                return log_error_errno(negative_errno(), "handler %s: cannot open; refused", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(negative_errno(), "handler %s: cannot stat; refused", path);
        if (!S_ISREG(st.st_mode))
                return log_error_errno(-EPERM, "handler %s: not a regular file; refused", path);
        why = trust_reason(&st);
        if (why)
                return log_error_errno(-EPERM, "handler %s: %s (mode %04o, uid %u); refused", path, why,
                                       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);

        r = fd_name_unused(fd, self, sizeof(self));
        if (r < 0) {
                fd = -1;
                return log_error_errno(r, "handler %s: no descriptor to load it through; refused", path);
        }
        fd = r;
        dl = dlopen(self, RTLD_NOW | RTLD_LOCAL);
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
        r = l->accept(l->userdata, ops, dl, path);
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

int handler_load_dir(const char *dir, handler_accept_fn accept, void *userdata)
{
        const struct loader l = { .accept = accept, .userdata = userdata };
        const char *why = NULL;
        char **names = NULL;
        struct stat st;
        size_t n = 0;
        int r, fd, loaded = 0;
        DIR *d;

        /* The whole path as given: every directory and link on the way, not the last one alone. */
        r = trust_open_at(AT_FDCWD, dir, TRUST_DIR | TRUST_READ, &fd, &st, &why);
        if (r == -ENOENT)
                return 0;
        if (r == -EPERM || r == -EMEDIUMTYPE) {
                log_error("handler directory %s: %s (mode %04o, uid %u); no handler loaded from it", dir, why,
                          (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
                return 0;
        }
        if (r < 0)
                return r;
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                close(fd);
                return r;
        }
        r = list_dir(d, &names, &n);
        if (r < 0) {
                closedir(d);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                if (load_one(&l, dirfd(d), dir, names[i]) >= 0)
                        loaded++;
                free(names[i]);
        }
        free(names);
        closedir(d);
        return loaded;
}
