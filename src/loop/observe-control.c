/* SPDX-License-Identifier: MIT */
/*
 * The control socket observer: monitor clients, settle and "wait for these
 * UUIDs" waiters, and the requests hotplugctl sends (status, pause, resume,
 * reload, sync, blame).  control.c speaks the protocol; this file turns the
 * manager's announcements into control events and answers the control
 * socket's questions from the manager's state.
 *
 * Invariants: it is the last built-in observer, so an event the monitor
 * shows as done is already recorded, rebroadcast and journalled done;
 * dropped() and done() each tell control the SEQNUM and SYNTH_UUID are
 * processed, exactly once per event.  Without a control socket (the path
 * is "", or it could not be opened) nothing is registered.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "control/control.h"
#include "shared/log.h"
#include "loop/manager-internal.h"
#include "loop/udev-wait.h"
#include "loop/kmod-load.h"
#include "loop/observe-builtin.h"
#include "loop/manager-resync.h"
#include "pipeline/scheduler.h"
#include "pipeline/spawner.h"

struct observe_control {
        struct control *control;
};

/* ---- what the control socket asks ----------------------------------------- */

/* The concurrency limit and what it is made of. */
static void ctl_status_concurrency(struct manager *m, struct control_status *ret)
{
        const struct concurrency *c = manager_concurrency(m);

        ret->ordering = ordering_to_string(manager_cfg(m)->ordering);
        ret->concurrency = concurrency_phase_to_string(c->phase);
        ret->limit = c->limit;
        ret->limit_max = c->max;
        ret->awake_max = c->awake_max;
        ret->awake = c->awake;
        ret->asleep = c->asleep;
        ret->raised = c->raised;
        ret->lowered = c->lowered;
        ret->windows = c->windows;
        ret->probes = c->probes;
        ret->probes_kept = c->probes_kept;
        ret->per_cpu_second = concurrency_per_cpu_second(&c->last);
}

/* load-modules (kmod-load.h). */
static void ctl_status_modules(const struct manager *m, struct control_status *ret)
{
        struct kmod_load_status ks;

        kmod_load_get_status(m, &ks);
        ret->load_modules = ks.state;
        ret->kmod_aliases = ks.counts.aliases;
        ret->kmod_invalid = ks.counts.invalid;
        ret->kmod_lookups = ks.counts.lookups;
        ret->kmod_not_found = ks.counts.not_found;
        ret->kmod_loads = ks.counts.loads;
        ret->kmod_saved = ks.counts.saved;
        ret->kmod_loaded = ks.counts.loaded;
        ret->kmod_failed = ks.counts.failed;
        ret->kmod_blacklisted = ks.counts.blacklisted;
        ret->kmod_timeouts = ks.counts.timeouts;
        ret->kmod_skipped = ks.counts.skipped;
        ret->kmod_waiting = ks.waiting;
        ret->kmod_in_flight = ks.in_flight;
}

static void ctl_status_firmware(const struct manager *m, struct control_status *ret)
{
        struct firmware_missing_totals fw;

        manager_firmware_missing(m, &fw);
        ret->firmware_failed = fw.failed;
        ret->firmware_untracked = fw.untracked;
        ret->firmware_n = MIN(fw.n, ELEMENTSOF(ret->firmware_name));
        for (size_t i = 0; i < ret->firmware_n; i++) {
                ret->firmware_name[i] = fw.names[i].name;
                ret->firmware_requests[i] = fw.names[i].requests;
        }
}

/* Who answers (the daemon record of status). */
static void ctl_status_identity(const struct manager *m, struct control_status *ret)
{
        const struct manager_config *cfg = manager_cfg(m);

        ret->pid = getpid();
        ret->version = PACKAGE_VERSION;
        ret->since = m->born_real;
        ret->uptime = now_usec(CLOCK_MONOTONIC) - m->born_mono;
        ret->config = m->config_path;
        ret->hotplug_d = cfg->hotplug_d && *cfg->hotplug_d ? cfg->hotplug_d : NULL;
        ret->agent = ret->hotplug_d ? NULL : cfg->agent;
        ret->log_level = log_level_to_string(log_get_max_level());
        ret->log_target = log_is_journal() ? "journal" : "stderr";
}

