/* SPDX-License-Identifier: MIT */
/*
 * The replay source (--replay FILE, source.h): a recording stands in for the
 * kernel socket.  Datagrams go through the same parser, ledger, handlers and
 * scheduler as live ones, at the recorded pace scaled by --speed (0: as fast
 * as possible); a recorded overflow is reported as one.  Observers hear each
 * datagram as they do from the socket, so a --record of the replay holds
 * the events beside their agent runs.
 *
 * A recording is a file, not the kernel: an event read from one keeps only
 * the keys a kernel sends (uevent/kernel-keys.h) before it is fed; each
 * key left out is counted (manager_feed_dropped_keys()) and logged the
 * first time it is seen.
 *
 * With --dry-run (and a speed above 0) the replay hands the dry-run spawner
 * (spawner-dry.c) each event's recorded agent time, scaled the same way, so
 * the scheduler meets the same overlaps and the order and waits it prints
 * are those of the live run.
 *
 * Invariants: one turn of the loop feeds at most HP_INPUT_PER_WAKEUP items
 * and searches at most HP_REPLAY_RESYNC_STEP bytes of damage; an item borrowed from replay_next() is fed before the next
 * call; at most max_queue events are held (feeding pauses until the held
 * count is down to the manager's resume mark, as for the socket); no recorded
 * agent time (one run or an event's sum) passes HP_REPLAY_MAX_RUN_USEC.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/trust.h"
#include "loop/manager.h"
#include "loop/source.h"
#include "uevent/kernel-keys.h"
#include "uevent/record.h"
#include "uevent/replay.h"
#include "uevent/uevent.h"

struct run_time {
        uint64_t seqnum;
        usec_t mono; /* durations: HP_REPLAY_MAX_RUN_USEC + 1 marks a time cut to HP_REPLAY_MAX_RUN_USEC */
};

struct replay_state {
        struct manager *m;
        const char *path;          /* the recording (borrowed from the manager's configuration) */
        double speed;
        struct replay *rp;
        sd_event_source *timer;
        struct replay_item item;
        bool have_item;
        bool paused;               /* the manager said MANAGER_FEED_FULL: rp_resume() goes on */
        bool finished;
        usec_t start;              /* CLOCK_MONOTONIC of the first item */
        struct run_time *durations; /* seqnum -> total recorded agent time, sorted */
        size_t n_durations;
        uint64_t fed, problems, dropped;
        char stripped[HP_UEVENT_MAX_SIZE];  /* the datagram fed, when keys were left out */
        /* Keys left out and logged so far: the first HP_UEVENT_MAX_VARS are each logged once, later
         * ones at most once per HP_REJECT_LOG_INTERVAL_USEC. */
        char logged[HP_UEVENT_MAX_VARS][HP_UEVENT_KEY_MAX + 1];
        size_t n_logged;
        struct ratelimit drop_log;
};

static int cmp_run(const void *a, const void *b)
{
        const struct run_time *x = a, *y = b;

        if (x->seqnum != y->seqnum)
                return x->seqnum < y->seqnum ? -1 : 1;
        return x->mono < y->mono ? -1 : x->mono > y->mono;
}

static int push_run(struct run_time **v, size_t *n, size_t *cap, uint64_t seqnum, usec_t mono)
{
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 256;
                struct run_time *nv = realloc(*v, c * sizeof(**v));
                if (!nv)
                        return -ENOMEM;
                *v = nv;
                *cap = c;
        }
        (*v)[(*n)++] = (struct run_time){ seqnum, mono };
        return 0;
}

/* Add one run's time to an event's total; past HP_REPLAY_MAX_RUN_USEC (or wrapping) it becomes "cut". */
static void add_duration(struct run_time *t, usec_t d)
{
        if (t->mono > HP_REPLAY_MAX_RUN_USEC || d > HP_REPLAY_MAX_RUN_USEC - t->mono)
                t->mono = HP_REPLAY_MAX_RUN_USEC + 1;
        else
                t->mono += d;
}

