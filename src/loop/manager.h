/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The manager owns the event loop (sd-event) and the pipeline:
 *   source -> parse -> ledger -> handler chain -> scheduler -> jobs (agents)
 * It is the one place that logs per-event lines.
 */

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/handlers.h"
#include "pipeline/ledger.h"
#include "uevent/netlink.h"
#include "pipeline/scheduler.h"
#include "shared/time-util.h"

struct manager;
struct uevent;

/*
 * The manager's configuration, complete: every member holds its value (no
 * "0 means default").  options_defaults() (config/options.h) fills in the
 * defaults from the option table; the ranges are the table's too.  A copy
 * the manager keeps owns its strings (manager_config_copy(), whose list of
 * text members is the one to extend with a new string member).
 */
/* Whether the daemon loads the modules of an add's MODALIAS (load-modules, loop/kmod-load.h). */
enum load_modules {
        LOAD_MODULES_AUTO, /* when udevd does not run, the modalias script is not installed, and modules exist */
        LOAD_MODULES_YES,
        LOAD_MODULES_NO,
};

/* When agents wait for udevd's broadcast of their event (after-udev). */
enum after_udev {
        AFTER_UDEV_AUTO, /* when udevd's control socket exists at start or reload */
        AFTER_UDEV_YES,
        AFTER_UDEV_NO,
};

struct manager_config {
        const char *agent;          /* program run per event (single-agent mode) */
        const char *hotplug_d;      /* multiplexer directory; overrides agent when set */
        enum ordering ordering;
        unsigned max_children;      /* agents running at once, at most */
        unsigned concurrency;       /* agents at once: 0 adapts up to max_children (pipeline/concurrency.h) */
        size_t max_queue;           /* events held at most */
        uint64_t max_queue_bytes;   /* bytes held for events at most (the budget, HP_QUEUE_BYTES_DEFAULT) */
        usec_t timeout_usec;        /* agent run time before SIGTERM */
        usec_t kill_grace_usec;     /* SIGTERM to SIGKILL */
        usec_t shutdown_grace_usec; /* how long running agents may finish at exit */
        bool dry_run;               /* log what would run, run nothing */
        int rcvbuf;                 /* netlink receive buffer requested, bytes */
        int source_fd;              /* socket handed over (consumed); -1: open our own */
        enum uevent_trust trust;    /* policy for source_fd */
        const char *sysfs_root;     /* "/sys" unless testing */
        struct handler_config handlers;
        const char *control_path;   /* control socket; NULL: HOTPLUGD_RUNDIR "/control"; "" : none */
        int control_fd;             /* listening control socket handed over (consumed); -1: bind control_path */
        int control_gid;            /* members may use the read-only requests (control-group); -1: none */
        const char *record_path;    /* append every datagram and agent run to this recording */
        const char *handover_path;  /* handover file: taken over at start, written at exit; NULL: none */
        const char *replay_path;    /* read datagrams from this recording instead of the kernel */
        double replay_speed;        /* 1: recorded pace; 0: as fast as possible */
        unsigned rebroadcast_group; /* re-send processed events on this netlink group; 0: off */
        bool resync;                /* resync after a receive-buffer overflow */
        const char *resync_subsystems; /* subsystems a resync writes to; NULL or "": all */
        enum after_udev after_udev;  /* agents start after udevd broadcast their event */
        usec_t after_udev_timeout_usec; /* how long udevd may be silent while an event waits (udev-wait.h) */
        const char *hotplug_dir;    /* linux-hotplug directory: usb usermap dispatch; NULL: off */
        enum load_modules load_modules; /* load an add's modules before its agents (kmod-load.h) */
};

/**
 * manager_config_copy() - a configuration that owns its strings.
 * @src: the configuration (borrowed; its strings may be anyone's)
 * @ret: receives the copy, untouched on failure; release it with
 *       manager_config_free()
 *
 * The descriptors (source_fd, control_fd) are copied as numbers: the copy
 * does not own them.
 * Return: 0, or -ENOMEM.
 */
int manager_config_copy(const struct manager_config *src, struct manager_config *ret);

/**
 * manager_config_free() - free the strings of a copy from manager_config_copy().
 * @cfg: the copy (borrowed); its strings are NULL afterwards
 */
void manager_config_free(struct manager_config *cfg);

/* Pause/resume starting agents (events keep queueing, up to the bounds). */
void manager_pause(struct manager *m);
void manager_resume(struct manager *m);

/* Counters for status output and tests. */
struct manager_stats {
        uint64_t received;     /* datagrams the source accepted */
        uint64_t rejected;     /* failed validation */
        uint64_t rejected_by_class[32];
        uint64_t dropped_sender;  /* dropped by the source's trust policy or truncated */
        uint64_t dropped_keys; /* variables left out of events read from a recording: keys no kernel sends */
        uint64_t filtered;     /* a handler's filter() said no */
        uint64_t aborted;      /* environment overflow or out of memory */
        uint64_t queued;       /* accepted into the queue (the scheduler or its backlog) */
        uint64_t started;      /* agent processes started */
        uint64_t finished;     /* events whose job completed */
        uint64_t failed;       /* jobs with a non-zero exit, signal, timeout or exec failure */
        uint64_t timeouts;
        uint64_t spawn_retries; /* programs tried again: their spawn failed for want of a process or a descriptor */
        uint64_t taken_over;   /* events run again from the previous instance's handover journal */
        uint64_t reruns;       /* of them, events whose agent that instance had started */
        uint64_t set_aside;    /* datagrams HP_INTAKE_TRIES_MAX instances died processing or starting, not run */
        uint64_t peak_held;    /* most events held (queued + running) at once */
        uint64_t peak_bytes;   /* most bytes held at once (the budget's count, manager_bytes_held()) */
        uint64_t overloads;    /* times reading stopped at max-queue or max-queue-bytes */
};

