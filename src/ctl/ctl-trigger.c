/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl trigger [--action ACTION] [--subsystem-match S]...
 *                    [--subsystem-nomatch S]... [--sysname-match N]...
 *                    [--settle [--done-file PATH]] [--timeout SEC] [--dry-run]
 *                    [--verbose] [--socket PATH] [DEVICE...]
 *
 * Coldplug: walk the device tree (ctl/trigger-walk.h), or take the DEVICEs
 * named, each checked against the match options, and write "ACTION UUID"
 * into each device's uevent file, one fresh UUID per device (the kernel
 * sends it back as SYNTH_UUID).  The walk's devices are written as they are
 * found, published to the writers in chunks.  With --settle each chunk's
 * UUIDs are given to the daemon (watch-uuids) before any of its files is
 * written, so none can be processed unnoticed, and trigger returns once the
 * daemon has processed exactly those events.  Devices are handled in
 * batches of at most HP_CONTROL_UUIDS_MAX.  --done-file PATH is removed at
 * the start and made anew, whole (a new file renamed over PATH), only once
 * every event was processed and every write succeeded: an init script that
 * has no service manager to order it after the coldplug waits for PATH.
 * On a terminal a progress line is kept up to date on stderr.
 *
 * Up to --jobs threads write at once (the kernel builds and sends the event
 * inside write(2), so one writer leaves the other CPUs idle), in the order
 * ctl/trigger-order.h keeps: a device after its ancestors in the list, and
 * where the list leaves path order, after everything before it.  Errors and
 * --verbose lines are printed afterwards, in the list's order.
 *
 * Exit: 0, 1 (a device named is not one, or some write failed), 2 (settle
 * timed out), 3 (no daemon), 64.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "ctl/trigger-order.h"
#include "ctl/trigger-walk.h"
#include "shared/bounds.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "shared/number.h"
#include "shared/sysfs.h"
#include "control/uuid-set.h"

#define MAX_MATCHES 64
#define SYSFS_ROOT "/sys"
#define TRIGGER_DEFAULT_TIMEOUT_SEC 120
/* getopt code of --done-file, which has no short letter (apart from CTL_OPT_SOCKET's). */
#define OPT_DONE_FILE 0x7f10

/* Repeated options: --subsystem-match, --subsystem-nomatch, --sysname-match. */
struct patterns {
        const char *p[MAX_MATCHES];
        size_t n;
};

/*
 * The writers of the current batch.  The main thread appends devices and
 * publishes them (@to); writers claim them in order (@next).  Every field
 * under @lock; a device's entries in struct trigger are written before it is
 * published and only read after.
 */
struct writers {
        size_t next;                /* the next device to claim */
        size_t to;                  /* devices published */
        size_t prefix;              /* every device below it has been written */
        size_t written;             /* devices written, for the progress line */
        unsigned waiting;           /* writers waiting for an earlier write */
        bool closed;                /* nothing more comes in this batch */
        bool *done;                 /* of each device */
        pthread_t threads[HP_TRIGGER_JOBS_MAX];
        size_t n_threads;           /* running; 0: none started for this batch */
        pthread_mutex_t lock;
        pthread_cond_t cond;
};

struct trigger {
        const char *action;
        struct patterns match, nomatch, sysname;
        char **devices;             /* the DEVICE arguments (borrowed from argv) */
        size_t n_devices;
        bool settle, dry_run, verbose, tty;
        const char *done_file;      /* --done-file, or NULL */
        uint64_t timeout_ms;
        unsigned jobs;              /* writers at once, 1..HP_TRIGGER_JOBS_MAX */
        /* The current batch: at most HP_CONTROL_UUIDS_MAX devices, index 0..n. */
        char **paths;               /* syspaths, owned */
        size_t n;
        char (*uuid)[UUID_STRING_MAX];
        bool *failed;
        int *err;                   /* errno of each device's write, 0 if it was written */
        size_t *parent;             /* trigger_parent() of each, in its segment */
        size_t *segment;            /* trigger_segment() of each */
        size_t base;                /* devices of the batches before */
        size_t chunk;               /* devices to gather before the next publish */
        size_t failures;
        int status;                 /* a batch's exit status that ended the walk */
        struct writers w;
        int fd;                     /* control connection with --settle, else -1 */
};

