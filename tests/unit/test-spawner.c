/* SPDX-License-Identifier: MIT */
/*
 * The spawner against the agent contract: the environment builder (order,
 * HOME/PATH, handler additions), real spawns of a probe agent (argv, exact
 * environment, fds, signal state, process group, stdin, reaping through the
 * pidfd), synchronous exec failures, and the hotplug.d directory listing.
 *
 * Usage: test-spawner PROBE   (PROBE: absolute path of test-agent-probe)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/envbuf.h"
#include "shared/macro.h"
#include "pipeline/spawner.h"
#include "test.h"
#include "uevent/uevent.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static const char *probe;

/* A dup'd event from a NULL-terminated list of kernel "KEY=VALUE" entries. */
static struct uevent *event_new(const char *const *entries, const struct envbuf *extra)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        char dgram[HP_UEVENT_MAX_SIZE];
        const char *action = NULL, *devpath = NULL;
        struct uevent view, *ev;
        enum uevent_reject why;
        size_t o;

        for (size_t i = 0; entries[i]; i++) {
                if (strncmp(entries[i], "ACTION=", 7) == 0)
                        action = entries[i] + 7;
                if (strncmp(entries[i], "DEVPATH=", 8) == 0)
                        devpath = entries[i] + 8;
        }
        check(action && devpath);
        o = (size_t)snprintf(dgram, sizeof(dgram), "%s@%s", action, devpath) + 1;
        for (size_t i = 0; entries[i]; i++) {
                size_t l = strlen(entries[i]) + 1;

                check(o + l <= sizeof(dgram));
                memcpy(dgram + o, entries[i], l);
                o += l;
        }
        check_int(uevent_parse(dgram, o, vars, &view, &why), 0);
        check_int(uevent_dup(&view, extra, NULL, &ev), 0);
        return ev;
}

static void check_envp(const struct spawn_env *env, const char *const *want)
{
        size_t n = 0;

        for (; want[n]; n++) {
                check(n < env->n);
                check_str(env->envp[n], want[n]);
        }
        check_int(env->n, n);
        check(env->envp[n] == NULL);
}

/* Every key appears once. */
static void check_keys_unique(const struct spawn_env *env)
{
        for (size_t i = 0; i < env->n; i++)
                for (size_t j = i + 1; j < env->n; j++) {
                        size_t k = strcspn(env->envp[i], "=");

                        check(strncmp(env->envp[i], env->envp[j], k + 1) != 0);
                }
}

static const char *const kernel_scrambled[] = {
        "X1=a",          "SEQNUM=7", "HOME=/evil",  "SUBSYSTEM=usb", "PATH=/evil:/bin",
        "DEVPATH=/devices/x", "MAJOR=189", "ACTION=add", "MINOR=2", NULL,
};

static void test_env_order(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = event_new(kernel_scrambled, NULL);
        static const char *const want[] = {
                "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", "ACTION=add", "DEVPATH=/devices/x",
                "SUBSYSTEM=usb", "SEQNUM=7", "X1=a", "MAJOR=189", "MINOR=2", NULL,
        };
        struct spawn_env env;

        spawn_env_build(ev, &env);
        check_envp(&env, want);
        check_keys_unique(&env);
}

static void test_env_additions(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        static const char *const want[] = {
                "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", "ACTION=add", "DEVPATH=/devices/x",
                "SUBSYSTEM=usb", "SEQNUM=7", "X1=a", "MAJOR=189", "MINOR=99", "PHYSDEVBUS=pci",
                "DEVICE=/proc/bus/usb/001/002", NULL,
        };
        struct spawn_env env;
        struct envbuf add;

        envbuf_init(&add);
        check_int(envbuf_add(&add, "PHYSDEVBUS", "pci"), 0);
        check_int(envbuf_add(&add, "HOME", "/root"), 0);
        check_int(envbuf_add(&add, "MINOR", "99"), 0);
        check_int(envbuf_add(&add, "PATH", "/tmp/evil"), 0);
        check_int(envbuf_add(&add, "DEVICE", "/proc/bus/usb/001/002"), 0);
        ev = event_new(kernel_scrambled, &add);

        spawn_env_build(ev, &env);
        check_envp(&env, want);
        check_keys_unique(&env);
}

/* Refused variables (env_key_refused()) from the kernel or a handler never
 * reach the agent; the event keeps everything else, and
 * spawn_env_refused() names each refused key once. */
