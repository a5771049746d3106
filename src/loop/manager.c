/* SPDX-License-Identifier: MIT */
/*
 * The manager: one sd-event loop driving the pipeline
 *   source (source.h) -> parse -> ledger -> handler chain -> scheduler
 *   -> jobs (manager-job.c, through a spawner)
 * announcing each step to the observers (manager-observe.c).  This file
 * owns the core of struct manager and the pipeline up to the scheduler;
 * manager-internal.h says which file owns the rest.
 *
 * Invariants:
 *  - every event held is either in the scheduler, from push until its job
 *    finished (scheduler_done) or it was popped at shutdown (the manager
 *    frees it right after), or in the backlog as bytes, until it is moved
 *    into the scheduler or dropped at shutdown;
 *  - the queue (manager-queue.c): the scheduler holds at most queue_window() events besides
 *    late ones; whenever the backlog is not empty, every SEQNUM in it is
 *    above every SEQNUM ever pushed into the scheduler, so an event never
 *    waits in the backlog behind one the scheduler would run after it, and
 *    the scheduler's order rules see everything earlier than what it holds;
 *  - every valid event the ledger accepted is either queued (announced
 *    queued() at once, wherever it went) or announced dropped, before
 *    manager_feed() returns;
 *  - the source feeds at most max_queue held events (scheduler and
 *    backlog): manager_feed() answers MANAGER_FEED_FULL there; a paused
 *    source is resumed once the held count falls to resume_mark (three
 *    quarters of the bound); the source reads none of this state, it only
 *    hears the answers (source.h);
 *  - the same holds for bytes: the source feeds while the bytes held
 *    (manager_bytes_held(): the queue, the jobs, the handover journal) are
 *    more than HP_QUEUE_BYTES_EVENT_MAX below the budget (max-queue-bytes),
 *    so reading never takes them past it, and goes on once they fell to
 *    budget_resume (three quarters); from the stop until then the daemon
 *    is "overloaded" (logged on entering and leaving, in the status);
 *  - no code runs in signal handlers: signals arrive through signalfd.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "config.h"
#include "shared/envbuf.h"
#include "shared/escape.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/sysfs.h"
#include "loop/manager.h"
#include "loop/manager-internal.h"
#include "loop/log-watch.h"
#include "loop/udev-wait.h"
#include "loop/kmod-load.h"
#include "loop/observe-builtin.h"
#include "loop/manager-observe.h"
#include "loop/source.h"
#include "pipeline/backlog.h"
#include "pipeline/spawner.h"
#include "recovery/resync.h"
#include "uevent/uevent.h"

/* The kernel's last SEQNUM, 0 if unknown. */
static uint64_t read_kernel_seqnum(const char *sysfs_root)
{
        _cleanup_close_ int rootfd = open(sysfs_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        uint64_t seq = 0;

        if (rootfd >= 0)
                (void)sysfs_read_seqnum(rootfd, &seq);
        return seq;
}

/* ---- input --------------------------------------------------------------- */

static void log_reject(struct manager *m, const char *data, size_t size, enum uevent_reject why)
{
        char esc[512];
        uint64_t suppressed;

        m->stats.rejected++;
        if ((unsigned)why < ELEMENTSOF(m->stats.rejected_by_class))
                m->stats.rejected_by_class[why]++;
        if (!ratelimit_pass(&m->in.reject_log[why], HP_REJECT_LOG_INTERVAL_USEC, &suppressed))
                return;
        escape_bytes(data, MIN(size, (size_t)160), esc, sizeof(esc));
        log_warning("dropped invalid uevent (%s, %zu bytes): \"%s\"%s; %" PRIu64
                    " more of this class suppressed since the last report",
                    uevent_reject_to_string(why), size, esc, size > 160 ? "..." : "", suppressed);
}

static void log_gap(const struct ledger_gap *gap)
{
        if (gap->first == gap->last)
                log_warning("SEQNUM gap: %" PRIu64 " missing (%s)", gap->first, gap_class_to_string(gap->class));
        else
                log_warning("SEQNUM gap: %" PRIu64 "-%" PRIu64 " missing, %" PRIu64 " events (%s)", gap->first,
                            gap->last, gap->last - gap->first + 1, gap_class_to_string(gap->class));
}

static void queue_view(struct manager *m, const struct uevent *view, const struct log_fields *f);

void manager_set_intake_guard(struct manager *m, const struct manager_intake_ops *ops, void *userdata)
{
        m->intake.ops = ops;
        m->intake.userdata = userdata;
}

static bool intake_repeated(struct manager *m, const struct uevent *view)
{
        return m->intake.ops && m->intake.ops->repeated(m->intake.userdata, view);
}

static uint32_t intake_begin(struct manager *m, const struct uevent *view)
{
        return m->intake.ops ? m->intake.ops->begin(m->intake.userdata, view) : 0;
}

static void intake_end(struct manager *m)
{
        if (m->intake.ops)
                m->intake.ops->end(m->intake.userdata);
}

uint32_t manager_start_begin(struct manager *m, const struct uevent *ev)
{
        return m->intake.ops ? m->intake.ops->start_begin(m->intake.userdata, ev) : 0;
}

void manager_start_end(struct manager *m)
{
        if (m->intake.ops)
                m->intake.ops->start_end(m->intake.userdata);
}

/* Drop @view, which killed @tries instances (intake_begin()), loudly: logged, counted, announced. */
static void set_aside(struct manager *m, const struct uevent *view, const struct log_fields *f, uint32_t tries)
{
        m->stats.set_aside++;
        log_internal(LOG_ERR, 0, f, "set aside, not run: %" PRIu32 " instance(s) of hotplugd died processing "
                                    "this datagram; the events after it run", tries);
        observe_set_aside(m, view, tries);
        observe_dropped(m, view, false);
}

/*
 * One datagram through parse, ledger and handlers into the queue (@mono and
 * @real: when it was read, or recorded).  Invalid ones are counted and
 * logged; a valid one is announced received() and then either queued() or
 * dropped() before this returns.
 */
static void manager_process_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view;
        struct ledger_gap gap;
        struct log_fields f;
        enum uevent_reject why;
        enum ledger_verdict verdict;
        uint32_t aside;

        if (uevent_parse(data, size, vars, &view, &why) < 0) {
                log_reject(m, data, size, why);
                return;
        }
        view.received = mono;
        view.received_real = real;
        uevent_log_fields(&view, &f);
        if (intake_repeated(m, &view)) {
                log_internal(LOG_INFO, 0, &f, "read again from the socket after the takeover; the "
                                              "handover journal had it, dropped");
                return;
        }

        aside = intake_begin(m, &view);
        verdict = ledger_account(&m->ledger, view.seqnum, &gap);
        observe_received(m, &view, verdict, &gap);
        switch (verdict) {
        case LEDGER_DUPLICATE:
                log_internal(LOG_NOTICE, 0, &f, "duplicate SEQNUM, dropped");
                observe_dropped(m, &view, false);
                intake_end(m);
                return;
        case LEDGER_GAP:
                log_gap(&gap);
                observe_gap(m, &gap);
                break;
        case LEDGER_LATE:
                log_internal(LOG_NOTICE, 0, &f, "late SEQNUM (arrived after a higher one)");
                break;
        case LEDGER_NEXT:
                break;
        }
        if (aside)
                set_aside(m, &view, &f, aside);
        else
                queue_view(m, &view, &f);
        intake_end(m);
}

