/* SPDX-License-Identifier: MIT */
/*
 * Agent spawning.  The environment is an array of pointers into the event's
 * own buffer (kernel entries are already "KEY=VALUE" strings), so building
 * it copies nothing.  posix_spawn() (vfork semantics in glibc) starts the
 * child; exec failures come back synchronously as an error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/envbuf.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "pipeline/spawner.h"
#include "shared/trust.h"
#include "uevent/uevent.h"

static const char env_home[] = "HOME=/";
static const char env_path[] = "PATH=/sbin:/bin:/usr/sbin:/usr/bin";

static bool entry_has_key(const char *entry, const char *key, size_t klen)
{
        return strncmp(entry, key, klen) == 0 && entry[klen] == '=';
}

static size_t key_len(const char *entry)
{
        const char *eq = strchr(entry, '=');
        return eq ? (size_t)(eq - entry) : strlen(entry);
}

void spawn_env_build(const struct uevent *ev, struct spawn_env *ret)
{
        static const char *const first[] = { "ACTION", "DEVPATH", "SUBSYSTEM", "SEQNUM" };
        const char *e;
        size_t n = 0;

        ret->envp[n++] = env_home;
        ret->envp[n++] = env_path;
        for (size_t k = 0; k < ELEMENTSOF(first); k++)
                for (unsigned i = 0; i < ev->n_vars; i++)
                        if (entry_has_key(uevent_var(ev, i), first[k], strlen(first[k]))) {
                                ret->envp[n++] = uevent_var(ev, i);
                                break;
                        }

        for (unsigned i = 0; i < ev->n_vars; i++) {
                const char *v = uevent_var(ev, i);
                bool skip = env_key_refused(v, key_len(v));

                for (size_t k = 0; !skip && k < ELEMENTSOF(first); k++)
                        skip = entry_has_key(v, first[k], strlen(first[k]));
                if (!skip)
                        ret->envp[n++] = v;
        }

        e = ev->extra;
        for (unsigned i = 0; i < ev->n_extra; i++, e += strlen(e) + 1) {
                size_t klen = key_len(e), j;

                if (env_key_refused(e, klen))
                        continue;
                for (j = 2; j < n; j++)
                        if (strncmp(ret->envp[j], e, klen + 1) == 0)
                                break;
                if (j < n)
                        ret->envp[j] = e;
                else if (n < SPAWN_ENV_MAX - 1)
                        ret->envp[n++] = e;
        }
        ret->envp[n] = NULL;
        ret->n = n;
}

size_t spawn_env_refused(const struct uevent *ev, const char **ret, size_t max)
{
        const char *e;
        size_t n = 0;

        for (unsigned i = 0; i < ev->n_vars && n < max; i++) {
                const char *v = uevent_var(ev, i);

                if (env_key_refused(v, key_len(v)))
                        ret[n++] = v;
        }
        e = ev->extra;
        for (unsigned i = 0; i < ev->n_extra && n < max; i++, e += strlen(e) + 1) {
                size_t klen = key_len(e);
                bool sent = false;

                if (!env_key_refused(e, klen))
                        continue;
                for (unsigned j = 0; j < ev->n_vars && !sent; j++)
                        sent = strncmp(uevent_var(ev, j), e, klen + 1) == 0; /* "KEY=" */
                if (!sent)
                        ret[n++] = e;
        }
        return n;
}

static int pidfd_open_(pid_t pid)
{
        return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Attributes shared by every spawn: built once. */
static posix_spawnattr_t spawn_attr;
static bool spawn_attr_ready;

static int spawn_attr_get(posix_spawnattr_t **ret)
{
        sigset_t none, all;
        int r;

        if (!spawn_attr_ready) {
                sigemptyset(&none);
                /* Every bit, not sigfillset(): glibc's fills leave out its internal
                 * signals (32, 33), and its spawn child then sets exactly those to
                 * SIG_IGN, which the agent would inherit across exec. */
                memset(&all, 0xff, sizeof(all));
                r = posix_spawnattr_init(&spawn_attr);
                if (r)
                        return -r;
                r = posix_spawnattr_setflags(&spawn_attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                                  POSIX_SPAWN_SETSIGDEF);
                if (!r)
                        r = posix_spawnattr_setpgroup(&spawn_attr, 0);
                if (!r)
                        r = posix_spawnattr_setsigmask(&spawn_attr, &none);
                if (!r)
                        r = posix_spawnattr_setsigdefault(&spawn_attr, &all);
                if (r) {
                        posix_spawnattr_destroy(&spawn_attr);
                        return -r;
                }
                spawn_attr_ready = true;
        }
        *ret = &spawn_attr;
        return 0;
}

/*
 * File actions depend only on the fd number of the pipe's write end, and
 * the kernel hands out the lowest free numbers, so a small cache of them
 * spares building (and glibc validating, with a getrlimit() per action)
 * the same list for every spawn.
 */
#define FA_CACHE 256
static posix_spawn_file_actions_t fa_cache[FA_CACHE];
static bool fa_ready[FA_CACHE];

static int file_actions_build(posix_spawn_file_actions_t *fa, int out_w)
{
        int r = posix_spawn_file_actions_init(fa);

        if (r)
                return -r;
        r = posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0);
        if (!r)
                r = posix_spawn_file_actions_adddup2(fa, out_w, 1);
        if (!r)
                r = posix_spawn_file_actions_adddup2(fa, out_w, 2);
        if (!r)
                r = posix_spawn_file_actions_addclosefrom_np(fa, 3);
        if (r) {
                posix_spawn_file_actions_destroy(fa);
                return -r;
        }
        return 0;
}

