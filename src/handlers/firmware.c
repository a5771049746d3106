/* SPDX-License-Identifier: MIT */
/*
 * firmware: FIRMWARE and TIMEOUT pass through (a missing TIMEOUT is read
 * from class/firmware/timeout).  With handler_config.firmware_loader the
 * handler also answers the kernel's fallback request itself, as 2.6
 * firmware.agent did: for an "add" with FIRMWARE=NAME it looks for NAME in
 * each directory of handler_config.firmware_path in turn, writes "1" to
 * the device's "loading", the file to "data" and "0" to "loading" (or "-1"
 * if the copy failed), and then drops the event: no agent runs for a
 * request already answered.  When no file matches, the event goes to the
 * agents as usual, with HANDLER_FIRMWARE_MISSING_KEY=1 added: once they
 * are done, the loop fails a request still open (loop/observe-firmware.c),
 * so that the driver does not wait out the kernel's fallback timeout.
 * filter() tells add_env() of the same event through the handler's data
 * (the SEQNUM it found nothing for).  NAME must be a relative path without
 * "." or "..".
 *
 * NAME is opened with openat2(RESOLVE_BENEATH) under each directory: a
 * symbolic link inside the tree is followed, one that leads out of it is
 * refused.  O_NONBLOCK keeps a FIFO from blocking the open; anything but a
 * regular file, and files above HP_FIRMWARE_MAX_BYTES, are refused.  Each
 * refusal is a log line, and the search goes on in the next directory.
 *
 * The copy runs in a child process (forked twice, so nobody has to reap
 * it later): the event loop only opens and checks the file, writes "1" to
 * "loading" and goes on.  The child copies at most the size the file had
 * when it was checked; if the file then has more bytes, or fewer, it
 * changed while being copied and the request fails ("loading" -1).
 *
 * A fork without exec holds every descriptor of the daemon, O_CLOEXEC or
 * not (the uevent socket, the control listener and its clients, epoll,
 * signalfd, agents' pipes).  The copy keeps 0-2, the device directory and
 * the file (moved to 3 and 4), and closes the rest before anything else.
 * The journal's socket goes with them: its log lines go to stderr (under
 * systemd, the journal's stream).
 *
 * In a dry run (handler_config.dry_run: hotplugd -n, a dry-run replay,
 * hotplugctl test) the file is looked for and checked the same way, the
 * file and its size are logged, and nothing is written to the device: the
 * verdict is the one a real run would reach.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "handlers/builtin.h"
#include "shared/log.h"
#include "shared/sysfs.h"

static const char *const firmware_subsystems[] = { "firmware", NULL };

/* The handler's data: the event filter() searched for last and found nothing for. */
struct firmware_state {
        bool missing;
        uint64_t seqnum;
};

/* Open @name below @rootfd; links may not lead out of it, a FIFO does not block. */
static int open_beneath(int rootfd, const char *name)
{
        struct open_how how = {
                .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        int fd = (int)syscall(SYS_openat2, rootfd, name, &how, sizeof(how));

        return fd < 0 ? negative_errno() : fd; /* -ENOSYS before Linux 5.6: nothing is loaded */
}

/*
 * Open @name in the first directory of @search that has it; -ENOENT if
 * none.  @ret_root (PATH_MAX bytes) receives that directory.
 */
static int firmware_open(const struct hotplugd_host *host, const char *search, const char *name, size_t *ret_size,
                         char *ret_root)
{
        if (!sysfs_path_valid(name))
                return -EINVAL;
        for (const char *p = search; *p;) {
                size_t n = strcspn(p, ":");
                char root[4096];
                struct stat st;

                if (n > 0 && n < sizeof(root)) {
                        _cleanup_close_ int rootfd = -1, fd = -1;

                        memcpy(root, p, n);
                        root[n] = '\0';
                        rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                        fd = rootfd >= 0 ? open_beneath(rootfd, name) : -ENOENT;
                        if (fd == -ENOSYS)
                                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s: no openat2() (Linux 5.6); not loaded",
                                          name);
                        else if (fd == -EXDEV || fd == -ELOOP)
                                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s/%s: a link that leads out of %s; refused",
                                          root, name, root);
                        else if (fd >= 0 && fstat(fd, &st) < 0)
                                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s/%s: cannot stat: %s; refused", root,
                                          name, strerror(errno));
                        else if (fd >= 0 && !S_ISREG(st.st_mode))
                                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s/%s: not a regular file; refused", root,
                                          name);
                        else if (fd >= 0 && st.st_size > HP_FIRMWARE_MAX_BYTES)
                                host->log(host, HOTPLUGD_LOG_ERR,
                                          "firmware %s/%s: %lld bytes, more than HP_FIRMWARE_MAX_BYTES (%d); refused",
                                          root, name, (long long)st.st_size, HP_FIRMWARE_MAX_BYTES);
                        else if (fd >= 0) {
                                *ret_size = (size_t)st.st_size;
                                memcpy(ret_root, root, n + 1);
                                return take_fd(&fd);
                        }
                }
                p += n;
                if (*p == ':')
                        p++;
        }
        return -ENOENT;
}

