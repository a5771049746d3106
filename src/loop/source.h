/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where the manager's events come from: one source, chosen at setup.  The
 * netlink source (source-netlink.c) reads the kernel's uevent socket; the
 * replay source (source-replay.c, --replay) reads a recording at its
 * recorded pace.  Both feed each datagram to manager_process_datagram()
 * and report overflows to the ledger and the observers; neither knows what
 * happens to an event after that.  Only src/loop/ includes this.
 *
 * Invariants: a source never holds more than the manager's max_queue
 * events in the pipeline (it stops feeding at the bound and goes on when
 * resume() says there is room); it does a bounded amount of work per turn
 * of the loop; after stop() it feeds nothing more.
 */

#include <stdbool.h>

struct manager;

struct manager_source_ops {
        bool replay;            /* a recording, not the kernel: no kernel SEQNUM to wait for */
        /* Read (a bounded amount of) what is there now.  Return: >= 0, or negative errno (fatal: the loop exits). */
        int (*drain)(void *data);
        /* Control "sync": read what is queued now.  Return: 1 read to the end, 0 not (the
         * per-wakeup bound, a full queue: input_drained() tells when), negative errno. */
        int (*sync)(void *data);
        /* Feeding stopped because the queue is full. */
        bool (*paused)(const void *data);
        /* The queue may have room again: go on feeding if it has. */
        void (*resume)(void *data);
        /* The manager stops: feed nothing more. */
        void (*stop)(void *data);
        /* Everything was fed (a recording read to the end). */
        bool (*finished)(const void *data);
        /* The socket (borrowed) and its receive buffer in bytes; -1 and 0 without one. */
        int (*fd)(const void *data);
        int (*rcvbuf)(const void *data);
        void (*free)(void *data);
};

struct uevent_source;

/**
 * source_netlink_new() - the kernel uevent socket as the manager's source.
 * @m: manager, with its event loop (borrowed; outlives the source)
 * @socket: the open socket (consumed, also on failure)
 * @ret_ops: the source's operations
 * @ret_data: the source's state
 *
 * Watches the socket; each time it is readable it reads until the socket is
 * empty, at most HP_INPUT_PER_WAKEUP datagrams (the socket stays readable).
 * Return: 0 or negative errno; nothing is set on failure.
 */
int source_netlink_new(struct manager *m, struct uevent_source *socket, const struct manager_source_ops **ret_ops,
                       void **ret_data);

/**
 * source_replay_new() - a recording (m->cfg.replay_path) as the manager's source.
 * @m: manager, with its event loop (borrowed; outlives the source)
 * @ret_ops: the source's operations
 * @ret_data: the source's state (set also on failure, to be freed)
 *
 * Return: 0 or negative errno (logged).
 */
int source_replay_new(struct manager *m, const struct manager_source_ops **ret_ops, void **ret_data);