static int spawn_one(const char *path, char *const argv[], const struct spawn_env *env, int out_w, pid_t *ret)
{
        posix_spawn_file_actions_t local, *fa;
        posix_spawnattr_t *attr;
        mode_t mask;
        int r;

        r = spawn_attr_get(&attr);
        if (r < 0)
                return r;
        if (out_w >= 0 && out_w < FA_CACHE) {
                if (!fa_ready[out_w]) {
                        r = file_actions_build(&fa_cache[out_w], out_w);
                        if (r < 0)
                                return r;
                        fa_ready[out_w] = true;
                }
                fa = &fa_cache[out_w];
        } else {
                r = file_actions_build(&local, out_w);
                if (r < 0)
                        return r;
                fa = &local;
        }
        /* The daemon runs with umask 077; agents get the 022 that
         * /sbin/hotplug always had from the kernel (hotplugd(8), AGENTS). */
        mask = umask(022);
        r = posix_spawn(ret, path, fa, attr, argv, (char *const *)env->envp);
        (void)umask(mask);
        if (fa == &local)
                posix_spawn_file_actions_destroy(&local);
        return -r;
}

int spawn_agent_full(const char *path, const char *name, const struct spawn_env *env, bool want_pidfd,
                     struct spawn_result *ret)
{
        _cleanup_close_ int out_r = -1, out_w = -1;
        int pipefd[2], pidfd = -1, r;
        char *argv[3] = { (char *)path, (char *)name, NULL };
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        out_r = pipefd[0];
        out_w = pipefd[1];
        if (fcntl(out_r, F_SETFL, O_NONBLOCK) < 0)
                return negative_errno();

        r = spawn_one(path, argv, env, out_w, &pid);
        if (r < 0)
                return r;

        if (want_pidfd) {
                pidfd = pidfd_open_(pid);
                if (pidfd < 0) {
                        /* Cannot supervise it: stop it rather than leak an unwatched child. */
                        r = negative_errno();
                        kill(-pid, SIGKILL);
                        (void)waitpid(pid, NULL, 0);
                        return r;
                }
        }
        ret->pid = pid;
        ret->pidfd = pidfd;
        ret->outfd = take_fd(&out_r);
        return 0;
}

int spawn_agent(const char *path, const char *name, const struct spawn_env *env, struct spawn_result *ret)
{
        return spawn_agent_full(path, name, env, true, ret);
}

static bool suffix_is(const char *s, const char *suffix)
{
        size_t l = strlen(s), k = strlen(suffix);
        return l > k && strcmp(s + l - k, suffix) == 0;
}

/* A sorted, bounded selection: the lexically smallest names, as "DIR/name" paths. */
struct selection {
        char **paths;     /* room for cap entries */
        size_t n, cap;
        size_t prefix;    /* strlen("DIR/"): every path starts with it */
};