static void test_env_refused(void)
{
        static const char *const kernel[] = {
                "ACTION=add",  "DEVPATH=/devices/x", "LD_PRELOAD=/tmp/evil.so", "SUBSYSTEM=usb",
                "BASH_ENV=/tmp/evil.sh", "SEQNUM=7", "IFS=/", "HOME=/evil", "MAJOR=189", "TMPDIR=/tmp/evil",
                NULL,
        };
        static const char *const want[] = {
                "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin", "ACTION=add", "DEVPATH=/devices/x",
                "SUBSYSTEM=usb", "SEQNUM=7", "MAJOR=9", "PHYSDEVBUS=pci", NULL,
        };
        static const char *const want_refused[] = {
                "LD_PRELOAD=/tmp/evil.so", "BASH_ENV=/tmp/evil.sh", "IFS=/", "HOME=/evil", "TMPDIR=/tmp/evil",
                "LD_LIBRARY_PATH=/tmp", "GLIBC_TUNABLES=x", "PATH=/tmp/evil", NULL,
        };
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        const char *refused[SPAWN_ENV_MAX];
        struct spawn_env env;
        struct envbuf add;
        size_t n;

        envbuf_init(&add);
        check_int(envbuf_add(&add, "LD_LIBRARY_PATH", "/tmp"), 0);
        check_int(envbuf_add(&add, "MAJOR", "9"), 0);
        check_int(envbuf_add(&add, "IFS", " "), 0);            /* the kernel's IFS is named once */
        check_int(envbuf_add(&add, "GLIBC_TUNABLES", "x"), 0);
        check_int(envbuf_add(&add, "PHYSDEVBUS", "pci"), 0);
        check_int(envbuf_add(&add, "PATH", "/tmp/evil"), 0);
        ev = event_new(kernel, &add);

        spawn_env_build(ev, &env);
        check_envp(&env, want);
        for (size_t i = 0; i < env.n; i++)
                check(!env_key_refused(env.envp[i], strcspn(env.envp[i], "=")) || i < 2);

        n = spawn_env_refused(ev, refused, ELEMENTSOF(refused));
        for (size_t i = 0; want_refused[i]; i++) {
                check(i < n);
                check_str(refused[i], want_refused[i]);
        }
        check_int(n, ELEMENTSOF(want_refused) - 1);
        /* A short array gets the first ones. */
        check_int(spawn_env_refused(ev, refused, 2), 2);
        check_str(refused[1], "BASH_ENV=/tmp/evil.sh");

        /* An event with nothing refused. */
        {
                static const char *const plain[] = {
                        "ACTION=add", "DEVPATH=/d", "SUBSYSTEM=s", "SEQNUM=1", "SYNTH_ARG_IFS=x", NULL,
                };
                _cleanup_(uevent_freep) struct uevent *clean = event_new(plain, NULL);

                check_int(spawn_env_refused(clean, refused, ELEMENTSOF(refused)), 0);
        }
}

/* The most a kernel event plus the handler chain can hold still fits, NULL-terminated. */
static void test_env_full(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        char store[HP_UEVENT_MAX_VARS][16];
        const char *entries[HP_UEVENT_MAX_VARS + 1] = {
                "ACTION=add", "DEVPATH=/d", "SUBSYSTEM=s", "SEQNUM=1",
        };
        struct spawn_env env;
        struct envbuf add;
        char key[8];

        for (unsigned i = 4; i < HP_UEVENT_MAX_VARS; i++) {
                snprintf(store[i], sizeof(store[i]), "K%u=%u", i, i);
                entries[i] = store[i];
        }
        entries[HP_UEVENT_MAX_VARS] = NULL;
        envbuf_init(&add);
        for (unsigned i = 0; i < HP_ENV_ADD_MAX_VARS; i++) {
                snprintf(key, sizeof(key), "A%u", i);
                check_int(envbuf_add(&add, key, "v"), 0);
        }
        ev = event_new(entries, &add);
        spawn_env_build(ev, &env);
        check_int(env.n, 2 + HP_UEVENT_MAX_VARS + HP_ENV_ADD_MAX_VARS);
        check(env.envp[env.n] == NULL);
        check_str(env.envp[6], "K4=4");
        check_str(env.envp[env.n - 1], "A31=v");
        check_keys_unique(&env);
}