/* One line per variable the agent environment refuses (the event runs without it). */
static void log_refused(const struct uevent *ev, const struct log_fields *f)
{
        const char *refused[SPAWN_ENV_MAX];
        size_t n = spawn_env_refused(ev, refused, ELEMENTSOF(refused));

        for (size_t i = 0; i < n; i++)
                log_internal(LOG_WARNING, 0, f, "variable %.*s refused, not passed to the agent",
                             (int)strcspn(refused[i], "="), refused[i]);
}

int manager_seed_device(struct manager *m, int dirfd, const char *devpath)
{
        return handler_chain_seed(m->handlers, dirfd, devpath);
}

int manager_device_record(const struct manager *m, const char *devpath, struct devcache_entry *ret)
{
        return m->handlers ? handler_chain_model_peek(m->handlers, devpath, ret) : 0;
}

void manager_set_resync_uuids(struct manager *m, const char *current, const char *previous)
{
        m->resync_uuid[0] = current;
        m->resync_uuid[1] = previous;
}

/* An event a resync pass of this daemon re-triggered gets HOTPLUGD_RESYNC=1 (manager_set_resync_uuids()). */
static void mark_resync(const struct manager *m, const struct uevent *view, struct envbuf *env)
{
        const char *arg = uevent_get(view, RESYNC_SYNTH_KEY), *uuid = uevent_get(view, "SYNTH_UUID");
        bool ours = false;

        if (!arg || strcmp(arg, RESYNC_SYNTH_VALUE) != 0 || !uuid)
                return;
        for (size_t i = 0; i < ELEMENTSOF(m->resync_uuid); i++)
                ours = ours || (m->resync_uuid[i] && strcmp(uuid, m->resync_uuid[i]) == 0);
        if (ours && envbuf_add(env, RESYNC_ENV_KEY, "1") < 0)
                log_debug("SEQNUM=%" PRIu64 ": no room left to add " RESYNC_ENV_KEY "=1", view->seqnum);
}

