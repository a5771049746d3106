/* SPDX-License-Identifier: MIT */
/*
 * Resync after a receive-buffer overflow: the manager's side (resync.h has
 * the decisions).
 *
 * The manager keeps the set of devices it believes present, seeded from
 * sysfs at start and updated by every accepted event.  When the source
 * reports ENOBUFS the kernel has dropped events, and that set may be wrong.
 * HP_RESYNC_DELAY_USEC after the last overflow (at most
 * HP_RESYNC_DELAY_MAX_USEC after the first) a pass starts: sysfs is listed,
 * the plan is made, and then, HP_RESYNC_BATCH operations per turn of the
 * loop, each device that is gone gets a synthesised `remove` (injected past
 * the ledger, with a SEQNUM from the ledger's gaps) and each device present
 * gets "change UUID HOTPLUGD=resync" (or "add ..." if unknown) written to
 * its uevent file.  One UUID serves the whole pass.  With resync-subsystems
 * set, only devices of the listed subsystems are written to or removed;
 * for the others the device set is brought up to date from the listing
 * when the pass starts, with no event, so the next pass does not act on
 * them either.
 *
 * Invariants:
 *  - at most one pass runs; an overflow during a pass schedules the next
 *    one for after it;
 *  - when a pass is needed again soon after the last one (within twice the
 *    current delay), the delay doubles, up to HP_RESYNC_BACKOFF_MAX_USEC;
 *    it falls back to HP_RESYNC_DELAY_USEC after a quiet spell.  Two
 *    daemons with tiny buffers, each overflowing the other with its pass,
 *    so slow down instead of flooding the machine;
 *  - a turn of the loop does at most HP_RESYNC_BATCH operations and stops
 *    early after HP_RESYNC_TURN_USEC;
 *  - after each uevent write the socket is read to the end before the next
 *    write (over as many turns of the loop as that takes: a turn reads at
 *    most HP_INPUT_PER_WAKEUP datagrams), so the pass never has more than
 *    one of its own events in the receive buffer and cannot overflow it by
 *    itself, however small it is;
 *  - the pass waits while the manager is not reading (queue full) and is
 *    abandoned when the manager stops;
 *  - a synthesised remove is injected only if the device is still believed
 *    present and is still absent from sysfs at that moment;
 *  - a remove that found no lost SEQNUM (the pass started while the socket
 *    still held events from before the loss, so the loss was not yet a
 *    gap in the ledger and the kernel's count could not be trusted) is
 *    tried again by a removes-only pass, which waits until the socket has
 *    been read to the end: then every SEQNUM up to the kernel's count is
 *    either received or lost.  At most HP_RESYNC_PLACE_TRIES such passes
 *    in a row that read it to the end and still place nothing; then the
 *    devices stay believed present (warned) until the next pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "recovery/devset.h"
#include "shared/envbuf.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "loop/manager-resync.h"
#include "recovery/resync.h"
#include "shared/sysfs.h"
#include "control/uuid-set.h"

#define RESYNC_RETRY_USEC (20 * USEC_PER_MSEC) /* a waiting pass looks again after this */

struct manager_resync {
        struct manager *m;
        struct devset known;
        sd_event_source *timer; /* starts the next pass */
        sd_event_source *work;  /* a pass in progress: one batch per turn */
        usec_t first_overflow;  /* CLOCK_MONOTONIC, 0: no overflow waiting for a pass */
        usec_t last_end;        /* CLOCK_MONOTONIC end of the last pass, 0: none yet */
        unsigned backoff;       /* passes in a row that were needed again soon after */
        bool overflow_during_pass;
        bool full_reported;
        bool listed;            /* the devices in sysfs at the start are in known */
        bool place_pending;     /* removes were left without a SEQNUM: a removes-only pass is due */
        unsigned place_tries;   /* removes-only passes in a row that read the socket to the end */
        uint64_t seq_floor; /* highest SEQNUM given to a synthesised remove */
        char prev_uuid[UUID_STRING_MAX];
        struct resync_stats stats;