/* Read @fd (non-blocking) until EOF into @buf. */
static size_t read_all(int fd, char *buf, size_t size)
{
        size_t o = 0;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t l;

                check(poll(&p, 1, 10000) == 1);
                l = read(fd, buf + o, size - 1 - o);
                if (l == 0)
                        break;
                if (l < 0) {
                        check(errno == EAGAIN || errno == EINTR);
                        continue;
                }
                o += (size_t)l;
                check(o < size - 1);
        }
        buf[o] = '\0';
        return o;
}

static void check_no_children(void)
{
        siginfo_t si;

        check(waitid(P_ALL, 0, &si, WEXITED | WNOHANG) < 0 && errno == ECHILD);
}

static void reap(const struct spawn_result *sr)
{
        siginfo_t si = { .si_pid = 0 };

        check_int(waitid((idtype_t)P_PIDFD, (id_t)sr->pidfd, &si, WEXITED), 0);
        check_int(si.si_pid, sr->pid);
        check_int(si.si_code, CLD_EXITED);
        check_int(si.si_status, 0);
        check_no_children();
}

static int saved_stdin = -1;
static mode_t saved_umask;

static void on_winch(int sig)
{
}

/* What of the parent a spawn must leave as it was: umask, signal mask, dispositions. */
struct parent_state {
        mode_t umask;
        sigset_t blocked;
        struct sigaction act[_NSIG];
};

static void parent_state_get(struct parent_state *st)
{
        st->umask = umask(0);
        umask(st->umask);
        check_int(sigprocmask(SIG_BLOCK, NULL, &st->blocked), 0);
        for (int sig = 1; sig < _NSIG; sig++)
                if (sigaction(sig, NULL, &st->act[sig]) < 0)
                        st->act[sig].sa_handler = SIG_ERR; /* glibc's own signals: not ours to see */
}

static void parent_state_check(const struct parent_state *before)
{
        struct parent_state now;

        parent_state_get(&now);
        check_int(now.umask, before->umask);
        for (int sig = 1; sig < _NSIG; sig++) {
                check_int(sigismember(&now.blocked, sig), sigismember(&before->blocked, sig));
                check(now.act[sig].sa_handler == before->act[sig].sa_handler);
        }
}

/* Make the test process as hostile as possible for leaks into the agent. */
static void pollute_parent(int *extra_fds)
{
        struct sigaction sa = { .sa_handler = on_winch };
        sigset_t block;
        int p[2];

        /* Our stdin is a pipe now, so that the agent's /dev/null proves something. */
        saved_stdin = fcntl(0, F_DUPFD_CLOEXEC, 3);
        check(saved_stdin >= 3);
        check_int(pipe(p), 0);
        check_int(dup2(p[0], 0), 0);
        close(p[0]);
        close(p[1]);

        check_int(setenv("HOTPLUGD_TEST_LEAK_MARKER", "leaked", 1), 0);
        extra_fds[0] = open("/dev/null", O_RDONLY);               /* not CLOEXEC */
        extra_fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        extra_fds[2] = fcntl(extra_fds[0], F_DUPFD, 20);           /* not CLOEXEC, higher */
        extra_fds[3] = fcntl(extra_fds[0], F_DUPFD, 900);          /* not CLOEXEC, far up */
        for (int i = 0; i < 4; i++)
                check(extra_fds[i] >= 3);
        check(!(fcntl(extra_fds[0], F_GETFD) & FD_CLOEXEC));

        sigemptyset(&block);
        sigaddset(&block, SIGUSR2);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGHUP);
        check_int(sigprocmask(SIG_BLOCK, &block, NULL), 0);
        check(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
        check(signal(SIGUSR1, SIG_IGN) != SIG_ERR);
        check(signal(SIGRTMIN + 3, SIG_IGN) != SIG_ERR);
        check(signal(SIGRTMAX, SIG_IGN) != SIG_ERR);
        check_int(sigaction(SIGWINCH, &sa, NULL), 0);  /* a handler: the agent must not run it */
        saved_umask = umask(077);                      /* the daemon's; the agent gets 022 */
}

static void unpollute_parent(const int *extra_fds)
{
        sigset_t none;

        for (int i = 0; i < 4; i++)
                close(extra_fds[i]);
        check_int(dup2(saved_stdin, 0), 0);
        close(saved_stdin);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGUSR1, SIG_DFL);
        signal(SIGRTMIN + 3, SIG_DFL);
        signal(SIGRTMAX, SIG_DFL);
        signal(SIGWINCH, SIG_DFL);
        umask(saved_umask);
        unsetenv("HOTPLUGD_TEST_LEAK_MARKER");
}