/* A parsed event (past the ledger) through the handler chain into the queue. */
static void queue_view(struct manager *m, const struct uevent *view, const struct log_fields *f)
{
        struct uevent *ev;
        struct envbuf env;
        char name[HP_NAME_MAX];
        int r;

        envbuf_init(&env);
        r = handler_chain_run(m->handlers, view, &env, name);
        if (r == HANDLER_FILTERED) {
                m->stats.filtered++;
                log_internal(LOG_DEBUG, 0, f, "filtered by handler");
                observe_dropped(m, view, true);
                return;
        }
        if (r < 0) {
                m->stats.aborted++;
                log_internal(LOG_ERR, r, f, "handler environment exceeds %d bytes / %d variables, event aborted",
                             HP_ENV_ADD_MAX_BYTES, HP_ENV_ADD_MAX_VARS);
                observe_dropped(m, view, false);
                return;
        }
        mark_resync(m, view, &env);
        /* Not from the source (a takeover, a resync): no drain of the source will tell of it. */
        if (!m->feeding && view->seqnum > m->drained_through)
                m->drained_through = view->seqnum;

        r = uevent_dup(view, &env, name[0] ? name : NULL, &ev);
        if (r < 0) {
                manager_queue_failed(m, view, r);
                return;
        }
        log_refused(ev, f);
        r = manager_queue_push(m, ev);
        if (r < 0) {
                /* Reading stops before the bound, so this is out of memory. */
                manager_queue_failed(m, view, r);
                free(ev);
                return;
        }
        m->stats.queued++;
        observe_queued(m, ev);
        if (r == 0)
                free(ev); /* the backlog keeps its own copy */
        if (manager_held(m) > m->stats.peak_held)
                m->stats.peak_held = manager_held(m);
        log_internal(LOG_DEBUG, 0, f, "queued");
}

bool manager_probe_hold(struct manager *m, const struct uevent *ev)
{
        if (ev->seqnum <= m->drained_through || m->stopping || manager_replaying(m) || manager_input_paused(m))
                return false;
        if (uevent_get_extra(ev, "PHYSDEVDRIVER") || uevent_get(ev, "PHYSDEVDRIVER"))
                return false;
        return handler_chain_probe(m->handlers, ev, NULL, 0) == DEVMODEL_PROBE_OPEN;
}

bool manager_physdev_driver(struct manager *m, const struct uevent *ev, char *entry, size_t size)
{
        static const char key[] = "PHYSDEVDRIVER=";

        assert(size > sizeof(key));
        memcpy(entry, key, sizeof(key));
        return handler_chain_probe(m->handlers, ev, entry + sizeof(key) - 1, size - sizeof(key) + 1) ==
                       DEVMODEL_PROBE_BOUND &&
               !uevent_get(ev, "PHYSDEVDRIVER");
}

