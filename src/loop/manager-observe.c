/* SPDX-License-Identifier: MIT */
/*
 * What the pipeline tells its observers: the control socket (monitor
 * clients, settle and trigger waiters, status), the handover journal
 * (manager-handover.c), the service status line, and later the recorder and
 * rebroadcast.  Each observe_*() call is cheap when nobody listens.
 *
 * Invariant: every valid event that entered the ledger leaves through
 * exactly one of observe_dropped() or observe_done(), so settle and
 * "wait for these UUIDs" can never wait for an event that is gone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "control/control.h"
#include "shared/escape.h"
#include "recovery/handover.h"
#include "shared/log.h"
#include "loop/manager-internal.h"
#include "uevent/rebroadcast.h"
#include "uevent/record.h"
#include "loop/manager-resync.h"
#include "pipeline/scheduler.h"

static void ctl_status(void *userdata, struct control_status *ret)
{
        struct manager *m = userdata;
        struct resync_stats rs;

        manager_resync_stats(m, &rs);
        *ret = (struct control_status){
                .ledger = &m->ledger,
                .queued = scheduler_queued(m->scheduler),
                .running = scheduler_running(m->scheduler),
                .paused = m->paused,
                .received = m->stats.received,
                .rejected = m->stats.rejected,
                .filtered = m->stats.filtered,
                .started = m->stats.started,
                .finished = m->stats.finished,
                .failed = m->stats.failed,
                .timeouts = m->stats.timeouts,
                .taken_over = m->stats.taken_over,
                .reruns = m->stats.reruns,
                .resync = rs.enabled,
                .resyncs = rs.passes,
                .resync_changed = rs.changed,
                .resync_added = rs.added,
                .resync_removed = rs.removed,
                .devices = rs.devices,
        };
}

static void ctl_agents(void *userdata, void (*fn)(const struct control_agent *a, void *arg), void *arg)
{
        struct manager *m = userdata;
        struct job *j;

        list_for_each(j, &m->jobs, link) {
                if (j->pid <= 0 || !j->child)
                        continue;
                struct control_agent a = {
                        .seqnum = j->ev->seqnum,
                        .devpath = j->ev->devpath,
                        .program = j->program,
                        .pid = j->pid,
                        .started = j->started,
                };
                fn(&a, arg);
        }
}

static void ctl_progress(void *userdata, struct control_progress *ret)
{
        struct manager *m = userdata;

        ret->last_seen = m->ledger.last;
        ret->lowest_held = scheduler_lowest_held(m->scheduler);
        ret->replaying = m->replay != NULL;
}

static int ctl_sync(void *userdata)
{
        struct manager *m = userdata;

        if (!m->source)
                return 1; /* replaying: what was fed is queued, nothing to read */
        if (m->source_paused || m->stopping)
                return 0;
        manager_drain_input(m);
        return m->source_paused ? 0 : 1;
}

static int ctl_pause(void *userdata)
{
        manager_pause(userdata);
        return 0;
}

static int ctl_resume(void *userdata)
{
        manager_resume(userdata);
        return 0;
}

static int ctl_reload(void *userdata, char *err, size_t size)
{
        return manager_reload(userdata, err, size);
}

static const struct control_ops ctl_ops = {
        .status = ctl_status,
        .for_each_agent = ctl_agents,
        .progress = ctl_progress,
        .sync_input = ctl_sync,
        .pause = ctl_pause,
        .resume = ctl_resume,
        .reload = ctl_reload,
};

void manager_pause(struct manager *m)
{
        if (!m->paused)
                log_notice("paused: events keep queueing, no agent starts");
        m->paused = true;
}

void manager_resume(struct manager *m)
{
        if (m->paused)
                log_notice("resumed with %zu event(s) queued", scheduler_queued(m->scheduler));
        m->paused = false;
        manager_dispatch(m);
}

/* ---- recorder and rebroadcast --------------------------------------------- */

static int on_recorder_sync(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        int r = record_writer_sync(m->recorder);

        if (r < 0)
                log_warning_errno(r, "cannot sync the recording %s", m->cfg.record_path);
        return 0;
}

static void record(struct manager *m, const struct record *rec)
{
        int r;

        if (!m->recorder)
                return;
        r = record_append(m->recorder, rec);
        if (r < 0) {
                log_error_errno(r, "writing the recording %s failed; recording stops", m->cfg.record_path);
                m->recorder_sync = sd_event_source_disable_unref(m->recorder_sync);
                m->recorder = record_writer_free(m->recorder);
                return;
        }
        /* Data reaches the disk within a second, never one fdatasync per record. */
        if (m->recorder_sync && sd_event_source_get_enabled(m->recorder_sync, NULL) == 0) {
                (void)sd_event_source_set_time_relative(m->recorder_sync, USEC_PER_SEC);
                (void)sd_event_source_set_enabled(m->recorder_sync, SD_EVENT_ONESHOT);
        }
}