static void free_paths(struct trigger *t)
{
        for (size_t i = 0; i < t->n; i++)
                free(t->paths[i]);
        t->n = 0;
}

static void trigger_done(struct trigger *t)
{
        if (t->paths)
                free_paths(t);
        free(t->paths);
        free(t->uuid);
        free(t->failed);
        free(t->err);
        free(t->parent);
        free(t->segment);
        free(t->w.done);
        pthread_cond_destroy(&t->w.cond);
        pthread_mutex_destroy(&t->w.lock);
        safe_close(t->fd);
}

/* The batch arrays, HP_CONTROL_UUIDS_MAX entries each (untouched pages cost nothing). */
static int trigger_alloc(struct trigger *t)
{
        size_t cap = HP_CONTROL_UUIDS_MAX;

        t->paths = calloc(cap, sizeof(*t->paths));
        t->uuid = calloc(cap, sizeof(*t->uuid));
        t->failed = calloc(cap, sizeof(*t->failed));
        t->err = calloc(cap, sizeof(*t->err));
        t->parent = calloc(cap, sizeof(*t->parent));
        t->segment = calloc(cap, sizeof(*t->segment));
        t->w.done = calloc(cap, sizeof(*t->w.done));
        if (!t->paths || !t->uuid || !t->failed || !t->err || !t->parent || !t->segment || !t->w.done)
                return -ENOMEM;
        return 0;
}

static bool any_matches(const struct patterns *ps, const char *s)
{
        for (size_t i = 0; i < ps->n; i++)
                if (fnmatch(ps->p[i], s, 0) == 0)
                        return true;
        return false;
}

/* Does a device pass the match options?  Its sysname as libudev has it: '!' for '/'. */
static bool passes(const struct trigger *t, const char *syspath, const char *subsystem)
{
        char sysname[NAME_MAX + 1];

        if ((t->match.n && !any_matches(&t->match, subsystem)) || any_matches(&t->nomatch, subsystem))
                return false;
        if (!t->sysname.n)
                return true;
        snprintf(sysname, sizeof(sysname), "%s", sysfs_basename(syspath));
        for (char *c = sysname; (c = strchr(c, '!')); c++)
                *c = '/';
        return any_matches(&t->sysname, sysname);
}

static void progress(const struct trigger *t, const char *what, size_t done, size_t total, bool last)
{
        if (!t->tty)
                return;
        fprintf(stderr, "\r\033[K%s: trigger: %s %zu/%zu", ctl_program, what, done, total);
        if (last)
                fputc('\n', stderr);
}

/* Send "VERB UUID..." for [from, to) in as few packets as fit; expect "ok" to each. */
static int send_uuids(struct trigger *t, const char *verb, size_t from, size_t to, bool only_failed)
{
        char req[HP_CONTROL_REQUEST_MAX + 1], rec[CTL_RECORD_SIZE];
        size_t len = 0;
        int r;

        for (size_t i = from; i <= to; i++) {
                bool flush = i == to || len + 1 + UUID_STRING_MAX > HP_CONTROL_REQUEST_MAX;

                if (flush && len > strlen(verb)) {
                        r = ctl_request("trigger", t->fd, req, rec, -1);
                        if (r != CTL_EXIT_OK)
                                return r;
                        if (!ctlmsg_is(rec, "ok"))
                                return ctlmsg_is(rec, "error") ? ctl_report_error("trigger", rec)
                                                               : CTL_EXIT_FAILURE;
                        len = 0;
                }
                if (i == to)
                        break;
                if (len == 0)
                        len = (size_t)snprintf(req, sizeof(req), "%s", verb);
                if (only_failed && !t->failed[i])
                        continue;
                len += (size_t)snprintf(req + len, sizeof(req) - len, " %s", t->uuid[i]);
        }
        return CTL_EXIT_OK;
}

