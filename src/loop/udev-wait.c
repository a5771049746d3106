/* SPDX-License-Identifier: MIT */
/*
 * after-udev (udev-wait.h): pairs udevd's broadcasts with the events the
 * kernel sent, and holds an event's first program until its broadcast came
 * or its bound ran out.
 *
 * An entry per event held (made when it is queued, gone when it is done or
 * dropped) says whether udevd broadcast it yet and, while its job waits,
 * which job and until when.  A broadcast can come before hotplugd has read
 * the kernel's copy (udevd was quicker): one for a SEQNUM above any read
 * yet is kept as an early entry, which the kernel's copy then finds; at
 * most HP_UDEV_EARLY_MAX of them, in a ring that forgets the oldest.  A
 * broadcast for a SEQNUM at or below the highest read and not held is of
 * an event already done, filtered or never waited for: nothing to do.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "loop/udev-wait.h"
#include "shared/bounds.h"
#include "shared/hash.h"
#include "shared/list.h"
#include "shared/macro.h"
#include "uevent/udev-listen.h"

/* Warnings about broadcasts and timeouts: at most one per this interval. */
#define UDEV_LOG_INTERVAL_USEC (5 * USEC_PER_SEC)

struct udev_entry {
        uint64_t seqnum;
        uint64_t devpath_hash;   /* the kernel's DEVPATH; an early entry: udevd's */
        uint64_t parent_hash;    /* ... its directory */
        bool renamed;            /* an early entry: udevd renamed the device */
        char action[16];
        bool confirmed;          /* udevd broadcast it */
        bool early;              /* a broadcast only: the kernel's copy not read yet */
        struct job *job;         /* waiting for the broadcast */
        const struct uevent *ev; /* while waiting: the job's event */
        sd_event_source *timer;  /* while waiting: its bound */
        usec_t since;            /* while waiting: CLOCK_MONOTONIC its wait began */
        struct list_node waiting; /* on w->waiting while a job waits */
        struct udev_wait *w;
};

struct udev_wait {
        struct manager *m;
        bool listening;          /* after-udev is not off: broadcasts are read */
        bool alive;              /* udevd counts as running: events wait for it */
        struct udev_listen *listen;
        bool blind;              /* listen was opened without udevd's control socket: it may hear nothing */
        usec_t probed;           /* CLOCK_MONOTONIC udevd's control socket was last looked for */
        sd_event_source *io;
        struct hash_table entries; /* struct udev_entry by SEQNUM */
        uint64_t early[HP_UDEV_EARLY_MAX]; /* SEQNUMs of early entries, a ring; 0: free */
        size_t early_next;
        uint64_t highest;        /* highest SEQNUM the kernel's socket gave */
        usec_t last_broadcast;   /* CLOCK_MONOTONIC of udevd's last broadcast; 0: none yet */
        struct list_node waiting; /* struct udev_entry.waiting: the entries a job waits on */
        struct udev_wait_status st;
        struct ratelimit log_mismatch, log_timeout, log_overflow;
};

static uint64_t seqnum_hash(uint64_t seqnum)
{
        return hash_bytes(&seqnum, sizeof(seqnum));
}

static bool entry_is(const void *item, const void *key)
{
        return ((const struct udev_entry *)item)->seqnum == *(const uint64_t *)key;
}

static struct udev_entry *entry_get(const struct udev_wait *w, uint64_t seqnum)
{
        return hash_table_get(&w->entries, seqnum_hash(seqnum), entry_is, &seqnum);
}

static struct udev_wait *udev_wait_of(const struct manager *m)
{
        return m->udev;
}

/* Take @e out of the table and free it; a waiting job is not told (the caller does that). */
static void entry_free(struct udev_wait *w, struct udev_entry *e)
{
        (void)hash_table_remove(&w->entries, seqnum_hash(e->seqnum), hash_item_is, e);
        if (e->job) {
                w->st.waiting--;
                list_unlink(&e->waiting);
        }
        sd_event_source_disable_unref(e->timer);
        free(e);
}

/* @e's job goes on now: told last, as it may finish the event (and free @e) at once. */
static void entry_release(struct udev_wait *w, struct udev_entry *e, bool timed_out)
{
        struct job *j = e->job;
        usec_t waited = now_usec(CLOCK_MONOTONIC) - e->since;

        if (!j)
                return;
        e->job = NULL;
        e->timer = sd_event_source_disable_unref(e->timer);
        list_unlink(&e->waiting);
        w->st.waiting--;
        w->st.waited++;
        w->st.waited_usec += waited;
        if (timed_out)
                w->st.timeouts++;
        job_udev_go(j, timed_out, waited);
}