int manager_inject_synthetic(struct manager *m, const char *data, size_t size)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        enum uevent_reject why;
        struct log_fields f;
        struct uevent view;

        if (uevent_parse(data, size, vars, &view, &why) < 0)
                return -EBADMSG;
        view.received = now_usec(CLOCK_MONOTONIC);
        view.received_real = now_usec(CLOCK_REALTIME);
        uevent_log_fields(&view, &f);
        log_internal(LOG_DEBUG, 0, &f, "synthesised event");
        queue_view(m, &view, &f);
        return 0;
}

int manager_inject(struct manager *m, const char *data, size_t size)
{
        if (size == 0 || size > HP_UEVENT_MAX_SIZE)
                return -EINVAL;
        manager_process_datagram(m, data, size, now_usec(CLOCK_MONOTONIC), now_usec(CLOCK_REALTIME));
        return 0;
}

enum manager_feed manager_feed_room(const struct manager *m)
{
        if (m->stopping)
                return MANAGER_FEED_STOP;
        if (manager_held(m) >= m->max_queue || manager_bytes_held(m) + HP_QUEUE_BYTES_EVENT_MAX > m->budget)
                return MANAGER_FEED_FULL;
        return MANAGER_FEED_GO_ON;
}

_Static_assert(HP_QUEUE_BYTES_EVENT_MAX >= 64 * 1024 + 20 * 1024 + HP_UEVENT_MAX_SIZE + 64,
               "a backlog chunk or an event's copy, and its journal record, fit in the room reading leaves");
_Static_assert(HP_QUEUE_BYTES_MIN / 4 > HP_QUEUE_BYTES_EVENT_MAX, "reading goes on below the resume mark");

/* Keep the most bytes held, for status and the logs. */
static void note_peak_bytes(struct manager *m)
{
        uint64_t bytes = manager_bytes_held(m);

        if (bytes > m->stats.peak_bytes)
                m->stats.peak_bytes = bytes;
}

void manager_note_journal_bytes(struct manager *m, uint64_t bytes)
{
        m->journal_bytes = bytes;
        note_peak_bytes(m);
}

bool manager_overloaded(const struct manager *m)
{
        return m->overloaded;
}

/* "N events, B bytes held (queue Q, backlog L, jobs J, journal H)" into @buf. */
static const char *held_text(const struct manager *m, char *buf, size_t size)
{
        snprintf(buf, size, "%zu events, %" PRIu64 " bytes held (window %zu, backlog %zu, jobs %zu, after-udev %zu, "
                 "journal %" PRIu64 ")", manager_held(m), manager_bytes_held(m), scheduler_bytes(m->scheduler),
                 backlog_bytes(m->backlog), manager_jobs_bytes(m), udev_wait_bytes(m), m->journal_bytes);
        return buf;
}

enum manager_feed manager_feed(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real,
                               usec_t sent)
{
        /* A source feeds only when told to go on, so feeding never takes the held
         * events past max_queue (only synthesised and taken-over events can). */
        assert(manager_feed_room(m) == MANAGER_FEED_GO_ON);
        m->stats.received++;
        observe_datagram(m, data, size, mono, real);
        m->feeding = true;
        manager_process_datagram(m, data, size, mono, sent);
        m->feeding = false;
        note_peak_bytes(m);
        return manager_feed_room(m);
}

bool manager_feeding(const struct manager *m)
{
        return m->feeding;
}

void manager_feed_overflow(struct manager *m)
{
        ledger_note_overflow(&m->ledger);
        observe_overflow(m);
}

void manager_feed_refused(struct manager *m)
{
        m->stats.dropped_sender++;
}

void manager_feed_dropped_keys(struct manager *m, size_t n)
{
        m->stats.dropped_keys += n;
}

