/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Shared inside the control socket module only (control.c: sockets, clients
 * and output; control-request.c: what each request does).  Not for the
 * manager: it uses control.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "control/control-proto.h"
#include "control/control.h"
#include "control/monitor-filter.h"
#include "control/uuid-set.h"
#include "shared/list.h"
#define MAX_WORDS (HP_CONTROL_REQUEST_MAX / 2 + 1)

enum client_state {
        CLIENT_IDLE,
        CLIENT_SETTLE,
        CLIENT_UUIDS,     /* wait-uuids in progress */
        CLIENT_MONITOR,
        CLIENT_CLOSING,   /* flushing a final error, then dropped */
};

/* Queued reply records, each stored as a 2-byte length then the bytes. */
struct outq {
        char *buf;
        size_t head, tail, cap;
};

struct client {
        struct control *ctl;
        struct list_node link;    /* on control.clients, or control.dead once dropped */
        int fd;
        sd_event_source *io;
        sd_event_source *timer;
        enum client_state state;
        bool read_only;           /* a member of control-group, neither root nor the daemon's user */
        bool monitor_processed;
        bool monitor_properties;  /* "env" records after received, queued and started */
        struct monitor_filter filter; /* which events the monitor is sent */
        uint64_t settle_target;
        bool settle_synced;       /* the uevent socket was read to the end since the request */
        char *settle_devpath;     /* settle of one device (owned), NULL: of every event */
        bool settle_present;      /* ... and not before the daemon believes it present */
        struct uuid_set uuids;
        size_t progress_step, progress_next;
        usec_t progress_last;     /* when the last "progress" record (or the wait) began */
        sd_event_source *progress_due; /* tells an advance held back by the interval, once it is over */
        struct outq out;
};

struct control {
        sd_event *event;
        const struct control_ops *ops;
        void *userdata;
        int fd;
        char *path;               /* set if we created (and so unlink) the socket */
        sd_event_source *listen_io;
        sd_event_source *reaper;
        struct list_node clients; /* live clients, newest first */
        size_t n_clients;
        struct list_node dead;    /* dropped, freed by the reaper */
        int spare_fd;             /* /dev/null, given up to refuse a client when no descriptor is left */
        bool out_of_fds;          /* a client was refused for want of a descriptor (warned once until one is served) */
};

/* control-client.c: lifetime and output; calls nothing in control.c or control-request.c */
struct client *client_free(struct client *cl);
void client_drop(struct client *cl);
/* The reaper (a defer source of control.c): frees the dropped clients. */
int client_reap(sd_event_source *s, void *userdata);
/* Write queued output.  Return: 0, or negative errno (drop the client). */
int client_flush(struct client *cl);
/* Tell @cl why (an error reply), then close it after a grace period. */
void client_close_with(struct client *cl, int error, const char *message);
int client_send(struct client *cl, const struct ctlmsg *m);
void client_reply(struct client *cl, const struct ctlmsg *m);
void client_error(struct client *cl, int error, const char *message);
void client_ok(struct client *cl);
void client_wait_over(struct client *cl);

/* control-request.c */
void control_handle_request(struct client *cl, char *req);
void settle_check_all(struct control *c);
void uuids_finish(struct client *cl);
void uuids_progress(struct client *cl);
void add_gap_fields(struct ctlmsg *m, const struct ledger_gap *g);

/* control-info.c: "info devpath=DEVPATH", "info export [after=DEVPATH]" (@w: the request's @n words) */
void req_info(struct client *cl, char **w, size_t n);
