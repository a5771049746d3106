/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugctl's side of the control socket (protocol: src/control/control.h).
 * A connection is a plain fd; requests are one packet, replies are records
 * read one packet at a time (control-proto.h reads their fields).
 *
 * The socket path is $HOTPLUGCTL_SOCKET if set, else HOTPLUGD_RUNDIR "/control".
 */

#include <stddef.h>

#include "shared/bounds.h"
#include "control/control-proto.h"

/* Room for one reply record plus its NUL. */
#define CTL_RECORD_SIZE (HP_CONTROL_RECORD_MAX + 1)

/* The control socket path (borrowed, static or from the environment). */
const char *ctl_socket_path(void);

/**
 * ctl_connect() - connect to the daemon.
 * Return: the fd (owned by the caller, CLOEXEC) or negative errno; -ENOENT and
 * -ECONNREFUSED mean no daemon is listening.
 */
int ctl_connect(void);

/**
 * ctl_send() - send one request packet.
 * @fd: connection (borrowed)
 * @request: the request line (borrowed)
 * Return: 0 or negative errno.
 */
int ctl_send(int fd, const char *request);

/**
 * ctl_recv() - read one record.
 * @fd: connection (borrowed)
 * @buf: CTL_RECORD_SIZE bytes (borrowed), NUL-terminated on success
 * @timeout_ms: -1 waits for ever
 * Return: the record length, -ECONNRESET when the daemon closed the
 * connection, -ETIMEDOUT, -EBADMSG for a record holding a NUL or too long,
 * or another negative errno.
 */
int ctl_recv(int fd, char *buf, int timeout_ms);

/**
 * ctl_report_error() - print an "error" record as "hotplugctl: VERB: MESSAGE".
 * @verb: the verb, for the message
 * @rec: the record
 * Return: the exit status it deserves: CTL_EXIT_NO_DAEMON when the daemon
 * refused us (not root, too many clients), else CTL_EXIT_FAILURE.
 */
int ctl_report_error(const char *verb, const char *rec);

/**
 * ctl_open() - connect, printing why not.
 * @verb: for messages
 * @ret_fd: the connection (owned by the caller), untouched on failure
 * Return: CTL_EXIT_OK, CTL_EXIT_NO_DAEMON or CTL_EXIT_FAILURE.
 */
int ctl_open(const char *verb, int *ret_fd);

/**
 * ctl_request() - send @request and read the first reply into @rec.
 * Return: CTL_EXIT_OK with @rec filled (any word, including "error" and
 * "timeout": the caller decides), or an exit status after printing why.
 * A refusal the daemon sent at connect time is returned as that "error"
 * record even if sending failed.
 */
int ctl_request(const char *verb, int fd, const char *request, char *rec, int timeout_ms);

/* Send @request on a new connection and expect "ok". Return: the exit status. */
int ctl_simple(const char *verb, const char *request);

/* A verb that takes only --socket and --help and sends its own name as the request. */
int ctl_simple_verb(const char *verb, const char *help, int argc, char *argv[]);
