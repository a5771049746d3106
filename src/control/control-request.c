/* SPDX-License-Identifier: MIT */
/*
 * The control socket's requests: what status, pause, resume, reload, blame, settle,
 * watch-uuids, forget-uuids, wait-uuids and monitor do (protocol: control.h).  Replies go
 * through client_reply(), which may drop the client: after each reply,
 * cl->fd < 0 means the client is gone and nothing more may be sent.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "control/control-internal.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/number.h"

/* ---- settle ---------------------------------------------------------------- */

/* The progress that counts for @cl: with a device, only the events on its path are held. */
static void settle_progress(struct control *c, const struct client *cl, struct control_progress *p)
{
        c->ops->progress(c->userdata, p);
        if (cl->settle_devpath && c->ops->lowest_held_on)
                p->lowest_held = c->ops->lowest_held_on(c->userdata, cl->settle_devpath);
}

static bool settle_satisfied(struct control *c, const struct client *cl, struct control_progress *p)
{
        settle_progress(c, cl, p);
        /* Replaying: the SEQNUMs are the recording's, not the kernel's; settled
         * once every event replayed so far is done. */
        if (p->replaying)
                return p->lowest_held == 0;
        if (p->lowest_held != 0 && p->lowest_held <= cl->settle_target)
                return false;
        if (cl->settle_present) {
                /* Its add is yet to come, or came after SEQNUM was read: wait for it too. */
                if (c->ops->device_known && c->ops->device_known(c->userdata, cl->settle_devpath) == 0)
                        return false;
                if (p->lowest_held != 0)
                        return false;
        }
        return p->last_seen >= cl->settle_target || cl->settle_synced;
}

static void settle_check(struct client *cl)
{
        struct control_progress p;
        struct ctlmsg m;

        if (cl->state != CLIENT_SETTLE || !settle_satisfied(cl->ctl, cl, &p))
                return;
        client_wait_over(cl);
        ctlmsg_init(&m, "ok");
        ctlmsg_add_u64(&m, "seqnum", cl->settle_target);
        ctlmsg_add_u64(&m, "last", p.last_seen);
        client_reply(cl, &m);
}

void settle_check_all(struct control *c)
{
        struct client *cl, *next;

        list_for_each_safe(cl, next, &c->clients, link) /* a reply may drop cl */
                settle_check(cl);
}

static int on_settle_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct client *cl = userdata;
        struct control_progress p;
        struct ctlmsg m;

        settle_progress(cl->ctl, cl, &p);
        client_wait_over(cl);
        ctlmsg_init(&m, "timeout");
        ctlmsg_add_u64(&m, "seqnum", cl->settle_target);
        ctlmsg_add_u64(&m, "lowest_held", p.lowest_held);
        ctlmsg_add_u64(&m, "last", p.last_seen);
        ctlmsg_add_u64(&m, "udev_waiting", p.udev_waiting);
        client_reply(cl, &m);
        return 0;
}

/* ---- SYNTH_UUIDs -------------------------------------------------------------- */

static int on_progress_due(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct client *cl = userdata;

        cl->progress_due = sd_event_source_disable_unref(cl->progress_due);
        uuids_progress(cl);
        return 0;
}

/*
 * A "progress" record when the wait advanced by a step (1% of the UUIDs)
 * and the last one is HP_CONTROL_PROGRESS_USEC old: a coldplug's hundreds
 * of agents are told in a few records, not one per handful of agents.  An
 * advance held back by the interval is told when the interval is over, so
 * that a wait that then stalls shows where it stands.
 */