        /* The pass in progress. */
        bool running;
        bool removes_only;    /* only the plan's removes: the adds and changes were written before */
        bool targeted;        /* after a handover file: adds and removes only (manager_resync_handover()) */
        uint64_t handover_last; /* the previous instance's last SEQNUM, for the targeted pass's line */
        uint64_t handover_kernel; /* the kernel's count when the targeted pass started */
        size_t n_ops;         /* operations of the plan this pass does */
        struct resync_plan plan;
        size_t next;
        bool undrained;       /* the socket was not read to the end after our last write */
        int rootfd;
        char uuid[UUID_STRING_MAX];
        usec_t started;
        usec_t busy, longest; /* time spent in the pass's own turns, and the longest one */
        size_t n_sysfs;
        size_t changed, added, removed, failed, kept, unplaced;
};

/* ---- the device set ------------------------------------------------------ */

static const struct manager_observer_ops resync_ops;
static void resync_close(void *userdata);

/* The resync's state (NULL once it is closed): the observer's userdata, for the timers, which get @m. */
static struct manager_resync *resync_of(const struct manager *m)
{
        return manager_observer_data(m, &resync_ops);
}

/* The device model's seeding from the listing at start (manager_seed_device()). */
struct seeding {
        struct manager *m;
        size_t seeded, left_out;
};

static void seed_device(void *userdata, int dirfd, const char *devpath)
{
        struct seeding *s = userdata;
        int r = manager_seed_device(s->m, dirfd, devpath);

        if (r > 0)
                s->seeded++;
        else if (r < 0)
                s->left_out++;
}

int observe_resync_open(struct manager *m)
{
        struct manager_resync *rs = calloc(1, sizeof(*rs));
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        struct seeding seeding = { .m = m };
        int r;

        if (!rs)
                return -ENOMEM;
        rs->m = m;
        rs->rootfd = -1;
        devset_init(&rs->known, 0);
        r = manager_add_observer(m, &resync_ops, rs);
        if (r < 0) {
                resync_close(rs);
                return log_error_errno(r, "cannot set up resync");
        }
        /* One walk: the device set, and the device model (not for a replay: its devices are the recording's). */
        r = resync_scan_visit(manager_cfg(m)->sysfs_root, &rs->known, manager_replaying(m) ? NULL : seed_device,
                              &seeding);
        if (r == -ENOMEM)
                return r;
        rs->listed = r >= 0;
        if (r < 0)
                log_warning_errno(r, "cannot list devices in %s/devices; a resync will send them all 'add'",
                                  manager_cfg(m)->sysfs_root);
        else
                log_debug("%zu devices present in %s/devices, %zu physical devices seeded into the device model "
                          "(listed in %" PRIu64 " us)", rs->known.n, manager_cfg(m)->sysfs_root, seeding.seeded,
                          now_usec(CLOCK_MONOTONIC) - t0);
        if (seeding.left_out > 0)
                log_notice("device model full (handler-cache): %zu devices present at start left out; "
                           "their class devices' removes may lack PHYSDEVPATH and PHYSDEVDRIVER", seeding.left_out);
        return 0;
}

/*
 * Tell the core which SYNTH_UUIDs mark an event as re-triggered by this
 * daemon: the pass's while one runs, and the last completed one's.  The
 * core borrows the strings, which change in place, until told otherwise.
 */
static void publish_uuids(struct manager_resync *rs)
{
        bool any = rs->running || rs->stats.passes > 0;

        manager_set_resync_uuids(rs->m, rs->running ? rs->uuid : NULL, any ? rs->prev_uuid : NULL);
}

static void pass_free(struct manager_resync *rs)
{
        resync_plan_free(&rs->plan);
        rs->rootfd = safe_close(rs->rootfd);
        rs->running = false;
        rs->undrained = false;
        publish_uuids(rs);
}

/* The observer's close(): stop any pass, free the set and the sources. */
static void resync_close(void *userdata)
{
        struct manager_resync *rs = userdata;

        pass_free(rs);
        manager_set_resync_uuids(rs->m, NULL, NULL);
        sd_event_source_disable_unref(rs->timer);
        sd_event_source_disable_unref(rs->work);
        devset_clear(&rs->known);
        free(rs);
}