/* Every waiting job goes on without its broadcast (udevd silent, after-udev off, or a reload). */
static void release_all(struct udev_wait *w)
{
        struct udev_entry *e;

        /* A release can finish an event (and free its entry): take the first each time. */
        while ((e = list_first(&w->waiting, struct udev_entry, waiting)))
                entry_release(w, e, true);
}

static void set_alive(struct udev_wait *w, bool alive, const char *why)
{
        if (w->alive == alive)
                return;
        w->alive = alive;
        if (alive)
                log_notice("after-udev: %s; agents start after udevd's broadcast of their event", why);
        else {
                log_warning("after-udev: %s; agents no longer wait for udevd until it broadcasts again", why);
                release_all(w);
        }
}

/* A waiting event goes on without its broadcast: say why (rate-limited). */
static void log_timeout(struct udev_wait *w, const struct uevent *ev, const char *why)
{
        struct log_fields f;
        uint64_t suppressed;

        if (!ratelimit_pass(&w->log_timeout, UDEV_LOG_INTERVAL_USEC, &suppressed))
                return;
        uevent_log_fields(ev, &f);
        log_internal(LOG_WARNING, 0, &f, "its agents start without udevd's broadcast of it, %" PRIu64 " s after its "
                                         "arrival: %s (%" PRIu64 " more not logged)",
                     (now_usec(CLOCK_MONOTONIC) - ev->received) / USEC_PER_SEC, why, suppressed);
}

/* ---- udevd's broadcasts ---------------------------------------------------- */

/* Keep a broadcast of an event not read yet: the ring forgets the oldest. */
static void early_add(struct udev_wait *w, const struct udev_confirm *c)
{
        struct udev_entry *e, *old;
        uint64_t *slot = &w->early[w->early_next];

        if (*slot) {
                old = entry_get(w, *slot);
                if (old && old->early) {
                        entry_free(w, old);
                        w->st.forgotten++;
                }
        }
        *slot = 0;
        e = calloc(1, sizeof(*e));
        if (!e || hash_table_add(&w->entries, seqnum_hash(c->seqnum), e) < 0) {
                free(e);
                return; /* its event waits for the bound */
        }
        *e = (struct udev_entry){ .seqnum = c->seqnum, .devpath_hash = c->devpath_hash,
                                  .parent_hash = c->parent_hash, .renamed = c->renamed, .confirmed = true,
                                  .early = true, .w = w };
        memcpy(e->action, c->action, sizeof(e->action));
        *slot = c->seqnum;
        w->early_next = (w->early_next + 1) % ELEMENTSOF(w->early);
}

static void log_mismatch(struct udev_wait *w, uint64_t seqnum)
{
        uint64_t suppressed;

        w->st.mismatched++;
        if (ratelimit_pass(&w->log_mismatch, UDEV_LOG_INTERVAL_USEC, &suppressed))
                log_warning("after-udev: a broadcast on udev's group names SEQNUM=%" PRIu64 " with another "
                            "DEVPATH or ACTION than the kernel's event: ignored (%" PRIu64 " more not logged)",
                            seqnum, suppressed);
}

/*
 * udevd works through a device's events one after another: a broadcast of a
 * later event of the same device (paired with the kernel's copy, so not a
 * forgery naming a SEQNUM to come) means it is done with the earlier ones.
 * One that waits still was never broadcast (udevd failed it, or its worker
 * was killed): it goes on now instead of waiting for the bound.
 */
static void release_passed(struct udev_wait *w, const struct udev_confirm *c)
{
        struct udev_entry *e;
        bool again = true;

        while (again) {
                again = false;
                list_for_each(e, &w->waiting, waiting)
                        if (e->seqnum < c->seqnum && e->devpath_hash == c->devpath_hash) {
                                log_timeout(w, e->ev, "udevd broadcast a later event of the device, not this one");
                                entry_release(w, e, true);
                                again = true; /* the list changed */
                                break;
                        }
        }
}

static void on_confirm(struct udev_wait *w, const struct udev_confirm *c)
{
        struct udev_entry *e;

        if (c->seqnum == 0)
                return; /* not a kernel event */
        w->last_broadcast = now_usec(CLOCK_MONOTONIC);
        set_alive(w, true, "udevd broadcasts");
        e = entry_get(w, c->seqnum);
        if (!e) {
                if (c->seqnum > w->highest)
                        early_add(w, c);
                return;
        }
        if (e->early || e->confirmed)
                return; /* said twice */
        if (!udev_confirm_matches(c, e->seqnum, e->devpath_hash, e->parent_hash, e->action)) {
                log_mismatch(w, c->seqnum);
                return;
        }
        e->confirmed = true;
        w->st.confirmed++;
        entry_release(w, e, false);
        /* Paired with an event the kernel sent: what it says of the device's earlier events holds. */
        release_passed(w, c);
}

