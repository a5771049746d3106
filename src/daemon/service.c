/* SPDX-License-Identifier: MIT */
/*
 * The daemon's edge to a service manager (service.h).  The only file besides
 * main.c and the log backend that talks to systemd.
 *
 * Invariants: READY=1 and the --ready-fd line are sent only after the
 * manager's uevent socket is bound (events arriving from then on wait in
 * it), and after the events a previous instance held were queued again;
 * the handover journal is put into the fd store once, when it is new, and
 * one handed back that could not be taken over leaves the store before the
 * new one (of the same name) goes in.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "daemon/service.h"

#define NAME_QUEUE "queue"
#define NAME_UEVENT "uevent"

static bool is_netlink(int fd)
{
        return sd_is_socket(fd, AF_NETLINK, SOCK_RAW, -1) > 0;
}

/* The control socket a socket unit holds: AF_UNIX, SOCK_SEQPACKET, listening. */
static bool is_control(int fd)
{
        return sd_is_socket_unix(fd, SOCK_SEQPACKET, 1, NULL, 0) > 0;
}

/* Take every descriptor named @name out of the service manager's fd store. */
static void unstore(const char *name)
{
        char msg[64];

        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        (void)sd_notify(false, msg);
}

/* Keep one descriptor the service manager passed, or close it. */
static void take_one(struct service *svc, struct manager_config *cfg, int fd, const char *name, bool *drop_stored)
{
        bool stored = strcmp(name, NAME_UEVENT) == 0;

        if (strcmp(name, NAME_QUEUE) == 0 && svc->queue_fd < 0) {
                svc->queue_fd = fd;
                return;
        }
        if (is_netlink(fd) && !svc->socket_given) {
                /* A socket unit's socket wins over the one we stored. */
                if (cfg->source_fd < 0 || (svc->socket_stored && !stored)) {
                        if (cfg->source_fd >= 0) {
                                close(cfg->source_fd);
                                *drop_stored = true;
                        }
                        cfg->source_fd = fd;
                        svc->socket_kept = true;
                        svc->socket_stored = stored;
                        return;
                }
        }
        if (is_control(fd) && cfg->control_fd < 0) {
                /* Bound by the service manager: clients connecting while
                 * hotplugd (re)starts wait in its backlog. */
                cfg->control_fd = fd;
                return;
        }
        if (stored)
                *drop_stored = true;
        log_debug("closing descriptor %d (\"%s\") passed by the service manager", fd, name);
        close(fd);
}

void service_take_fds(struct service *svc, struct manager_config *cfg)
{
        char **names = NULL;
        bool drop_stored = false;
        int n;

        svc->notify = getenv("NOTIFY_SOCKET") != NULL;
        /* --listen-fd: the caller owns that socket; we neither replace nor store it. */
        svc->socket_given = svc->socket_kept = cfg->source_fd >= 0;
        n = sd_listen_fds_with_names(true, &names);
        if (n < 0)
                log_warning_errno(n, "cannot take the descriptors passed by the service manager");
        for (int i = 0; i < n; i++)
                take_one(svc, cfg, SD_LISTEN_FDS_START + i, names && names[i] ? names[i] : "", &drop_stored);
        for (int i = 0; names && i < n; i++)
                free(names[i]);
        free(names);
        if (drop_stored)
                unstore(NAME_UEVENT);
}

static void store_fd(int fd, const char *name)
{
        char msg[64];
        int r;

        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
        r = sd_pid_notify_with_fds(0, false, msg, &fd, 1);
        if (r <= 0)
                log_warning_errno(r ? r : -ENOTCONN, "cannot put \"%s\" into the service manager's fd store",
                                  name);
}

static void on_status(struct manager *m, const char *status, bool stopping, void *userdata)
{
        char msg[320];

        snprintf(msg, sizeof(msg), "%sSTATUS=%s", stopping ? "STOPPING=1\n" : "", status);
        (void)sd_notify(false, msg);
}

static void signal_ready(struct service *svc)
{
        static const char line = '\n';

        (void)sd_notify(false, "READY=1\nSTATUS=Processing uevents");
        if (svc->ready_fd < 0)
                return;
        if (write(svc->ready_fd, &line, 1) != 1)
                log_warning_errno(errno, "cannot write the readiness line to descriptor %d", svc->ready_fd);
        svc->ready_fd = safe_close(svc->ready_fd);
}

/*
 * Take over the journal handed back, or start one, and keep it in the store.
 * A handed-back one is there already.  A new one goes in once; if it
 * replaces one that could not be read, that one leaves first: it would
 * fail the next instance too, and without the new one stored a restart
 * loses every event held (and the poison guard with it).  Both have the
 * same name, and FDSTOREREMOVE=1 removes every descriptor of a name, so
 * the removal must come before the store.
 */
static void keep_journal(struct service *svc, struct manager *m)
{
        bool handed_back = svc->queue_fd >= 0;
        int r;

        r = manager_handover(m, take_fd(&svc->queue_fd));
        if (r <= 0 || !svc->notify)
                return;
        if (handed_back)
                unstore(NAME_QUEUE);
        store_fd(manager_handover_fd(m), NAME_QUEUE);
}

void service_started(struct service *svc, struct manager *m, bool handover_file)
{
        /* Without a service manager the journal is kept only for a handover file. */
        if (svc->notify || handover_file)
                keep_journal(svc, m);
        if (svc->notify) {
                if (!svc->socket_kept && manager_source_fd(m) >= 0)
                        store_fd(manager_source_fd(m), NAME_UEVENT);
                manager_set_status(m, on_status, svc);
        }
        svc->queue_fd = safe_close(svc->queue_fd);
        signal_ready(svc);
}
