/* SPDX-License-Identifier: MIT */
/*
 * Agent spawning.  The environment is an array of pointers into the event's
 * own buffer (kernel entries are already "KEY=VALUE" strings), so building
 * it copies nothing.  clone() with vfork semantics starts the child (see
 * spawn_child()); exec failures come back synchronously as an error.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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
        /* The entries "ACTION=...", "DEVPATH=...", "SUBSYSTEM=..." are where
         * the parser found their values; SEQNUM's is looked up once. */
        const char *first[4] = {
                ev->action ? ev->action - strlen("ACTION=") : NULL,
                ev->devpath ? ev->devpath - strlen("DEVPATH=") : NULL,
                ev->subsystem ? ev->subsystem - strlen("SUBSYSTEM=") : NULL,
                NULL,
        };
        const char *e;
        size_t n = 0;

        for (unsigned i = 0; i < ev->n_vars && !first[3]; i++)
                if (entry_has_key(uevent_var(ev, i), "SEQNUM", strlen("SEQNUM")))
                        first[3] = uevent_var(ev, i);
        ret->envp[n++] = env_home;
        ret->envp[n++] = env_path;
        for (size_t k = 0; k < ELEMENTSOF(first); k++)
                if (first[k])
                        ret->envp[n++] = first[k];

        for (unsigned i = 0; i < ev->n_vars; i++) {
                const char *v = uevent_var(ev, i);

                if (v != first[0] && v != first[1] && v != first[2] && v != first[3] &&
                    !env_key_refused(v, key_len(v)))
                        ret->envp[n++] = v;
        }
        /* The kernel's keys always fit (a parsed event has at most HP_UEVENT_MAX_VARS). */
        assert(ev->n_vars <= HP_UEVENT_MAX_VARS && n <= 6 + (size_t)ev->n_vars);

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
        assert(n < SPAWN_ENV_MAX);
        ret->envp[n] = NULL;
        ret->n = n;
}