/* The next line of @out (consumed in place), which must be "@tag VALUE": VALUE. */
static char *next_line(char **out, const char *tag)
{
        size_t tl = strlen(tag);
        char *line = *out, *nl = strchr(line, '\n');

        check(nl);
        *nl = '\0';
        *out = nl + 1;
        if (strncmp(line, tag, tl) != 0 || (line[tl] != ' ' && line[tl] != '\0')) {
                fprintf(stderr, "probe said \"%s\", expected a \"%s\" line\n", line, tag);
                abort();
        }
        return line + tl + (line[tl] == ' ');
}

/*
 * A SigIgn mask without glibc's own signals, 32 up to SIGRTMIN: a libc
 * program can neither ignore nor reset them, nor can posix_spawn(), so an
 * agent inherits them as the daemon got them (debhelper runs the tests with
 * them ignored); nothing the spawner could clear.  Written into @buf.
 */
static const char *ign_mask(const char *hex, char *buf, size_t size)
{
        unsigned long long m;

        check(hex);
        m = strtoull(hex, NULL, 16);
        for (int sig = 32; sig < SIGRTMIN; sig++)
                m &= ~(1ULL << (sig - 1));
        snprintf(buf, size, "%016llx", m);
        return buf;
}

static void check_probe_output(char *out, const struct spawn_result *sr, const struct spawn_env *env)
{
        char expect[256], *p = out, *v;
        char pipe_target[128];

        check_str(next_line(&p, "argc"), "2");
        check_str(next_line(&p, "argv"), (snprintf(expect, sizeof(expect), "0 %s", probe), expect));
        check_str(next_line(&p, "argv"), "1 usb");
        /* Exactly the spawn environment, in order: nothing of ours. */
        for (size_t i = 0; i < env->n; i++)
                check_str(next_line(&p, "env"), env->envp[i]);
        check_str(next_line(&p, "fd"), "0");
        check_str(next_line(&p, "fd"), "1");
        check_str(next_line(&p, "fd"), "2");
        check_str(next_line(&p, "fdlink"), "0 /dev/null");
        v = next_line(&p, "fdlink");
        check(v && strncmp(v, "1 pipe:[", 8) == 0);
        snprintf(pipe_target, sizeof(pipe_target), "2 %s", v + 2);
        check_str(next_line(&p, "fdlink"), pipe_target);
        check_str(next_line(&p, "sigblk"), "0000000000000000");
        check_str(ign_mask(next_line(&p, "sigign"), expect, sizeof(expect)), "0000000000000000");
        check_str(next_line(&p, "sigcgt"), "0000000000000000");
        check_str(next_line(&p, "umask"), "0022");
        v = next_line(&p, "pid");
        check(v && atol(v) == (long)sr->pid);
        v = next_line(&p, "pgrp");
        check(v && atol(v) == (long)sr->pid);
        check(next_line(&p, "end"));
        check_str(p, "stderr works\n");
}

static void test_spawn_contract(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = event_new(kernel_scrambled, NULL);
        struct spawn_result sr = { .pid = -1 };
        struct spawn_env env;
        struct parent_state before;
        char out[16384];
        int extra_fds[4];

        pollute_parent(extra_fds);
        parent_state_get(&before);
        spawn_env_build(ev, &env);
        check_int(spawn_agent(probe, ev->name, &env, &sr), 0);
        parent_state_check(&before);
        check(sr.pid > 0 && sr.pidfd >= 0 && sr.outfd >= 0);
        check(fcntl(sr.pidfd, F_GETFD) & FD_CLOEXEC);
        check(fcntl(sr.outfd, F_GETFD) & FD_CLOEXEC);
        check(fcntl(sr.outfd, F_GETFL) & O_NONBLOCK);

        read_all(sr.outfd, out, sizeof(out));
        if (getenv("TEST_VERBOSE"))
                fputs(out, stderr);
        check(!strstr(out, "HOTPLUGD_TEST_LEAK_MARKER"));
        check_probe_output(out, &sr, &env);
        reap(&sr);
        close(sr.pidfd);
        close(sr.outfd);
        unpollute_parent(extra_fds);
}