/* Pair each recorded AGENT_START with the next AGENT_END of the same SEQNUM; sum per SEQNUM. */
static void load_durations(struct replay_state *st, int fd)
{
        struct run_time *starts = NULL, *ends = NULL;
        size_t ns = 0, cs = 0, ne = 0, ce = 0, i = 0, j = 0, out = 0;
        struct record_reader *r;
        struct record rec;
        int k;

        /* A descriptor of its own on the same file (the reader reads at offsets, never moves the file's). */
        k = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (k < 0 || record_reader_open_fd(k, &r) < 0)
                return; /* replay_open_fd() reports it */
        while ((k = record_reader_next(r, &rec)) != 0) {
                if (k < 0)
                        break;
                if (k == RECORD_NEXT_PROBLEM)
                        continue;
                if (rec.type == RECORD_AGENT_START)
                        k = push_run(&starts, &ns, &cs, rec.agent_start.seqnum, rec.agent_start.monotonic);
                else if (rec.type == RECORD_AGENT_END && rec.agent_end.status != RECORD_AGENT_EXEC_FAILED)
                        k = push_run(&ends, &ne, &ce, rec.agent_end.seqnum, rec.agent_end.monotonic);
                if (k < 0)
                        break;
        }
        record_reader_free(r);
        if (ns > 0)
                qsort(starts, ns, sizeof(*starts), cmp_run);
        if (ne > 0)
                qsort(ends, ne, sizeof(*ends), cmp_run);
        /* Reuse @starts as the output: one entry per SEQNUM. */
        while (i < ns && j < ne) {
                if (starts[i].seqnum < ends[j].seqnum) {
                        i++;
                        continue;
                }
                if (starts[i].seqnum > ends[j].seqnum) {
                        j++;
                        continue;
                }
                usec_t d = ends[j].mono > starts[i].mono ? ends[j].mono - starts[i].mono : 0;
                if (out == 0 || starts[out - 1].seqnum != starts[i].seqnum)
                        starts[out++] = (struct run_time){ starts[i].seqnum, 0 };
                add_duration(&starts[out - 1], d);
                i++;
                j++;
        }
        free(ends);
        st->durations = starts;
        st->n_durations = out;
}

/* The recorded agent time of @seqnum (0: none); *ret_cut: it was cut to HP_REPLAY_MAX_RUN_USEC. */
static usec_t recorded_duration(const struct replay_state *st, uint64_t seqnum, bool *ret_cut)
{
        struct run_time key = { seqnum, 0 };
        size_t lo = 0, hi = st->n_durations;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (st->durations[mid].seqnum < key.seqnum)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < st->n_durations && st->durations[lo].seqnum == seqnum) {
                *ret_cut = st->durations[lo].mono > HP_REPLAY_MAX_RUN_USEC;
                return MIN(st->durations[lo].mono, HP_REPLAY_MAX_RUN_USEC);
        }
        *ret_cut = false;
        return 0;
}

/* One line for the first drop of each key (a key is at most HP_UEVENT_KEY_MAX bytes of [A-Z0-9_]). */
static void log_dropped(struct replay_state *st, const struct log_fields *f, const char *entry)
{
        size_t len = strcspn(entry, "=");
        uint64_t suppressed = 0;
        char more[64] = "";

        for (size_t i = 0; i < st->n_logged; i++)
                if (memcmp(st->logged[i], entry, len) == 0 && st->logged[i][len] == '\0')
                        return;
        if (st->n_logged < ELEMENTSOF(st->logged)) {
                memcpy(st->logged[st->n_logged], entry, len);
                st->logged[st->n_logged++][len] = '\0';
        } else if (!ratelimit_pass(&st->drop_log, HP_REJECT_LOG_INTERVAL_USEC, &suppressed))
                return;
        if (suppressed > 0)
                snprintf(more, sizeof(more), "; %" PRIu64 " drops of other keys not logged", suppressed);
        log_internal(LOG_WARNING, 0, f, "variable %.*s dropped: no kernel sends it, and an event from a recording "
                                        "keeps only the keys kernels send (logged once per key%s)", (int)len, entry,
                     more);
}

/*
 * The datagram to feed for @data: itself, or a copy in st->stripped without
 * the keys no kernel sends (*@size updated).  One that does not parse is
 * fed as it is, for the manager to reject and count.
 */