void spawn_env_set(struct spawn_env *env, const char *entry)
{
        size_t k = strcspn(entry, "=") + 1;

        for (size_t i = 0; i < env->n; i++)
                if (strncmp(env->envp[i], entry, k) == 0) {
                        env->envp[i] = entry;
                        return;
                }
        if (env->n + 1 < SPAWN_ENV_MAX) {
                env->envp[env->n++] = entry;
                env->envp[env->n] = NULL;
        }
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

/*
 * Starting the agent.  glibc's clone() wrapper (the clone system call: glibc
 * 2.36 exports no clone3 wrapper, and clone3 with CLONE_VM cannot be called
 * from C without an assembly stub) with CLONE_VM | CLONE_VFORK | CLONE_PIDFD:
 * the child runs in our memory, on child_stack, until it execs or exits,
 * while the calling thread is suspended, and the kernel hands us its pidfd.
 * That is what posix_spawn() does too, less, per spawn, the mmap()/munmap()
 * of a fresh stack (the munmap costs a TLB shootdown), the pidfd_open() after
 * it and the umask() pair around it: the child sets its own umask.
 *
 * The child may touch nothing of ours but struct child_args: no malloc, no
 * stdio, no locks; only async-signal-safe calls.  child_main() is not
 * instrumented, and of what it calls only sigaction() and _exit() pass
 * through the sanitizers' interceptors (which hand them on; the signal mask
 * is set by the system call itself).  All signals are blocked in the parent
 * across clone(), so that no handler of ours runs in the child, on shared
 * memory, before it has reset them.
 *
 * One stack serves every spawn because the caller is suspended while the
 * child uses it: spawn_agent() is for one thread at a time (the daemon has
 * one).
 */
#define CHILD_STACK_SIZE (64 * 1024)
static unsigned char child_stack[CHILD_STACK_SIZE] __attribute__((aligned(4096)));

/* /dev/null for the agents' stdin: opened once, close-on-exec. */
static int null_fd = -1;

/* Our /proc/PID/status for the children (child_signals_default()), opened
 * at the first spawn, close-on-exec: -1 not yet, -2 cannot be opened. */
static int status_fd = -1;

/* In a process forked from ours, the file would still be the parent's. */
static void status_forget(void)
{
        if (status_fd >= 0)
                close(status_fd);
        status_fd = -1;
}

static void status_open(void)
{
        static bool registered;

        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

        /* Not on 0-2: a process started with them closed gets them back for its pipes. */
        status_fd = fd < 0 ? -2 : fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
        if (fd >= 0 && fd < 3)
                close(fd);
        if (status_fd < 0) {
                status_fd = -2;
                return;
        }
        if (!registered && pthread_atfork(NULL, NULL, status_forget) == 0)
                registered = true;
}

struct child_args {
        const char *path;
        char *const *argv;
        char *const *envp;
        int null_fd;  /* the agent's stdin */
        int status_fd; /* the parent's /proc/PID/status, or negative */
        int out_fd;   /* the pipe's write end, its stdout and stderr (blocking) */
        int err;      /* written by the child: the errno that stopped it before or in execve(); 0 if none */
};

/* What the child runs: not instrumented (see above). */
#define CHILD_CODE __attribute__((no_sanitize("address", "undefined")))

/* The whole signal mask, glibc's own signals included (its sigprocmask() leaves those alone). */
static CHILD_CODE int sigmask_set(const sigset_t *set, sigset_t *old)
{
        return syscall(SYS_rt_sigprocmask, SIG_SETMASK, set, old, _NSIG / 8) < 0 ? negative_errno() : 0;
}

/* Move @fd above 2, so that dup2() onto 0-2 never meets it there. */
static CHILD_CODE int fd_above_stdio(int fd)
{
        return fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
}

static CHILD_CODE void child_signal_default(int sig)
{
        static const struct sigaction dfl = { .sa_handler = SIG_DFL };

        /* glibc refuses its internal signals (EINVAL): it never ignores them, and exec resets their handlers. */
        if (sig != SIGKILL && sig != SIGSTOP)
                (void)sigaction(sig, &dfl, NULL);
}

/*
 * In @status (/proc/self/status, @size bytes), find the line "@key" and set
 * every signal its hex mask names back to SIG_DFL.  The mask's last digit
 * holds signals 1-4, the one before 5-8, and so on.  Return: false if the
 * line is not there.
 */
static CHILD_CODE bool child_signals_listed(const char *status, size_t size, const char *key)
{
        size_t klen = 0, i, end;

        while (key[klen])
                klen++;
        for (i = 0; i + klen <= size; i++) {
                size_t k = 0;

                while (k < klen && status[i + k] == key[k])
                        k++;
                if (k == klen && (i == 0 || status[i - 1] == '\n'))
                        break;
        }
        if (i + klen > size)
                return false;
        i += klen;
        for (end = i; end < size; end++)
                if (!(status[end] >= '0' && status[end] <= '9') && !(status[end] >= 'a' && status[end] <= 'f'))
                        break;
        for (int sig = 1; end > i; end--, sig += 4) {
                char c = status[end - 1];
                int v = c <= '9' ? c - '0' : c - 'a' + 10;

                for (int b = 0; b < 4; b++)
                        if (v & (1 << b))
                                child_signal_default(sig + b);
        }
        return true;
}

/*
 * In the child: every disposition back to SIG_DFL, so that no handler of
 * ours runs here and no ignored signal stays ignored across exec.  Only
 * those the parent's status lists as ignored or caught (the child's are a
 * copy of them, and the parent is suspended until the exec), read through
 * @fd, the parent's own /proc/PID/status kept open: one system call
 * instead of one sigaction() for each of the 62 signals (on a virtual
 * machine a system call can cost a microsecond).  Not /proc/self: looking
 * up the child's own /proc/PID would make its directory entries, which the
 * kernel then kills again when the daemon reaps the child (bench/RESULTS.md).
 * Without /proc (@fd negative or the read fails), all of them.
 */
static CHILD_CODE void child_signals_default(int fd)
{
        char status[4096];
        long n = -1;

        if (fd >= 0)
                n = syscall(SYS_pread64, fd, status, sizeof(status), 0);
        if (n > 0 && child_signals_listed(status, (size_t)n, "SigIgn:\t") &&
            child_signals_listed(status, (size_t)n, "SigCgt:\t"))
                return;
        for (int sig = 1; sig < _NSIG; sig++)
                child_signal_default(sig);
}

static _noreturn_ CHILD_CODE int child_main(void *userdata)
{
        static const sigset_t none; /* all zero: no signal */
        struct child_args *a = userdata;
        int in, out;

        child_signals_default(a->status_fd);
        in = fd_above_stdio(a->null_fd);
        out = fd_above_stdio(a->out_fd);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
                goto fail;
        /* close_range(), or a walk of /proc/self/fd before Linux 5.9. */
        closefrom(3);
        if (setpgid(0, 0) < 0)
                goto fail;
        /* The daemon runs with umask 077; agents get the 022 that
         * /sbin/hotplug always had from the kernel (hotplugd(8)). */
        umask(022);
        if (sigmask_set(&none, NULL) < 0)
                goto fail;
        execve(a->path, a->argv, a->envp);
fail:
        a->err = errno > 0 ? errno : EIO;
        _exit(127);
}

/*
 * Start the child of @a.  Return: 0 with the child's PID and pidfd in
 * @ret_pid, @ret_pidfd, or negative errno, also the errno with which the
 * child failed to exec (it is reaped then).
 */
static int spawn_child(struct child_args *a, pid_t *ret_pid, int *ret_pidfd)
{
        sigset_t all, old;
        int pidfd = -1, r;
        pid_t pid;

        memset(&all, 0xff, sizeof(all));
        sigemptyset(&old);
        r = sigmask_set(&all, &old);
        if (r < 0)
                return r;
        a->err = 0;
        pid = clone(child_main, child_stack + sizeof(child_stack), CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, a,
                    &pidfd);
        r = pid < 0 ? negative_errno() : 0;
        (void)sigmask_set(&old, NULL);
        if (r < 0)
                return r;
        /* The child has exec'd or exited by now (CLONE_VFORK); a->err says which. */
        if (a->err != 0) {
                (void)waitpid(pid, NULL, 0);
                safe_close(pidfd);
                return -a->err;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

bool spawn_error_resources(int error)
{
        return error == -EAGAIN || error == -ENOMEM || error == -EMFILE || error == -ENFILE;
}

int spawn_pipe(int *ret_read, int *ret_write)
{
        int p[2];

        /* Two open files: the read end alone non-blocking, the agent writes blocking. */
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
                int r = negative_errno();
                close(p[0]);
                close(p[1]);
                return r;
        }
        *ret_read = p[0];
        *ret_write = p[1];
        return 0;
}

int spawn_agent_to(const char *path, const char *name, const struct spawn_env *env, int out,
                   struct spawn_result *ret)
{
        const char *argv[3] = { path, name, NULL };

        return spawn_argv_to(argv, env, out, ret);
}

int spawn_argv_to(const char *const *argv, const struct spawn_env *env, int out, struct spawn_result *ret)
{
        struct child_args a;
        int pidfd = -1, r;
        pid_t pid = 0;

        if (null_fd < 0) {
                null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null_fd < 0)
                        return negative_errno();
        }
        if (status_fd == -1)
                status_open();
        a = (struct child_args){
                .path = argv[0],
                .argv = (char *const *)argv,
                .envp = (char *const *)env->envp,
                .null_fd = null_fd,
                .status_fd = status_fd,
                .out_fd = out,
        };
        r = spawn_child(&a, &pid, &pidfd);
        if (r < 0)
                return r;
        ret->pid = pid;
        ret->pidfd = pidfd;
        ret->outfd = -1;
        return 0;
}

int spawn_agent(const char *path, const char *name, const struct spawn_env *env, struct spawn_result *ret)
{
        _cleanup_close_ int out_r = -1, out_w = -1;
        struct spawn_result sr;
        int r;

        r = spawn_pipe(&out_r, &out_w);
        if (r < 0)
                return r;
        r = spawn_agent_to(path, name, env, out_w, &sr);
        if (r < 0)
                return r;
        sr.outfd = take_fd(&out_r);
        *ret = sr;
        return 0;
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

/* One walk of hotplug_d_list_explained(): what runs, and who hears of what does not. */
struct hd_walk {
        char **paths;             /* HP_HOTPLUG_D_MAX_FILES entries */
        size_t n;
        hotplug_d_skip_fn skip;   /* NULL: refusals are logged once instead */
        void *userdata;
};

/* @path is not run, for @why (@st: what was refused, or NULL). */
static void passed_over(const struct hd_walk *w, const char *path, const char *why, const struct stat *st, bool refusal)
{
        if (w->skip)
                w->skip(path, why, st, w->userdata);
        else if (refusal)
                refused_log(path, why, st);
}

/*
 * Open DIR/SUB (@sub in the trusted @dirfd), or DIR itself (@sub NULL: its
 * whole path as given, every directory and link on the way, by the trust
 * rule).  Return 1 if it is trusted (opened in @ret), 0 if it is missing or
 * refused (refusals are logged once, or told to w->skip), negative errno on
 * other errors.
 */
static int open_trusted_dir(const struct hd_walk *w, int dirfd, const char *path, const char *sub, int *ret)
{
        const char *why = NULL;
        struct stat st;
        int r;

        *ret = -1;
        r = trust_open_at(dirfd, sub ? sub : path, TRUST_DIR | TRUST_READ, ret, &st, &why);
        if (r == -EPERM) {
                passed_over(w, path, why, &st, true);
                return 0;
        }
        if (r < 0) {
                if (r != -ENOENT && r != -ENOTDIR && r != -EMEDIUMTYPE)
                        return r;
                passed_over(w, path, why ? why : r == -ENOENT ? "does not exist" : "not a directory", NULL, false);
                return 0;
        }
        if (!w->skip)
                refused_forget(path);
        return 1;
}

/* Why DIR/SUB/@name is not a candidate at all, or NULL if it is named like one. */
static const char *name_refusal(const char *name)
{
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return "";
        if (name[0] == '.')
                return "hidden (its name starts with '.')";
        if (!suffix_is(name, ".hotplug"))
                return "not named *.hotplug";
        return NULL;
}

/* The entry @de of DIR/SUB (@d, path @dpath) into w's selection @sel, or told to w->skip.  Return: 0 or -ENOMEM. */
static int consider(struct hd_walk *w, struct selection *sel, DIR *d, const char *dpath, const char *name)
{
        const char *why = name_refusal(name);
        char fpath[4096 + 256];
        struct stat st;
        size_t pos;
        int k;

        snprintf(fpath, sizeof(fpath), "%s/%s", dpath, name);
        if (why) {
                if (why[0] && w->skip)
                        w->skip(fpath, why, NULL, w->userdata);
                return 0;
        }
        pos = selection_pos(sel, name);
        if (pos >= sel->cap) {
                if (w->skip)
                        w->skip(fpath, "beyond the first HP_HOTPLUG_D_MAX_FILES files", NULL, w->userdata);
                return 0;
        }
        /* Follows symlinks, as the old shell multiplexer's [ -f ] did, if the target is trusted. */
        why = NULL;
        k = trust_check_at(dirfd(d), name, false, &st, &why);
        if (k == -EPERM) {
                passed_over(w, fpath, why, &st, true);
                return 0;
        }
        if (k < 0 || !(st.st_mode & 0111)) {
                if (w->skip)
                        w->skip(fpath, k >= 0 ? "not executable" : why ? why : k == -ENOENT ?
                                "link target does not exist" : strerror(-k), k < 0 ? NULL : &st, w->userdata);
                return 0;
        }
        if (!w->skip)
                refused_forget(fpath);
        return selection_insert(sel, pos, dpath, name);
}

/*
 * Append DIR/SUB/ *.hotplug (executable regular files, the lexically first
 * that fit) to the list.  Only what root alone can have written runs: DIR,
 * DIR/SUB and the file (for a symbolic link: its target and the directories
 * leading to it) pass trust_check_at(); a refusal is logged once per path.
 */
static int list_one(struct hd_walk *w, int topfd, const char *dir, const char *sub)
{
        struct selection sel = { .paths = w->paths + w->n, .cap = HP_HOTPLUG_D_MAX_FILES - w->n };
        char dpath[4096];
        struct dirent *de;
        int r = 0, fd;
        DIR *d;

        if ((size_t)snprintf(dpath, sizeof(dpath), "%s/%s", dir, sub) >= sizeof(dpath))
                return -ENAMETOOLONG;
        sel.prefix = strlen(dpath) + 1;
        r = open_trusted_dir(w, topfd, dpath, sub, &fd);
        if (r <= 0)
                return r;
        r = 0;
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                close(fd);
                return r;
        }
        for (errno = 0; r == 0 && (de = readdir(d)); errno = 0)
                r = consider(w, &sel, d, dpath, de->d_name);
        if (r == 0 && errno != 0)
                r = negative_errno();
        closedir(d);
        w->n += sel.n;
        return r;
}

int hotplug_d_list_explained(const char *dir, const char *name, hotplug_d_skip_fn skip, void *userdata,
                             char ***ret_paths, size_t *ret_n)
{
        struct hd_walk w = { .skip = skip, .userdata = userdata };
        int r, topfd;

        if (!name || !*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return -EINVAL;
        w.paths = calloc(HP_HOTPLUG_D_MAX_FILES, sizeof(char *));
        if (!w.paths)
                return -ENOMEM;
        /* DIR's whole path must be trusted too; a missing or refused DIR lists nothing. */
        r = open_trusted_dir(&w, AT_FDCWD, dir, NULL, &topfd);
        if (r > 0) {
                r = list_one(&w, topfd, dir, name);
                if (r >= 0 && strcmp(name, "default") != 0 && w.n < HP_HOTPLUG_D_MAX_FILES)
                        r = list_one(&w, topfd, dir, "default");
        }
        if (topfd >= 0)
                close(topfd);
        if (r < 0) {
                for (size_t i = 0; i < w.n; i++)
                        free(w.paths[i]);
                free(w.paths);
                return r;
        }
        *ret_paths = w.paths;
        *ret_n = w.n;
        return 0;
}

int hotplug_d_list(const char *dir, const char *name, char ***ret_paths, size_t *ret_n)
{
        return hotplug_d_list_explained(dir, name, NULL, NULL, ret_paths, ret_n);
}