/* In a child process with 0, 1 and 2 closed, the pipe lands on them: still the contract. */
static void test_spawn_closed_stdio(void)
{
        static const char *const kernel[] = { "ACTION=add", "DEVPATH=/d", "SUBSYSTEM=usb", "SEQNUM=1", NULL };
        siginfo_t si;
        pid_t pid;

        fflush(stderr);
        pid = fork();
        check(pid >= 0);
        if (pid == 0) {
                _cleanup_(uevent_freep) struct uevent *ev = event_new(kernel, NULL);
                struct spawn_result sr;
                struct spawn_env env;
                char out[16384];
                int err = fcntl(2, F_DUPFD_CLOEXEC, 10);

                close(0);
                close(1);
                close(2);
                spawn_env_build(ev, &env);
                if (spawn_agent(probe, "usb", &env, &sr) < 0)
                        _exit(3);
                read_all(sr.outfd, out, sizeof(out));
                if (sr.outfd > 2 || sr.pidfd > 2)
                        _exit(4); /* not the case this test is about */
                sr.pidfd = fcntl(sr.pidfd, F_DUPFD_CLOEXEC, 10);
                dup2(err, 2); /* from here on check() can report */
                check_probe_output(out, &sr, &env);
                reap(&sr);
                _exit(0);
        }
        check_int(waitid(P_PID, (id_t)pid, &si, WEXITED), 0);
        check_int(si.si_code, CLD_EXITED);
        check_int(si.si_status, 0);
}

static int count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        int n = 0;

        check(d);
        while ((de = readdir(d)))
                n += de->d_name[0] != '.';
        closedir(d);
        return n;
}