static int on_udev_input(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct udev_wait *w = userdata;
        struct udev_confirm c;
        uint64_t suppressed;
        int r;

        /* Bounded per wake-up, as the kernel's socket is: the loop's other sources go on. */
        for (unsigned n = 0; n < HP_INPUT_PER_WAKEUP; n++) {
                r = udev_listen_receive(w->listen, &c);
                if (r == 0)
                        break;
                if (r == -ENOBUFS) {
                        w->st.overflows++;
                        if (ratelimit_pass(&w->log_overflow, UDEV_LOG_INTERVAL_USEC, &suppressed))
                                log_warning("after-udev: udevd's broadcasts overflowed the socket; an event whose "
                                            "broadcast was lost waits until udevd broadcasts a later event of "
                                            "its device, or nothing for %" PRIu64 " s",
                                            manager_cfg(w->m)->after_udev_timeout_usec / USEC_PER_SEC);
                        continue;
                }
                if (r < 0) {
                        log_error_errno(r, "after-udev: cannot read udevd's broadcasts, no longer waiting for them");
                        w->io = sd_event_source_disable_unref(w->io);
                        w->listen = udev_listen_free(w->listen);
                        w->listening = false;
                        set_alive(w, false, "udevd's broadcasts cannot be read");
                        return 0;
                }
                on_confirm(w, &c);
        }
        return 0;
}

static void listener_probe(struct udev_wait *w);

/* ---- the events ------------------------------------------------------------ */

static void on_received(void *userdata, const struct uevent *view, enum ledger_verdict v, const struct ledger_gap *gap)
{
        struct udev_wait *w = userdata;

        (void)v;
        (void)gap;
        if (view->seqnum > w->highest)
                w->highest = view->seqnum;
        listener_probe(w);
}

static void on_queued(void *userdata, const struct uevent *ev)
{
        struct udev_wait *w = userdata;
        uint64_t devpath_hash, parent_hash;
        struct udev_entry *e;

        /* Only what this instance read from the kernel's socket: udevd saw the same.  And only
         * while udevd counts as running: an event queued before will not wait for it anyway, and
         * a machine without udevd pays nothing per event held. */
        if (!w->listening || !w->alive || !manager_feeding(w->m))
                return;
        udev_devpath_hashes(ev->devpath, &devpath_hash, &parent_hash);
        e = entry_get(w, ev->seqnum);
        if (e) {
                struct udev_confirm c = { .seqnum = e->seqnum, .devpath_hash = e->devpath_hash,
                                          .parent_hash = e->parent_hash, .renamed = e->renamed };

                memcpy(c.action, e->action, sizeof(c.action));
                e->early = false;
                e->confirmed = udev_confirm_matches(&c, ev->seqnum, devpath_hash, parent_hash, ev->action);
                if (e->confirmed)
                        w->st.confirmed++;
                else
                        log_mismatch(w, ev->seqnum);
        } else {
                e = calloc(1, sizeof(*e));
                if (!e || hash_table_add(&w->entries, seqnum_hash(ev->seqnum), e) < 0) {
                        free(e);
                        log_debug("SEQNUM=%" PRIu64 ": out of memory, its agents will not wait for udevd",
                                  ev->seqnum);
                        return;
                }
                *e = (struct udev_entry){ .seqnum = ev->seqnum, .w = w };
        }
        e->devpath_hash = devpath_hash;
        e->parent_hash = parent_hash;
        snprintf(e->action, sizeof(e->action), "%s", ev->action);
}

/* The event left: its entry goes (no job waits for an event that is done or dropped). */
static void forget(struct udev_wait *w, uint64_t seqnum)
{
        struct udev_entry *e = entry_get(w, seqnum);

        if (e)
                entry_free(w, e);
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        (void)filtered;
        forget(userdata, view->seqnum);
}

static void on_done(void *userdata, const struct uevent *ev)
{
        forget(userdata, ev->seqnum);
}