static const char *keep_kernel_keys(struct replay_state *st, const char *data, size_t *size)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        const char *dropped[HP_UEVENT_MAX_VARS];
        struct uevent view;
        struct log_fields f;
        size_t n, stripped_size;

        if (uevent_parse(data, *size, vars, &view, NULL) < 0)
                return data;
        n = uevent_strip_unsent(&view, st->stripped, &stripped_size, dropped);
        if (n == 0)
                return data;
        st->dropped += n;
        manager_feed_dropped_keys(st->m, n);
        uevent_log_fields(&view, &f);
        for (size_t i = 0; i < n; i++)
                log_dropped(st, &f, dropped[i]);
        *size = stripped_size;
        return st->stripped;
}

static void feed(struct replay_state *st)
{
        usec_t mono = now_usec(CLOCK_MONOTONIC);
        const char *data;
        size_t size;

        st->fed++;
        if (st->item.kind == REPLAY_OVERFLOW) {
                manager_feed_overflow(st->m);
                log_warning("replayed receive-buffer overflow");
                return;
        }
        size = st->item.size;
        data = keep_kernel_keys(st, st->item.data, &size);
        /* A --record of the replay holds the datagrams as this run fed them, beside its agent runs. */
        (void)manager_feed(st->m, data, size, mono, now_usec(CLOCK_REALTIME), st->item.realtime);
}

static void finish(struct replay_state *st)
{
        st->finished = true;
        log_info("replay of %s read to the end: %" PRIu64 " item(s) fed, %" PRIu64 " problem(s), %" PRIu64
                 " variable(s) dropped (keys no kernel sends)", st->path, st->fed, st->problems, st->dropped);
        manager_feed_finished(st->m);
}