void manager_feed_paused(struct manager *m)
{
        char held[192], before[96] = "";
        bool bytes = manager_held(m) < m->max_queue;

        m->overloaded = true;
        m->overloaded_since = now_usec(CLOCK_MONOTONIC);
        m->stats.overloads++;
        /* Overloads that come every second or two under a long storm: one warning a minute. */
        m->overload_quiet = m->overload_logged != 0 &&
                            m->overloaded_since < m->overload_logged + HP_OVERLOAD_LOG_USEC;
        if (m->overload_quiet)
                m->overloads_unlogged++;
        else {
                if (m->overloads_unlogged > 0)
                        snprintf(before, sizeof(before), "; %" PRIu64 " overloads since the last such line",
                                 m->overloads_unlogged);
                m->overload_logged = m->overloaded_since;
                m->overloads_unlogged = 0;
        }
        log_full(m->overload_quiet ? LOG_DEBUG : LOG_WARNING,
                 "overloaded: %s, at the %s (%" PRIu64 "); reading stopped until %zu events and %" PRIu64
                 " bytes are held: the kernel keeps what comes in the socket buffer and drops the rest, "
                 "which resync recovers%s",
                 held_text(m, held, sizeof(held)), bytes ? "max-queue-bytes budget" : "max-queue limit",
                 bytes ? m->budget : (uint64_t)m->max_queue, m->resume_mark, m->budget_resume, before);
        observe_overload(m, true);
}

void manager_feed_end(struct manager *m, bool drained)
{
        if (drained) {
                m->drained_through = MAX(m->drained_through, m->ledger.last);
                observe_input_drained(m);
        }
        manager_dispatch(m);
}

void manager_feed_fatal(struct manager *m, int error)
{
        (void)sd_event_exit(m->event, error);
}

/*
 * Look for the exit after every dispatch from now on: only once stopping or
 * at the input's end can manager_maybe_exit() end the loop.  Before that
 * the post source stays off, as it would cost every event one more turn of
 * the loop (an epoll_wait() with nothing to do).
 */
static void watch_for_exit(struct manager *m)
{
        (void)sd_event_source_set_enabled(m->exit_check, SD_EVENT_ON);
        manager_maybe_exit(m);
}

void manager_feed_finished(struct manager *m)
{
        watch_for_exit(m);
}

int manager_drain_input(struct manager *m)
{
        if (m->in.ops->drain)
                return m->in.ops->drain(m->in.data); /* feeds, then manager_feed_end() */
        manager_dispatch(m);
        return 1;
}

int manager_sync_input(struct manager *m)
{
        return m->in.ops->sync(m->in.data);
}

bool manager_input_paused(const struct manager *m)
{
        return m->in.ops && m->in.ops->paused && m->in.ops->paused(m->in.data);
}

void manager_input_maybe_resume(struct manager *m)
{
        bool was = m->overloaded;
        char held[192];

        if (m->stopping || manager_held(m) > m->resume_mark || manager_bytes_held(m) > m->budget_resume ||
            !manager_input_paused(m))
                return;
        m->overloaded = false;
        if (was)
                log_full(m->overload_quiet ? LOG_DEBUG : LOG_NOTICE,
                         "overload over after %" PRIu64 " ms: %s; reading again",
                         (now_usec(CLOCK_MONOTONIC) - m->overloaded_since) / USEC_PER_MSEC,
                         held_text(m, held, sizeof(held)));
        if (m->in.ops->resume)
                m->in.ops->resume(m->in.data);
        if (was)
                observe_overload(m, false);
}

int manager_input_rcvbuf(const struct manager *m)
{
        return m->in.ops && m->in.ops->rcvbuf ? m->in.ops->rcvbuf(m->in.data) : 0;
}

int manager_source_fd(const struct manager *m)
{
        return m->in.ops && m->in.ops->fd ? m->in.ops->fd(m->in.data) : -1;
}

bool manager_replaying(const struct manager *m)
{
        return m->in.ops && m->in.ops->replay;
}

static void manager_close_source(struct manager *m)
{
        if (m->in.ops && m->in.ops->free)
                m->in.ops->free(m->in.data);
        m->in.ops = NULL;
        m->in.data = NULL;
}

/* ---- lifecycle ----------------------------------------------------------- */

static int on_shutdown_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;

        log_warning("%zu agent(s) still running at the shutdown deadline, killing them",
                    scheduler_running(m->scheduler));
        return sd_event_exit(m->event, 0);
}

void manager_maybe_exit(struct manager *m)
{
        if (m->stopping && scheduler_running(m->scheduler) == 0)
                sd_event_exit(m->event, 0);
        else if (m->in.ops && m->in.ops->finished && m->in.ops->finished(m->in.data) && manager_held(m) == 0)
                sd_event_exit(m->event, 0);
}

