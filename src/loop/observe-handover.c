/* SPDX-License-Identifier: MIT */
/*
 * The handover journal observer (handover.h): what the manager writes down
 * as events come and go, and how a new instance takes over what the
 * previous one held.
 *
 * Invariants: an event is written down when it is queued, before
 * any agent for it can start and before its datagram is consumed from the
 * socket (the "loss-proof intake": queued() runs inside
 * manager_feed(), which the netlink source calls before
 * uevent_source_consume(), source-netlink.c), and marked done when its job is over, so the
 * journal read at any instant lists every event accepted and not finished.
 * The agent's start is noted before the spawn, so a crash right after it
 * counts as a re-run.  Events re-run from a previous journal are not
 * written again (their records are still live); one that is dropped this
 * time (a handler now filters it) is marked done like a finished one.
 * Journal failures are reported once and never stop the pipeline: only the
 * protection is lost.
 *
 * The poison guard (the manager's intake guard, observe-builtin.h): the
 * journal's intake mark names the datagram between its begin() and end()
 * (parse is done; ledger, handlers and queueing are not), and its start
 * mark the held event between start_begin() and start_end() (dispatch,
 * its job, its agent's environment and spawn), each with the number of
 * instances that began that step on it.  An instance that finds a mark
 * left behind compares every datagram it takes through that step
 * (restored or read) with it, by SEQNUM and digest: the same one goes
 * through once more with the tries counted up, and once
 * HP_INTAKE_TRIES_MAX instances died on it, it is set aside instead.
 * Without a journal (manager_handover() not called) every hook does
 * nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recovery/devset.h"
#include "recovery/handover-file.h"
#include "recovery/handover.h"
#include "shared/log.h"
#include "loop/manager-internal.h"
#include "loop/manager-resync.h"
#include "loop/observe-builtin.h"
#include "uevent/record.h"

struct manager_handover {
        struct manager *m;
        struct handover *journal;   /* NULL: no handover journal */
        bool restoring;             /* re-running the events a previous instance held */
        bool failed;                /* a journal write failed (reported once) */
        /* After a takeover: the previous instance's last SEQNUM, which may
         * still be in the socket (it is consumed only after journalling). */
        uint64_t takeover_last;
        bool takeover_check;        /* the first datagram after a takeover is not read yet */
        /* By slot: the datagram the previous instance died on in that step (seqnum 0: none). */
        struct handover_mark suspect[_HANDOVER_MARK_MAX];
        /* Devices whose add ran or is queued in this boot, by this instance or one it took
         * over from (a handover file): a coldplug may skip them (manager_device_handled()). */
        struct devset handled;
        bool handled_full;          /* the set reached its bound (reported once) */
};

static void journal_failed(struct manager_handover *h, int r)
{
        if (h->failed)
                return;
        h->failed = true;
        log_warning_errno(r, "cannot write to the handover journal; held events may be lost on a restart "
                             "(reported once)");
}

/* A write to the journal returned @r: a failure is reported; the manager hears its new size (the budget). */
static void journal_wrote(struct manager_handover *h, int r)
{
        /* Dead records count against the budget too: an eighth of it, at most, before a compaction
         * (1 MiB of the default budget, HANDOVER_COMPACT_MIN). */
        handover_set_compact_min(h->journal, manager_cfg(h->m)->max_queue_bytes / 8);
        if (r < 0)
                journal_failed(h, r);
        manager_note_journal_bytes(h->m, handover_size(h->journal));
}

/*
 * An event was queued (or a policy filtered it): an add makes its device
 * handled, a remove not.  Queued is enough: the add runs, in its device's
 * order, and a coldplug that triggered the device again meanwhile would
 * run it twice.
 */
static void note_handled(struct manager_handover *h, const struct uevent *ev)
{
        int r = 0;

        if (!ev->action || !ev->devpath)
                return;
        if (strcmp(ev->action, "add") == 0)
                r = devset_put(&h->handled, ev->devpath, ev->subsystem ? ev->subsystem : "");
        else if (strcmp(ev->action, "remove") == 0)
                (void)devset_remove(&h->handled, ev->devpath);
        else if (strcmp(ev->action, "move") == 0 && ev->devpath_old && devset_get(&h->handled, ev->devpath_old))
                r = devset_move(&h->handled, ev->devpath_old, ev->devpath, ev->subsystem ? ev->subsystem : "");
        if (r == -ENOSPC && !h->handled_full) {
                h->handled_full = true;
                log_warning("more than %d devices handled: further ones are not remembered, a coldplug "
                            "with --skip-handled triggers them again", HP_RESYNC_DEVICES_MAX);
        }
}

