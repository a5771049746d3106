/* SPDX-License-Identifier: MIT */
/*
 * The control socket (protocol: control.h): the listening socket, accepting
 * clients, reading their requests and the notifications.  A client's output
 * and lifetime are control-client.c's; what each request does is
 * control-request.c's.  This file calls both; neither calls back into it.
 *
 * Invariants:
 *  - every live client is on the list c->clients and counted in n_clients; at most
 *    HP_CONTROL_CLIENTS_MAX, all with uid 0 or the daemon's euid, or members
 *    of the control group (SO_PEERCRED, SO_PEERGROUPS at accept), which are
 *    read_only: served status, monitor, blame and info alone;
 *  - a client is never freed from inside a callback (control-client.c), so
 *    notify functions may run from anywhere (ops callbacks, other clients'
 *    requests);
 *  - a client waits for at most one thing at a time (settle, wait-uuids or
 *    monitor); other requests meanwhile get an EBUSY error.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "control/control-internal.h"
#include "shared/log.h"
#include "shared/macro.h"

/* Requests read from one client per wakeup, so one client cannot starve others. */
#define REQUESTS_PER_WAKEUP 16
#define ACCEPTS_PER_WAKEUP 16

/* ---- clients: requests in ---------------------------------------------- */

/* Read one request.  Return: 1 handled, 0 nothing to read, negative: drop the client. */
static int client_read_one(struct client *cl)
{
        char buf[HP_CONTROL_REQUEST_MAX + 1];
        struct iovec iov = { .iov_base = buf, .iov_len = HP_CONTROL_REQUEST_MAX };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        n = recvmsg(cl->fd, &mh, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 0 : negative_errno();
        if (n == 0)
                return -ECONNRESET; /* end of stream */
        if ((mh.msg_flags & MSG_TRUNC) || n > HP_CONTROL_REQUEST_MAX) {
                client_error(cl, -EMSGSIZE, "request longer than the limit");
                return 1;
        }
        if (memchr(buf, '\0', (size_t)n)) {
                client_error(cl, -EINVAL, "malformed request");
                return 1;
        }
        buf[n] = '\0';
        control_handle_request(cl, buf);
        return 1;
}

static int on_client(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct client *cl = userdata;

        if (revents & EPOLLOUT) {
                if (client_flush(cl) < 0) {
                        client_drop(cl);
                        return 0;
                }
                if (cl->state == CLIENT_CLOSING && cl->out.head == cl->out.tail) {
                        client_drop(cl);
                        return 0;
                }
        }
        for (int i = 0; cl->fd >= 0 && cl->state != CLIENT_CLOSING && i < REQUESTS_PER_WAKEUP; i++) {
                int r = client_read_one(cl);
                if (r < 0) {
                        client_drop(cl);
                        return 0;
                }
                if (r == 0)
                        break;
        }
        if (cl->fd >= 0 && (revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLIN))
                client_drop(cl);
        return 0;
}

/* ---- accepting --------------------------------------------------------------- */

static void refuse(int fd, int error, const char *message)
{
        struct ctlmsg m;
        char junk[64];

        ctlmsg_init_error(&m, error, message);
        (void)send(fd, m.buf, m.len, MSG_DONTWAIT | MSG_NOSIGNAL);
        /* Closing with unread input would reset the peer before it reads
         * why; but a peer that keeps sending must not hold the daemon here. */
        for (int i = 0; i < HP_CONTROL_REFUSE_DRAIN_MAX; i++)
                if (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) <= 0)
                        break;
        safe_close(fd);
}

static int client_new(struct control *c, int fd, bool read_only)
{
        struct client *cl;
        int r;

        cl = calloc(1, sizeof(*cl));
        if (!cl) {
                safe_close(fd);
                return -ENOMEM;
        }
        cl->ctl = c;
        cl->fd = fd;
        cl->read_only = read_only;
        uuid_set_init(&cl->uuids);
        r = sd_event_add_io(c->event, &cl->io, fd, EPOLLIN, on_client, cl);
        if (r < 0) {
                client_free(cl);
                return r;
        }
        list_add_head(&c->clients, &cl->link);
        c->n_clients++;
        assert(c->n_clients <= HP_CONTROL_CLIENTS_MAX);
        return 0;
}

/*
 * accept4() found no descriptor left (EMFILE, ENFILE): the peer would wait
 * in the backlog, and the listening socket stay readable, a busy loop.
 * Give up the spare descriptor for a moment, take the connection, tell the
 * peer why and close it, then take the spare again (the descriptor just
 * closed is free for it).  Return: true if a peer was refused.
 */