static int observe_open_outputs(struct manager *m)
{
        int r;

        if (m->cfg.record_path) {
                r = record_writer_open(m->cfg.record_path, &m->recorder);
                if (r == -ELOOP)
                        return log_error_errno(r, "cannot open the recording %s: it is a symbolic link; refused",
                                               m->cfg.record_path);
                if (r < 0)
                        return log_error_errno(r, "cannot open the recording %s", m->cfg.record_path);
                r = sd_event_add_time_relative(m->event, &m->recorder_sync, CLOCK_MONOTONIC, USEC_PER_SEC,
                                               USEC_PER_SEC / 10, on_recorder_sync, m);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_enabled(m->recorder_sync, SD_EVENT_OFF);
                log_info("recording to %s", m->cfg.record_path);
        }
        if (m->cfg.rebroadcast_group) {
                r = rebroadcast_new(m->cfg.rebroadcast_group, &m->rebroadcast);
                if (r < 0)
                        return log_error_errno(r, "cannot rebroadcast on netlink group %u", m->cfg.rebroadcast_group);
                log_info("rebroadcasting processed events on netlink group %u", m->cfg.rebroadcast_group);
        }
        return 0;
}

void observe_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real)
{
        if (m->recorder)
                record(m, &(struct record){ .type = RECORD_DATAGRAM,
                                            .datagram = { .realtime = real, .monotonic = mono,
                                                          .data = data, .size = size } });
}

void observe_gap(struct manager *m, const struct ledger_gap *gap)
{
        if (m->recorder)
                record(m, &(struct record){ .type = RECORD_GAP,
                                            .gap = { .monotonic = now_usec(CLOCK_MONOTONIC), .first = gap->first,
                                                     .last = gap->last,
                                                     .class = (enum record_gap_class)gap->class } });
}

/* Why @ev waits for @b, e.g. "parent /devices/virtual/net/veth0". */
static void wait_reason(const struct manager *m, const struct uevent *ev, const struct uevent *b, char *buf,
                        size_t size)
{
        char esc[512];
        const char *what;

        escape_cstr(b->devpath, esc, sizeof(esc));
        if (m->cfg.ordering == ORDERING_STRICT)
                what = "strict order after";
        else if (strcmp(b->devpath, ev->devpath) == 0)
                what = "same device";
        else if (devpath_is_prefix(b->devpath, b->devpath_len, ev->devpath, ev->devpath_len))
                what = "parent";
        else if (devpath_is_prefix(ev->devpath, ev->devpath_len, b->devpath, b->devpath_len))
                what = "child";
        else
                what = "renamed device";
        snprintf(buf, size, "%s %s", what, esc);
}

void observe_waiting(struct manager *m, const struct uevent *ev, const struct uevent *blocker)
{
        struct log_fields f = LOG_FIELDS_INIT;
        char reason[600];

        if (!blocker)
                return;
        wait_reason(m, ev, blocker, reason, sizeof(reason));
        f.seqnum = ev->seqnum;
        f.devpath = ev->devpath;
        f.action = ev->action;
        f.subsystem = ev->subsystem;
        log_internal(m->cfg.dry_run ? LOG_INFO : LOG_DEBUG, 0, &f, "waits for SEQNUM=%" PRIu64 " (%s)",
                     blocker->seqnum, reason);
        if (m->recorder)
                record(m, &(struct record){ .type = RECORD_WAIT,
                                            .wait = { .seqnum = ev->seqnum, .blocker = blocker->seqnum,
                                                      .monotonic = now_usec(CLOCK_MONOTONIC),
                                                      .reason = reason } });
}

void observe_exec_failed(struct manager *m, const struct job *j, int error)
{
        if (m->recorder)
                record(m, &(struct record){ .type = RECORD_AGENT_END,
                                            .agent_end = { .seqnum = j->ev->seqnum,
                                                           .monotonic = now_usec(CLOCK_MONOTONIC), .pid = 0,
                                                           .status = RECORD_AGENT_EXEC_FAILED,
                                                           .value = error < 0 ? -error : error } });
}

