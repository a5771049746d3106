/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The jobs' state (struct manager_jobs, m->jobs), a running event's job
 * (manager-job.c) and its output pipe (job-output.c).  Only src/loop/
 * includes this: manager-job.c and job-output.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "pipeline/concurrency.h"
#include "pipeline/devmodel.h"
#include "shared/bounds.h"
#include "shared/list.h"
#include "shared/time-util.h"

struct job_spawner_ops;
struct log_fields;
struct spawn_env;
struct usb_plan;
struct usb_step;
struct usermap;
struct manager;
struct uevent;

/* manager-job.c: the running jobs and how they start. */
struct manager_jobs {
        struct list_node running;       /* struct job.link, newest first */
        const struct job_spawner_ops *spawner; /* real or dry (job-spawner.h), chosen once at setup */
        void *spawner_data;
        bool paused;                    /* pause: events queue, no agent starts */
        bool dispatching;               /* inside manager_dispatch(): nested calls return at once */
        bool agent_missing_reported;
        /* The agent's path passed the trust rule since the last start or reload
         * (agent_verify()); until it does, it is checked before every spawn. */
        bool agent_trusted;
        bool agent_refusal_reported;    /* its refusal was logged (once until it passes) */
        struct concurrency conc;        /* how many may run at once (the scheduler's max_running) */
        sd_event_source *look;          /* while events wait for a slot: look which agents sleep */
        struct usermap *usermap;        /* hotplug-dir's maps (job-usb.c); NULL: none */
        struct list_node idle_outputs;  /* struct job_output.link: pipes kept for the next runs */
        size_t n_idle_outputs;          /* at most HP_OUTPUT_PIPES_KEPT */
        size_t bytes;                   /* the jobs' and output pipes' records (manager_jobs_bytes()) */
        size_t n_probe_waiting;         /* jobs with probe_waiting set */
        sd_event_source *probe_look;    /* while jobs wait for a probe's end: read the source again */
        /* Spawns that failed for want of resources (spawn_error_resources()):
         * jobs waiting to try again, and whether an episode is on (warned once,
         * over at the next spawn that succeeds) with the retries it counted. */
        size_t n_spawn_waiting;
        /* Made at the start, so that arming it needs no descriptor or memory
         * (sd-event's timerfd for the clock exists): at the earliest retry_at. */
        sd_event_source *spawn_retry;
        bool spawn_starved;
        uint64_t spawn_episode_retries;
};

/*
 * An output pipe: the read end watched by the loop for as long as the pipe
 * lives, the write end the agents' stdout and stderr.  Kept from one run to
 * the next: a pipe, its two closes and its two epoll registrations per run
 * were a fifth of the system calls per event.
 */
struct job_output {
        struct list_node link;   /* on m->jobs.idle_outputs while idle */
        struct manager *m;
        struct job *job;         /* whose program writes into it; NULL: idle */
        sd_event_source *io;     /* on the read end, which it owns */
        int wfd;                 /* the write end */
};

struct job {
        struct manager *m;
        struct list_node link;   /* on m->jobs.running */
        struct uevent *ev;
        char **scripts;          /* multiplexer: the files to run, in order */
        size_t n_scripts;
        size_t next_script;
        char *agent;             /* single-agent mode: our copy of cfg.agent */
        struct usb_plan *usb;    /* hotplug-dir: the usb dispatch's steps, after the agent (job-usb.c) */
        size_t next_usb;
        char *remover_env;       /* "REMOVER=PATH" for the usb scripts */
        const char *remover_ran; /* a remover that ran (in usb): removed before the next step */
        const char *program;     /* currently running */
        pid_t pid;
        sd_event_source *child;  /* on the pidfd; until the program is reaped, freeing it kills and reaps it */
        struct job_output *out;  /* while a program runs */
        sd_event_source *timer;
        usec_t retry_at;         /* CLOCK_MONOTONIC: its program could not be started, try again then */
        usec_t retry_delay;      /* the last wait before a retry (HP_SPAWN_RETRY_MIN_USEC, doubling) */
        const struct usb_step *retry_step; /* the usb step to try again, if the program is one */
        usec_t started;          /* CLOCK_MONOTONIC, this program */
        usec_t job_started;      /* CLOCK_MONOTONIC, first program */
        usec_t looked;           /* CLOCK_MONOTONIC, the last look at this program (on_look()), or its start */
        uint64_t looked_busy;    /* its CPU plus run-queue time then, ns */
        usec_t look_at;          /* CLOCK_MONOTONIC, its next look (on_look()) */
        usec_t look_every;       /* from its last look to its next (HP_CONCURRENCY_LOOK_USEC, doubling while awake) */
        bool asleep;             /* counted in m->jobs.conc.asleep */
        bool term_sent, kill_sent;
        bool failed;
        bool starting_sent;      /* observers heard starting() */
        bool udev_waiting;       /* its first program waits for udevd's broadcast (udev-wait.h) */
        struct list_node kmod_link; /* linked: its first program waits for its modules (kmod-load.h) */
        bool probe_waiting;      /* it waits for its physical device's probe to end (manager_probe_hold()) */
        bool spawn_waiting;      /* j->program (j->retry_step) waits for retry_at to be spawned again */
        bool physdev_set;        /* its programs get @physdev in place of the intake's PHYSDEVDRIVER */
        char physdev[sizeof("PHYSDEVDRIVER=") + DEVMODEL_NAME_MAX];
        size_t line_len;
        char line[HP_OUTPUT_LINE_MAX + 1];
        usec_t out_window;       /* CLOCK_MONOTONIC, start of the output rate-limit window */
        unsigned out_lines;      /* lines logged in this window */
        uint64_t out_suppressed; /* lines not logged since the last report */
};

/* ---- job-usb.c: the linux-hotplug usb dispatch (hotplug-dir) ---- */
/* Read hotplug-dir's maps (start, reload); problems are logged. */
void jobs_usb_load(struct manager *m);
void jobs_usb_close(struct manager *m);
/* @j's usb steps, if its event has any (j->usb). */
void job_usb_plan(struct job *j);
/* @j's next usb step, or NULL; a remover that ran before is removed first. */
const struct usb_step *job_usb_next(struct job *j);
/* Add what step @s gets beside the agent's environment (REMOVER) to @env. */
void job_usb_env(const struct job *j, const struct usb_step *s, struct spawn_env *env);
/* Remove the remover that ran, if one did. */
void job_usb_removed(struct job *j);
/* Release @j's usb steps. */
void job_usb_free(struct job *j);

/* Close @o (idle or not) and free it. */
void job_output_free(struct job_output *o);
/* An output pipe for @j's next program (j->out): an idle one, or a new one.  Return: 0 or negative errno. */
int job_output_get(struct job *j);
/* @j's program is over: keep its pipe (if any) for the next run if @reusable and there is room, else close it. */
void job_output_put(struct job *j, bool reusable);
/**
 * job_read_output() - read and log what @j's program wrote.
 * @j: the job
 * @final: the run is over: log the partial line and report suppressed lines
 *
 * Reads at most HP_OUTPUT_READ_MAX bytes (the pipe stays readable and the
 * loop comes back after its other sources); logs complete lines (and
 * overlong pieces).
 * Return: true if the read stopped at the bound.
 */
bool job_read_output(struct job *j, bool final);
/* The log fields of @j's event and its current program (@f filled). */
void job_log_fields(const struct job *j, struct log_fields *f);