static void on_close(void *userdata)
{
        struct udev_wait *w = userdata;
        struct udev_entry *e;

        for (size_t iter = 0; (e = hash_table_next(&w->entries, &iter));) {
                sd_event_source_disable_unref(e->timer);
                free(e);
        }
        hash_table_clear(&w->entries);
        sd_event_source_disable_unref(w->io);
        udev_listen_free(w->listen);
        w->m->udev = NULL;
        free(w);
}

static const struct manager_observer_ops udev_wait_ops = {
        .received = on_received,
        .queued = on_queued,
        .dropped = on_dropped,
        .done = on_done,
        .close = on_close,
};

/* ---- waiting ---------------------------------------------------------------- */

/* ---- waiting ---------------------------------------------------------------- */

/* The bound of @ev's wait: after-udev-timeout of udevd's silence, at most HP_AFTER_UDEV_BOUND_FACTOR of them. */
static usec_t bound_of(const struct udev_wait *w, const struct uevent *ev, usec_t *ret_hard)
{
        usec_t t = manager_cfg(w->m)->after_udev_timeout_usec, quiet_until;

        *ret_hard = ev->received + HP_AFTER_UDEV_BOUND_FACTOR * t;
        quiet_until = MAX(ev->received, w->last_broadcast) + t;
        return MIN(quiet_until, *ret_hard);
}