static void rebroadcast(struct manager *m, const struct uevent *ev)
{
        uint64_t suppressed;

        if (!m->rebroadcast || rebroadcast_send(m->rebroadcast, ev->buf, ev->size) >= 0)
                return;
        /* Never fatal; one line per 5 s at most. */
        suppressed = m->rebroadcast->failed - m->rebroadcast_failed_logged;
        if (m->rebroadcast_last_log && now_usec(CLOCK_MONOTONIC) - m->rebroadcast_last_log < HP_REJECT_LOG_INTERVAL_USEC)
                return;
        m->rebroadcast_last_log = now_usec(CLOCK_MONOTONIC);
        m->rebroadcast_failed_logged = m->rebroadcast->failed;
        log_warning_errno(m->rebroadcast->last_error, "SEQNUM=%" PRIu64 ": rebroadcast failed (%" PRIu64
                          " failures since the last report)", ev->seqnum, suppressed);
}

/* ---- open/close ------------------------------------------------------------ */

int manager_observe_open(struct manager *m)
{
        const char *path = m->cfg.control_path ? m->cfg.control_path : HOTPLUGD_RUNDIR "/control";
        int r;

        r = observe_open_outputs(m);
        if (r < 0)
                return r;
        if (!*path)
                return 0;
        r = control_new(m->event, path, -1, &ctl_ops, m, &m->control);
        if (r == -EADDRINUSE)
                return log_error_errno(r, "another hotplugd answers on %s; refusing to run twice", path);
        if (r < 0)
                /* The daemon's job is running agents: go on without hotplugctl. */
                log_warning_errno(r, "no control socket at %s, hotplugctl will not reach this daemon", path);
        return 0;
}

void manager_observe_close(struct manager *m)
{
        m->control = control_free(m->control);
        m->recorder_sync = sd_event_source_disable_unref(m->recorder_sync);
        m->recorder = record_writer_free(m->recorder); /* syncs */
        m->rebroadcast = rebroadcast_free(m->rebroadcast);
        m->status_timer = sd_event_source_disable_unref(m->status_timer);
        m->handover = handover_free(m->handover);
}

/* ---- service status -------------------------------------------------------- */

static void status_format(struct manager *m, char *buf, size_t size)
{
        const struct ledger *l = &m->ledger;

        int n = snprintf(buf, size,
                         "%s: %" PRIu64 " processed, %zu queued, %zu running, %" PRIu64 " gaps (%" PRIu64
                         " missing), %" PRIu64 " duplicates, %" PRIu64 " overflows",
                         m->stopping ? "Stopping" : m->paused ? "Paused" : "Processing uevents", l->processed,
                         scheduler_queued(m->scheduler), scheduler_running(m->scheduler), l->gaps, l->missing,
                         l->duplicates, l->overflows);

        if (m->stats.taken_over > 0 && n > 0 && (size_t)n < size)
                snprintf(buf + n, size - (size_t)n, ", %" PRIu64 " taken over (%" PRIu64 " re-run)",
                         m->stats.taken_over, m->stats.reruns);
}

static void status_send(struct manager *m, bool stopping)
{
        char buf[sizeof(m->status_sent)];

        status_format(m, buf, sizeof(buf));
        if (!stopping && strcmp(buf, m->status_sent) == 0)
                return;
        snprintf(m->status_sent, sizeof(m->status_sent), "%s", buf);
        m->status_fn(m, buf, stopping, m->status_userdata);
}

static int on_status_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        status_send(userdata, false);
        return 0;
}

