/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl: connecting to the daemon and exchanging packets.  The verbs
 * (ctl-*.c) build on these; nothing here keeps state between calls.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/cli.h"
#include "ctl/client.h"
#include "config.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/macro.h"

static const char *socket_override;

void ctl_set_socket(const char *path)
{
        socket_override = path;
}

const char *ctl_socket_path(void)
{
        const char *p = socket_override ? socket_override : getenv("HOTPLUGCTL_SOCKET");

        return p && *p ? p : HOTPLUGD_RUNDIR "/control";
}

int ctl_connect(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = ctl_socket_path();
        _cleanup_close_ int fd = -1;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return negative_errno();
        return take_fd(&fd);
}

int ctl_send(int fd, const char *request)
{
        size_t len = strlen(request);

        if (send(fd, request, len, MSG_NOSIGNAL) < 0)
                return negative_errno();
        return 0;
}

int ctl_recv(int fd, char *buf, int timeout_ms)
{
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        ssize_t n;
        int r;

        for (;;) {
                r = poll(&pfd, 1, timeout_ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (r == 0)
                        return -ETIMEDOUT;
                n = recv(fd, buf, CTL_RECORD_SIZE, MSG_TRUNC);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == ECONNRESET)
                        /* The reset is reported once, before what is still queued. */
                        n = recv(fd, buf, CTL_RECORD_SIZE, MSG_TRUNC | MSG_DONTWAIT);
                if (n < 0)
                        return errno == ECONNRESET || errno == EPIPE ? -ECONNRESET : negative_errno();
                if (n == 0)
                        return -ECONNRESET;
                if ((size_t)n >= CTL_RECORD_SIZE || memchr(buf, '\0', (size_t)n))
                        return -EBADMSG;
                buf[n] = '\0';
                return (int)n;
        }
}

int ctl_report_error(const char *verb, const char *rec)
{
        char msg[HP_CONTROL_RECORD_MAX], esc[4 * HP_CONTROL_RECORD_MAX];
        uint64_t e = 0;

        if (ctlmsg_get(rec, "message", msg, sizeof(msg)) < 0)
                snprintf(msg, sizeof(msg), "unexpected reply");
        (void)ctlmsg_get_u64(rec, "errno", &e);
        /* The server is whatever --socket names: its text reaches the terminal escaped. */
        ctl_err(verb, "%s", escape_cstr(msg, esc, sizeof(esc)));
        return e == EPERM || e == EBUSY ? CTL_EXIT_NO_DAEMON : CTL_EXIT_FAILURE;
}

int ctl_open(const char *verb, int *ret_fd)
{
        int fd = ctl_connect();

        if (fd == -ENOENT || fd == -ECONNREFUSED) {
                ctl_err(verb, "hotplugd is not running (%s at %s)", fd == -ENOENT ? "no control socket" : "nothing listens",
                        ctl_socket_path());
                fprintf(stderr, "Start it (systemctl start hotplugd, or run hotplugd), or name the socket it listens on\n"
                                "with --socket=PATH or HOTPLUGCTL_SOCKET (hotplugd --control-socket).\n");
                return CTL_EXIT_NO_DAEMON;
        }
        if (fd == -EACCES) {
                ctl_err(verb, "%s: permission denied (hotplugd serves root and its own user)", ctl_socket_path());
                return CTL_EXIT_NO_DAEMON;
        }
        if (fd < 0) {
                ctl_err(verb, "cannot connect to %s: %s", ctl_socket_path(), strerror(-fd));
                return CTL_EXIT_FAILURE;
        }
        *ret_fd = fd;
        return CTL_EXIT_OK;
}

int ctl_request(const char *verb, int fd, const char *request, char *rec, int timeout_ms)
{
        int r, rs;

        rs = ctl_send(fd, request);
        /* Even if sending failed, a refusal may be waiting to be read. */
        r = ctl_recv(fd, rec, rs < 0 ? 0 : timeout_ms);
        if (r >= 0)
                return CTL_EXIT_OK;
        if (rs < 0)
                r = rs;
        if (r == -ECONNRESET || r == -EPIPE) {
                ctl_err(verb, "the daemon closed the connection");
                return CTL_EXIT_NO_DAEMON;
        }
        ctl_err(verb, "%s", r == -EBADMSG ? "malformed reply" : strerror(-r));
        return CTL_EXIT_FAILURE;
}

int ctl_simple(const char *verb, const char *request)
{
        _cleanup_close_ int fd = -1;
        char rec[CTL_RECORD_SIZE];
        int r;

        r = ctl_open(verb, &fd);
        if (r != CTL_EXIT_OK)
                return r;
        r = ctl_request(verb, fd, request, rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "ok"))
                return CTL_EXIT_OK;
        if (ctlmsg_is(rec, "error"))
                return ctl_report_error(verb, rec);
        ctl_err(verb, "unexpected reply");
        return CTL_EXIT_FAILURE;
}

int ctl_simple_verb(const char *verb, const char *help, int argc, char *argv[])
{
        static const struct option opts[] = { CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 } };
        const struct ctl_getopt g = { verb, "h", opts, help, NULL };
        int c;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0)
                ;
        return c == CTL_GETOPT_END ? ctl_simple(verb, verb) : ctl_getopt_exit(c);
}