/* The observer's received(): an event the ledger accepted updates the device set. */
static void on_received(void *userdata, const struct uevent *view, enum ledger_verdict v,
                        const struct ledger_gap *gap)
{
        struct manager_resync *rs = userdata;
        int r;

        if (v == LEDGER_DUPLICATE)
                return;
        r = devset_note_event(&rs->known, view->action, view->devpath, view->subsystem, view->devpath_old);
        if (r == -ENOSPC && !rs->full_reported) {
                rs->full_reported = true;
                log_warning("more than %d devices: further devices are not remembered, "
                            "a resync sends them 'add'", HP_RESYNC_DEVICES_MAX);
        }
}

int manager_device_known(const struct manager *m, const char *devpath)
{
        const struct manager_resync *rs = resync_of(m);

        if (rs && devset_get(&rs->known, devpath))
                return 1;
        if (!rs || !rs->listed)
                return -ENODATA; /* the devices there at the start are not known */
        return rs->known.refused > 0 ? -ENOSPC : 0;
}

void manager_for_each_known_device(const struct manager *m, void (*fn)(const char *devpath, void *arg), void *arg)
{
        const struct manager_resync *rs = resync_of(m);
        const struct devset_entry *e;
        size_t it = 0;

        while (rs && (e = devset_next(&rs->known, &it)))
                fn(e->devpath, arg);
}

void manager_resync_stats(const struct manager *m, struct resync_stats *ret)
{
        const struct manager_resync *rs = resync_of(m);

        *ret = rs ? rs->stats : (struct resync_stats){ .enabled = false };
        ret->enabled = manager_cfg(m)->resync;
        ret->running = rs && rs->running;
        ret->devices = rs ? rs->known.n : 0;
}

/* ---- scheduling ---------------------------------------------------------- */

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);
static int on_work(sd_event_source *s, uint64_t usec, void *userdata);

/* Arm @src (created on first use) to fire once at @at, CLOCK_MONOTONIC. */
static int arm(struct manager *m, sd_event_source **src, usec_t at, sd_event_time_handler_t fn, int64_t prio)
{
        int r;

        if (!*src) {
                r = sd_event_add_time(manager_event(m), src, CLOCK_MONOTONIC, at, USEC_PER_MSEC, fn, m);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_priority(*src, prio);
        } else {
                r = sd_event_source_set_time(*src, at);
                if (r < 0)
                        return r;
        }
        return sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT);
}

static usec_t delay_for(unsigned backoff)
{
        return MIN(HP_RESYNC_DELAY_USEC << MIN(backoff, 24u), HP_RESYNC_BACKOFF_MAX_USEC);
}

/* A new pass is needed at @now: back off if the last one ended only just before. */
static void update_backoff(struct manager *m, usec_t now)
{
        struct manager_resync *rs = resync_of(m);

        if (rs->last_end == 0 || now >= rs->last_end + 2 * delay_for(rs->backoff)) {
                rs->backoff = 0;
                return;
        }
        rs->backoff = MIN(rs->backoff + 1, 24u);
        if (delay_for(rs->backoff) == HP_RESYNC_BACKOFF_MAX_USEC &&
            delay_for(rs->backoff - 1) < HP_RESYNC_BACKOFF_MAX_USEC)
                log_warning("the receive buffer (%d bytes) overflows again and again right after resync "
                            "passes (another daemon resyncing?); resyncing at most every %llu s now",
                            manager_input_rcvbuf(m), HP_RESYNC_BACKOFF_MAX_USEC / USEC_PER_SEC);
}