/* Write "ACTION UUID" into device @i's uevent file. Return: 0 or the errno. */
static int write_one(const struct trigger *t, size_t i)
{
        char path[4096], line[64 + UUID_STRING_MAX];
        int len = snprintf(line, sizeof(line), "%s %s", t->action, t->uuid[i]);
        _cleanup_close_ int fd = -1;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/uevent", t->paths[i]);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        n = write(fd, line, (size_t)len);
        return n < 0 ? errno : n != len ? EIO : 0;
}

/* May device @i be written now: its segment's predecessors and its parent are. */
static bool may_write(const struct trigger *t, size_t i)
{
        size_t p = t->parent[i];

        return t->w.prefix >= t->segment[i] && (p == TRIGGER_NO_PARENT || t->w.done[p]);
}

/* One writer: claim the next device published, wait until it may be written, write it. */
static void *writer(void *userdata)
{
        struct trigger *t = userdata;
        struct writers *w = &t->w;

        pthread_mutex_lock(&w->lock);
        for (;;) {
                size_t i;
                int e;

                while (w->next >= w->to && !w->closed)
                        pthread_cond_wait(&w->cond, &w->lock);
                if (w->next >= w->to)
                        break;
                i = w->next++;
                while (!may_write(t, i)) {
                        w->waiting++;
                        pthread_cond_wait(&w->cond, &w->lock);
                        w->waiting--;
                }
                pthread_mutex_unlock(&w->lock);
                e = write_one(t, i);
                pthread_mutex_lock(&w->lock);
                t->err[i] = e;
                w->done[i] = true;
                while (w->prefix < w->to && w->done[w->prefix])
                        w->prefix++;
                if (w->waiting)
                        pthread_cond_broadcast(&w->cond);
                if (++w->written % 16 == 0)
                        progress(t, "triggered", t->base + w->written, t->base + w->to, false);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

/*
 * Hand the devices gathered since the last call to the writers, after
 * telling the daemon their UUIDs (--settle), so that none is processed
 * unnoticed.  The first call of a batch starts the writers.
 * Return: exit status.
 */
static int publish(struct trigger *t)
{
        struct writers *w = &t->w;
        int r;

        if (w->to == t->n)
                return CTL_EXIT_OK;
        if (t->settle && (r = send_uuids(t, "watch-uuids", w->to, t->n, false)) != CTL_EXIT_OK)
                return r;
        /* Too few threads (none at all) only means fewer writes at once: the main thread writes too, at the end. */
        while (w->n_threads < t->jobs && pthread_create(&w->threads[w->n_threads], NULL, writer, t) == 0)
                w->n_threads++;
        pthread_mutex_lock(&w->lock);
        w->to = t->n;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        return CTL_EXIT_OK;
}

/* No more devices in this batch: help write what is left, then wait for the writers. */
static void close_writers(struct trigger *t)
{
        struct writers *w = &t->w;

        pthread_mutex_lock(&w->lock);
        w->closed = true;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        (void)writer(t);
        for (size_t k = 0; k < w->n_threads; k++)
                pthread_join(w->threads[k], NULL);
        w->n_threads = 0;
}

/* Name the failed writes and, with --verbose, the devices written, in the list's order. */
static size_t report_writes(struct trigger *t)
{
        size_t failures = 0;
        char esc[8192];

        for (size_t i = 0; i < t->w.to; i++) {
                if (t->err[i]) {
                        char path[4096];

                        t->failed[i] = true;
                        failures++;
                        if (t->tty)
                                fputs("\r\033[K", stderr);
                        snprintf(path, sizeof(path), "%s/uevent", t->paths[i]);
                        ctl_err("trigger", "%s: %s", escape_cstr(path, esc, sizeof(esc)),
                                t->err[i] == EINVAL ? "the kernel refused the action" : strerror(t->err[i]));
                } else if (t->verbose) {
                        printf("%s %s\n", escape_cstr(t->paths[i], esc, sizeof(esc)), t->uuid[i]);
                }
        }
        return failures;
}

/* Print the devices whose UUID the daemon did not see. */
static void report_missing(const struct trigger *t, const char *rec)
{
        char missing[HP_CONTROL_RECORD_MAX], esc[8192];

        if (ctlmsg_get(rec, "missing", missing, sizeof(missing)) < 0)
                return;
        for (size_t i = 0; i < t->n; i++)
                if (!t->failed[i] && strstr(missing, t->uuid[i]))
                        fprintf(stderr, "  not processed: %s (SYNTH_UUID=%s)\n",
                                escape_cstr(t->paths[i], esc, sizeof(esc)), t->uuid[i]);
}

/* wait-uuids for the current batch; reads progress records. Return: exit status. */
static int wait_batch(struct trigger *t, bool last)
{
        char req[64], rec[CTL_RECORD_SIZE];
        uint64_t done = 0, total = 0;
        int r;

        snprintf(req, sizeof(req), "wait-uuids %" PRIu64, t->timeout_ms);
        r = ctl_request("trigger", t->fd, req, rec, -1);
        while (r == CTL_EXIT_OK && ctlmsg_is(rec, "progress")) {
                (void)ctlmsg_get_u64(rec, "done", &done);
                (void)ctlmsg_get_u64(rec, "total", &total);
                progress(t, "processed", t->base + done, t->base + t->n, false);
                r = ctl_recv(t->fd, rec, -1) < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
        }
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "ok")) {
                progress(t, "processed", t->base + t->n, t->base + t->n, last);
                return CTL_EXIT_OK;
        }
        if (ctlmsg_is(rec, "timeout")) {
                (void)ctlmsg_get_u64(rec, "done", &done);
                (void)ctlmsg_get_u64(rec, "total", &total);
                if (t->tty)
                        fputs("\r\033[K", stderr);
                ctl_err("trigger", "timed out, %" PRIu64 " of %" PRIu64 " events not processed", total - done, total);
                report_missing(t, rec);
                return CTL_EXIT_TIMEOUT;
        }
        if (ctlmsg_is(rec, "error"))
                return ctl_report_error("trigger", rec);
        ctl_err("trigger", "unexpected reply");
        return CTL_EXIT_FAILURE;
}