/**
 * manager_new() - set up the pipeline and the event loop.
 * @cfg: complete configuration, e.g. from options_defaults() (borrowed;
 *       the manager keeps its own copy, manager_config_copy(); the
 *       descriptors in it are consumed)
 * @ret: the manager, owned by the caller
 * Return: 0 or negative errno (logged).
 */
int manager_new(const struct manager_config *cfg, struct manager **ret);
struct manager *manager_free(struct manager *m);

/**
 * manager_run() - run until SIGTERM/SIGINT or a fatal error.
 * Return: 0 on an orderly stop, negative errno on failure.
 */
int manager_run(struct manager *m);

/**
 * manager_reconfigure() - apply a new configuration without losing queued events.
 * @m: manager
 * @cfg: the new configuration (borrowed; the manager swaps in a copy of it,
 *       manager_config_copy(), and frees the one it replaces)
 *
 * Applies agent / hotplug-d, ordering, max-children, max-queue, timeout,
 * kill-grace, resync, resync-subsystems (from the next pass on) and the
 * handler settings (the handler chain is rebuilt; if that fails the old
 * chain is kept).  Queued and running events keep their
 * places; running agents keep their old timeout.  The source, dry-run and
 * rcvbuf settings are not changed by a reload.
 * Return: 0, or negative errno with nothing changed.
 */
int manager_reconfigure(struct manager *m, const struct manager_config *cfg);

/*
 * Reload callback (SIGHUP, `hotplugctl reload`): re-reads the configuration
 * and calls manager_reconfigure().  On failure it writes the reason (e.g.
 * "FILE:LINE: reason") into @err and returns negative errno; the running
 * configuration stays.
 */
/* The configuration file the daemon read, for status (borrowed: it must outlive @m). */
void manager_set_config_path(struct manager *m, const char *path);

typedef int (*manager_reload_fn)(struct manager *m, void *userdata, char *err, size_t err_size);
void manager_set_reload(struct manager *m, manager_reload_fn fn, void *userdata);

/**
 * manager_reload() - run the reload callback and log the outcome.
 * Return: 0 or negative errno; @err (may be NULL) receives the reason.
 */
int manager_reload(struct manager *m, char *err, size_t err_size);

/* Ask the loop to stop as on SIGTERM (for embedding and tests). */
void manager_stop(struct manager *m);

/**
 * manager_inject() - run one datagram through the pipeline as if just read.
 * @m: manager
 * @data: the datagram (borrowed for the call; the event keeps its own copy)
 * @size: its size, 1..HP_UEVENT_MAX_SIZE
 *
 * The datagram is validated and accounted by the ledger like any other;
 * agents start at the next dispatch (manager_dispatch() or the loop).
 * Return: 0 (the outcome is logged), or -EINVAL for an impossible size.
 */
int manager_inject(struct manager *m, const char *data, size_t size);

/**
 * manager_handover() - keep the held events in a journal that outlives the process.
 * @m: manager, not yet running
 * @fd: the journal a previous instance left (a memfd, consumed), or -1 for a new one
 *
 * With a previous journal the ledger continues after its highest SEQNUM
 * and every event it still held is run again, lowest SEQNUM first, before
 * the socket is read.  The caller hands manager_handover_fd() to whoever
 * keeps it across a restart (the service manager's fd store); when a new
 * journal was started for one that could not be read, in its place.
 * Without @fd and with handover-file set, that file is taken over
 * instead, if there is one and it checks (handover-file.h; a refused one
 * is logged): its journal as above, its handled devices, and its present
 * devices for resync's targeted pass (manager_resync_handover()).  With
 * @fd the file is removed unread: the service manager's copy is newer.
 * Return: 0 @fd was taken over (read, or reset in place: not a journal),
 * 1 a new journal was started (@fd was -1, or could not be read: logged,
 * and closed) or the file's was taken over: either is new to the service
 * manager, or negative errno (logged) and the manager runs without one.
 */
int manager_handover(struct manager *m, int fd);

/**
 * manager_handover_save() - write the handover file (handover-file set) for the next instance.
 * @m: manager, stopped (manager_run() returned)
 *
 * The journal (the events not finished, the ledger's last SEQNUM), the
 * devices believed present and those handled.  Does nothing without the
 * setting or without a journal.
 * Return: 0 or negative errno (logged).
 */
int manager_handover_save(struct manager *m);

/* 1 if @devpath's add ran or is queued in this boot (by this instance, or one whose handover file it
 * took), else 0. */
int manager_device_handled(const struct manager *m, const char *devpath);

/* Count @devpath as handled: its add is on its way (a targeted resync pass planned it). */
void manager_note_handled(struct manager *m, const char *devpath, const char *subsystem);

/* Every DEVPATH whose add ran in this boot (as manager_device_handled()), to @fn (borrowed for the call). */
void manager_for_each_handled(const struct manager *m, void (*fn)(const char *devpath, void *arg), void *arg);

/* The journal's memfd (borrowed), or -1 without one. */
int manager_handover_fd(const struct manager *m);

/* The uevent socket (borrowed). */
int manager_source_fd(const struct manager *m);

/*
 * Service status: @fn gets a one-line summary (queue and ledger figures) at
 * most once a second while events come and go, and once more with
 * @stopping set when the manager starts to stop.
 */
typedef void (*manager_status_fn)(struct manager *m, const char *status, bool stopping, void *userdata);
void manager_set_status(struct manager *m, manager_status_fn fn, void *userdata);

const struct ledger *manager_ledger(const struct manager *m);
const struct manager_stats *manager_stats(const struct manager *m);
