/* SPDX-License-Identifier: MIT */
/*
 * The manager's side of the handover journal (handover.h): what it writes
 * down as events come and go, and how a new instance takes over what the
 * previous one held.
 *
 * Invariants: an event is written down when it enters the scheduler, before
 * any agent for it can start, and marked done when its job is over, so the
 * journal read at any instant lists every event accepted and not finished.
 * Events re-run from a previous journal are not written again (their
 * records are still live); one that is dropped this time (a handler now
 * filters it) is marked done like a finished one.  Journal failures are
 * reported once and never stop the pipeline: only the protection is lost.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>

#include "recovery/handover.h"
#include "shared/log.h"
#include "loop/manager-internal.h"
#include "pipeline/scheduler.h"

static void journal_failed(struct manager *m, int r)
{
        if (m->handover_failed)
                return;
        m->handover_failed = true;
        log_warning_errno(r, "cannot write to the handover journal; held events may be lost on a restart "
                             "(reported once)");
}

void handover_note_queued(struct manager *m, const struct uevent *ev)
{
        int r;

        if (!m->handover || m->handover_restoring)
                return;
        r = handover_event(m->handover, ev->seqnum, ev->buf, ev->size);
        if (r < 0)
                journal_failed(m, r);
}

/*
 * Events held, as far as the journal is concerned.  Stopping takes the
 * queued events out of the scheduler, but they are not done: they are what
 * the next instance must run, so the journal is never cut back then.
 */
static size_t held(const struct manager *m)
{
        return m->stopping ? SIZE_MAX : scheduler_held(m->scheduler);
}

void handover_note_dropped(struct manager *m, const struct uevent *view)
{
        int r;

        if (!m->handover)
                return;
        if (m->handover_restoring)
                r = handover_done(m->handover, view->seqnum, view->size, held(m));
        else
                r = handover_ledger(m->handover, m->ledger.last);
        if (r < 0)
                journal_failed(m, r);
}

void handover_note_started(struct manager *m, const struct uevent *ev)
{
        int r;

        if (!m->handover)
                return;
        r = handover_started(m->handover, ev->seqnum);
        if (r < 0)
                journal_failed(m, r);
}

void handover_note_done(struct manager *m, const struct uevent *ev)
{
        int r;

        if (!m->handover)
                return;
        r = handover_done(m->handover, ev->seqnum, ev->size, held(m));
        if (r < 0)
                journal_failed(m, r);
}

/* Run again what the previous instance held; the ledger continues after its last SEQNUM. */
static void restore(struct manager *m)
{
        uint64_t last = handover_ledger_last(m->handover), seqnum = 0, first = 0;
        char buf[HP_UEVENT_MAX_SIZE];
        size_t size, n = 0, again = 0;
        bool started, same_boot;
        int r;

        /* A SEQNUM above the kernel's own is from another boot: keep the kernel's baseline. */
        same_boot = last > 0 && (m->ledger.baseline == 0 || last <= m->ledger.baseline) && m->ledger.processed == 0;
        if (same_boot)
                ledger_init(&m->ledger, last);
        /* A previous instance killed between journalling its last event and
         * taking it off the socket left it there: the first datagram read
         * may be that one again. */
        m->takeover_last = last;
        m->takeover_check = same_boot;
        m->handover_restoring = true;
        while ((r = handover_restore_next(m->handover, buf, &size, &seqnum, &started)) > 0) {
                if (n++ == 0)
                        first = seqnum;
                if (started) {
                        again++;
                        log_info("SEQNUM=%" PRIu64 ": its agent had started before the takeover: it runs again",
                                 seqnum);
                }
                (void)manager_inject(m, buf, size);
        }
        m->stats.taken_over += n;
        m->stats.reruns += again;
        m->handover_restoring = false;
        manager_dispatch(m);
        if (r < 0)
                log_error_errno(r, "cannot read the handover journal after %zu event(s)", n);
        if (n > 0)
                log_notice("took over %zu event(s) the previous instance had not finished (SEQNUM %" PRIu64
                           "..%" PRIu64 "), %zu of them re-run (their agent had started); the ledger continues "
                           "after %" PRIu64,
                           n, first, seqnum, again, m->ledger.baseline);
        else
                log_info("took over the handover journal: no events held; the ledger continues after %" PRIu64,
                         m->ledger.baseline);
}

int manager_handover(struct manager *m, int fd)
{
        int r;

        if (m->handover) {
                safe_close(fd);
                return -EBUSY;
        }
        if (fd >= 0) {
                r = handover_adopt(fd, &m->handover);
                if (r < 0)
                        log_warning_errno(r, "cannot read the handover journal; starting a new one");
                else if (r == 1)
                        log_warning("the handed-over queue is not a handover journal; starting it anew");
                else
                        restore(m);
                if (r >= 0)
                        return 0;
        }
        r = handover_new(&m->handover);
        if (r < 0)
                return log_error_errno(r, "cannot create the handover journal");
        return 0;
}

int manager_handover_fd(const struct manager *m)
{
        return m->handover ? handover_fd(m->handover) : -1;
}

int manager_source_fd(const struct manager *m)
{
        return m->source ? m->source->fd : -1;
}