/*
 * End the current batch: publish the rest, wait for every write, report,
 * forget the UUIDs of failed writes and (--settle) wait until the daemon
 * processed the others; then start an empty batch.  @last: no batch follows.
 * Return: exit status.
 */
static int batch_end(struct trigger *t, bool last)
{
        int r = publish(t);
        size_t f;

        close_writers(t);
        f = report_writes(t);
        t->failures += f;
        progress(t, "triggered", t->base + t->w.to, t->base + t->w.to, last && !t->settle);
        if (r == CTL_EXIT_OK && t->settle && f > 0)
                r = send_uuids(t, "forget-uuids", 0, t->w.to, true);
        if (r == CTL_EXIT_OK && t->settle && t->w.to > 0)
                r = wait_batch(t, last);
        t->base += t->n;
        free_paths(t);
        memset(t->w.done, 0, t->w.to * sizeof(*t->w.done));
        memset(t->failed, 0, t->w.to * sizeof(*t->failed));
        t->w.next = t->w.to = t->w.prefix = t->w.written = 0;
        t->w.closed = false;
        return r;
}

/*
 * Add the device @syspath to the batch (ending the batch first if it is
 * full); publish what was gathered once there is a chunk of it.  With
 * --dry-run, print it instead.  Return: exit status.
 */
