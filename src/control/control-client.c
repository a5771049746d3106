/* SPDX-License-Identifier: MIT */
/*
 * A control client's lifetime and output (control-internal.h): closing,
 * freeing from the reaper, the output queue and the replies.  Knows nothing
 * of what a request means (control-request.c) or of the listening socket
 * (control.c), so both can use it without calling each other back.
 *
 * Invariants:
 *  - a client is never freed from inside a callback: client_drop() closes it
 *    and moves it to control.dead, and the reaper (a defer source) frees it;
 *  - queued output is at most HP_CONTROL_OUTPUT_MAX bytes; past that a
 *    monitor is dropped with a message and any other client is closed.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/control-internal.h"
#include "shared/bounds.h"
#include "shared/log.h"
#include "shared/macro.h"

/* A client that was told why it is dropped gets this long to read it. */
#define CLOSING_GRACE_USEC (5 * USEC_PER_SEC)
/* Each queued record carries its length in 2 bytes. */
_Static_assert(HP_CONTROL_RECORD_MAX <= 0xffff, "a control record's length fits 2 bytes");

/* The output queue's bounds: records in buf[head..tail), tail <= cap <= HP_CONTROL_OUTPUT_MAX. */
static _unused_ bool outq_sane(const struct outq *q)
{
        return q->head <= q->tail && q->tail <= q->cap && q->cap <= HP_CONTROL_OUTPUT_MAX;
}

struct client *client_free(struct client *cl)
{
        if (!cl)
                return NULL;
        sd_event_source_disable_unref(cl->io);
        sd_event_source_disable_unref(cl->timer);
        sd_event_source_disable_unref(cl->progress_due);
        safe_close(cl->fd);
        uuid_set_clear(&cl->uuids);
        free(cl->settle_devpath);
        free(cl->out.buf);
        free(cl);
        return NULL;
}

/* Close @cl now; its memory is freed from the reaper. */
void client_drop(struct client *cl)
{
        struct control *c = cl->ctl;

        if (cl->fd < 0)
                return;
        assert(c->n_clients > 0);
        list_unlink(&cl->link);
        c->n_clients--;
        cl->io = sd_event_source_disable_unref(cl->io);
        cl->timer = sd_event_source_disable_unref(cl->timer);
        cl->progress_due = sd_event_source_disable_unref(cl->progress_due);
        cl->fd = safe_close(cl->fd);
        list_add_head(&c->dead, &cl->link);
        (void)sd_event_source_set_enabled(c->reaper, SD_EVENT_ONESHOT);
}

int client_reap(sd_event_source *s, void *userdata)
{
        struct control *c = userdata;

        struct client *cl, *next;

        list_for_each_safe(cl, next, &c->dead, link) {
                assert(cl->fd < 0); /* closed by client_drop() */
                list_unlink(&cl->link);
                client_free(cl);
        }
        return 0;
}

static void client_update_events(struct client *cl)
{
        uint32_t events = cl->state == CLIENT_CLOSING ? 0 : EPOLLIN;

        if (cl->out.head != cl->out.tail)
                events |= EPOLLOUT;
        (void)sd_event_source_set_io_events(cl->io, events);
}

static int outq_push(struct outq *q, const char *rec, size_t len)
{
        size_t need = len + 2;

        assert(len <= HP_CONTROL_RECORD_MAX && outq_sane(q));
        if (q->head > 0 && q->tail + need > q->cap) {
                memmove(q->buf, q->buf + q->head, q->tail - q->head);
                q->tail -= q->head;
                q->head = 0;
        }
        if (q->tail + need > HP_CONTROL_OUTPUT_MAX)
                return -ENOBUFS;
        if (q->tail + need > q->cap) {
                size_t cap = MAX(q->cap * 2, (size_t)4096);
                char *buf;

                cap = MIN(MAX(cap, q->tail + need), (size_t)HP_CONTROL_OUTPUT_MAX);
                buf = realloc(q->buf, cap);
                if (!buf)
                        return -ENOMEM;
                q->buf = buf;
                q->cap = cap;
        }
        q->buf[q->tail] = (char)(len >> 8);
        q->buf[q->tail + 1] = (char)(len & 0xff);
        memcpy(q->buf + q->tail + 2, rec, len);
        q->tail += need;
        assert(outq_sane(q));
        return 0;
}

/* Send what the socket takes. Return: 0, or negative errno if the peer is gone. */
int client_flush(struct client *cl)
{
        struct outq *q = &cl->out;

        while (q->head != q->tail) {
                size_t len = ((size_t)(unsigned char)q->buf[q->head] << 8) | (unsigned char)q->buf[q->head + 1];
                ssize_t n;

                assert(q->head + 2 + len <= q->tail && outq_sane(q));
                n = send(cl->fd, q->buf + q->head + 2, len, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        return negative_errno();
                }
                q->head += len + 2;
        }
        if (q->head == q->tail)
                q->head = q->tail = 0;
        client_update_events(cl);
        return 0;
}

/* Queue one record and send.  Return: 0, -ENOBUFS (queue full), or the peer's error; never drops. */
int client_send(struct client *cl, const struct ctlmsg *m)
{
        int r;

        if (cl->fd < 0)
                return -EPIPE;
        r = outq_push(&cl->out, m->buf, m->len);
        if (r < 0)
                return r;
        return client_flush(cl);
}

static int on_closing_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        client_drop(userdata);
        return 0;
}

/* Tell @cl why and close it once that is read (or after a grace period). */
void client_close_with(struct client *cl, int error, const char *message)
{
        struct ctlmsg m;

        ctlmsg_init_error(&m, error, message);
        cl->out.head = cl->out.tail = 0; /* what it did not read is lost anyway */
        cl->state = CLIENT_CLOSING;
        uuid_set_clear(&cl->uuids);
        cl->timer = sd_event_source_disable_unref(cl->timer);
        if (client_send(cl, &m) < 0 || cl->out.head == cl->out.tail) {
                client_drop(cl);
                return;
        }
        if (sd_event_add_time_relative(cl->ctl->event, &cl->timer, CLOCK_MONOTONIC, CLOSING_GRACE_USEC, 0,
                                       on_closing_timeout, cl) < 0)
                client_drop(cl);
}

/* Send a reply; a client that cannot take it is closed. */
void client_reply(struct client *cl, const struct ctlmsg *m)
{
        int r = client_send(cl, m);

        if (r == -ENOBUFS || r == -ENOMEM)
                client_close_with(cl, r, "too many unread replies, closing");
        else if (r < 0)
                client_drop(cl);
}

void client_error(struct client *cl, int error, const char *message)
{
        struct ctlmsg m;

        ctlmsg_init_error(&m, error, message);
        client_reply(cl, &m);
}

void client_ok(struct client *cl)
{
        struct ctlmsg m;

        ctlmsg_init(&m, "ok");
        client_reply(cl, &m);
}

/* Back to idle after a wait ended. */
void client_wait_over(struct client *cl)
{
        cl->state = CLIENT_IDLE;
        cl->timer = sd_event_source_disable_unref(cl->timer);
        cl->progress_due = sd_event_source_disable_unref(cl->progress_due);
        free(cl->settle_devpath);
        cl->settle_devpath = NULL;
        cl->settle_present = false;
}
