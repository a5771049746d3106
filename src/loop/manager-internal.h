/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The manager's private state, shared by the files of src/loop/: manager.c
 * (input, pipeline, lifecycle), manager-job.c (agent jobs),
 * manager-observe.c (what observers are told), manager-replay.c,
 * manager-handover.c and manager-resync.c.  Nothing outside src/loop/
 * includes this.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

#include "pipeline/ledger.h"
#include "shared/list.h"
#include "shared/log.h"
#include "loop/manager.h"
#include "uevent/uevent.h"

struct control;
struct record_writer;
struct rebroadcast;
struct replay_state;
struct manager_resync;

struct job {
        struct manager *m;
        struct list_node link;   /* on the manager's list of running jobs */
        struct uevent *ev;
        char **scripts;          /* multiplexer: the files to run, in order */
        size_t n_scripts;
        size_t next_script;
        const char *program;     /* currently running */
        pid_t pid;
        sd_event_source *child;
        sd_event_source *out;
        sd_event_source *timer;
        usec_t started;          /* CLOCK_MONOTONIC, this program */
        usec_t job_started;      /* CLOCK_MONOTONIC, first program */
        bool term_sent, kill_sent;
        bool failed;
        bool journal_started;    /* the handover journal knows an agent started */
        size_t line_len;
        char line[HP_OUTPUT_LINE_MAX + 1];
        usec_t out_window;       /* CLOCK_MONOTONIC, start of the output rate-limit window */
        unsigned out_lines;      /* lines logged in this window */
        uint64_t out_suppressed; /* lines not logged since the last report */
};

struct manager {
        struct manager_config cfg;
        sd_event *event;
        struct uevent_source *source;
        sd_event_source *source_io;
        bool source_paused;
        struct ledger ledger;
        struct scheduler *scheduler;
        struct handler_chain *handlers;
        struct manager_stats stats;
        size_t max_queue;
        size_t resume_mark;
        bool stopping;
        bool agent_missing_reported;
        sd_event_source *shutdown_timer;
        struct list_node jobs;      /* running jobs (struct job.link), newest first */
        manager_reload_fn reload;
        void *reload_userdata;
        char *owned_agent, *owned_hotplug_d, *owned_handler_dir, *owned_sysfs;
        bool paused;                /* pause: events queue, no agent starts */
        bool dispatching;           /* inside manager_dispatch(): nested calls return at once */
        struct control *control;    /* NULL: no control socket */
        struct record_writer *recorder;     /* --record */
        sd_event_source *recorder_sync;     /* fdatasync at most once a second while dirty */
        struct rebroadcast *rebroadcast;    /* --rebroadcast */
        usec_t rebroadcast_last_log;
        uint64_t rebroadcast_failed_logged;
        struct replay_state *replay;        /* --replay */
        usec_t reject_last_log[_UEVENT_REJECT_MAX];
        uint64_t reject_suppressed[_UEVENT_REJECT_MAX];
        usec_t drop_last_log;
        uint64_t drop_suppressed;
        struct handover *handover;  /* NULL: no handover journal (manager-handover.c) */
        bool handover_restoring;    /* re-running the events a previous instance held */
        bool handover_failed;       /* a journal write failed (reported once) */
        /* After a takeover: the previous instance's last SEQNUM, which may
         * still be in the socket (it is consumed only after journalling). */
        uint64_t takeover_last;
        bool takeover_check;        /* the first datagram after a takeover is not read yet */
        manager_status_fn status_fn; /* service status (manager-observe.c) */
        void *status_userdata;
        sd_event_source *status_timer;
        char status_sent[256];
        struct manager_resync *resync; /* manager-resync.c; NULL before it is set up */
};


/* Observers (manager-observe.c).  Each accepts what the pipeline has at that point. */
int manager_observe_open(struct manager *m);
void manager_observe_close(struct manager *m);
void observe_received(struct manager *m, const struct uevent *view, enum ledger_verdict v,
                      const struct ledger_gap *gap);
void observe_overflow(struct manager *m);
void observe_input_drained(struct manager *m);
void observe_queued(struct manager *m, const struct uevent *ev);
/* The event left the pipeline without an agent run (duplicate, filtered, aborted). */
void observe_dropped(struct manager *m, const struct uevent *view, bool filtered);
void observe_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real);
void observe_gap(struct manager *m, const struct ledger_gap *gap);
/* @ev was queued behind @blocker (may be NULL: nothing to wait for). */
void observe_waiting(struct manager *m, const struct uevent *ev, const struct uevent *blocker);
void observe_started(struct manager *m, const struct job *j);
void observe_exec_failed(struct manager *m, const struct job *j, int error);
void observe_finished(struct manager *m, const struct job *j, const siginfo_t *si, const char *status);
/* The event's job is over; @ev is about to be freed. */
void observe_done(struct manager *m, const struct uevent *ev);

/* The manager is stopping (SIGTERM, SIGINT): tell the status observer. */
void observe_stopping(struct manager *m);

/* The handover journal's hooks (manager-handover.c); no-ops without a journal. */
void handover_note_queued(struct manager *m, const struct uevent *ev);
void handover_note_dropped(struct manager *m, const struct uevent *view);
void handover_note_done(struct manager *m, const struct uevent *ev);
void handover_note_started(struct manager *m, const struct uevent *ev);

/* manager-job.c: kill (SIGKILL) and reap every running agent, hand back their events. */
void manager_kill_running(struct manager *m);

/* For manager-observe.c: read the socket until empty (control "sync"). */
void manager_drain_input(struct manager *m);
void manager_dispatch(struct manager *m);

/* One datagram through parse, ledger, handlers into the scheduler (live or replayed). */
void manager_process_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real);
/* A held event is over (no agent, or its agent finished): hand it back and free it. */
void manager_event_done(struct manager *m, struct uevent *ev);
/* Exit the loop once stopping (or the replay ended) and nothing runs. */
void manager_maybe_exit(struct manager *m);

/* manager-replay.c */
int manager_replay_open(struct manager *m);
void manager_replay_close(struct manager *m);
/* Dry-run replay: "run" @ev for its recorded duration.  Return: true if a timer took it. */
bool manager_replay_dry_job(struct manager *m, struct uevent *ev);
bool manager_replay_finished(const struct manager *m);
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