void manager_stop(struct manager *m)
{
        size_t dropped;

        if (m->stopping)
                return;
        m->stopping = true;
        if (m->in.ops->stop)
                m->in.ops->stop(m->in.data);
        dropped = manager_queue_drop_all(m) + manager_jobs_drop_waiting(m);
        log_info("stopping: %zu queued event(s) not run, waiting up to %" PRIu64 "s for %zu running agent(s)",
                 dropped, m->cfg.shutdown_grace_usec / USEC_PER_SEC, scheduler_running(m->scheduler));
        observe_stopping(m);
        if (scheduler_running(m->scheduler) > 0)
                (void)sd_event_add_time_relative(m->event, &m->shutdown_timer, CLOCK_MONOTONIC,
                                                 m->cfg.shutdown_grace_usec, USEC_PER_MSEC,
                                                 on_shutdown_deadline, m);
        watch_for_exit(m);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;

        log_info("received %s", strsignal((int)si->ssi_signo));
        manager_stop(m);
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        (void)manager_reload(userdata, NULL, 0);
        return 0;
}

static int on_post(sd_event_source *s, void *userdata)
{
        manager_maybe_exit(userdata);
        return 0;
}

/* The netlink source, on our own socket or the one handed over. */
static int manager_open_source(struct manager *m)
{
        struct uevent_source *source;
        int r;

        if (m->cfg.source_fd >= 0) {
                r = uevent_source_adopt(m->cfg.source_fd, m->cfg.trust, m->cfg.rcvbuf, &source);
                if (r == -EPROTOTYPE)
                        return log_error_errno(r, "uevent socket fd %d is not a netlink socket; refused (only "
                                               "the test build hotplugd-test trusts another socket)",
                                               m->cfg.source_fd);
                if (r < 0)
                        return log_error_errno(r, "cannot use uevent socket fd %d", m->cfg.source_fd);
                if (m->cfg.trust != UEVENT_TRUST_KERNEL)
                        log_warning("test build: trusting every sender on uevent socket fd %d", m->cfg.source_fd);
                m->cfg.source_fd = -1;
        } else {
                r = uevent_source_open(m->cfg.rcvbuf, &source);
                if (r < 0)
                        return log_error_errno(r, "cannot open the kernel uevent socket");
        }
        if (source->rcvbuf < m->cfg.rcvbuf)
                log_warning("netlink receive buffer is %d bytes, not the %d requested", source->rcvbuf,
                            m->cfg.rcvbuf);
        return source_netlink_new(m, m->event, source, &m->in.ops, &m->in.data);
}

/* The event loop: SIGTERM/SIGINT stop, SIGHUP reloads, SIGCHLD comes through
 * pidfds (blocked here so agents' exits do not interrupt), the watchdog. */
static int manager_open_loop(struct manager *m)
{
        sigset_t mask;
        int r;

        r = sd_event_new(&m->event);
        if (r < 0)
                return r;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        if ((r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m)) < 0 ||
            (r = sd_event_add_post(m->event, &m->exit_check, on_post, m)) < 0 ||
            (r = sd_event_source_set_enabled(m->exit_check, SD_EVENT_OFF)) < 0)
                return r;
        (void)sd_event_set_watchdog(m->event, true);
        log_watch_open(m->event); /* the log never blocks the loop (log.h) */
        return 0;
}

/* The bounds on what is held, from the configuration, and where reading goes on (three quarters). */
static void set_bounds(struct manager *m)
{
        m->max_queue = m->cfg.max_queue;
        m->resume_mark = m->max_queue - m->max_queue / 4;
        m->budget = m->cfg.max_queue_bytes;
        m->budget_resume = m->budget - m->budget / 4;
}