static void schedule_pass(struct manager *m)
{
        struct manager_resync *rs = resync_of(m);
        usec_t delay = delay_for(rs->backoff);
        /* Debounce, but do not let overflows that keep coming put the pass off for long. */
        usec_t at = MIN(now_usec(CLOCK_MONOTONIC) + delay,
                        rs->first_overflow + MAX(delay, HP_RESYNC_DELAY_MAX_USEC));
        int r;

        r = arm(m, &rs->timer, at, on_timer, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                log_error_errno(r, "cannot schedule a resync");
}

/* The observer's overflow(): the kernel dropped events; schedule a pass (debounced), if resync is on.
 * A replayed overflow lost nothing on this machine. */
static void on_overflow(void *userdata)
{
        struct manager_resync *rs = userdata;
        struct manager *m = rs->m;
        usec_t now = now_usec(CLOCK_MONOTONIC);

        if (!manager_cfg(m)->resync || manager_stopping(m) || manager_replaying(m))
                return;
        if (rs->running) {
                rs->overflow_during_pass = true; /* the next pass follows this one */
                if (rs->first_overflow == 0)
                        rs->first_overflow = now;
                return;
        }
        if (rs->first_overflow == 0) {
                rs->first_overflow = now;
                update_backoff(m, now);
        }
        schedule_pass(m);
}

/* ---- a pass -------------------------------------------------------------- */

/* The manager is not reading (queue full): what a pass writes could only pile up in the
 * socket, and what the socket holds would look lost. */
static bool must_wait(const struct manager *m)
{
        return manager_input_paused(m) || manager_queue_room(m) == 0;
}

static bool still_there(const char *devpath, void *userdata)
{
        struct manager_resync *rs = userdata;
        int fd = sysfs_open_dir(rs->rootfd, devpath);

        safe_close(fd);
        return fd >= 0;
}

/* The kernel's last SEQNUM, 0 if unknown. */
static uint64_t kernel_seqnum(int rootfd)
{
        uint64_t seq = 0;

        (void)sysfs_read_seqnum(rootfd, &seq);
        return seq;
}

/* Give the plan's removes SEQNUMs of lost events; those left without one wait for a later pass. */
static int place_removes(struct manager *m, uint64_t kernel)
{
        struct manager_resync *rs = resync_of(m);
        _cleanup_free_ uint64_t *seq = NULL;
        size_t n = rs->plan.n_remove, got;

        if (n == 0)
                return 0;
        seq = calloc(n, sizeof(*seq));
        if (!seq)
                return -ENOMEM;
        got = resync_pick_seqnums(manager_ledger(m), rs->seq_floor, kernel, seq, n);
        for (size_t i = 0; i < got; i++)
                rs->plan.op[i].seqnum = seq[i];
        if (got > 0)
                rs->seq_floor = seq[got - 1];
        return 0;
}

/* Bring the device set up to date, without an event, for the devices the pass leaves alone. */
static int refresh_left_alone(struct manager_resync *rs)
{
        for (size_t i = 0; i < rs->plan.n_left; i++) {
                const struct resync_op *op = &rs->plan.left[i];

                if (op->action == RESYNC_FORGET)
                        (void)devset_remove(&rs->known, op->devpath);
                else if (devset_put(&rs->known, op->devpath, op->subsystem) == -ENOMEM)
                        return -ENOMEM; /* -ENOSPC: at the bound, counted by the set */
        }
        return 0;
}

/* Return: 0, or 1 for a removes-only pass that must wait for the socket to be read to the end
 * (nothing done), or negative errno. */
static int pass_prepare(struct manager *m)
{
        struct manager_resync *rs = resync_of(m);
        struct devset now;
        uint64_t kernel;
        bool drained;
        int r;

        rs->rootfd = sysfs_open_root(manager_cfg(m)->sysfs_root);
        if (rs->rootfd < 0)
                return rs->rootfd;
        /* Read the kernel's SEQNUM, then everything queued for us: what lies between is lost
         * (unless reading stopped again: then the socket may still hold some of it). */
        kernel = kernel_seqnum(rs->rootfd);
        drained = manager_drain_input(m) > 0 && !must_wait(m);
        if (!drained) {
                if (rs->removes_only)
                        return 1; /* the adds and changes are done: only a full read helps */
                kernel = 0;
        }
        if (rs->targeted)
                rs->handover_kernel = kernel ? kernel : kernel_seqnum(rs->rootfd);
        devset_init(&now, 0);
        r = resync_scan(manager_cfg(m)->sysfs_root, &now);
        if (r >= 0)
                r = resync_plan_build(&(const struct resync_plan_args){ .known = &rs->known, .now = &now,
                                                                        .exists = still_there, .userdata = rs,
                                                                        .max_writes = HP_RESYNC_WRITES_MAX,
                                                                        .subsystems = manager_cfg(m)->resync_subsystems,
                                                                        .no_changes = rs->targeted },
                                      &rs->plan);
        rs->n_sysfs = now.n;
        devset_clear(&now);
        rs->n_ops = rs->removes_only ? rs->plan.n_remove : rs->plan.n;
        if (r >= 0 && !rs->removes_only)
                r = refresh_left_alone(rs);
        /* The targeted pass's adds count as handled from now on: a coldplug that asks meanwhile
         * (trigger --skip-handled) must not trigger them a second time. */
        for (size_t i = 0; r >= 0 && rs->targeted && i < rs->plan.n; i++)
                if (rs->plan.op[i].action == RESYNC_ADD)
                        manager_note_handled(m, rs->plan.op[i].devpath, rs->plan.op[i].subsystem);
        if (r >= 0)
                r = place_removes(m, kernel);
        if (r >= 0)
                r = uuid_random(rs->uuid);
        return r < 0 ? r : 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        struct manager_resync *rs = resync_of(m);
        int r;

        if (rs->running || manager_stopping(m) || !manager_cfg(m)->resync)
                return 0;
        if (must_wait(m)) {
                /* Start only once everything queued for us can be read. */
                r = arm(m, &rs->timer, now_usec(CLOCK_MONOTONIC) + RESYNC_RETRY_USEC, on_timer,
                        SD_EVENT_PRIORITY_NORMAL);
                if (r < 0)
                        log_error_errno(r, "cannot schedule a resync");
                return 0;
        }
        /* An overflow waiting makes it a full pass, which does the pending removes too. */
        rs->removes_only = rs->place_pending && rs->first_overflow == 0;
        /* An overflow since the handover makes the targeted pass a full one. */
        rs->targeted = rs->targeted && rs->first_overflow == 0;
        rs->place_pending = false;
        rs->first_overflow = 0;
        rs->overflow_during_pass = false;
        rs->next = 0;
        rs->changed = rs->added = rs->removed = rs->failed = rs->kept = rs->unplaced = 0;
        rs->started = now_usec(CLOCK_MONOTONIC);
        rs->running = true;
        publish_uuids(rs);
        r = pass_prepare(m);
        rs->busy = rs->longest = now_usec(CLOCK_MONOTONIC) - rs->started;
        if (r == 1) {
                /* Reading stopped again before the socket was empty: look again soon. */
                pass_free(rs);
                rs->place_pending = true;
                r = arm(m, &rs->timer, now_usec(CLOCK_MONOTONIC) + RESYNC_RETRY_USEC, on_timer,
                        SD_EVENT_PRIORITY_NORMAL);
                if (r < 0)
                        log_error_errno(r, "cannot schedule a resync");
                return 0;
        }
        if (r >= 0)
                r = arm(m, &rs->work, 0, on_work, SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                log_error_errno(r, "resync after overflow failed to start");
                pass_free(rs);
                return 0;
        }
        if (rs->removes_only) {
                log_debug("resync: removes-only pass, %zu to remove (SYNTH_UUID=%s)", rs->plan.n_remove, rs->uuid);
                return 0;
        }
        log_debug("resync: %zu devices in sysfs, %zu known; %zu to remove, %zu to add, %zu to change, "
                  "%zu skipped; %zu left alone (resync-subsystems), of them %zu learnt and %zu forgotten "
                  "without an event (SYNTH_UUID=%s)",
                  rs->n_sysfs, rs->known.n, rs->plan.n_remove, rs->plan.n_add, rs->plan.n_change,
                  rs->plan.skipped, rs->plan.left_alone, rs->plan.n_learn, rs->plan.n_forget, rs->uuid);
        return 0;
}

static void do_remove(struct manager *m, const struct resync_op *op)
{
        struct manager_resync *rs = resync_of(m);
        struct log_fields f = { .seqnum = op->seqnum, .devpath = op->devpath, .duration_usec = -1 };
        char buf[HP_UEVENT_MAX_SIZE];
        int len, r;

        if (op->seqnum == 0) {
                rs->unplaced++; /* stays believed present: a later pass tries again */
                return;
        }
        if (!devset_get(&rs->known, op->devpath) || still_there(op->devpath, rs)) {
                rs->kept++; /* a real event got there first */
                return;
        }
        len = resync_remove_datagram(op->devpath, op->subsystem, op->seqnum, rs->uuid, buf, sizeof(buf));
        r = len < 0 ? len : manager_inject_synthetic(m, buf, (size_t)len);
        if (r < 0) {
                log_internal(LOG_WARNING, r, &f, "cannot synthesise remove");
                return;
        }
        (void)devset_remove(&rs->known, op->devpath);
        rs->removed++;
}

static void do_write(struct manager *m, const struct resync_op *op)
{
        struct manager_resync *rs = resync_of(m);
        struct log_fields f = { .devpath = op->devpath, .action = resync_action_to_string(op->action),
                                .duration_usec = -1 };
        _cleanup_close_ int dfd = -1, fd = -1;
        char line[64 + UUID_STRING_MAX];
        int len = snprintf(line, sizeof(line), "%s %s " RESYNC_SYNTH_ARG,
                           resync_action_to_string(op->action), rs->uuid);

        if (manager_cfg(m)->dry_run) {
                log_internal(LOG_INFO, 0, &f, "resync would write \"%s\" to the uevent file", line);
        } else {
                dfd = sysfs_open_dir(rs->rootfd, op->devpath);
                fd = dfd < 0 ? dfd : openat(dfd, "uevent", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || write(fd, line, (size_t)len) != len) {
                        /* Rare (the device went away meanwhile), and what else it means is worth a line. */
                        log_internal(LOG_NOTICE, dfd < 0 ? dfd : -errno, &f,
                                     "resync: cannot write the uevent file, skipped");
                        rs->failed++;
                        return;
                }
        }
        if (op->action == RESYNC_ADD)
                rs->added++;
        else
                rs->changed++;
}

/* After a pass: a removes-only pass for the removes it could not place, unless an overflow
 * during it makes a full pass follow anyway. */
static void follow_up(struct manager *m)
{
        struct manager_resync *rs = resync_of(m);

        if (rs->overflow_during_pass) {
                /* Events were lost during this pass: go again, later each time this repeats. */
                update_backoff(m, rs->last_end);
                schedule_pass(m);
                return;
        }
        if (rs->unplaced == 0) {
                rs->place_tries = 0;
                return;
        }
        if (rs->place_tries >= HP_RESYNC_PLACE_TRIES) {
                log_warning("resync: %zu removes found no lost SEQNUM in %u passes that read the socket to "
                            "the end (more than %d gaps open?); those devices stay believed present until "
                            "the next overflow's pass", rs->unplaced, rs->place_tries, LEDGER_MAX_OPEN_GAPS);
                rs->place_tries = 0;
                return;
        }
        rs->place_pending = true;
        if (arm(m, &rs->timer, rs->last_end + delay_for(rs->place_tries), on_timer, SD_EVENT_PRIORITY_NORMAL) < 0)
                log_error("cannot schedule a resync for %zu removes left for later", rs->unplaced);
}

static void pass_end(struct manager *m)
{
        struct manager_resync *rs = resync_of(m);
        usec_t took = now_usec(CLOCK_MONOTONIC) - rs->started;

        if (rs->removes_only) {
                /* It read the socket to the end before placing (pass_prepare()). */
                rs->place_tries++;
                log_notice("resync: %zu removes synthesised for devices whose remove was lost, %zu still "
                           "without a lost SEQNUM, %zu kept (a real event came) (SYNTH_UUID=%s)",
                           rs->removed, rs->unplaced, rs->kept, rs->uuid);
                rs->stats.removed += rs->removed;
                pass_free(rs);
                rs->last_end = now_usec(CLOCK_MONOTONIC);
                follow_up(m);
                return;
        }
        if (rs->targeted)
                log_notice("handover: targeted resync of what changed after SEQNUM %" PRIu64 " (the kernel was "
                           "at %" PRIu64 "; the events no instance heard are the ledger's gaps): %zu added, "
                           "%zu removed, %zu failed, %zu left for later; %zu devices in sysfs; %.1f ms "
                           "(SYNTH_UUID=%s)",
                           rs->handover_last, rs->handover_kernel, rs->added, rs->removed, rs->failed, rs->unplaced,
                           rs->n_sysfs, (double)took / 1000.0, rs->uuid);
        else
                log_notice("resync after overflow: %zu changed, %zu added, %zu removed, %zu failed, %zu skipped, "
                   "%zu left for later, %zu left alone (resync-subsystems); %zu devices in sysfs; %.1f ms, "
                   "%.1f ms of it working, longest turn %.1f ms (SYNTH_UUID=%s)",
                   rs->changed, rs->added, rs->removed, rs->failed, rs->plan.skipped, rs->unplaced,
                   rs->plan.left_alone, rs->n_sysfs, (double)took / 1000.0, (double)rs->busy / 1000.0,
                   (double)rs->longest / 1000.0, rs->uuid);
        rs->stats.passes++;
        rs->stats.targeted += rs->targeted;
        rs->targeted = false;
        rs->stats.changed += rs->changed;
        rs->stats.added += rs->added;
        rs->stats.removed += rs->removed;
        rs->stats.failed += rs->failed;
        rs->stats.skipped += rs->plan.skipped;
        rs->stats.left_alone += rs->plan.left_alone;
        memcpy(rs->prev_uuid, rs->uuid, sizeof(rs->uuid));
        pass_free(rs);
        rs->last_end = now_usec(CLOCK_MONOTONIC);
        rs->place_tries = 0;
        follow_up(m);
}

static int on_work(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        struct manager_resync *rs = resync_of(m);
        usec_t t0 = now_usec(CLOCK_MONOTONIC);
        int r;

        if (!rs->running)
                return 0;
        if (manager_stopping(m)) {
                log_info("stopping: resync abandoned after %zu of %zu operations", rs->next, rs->n_ops);
                pass_free(rs);
                return 0;
        }
        for (unsigned k = 0; k < HP_RESYNC_BATCH && rs->next < rs->n_ops && !must_wait(m) &&
                             now_usec(CLOCK_MONOTONIC) - t0 < HP_RESYNC_TURN_USEC;
             k++) {
                const struct resync_op *op;

                /* Our last write's event is behind others still in the socket: read on first. */
                if (rs->undrained && manager_drain_input(m) <= 0)
                        break;
                rs->undrained = false;
                op = &rs->plan.op[rs->next++];
                if (op->action == RESYNC_REMOVE) {
                        do_remove(m, op);
                        manager_dispatch(m);
                } else {
                        do_write(m, op);
                        /* Our event is in the buffer now: take it. */
                        rs->undrained = manager_drain_input(m) <= 0;
                }
                if (manager_stopping(m) || !rs->running)
                        return 0;
        }
        t0 = now_usec(CLOCK_MONOTONIC) - t0;
        rs->busy += t0;
        rs->longest = MAX(rs->longest, t0);
        if (rs->next >= rs->n_ops) {
                pass_end(m);
                return 0;
        }
        r = arm(m, &rs->work, must_wait(m) ? now_usec(CLOCK_MONOTONIC) + RESYNC_RETRY_USEC : 0, on_work,
                SD_EVENT_PRIORITY_IDLE);
        if (r < 0) {
                log_error_errno(r, "resync abandoned");
                pass_free(rs);
        }
        return 0;
}

int manager_resync_handover(struct manager *m, struct devset *present, uint64_t last)
{
        struct manager_resync *rs = resync_of(m);

        if (!rs)
                return -ENODEV;
        /* The previous instance's set is as of @last; this one's listing at start is newer. */
        devset_clear(&rs->known);
        rs->known = *present;
        devset_init(present, 0);
        rs->listed = true;
        rs->handover_last = last;
        if (!manager_cfg(m)->resync) {
                log_notice("handover: resync is off; devices added or removed while no instance listened "
                           "are not recovered");
                return 0;
        }
        rs->targeted = true;
        return arm(m, &rs->timer, now_usec(CLOCK_MONOTONIC), on_timer, SD_EVENT_PRIORITY_NORMAL);
}

bool manager_resync_handover_due(const struct manager *m)
{
        const struct manager_resync *rs = resync_of(m);

        return rs && rs->targeted && !rs->running;
}

const struct devset *manager_resync_known(const struct manager *m)
{
        const struct manager_resync *rs = resync_of(m);

        return rs ? &rs->known : NULL;
}

static const struct manager_observer_ops resync_ops = {
        .received = on_received,
        .overflow = on_overflow,
        .close = resync_close,
};