/* Where @name goes in @sel, or sel->cap if it is beyond the kept ones. */
static size_t selection_pos(const struct selection *sel, const char *name)
{
        size_t lo = 0, hi = sel->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(sel->paths[mid] + sel->prefix, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static int selection_insert(struct selection *sel, size_t pos, const char *dpath, const char *name)
{
        char *p;

        if (asprintf(&p, "%s/%s", dpath, name) < 0)
                return -ENOMEM;
        if (sel->n == sel->cap)
                free(sel->paths[--sel->n]);
        memmove(sel->paths + pos + 1, sel->paths + pos, (sel->n - pos) * sizeof(char *));
        sel->paths[pos] = p;
        sel->n++;
        return 0;
}

/*
 * hotplug.d files and directories refused for their owner or mode, each
 * logged once: the paths already reported.  A path that passes again is
 * forgotten, so that a later refusal is logged again.
 */
static char *refused[HP_HOTPLUG_D_REFUSED_MAX];
static size_t refused_next;

static void refused_log(const char *path, const char *why, const struct stat *st)
{
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                if (refused[i] && strcmp(refused[i], path) == 0)
                        return;
        log_error("hotplug.d %s: %s (mode %04o, uid %u); not run", path, why, (unsigned)(st->st_mode & 07777),
                  (unsigned)st->st_uid);
        free(refused[refused_next]);
        refused[refused_next] = strdup(path);
        refused_next = (refused_next + 1) % ELEMENTSOF(refused);
}

static void refused_forget(const char *path)
{
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                if (refused[i] && strcmp(refused[i], path) == 0) {
                        free(refused[i]);
                        refused[i] = NULL;
                }
}

/*
 * Check DIR/SUB (or DIR itself, @dirfd, when @sub is NULL).  Return 1 if it
 * is trusted (with DIR/SUB opened in @ret), 0 if it is missing or refused
 * (refusals are logged once), negative errno on other errors.
 */
static int open_trusted_dir(int dirfd, const char *path, const char *sub, int *ret)
{
        const char *why = NULL;
        struct stat st;
        int fd, r;

        *ret = -1;
        if (sub)
                r = trust_check_at(dirfd, sub, true, &st, &why);
        else
                r = fstat(dirfd, &st) < 0 ? negative_errno() : S_ISDIR(st.st_mode) ? 0 : -EINVAL;
        if (r == 0 && !sub && (why = trust_reason(&st)))
                r = -EPERM;
        if (r == -EPERM) {
                refused_log(path, why, &st);
                return 0;
        }
        if (r < 0)
                return r == -ENOENT || r == -ENOTDIR || r == -EINVAL || r == -EMEDIUMTYPE ? 0 : r;
        refused_forget(path);
        if (!sub)
                return 1;
        fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
        *ret = fd;
        return 1;
}

/*
 * Append DIR/SUB/ *.hotplug (executable regular files, the lexically first
 * that fit) to the list.  Only what root alone can have written runs: DIR,
 * DIR/SUB and the file (for a symbolic link: its target and the directories
 * leading to it) pass trust_check_at(); a refusal is logged once per path.
 */
static int list_one(int topfd, const char *dir, const char *sub, char **paths, size_t *n)
{
        struct selection sel = { .paths = paths + *n, .cap = HP_HOTPLUG_D_MAX_FILES - *n };
        char dpath[4096], fpath[4096 + 256];
        struct dirent *de;
        int r = 0, fd;
        DIR *d;

        if ((size_t)snprintf(dpath, sizeof(dpath), "%s/%s", dir, sub) >= sizeof(dpath))
                return -ENAMETOOLONG;
        sel.prefix = strlen(dpath) + 1;
        r = open_trusted_dir(topfd, dpath, sub, &fd);
        if (r <= 0)
                return r;
        r = 0;
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                close(fd);
                return r;
        }

        for (errno = 0; (de = readdir(d)); errno = 0) {
                const char *why = NULL;
                struct stat st;
                size_t pos;
                int k;

                if (de->d_name[0] == '.' || !suffix_is(de->d_name, ".hotplug"))
                        continue;
                pos = selection_pos(&sel, de->d_name);
                if (pos >= sel.cap)
                        continue;
                /* Follows symlinks, as the old shell multiplexer's [ -f ] did, if the target is trusted. */
                snprintf(fpath, sizeof(fpath), "%s/%s", dpath, de->d_name);
                k = trust_check_at(dirfd(d), de->d_name, false, &st, &why);
                if (k == -EPERM) {
                        refused_log(fpath, why, &st);
                        continue;
                }
                if (k < 0 || !(st.st_mode & 0111))
                        continue;
                refused_forget(fpath);
                r = selection_insert(&sel, pos, dpath, de->d_name);
                if (r < 0)
                        break;
        }
        if (r == 0 && errno != 0)
                r = negative_errno();
        closedir(d);
        *n += sel.n;
        return r;
}

int hotplug_d_list(const char *dir, const char *name, char ***ret_paths, size_t *ret_n)
{
        char **paths;
        size_t n = 0;
        int r, topfd, fd;

        if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return -EINVAL;
        paths = calloc(HP_HOTPLUG_D_MAX_FILES, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        /* DIR itself must be trusted too; a missing or refused DIR lists nothing. */
        topfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (topfd < 0)
                r = errno == ENOENT || errno == ENOTDIR ? 0 : negative_errno();
        else
                r = open_trusted_dir(topfd, dir, NULL, &fd);
        if (r > 0) {
                r = list_one(topfd, dir, name, paths, &n);
                if (r >= 0 && strcmp(name, "default") != 0 && n < HP_HOTPLUG_D_MAX_FILES)
                        r = list_one(topfd, dir, "default", paths, &n);
        }
        if (topfd >= 0)
                close(topfd);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(paths[i]);
                free(paths);
                return r;
        }
        *ret_paths = paths;
        *ret_n = n;
        return 0;
}
