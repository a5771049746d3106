/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What udevd says it finished: libudev's monitor on the "udev" netlink
 * group, where udevd broadcasts each event once its rules, node
 * permissions, links and RUN programs are done, with the kernel's SEQNUM.
 *
 * Invariants: only what libudev accepts is returned (a message from a
 * sender that is not uid 0, or not in libudev's format, is dropped by
 * libudev); nothing of udev's copy but its SEQNUM, ACTION and DEVPATH
 * leaves this file, so udev's environment can never reach an agent: the
 * caller pairs the three with an event the kernel itself sent.  The socket
 * is non-blocking and close-on-exec.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct udev_listen;

/* One broadcast of udevd: an event it finished. */
struct udev_confirm {
        uint64_t seqnum;
        uint64_t devpath_hash; /* udev_devpath_hashes() of its DEVPATH */
        uint64_t parent_hash;  /* ... and of the DEVPATH's directory */
        bool renamed;          /* udevd renamed the device (INTERFACE_OLD): DEVPATH is the new name's */
        char action[16];       /* its ACTION, cut at 15 bytes ("" if it had none) */
};

/* The hashes of @devpath and of its directory (DEVPATH up to its last '/'), as udev_confirm holds them. */
void udev_devpath_hashes(const char *devpath, uint64_t *ret_hash, uint64_t *ret_parent);

/**
 * udev_listen_open() - subscribe to udevd's broadcasts.
 * @rcvbuf: receive buffer to ask for, bytes (forced where the caller may)
 * @ret: receives the listener
 * Return: 0, or a negative errno.
 */
int udev_listen_open(int rcvbuf, struct udev_listen **ret);
struct udev_listen *udev_listen_free(struct udev_listen *l);

/* The socket to watch for input (owned by @l). */
int udev_listen_fd(const struct udev_listen *l);

/**
 * udev_listen_receive() - the next broadcast, if one is there.
 * @l: the listener
 * @ret: receives it
 * Return: 1 one was read; 0 none left (messages libudev refused were
 * skipped); -ENOBUFS the socket overflowed (broadcasts were lost; reading
 * goes on); another negative errno on failure.
 */
int udev_listen_receive(struct udev_listen *l, struct udev_confirm *ret);

/*
 * @c confirms the kernel's event @seqnum: same SEQNUM and ACTION, and the same
 * DEVPATH (by hash), or, for a device udevd renamed while it worked on the
 * event (a network interface: udevd broadcasts the event under the new
 * name), the same directory.
 */
bool udev_confirm_matches(const struct udev_confirm *c, uint64_t seqnum, uint64_t devpath_hash, uint64_t parent_hash,
                          const char *action);

/* Where udevd listens for udevadm. */
#define UDEVD_CONTROL_SOCKET "/run/udev/control"

/**
 * udevd_running() - whether udevd runs: UDEVD_CONTROL_SOCKET takes a connection.
 * A socket file left by a killed udevd refuses it (ECONNREFUSED) and counts
 * as not running, as does a missing file; a stopped udevd still takes one.
 */
bool udevd_running(void);