static int device_add(struct trigger *t, const char *syspath, bool publish_now)
{
        char esc[8192];
        size_t i;
        int r;

        if (t->dry_run) {
                printf("%s\n", escape_cstr(syspath, esc, sizeof(esc)));
                return CTL_EXIT_OK;
        }
        if (t->n == HP_CONTROL_UUIDS_MAX && (r = batch_end(t, false)) != CTL_EXIT_OK)
                return r;
        i = t->n;
        t->paths[i] = strdup(syspath);
        if (!t->paths[i]) {
                ctl_err("trigger", "%s", strerror(ENOMEM));
                return CTL_EXIT_FAILURE;
        }
        t->n++;
        if ((r = uuid_random(t->uuid[i])) < 0) {
                ctl_err("trigger", "no random bytes: %s", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        t->segment[i] = trigger_segment(t->paths, i, i > 0 ? t->segment[i - 1] : 0);
        t->parent[i] = trigger_parent(t->paths, t->segment[i], i);
        if (!publish_now || t->n - t->w.to < t->chunk)
                return CTL_EXIT_OK;
        t->chunk = MIN(t->chunk * 2, (size_t)HP_TRIGGER_PUBLISH_MAX);
        return publish(t);
}

/* trigger_walk()'s callback: each device the match options select. */
static int walked(void *userdata, const char *syspath, const char *subsystem)
{
        struct trigger *t = userdata;

        if (!passes(t, syspath, subsystem))
                return 0;
        t->status = device_add(t, syspath, true);
        return t->status == CTL_EXIT_OK ? 0 : -ECANCELED;
}

/*
 * The DEVICEs named, each once, in the order given, that pass the match
 * options as the walk's would.  All are checked before any is written.
 * Return: exit status (CTL_EXIT_FAILURE after naming a DEVICE that is not one).
 */
static int named_devices(struct trigger *t)
{
        char devpath[PATH_MAX], syspath[PATH_MAX + sizeof(SYSFS_ROOT)], subsystem[PATH_MAX];
        _cleanup_close_ int rootfd = sysfs_open_root(SYSFS_ROOT);
        char **take = calloc(MAX(t->n_devices, (size_t)1), sizeof(*take));
        size_t n = 0;
        int r = CTL_EXIT_OK;

        if (!take) {
                ctl_err("trigger", "%s", strerror(ENOMEM));
                return CTL_EXIT_FAILURE;
        }

        for (size_t i = 0; r == CTL_EXIT_OK && i < t->n_devices; i++) {
                _cleanup_close_ int fd = -1;
                bool seen = false;

                if (ctl_device("trigger", SYSFS_ROOT, t->devices[i], devpath, sizeof(devpath)) < 0) {
                        r = CTL_EXIT_FAILURE;
                        break;
                }
                snprintf(syspath, sizeof(syspath), SYSFS_ROOT "%s", devpath);
                for (size_t k = 0; k < n && !seen; k++)
                        seen = strcmp(take[k], syspath) == 0;
                /* No subsystem link (a module, say): only a --subsystem-match can refuse it. */
                fd = rootfd < 0 ? rootfd : sysfs_open_dir(rootfd, devpath);
                if (fd < 0 || sysfs_link_name(fd, devpath, "subsystem", subsystem, sizeof(subsystem)) < 0)
                        subsystem[0] = '\0';
                if (seen || !passes(t, syspath, subsystem))
                        continue;
                if ((take[n] = strdup(syspath))) {
                        n++;
                } else {
                        ctl_err("trigger", "%s", strerror(ENOMEM));
                        r = CTL_EXIT_FAILURE;
                }
        }
        for (size_t k = 0; k < n; k++) {
                if (r == CTL_EXIT_OK)
                        r = device_add(t, take[k], false);
                free(take[k]);
        }
        free(take);
        return r;
}

/* --done-file: "@n\n" (the events triggered) into a new file beside @path, mode 0644, renamed over it. */
static int done_file_write(const char *path, size_t n)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%zu\n", n), r = 0;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        if (fchmod(fd, 0644) < 0)
                r = negative_errno();
        else if (write(fd, buf, (size_t)len) != len)
                r = errno > 0 ? negative_errno() : -EIO;
        else if (rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

/* The end of a coldplug that succeeded: --done-file made.  Return: exit status. */
static int done_file_make(const struct trigger *t)
{
        char esc[4 * PATH_MAX];
        int r;

        if (!t->done_file || t->dry_run)
                return CTL_EXIT_OK;
        r = done_file_write(t->done_file, t->base);
        if (r >= 0)
                return CTL_EXIT_OK;
        ctl_err("trigger", "cannot make --done-file %s: %s", escape_cstr(t->done_file, esc, sizeof(esc)),
                strerror(-r));
        return CTL_EXIT_FAILURE;
}

/* A coldplug starts: a --done-file of an earlier one is removed.  Return: exit status. */
static int done_file_remove(const struct trigger *t)
{
        char esc[4 * PATH_MAX];

        if (!t->done_file || t->dry_run || unlink(t->done_file) == 0 || errno == ENOENT)
                return CTL_EXIT_OK;
        ctl_err("trigger", "cannot remove the old --done-file %s: %s",
                escape_cstr(t->done_file, esc, sizeof(esc)), strerror(errno));
        return CTL_EXIT_FAILURE;
}

static const char help[] =
        "trigger [OPTIONS] [DEVICE...]\n\n"
        "Coldplug: make the kernel send again the events of devices that exist, by\n"
        "writing \"ACTION UUID\" into each device's uevent file (the event carries\n"
        "SYNTH_UUID=UUID). Without DEVICEs, every device the match options select; with\n"
        "DEVICEs (/sys/... or /devices/..., links resolved), those that pass them.\n\n"
        "Options:\n"
        "  -a, -c, --action=ACTION\n"
        "                         the action to request (default add); one of\n"
        "                         " CTL_KERNEL_ACTIONS "\n"
        "                         (-c as udevadm trigger spells it)\n"
        "  -s, --subsystem-match=SUBSYSTEM\n"
        "                         only devices of this subsystem (shell pattern)\n"
        "  -S, --subsystem-nomatch=SUBSYSTEM\n"
        "                         not devices of this subsystem (shell pattern)\n"
        "  -y, --sysname-match=NAME\n"
        "                         only devices with this name (shell pattern, e.g. veth*)\n"
        "                         Each match option may be given up to " CTL_STR(MAX_MATCHES) " times; a device\n"
        "                         passes if it matches any -s, no -S and any -y.\n"
        "  -n, --dry-run          print the devices that would be triggered, write nothing\n"
        "  -v, --verbose          print each device triggered and its UUID\n"
        "  -j, --jobs=N           write up to N uevent files at once, 1 to " CTL_STR(HP_TRIGGER_JOBS_MAX) "\n"
        "                         (default " CTL_STR(HP_TRIGGER_JOBS_DEFAULT) "); a device's event is still sent after\n"
        "                         its ancestors' and, where the list leaves path order,\n"
        "                         after every event before it; 1: in the list's order\n"
        "  -w, --settle           then wait until the daemon has processed exactly these\n"
        "                         events\n"
        "      --done-file=PATH   with --settle, remove PATH first and make it anew once\n"
        "                         every event was processed and every write succeeded\n"
        "                         (it holds the number of events); init scripts wait for it\n"
        "  -t, --timeout=SEC      with --settle, give up after SEC seconds, 0 to\n"
        "                         " CTL_STR(HP_CONTROL_TIMEOUT_MAX_SEC) ", fractions allowed (default "
        CTL_STR(TRIGGER_DEFAULT_TIMEOUT_SEC) ")\n"
        CTL_HELP_SOCKET "                         (with --settle)\n"
        CTL_HELP_HELP "\n"
        "Exit status: 0 triggered (and processed), 1 a DEVICE is not a device (nothing\n"
        "written) or a write failed, 2 timed out, 3 no daemon (or refused), 64 usage.\n";

static int add_pattern(struct patterns *ps, const char *option, const char *value)
{
        if (ps->n == MAX_MATCHES)
                return ctl_usage_error("trigger", "%s given more than %d times", option, MAX_MATCHES);
        ps->p[ps->n++] = value;
        return CTL_EXIT_OK;
}

/* Return: CTL_RUN, or the exit status (CTL_EXIT_OK after --help). */
static int parse_args(struct trigger *t, int argc, char *argv[])
{
        static const struct option opts[] = {
                { "action", required_argument, NULL, 'a' },
                { "subsystem-match", required_argument, NULL, 's' },
                { "subsystem-nomatch", required_argument, NULL, 'S' },
                { "sysname-match", required_argument, NULL, 'y' },
                { "settle", no_argument, NULL, 'w' },
                { "timeout", required_argument, NULL, 't' },
                { "dry-run", no_argument, NULL, 'n' },
                { "verbose", no_argument, NULL, 'v' },
                { "jobs", required_argument, NULL, 'j' },
                { "done-file", required_argument, NULL, OPT_DONE_FILE },
                CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "trigger", "a:c:s:S:y:wt:nvj:h", opts, help, "DEVICE..." };
        int c, r = CTL_EXIT_OK;

        while (r == CTL_EXIT_OK && (c = ctl_getopt(&g, argc, argv)) >= 0) {
                switch (c) {
                case 'a':
                case 'c': /* udevadm trigger's spelling */
                        r = ctl_check_action("trigger", optarg);
                        t->action = optarg;
                        break;
                case 's':
                        r = add_pattern(&t->match, "--subsystem-match", optarg);
                        break;
                case 'S':
                        r = add_pattern(&t->nomatch, "--subsystem-nomatch", optarg);
                        break;
                case 'y':
                        r = add_pattern(&t->sysname, "--sysname-match", optarg);
                        break;
                case 'w':
                        t->settle = true;
                        break;
                case OPT_DONE_FILE:
                        t->done_file = optarg;
                        r = optarg[0] ? CTL_EXIT_OK : ctl_bad_value("trigger", "--done-file", optarg, "a path");
                        break;
                case 't':
                        r = ctl_parse_seconds("trigger", "--timeout", optarg, 0, HP_CONTROL_TIMEOUT_MAX_SEC,
                                              &t->timeout_ms);
                        break;
                case 'n':
                        t->dry_run = true;
                        break;
                case 'v':
                        t->verbose = true;
                        break;
                case 'j': {
                        uint64_t v;

                        if (decimal_u64(optarg, &v) < 0 || v < 1 || v > HP_TRIGGER_JOBS_MAX)
                                r = ctl_bad_value("trigger", "--jobs", optarg,
                                                  "a number, 1 to " CTL_STR(HP_TRIGGER_JOBS_MAX));
                        else
                                t->jobs = (unsigned)v;
                        break;
                }
                }
        }
        if (r != CTL_EXIT_OK)
                return r;
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (t->done_file && !t->settle)
                return ctl_usage_error("trigger", "--done-file needs --settle");
        t->devices = argv + optind;
        t->n_devices = (size_t)(argc - optind);
        return CTL_RUN;
}

int verb_trigger(int argc, char *argv[])
{
        struct trigger t = { .action = "add", .timeout_ms = TRIGGER_DEFAULT_TIMEOUT_SEC * 1000,
                             .jobs = HP_TRIGGER_JOBS_DEFAULT, .chunk = 1, .fd = -1,
                             .w = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER } };
        int r;

        r = parse_args(&t, argc, argv);
        if (r != CTL_RUN)
                return r;
        t.tty = isatty(STDERR_FILENO) == 1;
        if (trigger_alloc(&t) < 0) {
                ctl_err("trigger", "%s", strerror(ENOMEM));
                trigger_done(&t);
                return CTL_EXIT_FAILURE;
        }
        r = t.settle && !t.dry_run ? ctl_open("trigger", &t.fd) : CTL_EXIT_OK;
        if (r == CTL_EXIT_OK)
                r = done_file_remove(&t);
        if (r == CTL_EXIT_OK && t.n_devices) {
                r = named_devices(&t);
        } else if (r == CTL_EXIT_OK) {
                /* Written as found: the first events go out while the tree is still being read. */
                int e = trigger_walk(SYSFS_ROOT, walked, &t);

                if (e == -ECANCELED) {
                        r = t.status;
                } else if (e < 0) {
                        ctl_err("trigger", "cannot enumerate devices: %s", strerror(-e));
                        r = CTL_EXIT_FAILURE;
                }
        }
        if (!t.dry_run && r == CTL_EXIT_OK) {
                r = batch_end(&t, true);
                if (r == CTL_EXIT_OK && t.failures)
                        r = CTL_EXIT_FAILURE;
                if (r == CTL_EXIT_OK)
                        r = done_file_make(&t);
        } else if (!t.dry_run) {
                /* Given up: what was published is written (the daemon was told of it) and named. */
                close_writers(&t);
                (void)report_writes(&t);
        }
        trigger_done(&t);
        return r;
}
