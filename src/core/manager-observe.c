/* SPDX-License-Identifier: MIT */
/*
 * What the pipeline tells its observers: the control socket (monitor
 * clients, settle and trigger waiters, status), and later the recorder and
 * rebroadcast.  Each observe_*() call is cheap when nobody listens.
 *
 * Invariant: every valid event that entered the ledger leaves through
 * exactly one of observe_dropped() or observe_done(), so settle and
 * "wait for these UUIDs" can never wait for an event that is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "control.h"
#include "log.h"
#include "manager-internal.h"
#include "manager-resync.h"
#include "scheduler.h"

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
        if (m->control)
                notify(m, CONTROL_EVENT_QUEUED, ev);
}

void observe_dropped(struct manager *m, const struct uevent *view, bool filtered)
{
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
        if (!m->control)
                return;
        control_notify_processed(m->control, ev->seqnum);
        control_notify_uuid(m->control, uevent_get(ev, "SYNTH_UUID"));
}