static bool refuse_without_fds(struct control *c, int lfd, int error)
{
        int fd;

        if (c->spare_fd < 0)
                return false;
        c->spare_fd = safe_close(c->spare_fd);
        fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0)
                refuse(fd, error, "hotplugd has no file descriptor left for a control client; try again later");
        c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        if (!c->out_of_fds)
                log_warning_errno(error, "control client refused: no file descriptor left (events go on; "
                                  "reported once until a client is served)");
        c->out_of_fds = true;
        return true;
}

/* Is the peer on @fd (@cred) a member of the control group, as its primary or a supplementary group? */
static bool peer_in_group(const struct control *c, int fd, const struct ucred *cred)
{
        int gid = c->ops->reader_gid ? c->ops->reader_gid(c->userdata) : -1;
        _cleanup_free_ gid_t *more = NULL;
        gid_t some[64], *v = some;
        socklen_t len = sizeof(some);

        if (gid < 0)
                return false;
        if (cred->gid == (gid_t)gid)
                return true;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, v, &len) < 0) {
                if (errno != ERANGE || len == 0 || len > HP_CONTROL_PEER_GROUPS_MAX * sizeof(gid_t))
                        return false;
                v = more = malloc(len);
                if (!v || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, v, &len) < 0)
                        return false;
        }
        for (size_t i = 0; i < len / sizeof(gid_t); i++)
                if (v[i] == (gid_t)gid)
                        return true;
        return false;
}

static int on_listen(sd_event_source *s, int lfd, uint32_t revents, void *userdata)
{
        struct control *c = userdata;

        for (int i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
                struct ucred cred;
                socklen_t len = sizeof(cred);
                bool read_only;
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

                if (fd < 0 && (errno == EMFILE || errno == ENFILE) && refuse_without_fds(c, lfd, errno))
                        continue;
                if (fd < 0)
                        return 0; /* EAGAIN, or a peer that left already */
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || len != sizeof(cred)) {
                        safe_close(fd);
                        continue;
                }
                /* Root, and the daemon's own user when it runs unprivileged
                 * (a root daemon serves uid 0 alone); members of the control
                 * group read. */
                read_only = cred.uid != 0 && cred.uid != geteuid();
                if (read_only && !peer_in_group(c, fd, &cred)) {
                        refuse(fd, EPERM, geteuid() == 0 ? "the hotplugd control socket is for root only"
                                                         : "the hotplugd control socket is for root and the "
                                                           "daemon's user only");
                        continue;
                }
                if (c->n_clients >= HP_CONTROL_CLIENTS_MAX) {
                        refuse(fd, EBUSY, "too many control clients connected");
                        continue;
                }
                if (client_new(c, fd, read_only) == 0 && c->out_of_fds) {
                        log_notice("control clients are served again");
                        c->out_of_fds = false;
                }
        }
        return 0;
}

/* Create the socket's directory, or check an existing one: a real
 * directory (not a symbolic link) owned by root (our uid) and writable by
 * nobody else, since whoever can write there can replace the socket. */
static int make_parent_dir(const char *path)
{
        _cleanup_free_ char *dir = strdup(path);
        struct stat st;
        mode_t mask;
        char *slash;
        int r;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        /* 0755 whatever the daemon's umask (077): non-root clients must
         * reach the socket to be told that it is for root only. */
        mask = umask(022);
        r = mkdir(dir, 0755);
        (void)umask(mask);
        if (r == 0)
                return 0;
        if (errno != EEXIST)
                return log_error_errno(negative_errno(), "control socket directory %s: cannot create", dir);
        if (lstat(dir, &st) < 0)
                return log_error_errno(negative_errno(), "control socket directory %s: cannot stat", dir);
        if (S_ISLNK(st.st_mode))
                return log_error_errno(-EPERM, "control socket directory %s: is a symbolic link; refused", dir);
        if (!S_ISDIR(st.st_mode))
                return log_error_errno(-ENOTDIR, "control socket directory %s: not a directory; refused", dir);
        if (st.st_uid != geteuid())
                return log_error_errno(-EPERM, "control socket directory %s: owned by uid %u, not %u; refused", dir,
                                       (unsigned)st.st_uid, (unsigned)geteuid());
        if (st.st_mode & (S_IWGRP | S_IWOTH))
                return log_error_errno(-EPERM, "control socket directory %s: writable by group or others "
                                       "(mode %04o); refused", dir, (unsigned)(st.st_mode & 07777));
        return 0;
}

