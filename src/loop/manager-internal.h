/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The manager's private state, shared by the files of src/loop/.  Nothing
 * outside src/loop/ includes this (but the loop's unit tests).
 *
 * struct manager is split by owner.  The core (configuration, loop,
 * ledger, scheduler, handler chain, counters, queue bounds, lifecycle)
 * belongs to manager.c (the queue's functions to manager-queue.c, the jobs'
 * to manager-job.c).  The observers (observe-*.c, manager-resync.c) go
 * through the calls below (manager_cfg(), manager_stopping(),
 * manager_queue_room(), ...) and those of observe-builtin.h (a takeover's
 * manager_continue_ledger(), ...); the spawners (manager-job.c,
 * spawner-dry.c, job-output.c) are part of the jobs and read it directly.
 * Each private pointer below belongs to the one file named beside it, which
 * declares its struct (in the file, or job.h for the jobs): no other file
 * sees its fields, only the functions that file declares (here, in
 * manager-observe.h for the observer list, job-spawner.h).  The source
 * (source-netlink.c or source-replay.c), the spawner (manager-job.c or
 * spawner-dry.c) and the observers (observe-*.c) keep their state in their
 * own structs, reached only through their ops.
 */

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "pipeline/concurrency.h"
#include "pipeline/ledger.h"
#include "shared/log.h"
#include "loop/manager.h"
#include "loop/observer.h"
#include "uevent/uevent.h"

struct backlog;
struct spawn_env;
struct manager_jobs;
struct manager_observers;
struct udev_wait;
struct kmod_load;
struct manager_source_ops;

/* manager.c: the source (source.h) and the rate limits of what parsing rejects. */
struct manager_input {
        const struct manager_source_ops *ops; /* netlink or replay, chosen once at setup */
        void *data;                     /* the source's own state */
        struct ratelimit reject_log[_UEVENT_REJECT_MAX];
};

struct manager {
        /* The core (manager.c). */
        struct manager_config cfg;      /* our own copy (manager_config_copy()), freed by manager_config_free() */
        usec_t born_mono, born_real;    /* when manager_new() ran: CLOCK_MONOTONIC, CLOCK_REALTIME */
        const char *config_path;        /* the configuration file (borrowed, manager_set_config_path()); NULL */
        sd_event *event;
        struct ledger ledger;
        struct scheduler *scheduler;    /* the window: HP_QUEUE_WINDOW queued events, and late ones */
        struct backlog *backlog;        /* the rest of the queue, all above the window's SEQNUMs */
        uint64_t scheduled_newest;      /* highest SEQNUM ever pushed into the scheduler */
        struct handler_chain *handlers;
        struct manager_stats stats;
        size_t max_queue;               /* events held (scheduler and backlog) at most: reading pauses there */
        size_t resume_mark;             /* reading resumes at this many held */
        uint64_t budget;                /* max_queue_bytes: bytes held (manager_bytes_held()) at most */
        uint64_t budget_resume;         /* reading resumes at this many bytes held */
        uint64_t journal_bytes;         /* the handover journal's bytes, as its observer last told */
        bool overloaded;                /* reading stopped at a bound (manager_feed_paused()) until resumed */
        usec_t overloaded_since;        /* CLOCK_MONOTONIC, when it stopped */
        usec_t overload_logged;         /* CLOCK_MONOTONIC of the last "overloaded" warning, 0: none */
        uint64_t overloads_unlogged;    /* overloads since then logged at debug level only */
        bool overload_quiet;            /* this overload's warning was held back (HP_OVERLOAD_LOG_USEC) */
        bool stopping;
        sd_event_source *shutdown_timer;
        sd_event_source *exit_check;    /* post source: off until stopping or the input's end (manager_maybe_exit()) */
        manager_reload_fn reload;
        void *reload_userdata;
        const char *resync_uuid[2];     /* SYNTH_UUIDs marked HOTPLUGD_RESYNC=1 (borrowed, manager_set_resync_uuids()) */
        struct {
                const struct manager_intake_ops *ops; /* NULL: no guard (manager_set_intake_guard()) */
                void *userdata;
        } intake;

        struct manager_input in;            /* manager.c */
        struct manager_jobs *jobs;          /* manager-job.c: the running jobs and how they start */
        struct manager_observers *obs;      /* manager-observe.c: who hears what happened */
        struct udev_wait *udev;             /* udev-wait.c: after-udev (an observer; NULL once closed) */
        struct kmod_load *kmod;             /* kmod-load.c: load-modules (an observer; NULL once closed) */
        bool feeding;                       /* manager.c: inside manager_feed(), a datagram of the source */
        /* manager.c: the highest SEQNUM read before the source last said it was read to the end
         * (or taken in from elsewhere than the source): nothing sent before it is still to come. */
        uint64_t drained_through;
};

/* ---- manager.c: input and pipeline; manager-queue.c: the queue ----------- */

/**
 * manager_inject_synthetic() - queue an event the kernel did not send.
 * @m: manager
 * @data: a datagram in the kernel's format (borrowed for the call)
 * @size: its length
 *
 * The event is validated like a received one and goes through the handler
 * chain and the scheduler, but not through the ledger: its SEQNUM must be
 * one no held event has (manager-resync.c takes them from the ledger's gaps).
 * Return: 0 (queued, or dropped and logged by the pipeline), -EBADMSG if invalid.
 */
int manager_inject_synthetic(struct manager *m, const char *data, size_t size);
/**
 * manager_drain_input() - let the source feed what it has now, then dispatch.
 * @m: manager
 *
 * The netlink source reads its socket until empty, the queue is full, or
 * HP_INPUT_PER_WAKEUP datagrams were read, as when it wakes up (source.h:
 * it feeds through manager_feed(), then manager_feed_end() dispatches); a
 * replay feeds on its own timer and only dispatch happens here.  After a
 * fatal read error (the loop is told to exit) nothing is dispatched.
 * Return: 1 the socket was read to the end (or there is none), 0 it may
 * hold more, negative errno after a fatal error.
 */
int manager_drain_input(struct manager *m);
/* Control "sync": read what the socket holds now.  Return: as the source's sync(). */
int manager_sync_input(struct manager *m);
/* The source stopped feeding (the queue was full). */
bool manager_input_paused(const struct manager *m);
/* The queue may have fallen to the resume mark: if so, let a paused source feed again. */
void manager_input_maybe_resume(struct manager *m);
/* The socket's effective receive buffer in bytes, 0 without a socket. */
int manager_input_rcvbuf(const struct manager *m);
/* The event being processed now came from the source (the kernel's socket or a
 * recording), not from a resync or a takeover (udev-wait.c). */
bool manager_feeding(const struct manager *m);
/* The source is a recording (--replay). */
bool manager_replaying(const struct manager *m);
/* Exit the loop once stopping (or the replay ended) and nothing runs. */
void manager_maybe_exit(struct manager *m);
/* The running configuration (borrowed: a reload replaces it). */
const struct manager_config *manager_cfg(const struct manager *m);
/* The manager's event loop (borrowed), for an observer's own timers and sources. */
sd_event *manager_event(const struct manager *m);
/* manager_stop() was called (or a fatal error): nothing new starts. */
bool manager_stopping(const struct manager *m);
/* Events the queue takes before reading pauses (max_queue less those held); 0 when full. */
size_t manager_queue_room(const struct manager *m);
/* Events running: started, not done. */
size_t manager_running(const struct manager *m);
/* The control socket the service manager handed over (the caller's now); -1 if none or taken. */
int manager_take_control_fd(struct manager *m);
/* Events queued, not running: the scheduler's and the backlog's. */
size_t manager_queued(const struct manager *m);
/* Events held, queued or running: what max_queue bounds. */
size_t manager_held(const struct manager *m);
/* Bytes held for events (the budget's count): the queue's, the jobs', the handover journal's. */
uint64_t manager_bytes_held(const struct manager *m);
/* The handover journal is @bytes long now (its observer tells, after each write). */
void manager_note_journal_bytes(struct manager *m, uint64_t bytes);
/* Reading stopped at a bound (max-queue or max-queue-bytes) and has not gone on yet. */
bool manager_overloaded(const struct manager *m);
/* Lowest SEQNUM held, in the scheduler or the backlog; 0 if none (settle). */
uint64_t manager_lowest_held(const struct manager *m);
/* Lowest SEQNUM held on @devpath (DEVPATH or DEVPATH_OLD); 0 if none (wait).
 * The backlog is not indexed by path: while it holds events, its lowest counts
 * as held on every path, so a waiter waits for it rather than answer too early. */
uint64_t manager_lowest_held_on(const struct manager *m, const char *devpath);
/**
 * manager_queue_push() - queue @ev (a dup, the caller's) (manager-queue.c).
 * @m: manager
 * @ev: the event
 *
 * Into the scheduler while its window has room and nothing waits in the
 * backlog, or when it is late (below a SEQNUM the scheduler had, or below
 * the whole backlog); else into the backlog.
 * Return: 1 the scheduler holds @ev now, 0 the backlog took a copy (the
 * caller still frees @ev), or negative errno (nothing queued).
 */
int manager_queue_push(struct manager *m, struct uevent *ev);
/* @ev cannot be queued or stay queued (out of memory, @r): counted, logged, announced dropped. */
void manager_queue_failed(struct manager *m, const struct uevent *ev, int r);
/* Free every queued event, the scheduler's (lowest SEQNUM first), then the backlog's.  Return: how many. */
size_t manager_queue_drop_all(struct manager *m);
/**
 * manager_queue_refill() - move events from the backlog into the scheduler.
 * @m: manager
 *
 * Lowest SEQNUM first, while the scheduler holds less than its window.  Called when
 * an event left the scheduler (manager_event_done()).  An event that
 * cannot be moved (out of memory) is dropped and announced so.
 */
void manager_queue_refill(struct manager *m);

/**
 * manager_start_begin() - the poison guard at an event's start (the intake guard's start_begin()).
 * @m: manager
 * @ev: a held event about to be started (borrowed)
 *
 * Marks @ev from its dispatch until its program was spawned (manager-job.c),
 * so that an event that kills the daemon on that way does not restart it
 * into the same crash forever.  Without a guard nothing happens.
 * Return: 0 to go on (end with manager_start_end()), or the tries of an
 * event that killed that many instances there: not marked, to set aside.
 */
uint32_t manager_start_begin(struct manager *m, const struct uevent *ev);
/* The event begun last was started, or its start failed: clear its mark. */
void manager_start_end(struct manager *m);

/**
 * manager_probe_hold() - whether @ev's job waits for its physical device's bind before it starts.
 * @m: manager
 * @ev: a held event about to start (borrowed)
 *
 * A class device's event the kernel sent while its physical device's probe
 * ran (handler_chain_probe(): DEVMODEL_PROBE_OPEN) and that got no
 * PHYSDEVDRIVER at intake waits until the stream says how the probe ended
 * (the device's bind, unbind or remove is read), or nothing sent before it
 * can still come: the source was read to the end after it, or reading is
 * paused (the queue is full), or the daemon replays or stops.
 */
bool manager_probe_hold(struct manager *m, const struct uevent *ev);
/**
 * manager_physdev_driver() - the PHYSDEVDRIVER entry @ev's programs get, if the stream changed it.
 * @m: manager
 * @ev: an event about to start (borrowed)
 * @entry: receives "PHYSDEVDRIVER=NAME" (@size bytes)
 *
 * The driver of the bind that ended the probe @ev was sent in
 * (handler_chain_probe(): DEVMODEL_PROBE_BOUND), unless the kernel sent
 * PHYSDEVDRIVER itself.  Return: true if @entry is to replace what the
 * handlers added at intake (spawn_env_set()).
 */
bool manager_physdev_driver(struct manager *m, const struct uevent *ev, char *entry, size_t size);

/* ---- manager-job.c: jobs -------------------------------------------------- */

/* The empty job list and the concurrency controller, once m->cfg is set (manager_free() may follow).
 * Return: 0 or -ENOMEM. */
int manager_jobs_init(struct manager *m);
/* Choose the spawner once: the real one, or the dry one for --dry-run.  Return: 0 or -ENOMEM. */
int manager_jobs_open(struct manager *m);
/* Kill what runs and free the spawner; m->jobs itself is freed last, by manager_free(). */
void manager_jobs_close(struct manager *m);
/* Dry run: hold each event for @fn's duration (job-spawner.h); without a dry spawner nothing happens. */
void manager_jobs_set_dry_duration(struct manager *m, usec_t (*fn)(void *userdata, const struct uevent *ev),
                                   void *userdata);
/* Start every event the scheduler lets run now; iterative, never nested. */
void manager_dispatch(struct manager *m);
/* Kill (SIGKILL) and reap every running agent, hand back their events. */
void manager_kill_running(struct manager *m);
bool manager_paused(const struct manager *m);
/* Jobs whose program waits to be spawned again (its spawn found no process or descriptor). */
size_t manager_spawn_waiting(const struct manager *m);
/* Bytes of the running jobs' records and of the output pipes' (running and kept), for the budget. */
size_t manager_jobs_bytes(const struct manager *m);
/* The concurrency limit's state (borrowed), for status. */
const struct concurrency *manager_concurrency(const struct manager *m);
/**
 * manager_for_each_agent() - call @fn for each running agent process.
 * @m: manager
 * @fn: called with each agent (borrowed for the call); must not start or end jobs
 * @arg: passed to @fn
 */
void manager_for_each_agent(struct manager *m, void (*fn)(const struct manager_agent *a, void *arg), void *arg);
/* The configuration changed: report a missing agent again, apply the ordering and the limit. */
void manager_jobs_reconfigured(struct manager *m);
/* hotplugctl concurrency: agents at once from now on (0: auto), until a reload.
 * Return: 0, or -EINVAL (past max-children; the reason in @err). */
int manager_set_concurrency(struct manager *m, unsigned n, char *err, size_t err_size);
/* Stopping: jobs still waiting for udevd (or for a probe's end, manager_probe_hold()) go without
 * a run, their events left for the next instance as queued ones are.  Return: how many. */
size_t manager_jobs_drop_waiting(struct manager *m);