static int write_str(int dirfd, const char *attr, const char *s)
{
        _cleanup_close_ int fd = openat(dirfd, attr, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        size_t n = strlen(s);

        if (fd < 0)
                return negative_errno();
        return write(fd, s, n) == (ssize_t)n ? 0 : -EIO;
}

/* Copy exactly @size bytes; -EFBIG if @src has more by then, -ENODATA if it has fewer. */
static int copy_data(int dirfd, int src, size_t size)
{
        _cleanup_close_ int dst = openat(dirfd, "data", O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        static char buf[65536];
        size_t left = size;
        ssize_t n;

        if (dst < 0)
                return negative_errno();
        (void)fcntl(src, F_SETFL, 0); /* O_NONBLOCK was for the open only */
        while (left > 0 && (n = read(src, buf, left < sizeof(buf) ? left : sizeof(buf))) > 0) {
                left -= (size_t)n;
                for (ssize_t o = 0; o < n;) {
                        ssize_t w = write(dst, buf + o, (size_t)(n - o));
                        if (w <= 0)
                                return w < 0 ? negative_errno() : -EIO;
                        o += w;
                }
        }
        if (left > 0)
                return n < 0 ? negative_errno() : -ENODATA;
        n = read(src, buf, 1);
        return n < 0 ? negative_errno() : n > 0 ? -EFBIG : 0;
}

/*
 * Keep, of the descriptors from 3 up, only @fds: moved to 3, 4, ... (@fds
 * updated), every other one closed.  Each is first copied above all the
 * targets, so that no move lands on one still to be moved.
 * Return: 0, or negative errno (@fds then name each where it is now).
 */
static int keep_only(int *fds, size_t n)
{
        int low = 3, high = 3 + (int)n;

        for (size_t i = 0; i < n; i++) {
                int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, high);

                if (fd < 0)
                        return negative_errno();
                fds[i] = fd;
        }
        for (size_t i = 0; i < n; i++) {
                if (dup3(fds[i], low + (int)i, O_CLOEXEC) < 0)
                        return negative_errno();
                fds[i] = low + (int)i;
        }
        closefrom(high);
        return 0;
}

/* The copy, in the grandchild: the kernel's "data" and the final "loading". */
static _Noreturn void copy_child(const struct hotplugd_host *host, int dirfd, int src, size_t size, const char *name)
{
        int fds[2] = { dirfd, src };
        sigset_t none;
        int r;

        r = keep_only(fds, ELEMENTSOF(fds));
        dirfd = fds[0];
        src = fds[1];
        log_open(LOG_TARGET_STDERR, NULL); /* the journal's socket may be closed */
        if (r < 0) {
                (void)write_str(dirfd, "loading", "-1");
                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s: loading failed: cannot close the daemon's "
                          "descriptors: %s", name, strerror(-r));
                _exit(1);
        }
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_IGN); /* a closed sink is an error to report, not a silent death */
        r = copy_data(dirfd, src, size);
        if (r < 0) {
                (void)write_str(dirfd, "loading", "-1");
                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s: loading failed: %s", name,
                          r == -EFBIG || r == -ENODATA ? "the file changed while being copied" : strerror(-r));
                _exit(1);
        }
        r = write_str(dirfd, "loading", "0");
        host->log(host, r < 0 ? HOTPLUGD_LOG_ERR : HOTPLUGD_LOG_INFO, "firmware %s: %zu bytes %s", name, size,
                  r < 0 ? "copied, but completing failed" : "loaded");
        _exit(r < 0);
}