static void on_queued(void *userdata, const struct uevent *ev)
{
        struct manager_handover *h = userdata;
        int r;

        note_handled(h, ev);
        if (!h->journal || h->restoring)
                return;
        r = handover_event(h->journal, ev->seqnum, ev->buf, ev->size);
        journal_wrote(h, r);
}

/*
 * Events held (scheduler and backlog), as far as the journal is
 * concerned.  Stopping drops the queued events, but they are not done:
 * they are what the next instance must run, so the journal is never cut
 * back then.
 */
static size_t held(const struct manager *m)
{
        return manager_stopping(m) ? SIZE_MAX : manager_held(m);
}

static void on_dropped(void *userdata, const struct uevent *view, bool filtered)
{
        struct manager_handover *h = userdata;
        int r;

        if (filtered)
                note_handled(h, view);
        if (!h->journal)
                return;
        if (h->restoring)
                r = handover_done(h->journal, view->seqnum, view->size, held(h->m));
        else
                r = handover_ledger(h->journal, manager_ledger(h->m)->last);
        journal_wrote(h, r);
}

static void on_starting(void *userdata, const struct uevent *ev)
{
        struct manager_handover *h = userdata;
        int r;

        if (!h->journal)
                return;
        r = handover_started(h->journal, ev->seqnum);
        journal_wrote(h, r);
}

static void on_done(void *userdata, const struct uevent *ev)
{
        struct manager_handover *h = userdata;
        int r;

        /* Called after scheduler_done(): @ev is no longer held. */
        if (!h->journal)
                return;
        r = handover_done(h->journal, ev->seqnum, ev->size, held(h->m));
        journal_wrote(h, r);
}

/*
 * Write @slot's mark for @view (its datagram as received); one that killed
 * enough instances in that step is not marked but set aside.  Return: the
 * tries of a datagram to set aside, else 0.
 */
static uint32_t mark_begin(struct manager_handover *h, enum handover_slot slot, const struct uevent *view)
{
        const struct handover_mark *suspect = &h->suspect[slot];
        struct handover_mark mark = { .seqnum = view->seqnum, .tries = 1 };

        if (!h->journal)
                return 0;
        mark.digest = record_crc32(0, view->buf, view->size);
        if (suspect->seqnum == mark.seqnum && suspect->digest == mark.digest) {
                if (suspect->tries >= HP_INTAKE_TRIES_MAX)
                        return suspect->tries;
                mark.tries = suspect->tries + 1;
        }
        (void)handover_mark(h->journal, slot, &mark);
        return 0;
}

static void mark_end(struct manager_handover *h, enum handover_slot slot)
{
        if (h->journal)
                (void)handover_mark(h->journal, slot, NULL);
}

/* The intake guard's begin(): write the intake mark; the datagram that killed enough instances is set aside. */
static uint32_t on_intake_begin(void *userdata, const struct uevent *view)
{
        return mark_begin(userdata, HANDOVER_MARK_INTAKE, view);
}

static void on_intake_end(void *userdata)
{
        mark_end(userdata, HANDOVER_MARK_INTAKE);
}

/* The intake guard's start_begin(): the same with the start mark, for a held event about to start. */
static uint32_t on_start_begin(void *userdata, const struct uevent *ev)
{
        return mark_begin(userdata, HANDOVER_MARK_START, ev);
}

static void on_start_end(void *userdata)
{
        mark_end(userdata, HANDOVER_MARK_START);
}

/* The intake guard's repeated(): only the first datagram read after a takeover is checked. */
static bool on_repeated(void *userdata, const struct uevent *view)
{
        struct manager_handover *h = userdata;

        if (!h->takeover_check || h->restoring)
                return false;
        h->takeover_check = false;
        return view->seqnum == h->takeover_last;
}

static const struct manager_intake_ops handover_intake_ops = {
        .repeated = on_repeated,
        .begin = on_intake_begin,
        .end = on_intake_end,
        .start_begin = on_start_begin,
        .start_end = on_start_end,
};

