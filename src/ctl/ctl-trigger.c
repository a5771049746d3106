/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl trigger [--action ACTION] [--type TYPE] [MATCH OPTIONS]
 *                    [--prioritized-subsystem LIST]
 *                    [--settle [--done-file PATH]] [--timeout SEC] [--dry-run]
 *                    [--verbose] [--quiet] [--socket PATH] [DEVICE...]
 *
 * Coldplug: walk the device tree (ctl/trigger-walk.h), or take the DEVICEs
 * named, each checked against the match options (udevadm trigger's, read
 * by ctl/trigger-args.h, checked by ctl/trigger-match.h), and write
 * "ACTION UUID" into each device's uevent file, one fresh UUID per device
 * (the kernel sends it back as SYNTH_UUID).  The walk's devices are written as they are
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
#include "ctl/trigger-args.h"
#include "ctl/trigger-match.h"
#include "ctl/trigger-order.h"
#include "ctl/trigger-walk.h"
#include "shared/bounds.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "shared/sysfs.h"
#include "control/uuid-set.h"

/* With --prioritized-subsystem: the walk's devices, gathered to be put in order. */
struct gathered {
        char **paths, **subsystems; /* owned */
        size_t n, cap;
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
        struct trigger_args a;      /* the command line */
        struct gathered g;
        bool tty;
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
        int fd;                     /* control connection with --settle or --skip-handled, else -1 */
        char **handled;             /* --skip-handled: the DEVPATHs whose add ran, sorted; owned */
        size_t n_handled, a_handled;
        size_t skipped;             /* devices left out for it */
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
        trigger_match_done(&t->a.m); /* the parents' copies */
        for (size_t i = 0; i < t->g.n; i++) {
                free(t->g.paths[i]);
                free(t->g.subsystems[i]);
        }
        free(t->g.paths);
        free(t->g.subsystems);
        for (size_t i = 0; i < t->n_handled; i++)
                free(t->handled[i]);
        free(t->handled);
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

/* Does a device pass the match options? */
static bool passes(const struct trigger *t, const char *syspath, const char *subsystem)
{
        return trigger_match_passes(&t->a.m, syspath, syspath + strlen(SYSFS_ROOT), subsystem);
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* --skip-handled: is @syspath's add among those that ran?  Counted when it is. */
static bool skip(struct trigger *t, const char *syspath)
{
        const char *devpath = syspath + strlen(SYSFS_ROOT);

        if (!t->a.skip_handled || !bsearch(&devpath, t->handled, t->n_handled, sizeof(*t->handled), cmp_str))
                return false;
        t->skipped++;
        return true;
}

/* One "handled devpath=..." record into t->handled. Return: exit status. */
static int keep_handled(struct trigger *t, const char *rec, char *last, size_t size)
{
        char **v;

        if (ctlmsg_get(rec, "devpath", last, size) < 0 || last[0] != '/') {
                ctl_err("trigger", "malformed reply from the daemon: %s", rec);
                return CTL_EXIT_FAILURE;
        }
        if (t->n_handled == t->a_handled) {
                size_t a = t->a_handled ? t->a_handled * 2 : 256;

                v = reallocarray(t->handled, a, sizeof(*v));
                if (!v)
                        goto oom;
                t->handled = v;
                t->a_handled = a;
        }
        t->handled[t->n_handled] = strdup(last);
        if (!t->handled[t->n_handled])
                goto oom;
        t->n_handled++;
        return CTL_EXIT_OK;
oom:
        ctl_err("trigger", "%s", strerror(ENOMEM));
        return CTL_EXIT_FAILURE;
}

/* --skip-handled: ask the daemon, page after page, which devices' add ran. Return: exit status. */
static int fetch_handled(struct trigger *t)
{
        char req[HP_CONTROL_REQUEST_MAX + 1], rec[CTL_RECORD_SIZE], last[PATH_MAX] = "", esc[HP_CONTROL_REQUEST_MAX];
        uint64_t more, err;
        int r, n;

        if (t->fd < 0 && (r = ctl_open("trigger", &t->fd)) != CTL_EXIT_OK)
                return r;
        for (bool first = true;; first = false) {
                if (!first && ctlmsg_escape(last, esc, sizeof(esc)) < 0) {
                        ctl_err("trigger", "device path too long in the daemon's reply");
                        return CTL_EXIT_FAILURE;
                }
                snprintf(req, sizeof(req), first ? "info handled" : "info handled after=%s", esc);
                r = ctl_request("trigger", t->fd, req, rec, -1);
                /* A handover's targeted resync is about to plan its adds: the list is not
                 * complete yet.  Ask again, every 50 ms, for at most the --timeout. */
                for (uint64_t waited = 0; r == CTL_EXIT_OK && ctlmsg_is(rec, "error") &&
                                          ctlmsg_get_u64(rec, "errno", &err) == 0 && err == EAGAIN &&
                                          waited < t->a.timeout_ms;
                     waited += 50) {
                        (void)usleep(50 * 1000);
                        r = ctl_request("trigger", t->fd, req, rec, -1);
                }
                while (r == CTL_EXIT_OK && ctlmsg_is(rec, "handled")) {
                        r = keep_handled(t, rec, last, sizeof(last));
                        if (r == CTL_EXIT_OK && (n = ctl_recv(t->fd, rec, -1)) < 0) {
                                ctl_err("trigger", "reading the daemon's reply: %s", strerror(-n));
                                r = CTL_EXIT_FAILURE;
                        }
                }
                if (r != CTL_EXIT_OK)
                        return r;
                if (!ctlmsg_is(rec, "end"))
                        return ctlmsg_is(rec, "error") ? ctl_report_error("trigger", rec) : CTL_EXIT_FAILURE;
                if (ctlmsg_get_u64(rec, "more", &more) < 0 || more != 1 ||
                    ctlmsg_get(rec, "last", last, sizeof(last)) < 0)
                        break;
        }
        qsort(t->handled, t->n_handled, sizeof(*t->handled), cmp_str);
        return CTL_EXIT_OK;
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
        int len = snprintf(line, sizeof(line), "%s %s", t->a.action, t->uuid[i]);
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
        if (t->a.settle && (r = send_uuids(t, "watch-uuids", w->to, t->n, false)) != CTL_EXIT_OK)
                return r;
        /* Too few threads (none at all) only means fewer writes at once: the main thread writes too, at the end. */
        while (w->n_threads < t->a.jobs && pthread_create(&w->threads[w->n_threads], NULL, writer, t) == 0)
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
                        if (t->a.quiet)
                                continue;
                        if (t->tty)
                                fputs("\r\033[K", stderr);
                        snprintf(path, sizeof(path), "%s/uevent", t->paths[i]);
                        ctl_err("trigger", "%s: %s", escape_cstr(path, esc, sizeof(esc)),
                                t->err[i] == EINVAL ? "the kernel refused the action" : strerror(t->err[i]));
                } else if (t->a.verbose) {
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

        snprintf(req, sizeof(req), "wait-uuids %" PRIu64, t->a.timeout_ms);
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
        progress(t, "triggered", t->base + t->w.to, t->base + t->w.to, last && !t->a.settle);
        if (r == CTL_EXIT_OK && t->a.settle && f > 0)
                r = send_uuids(t, "forget-uuids", 0, t->w.to, true);
        if (r == CTL_EXIT_OK && t->a.settle && t->w.to > 0)
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

        if (t->a.dry_run) {
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

/* With --prioritized-subsystem: keep a device the match options select, to be put in order. */
static int gather(struct trigger *t, const char *syspath, const char *subsystem)
{
        struct gathered *g = &t->g;

        if (g->n == g->cap) {
                size_t cap = g->cap ? g->cap * 2 : 256;
                char **p = realloc(g->paths, cap * sizeof(*p)), **s;

                if (p)
                        g->paths = p;
                s = p ? realloc(g->subsystems, cap * sizeof(*s)) : NULL;
                if (!s)
                        return -ENOMEM;
                g->subsystems = s;
                g->cap = cap;
        }
        g->paths[g->n] = strdup(syspath);
        g->subsystems[g->n] = strdup(subsystem);
        if (!g->paths[g->n] || !g->subsystems[g->n]) {
                free(g->paths[g->n]);
                free(g->subsystems[g->n]);
                return -ENOMEM;
        }
        g->n++;
        return 0;
}

/*
 * trigger_walk()'s callback: each device the match options select, added
 * as found (the first events go out while the tree is still being read),
 * or gathered.
 */
static int walked(void *userdata, const char *syspath, const char *subsystem)
{
        struct trigger *t = userdata;

        if (!passes(t, syspath, subsystem) || skip(t, syspath))
                return 0;
        if (t->a.n_prio)
                return gather(t, syspath, subsystem);
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
        char **take = calloc(MAX(t->a.n_devices, (size_t)1), sizeof(*take));
        size_t n = 0;
        int r = CTL_EXIT_OK;

        if (!take) {
                ctl_err("trigger", "%s", strerror(ENOMEM));
                return CTL_EXIT_FAILURE;
        }

        for (size_t i = 0; r == CTL_EXIT_OK && i < t->a.n_devices; i++) {
                _cleanup_close_ int fd = -1;
                bool seen = false;

                if (ctl_device("trigger", SYSFS_ROOT, t->a.devices[i], devpath, sizeof(devpath)) < 0) {
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
                if (seen || !passes(t, syspath, subsystem) || skip(t, syspath))
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

        if (!t->a.done_file || t->a.dry_run)
                return CTL_EXIT_OK;
        r = done_file_write(t->a.done_file, t->base);
        if (r >= 0)
                return CTL_EXIT_OK;
        ctl_err("trigger", "cannot make --done-file %s: %s", escape_cstr(t->a.done_file, esc, sizeof(esc)),
                strerror(-r));
        return CTL_EXIT_FAILURE;
}

/* A coldplug starts: a --done-file of an earlier one is removed.  Return: exit status. */
static int done_file_remove(const struct trigger *t)
{
        char esc[4 * PATH_MAX];

        if (!t->a.done_file || t->a.dry_run || unlink(t->a.done_file) == 0 || errno == ENOENT)
                return CTL_EXIT_OK;
        ctl_err("trigger", "cannot remove the old --done-file %s: %s",
                escape_cstr(t->a.done_file, esc, sizeof(esc)), strerror(errno));
        return CTL_EXIT_FAILURE;
}

/* Gathered devices (--prioritized-subsystem) in their order, each added. Return: exit status. */
static int add_gathered(struct trigger *t)
{
        size_t *order = calloc(MAX(t->g.n, (size_t)1), sizeof(*order));
        bool *placed = calloc(MAX(t->g.n, (size_t)1), sizeof(*placed));
        int r = CTL_EXIT_OK;

        if (!order || !placed) {
                ctl_err("trigger", "%s", strerror(ENOMEM));
                r = CTL_EXIT_FAILURE;
        } else {
                trigger_prioritize(t->g.paths, t->g.subsystems, t->g.n, (char *const *)t->a.prio, t->a.n_prio, order,
                                   placed);
                for (size_t i = 0; r == CTL_EXIT_OK && i < t->g.n; i++)
                        r = device_add(t, t->g.paths[order[i]], true);
        }
        free(order);
        free(placed);
        return r;
}

/* Walk what --type selects; the devices are added as found, or gathered first. Return: exit status. */
static int walk(struct trigger *t)
{
        int e = 0;

        if (t->a.type != TYPE_SUBSYSTEMS)
                e = trigger_walk(SYSFS_ROOT, walked, t);
        if (e >= 0 && t->a.type != TYPE_DEVICES)
                e = trigger_walk_subsystems(SYSFS_ROOT, walked, t);
        if (e == -ECANCELED)
                return t->status;
        if (e < 0) {
                ctl_err("trigger", "cannot enumerate devices: %s", strerror(-e));
                return CTL_EXIT_FAILURE;
        }
        return t->a.n_prio ? add_gathered(t) : CTL_EXIT_OK;
}

int verb_trigger(int argc, char *argv[])
{
        struct trigger t = { .chunk = 1, .fd = -1,
                             .w = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER } };
        int r;

        r = trigger_args_parse(&t.a, argc, argv);
        if (r != CTL_RUN)
                return r;
        if ((r = trigger_args_parents(&t.a)) != CTL_EXIT_OK) {
                trigger_done(&t);
                return r;
        }
        t.tty = isatty(STDERR_FILENO) == 1;
        if (trigger_alloc(&t) < 0) {
                ctl_err("trigger", "%s", strerror(ENOMEM));
                trigger_done(&t);
                return CTL_EXIT_FAILURE;
        }
        r = t.a.settle && !t.a.dry_run ? ctl_open("trigger", &t.fd) : CTL_EXIT_OK;
        if (r == CTL_EXIT_OK)
                r = done_file_remove(&t);
        if (r == CTL_EXIT_OK && t.a.skip_handled)
                r = fetch_handled(&t);
        if (r == CTL_EXIT_OK && t.a.n_devices) {
                r = named_devices(&t);
        } else if (r == CTL_EXIT_OK) {
                r = walk(&t);
        }
        if (!t.a.dry_run && r == CTL_EXIT_OK) {
                r = batch_end(&t, true);
                if (r == CTL_EXIT_OK && t.failures)
                        r = CTL_EXIT_FAILURE;
                if (r == CTL_EXIT_OK)
                        r = done_file_make(&t);
        } else if (!t.a.dry_run) {
                /* Given up: what was published is written (the daemon was told of it) and named. */
                close_writers(&t);
                (void)report_writes(&t);
        }
        if (t.a.skip_handled && !t.a.quiet)
                fprintf(stderr, "%s: trigger: %zu device(s) skipped: their add already ran in this boot "
                        "(--skip-handled)\n", ctl_program, t.skipped);
        trigger_done(&t);
        return r;
}
