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
 * manager_queue_room(), ...; a takeover through manager_continue_ledger()
 * and manager_count_taken_over()); the spawners (manager-job.c,
 * spawner-dry.c, job-output.c) are part of the jobs and read it directly.
 * Each private pointer below belongs to the one file named beside it, which
 * declares its struct (in the file, or job.h for the jobs): no other file
 * sees its fields, only the functions that file declares here.  The source
 * (source-netlink.c or source-replay.c), the spawner (manager-job.c or
 * spawner-dry.c) and the observers (observe-*.c) keep their state in their
 * own structs, reached only through their ops.
 */

#include <signal.h>
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
struct scheduler_wait;
struct manager_jobs;
struct manager_observers;
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
        sd_event *event;
        struct ledger ledger;
        struct scheduler *scheduler;    /* the window: HP_QUEUE_WINDOW queued events, and late ones */
        struct backlog *backlog;        /* the rest of the queue, all above the window's SEQNUMs */
        uint64_t scheduled_newest;      /* highest SEQNUM ever pushed into the scheduler */
        struct handler_chain *handlers;
        struct manager_stats stats;
        size_t max_queue;               /* events held (scheduler and backlog) at most: reading pauses there */
        size_t resume_mark;             /* reading resumes at this many held */
        bool stopping;
        sd_event_source *shutdown_timer;
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
/**
 * manager_continue_ledger() - a takeover: the ledger continues after @last.
 * @m: manager
 * @last: the previous instance's last SEQNUM (the handover journal's)
 *
 * Only when @last is of this boot (not above the kernel's baseline) and
 * nothing was processed yet; else the ledger keeps the kernel's baseline.
 * Return: whether the ledger restarted after @last.
 */
bool manager_continue_ledger(struct manager *m, uint64_t last);
/* A takeover restored @n events, @again of them to run again: counted. */
void manager_count_taken_over(struct manager *m, size_t n, size_t again);
/* Events running: started, not done. */
size_t manager_running(const struct manager *m);
/* The control socket the service manager handed over (the caller's now); -1 if none or taken. */
int manager_take_control_fd(struct manager *m);
/* Events queued, not running: the scheduler's and the backlog's. */
size_t manager_queued(const struct manager *m);
/* Events held, queued or running: what max_queue bounds. */
size_t manager_held(const struct manager *m);
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

/*
 * The intake guard: what looks at each valid datagram read (or restored)
 * before the ledger does.  The handover journal's poison guard
 * (observe-handover.c) is the one there is; the core calls it through these
 * hooks and does not know whose they are.
 */
struct manager_intake_ops {
        /* @view (borrowed) was run already (the datagram a takeover finds in the socket again): drop it. */
        bool (*repeated)(void *userdata, const struct uevent *view);
        /* @view (borrowed) is about to go through ledger and handlers: mark it.  Return: the tries of a
         * datagram to set aside (it killed that many instances: it is dropped, loudly), else 0. */
        uint32_t (*begin)(void *userdata, const struct uevent *view);
        /* The datagram begun last was processed (or set aside): clear the mark. */
        void (*end)(void *userdata);
};
/* Install the intake guard (@ops borrowed, all three hooks set; NULL: none). */
void manager_set_intake_guard(struct manager *m, const struct manager_intake_ops *ops, void *userdata);
/**
 * manager_set_resync_uuids() - the SYNTH_UUIDs of this daemon's resync passes.
 * @m: manager
 * @current: the pass running now, or NULL (borrowed until the next call)
 * @previous: the last pass completed, or NULL (borrowed until the next call)
 *
 * An event with SYNTH_ARG_HOTPLUGD=resync and one of these SYNTH_UUIDs gets
 * HOTPLUGD_RESYNC=1 beside the handler chain's additions.  Set by
 * manager-resync.c whenever a pass starts or ends, NULL both when it closes.
 */
void manager_set_resync_uuids(struct manager *m, const char *current, const char *previous);

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
/**
 * manager_event_done() - a held event is over: hand it back and free it.
 * @m: manager
 * @ev: the event the spawner was given (consumed)
 *
 * The scheduler lets go of @ev, the observers hear done(), the backlog
 * moves up into the room it left, the source may feed again, and whatever
 * the event released is dispatched.
 */
void manager_event_done(struct manager *m, struct uevent *ev);
/* Kill (SIGKILL) and reap every running agent, hand back their events. */
void manager_kill_running(struct manager *m);
bool manager_paused(const struct manager *m);
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

/* ---- manager-observe.c: notify all observers ------------------------------ */

/* Register the built-in observers in their fixed order (none may be told anything before).
 * Return: 0 or negative errno (logged). */
int manager_observe_open(struct manager *m);
/* Close every observer, last added first, and free the list. */
void manager_observe_close(struct manager *m);
/* The userdata of the observer registered with @ops; NULL if there is none (or it was closed). */
void *manager_observer_data(const struct manager *m, const struct manager_observer_ops *ops);
/* Some observer wants observe_waited(). */
bool observe_wants_waiting(const struct manager *m);
void observe_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real);
void observe_received(struct manager *m, const struct uevent *view, enum ledger_verdict v,
                      const struct ledger_gap *gap);
void observe_gap(struct manager *m, const struct ledger_gap *gap);
void observe_overflow(struct manager *m);
void observe_input_drained(struct manager *m);
void observe_queued(struct manager *m, const struct uevent *ev);
/* @ev, about to start, waited as @w says (the scheduler's answer; nothing happens if it did not wait). */
void observe_waited(struct manager *m, const struct uevent *ev, const struct scheduler_wait *w);
void observe_set_aside(struct manager *m, const struct uevent *view, uint32_t tries);
void observe_dropped(struct manager *m, const struct uevent *view, bool filtered);
void observe_starting(struct manager *m, const struct uevent *ev);
void observe_started(struct manager *m, const struct manager_agent *a);
void observe_exec_failed(struct manager *m, const struct manager_agent *a, int error);
void observe_finished(struct manager *m, const struct manager_agent *a, const siginfo_t *si, const char *status);
void observe_done(struct manager *m, const struct uevent *ev);
void observe_stopping(struct manager *m);

/* The built-in observers (observe-*.c), each registering itself.  Return: 0 or negative errno (logged). */
int observe_record_open(struct manager *m);
int observe_rebroadcast_open(struct manager *m);
int observe_handover_open(struct manager *m);
int observe_status_open(struct manager *m);
int observe_blame_open(struct manager *m);
int observe_control_open(struct manager *m);
/* Resync (manager-resync.c): hears accepted events and overflows; seeds its device set from sysfs. */
int observe_resync_open(struct manager *m);

/* ---- observe-blame.c ------------------------------------------------------ */

struct control_blame_row;
struct control_blame_totals;

/* hotplugctl blame's sums since the start (all zero without the observer). */
void manager_blame_totals(const struct manager *m, struct control_blame_totals *ret);

/**
 * manager_for_each_blame_row() - every row of the blame tables.
 * @fn: called per row (borrowed for the call), subsystems, programs, then
 *      devices, each longest total first
 * Return: 0, or -ENOMEM (rows of the table being sorted are not visited).
 */
int manager_for_each_blame_row(const struct manager *m, void (*fn)(const struct control_blame_row *r, void *arg),
                               void *arg);