int manager_new(const struct manager_config *cfg, struct manager **ret)
{
        struct manager *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->born_mono = now_usec(CLOCK_MONOTONIC);
        m->born_real = now_usec(CLOCK_REALTIME);
        r = manager_config_copy(cfg, &m->cfg);
        if (r < 0) {
                /* As at fail: below, the handed-over descriptors are still ours to close. */
                safe_close(cfg->source_fd);
                safe_close(cfg->control_fd);
                free(m);
                return r;
        }
        r = manager_jobs_init(m);
        if (r < 0)
                goto fail;
        set_bounds(m);

        /* The manager enforces max_queue itself (it can change on reload). */
        r = scheduler_new(m->cfg.ordering, manager_concurrency(m)->limit, HP_QUEUE_MAX_LIMIT, &m->scheduler);
        if (r < 0)
                goto fail;
        r = backlog_new(&m->backlog);
        if (r < 0)
                goto fail;
        m->cfg.handlers.dry_run = m->cfg.dry_run;
        r = handler_chain_new(&m->cfg.handlers, &m->handlers);
        if (r < 0) {
                log_error_errno(r, "cannot set up handlers");
                goto fail;
        }

        r = manager_open_loop(m);
        if (r < 0)
                goto fail;
        r = manager_jobs_open(m);
        if (r < 0)
                goto fail;
        if (m->cfg.replay_path) {
                /* Replay: the recording is the only source; no kernel baseline. */
                ledger_init(&m->ledger, 0);
                r = source_replay_new(m, m->event, &m->cfg, &m->in.ops, &m->in.data);
                if (r < 0)
                        goto fail;
                if (m->cfg.dry_run && m->cfg.replay_speed > 0)
                        manager_jobs_set_dry_duration(m, m->in.ops->dry_duration, m->in.data);
        } else {
                r = manager_open_source(m);
                if (r < 0)
                        goto fail;
                /* Baseline after the socket is live: nothing between can be missed. */
                ledger_init(&m->ledger, read_kernel_seqnum(m->cfg.sysfs_root));
        }
        r = manager_observe_open(m);
        if (r < 0)
                goto fail;

        *ret = m;
        return 0;
fail:
        /* Handed over, not yet adopted: still ours to close. */
        safe_close(m->cfg.source_fd);
        safe_close(m->cfg.control_fd);
        manager_free(m);
        return r;
}

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        manager_jobs_close(m);
        manager_close_source(m);
        manager_observe_close(m);
        sd_event_source_disable_unref(m->shutdown_timer);
        sd_event_source_disable_unref(m->exit_check);
        if (m->scheduler && m->backlog)
                (void)manager_queue_drop_all(m);
        m->handlers = handler_chain_free(m->handlers);
        if (m->event)
                log_watch_close();
        sd_event_unref(m->event);
        scheduler_free(m->scheduler);
        backlog_free(m->backlog);
        free(m->jobs); /* emptied by manager_jobs_close() */
        manager_config_free(&m->cfg);
        free(m);
        return NULL;
}

/*
 * What a reload does not change: the source, the outputs, dry-run and the
 * shutdown grace.  @n takes them from @old; the strings are swapped, so
 * whoever borrowed @old's (the recorder its path) keeps a live one, and
 * @n's unused copies leave with @old.
 */
static void keep_fixed(struct manager_config *n, struct manager_config *old)
{
        const char *s;

#define SWAP_STR(f) (s = n->f, n->f = old->f, old->f = s)
        SWAP_STR(sysfs_root);
        SWAP_STR(control_path);
        SWAP_STR(record_path);
        SWAP_STR(handover_path);
        SWAP_STR(replay_path);
#undef SWAP_STR
        n->shutdown_grace_usec = old->shutdown_grace_usec;
        n->dry_run = old->dry_run;
        n->rcvbuf = old->rcvbuf;
        n->source_fd = old->source_fd;
        n->trust = old->trust;
        n->control_fd = old->control_fd;
        n->replay_speed = old->replay_speed;
        n->rebroadcast_group = old->rebroadcast_group;
}

int manager_reconfigure(struct manager *m, const struct manager_config *cfg)
{
        struct manager_config n, old;
        struct handler_chain *chain = NULL;
        int r;

        /* Build everything that can fail first; commit only when all succeeded. */
        r = manager_config_copy(cfg, &n);
        if (r < 0)
                return r;
        n.handlers.dry_run = m->cfg.dry_run; /* command line only: a reload keeps it */
        r = handler_chain_new(&n.handlers, &chain);
        if (r < 0) {
                manager_config_free(&n);
                return r;
        }

        handler_chain_take_model(chain, m->handlers); /* what the devices' events said outlives a reload */
        handler_chain_free(m->handlers);
        m->handlers = chain;
        keep_fixed(&n, &m->cfg);
        old = m->cfg;
        m->cfg = n;
        manager_config_free(&old);
        set_bounds(m);
        manager_jobs_reconfigured(m); /* the ordering and the limit too */
        udev_wait_reconfigured(m);
        kmod_load_reconfigured(m);
        manager_queue_refill(m); /* the window follows max_children */
        manager_input_maybe_resume(m);
        manager_dispatch(m);
        return 0;
}