static int on_bound(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct udev_entry *e = userdata;
        struct udev_wait *w = e->w;
        usec_t now = now_usec(CLOCK_MONOTONIC), hard, until = bound_of(w, e->ev, &hard);

        (void)usec;
        if (now < until) {
                /* udevd broadcast other events meanwhile: it works, this one waits on. */
                (void)sd_event_source_set_time(s, until);
                (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
                return 0;
        }
        if (now >= hard) {
                log_timeout(w, e->ev, "udevd kept broadcasting others, not this one");
                entry_release(w, e, true);
                return 0;
        }
        log_timeout(w, e->ev, "udevd broadcast nothing for as long");
        entry_release(w, e, true);
        set_alive(w, false, "udevd broadcast nothing while an event waited for it");
        return 0;
}

int udev_wait_begin(struct manager *m, const struct uevent *ev, struct job *j)
{
        struct udev_wait *w = udev_wait_of(m);
        struct udev_entry *e;
        usec_t until, hard, now;
        int r;

        if (!w || !w->listening || !(e = entry_get(w, ev->seqnum)) || e->early || e->confirmed || !w->alive ||
            ev->received == 0)
                return 0;
        now = now_usec(CLOCK_MONOTONIC);
        until = bound_of(w, ev, &hard);
        if (now >= until) {
                w->st.timeouts++;
                if (now >= hard) {
                        log_timeout(w, ev, "udevd kept broadcasting others, not this one");
                        return 0;
                }
                log_timeout(w, ev, "udevd broadcast nothing for as long");
                set_alive(w, false, "udevd broadcast nothing while an event waited for it");
                return 0;
        }
        r = sd_event_add_time(manager_event(m), &e->timer, CLOCK_MONOTONIC, until, USEC_PER_MSEC, on_bound, e);
        if (r < 0) {
                log_warning_errno(r, "SEQNUM=%" PRIu64 ": no timer to bound its wait for udevd, not waiting",
                                  ev->seqnum);
                return 0;
        }
        e->job = j;
        e->ev = ev;
        e->since = now;
        list_add_head(&w->waiting, &e->waiting);
        w->st.waiting++;
        return 1;
}

void udev_wait_abandon(struct manager *m, const struct uevent *ev)
{
        struct udev_wait *w = udev_wait_of(m);
        struct udev_entry *e = w ? entry_get(w, ev->seqnum) : NULL;

        if (e && e->job) {
                e->job = NULL;
                e->timer = sd_event_source_disable_unref(e->timer);
                list_unlink(&e->waiting);
                w->st.waiting--;
        }
}

size_t udev_wait_bytes(const struct manager *m)
{
        const struct udev_wait *w = udev_wait_of(m);

        return w ? w->entries.n * sizeof(struct udev_entry) + w->entries.cap * sizeof(struct hash_slot) : 0;
}

size_t udev_wait_waiting(const struct manager *m)
{
        const struct udev_wait *w = udev_wait_of(m);

        return w ? w->st.waiting : 0;
}

void udev_wait_get_status(const struct manager *m, struct udev_wait_status *ret)
{
        const struct udev_wait *w = udev_wait_of(m);

        if (!w) {
                *ret = (struct udev_wait_status){ .state = "off" };
                return;
        }
        *ret = w->st;
        ret->state = !w->listening ? "off"
                     : w->alive    ? "on"
                     : !w->listen  ? "auto, udevd not running"
                                   : "on, udevd silent";
}

/* ---- setting up ------------------------------------------------------------- */

/* Close the listener (broadcasts are no longer read). */
static void listener_close(struct udev_wait *w)
{
        w->io = sd_event_source_disable_unref(w->io);
        w->listen = udev_listen_free(w->listen);
}

/*
 * Listen to udevd's broadcasts, if udevd's control socket takes a connection (or
 * after-udev=yes).  libudev subscribes to udevd's group only where udevd
 * runs (in a container it subscribes to nothing while the control socket
 * is missing), so a listener opened without the socket is opened again
 * once it exists: listener_probe() looks for it.  Return: 0 or negative errno.
 */
static int listener_sync(struct udev_wait *w)
{
        const struct manager_config *cfg = manager_cfg(w->m);
        bool control = udevd_running();
        int r;

        w->probed = now_usec(CLOCK_MONOTONIC);
        if (w->listen && !(w->blind && control))
                return 0;
        if (!control && cfg->after_udev != AFTER_UDEV_YES)
                return 0; /* auto: nothing to hear until udevd runs */
        listener_close(w);
        r = udev_listen_open(cfg->rcvbuf, &w->listen);
        if (r >= 0)
                r = sd_event_add_io(manager_event(w->m), &w->io, udev_listen_fd(w->listen), EPOLLIN, on_udev_input, w);
        if (r < 0) {
                listener_close(w);
                return r;
        }
        w->blind = !control;
        return 0;
}

/* Without a listener that hears udevd: look again for its control socket, once per HP_UDEV_PROBE_USEC. */
static void listener_probe(struct udev_wait *w)
{
        bool had = w->listen && !w->blind;
        int r;

        if (!w->listening || had || now_usec(CLOCK_MONOTONIC) - w->probed < HP_UDEV_PROBE_USEC)
                return;
        r = listener_sync(w);
        if (r < 0)
                log_warning_errno(r, "after-udev: cannot listen to udevd's broadcasts");
        else if (w->listen && !w->blind)
                log_info("after-udev: udevd's control socket " UDEVD_CONTROL_SOCKET " appeared (takes connections); "
                         "listening to its broadcasts");
}

/* Listen (or stop) and decide whether udevd runs, as the configuration says. */
static void udev_wait_apply(struct udev_wait *w, bool starting)
{
        const struct manager_config *cfg = manager_cfg(w->m);
        /* Only events read from the kernel's socket are udevd's too: not a replay, nor a
         * socket of any sender (the test build's). */
        bool want = cfg->after_udev != AFTER_UDEV_NO && !manager_replaying(w->m) &&
                    cfg->trust == UEVENT_TRUST_KERNEL,
             running;
        int r;

        if (!want) {
                if (w->listening)
                        log_info("after-udev: off; agents no longer wait for udevd");
                listener_close(w);
                w->listening = false;
                w->alive = false;
                release_all(w);
                return;
        }
        r = listener_sync(w);
        if (r < 0) {
                log_warning_errno(r, "after-udev: cannot listen to udevd's broadcasts, agents do not wait for udevd");
                w->listening = false;
                set_alive(w, false, "udevd's broadcasts cannot be read");
                return;
        }
        w->listening = true;
        running = cfg->after_udev == AFTER_UDEV_YES || !w->blind;
        running = running && w->listen;
        if (starting) {
                w->alive = running;
                if (running)
                        log_info("after-udev: agents start after udevd's broadcast of their event, or %" PRIu64
                                 " s after its arrival",
                                 cfg->after_udev_timeout_usec / USEC_PER_SEC);
                else
                        log_info("after-udev: udevd is not running (" UDEVD_CONTROL_SOCKET " missing or refusing "
                                 "connections); agents wait "
                                 "for it from its first broadcast on");
        } else if (running)
                set_alive(w, true, "udevd runs");
        else
                set_alive(w, false, "udevd is not running (" UDEVD_CONTROL_SOCKET " missing or refusing connections)");
}

int udev_wait_open(struct manager *m)
{
        struct udev_wait *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->m = m;
        hash_table_init(&w->entries);
        list_init(&w->waiting);
        r = manager_add_observer(m, &udev_wait_ops, w);
        if (r < 0) {
                free(w);
                return r;
        }
        m->udev = w;
        udev_wait_apply(w, true);
        return 0;
}

void udev_wait_reconfigured(struct manager *m)
{
        if (m->udev)
                udev_wait_apply(m->udev, false);
}