static int on_replay_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct replay_state *st = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        char buf[512];
        int r;

        for (unsigned n = 0; manager_feed_room(st->m) != MANAGER_FEED_STOP; n++) {
                if (n == HP_INPUT_PER_WAKEUP) {
                        /* As fast as possible still lets the loop serve everything else now and then. */
                        (void)sd_event_source_set_time(s, now);
                        (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                        manager_feed_end(st->m, false);
                        return 0;
                }
                if (!st->have_item) {
                        r = replay_next(st->rp, &st->item);
                        if (r == RECORD_NEXT_PROBLEM) {
                                st->problems++;
                                log_warning("%s: %s", st->path,
                                            record_problem_format(replay_problem(st->rp), buf, sizeof(buf)));
                        }
                        if (r == RECORD_NEXT_PROBLEM || r == RECORD_NEXT_AGAIN) {
                                /* Damage (a search step at most): let the loop serve everything else, then go on. */
                                (void)sd_event_source_set_time(s, now);
                                (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                                manager_feed_end(st->m, false);
                                return 0;
                        }
                        if (r <= 0) {
                                if (r < 0)
                                        log_error_errno(r, "reading %s failed", st->path);
                                manager_feed_end(st->m, false);
                                finish(st);
                                return 0;
                        }
                        if (st->fed == 0 && st->start == 0)
                                st->start = now;
                        st->have_item = true;
                }
                if (manager_feed_room(st->m) == MANAGER_FEED_FULL) {
                        /* The timer stays off until events are done (rp_resume()). */
                        st->paused = true;
                        manager_feed_end(st->m, false);
                        return 0;
                }
                usec_t due = st->start + st->item.due;
                if (due > now) {
                        (void)sd_event_source_set_time(s, due);
                        (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                        manager_feed_end(st->m, false);
                        return 0;
                }
                feed(st);
                st->have_item = false;
        }
        return 0;
}

/* For the dry-run spawner: how long @ev's agent ran when it was recorded, scaled by the speed. */
static usec_t dry_duration(void *userdata, const struct uevent *ev)
{
        struct replay_state *st = userdata;
        usec_t dur;
        bool cut;

        dur = recorded_duration(st, ev->seqnum, &cut);
        if (cut) {
                struct log_fields f;

                uevent_log_fields(ev, &f);
                log_internal(LOG_WARNING, 0, &f, "recorded agent time over %llu s, cut to %llu s",
                             (unsigned long long)(HP_REPLAY_MAX_RUN_USEC / USEC_PER_SEC),
                             (unsigned long long)(HP_REPLAY_MAX_RUN_USEC / USEC_PER_SEC));
        }
        return replay_scale(dur, st->speed);
}

static bool rp_finished(const void *data)
{
        const struct replay_state *st = data;

        return st->finished;
}

static int rp_sync(void *data)
{
        return 1; /* what was fed is queued, nothing to read */
}

static void rp_free(void *data)
{
        struct replay_state *st = data;

        sd_event_source_disable_unref(st->timer);
        replay_free(st->rp);
        free(st->durations);
        free(st);
}

static bool rp_paused(const void *data)
{
        const struct replay_state *st = data;

        return st->paused;
}

/* Events were done, the held count is down to the resume mark: go on feeding. */
static void rp_resume(void *data)
{
        struct replay_state *st = data;

        st->paused = false;
        (void)sd_event_source_set_time(st->timer, now_usec(CLOCK_MONOTONIC));
        (void)sd_event_source_set_enabled(st->timer, SD_EVENT_ONESHOT);
}

static const struct manager_source_ops replay_ops = {
        .replay = true,
        .sync = rp_sync,
        .paused = rp_paused,
        .dry_duration = dry_duration,
        .resume = rp_resume,
        .finished = rp_finished,
        .free = rp_free,
};

/*
 * Open the recording.  Root replays it to real agents only if nobody else
 * can have written it: its path as given passes the trust rule (every
 * directory and link on the way, trust_open_at()), and the replay reads
 * the descriptor that was checked.  A dry run runs nothing, so it may read
 * any recording, with a warning.  Either way only a regular file, opened
 * without blocking: a FIFO would hold the daemon in open() with its
 * signals blocked.  Return: the descriptor, or negative errno (logged).
 */
static int replay_open_checked(const struct manager_config *cfg)
{
        const char *path = cfg->replay_path, *why = NULL;
        struct stat st;
        int fd = -1, r;

        r = trust_open_at(AT_FDCWD, path, TRUST_READ, &fd, &st, &why);
        if (r == 0)
                return fd;
        if (r == -EMEDIUMTYPE)
                return log_error_errno(r, "cannot replay %s: %s", path, why);
        if (!cfg->dry_run) {
                if (r != -EPERM)
                        return log_error_errno(r, "cannot replay %s", path);
                return log_error_errno(r, "refusing to replay %s to agents: %s (mode %04o, uid %u); a --dry-run "
                                          "may read it", path, why, (unsigned)(st.st_mode & 07777),
                                       (unsigned)st.st_uid);
        }
        if (r == -EPERM)
                log_warning("%s: %s (mode %04o, uid %u): it could hold records planted by another user; "
                            "read for a dry run only", path, why, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return log_error_errno(negative_errno(), "cannot replay %s", path);
        return fd; /* what it is, the reader checks: a regular file */
}

int source_replay_new(struct manager *m, sd_event *event, const struct manager_config *cfg,
                      const struct manager_source_ops **ret_ops, void **ret_data)
{
        struct replay_state *st;
        int fd, r;

        st = calloc(1, sizeof(*st));
        if (!st)
                return -ENOMEM;
        st->m = m;
        st->path = cfg->replay_path;
        st->speed = cfg->replay_speed;
        *ret_ops = &replay_ops;
        *ret_data = st;
        fd = replay_open_checked(cfg);
        if (fd < 0)
                return fd;
        if (cfg->dry_run && cfg->replay_speed > 0)
                load_durations(st, fd);
        r = replay_open_fd(fd, cfg->replay_speed, &st->rp);
        if (r == -EMEDIUMTYPE)
                return log_error_errno(r, "cannot replay %s: not a regular file", cfg->replay_path);
        if (r < 0)
                return log_error_errno(r, "cannot replay %s", cfg->replay_path);
        r = sd_event_add_time(event, &st->timer, CLOCK_MONOTONIC, 0, 1, on_replay_timer, st);
        if (r < 0)
                return r;
        log_info("replaying %s at speed %g%s", cfg->replay_path, cfg->replay_speed,
                 cfg->replay_speed == 0 ? " (no waiting)" : "");
        return 0;
}