/* Something changed: report it within a second (one timer, armed once). */
static void status_touch(struct manager *m)
{
        int enabled = SD_EVENT_OFF;

        if (!m->status_fn || m->stopping)
                return;
        if (!m->status_timer) {
                if (sd_event_add_time_relative(m->event, &m->status_timer, CLOCK_MONOTONIC, USEC_PER_SEC,
                                               100 * USEC_PER_MSEC, on_status_timer, m) < 0)
                        return;
                (void)sd_event_source_set_enabled(m->status_timer, SD_EVENT_ONESHOT);
                return;
        }
        if (sd_event_source_get_enabled(m->status_timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        (void)sd_event_source_set_time_relative(m->status_timer, USEC_PER_SEC);
        (void)sd_event_source_set_enabled(m->status_timer, SD_EVENT_ONESHOT);
}

void manager_set_status(struct manager *m, manager_status_fn fn, void *userdata)
{
        m->status_fn = fn;
        m->status_userdata = userdata;
}

void observe_stopping(struct manager *m)
{
        if (m->status_timer)
                (void)sd_event_source_set_enabled(m->status_timer, SD_EVENT_OFF);
        if (m->status_fn)
                status_send(m, true);
}

static void notify(struct manager *m, enum control_event_kind kind, const struct uevent *ev)
{
        struct control_event e = {
                .kind = kind,
                .seqnum = ev->seqnum,
                .action = ev->action,
                .devpath = ev->devpath,
                .subsystem = ev->subsystem,
                .uuid = uevent_get(ev, "SYNTH_UUID"),
        };

        control_notify_event(m->control, &e);
}

void observe_received(struct manager *m, const struct uevent *view, enum ledger_verdict v,
                      const struct ledger_gap *gap)
{
        if (!m->control)
                return;
        if (v == LEDGER_GAP) {
                struct control_event g = { .kind = CONTROL_EVENT_GAP, .gap = *gap, .time = view->received_real };
                control_notify_event(m->control, &g);
        }
        struct control_event e = {
                .kind = CONTROL_EVENT_RECEIVED,
                .seqnum = view->seqnum,
                .time = view->received_real,
                .action = view->action,
                .devpath = view->devpath,
                .subsystem = view->subsystem,
                .uuid = uevent_get(view, "SYNTH_UUID"),
                .verdict = v,
        };
        control_notify_event(m->control, &e);
}

void observe_overflow(struct manager *m)
{
        struct control_event e = { .kind = CONTROL_EVENT_OVERFLOW };

        control_notify_event(m->control, &e);
        if (m->recorder)
                record(m, &(struct record){ .type = RECORD_OVERFLOW,
                                            .overflow = { .realtime = now_usec(CLOCK_REALTIME),
                                                          .monotonic = now_usec(CLOCK_MONOTONIC) } });
}

void observe_input_drained(struct manager *m)
{
        control_notify_input_drained(m->control);
}

void observe_queued(struct manager *m, const struct uevent *ev)
{
        handover_note_queued(m, ev);
        status_touch(m);
        if (m->control)
                notify(m, CONTROL_EVENT_QUEUED, ev);
}

void observe_dropped(struct manager *m, const struct uevent *view, bool filtered)
{
        handover_note_dropped(m, view);
        status_touch(m);
        if (!m->control)
                return;
        if (filtered)
                notify(m, CONTROL_EVENT_FILTERED, view);
        control_notify_processed(m->control, view->seqnum);
        control_notify_uuid(m->control, uevent_get(view, "SYNTH_UUID"));
}

static struct control_event job_event(const struct job *j, enum control_event_kind kind)
{
        return (struct control_event){
                .kind = kind,
                .seqnum = j->ev->seqnum,
                .action = j->ev->action,
                .devpath = j->ev->devpath,
                .subsystem = j->ev->subsystem,
                .pid = j->pid,
                .program = j->program,
        };
}

void observe_started(struct manager *m, const struct job *j)
{
        if (m->recorder)
                record(m, &(struct record){ .type = RECORD_AGENT_START,
                                            .agent_start = { .seqnum = j->ev->seqnum, .monotonic = j->started,
                                                             .pid = (uint32_t)j->pid, .program = j->program } });
        if (!m->control)
                return;
        struct control_event e = job_event(j, CONTROL_EVENT_STARTED);
        control_notify_event(m->control, &e);
}

void observe_finished(struct manager *m, const struct job *j, const siginfo_t *si, const char *status)
{
        if (m->recorder) {
                enum record_agent_status st = si->si_code == CLD_EXITED ? RECORD_AGENT_EXITED
                                              : j->term_sent            ? RECORD_AGENT_TIMEOUT
                                                                        : RECORD_AGENT_SIGNALED;
                record(m, &(struct record){ .type = RECORD_AGENT_END,
                                            .agent_end = { .seqnum = j->ev->seqnum,
                                                           .monotonic = now_usec(CLOCK_MONOTONIC),
                                                           .pid = (uint32_t)j->pid, .status = st,
                                                           .value = si->si_status } });
        }
        if (!m->control)
                return;
        struct control_event e = job_event(j, CONTROL_EVENT_FINISHED);
        e.status = status;
        e.duration_usec = now_usec(CLOCK_MONOTONIC) - j->started;
        control_notify_event(m->control, &e);
}

void observe_done(struct manager *m, const struct uevent *ev)
{
        /* Consumers on the rebroadcast group see a device only once its agent finished. */
        if (!m->cfg.dry_run)
                rebroadcast(m, ev);
        /* Called after scheduler_done(): @ev is no longer held, settle may complete. */
        handover_note_done(m, ev);
        status_touch(m);
        if (!m->control)
                return;
        control_notify_processed(m->control, ev->seqnum);
        control_notify_uuid(m->control, uevent_get(ev, "SYNTH_UUID"));
}
