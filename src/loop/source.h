/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where the manager's events come from: one source, chosen at setup.  The
 * netlink source (source-netlink.c) reads the kernel's uevent socket; the
 * replay source (source-replay.c, --replay) reads a recording at its
 * recorded pace.  Both hand each datagram to manager_feed() and report
 * overflows with manager_feed_overflow(); neither knows what happens to an
 * event after that, nor reads the manager's state: the manager's answer
 * (enum manager_feed) says whether to go on.  A source calls the
 * manager_feed*() functions below and nothing else of the manager's; the
 * manager drives a source only through its ops (drain() and sync() read
 * now and feed as a wakeup does).  Only src/loop/ includes this.
 *
 * Invariants: a source never holds more than the manager's max_queue
 * events in the pipeline (it stops feeding when told MANAGER_FEED_FULL and
 * goes on when resume() is called); it does a bounded amount of work per
 * turn of the loop; after stop() (or MANAGER_FEED_STOP) it feeds nothing
 * more.
 */

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-event.h>

#include "shared/time-util.h"

struct manager;
struct manager_config;
struct uevent;

/* The manager's answer to a source: feed on, or hold on. */
enum manager_feed {
        MANAGER_FEED_GO_ON,
        MANAGER_FEED_FULL,      /* max_queue events or the budget's bytes held: feed again once resume() is called */
        MANAGER_FEED_STOP,      /* the manager stops: feed nothing more */
};

/* May the source feed now?  (Nothing changes.) */
enum manager_feed manager_feed_room(const struct manager *m);
/**
 * manager_feed() - hand the manager one datagram.
 * @m: manager
 * @data: the datagram (borrowed for the call; a queued event keeps its own copy)
 * @size: its size
 * @mono: when it was read, CLOCK_MONOTONIC
 * @real: when it was read, CLOCK_REALTIME (observers' datagram())
 * @sent: when it was sent, CLOCK_REALTIME: @real live, the recorded time in a replay
 *
 * Counts it received, lets the observers hear datagram(), then takes it
 * through parse, ledger and handlers into the queue.
 * Return: whether to feed more, as manager_feed_room().
 */
enum manager_feed manager_feed(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real,
                               usec_t sent);
/* Events were lost before they were read (the kernel's ENOBUFS, or a recorded overflow): the ledger,
 * the observers and (live only) resync hear of it.  The source logs it. */
void manager_feed_overflow(struct manager *m);
/* The socket's trust policy dropped a datagram (counted). */
void manager_feed_refused(struct manager *m);
/* @n keys no kernel sends were left out of a datagram read from a recording before it was fed (counted). */
void manager_feed_dropped_keys(struct manager *m, size_t n);
/* The live source stopped reading at MANAGER_FEED_FULL: the manager is overloaded (logged, counted)
 * until it calls resume(). */
void manager_feed_paused(struct manager *m);
/* A batch is over (@drained: the socket was read to the end, observers hear input_drained()): start what may run. */
void manager_feed_end(struct manager *m, bool drained);
/* Reading failed for good (@error, negative errno, logged by the source): the loop exits with it. */
void manager_feed_fatal(struct manager *m, int error);
/* Everything was fed (a recording read to the end): exit once nothing is held. */
void manager_feed_finished(struct manager *m);

struct manager_source_ops {
        bool replay;            /* a recording, not the kernel: no kernel SEQNUM to wait for */
        /* Read (a bounded amount of) what is there now, then manager_feed_end() unless it failed.
         * Return: 1 read to the end, 0 not, or negative errno (fatal: the loop exits). */
        int (*drain)(void *data);
        /* Control "sync": read what is queued now.  Return: 1 read to the end, 0 not (the
         * per-wakeup bound, a full queue: input_drained() tells when), negative errno. */
        int (*sync)(void *data);
        /* Feeding stopped because the manager said MANAGER_FEED_FULL. */
        bool (*paused)(const void *data);
        /* Called only while paused, once the held count fell to the resume mark: go on feeding. */
        void (*resume)(void *data);
        /* The manager stops: feed nothing more. */
        void (*stop)(void *data);
        /* Everything was fed (a recording read to the end). */
        bool (*finished)(const void *data);
        /* The socket (borrowed) and its receive buffer in bytes; -1 and 0 without one. */
        int (*fd)(const void *data);
        int (*rcvbuf)(const void *data);
        void (*free)(void *data);
        /* A dry run at a speed above 0: how long @ev's agent ran when it was recorded, scaled (replay only). */
        usec_t (*dry_duration)(void *data, const struct uevent *ev);
};

struct uevent_source;

/**
 * source_netlink_new() - the kernel uevent socket as the manager's source.
 * @m: manager (borrowed; outlives the source): where datagrams go
 * @event: the manager's event loop (borrowed; outlives the source)
 * @socket: the open socket (consumed, also on failure)
 * @ret_ops: the source's operations
 * @ret_data: the source's state
 *
 * Watches the socket; each time it is readable it reads until the socket is
 * empty, at most HP_INPUT_PER_WAKEUP datagrams (the socket stays readable).
 * Return: 0 or negative errno; nothing is set on failure.
 */
int source_netlink_new(struct manager *m, sd_event *event, struct uevent_source *socket,
                       const struct manager_source_ops **ret_ops, void **ret_data);

/**
 * source_replay_new() - a recording (@cfg->replay_path) as the manager's source.
 * @m: manager (borrowed; outlives the source): where datagrams go
 * @event: the manager's event loop (borrowed; outlives the source)
 * @cfg: the manager's configuration: replay_path (borrowed; outlives the source), replay_speed, dry_run
 * @ret_ops: the source's operations
 * @ret_data: the source's state (set also on failure, to be freed)
 *
 * Return: 0 or negative errno (logged).
 */
int source_replay_new(struct manager *m, sd_event *event, const struct manager_config *cfg,
                      const struct manager_source_ops **ret_ops, void **ret_data);