static void ctl_status(void *userdata, struct control_status *ret)
{
        struct manager *m = userdata;
        const struct manager_stats *st = manager_stats(m);
        struct resync_stats rs;
        struct udev_wait_status us;

        manager_resync_stats(m, &rs);
        *ret = (struct control_status){
                .ledger = manager_ledger(m),
                .queued = manager_queued(m),
                .running = manager_running(m),
                .paused = manager_paused(m),
                .overloaded = manager_overloaded(m),
                .overloads = st->overloads,
                .bytes_held = manager_bytes_held(m),
                .peak_bytes = st->peak_bytes,
                .max_queue_bytes = manager_cfg(m)->max_queue_bytes,
                .received = st->received,
                .rejected = st->rejected,
                .filtered = st->filtered,
                .dropped_keys = st->dropped_keys,
                .started = st->started,
                .finished = st->finished,
                .failed = st->failed,
                .timeouts = st->timeouts,
                .spawn_retries = st->spawn_retries,
                .spawn_waiting = manager_spawn_waiting(m),
                .taken_over = st->taken_over,
                .reruns = st->reruns,
                .set_aside = st->set_aside,
                .resync = rs.enabled,
                .resyncs = rs.passes,
                .resync_changed = rs.changed,
                .resync_added = rs.added,
                .resync_removed = rs.removed,
                .resync_left_alone = rs.left_alone,
                .devices = rs.devices,
        };
        ctl_status_concurrency(m, ret);
        udev_wait_get_status(m, &us);
        ret->after_udev = us.state;
        ret->udev_confirmed = us.confirmed;
        ret->udev_waited = us.waited;
        ret->udev_wait_usec = us.waited_usec;
        ret->udev_timeouts = us.timeouts;
        ret->udev_mismatched = us.mismatched;
        ret->udev_overflows = us.overflows;
        ret->udev_forgotten = us.forgotten;
        ret->udev_waiting = us.waiting;
        ctl_status_modules(m, ret);
        ctl_status_firmware(m, ret);
        ctl_status_identity(m, ret);
}

struct agent_walk {
        void (*fn)(const struct control_agent *a, void *arg);
        void *arg;
};

static void agent_to_control(const struct manager_agent *a, void *arg)
{
        struct agent_walk *w = arg;
        struct control_agent c = {
                .seqnum = a->ev->seqnum,
                .devpath = a->ev->devpath,
                .program = a->program,
                .pid = a->pid,
                .started = a->started,
        };

        w->fn(&c, w->arg);
}

static void ctl_agents(void *userdata, void (*fn)(const struct control_agent *a, void *arg), void *arg)
{
        struct agent_walk w = { fn, arg };

        manager_for_each_agent(userdata, agent_to_control, &w);
}

static void ctl_progress(void *userdata, struct control_progress *ret)
{
        struct manager *m = userdata;

        ret->last_seen = manager_ledger(m)->last;
        ret->lowest_held = manager_lowest_held(m);
        ret->replaying = manager_replaying(m);
        ret->udev_waiting = udev_wait_waiting(m);
}

static uint64_t ctl_lowest_held_on(void *userdata, const char *devpath)
{
        return manager_lowest_held_on(userdata, devpath);
}