static void on_close(void *userdata)
{
        struct manager_handover *h = userdata;

        manager_set_intake_guard(h->m, NULL, NULL);
        handover_free(h->journal);
        devset_clear(&h->handled);
        free(h);
}

static const struct manager_observer_ops handover_ops = {
        .queued = on_queued,
        .dropped = on_dropped,
        .starting = on_starting,
        .done = on_done,
        .close = on_close,
};

/**
 * observe_handover_open() - register the journal's observer, still without a journal.
 * @m: manager
 *
 * manager_handover() gives it one later.
 * Return: 0 or negative errno.
 */
int observe_handover_open(struct manager *m)
{
        struct manager_handover *h = calloc(1, sizeof(*h));
        int r;

        if (!h)
                return -ENOMEM;
        h->m = m;
        devset_init(&h->handled, 0);
        r = manager_add_observer(m, &handover_ops, h);
        if (r < 0) {
                free(h);
                return r;
        }
        manager_set_intake_guard(m, &handover_intake_ops, h);
        return 0;
}

/* The marks the previous instance left: what it died on, and in which step (said once here). */
static void take_suspects(struct manager_handover *h)
{
        static const char *const step[_HANDOVER_MARK_MAX] = {
                [HANDOVER_MARK_INTAKE] = "processing",
                [HANDOVER_MARK_START] = "starting the agent of",
        };

        for (int slot = 0; slot < _HANDOVER_MARK_MAX; slot++) {
                struct handover_mark *s = &h->suspect[slot];

                handover_suspect(h->journal, (enum handover_slot)slot, s);
                if (s->seqnum)
                        log_warning("the previous instance died %s SEQNUM=%" PRIu64 " (try %" PRIu32 " of %d)",
                                    step[slot], s->seqnum, s->tries, HP_INTAKE_TRIES_MAX);
        }
}

/* Run again what the previous instance held; the ledger continues after its last SEQNUM. */
static void restore(struct manager *m, struct manager_handover *h)
{
        uint64_t last = handover_ledger_last(h->journal), seqnum = 0, first = 0;
        char buf[HP_UEVENT_MAX_SIZE];
        size_t size, n = 0, again = 0;
        bool started, same_boot;
        int r;

        same_boot = manager_continue_ledger(m, last);
        /* A previous instance killed between journalling its last event and
         * taking it off the socket left it there: the first datagram read
         * may be that one again. */
        h->takeover_last = last;
        h->takeover_check = same_boot;
        h->restoring = true;
        while ((r = handover_restore_next(h->journal, buf, &size, &seqnum, &started)) > 0) {
                if (n++ == 0)
                        first = seqnum;
                if (started) {
                        again++;
                        log_info("SEQNUM=%" PRIu64 ": its agent had started before the takeover: it runs again",
                                 seqnum);
                }
                (void)manager_inject(m, buf, size);
        }
        manager_count_taken_over(m, n, again);
        h->restoring = false;
        journal_wrote(h, 0);
        manager_dispatch(m);
        if (r < 0)
                log_error_errno(r, "cannot read the handover journal after %zu event(s)", n);
        if (n > 0)
                log_notice("took over %zu event(s) the previous instance had not finished (SEQNUM %" PRIu64
                           "..%" PRIu64 "), %zu of them re-run (their agent had started); the ledger continues "
                           "after %" PRIu64,
                           n, first, seqnum, again, manager_ledger(m)->baseline);
        else
                log_info("took over the handover journal: no events held; the ledger continues after %" PRIu64,
                         manager_ledger(m)->baseline);
}

/*
 * Take over the handover file @path (handover-file.h): its journal becomes
 * this instance's, its handled devices too, and its present devices go to
 * resync's targeted pass.  Return: 0 taken over, or negative errno (none,
 * or refused: said here).
 */