/* Bind a new listening socket at @path, replacing a stale one. Return: fd or negative errno. */
static int listen_at(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1, probe = -1;
        mode_t mask;
        int r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        r = make_parent_dir(path);
        if (r < 0)
                return r;
        probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (probe < 0)
                return negative_errno();
        if (connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0)
                return -EADDRINUSE; /* another daemon answers there */
        (void)unlink(path);

        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return negative_errno();
        /* Anyone may connect and be told; SO_PEERCRED decides who is served.
         * The mode (0666) comes from the umask at bind time, so the socket
         * never exists with another mode (no bind-then-chmod window). */
        mask = umask(0111);
        r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
        (void)umask(mask);
        if (r < 0)
                return negative_errno();
        if (listen(fd, 64) < 0) {
                r = negative_errno();
                (void)unlink(path);
                return r;
        }
        return take_fd(&fd);
}

int control_new(sd_event *event, const char *path, int listen_fd, const struct control_ops *ops, void *userdata,
                struct control **ret)
{
        struct control *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c) {
                safe_close(listen_fd);
                return -ENOMEM;
        }
        list_init(&c->clients);
        list_init(&c->dead);
        c->event = sd_event_ref(event);
        c->ops = ops;
        c->userdata = userdata;
        c->fd = listen_fd;
        /* Opened first: a process short of descriptors fails here, not at its first refusal. */
        c->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (c->spare_fd < 0) {
                r = negative_errno();
                goto fail;
        }
        if (c->fd < 0) {
                c->fd = listen_at(path);
                if (c->fd < 0) {
                        r = c->fd;
                        goto fail;
                }
                c->path = strdup(path);
                if (!c->path) {
                        r = -ENOMEM;
                        goto fail;
                }
        } else if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) < 0) {
                r = negative_errno();
                goto fail;
        }
        r = sd_event_add_io(event, &c->listen_io, c->fd, EPOLLIN, on_listen, c);
        if (r < 0)
                goto fail;
        r = sd_event_add_defer(event, &c->reaper, client_reap, c);
        if (r < 0)
                goto fail;
        (void)sd_event_source_set_enabled(c->reaper, SD_EVENT_OFF);
        *ret = c;
        return 0;
fail:
        if (!c->path && c->fd >= 0 && path && listen_fd < 0)
                (void)unlink(path);
        control_free(c);
        return r;
}

struct control *control_free(struct control *c)
{
        if (!c)
                return NULL;
        struct client *cl;