void manager_set_config_path(struct manager *m, const char *path)
{
        m->config_path = path;
}

void manager_set_reload(struct manager *m, manager_reload_fn fn, void *userdata)
{
        m->reload = fn;
        m->reload_userdata = userdata;
}

int manager_reload(struct manager *m, char *err, size_t err_size)
{
        char buf[1024] = "";
        int r;

        if (!m->reload) {
                snprintf(err ? err : buf, err ? err_size : sizeof(buf), "reloading is not supported here");
                return -EOPNOTSUPP;
        }
        r = m->reload(m, m->reload_userdata, buf, sizeof(buf));
        if (r < 0)
                log_error("reload failed, keeping the running configuration: %s",
                          buf[0] ? buf : strerror(-r));
        else
                log_info("configuration reloaded: agent %s, ordering %s, max %u children, %zu events held",
                         m->cfg.hotplug_d ? m->cfg.hotplug_d : m->cfg.agent, ordering_to_string(m->cfg.ordering),
                         m->cfg.max_children, manager_held(m));
        if (err && err_size)
                snprintf(err, err_size, "%s", buf);
        return r;
}


int manager_run(struct manager *m)
{
        int r;

        log_info("listening: agent %s, ordering %s, max %u children, queue limit %zu events and %" PRIu64
                 " bytes, ledger baseline %" PRIu64,
                 m->cfg.hotplug_d ? m->cfg.hotplug_d : m->cfg.agent, ordering_to_string(m->cfg.ordering),
                 m->cfg.max_children, m->max_queue, m->budget, m->ledger.baseline);
        if (!m->cfg.hotplug_d && !m->cfg.dry_run && access(m->cfg.agent, X_OK) < 0)
                log_warning_errno(errno, "agent %s is not executable now", m->cfg.agent);
        r = sd_event_loop(m->event);
        manager_kill_running(m);
        log_info("stopped: %" PRIu64 " events processed, %" PRIu64 " agents started, %" PRIu64 " failed, "
                 "%" PRIu64 " gaps, %" PRIu64 " duplicates, %" PRIu64 " overflows, peak queue %" PRIu64
                 " (%" PRIu64 " bytes), overloaded %" PRIu64 " times",
                 m->ledger.processed, m->stats.started, m->stats.failed, m->ledger.gaps, m->ledger.duplicates,
                 m->ledger.overflows, m->stats.peak_held, m->stats.peak_bytes, m->stats.overloads);
        return r;
}

const struct ledger *manager_ledger(const struct manager *m)
{
        return &m->ledger;
}

const struct manager_stats *manager_stats(const struct manager *m)
{
        return &m->stats;
}

const struct manager_config *manager_cfg(const struct manager *m)
{
        return &m->cfg;
}

sd_event *manager_event(const struct manager *m)
{
        return m->event;
}

bool manager_stopping(const struct manager *m)
{
        return m->stopping;
}

size_t manager_queue_room(const struct manager *m)
{
        size_t held = manager_held(m);

        return held >= m->max_queue ? 0 : m->max_queue - held;
}

bool manager_continue_ledger(struct manager *m, uint64_t last)
{
        /* A SEQNUM above the kernel's own is from another boot: keep the kernel's baseline. */
        bool same_boot = last > 0 && (m->ledger.baseline == 0 || last <= m->ledger.baseline) &&
                         m->ledger.processed == 0;

        if (same_boot)
                ledger_init(&m->ledger, last);
        return same_boot;
}

void manager_count_taken_over(struct manager *m, size_t n, size_t again)
{
        m->stats.taken_over += n;
        m->stats.reruns += again;
}

int manager_take_control_fd(struct manager *m)
{
        return take_fd(&m->cfg.control_fd);
}