static int make_file(const char *path, const char *content, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        if (fd < 0)
                return -errno;
        if (content)
                check(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
        close(fd);
        return chmod(path, mode) < 0 ? -errno : 0;
}

static char tmpdir[64];

static void test_spawn_failures(void)
{
        static const char *const kernel[] = { "ACTION=add", "DEVPATH=/d", "SUBSYSTEM=s", "SEQNUM=1", NULL };
        _cleanup_(uevent_freep) struct uevent *ev = event_new(kernel, NULL);
        struct spawn_result sr = { .pid = 12345, .pidfd = 77, .outfd = 88 };
        struct parent_state state;
        struct spawn_env env;
        char path[128];
        int before = count_fds();

        parent_state_get(&state);
        spawn_env_build(ev, &env);
        snprintf(path, sizeof(path), "%s/missing-agent", tmpdir);
        check_int(spawn_agent(path, "s", &env, &sr), -ENOENT);
        check_no_children();
        parent_state_check(&state);

        snprintf(path, sizeof(path), "%s/not-executable", tmpdir);
        check_int(make_file(path, "#!/bin/sh\nexit 0\n", 0644), 0);
        check_int(spawn_agent(path, "s", &env, &sr), -EACCES);
        check_no_children();

        check_int(spawn_agent(tmpdir, "s", &env, &sr), -EACCES); /* a directory */
        check_no_children();

        snprintf(path, sizeof(path), "%s/garbage", tmpdir);
        check_int(make_file(path, "\x01\x02\x03 not a program\n", 0755), 0);
        check_int(spawn_agent(path, "s", &env, &sr), -ENOEXEC);
        check_no_children();
        parent_state_check(&state);

        /* Untouched on failure, and nothing leaked. */
        check_int(sr.pid, 12345);
        check_int(sr.pidfd, 77);
        check_int(sr.outfd, 88);
        check_int(count_fds(), before);
}

/* ---- hotplug.d listing ---- */

static void mk(const char *rel, mode_t mode)
{
        char p[256];

        snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
        check_int(make_file(p, "#!/bin/sh\n", mode), 0);
}

static void mkd(const char *rel)
{
        char p[256];

        snprintf(p, sizeof(p), "%s/%s", tmpdir, rel);
        check_int(mkdir(p, 0755), 0);
}

/* @paths (@n of them, freed) are DIR/@want..., in that order. */
static void check_paths(const char *dir, char **paths, size_t n, const char *const *want)
{
        char full[256];
        size_t i;

        for (i = 0; want[i]; i++) {
                check(i < n);
                snprintf(full, sizeof(full), "%s/%s", dir, want[i]);
                check_str(paths[i], full);
        }
        check_int(n, i);
        for (i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
}

static void check_list(const char *dir, const char *name, const char *const *want)
{
        char **paths = NULL;
        size_t n = 99;

        check_int(hotplug_d_list(dir, name, &paths, &n), 0);
        check_paths(dir, paths, n, want);
}

/* What hotplug_d_list_explained() passed over: "REL: WHY" lines, REL below the directory listed. */
struct skipped {
        size_t prefix;
        char text[4096];
        size_t len, n;
};

static void on_skipped(const char *path, const char *why, const struct stat *st, void *userdata)
{
        struct skipped *s = userdata;

        check(strlen(path) > s->prefix);
        s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s: %s\n", path + s->prefix, why);
        check(s->len < sizeof(s->text));
        s->n++;
}

/* The same list as hotplug_d_list(), and every entry passed over with its reason. */
static void check_explained(const char *dir, const char *name, const char *const *want, const char *const *skip)
{
        struct skipped s = { .prefix = strlen(dir) + 1 };
        char **paths = NULL;
        size_t n = 99, i;

        check_int(hotplug_d_list_explained(dir, name, on_skipped, &s, &paths, &n), 0);
        check_paths(dir, paths, n, want);
        for (i = 0; skip[i]; i++) {
                char line[256];

                snprintf(line, sizeof(line), "%s\n", skip[i]);
                if (!strstr(s.text, line))
                        fprintf(stderr, "not reported: %s; reported:\n%s", skip[i], s.text);
                check(strstr(s.text, line) != NULL);
        }
        check_int(s.n, i);
}

static void test_hotplug_d(void)
{
        static const char *const want_net[] = {
                "net/B.hotplug",  "net/a.hotplug",    "net/a10.hotplug",    "net/a9.hotplug", "net/b.hotplug",
                "net/link.hotplug", "default/00.hotplug", "default/z.hotplug", NULL,
        };
        static const char *const want_default[] = { "default/00.hotplug", "default/z.hotplug", NULL };
        static const char *const want_none[] = { NULL };
        char dir[128], p[256], **paths = NULL;
        size_t n = 0;

        snprintf(dir, sizeof(dir), "%s/hotplug.d", tmpdir);
        mkd("hotplug.d");
        check_list(dir, "net", want_none); /* neither NAME/ nor default/ exist */
        mkd("hotplug.d/net");
        mkd("hotplug.d/default");
        /* created out of order: readdir order must not matter */
        mk("hotplug.d/net/b.hotplug", 0755);
        mk("hotplug.d/net/a9.hotplug", 0700);
        mk("hotplug.d/net/a10.hotplug", 0755);
        mk("hotplug.d/net/a.hotplug", 0755);
        mk("hotplug.d/net/B.hotplug", 0755);
        mk("hotplug.d/net/noexec.hotplug", 0644);
        mk("hotplug.d/net/.hidden.hotplug", 0755);
        mk("hotplug.d/net/README", 0755);
        mk("hotplug.d/net/c.hotplug.bak", 0755);
        mk("hotplug.d/net/c.hotplugx", 0755);
        mkd("hotplug.d/net/dir.hotplug");
        snprintf(p, sizeof(p), "%s/net/fifo.hotplug", dir);
        check_int(mkfifo(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/net/link.hotplug", dir);
        check_int(symlink("a.hotplug", p), 0);
        snprintf(p, sizeof(p), "%s/net/dangling.hotplug", dir);
        check_int(symlink("nowhere.hotplug", p), 0);
        mk("hotplug.d/default/z.hotplug", 0755);
        mk("hotplug.d/default/00.hotplug", 0755);
        mk("hotplug.d/default/off.hotplug", 0600);

        check_list(dir, "net", want_net);
        check_explained(dir, "net", want_net, (const char *const[]){
                "net/noexec.hotplug: not executable", "net/.hidden.hotplug: hidden (its name starts with '.')",
                "net/README: not named *.hotplug", "net/c.hotplug.bak: not named *.hotplug",
                "net/c.hotplugx: not named *.hotplug", "net/dir.hotplug: not a regular file",
                "net/fifo.hotplug: not a regular file", "net/dangling.hotplug: link target does not exist",
                "default/off.hotplug: not executable", NULL });
        check_explained(dir, "usb", want_default, (const char *const[]){
                "usb: does not exist", "default/off.hotplug: not executable", NULL });
        check_list(dir, "usb", want_default); /* no usb/: default only */
        check_list(dir, "default", want_default); /* listed once */

        snprintf(p, sizeof(p), "%s/nonexistent", tmpdir);
        check_list(p, "net", want_none);

        /* The whole path of DIR: nothing runs when a directory above it, or a link
         * on the way, is one others can change (they could swap the tree). */
        check_int(chmod(tmpdir, 0777), 0);
        check_list(dir, "net", want_none);
        check_int(chmod(tmpdir, 0700), 0);
        mkd("open");
        snprintf(p, sizeof(p), "%s/open", tmpdir);
        check_int(chmod(p, 0777), 0);
        snprintf(p, sizeof(p), "%s/open/hd", tmpdir);
        check_int(symlink(dir, p), 0);
        check_list(p, "net", want_none);
        check_list(dir, "net", want_net);

        /* A NAME that is a file, not a directory, contributes nothing. */
        mk("hotplug.d/plain", 0755);
        check_list(dir, "plain", want_default);

        for (const char *const *bad = (const char *const[]){ "a/b", "/", ".", "..", "", "../net", NULL }; *bad;
             bad++) {
                check_int(hotplug_d_list(dir, *bad, &paths, &n), -EINVAL);
                check(paths == NULL && n == 0);
        }
        /* Names merely containing dots are fine. */
        check_int(hotplug_d_list(dir, "..x", &paths, &n), 0);
        check_int(n, 2);
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
}

static void test_hotplug_d_bound(void)
{
        char dir[128], rel[64], **paths = NULL, want[256];
        size_t n = 0;

        snprintf(dir, sizeof(dir), "%s/many.d", tmpdir);
        mkd("many.d");
        mkd("many.d/big");
        mkd("many.d/mid");
        mkd("many.d/default");
        /* Created in a scrambled order (97 is coprime to the count). */
        for (int k = 0; k < HP_HOTPLUG_D_MAX_FILES + 40; k++) {
                snprintf(rel, sizeof(rel), "many.d/big/f%04d.hotplug", (k * 97) % (HP_HOTPLUG_D_MAX_FILES + 40));
                mk(rel, 0755);
        }
        for (int i = HP_HOTPLUG_D_MAX_FILES - 6; i-- > 0;) {
                snprintf(rel, sizeof(rel), "many.d/mid/m%04d.hotplug", i);
                mk(rel, 0755);
        }
        for (int i = 10; i-- > 0;) {
                snprintf(rel, sizeof(rel), "many.d/default/d%02d.hotplug", i);
                mk(rel, 0755);
        }

        /* Too many in NAME/: the lexically first ones, none of default/. */
        check_int(hotplug_d_list(dir, "big", &paths, &n), 0);
        check_int(n, HP_HOTPLUG_D_MAX_FILES);
        for (size_t i = 0; i < n; i++) {
                snprintf(want, sizeof(want), "%s/big/f%04zu.hotplug", dir, i);
                check_str(paths[i], want);
                free(paths[i]);
        }
        free(paths);

        /* NAME/ nearly full: default/ fills the rest with its first ones. */
        check_int(hotplug_d_list(dir, "mid", &paths, &n), 0);
        check_int(n, HP_HOTPLUG_D_MAX_FILES);
        snprintf(want, sizeof(want), "%s/mid/m%04d.hotplug", dir, HP_HOTPLUG_D_MAX_FILES - 7);
        check_str(paths[HP_HOTPLUG_D_MAX_FILES - 7], want);
        for (size_t i = 0; i < 6; i++) {
                snprintf(want, sizeof(want), "%s/default/d%02zu.hotplug", dir, i);
                check_str(paths[HP_HOTPLUG_D_MAX_FILES - 6 + i], want);
        }
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

int main(int argc, char **argv)
{
        if (argc < 2 || argv[1][0] != '/') {
                fprintf(stderr, "usage: %s /path/to/test-agent-probe\n", argv[0]);
                return 2;
        }
        probe = argv[1];
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-spawner.%ld.XXXXXX", (long)getpid());
        check(mkdtemp(tmpdir));

        run_test(test_env_order);
        run_test(test_env_additions);
        run_test(test_env_full);
        run_test(test_env_refused);
        run_test(test_spawn_contract);
        run_test(test_spawn_closed_stdio);
        run_test(test_spawn_failures);
        run_test(test_hotplug_d);
        run_test(test_hotplug_d_bound);

        check_int(nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
        return 0;
}