/* Start the copy in a process of its own (forked twice: no child of ours stays behind); 0 or negative errno. */
static int copy_start(const struct hotplugd_host *host, int dirfd, int src, size_t size, const char *name)
{
        int status;
        pid_t pid = fork();

        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                pid_t grandchild = fork();

                if (grandchild == 0)
                        copy_child(host, dirfd, src, size, name);
                _exit(grandchild < 0 ? 1 : 0);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EAGAIN;
}

/* Return 1 if the request was answered, 0 if no file matched, negative errno. */
static int firmware_load(const struct hotplugd_host *host, const struct hotplugd_event *e, const char *name)
{
        _cleanup_close_ int dirfd = -1, src = -1;
        char root[4096];
        size_t size = 0;
        int r;

        src = firmware_open(host, e->cfg->firmware_path, name, &size, root);
        if (src < 0)
                return src == -ENOENT || src == -EINVAL ? 0 : src;
        if (e->cfg->dry_run) {
                host->log(host, HOTPLUGD_LOG_NOTICE, "firmware %s: would load %s/%s (%zu bytes); dry run, nothing "
                          "written", name, root, name, size);
                return 1;
        }
        dirfd = sysfs_open_dir(e->sysfs_fd, e->ev->devpath);
        if (dirfd < 0)
                return dirfd;
        r = write_str(dirfd, "loading", "1");
        if (r >= 0)
                r = copy_start(host, dirfd, src, size, name);
        if (r < 0) {
                (void)write_str(dirfd, "loading", "-1");
                host->log(host, HOTPLUGD_LOG_ERR, "firmware %s: loading failed: %s", name, strerror(-r));
        }
        return 1;
}

static int firmware_init(const struct hotplugd_host *host, void **data)
{
        *data = calloc(1, sizeof(struct firmware_state));
        return *data ? 0 : -ENOMEM;
}

static void firmware_done(void *data)
{
        free(data);
}

static int firmware_filter(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e)
{
        struct firmware_state *s = data;
        const char *name = builtin_get(e, "FIRMWARE");
        int r;

        s->missing = false;
        if (!e->cfg->firmware_loader || !name || strcmp(e->ev->action, "add") != 0 || e->sysfs_fd < 0)
                return HOTPLUGD_KEEP;
        r = firmware_load(host, e, name);
        if (r > 0)
                return HOTPLUGD_DROP;
        *s = (struct firmware_state){ .missing = r == 0, .seqnum = e->ev->seqnum };
        return HOTPLUGD_KEEP;
}

static int firmware_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                            struct hotplugd_env *env)
{
        struct firmware_state *s = data;
        unsigned long timeout;

        if (s->missing && s->seqnum == e->ev->seqnum) {
                s->missing = false;
                if (handler_env_add(env, HANDLER_FIRMWARE_MISSING_KEY, "1") < 0)
                        return -ENOMEM;
        }
        if (builtin_get(e, "TIMEOUT") || builtin_read_ulong(e, "/class/firmware", "timeout", 10, &timeout) < 0)
                return 0;
        return handler_env_addf(env, "TIMEOUT", "%lu", timeout);
}

const struct hotplugd_handler builtin_firmware = {
        BUILTIN_HANDLER("firmware", firmware_subsystems),
        .init = firmware_init,
        .done = firmware_done,
        .filter = firmware_filter,
        .add_env = firmware_add_env,
};
