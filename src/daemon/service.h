/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The daemon's edge to a service manager: systemd (socket activation, the
 * file descriptor store, sd_notify) and s6-style readiness (--ready-fd).
 * Nothing here is needed: without NOTIFY_SOCKET and LISTEN_FDS every call
 * is a no-op apart from --ready-fd.
 *
 * Names in the fd store: "queue" is the handover journal (a memfd), and
 * "uevent" the netlink socket hotplugd opened itself (only when it was not
 * socket-activated).  A socket unit's fd keeps the unit's name.
 */

#include <stdbool.h>

#include "loop/manager.h"

struct service {
        bool notify;          /* NOTIFY_SOCKET: a service manager listens */
        int queue_fd;         /* "queue" handed back from the fd store, -1 */
        bool socket_given;    /* --listen-fd: the caller's socket, never stored */
        bool socket_kept;     /* passed in: no need to put it into the fd store */
        bool socket_stored;   /* it came back from our own fd store ("uevent") */
        int ready_fd;         /* --ready-fd, -1 */
};

#define SERVICE_INIT { .queue_fd = -1, .ready_fd = -1 }

/**
 * service_take_fds() - take what the service manager passed.
 * @svc: state (borrowed)
 * @cfg: cfg->source_fd is set to the netlink socket passed, unless the
 *       command line already chose one; cfg->control_fd to the listening
 *       control socket (AF_UNIX, SOCK_SEQPACKET) passed, if any
 *
 * Unknown descriptors are closed.  Call before manager_new().
 */
void service_take_fds(struct service *svc, struct manager_config *cfg);

/**
 * service_started() - the manager exists and its socket is live.
 * @svc: state
 * @m: the manager (borrowed for its lifetime: the status callback is set)
 *
 * Under a service manager, or with @handover_file (handover-file set): take
 * over the handover journal, from the fd store or the file (which may run
 * held events again).  Under a service manager, put the journal and a
 * self-opened socket into the fd store (a new journal in place of one
 * handed back that could not be read).  Then READY=1, and the readiness
 * line on --ready-fd.
 */
void service_started(struct service *svc, struct manager *m, bool handover_file);