        while ((cl = list_first(&c->clients, struct client, link)))
                client_drop(cl);
        client_reap(NULL, c);
        sd_event_source_disable_unref(c->reaper);
        sd_event_source_disable_unref(c->listen_io);
        safe_close(c->fd);
        safe_close(c->spare_fd);
        if (c->path)
                (void)unlink(c->path);
        free(c->path);
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

int control_fd(const struct control *c)
{
        return c->fd;
}

size_t control_clients(const struct control *c)
{
        return c->n_clients;
}

/* ---- notifications ------------------------------------------------------------- */

static const char *const kind_word[] = {
        [CONTROL_EVENT_RECEIVED] = "received", [CONTROL_EVENT_GAP] = "gap",
        [CONTROL_EVENT_OVERFLOW] = "overflow", [CONTROL_EVENT_QUEUED] = "queued",
        [CONTROL_EVENT_FILTERED] = "filtered", [CONTROL_EVENT_STARTED] = "started",
        [CONTROL_EVENT_FINISHED] = "finished", [CONTROL_EVENT_WAITED] = "waited",
};

static void event_record(const struct control_event *e, struct ctlmsg *m)
{
        usec_t t = e->time ? e->time : now_usec(CLOCK_REALTIME);

        ctlmsg_init(m, kind_word[e->kind]);
        if (e->kind == CONTROL_EVENT_GAP) {
                add_gap_fields(m, &e->gap);
                ctlmsg_add_time(m, "time", t);
                return;
        }
        if (e->kind != CONTROL_EVENT_OVERFLOW)
                ctlmsg_add_u64(m, "seqnum", e->seqnum);
        ctlmsg_add_time(m, "time", t);
        if (e->kind == CONTROL_EVENT_RECEIVED) {
                ctlmsg_add_str(m, "action", e->action);
                ctlmsg_add_str(m, "devpath", e->devpath);
                ctlmsg_add_str(m, "subsystem", e->subsystem);
                ctlmsg_add_str(m, "verdict", ledger_verdict_to_string(e->verdict));
                ctlmsg_add_str(m, "uuid", e->uuid);
                return;
        }
        if (e->kind == CONTROL_EVENT_WAITED) {
                ctlmsg_add_str(m, "devpath", e->devpath);
                ctlmsg_add_u64(m, "blocker", e->blocker);
                ctlmsg_add_str(m, "reason", e->reason);
                ctlmsg_add_u64(m, "waited_us", e->waited_usec);
                return;
        }
        if (e->kind == CONTROL_EVENT_STARTED)
                ctlmsg_add_i64(m, "pid", e->pid);
        ctlmsg_add_str(m, "devpath", e->devpath);
        ctlmsg_add_str(m, "program", e->program);
        ctlmsg_add_str(m, "name", e->name);
        if (e->kind == CONTROL_EVENT_FINISHED) {
                ctlmsg_add_str(m, "status", e->status);
                ctlmsg_add_u64(m, "duration_us", e->duration_usec);
        }
}

/* Send @n @entries as the "env" records of set @set; @last: no set follows. Return: 0 or client_send()'s error. */
static int send_env_set(struct client *cl, uint64_t seqnum, const char *set, const char *const *entries, size_t n,
                        bool last)
{
        struct ctlmsg_cursor cur = { .entries = entries, .n = n };
        struct ctlmsg m;
        size_t more;
        bool done;
        int r;

        do {
                ctlmsg_init(&m, "env");
                ctlmsg_add_u64(&m, "seqnum", seqnum);
                ctlmsg_add_str(&m, "set", set);
                ctlmsg_add_u64(&m, "more", 1);
                more = m.len - 1; /* the digit, set once it is known whether a record follows */
                done = ctlmsg_add_entries(&m, &cur);
                if (done && last)
                        m.buf[more] = '0';
                r = client_send(cl, &m);
        } while (!done && r >= 0);
        return r;
}

/* The "env" records that follow @e's record for a client that asked for properties. */
static int send_env(struct client *cl, const struct control_event *e)
{
        int r;

        switch (e->kind) {
        case CONTROL_EVENT_RECEIVED:
                return send_env_set(cl, e->seqnum, "kernel", e->env, e->n_env, true);
        case CONTROL_EVENT_QUEUED:
                return send_env_set(cl, e->seqnum, "handlers", e->env, e->n_env, true);
        case CONTROL_EVENT_STARTED:
                r = send_env_set(cl, e->seqnum, "argv", e->argv, e->n_argv, false);
                return r < 0 ? r : send_env_set(cl, e->seqnum, "agent", e->env, e->n_env, true);
        default:
                return 0;
        }
}

void control_notify_event(struct control *c, const struct control_event *e)
{
        bool processed_only;
        struct client *cl, *next;
        struct ctlmsg m;
        bool built = false;

        if (!c || (unsigned)e->kind >= ELEMENTSOF(kind_word))
                return;
        processed_only = e->kind >= CONTROL_EVENT_QUEUED;
        list_for_each_safe(cl, next, &c->clients, link) {
                int r;

                if (cl->state != CLIENT_MONITOR || (processed_only && !cl->monitor_processed))
                        continue;
                if (e->ev && !monitor_filter_match(&cl->filter, e->ev))
                        continue;
                if (!built) {
                        event_record(e, &m);
                        built = true;
                }
                r = client_send(cl, &m);
                if (r >= 0 && cl->monitor_properties)
                        r = send_env(cl, e);
                if (r == -ENOBUFS || r == -ENOMEM)
                        client_close_with(cl, -ENOBUFS, "monitor fell behind, events were lost; closing");
                else if (r < 0)
                        client_drop(cl);
        }
}

bool control_wants_env(const struct control *c, enum control_event_kind kind)
{
        const struct client *cl;

        if (!c)
                return false;
        list_for_each(cl, &c->clients, link)
                if (cl->state == CLIENT_MONITOR && cl->monitor_properties &&
                    (kind < CONTROL_EVENT_QUEUED || cl->monitor_processed))
                        return true;
        return false;
}

void control_notify_processed(struct control *c, uint64_t seqnum)
{
        if (c)
                settle_check_all(c);
}

void control_notify_input_drained(struct control *c)
{
        if (!c)
                return;
        struct client *cl;

        list_for_each(cl, &c->clients, link)
                if (cl->state == CLIENT_SETTLE)
                        cl->settle_synced = true;
        settle_check_all(c);
}

void control_notify_uuid(struct control *c, const char *uuid)
{
        struct client *cl, *next;
        uint8_t u[16];

        if (!c || !uuid || uuid_from_string(uuid, u) < 0)
                return;
        list_for_each_safe(cl, next, &c->clients, link) {
                if (!uuid_set_mark(&cl->uuids, u) || cl->state != CLIENT_UUIDS)
                        continue;
                if (uuid_set_pending(&cl->uuids) == 0)
                        uuids_finish(cl);
                else
                        uuids_progress(cl);
        }
}
