/* SPDX-License-Identifier: MIT */
/*
 * The netlink source: the kernel's uevent socket feeding the pipeline.
 *
 * Invariants:
 *  - each time the socket is readable, at most HP_INPUT_PER_WAKEUP datagrams
 *    (of any kind) are read before the loop runs everything else, so no
 *    sender keeps the loop here; the socket stays readable, so reading goes
 *    on at the next turn;
 *  - when the queue is full (max_queue events held, in the scheduler and
 *    its backlog, or the bytes held at the max-queue-bytes budget),
 *    reading is switched off until the manager calls resume() (at three
 *    quarters of the bounds), and the kernel's socket buffer keeps the rest
 *    (an overflow there, ENOBUFS at the next read, is counted as a gap and
 *    recovered by resync);
 *  - loss-proof intake: with a handover journal, a datagram is consumed
 *    from the socket only after it went through manager_feed(),
 *    where the journal holds it (or it was dropped on purpose); without
 *    one it is read off at once; observers hear datagram() (the recorder)
 *    before that;
 *  - ENOBUFS is an overflow (manager_feed_overflow()), never fatal;
 *    datagrams the trust policy drops are counted and logged rate-limited;
 *  - it reads none of the manager's state: manager_feed() and
 *    manager_feed_room() say whether to go on.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include <systemd/sd-event.h>

#include "shared/bounds.h"
#include "shared/log.h"
#include "loop/manager.h"
#include "loop/source.h"
#include "uevent/netlink.h"

struct source_netlink {
        struct manager *m;
        struct uevent_source *socket;
        sd_event_source *io;
        bool paused;                /* reading off: the manager said MANAGER_FEED_FULL */
        bool stopped;               /* stop() was called */
        struct ratelimit drop_log;
};

static void log_drop(struct source_netlink *s)
{
        uint64_t suppressed;

        manager_feed_refused(s->m);
        if (!ratelimit_pass(&s->drop_log, HP_REJECT_LOG_INTERVAL_USEC, &suppressed))
                return;
        log_warning("dropped datagram: %s (sender port %" PRIu32 ", uid %d); %" PRIu64 " more suppressed",
                    uevent_source_drop_to_string(s->socket->last_drop), s->socket->last_pid,
                    (int)s->socket->last_uid, suppressed);
}

/* The kernel dropped events (ENOBUFS): the manager hears of it; never fatal. */
static void note_overflow(struct source_netlink *s)
{
        manager_feed_overflow(s->m);
        log_warning("netlink receive buffer overflowed: the kernel dropped events");
}

/*
 * One datagram read: through the pipeline, then off the socket.  *ret: the
 * manager's answer.  Return: 0 or negative errno (fatal).
 */
static int take(struct source_netlink *s, const char *data, size_t size, enum manager_feed *ret)
{
        usec_t mono = now_usec(CLOCK_MONOTONIC), real = now_usec(CLOCK_REALTIME);
        int r;

        *ret = manager_feed(s->m, data, size, mono, real, real);
        /* Journalled (or dropped on purpose): only now may the socket forget it.
         * An overflow can be reported on this read too: the datagram is then
         * still queued, so note the overflow and take it off again. */
        while ((r = uevent_source_consume(s->socket)) == -ENOBUFS)
                note_overflow(s);
        return r;
}

/* The manager said MANAGER_FEED_FULL: reading off until resume(). */
static void pause_reading(struct source_netlink *s)
{
        if (!s->paused)
                manager_feed_paused(s->m);
        s->paused = true;
        sd_event_source_set_enabled(s->io, SD_EVENT_OFF);
}

/*
 * Read what is readable, at most HP_INPUT_PER_WAKEUP datagrams.
 * Return: 1 the socket was read to the end, 0 reading stopped before (the
 * bound, a full queue, stopping), negative errno (fatal).
 */
static int read_some(struct source_netlink *s)
{
        enum manager_feed room = manager_feed_room(s->m);
        const char *dg;
        size_t size;
        int r;

        for (unsigned n = 0; n < HP_INPUT_PER_WAKEUP && room != MANAGER_FEED_STOP; n++) {
                if (room == MANAGER_FEED_FULL) {
                        pause_reading(s);
                        break;
                }
                /* Peek and consume only when the handover journal keeps what
                 * was read: without one, a datagram in memory is as lost as
                 * the rest of the queue when the daemon dies. */
                s->socket->take_at_once = manager_handover_fd(s->m) < 0;
                r = uevent_source_receive(s->socket, &dg, &size);
                if (r == 0)
                        return 1;
                if (r == -ENOBUFS) {
                        note_overflow(s);
                        continue;
                }
                if (r == -EPERM || r == -EMSGSIZE) {
                        log_drop(s);
                        continue;
                }
                if (r >= 0)
                        r = take(s, dg, size, &room);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Read, then let the manager start what may run.  Return: as read_some(); fatal errors end the loop. */
static int nl_drain(void *data)
{
        struct source_netlink *s = data;
        int r = read_some(s);

        if (r < 0) {
                log_error_errno(r, "reading uevents failed");
                manager_feed_fatal(s->m, r);
                return r;
        }
        manager_feed_end(s->m, r > 0);
        return r;
}

static int on_readable(sd_event_source *io, int fd, uint32_t revents, void *userdata)
{
        (void)nl_drain(userdata);
        return 0;
}

static int nl_sync(void *data)
{
        struct source_netlink *s = data;
        int r;

        if (s->paused || s->stopped)
                return 0;
        /* Not read to the end yet (the bound): input_drained() says when it is. */
        r = nl_drain(s);
        return r < 0 ? r : r > 0 && !s->paused;
}

static bool nl_paused(const void *data)
{
        const struct source_netlink *s = data;

        return s->paused;
}

static void nl_resume(void *data)
{
        struct source_netlink *s = data;

        s->paused = false;
        sd_event_source_set_enabled(s->io, SD_EVENT_ON);
}

static void nl_stop(void *data)
{
        struct source_netlink *s = data;

        s->stopped = true;
        sd_event_source_set_enabled(s->io, SD_EVENT_OFF);
}

static int nl_fd(const void *data)
{
        const struct source_netlink *s = data;

        return s->socket->fd;
}

static int nl_rcvbuf(const void *data)
{
        const struct source_netlink *s = data;

        return s->socket->rcvbuf;
}

static void nl_free(void *data)
{
        struct source_netlink *s = data;

        sd_event_source_disable_unref(s->io);
        uevent_source_free(s->socket);
        free(s);
}

static const struct manager_source_ops netlink_ops = {
        .drain = nl_drain,
        .sync = nl_sync,
        .paused = nl_paused,
        .resume = nl_resume,
        .stop = nl_stop,
        .fd = nl_fd,
        .rcvbuf = nl_rcvbuf,
        .free = nl_free,
};

int source_netlink_new(struct manager *m, sd_event *event, struct uevent_source *socket,
                       const struct manager_source_ops **ret_ops, void **ret_data)
{
        struct source_netlink *s = calloc(1, sizeof(*s));
        int r;

        if (!s) {
                uevent_source_free(socket);
                return -ENOMEM;
        }
        s->m = m;
        s->socket = socket;
        r = sd_event_add_io(event, &s->io, socket->fd, EPOLLIN, on_readable, s);
        if (r < 0) {
                nl_free(s);
                return r;
        }
        *ret_ops = &netlink_ops;
        *ret_data = s;
        return 0;
}