static int take_file(struct manager *m, struct manager_handover *h, const char *path)
{
        struct handover_file f;
        char why[256];
        uint64_t last;
        size_t present, handled;
        int r;

        r = handover_file_load(path, &f, why, sizeof(why));
        if (r == -ENOENT) {
                log_info("no handover file %s: nothing handed over", path);
                return r;
        }
        if (r < 0) {
                log_error("refused the handover file %s: %s; nothing is taken over from it (a coldplug "
                          "runs every device)", path, why);
                return r;
        }
        h->journal = f.journal;
        f.journal = NULL;
        present = f.present.n;
        handled = f.handled.n;
        devset_clear(&h->handled);
        h->handled = f.handled;
        devset_init(&f.handled, 0);
        last = handover_ledger_last(h->journal);
        log_notice("took over the handover file %s: the previous instance's ledger ends at %" PRIu64
                   ", %zu devices present, %zu of them handled (their add ran)", path, last, present, handled);
        take_suspects(h);
        restore(m, h);
        r = manager_resync_handover(m, &f.present, manager_ledger(m)->baseline);
        if (r < 0)
                log_warning_errno(r, "handover: no targeted resync; devices added or removed while no "
                                     "instance listened are not recovered");
        handover_file_done(&f);
        return 0;
}

int manager_handover(struct manager *m, int fd)
{
        struct manager_handover *h = manager_observer_data(m, &handover_ops);
        const char *path = manager_cfg(m)->handover_path;
        int r;

        if (!h || h->journal) {
                safe_close(fd);
                return h ? -EBUSY : -ENOMEM;
        }
        if (path && !*path)
                path = NULL;
        if (fd >= 0) {
                /* The service manager kept the journal: newer than any file. */
                if (path && unlink(path) == 0)
                        log_info("the service manager handed back the journal: the handover file %s is "
                                 "removed unread", path);
                r = handover_adopt(fd, &h->journal);
                if (r < 0)
                        log_warning_errno(r, "cannot read the handover journal; starting a new one");
                else if (r == 1)
                        log_warning("the handed-over queue is not a handover journal; starting it anew");
                else {
                        take_suspects(h);
                        restore(m, h);
                }
                if (r >= 0)
                        return 0;
        } else if (path && take_file(m, h, path) == 0)
                return 1;
        r = handover_new(&h->journal);
        if (r < 0)
                return log_error_errno(r, "cannot create the handover journal");
        return 1;
}

int manager_handover_save(struct manager *m)
{
        struct manager_handover *h = manager_observer_data(m, &handover_ops);
        const char *path = manager_cfg(m)->handover_path;
        const struct devset *present = manager_resync_known(m);
        struct devset none;
        uint64_t bytes = 0;
        int r;

        if (!h || !h->journal || !path || !*path)
                return 0;
        devset_init(&none, 0);
        if (!present)
                present = &none;
        r = handover_ledger(h->journal, manager_ledger(m)->last);
        if (r >= 0)
                r = handover_file_save(path, h->journal, present, &h->handled, &bytes);
        if (r < 0)
                return log_error_errno(r, "cannot write the handover file %s; the next instance takes "
                                          "nothing over", path);
        log_info("wrote the handover file %s (%" PRIu64 " bytes): the ledger ends at %" PRIu64
                 ", %zu devices present, %zu handled", path, bytes, manager_ledger(m)->last, present->n,
                 h->handled.n);
        return 0;
}

void manager_note_handled(struct manager *m, const char *devpath, const char *subsystem)
{
        struct manager_handover *h = manager_observer_data(m, &handover_ops);

        if (h && devset_put(&h->handled, devpath, subsystem) == -ENOSPC && !h->handled_full) {
                h->handled_full = true;
                log_warning("more than %d devices handled: further ones are not remembered, a coldplug "
                            "with --skip-handled triggers them again", HP_RESYNC_DEVICES_MAX);
        }
}

void manager_for_each_handled(const struct manager *m, void (*fn)(const char *devpath, void *arg), void *arg)
{
        const struct manager_handover *h = manager_observer_data(m, &handover_ops);
        const struct devset_entry *e;
        size_t it = 0;

        while (h && (e = devset_next(&h->handled, &it)))
                fn(e->devpath, arg);
}

int manager_device_handled(const struct manager *m, const char *devpath)
{
        const struct manager_handover *h = manager_observer_data(m, &handover_ops);

        return h && devset_get(&h->handled, devpath) ? 1 : 0;
}

int manager_handover_fd(const struct manager *m)
{
        const struct manager_handover *h = manager_observer_data(m, &handover_ops);

        return h && h->journal ? handover_fd(h->journal) : -1;
}