void uuids_progress(struct client *cl)
{
        struct ctlmsg m;
        usec_t now;

        if (cl->uuids.done < cl->progress_next)
                return;
        if (sd_event_now(cl->ctl->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (now - cl->progress_last < HP_CONTROL_PROGRESS_USEC) {
                /* Without a timer (out of memory) the next advance tells it. */
                if (!cl->progress_due)
                        (void)sd_event_add_time(cl->ctl->event, &cl->progress_due, CLOCK_MONOTONIC,
                                                cl->progress_last + HP_CONTROL_PROGRESS_USEC, USEC_PER_MSEC,
                                                on_progress_due, cl);
                return;
        }
        cl->progress_due = sd_event_source_disable_unref(cl->progress_due);
        cl->progress_last = now;
        while (cl->progress_next <= cl->uuids.done)
                cl->progress_next += cl->progress_step;
        ctlmsg_init(&m, "progress");
        ctlmsg_add_u64(&m, "done", cl->uuids.done);
        ctlmsg_add_u64(&m, "total", cl->uuids.n);
        client_reply(cl, &m);
}

void uuids_finish(struct client *cl)
{
        struct ctlmsg m;

        ctlmsg_init(&m, "ok");
        ctlmsg_add_u64(&m, "done", cl->uuids.done);
        ctlmsg_add_u64(&m, "total", cl->uuids.n);
        client_wait_over(cl);
        uuid_set_clear(&cl->uuids);
        client_reply(cl, &m);
}

struct missing_list {
        char buf[HP_CONTROL_RECORD_MAX / 2];
        size_t len;
};

static bool add_missing(const char *uuid, void *arg)
{
        struct missing_list *l = arg;
        size_t n = strlen(uuid);

        if (l->len + n + 2 > sizeof(l->buf))
                return false;
        if (l->len > 0)
                l->buf[l->len++] = ',';
        memcpy(l->buf + l->len, uuid, n + 1);
        l->len += n;
        return true;
}

static int on_uuids_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct client *cl = userdata;
        struct missing_list l = { .len = 0 };
        struct ctlmsg m;

        l.buf[0] = '\0';
        uuid_set_foreach_pending(&cl->uuids, add_missing, &l);
        ctlmsg_init(&m, "timeout");
        ctlmsg_add_u64(&m, "done", cl->uuids.done);
        ctlmsg_add_u64(&m, "total", cl->uuids.n);
        ctlmsg_add_str(&m, "missing", l.buf);
        client_wait_over(cl);
        uuid_set_clear(&cl->uuids);
        client_reply(cl, &m);
        return 0;
}

/* ---- blame ------------------------------------------------------------------ */

struct blame_visit {
        struct client *cl;
        size_t sent;     /* bytes of rows sent */
        uint64_t left_out;
};

static void send_blame_row(const struct control_blame_row *r, void *arg)
{
        static const char *const groups[_CONTROL_BLAME_MAX] = { "subsystem", "program", "device", "module" };
        struct blame_visit *v = arg;
        struct ctlmsg m;

        if (v->cl->fd < 0)
                return;
        ctlmsg_init(&m, "row");
        ctlmsg_add_str(&m, "group", groups[r->group]);
        ctlmsg_add_str(&m, "name", r->name);
        ctlmsg_add_u64(&m, "count", r->count);
        ctlmsg_add_u64(&m, "total_usec", r->total);
        ctlmsg_add_u64(&m, "slowest_usec", r->slowest);
        ctlmsg_add_u64(&m, "slowest_seqnum", r->slowest_seqnum);
        ctlmsg_add_u64(&m, "order_wait_usec", r->order_wait);
        ctlmsg_add_u64(&m, "slot_wait_usec", r->slot_wait);
        ctlmsg_add_u64(&m, "udev_wait_usec", r->udev_wait);
        ctlmsg_add_u64(&m, "failed", r->failed);
        /* The reply stays well inside what a client may have queued (each table longest first). */
        if (m.truncated || v->sent + m.len + 2 > HP_CONTROL_OUTPUT_MAX / 2) {
                v->left_out++;
                return;
        }
        v->sent += m.len + 2;
        client_reply(v->cl, &m);
}

static void req_blame(struct client *cl)
{
        struct control *c = cl->ctl;
        struct control_blame_totals t = { 0 };
        struct blame_visit v = { .cl = cl };
        struct ctlmsg m;

        if (!c->ops->blame_totals || !c->ops->for_each_blame_row) {
                client_error(cl, -EOPNOTSUPP, "blame is not kept");
                return;
        }
        c->ops->blame_totals(c->userdata, &t);
        ctlmsg_init(&m, "blame");
        ctlmsg_add_u64(&m, "events", t.events);
        ctlmsg_add_u64(&m, "runs", t.runs);
        ctlmsg_add_u64(&m, "run_usec", t.run_time);
        ctlmsg_add_u64(&m, "order_wait_usec", t.order_wait);
        ctlmsg_add_u64(&m, "slot_wait_usec", t.slot_wait);
        ctlmsg_add_u64(&m, "udev_wait_usec", t.udev_wait);
        ctlmsg_add_u64(&m, "failed_events", t.failed_events);
        ctlmsg_add_u64(&m, "failed_runs", t.failed_runs);
        client_reply(cl, &m);
        if (cl->fd >= 0)
                c->ops->for_each_blame_row(c->userdata, send_blame_row, &v);
        if (cl->fd >= 0) {
                ctlmsg_init(&m, "end");
                ctlmsg_add_u64(&m, "left_out", v.left_out);
                client_reply(cl, &m);
        }
}

static void send_blame_link(const struct control_blame_link *l, void *arg)
{
        struct client *cl = arg;
        struct ctlmsg m;

        if (cl->fd < 0)
                return;
        ctlmsg_init(&m, "link");
        ctlmsg_add_u64(&m, "seqnum", l->seqnum);
        ctlmsg_add_u64(&m, "blocker", l->blocker);
        ctlmsg_add_u64(&m, "at_usec", l->at);
        ctlmsg_add_u64(&m, "run_usec", l->ran);
        ctlmsg_add_u64(&m, "order_wait_usec", l->order_wait);
        ctlmsg_add_u64(&m, "slot_wait_usec", l->slot_wait);
        ctlmsg_add_u64(&m, "udev_wait_usec", l->udev_wait);
        ctlmsg_add_u64(&m, "runs", l->runs);
        ctlmsg_add_u64(&m, "failed_runs", l->failed_runs);
        if (l->action && l->subsystem && l->devpath) {
                ctlmsg_add_str(&m, "action", l->action);
                ctlmsg_add_str(&m, "subsystem", l->subsystem);
                ctlmsg_add_str(&m, "devpath", l->devpath);
        }
        if (l->failed && l->failed_status) {
                ctlmsg_add_str(&m, "failed", l->failed);
                ctlmsg_add_str(&m, "failed_status", l->failed_status);
        }
        client_reply(cl, &m); /* at most HP_BLAME_CHAIN_LINKS records */
}

static void req_blame_chain(struct client *cl)
{
        struct control *c = cl->ctl;
        struct control_blame_chain chain;
        struct ctlmsg m;

        if (!c->ops->blame_chain) {
                client_error(cl, -EOPNOTSUPP, "blame is not kept");
                return;
        }
        /* The links go out as they are found, after the "chain" record that
         * the search fills: held back in the output queue until then. */
        ctlmsg_init(&m, "chain");
        c->ops->blame_chain(c->userdata, &chain, NULL, NULL);
        ctlmsg_add_u64(&m, "known", chain.known);
        ctlmsg_add_u64(&m, "settled", chain.settled);
        ctlmsg_add_u64(&m, "events", chain.events);
        ctlmsg_add_u64(&m, "span_usec", chain.span);
        ctlmsg_add_u64(&m, "cut_seqnum", chain.cut_seqnum);
        client_reply(cl, &m);
        if (cl->fd >= 0)
                c->ops->blame_chain(c->userdata, &chain, send_blame_link, cl);
        if (cl->fd >= 0) {
                ctlmsg_init(&m, "end");
                client_reply(cl, &m);
        }
}

/* ---- requests ---------------------------------------------------------------- */

struct agent_visit {
        struct client *cl;
        usec_t now;
};

static void send_agent(const struct control_agent *a, void *arg)
{
        struct agent_visit *v = arg;
        struct ctlmsg m;

        if (v->cl->fd < 0)
                return;
        ctlmsg_init(&m, "agent");
        ctlmsg_add_u64(&m, "seqnum", a->seqnum);
        ctlmsg_add_i64(&m, "pid", a->pid);
        ctlmsg_add_u64(&m, "age_ms", v->now > a->started ? (v->now - a->started) / USEC_PER_MSEC : 0);
        ctlmsg_add_str(&m, "devpath", a->devpath);
        ctlmsg_add_str(&m, "program", a->program);
        client_reply(v->cl, &m);
}

void add_gap_fields(struct ctlmsg *m, const struct ledger_gap *g)
{
        ctlmsg_add_u64(m, "first", g->first);
        ctlmsg_add_u64(m, "last", g->last);
        ctlmsg_add_u64(m, "count", g->last - g->first + 1);
        ctlmsg_add_str(m, "class", gap_class_to_string(g->class));
}

static void status_counters(struct ctlmsg *m, const struct control_status *s)
{
        const struct ledger *l = s->ledger;

        ctlmsg_init(m, "status");
        ctlmsg_add_u64(m, "processed", l->processed);
        ctlmsg_add_u64(m, "gaps", l->gaps);
        ctlmsg_add_u64(m, "gaps_overflow", l->gaps_overflow);
        ctlmsg_add_u64(m, "missing", l->missing);
        ctlmsg_add_u64(m, "duplicates", l->duplicates);
        ctlmsg_add_u64(m, "late", l->late);
        ctlmsg_add_u64(m, "overflows", l->overflows);
        ctlmsg_add_u64(m, "baseline", l->baseline);
        ctlmsg_add_u64(m, "last", l->last);
        ctlmsg_add_u64(m, "received", s->received);
        ctlmsg_add_u64(m, "rejected", s->rejected);
        ctlmsg_add_u64(m, "filtered", s->filtered);
        ctlmsg_add_u64(m, "dropped_keys", s->dropped_keys);
        ctlmsg_add_u64(m, "started", s->started);
        ctlmsg_add_u64(m, "finished", s->finished);
        ctlmsg_add_u64(m, "failed", s->failed);
        ctlmsg_add_u64(m, "timeouts", s->timeouts);
        ctlmsg_add_u64(m, "spawn_retries", s->spawn_retries);
        ctlmsg_add_u64(m, "spawn_waiting", s->spawn_waiting);
        ctlmsg_add_u64(m, "queued", s->queued);
        ctlmsg_add_u64(m, "running", s->running);
        ctlmsg_add_u64(m, "paused", s->paused);
        ctlmsg_add_u64(m, "overloaded", s->overloaded);
        ctlmsg_add_u64(m, "overloads", s->overloads);
        ctlmsg_add_u64(m, "bytes_held", s->bytes_held);
        ctlmsg_add_u64(m, "peak_bytes", s->peak_bytes);
        ctlmsg_add_u64(m, "max_queue_bytes", s->max_queue_bytes);
        ctlmsg_add_u64(m, "resync", s->resync);
        ctlmsg_add_u64(m, "resyncs", s->resyncs);
        ctlmsg_add_u64(m, "resync_changed", s->resync_changed);
        ctlmsg_add_u64(m, "resync_added", s->resync_added);
        ctlmsg_add_u64(m, "resync_removed", s->resync_removed);
        ctlmsg_add_u64(m, "resync_left_alone", s->resync_left_alone);
        ctlmsg_add_u64(m, "devices", s->devices);
        ctlmsg_add_str(m, "ordering", s->ordering ? s->ordering : "");
        ctlmsg_add_str(m, "concurrency", s->concurrency ? s->concurrency : "");
        ctlmsg_add_u64(m, "limit", s->limit);
        ctlmsg_add_u64(m, "limit_max", s->limit_max);
        ctlmsg_add_u64(m, "awake_max", s->awake_max);
        ctlmsg_add_u64(m, "awake", s->awake);
        ctlmsg_add_u64(m, "asleep", s->asleep);
        ctlmsg_add_u64(m, "raised", s->raised);
        ctlmsg_add_u64(m, "lowered", s->lowered);
        ctlmsg_add_u64(m, "windows", s->windows);
        ctlmsg_add_u64(m, "probes", s->probes);
        ctlmsg_add_u64(m, "probes_kept", s->probes_kept);
        ctlmsg_add_u64(m, "per_cpu_second", s->per_cpu_second);
        ctlmsg_add_u64(m, "taken_over", s->taken_over);
        ctlmsg_add_u64(m, "reruns", s->reruns);
        ctlmsg_add_u64(m, "set_aside", s->set_aside);
        ctlmsg_add_str(m, "after_udev", s->after_udev ? s->after_udev : "");
        ctlmsg_add_u64(m, "udev_confirmed", s->udev_confirmed);
        ctlmsg_add_u64(m, "udev_waited", s->udev_waited);
        ctlmsg_add_u64(m, "udev_wait_usec", s->udev_wait_usec);
        ctlmsg_add_u64(m, "udev_timeouts", s->udev_timeouts);
        ctlmsg_add_u64(m, "udev_mismatched", s->udev_mismatched);
        ctlmsg_add_u64(m, "udev_overflows", s->udev_overflows);
        ctlmsg_add_u64(m, "udev_forgotten", s->udev_forgotten);
        ctlmsg_add_u64(m, "udev_waiting", s->udev_waiting);
        ctlmsg_add_str(m, "load_modules", s->load_modules ? s->load_modules : "");
        ctlmsg_add_u64(m, "kmod_aliases", s->kmod_aliases);
        ctlmsg_add_u64(m, "kmod_invalid", s->kmod_invalid);
        ctlmsg_add_u64(m, "kmod_lookups", s->kmod_lookups);
        ctlmsg_add_u64(m, "kmod_not_found", s->kmod_not_found);
        ctlmsg_add_u64(m, "kmod_loads", s->kmod_loads);
        ctlmsg_add_u64(m, "kmod_saved", s->kmod_saved);
        ctlmsg_add_u64(m, "kmod_loaded", s->kmod_loaded);
        ctlmsg_add_u64(m, "kmod_failed", s->kmod_failed);
        ctlmsg_add_u64(m, "kmod_blacklisted", s->kmod_blacklisted);
        ctlmsg_add_u64(m, "kmod_timeouts", s->kmod_timeouts);
        ctlmsg_add_u64(m, "kmod_skipped", s->kmod_skipped);
        ctlmsg_add_u64(m, "kmod_waiting", s->kmod_waiting);
        ctlmsg_add_u64(m, "kmod_in_flight", s->kmod_in_flight);
        ctlmsg_add_u64(m, "firmware_failed", s->firmware_failed);
        ctlmsg_add_u64(m, "firmware_missing", s->firmware_n);
        ctlmsg_add_u64(m, "firmware_untracked", s->firmware_untracked);
        ctlmsg_add_u64(m, "log_dropped", log_lines_dropped());
        ctlmsg_add_u64(m, "log_gone", log_target_gone());
}

static void req_status(struct client *cl)
{
        struct control *c = cl->ctl;
        struct control_status s = { .ledger = NULL };
        struct agent_visit v = { .cl = cl, .now = now_usec(CLOCK_MONOTONIC) };
        struct ledger_gap g;
        struct ctlmsg m;

        c->ops->status(c->userdata, &s);
        if (!s.ledger) {
                client_error(cl, -EIO, "no ledger");
                return;
        }
        status_counters(&m, &s);
        client_reply(cl, &m);
        ctlmsg_init(&m, "daemon");
        ctlmsg_add_u64(&m, "pid", (uint64_t)s.pid);
        ctlmsg_add_str(&m, "version", s.version ? s.version : "");
        ctlmsg_add_time(&m, "since", s.since);
        ctlmsg_add_u64(&m, "uptime_usec", s.uptime);
        if (s.config)
                ctlmsg_add_str(&m, "config", s.config);
        if (s.agent)
                ctlmsg_add_str(&m, "agent", s.agent);
        if (s.hotplug_d)
                ctlmsg_add_str(&m, "hotplug_d", s.hotplug_d);
        ctlmsg_add_str(&m, "log_level", s.log_level ? s.log_level : "");
        ctlmsg_add_str(&m, "log_target", s.log_target ? s.log_target : "");
        if (cl->fd >= 0)
                client_reply(cl, &m);
        for (unsigned i = 0; cl->fd >= 0 && ledger_recent_gap(s.ledger, i, &g); i++) {
                ctlmsg_init(&m, "gap");
                add_gap_fields(&m, &g);
                client_reply(cl, &m);
        }
        if (cl->fd >= 0 && c->ops->for_each_agent)
                c->ops->for_each_agent(c->userdata, send_agent, &v);
        for (size_t i = 0; cl->fd >= 0 && i < s.firmware_n; i++) {
                ctlmsg_init(&m, "firmware");
                ctlmsg_add_str(&m, "name", s.firmware_name[i]);
                ctlmsg_add_u64(&m, "requests", s.firmware_requests[i]);
                client_reply(cl, &m);
        }
        if (cl->fd >= 0) {
                ctlmsg_init(&m, "end");
                client_reply(cl, &m);
        }
}

static int parse_u64(const char *s, uint64_t *ret)
{
        return s ? decimal_u64(s, ret) : -EINVAL;
}

static int parse_timeout(const char *s, usec_t *ret)
{
        uint64_t ms;

        if (parse_u64(s, &ms) < 0 || ms > (uint64_t)HP_CONTROL_TIMEOUT_MAX_SEC * 1000)
                return -EINVAL;
        *ret = ms * USEC_PER_MSEC;
        return 0;
}

static int arm_timer(struct client *cl, usec_t timeout, sd_event_time_handler_t fn)
{
        return sd_event_add_time_relative(cl->ctl->event, &cl->timer, CLOCK_MONOTONIC, timeout, USEC_PER_MSEC,
                                          fn, cl);
}

static void req_settle(struct client *cl, char **w, size_t n)
{
        struct control *c = cl->ctl;
        uint64_t target;
        usec_t timeout;
        int r;

        if (n < 3 || n > 5 || parse_u64(w[1], &target) < 0 || parse_timeout(w[2], &timeout) < 0 ||
            (n >= 4 && (w[3][0] != '/' || strlen(w[3]) > HP_UEVENT_MAX_SIZE)) ||
            (n == 5 && strcmp(w[4], "present") != 0)) {
                client_error(cl, -EINVAL, "usage: settle SEQNUM TIMEOUT_MS [DEVPATH [present]]");
                return;
        }
        /* Everything the kernel sent before the request is read now (or
         * reading is off because the queue is full: then wait for a drain). */
        r = c->ops->sync_input ? c->ops->sync_input(c->userdata) : 0;
        if (r < 0) {
                client_error(cl, r, "cannot read the uevent socket");
                return;
        }
        if (cl->fd < 0)
                return;
        if (n >= 4 && !(cl->settle_devpath = strdup(w[3]))) {
                client_error(cl, -ENOMEM, "out of memory");
                return;
        }
        cl->state = CLIENT_SETTLE;
        cl->settle_present = n == 5;
        cl->settle_target = target;
        cl->settle_synced = r > 0;
        settle_check(cl);
        if (cl->state == CLIENT_SETTLE && arm_timer(cl, timeout, on_settle_timeout) < 0) {
                client_wait_over(cl);
                client_error(cl, -ENOMEM, "cannot arm the timeout");
        }
}

/* Waiting for triggered uevents makes no sense when none is read (replay). */
static bool refuse_when_replaying(struct client *cl)
{
        struct control_progress p = { 0 };

        cl->ctl->ops->progress(cl->ctl->userdata, &p);
        if (!p.replaying)
                return false;
        client_error(cl, -EOPNOTSUPP,
                     "the daemon is replaying a recording and reads no kernel uevents: triggered events would never arrive");
        return true;
}

/* watch-uuids adds to the set; forget-uuids ticks off UUIDs whose uevent was never sent. */
static void req_watch_uuids(struct client *cl, char **w, size_t n, bool forget)
{
        uint8_t u[16];
        struct ctlmsg m;
        int r;

        if (refuse_when_replaying(cl))
                return;
        if (n < 2) {
                client_error(cl, -EINVAL, forget ? "usage: forget-uuids UUID..." : "usage: watch-uuids UUID...");
                return;
        }
        for (size_t i = 1; i < n; i++)
                if (uuid_from_string(w[i], u) < 0) {
                        client_error(cl, -EINVAL, "not a UUID");
                        return;
                }
        for (size_t i = 1; i < n; i++) {
                (void)uuid_from_string(w[i], u);
                if (forget) {
                        (void)uuid_set_mark(&cl->uuids, u);
                        continue;
                }
                r = uuid_set_add(&cl->uuids, u);
                if (r < 0) {
                        client_error(cl, r, r == -ENOSPC ? "too many UUIDs watched" : "out of memory");
                        return;
                }
        }
        ctlmsg_init(&m, "ok");
        ctlmsg_add_u64(&m, "watched", cl->uuids.n);
        ctlmsg_add_u64(&m, "pending", uuid_set_pending(&cl->uuids));
        client_reply(cl, &m);
}

static void req_wait_uuids(struct client *cl, char **w, size_t n)
{
        usec_t timeout;

        if (refuse_when_replaying(cl))
                return;
        if (n != 2 || parse_timeout(w[1], &timeout) < 0) {
                client_error(cl, -EINVAL, "usage: wait-uuids TIMEOUT_MS");
                return;
        }
        cl->state = CLIENT_UUIDS;
        if (uuid_set_pending(&cl->uuids) == 0) {
                uuids_finish(cl);
                return;
        }
        cl->progress_step = MAX(cl->uuids.n / 100, (size_t)1);
        cl->progress_next = cl->uuids.done + cl->progress_step;
        if (sd_event_now(cl->ctl->event, CLOCK_MONOTONIC, &cl->progress_last) < 0)
                cl->progress_last = 0;
        if (arm_timer(cl, timeout, on_uuids_timeout) < 0) {
                client_wait_over(cl);
                client_error(cl, -ENOMEM, "cannot arm the timeout");
        }
}

/* A filter word of the monitor request, "KIND=VALUE" with VALUE escaped as in records. */
static int monitor_filter_word(struct client *cl, const char *word)
{
        char rec[HP_CONTROL_REQUEST_MAX + 3], kind[16], value[HP_CONTROL_REQUEST_MAX + 1];
        size_t klen = strcspn(word, "=");

        if (!word[klen] || klen >= sizeof(kind))
                return -EINVAL;
        memcpy(kind, word, klen);
        kind[klen] = '\0';
        snprintf(rec, sizeof(rec), "m %s", word);
        if (ctlmsg_get(rec, kind, value, sizeof(value)) < 0)
                return -EINVAL;
        return monitor_filter_add(&cl->filter, kind, value);
}

static void req_monitor(struct client *cl, char **w, size_t n)
{
        bool processed = false, properties = false;
        int r;

        monitor_filter_clear(&cl->filter);
        for (size_t i = 1; i < n; i++) {
                bool *flag = strcmp(w[i], "processed") == 0 ? &processed
                             : strcmp(w[i], "properties") == 0 ? &properties : NULL;

                if (!flag) {
                        r = strchr(w[i], '=') ? monitor_filter_word(cl, w[i]) : -EINVAL;
                        if (r == -E2BIG) {
                                client_error(cl, r, "too many monitor filters");
                                return;
                        }
                        if (r == 0)
                                continue;
                }
                if (!flag || *flag) {
                        client_error(cl, -EINVAL, "usage: monitor [processed] [properties] "
                                                  "[subsystem=SUBSYSTEM[/DEVTYPE]]... [property=KEY=GLOB]...");
                        return;
                }
                *flag = true;
        }
        cl->state = CLIENT_MONITOR;
        cl->monitor_processed = processed;
        cl->monitor_properties = properties;
        client_ok(cl);
}

static void req_simple(struct client *cl, int (*op)(void *userdata), const char *what)
{
        char msg[64];
        int r;

        r = op ? op(cl->ctl->userdata) : -EOPNOTSUPP;
        if (r < 0) {
                snprintf(msg, sizeof(msg), "%s failed: %s", what, strerror(-r));
                client_error(cl, r, msg);
                return;
        }
        client_ok(cl);
}

static void req_reload(struct client *cl)
{
        struct control *c = cl->ctl;
        char err[512] = "";
        int r;

        r = c->ops->reload ? c->ops->reload(c->userdata, err, sizeof(err)) : -EOPNOTSUPP;
        if (r < 0) {
                if (!err[0])
                        snprintf(err, sizeof(err), "reload failed: %s", strerror(-r));
                client_error(cl, r, err);
                return;
        }
        client_ok(cl);
}

/* Split @req (modified) at single spaces.  Return: word count, or -EINVAL. */
static int split_words(char *req, char **w, size_t max)
{
        size_t n = 0;
        char *p = req;

        for (const char *q = req; *q; q++)
                if ((unsigned char)*q < ' ' || (unsigned char)*q >= 0x7f)
                        return -EINVAL;
        while (*p) {
                char *sp = strchr(p, ' ');
                if (n == max || sp == p)
                        return -EINVAL;
                w[n++] = p;
                if (!sp)
                        break;
                *sp = '\0';
                p = sp + 1;
                if (!*p)
                        return -EINVAL; /* trailing space */
        }
        return (int)n;
}

/* "log-level LEVEL": the least severe level logged, until a reload or a restart. */
static void req_log_level(struct client *cl, char **w, size_t n)
{
        struct control *c = cl->ctl;
        int level = n == 2 ? log_level_from_string(w[1]) : -EINVAL;
        int r;

        if (level < 0) {
                client_error(cl, -EINVAL, "usage: log-level err|warning|notice|info|debug|0-7");
                return;
        }
        r = c->ops->set_log_level ? c->ops->set_log_level(c->userdata, level) : -EOPNOTSUPP;
        if (r < 0) {
                client_error(cl, r, "cannot set the log level");
                return;
        }
        client_ok(cl);
}

/* "concurrency N|auto": agents at once, until a reload or a restart. */
static void req_concurrency(struct client *cl, char **w, size_t n)
{
        struct control *c = cl->ctl;
        char err[160] = "";
        uint64_t v = 0;
        int r;

        if (n != 2 || (strcmp(w[1], "auto") != 0 && (decimal_u64(w[1], &v) < 0 || v == 0 || v > UINT_MAX))) {
                client_error(cl, -EINVAL, "usage: concurrency N|auto");
                return;
        }
        r = c->ops->set_concurrency ? c->ops->set_concurrency(c->userdata, (unsigned)v, err, sizeof(err))
                                    : -EOPNOTSUPP;
        if (r < 0) {
                client_error(cl, r, err[0] ? err : "cannot set the concurrency");
                return;
        }
        client_ok(cl);
}

/* What a member of the control group may ask: what reads, nothing that changes state. */
static bool read_only_request(char **w)
{
        return strcmp(w[0], "status") == 0 || strcmp(w[0], "blame") == 0 || strcmp(w[0], "monitor") == 0 ||
               strcmp(w[0], "info") == 0;
}

void control_handle_request(struct client *cl, char *req)
{
        char *w[MAX_WORDS];
        int n = split_words(req, w, ELEMENTSOF(w));

        if (n <= 0) {
                client_error(cl, -EINVAL, "malformed request");
                return;
        }
        if (cl->state != CLIENT_IDLE) {
                client_error(cl, -EBUSY, "a request is in progress on this connection");
                return;
        }
        if (cl->read_only && !read_only_request(w)) {
                client_error(cl, -EPERM, "only root may do that: the control group may ask for status, "
                                         "monitor, blame and info");
                return;
        }
        if (strcmp(w[0], "status") == 0 && n == 1)
                req_status(cl);
        else if (strcmp(w[0], "pause") == 0 && n == 1)
                req_simple(cl, cl->ctl->ops->pause, "pause");
        else if (strcmp(w[0], "resume") == 0 && n == 1)
                req_simple(cl, cl->ctl->ops->resume, "resume");
        else if (strcmp(w[0], "reload") == 0 && n == 1)
                req_reload(cl);
        else if (strcmp(w[0], "blame") == 0 && n == 1)
                req_blame(cl);
        else if (strcmp(w[0], "blame") == 0 && n == 2 && strcmp(w[1], "chain") == 0)
                req_blame_chain(cl);
        else if (strcmp(w[0], "info") == 0)
                req_info(cl, w, (size_t)n);
        else if (strcmp(w[0], "settle") == 0)
                req_settle(cl, w, (size_t)n);
        else if (strcmp(w[0], "watch-uuids") == 0)
                req_watch_uuids(cl, w, (size_t)n, false);
        else if (strcmp(w[0], "forget-uuids") == 0)
                req_watch_uuids(cl, w, (size_t)n, true);
        else if (strcmp(w[0], "wait-uuids") == 0)
                req_wait_uuids(cl, w, (size_t)n);
        else if (strcmp(w[0], "monitor") == 0)
                req_monitor(cl, w, (size_t)n);
        else if (strcmp(w[0], "log-level") == 0)
                req_log_level(cl, w, (size_t)n);
        else if (strcmp(w[0], "concurrency") == 0)
                req_concurrency(cl, w, (size_t)n);
        else
                client_error(cl, -EINVAL, "unknown request");
}