static int ctl_sync(void *userdata)
{
        return manager_sync_input(userdata);
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

static int ctl_reader_gid(void *userdata)
{
        return manager_cfg(userdata)->control_gid;
}

static int ctl_set_log_level(void *userdata, int level)
{
        log_set_max_level(level);
        log_notice("log level set to %s over the control socket (until a reload)", log_level_to_string(level));
        return 0;
}

static int ctl_set_concurrency(void *userdata, unsigned n, char *err, size_t err_size)
{
        int r = manager_set_concurrency(userdata, n, err, err_size);

        if (r >= 0) {
                if (n)
                        log_notice("concurrency set to %u over the control socket (until a reload)", n);
                else
                        log_notice("concurrency set to auto over the control socket (until a reload)");
        }
        return r;
}

static int ctl_reload(void *userdata, char *err, size_t size)
{
        return manager_reload(userdata, err, size);
}

static void ctl_blame_totals(void *userdata, struct control_blame_totals *ret)
{
        manager_blame_totals(userdata, ret);
}

static void ctl_blame_chain(void *userdata, struct control_blame_chain *ret,
                            void (*fn)(const struct control_blame_link *l, void *arg), void *arg)
{
        (void)manager_blame_chain(userdata, ret, fn, arg);
}

static void ctl_blame_rows(void *userdata, void (*fn)(const struct control_blame_row *r, void *arg), void *arg)
{
        if (manager_for_each_blame_row(userdata, fn, arg) < 0)
                log_warning("blame: out of memory, rows left out");
}

static int ctl_device_known(void *userdata, const char *devpath)
{
        return manager_device_known(userdata, devpath);
}

static void ctl_device_info(void *userdata, const char *devpath,
                            void (*fn)(const struct control_device_info *d, void *arg), void *arg)
{
        struct control_device_info d = { .devpath = devpath, .history = manager_info_history(userdata, devpath),
                                         .present = manager_device_known(userdata, devpath),
                                         .handled = manager_device_handled(userdata, devpath) > 0 };

        d.modelled = manager_device_record(userdata, devpath, &d.rec) > 0;
        fn(&d, arg);
}

struct known_visit {
        const struct manager *m;
        void (*fn)(const char *devpath, void *arg);
        void *arg;
};

/* A device of the resync set whose events are not kept (those that are were visited already). */
static void known_device(const char *devpath, void *arg)
{
        struct known_visit *v = arg;

        if (!manager_info_history(v->m, devpath))
                v->fn(devpath, v->arg);
}

static void ctl_for_each_device(void *userdata, void (*fn)(const char *devpath, void *arg), void *arg)
{
        struct known_visit v = { .m = userdata, .fn = fn, .arg = arg };

        manager_for_each_info_device(userdata, fn, arg);
        manager_for_each_known_device(userdata, known_device, &v);
}

static void ctl_for_each_handled(void *userdata, void (*fn)(const char *devpath, void *arg), void *arg)
{
        manager_for_each_handled(userdata, fn, arg);
}

static bool ctl_handled_pending(void *userdata)
{
        return manager_resync_handover_due(userdata);
}

static const struct control_ops ctl_ops = {
        .status = ctl_status,
        .for_each_agent = ctl_agents,
        .progress = ctl_progress,
        .lowest_held_on = ctl_lowest_held_on,
        .device_known = ctl_device_known,
        .sync_input = ctl_sync,
        .pause = ctl_pause,
        .resume = ctl_resume,
        .reload = ctl_reload,
        .reader_gid = ctl_reader_gid,
        .set_log_level = ctl_set_log_level,
        .set_concurrency = ctl_set_concurrency,
        .blame_totals = ctl_blame_totals,
        .for_each_blame_row = ctl_blame_rows,
        .blame_chain = ctl_blame_chain,
        .device_info = ctl_device_info,
        .for_each_device = ctl_for_each_device,
        .for_each_handled = ctl_for_each_handled,
        .handled_pending = ctl_handled_pending,
};

/* ---- what the control socket hears ---------------------------------------- */

/* The control event of @kind about @ev (the caller adds what only its kind shows). */
static struct control_event event_of(enum control_event_kind kind, const struct uevent *ev)
{
        return (struct control_event){
                .kind = kind,
                .seqnum = ev->seqnum,
                .action = ev->action,
                .devpath = ev->devpath,
                .subsystem = ev->subsystem,
                .ev = ev,
        };
}

static void notify(struct observe_control *o, enum control_event_kind kind, const struct uevent *ev)
{
        struct control_event e = event_of(kind, ev);

        control_notify_event(o->control, &e);
}

static void on_received(void *userdata, const struct uevent *view, enum ledger_verdict v,
                        const struct ledger_gap *gap)
{
        struct observe_control *o = userdata;

        if (v == LEDGER_GAP) {
                struct control_event g = { .kind = CONTROL_EVENT_GAP, .gap = *gap, .time = view->received_real };
                control_notify_event(o->control, &g);
        }
        struct control_event e = event_of(CONTROL_EVENT_RECEIVED, view);
        const char *vars[HP_UEVENT_MAX_VARS];

        if (control_wants_env(o->control, CONTROL_EVENT_RECEIVED)) {
                for (unsigned i = 0; i < view->n_vars && i < ELEMENTSOF(vars); i++)
                        vars[i] = uevent_var(view, i);
                e.env = vars;
                e.n_env = MIN((size_t)view->n_vars, ELEMENTSOF(vars));
        }
        e.time = view->received_real;
        e.uuid = uevent_get(view, "SYNTH_UUID"); /* only the received record shows it */
        e.verdict = v;
        control_notify_event(o->control, &e);
}

static void on_overflow(void *userdata)
{
        struct observe_control *o = userdata;
        struct control_event e = { .kind = CONTROL_EVENT_OVERFLOW };

        control_notify_event(o->control, &e);
}

static void on_input_drained(void *userdata)
{
        struct observe_control *o = userdata;

        control_notify_input_drained(o->control);
}

/* True if the handler addition @entry ("KEY=VALUE") is a key the kernel did not send, or another value. */
static bool added_or_changed(const struct uevent *ev, const char *entry)
{
        char key[HP_UEVENT_KEY_MAX + 1];
        size_t klen = strcspn(entry, "=");
        const char *sent;

        if (klen >= sizeof(key) || entry[klen] != '=')
                return true;
        memcpy(key, entry, klen);
        key[klen] = '\0';
        sent = uevent_get(ev, key);
        return !sent || strcmp(sent, entry + klen + 1) != 0;
}

static void on_queued(void *userdata, const struct uevent *ev)
{
        struct observe_control *o = userdata;
        struct control_event e = event_of(CONTROL_EVENT_QUEUED, ev);
        const char *added[HP_ENV_ADD_MAX_VARS];
        size_t n = 0;
        const char *x = control_wants_env(o->control, CONTROL_EVENT_QUEUED) ? ev->extra : NULL;

        for (unsigned i = 0; x && i < ev->n_extra; i++, x += strlen(x) + 1)
                if (n < ELEMENTSOF(added) && added_or_changed(ev, x))
                        added[n++] = x;
        e.env = added;
        e.n_env = n;
        control_notify_event(o->control, &e);
}

static void on_waited(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason)
{
        struct observe_control *o = userdata;
        struct control_event e = event_of(CONTROL_EVENT_WAITED, ev);
        usec_t now = now_usec(CLOCK_MONOTONIC);

        e.blocker = blocker;
        e.reason = reason;
        e.waited_usec = ev->received && ev->received < now ? now - ev->received : 0;
        control_notify_event(o->control, &e);
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        struct observe_control *o = userdata;

        if (filtered)
                notify(o, CONTROL_EVENT_FILTERED, view);
        control_notify_processed(o->control, view->seqnum);
        control_notify_uuid(o->control, uevent_get(view, "SYNTH_UUID"));
}

static struct control_event agent_event(const struct manager_agent *a, enum control_event_kind kind)
{
        struct control_event e = event_of(kind, a->ev);

        e.pid = a->pid;
        e.program = a->program;
        e.name = a->ev->name;
        return e;
}

static void on_started(void *userdata, const struct manager_agent *a)
{
        struct observe_control *o = userdata;
        struct control_event e = agent_event(a, CONTROL_EVENT_STARTED);
        const char *argv[] = { a->program, a->ev->name }; /* as the job spawned it */

        if (a->env && control_wants_env(o->control, CONTROL_EVENT_STARTED)) {
                e.env = a->env->envp;
                e.n_env = a->env->n;
                e.argv = argv;
                e.n_argv = ELEMENTSOF(argv);
        }
        control_notify_event(o->control, &e);
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        struct observe_control *o = userdata;
        struct control_event e = agent_event(a, CONTROL_EVENT_FINISHED);

        e.status = status;
        e.duration_usec = now_usec(CLOCK_MONOTONIC) - a->started;
        control_notify_event(o->control, &e);
}

static void on_done(void *userdata, const struct uevent *ev)
{
        struct observe_control *o = userdata;

        /* Called after scheduler_done(): @ev is no longer held, settle may complete. */
        control_notify_processed(o->control, ev->seqnum);
        control_notify_uuid(o->control, uevent_get(ev, "SYNTH_UUID"));
}

static void on_close(void *userdata)
{
        struct observe_control *o = userdata;

        control_free(o->control);
        free(o);
}

static const struct manager_observer_ops control_observer_ops = {
        .received = on_received,
        .overflow = on_overflow,
        .input_drained = on_input_drained,
        .queued = on_queued,
        .waited = on_waited,
        .dropped = on_dropped,
        .started = on_started,
        .finished = on_finished,
        .done = on_done,
        .close = on_close,
};

/**
 * observe_control_open() - listen on the control socket and register its observer.
 * @m: manager, with its event loop
 *
 * A socket that cannot be opened is logged and the daemon runs without
 * one (its job is running agents), unless another hotplugd answers there.
 * Return: 0, or -EADDRINUSE (logged), or -ENOMEM.
 */
int observe_control_open(struct manager *m)
{
        const char *cfg_path = manager_cfg(m)->control_path;
        const char *path = cfg_path ? cfg_path : HOTPLUGD_RUNDIR "/control";
        struct observe_control *o;
        int r;

        int fd = manager_take_control_fd(m);

        /* A socket handed over by the service manager is served whatever the path says. */
        if (fd < 0 && !*path)
                return 0;
        o = calloc(1, sizeof(*o));
        if (!o) {
                safe_close(fd);
                return -ENOMEM;
        }
        r = control_new(manager_event(m), path, fd, &ctl_ops, m, &o->control);
        if (r == -EADDRINUSE) {
                free(o);
                return log_error_errno(r, "another hotplugd answers on %s; refusing to run twice", path);
        }
        if (r < 0) {
                free(o);
                /* The daemon's job is running agents: go on without hotplugctl. */
                log_warning_errno(r, "no control socket at %s, hotplugctl will not reach this daemon", path);
                return 0;
        }
        r = manager_add_observer(m, &control_observer_ops, o);
        if (r < 0)
                on_close(o);
        return r;
}
