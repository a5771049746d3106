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
#include "control.h"
#include "handover.h"
#include "log.h"
#include "manager-internal.h"
#include "scheduler.h"

static void ctl_status(void *userdata, struct control_status *ret)
{
        struct manager *m = userdata;

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
        };
}

static void ctl_agents(void *userdata, void (*fn)(const struct control_agent *a, void *arg), void *arg)
{
        struct manager *m = userdata;

        for (struct job *j = m->jobs; j; j = j->next) {
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
}

static int ctl_sync(void *userdata)
{
        struct manager *m = userdata;

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

int manager_observe_open(struct manager *m)
{
        const char *path = m->cfg.control_path ? m->cfg.control_path : HOTPLUGD_RUNDIR "/control";
        int r;

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
        m->status_timer = sd_event_source_disable_unref(m->status_timer);
        m->handover = handover_free(m->handover);
}

/* ---- service status -------------------------------------------------------- */

static void status_format(struct manager *m, char *buf, size_t size)
{
        const struct ledger *l = &m->ledger;

        snprintf(buf, size,
                 "%s: %" PRIu64 " processed, %zu queued, %zu running, %" PRIu64 " gaps (%" PRIu64 " missing), "
                 "%" PRIu64 " duplicates, %" PRIu64 " overflows",
                 m->stopping ? "Stopping" : m->paused ? "Paused" : "Processing uevents", l->processed,
                 scheduler_queued(m->scheduler), scheduler_running(m->scheduler), l->gaps, l->missing,
                 l->duplicates, l->overflows);
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

void observe_started(struct manager *m, const struct job *j)
{
        if (!m->control)
                return;
        struct control_event e = {
                .kind = CONTROL_EVENT_STARTED,
                .seqnum = j->ev->seqnum,
                .action = j->ev->action,
                .devpath = j->ev->devpath,
                .subsystem = j->ev->subsystem,
                .pid = j->pid,
                .program = j->program,
        };
        control_notify_event(m->control, &e);
}

void observe_finished(struct manager *m, const struct job *j, const char *status)
{
        if (!m->control)
                return;
        struct control_event e = {
                .kind = CONTROL_EVENT_FINISHED,
                .seqnum = j->ev->seqnum,
                .action = j->ev->action,
                .devpath = j->ev->devpath,
                .subsystem = j->ev->subsystem,
                .pid = j->pid,
                .program = j->program,
                .status = status,
                .duration_usec = now_usec(CLOCK_MONOTONIC) - j->started,
        };
        control_notify_event(m->control, &e);
}

void observe_done(struct manager *m, const struct uevent *ev)
{
        /* Called after scheduler_done(): @ev is no longer held, settle may complete. */
        handover_note_done(m, ev);
        status_touch(m);
        if (!m->control)
                return;
        control_notify_processed(m->control, ev->seqnum);
        control_notify_uuid(m->control, uevent_get(ev, "SYNTH_UUID"));
}
