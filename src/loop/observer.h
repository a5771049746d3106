/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Observers: who hears what the manager's pipeline did.
 *
 * The manager announces each step of an event's way (a datagram read, the
 * ledger's verdict, queued, waited, an agent started or finished, done,
 * dropped, ...) to every observer, in the order the observers were added;
 * it does not know who listens.  The control socket, the recorder,
 * rebroadcast, the handover journal, the service status, blame and resync each
 * register through manager_add_observer() (src/loop/observe-*.c,
 * src/loop/manager-resync.c).
 *
 * Invariants:
 *  - while the manager runs, every valid event that entered the ledger
 *    leaves through exactly one of dropped() or done(), so settle and "wait
 *    for these UUIDs" can never wait for an event that is gone; events still
 *    held when manager_free() runs are freed without either (close() comes
 *    then);
 *  - hooks run synchronously inside the loop and must not call back into
 *    the pipeline (inject, dispatch, stop); every pointer they get is
 *    borrowed for the call;
 *  - all hooks are optional; a hook nobody implements costs one test.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pipeline/ledger.h"
#include "shared/time-util.h"

struct manager;
struct spawn_env;
struct uevent;

/* Observers at most per manager (there are ten built in). */
#define MANAGER_OBSERVERS_MAX 12

/* One agent run, as observers see it. */
struct manager_agent {
        const struct uevent *ev; /* the event it runs for */
        const char *program;     /* the agent or hotplug.d file */
        pid_t pid;               /* 0: it could not be started */
        usec_t started;          /* CLOCK_MONOTONIC */
        bool timed_out;          /* SIGTERM was sent at the timeout */
        /* started(): the environment it was given (argv is program, ev->name); else NULL */
        const struct spawn_env *env;
};

struct manager_observer_ops {
        /* A datagram was read from the kernel socket, before anything else looks at it. */
        void (*datagram)(void *userdata, const char *data, size_t size, usec_t mono, usec_t real);
        /* A valid event got the ledger's verdict @v (@gap is filled for LEDGER_GAP). */
        void (*received)(void *userdata, const struct uevent *view, enum ledger_verdict v,
                         const struct ledger_gap *gap);
        /* The ledger found a gap (after received() and the log line). */
        void (*gap)(void *userdata, const struct ledger_gap *gap);
        /* The receive buffer overflowed (or a recorded overflow was replayed). */
        void (*overflow)(void *userdata);
        /* The socket was read until empty. */
        void (*input_drained)(void *userdata);
        /* Reading stopped at a bound, max-queue or max-queue-bytes (@overloaded), or went on. */
        void (*overload)(void *userdata, bool overloaded);
        /* @ev was queued: into the scheduler, or the backlog behind it; said at once either way. */
        void (*queued)(void *userdata, const struct uevent *ev);
        /* @ev, about to start, waited: for the event @blocker to finish (the last of those it
         * waited for), @reason e.g. "parent /devices/..."; or, @blocker 0, for a free slot,
         * @reason "a free slot (limit N)".  Said before starting() (once for each of the two
         * that applies, the event first), only for events that waited.  @blocker equal to @ev's
         * own SEQNUM: it waited for udevd's broadcast of it (after-udev), @reason "udevd" or
         * "udevd, not broadcast in time"; said after the other two. */
        void (*waited)(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason);
        /* @view was set aside unprocessed: @tries instances died processing it (dropped() follows), or
         * starting it (a held event, which leaves through done(), no agent having run). */
        void (*set_aside)(void *userdata, const struct uevent *view, uint32_t tries);
        /* The event left the pipeline without an agent run (duplicate, filtered, aborted, set aside). */
        void (*dropped)(void *userdata, const struct uevent *view, bool filtered);
        /* The first program for @ev is about to be spawned (once per event, not in a dry run). */
        void (*starting)(void *userdata, const struct uevent *ev);
        /* An agent process started. */
        void (*started)(void *userdata, const struct manager_agent *a);
        /* An agent could not be executed (@error: negative errno). */
        void (*exec_failed)(void *userdata, const struct manager_agent *a, int error);
        /* An agent process ended; @status e.g. "exit 0" or "signal 9 (Killed)". */
        void (*finished)(void *userdata, const struct manager_agent *a, const siginfo_t *si,
                         const char *status);
        /* The event's job is over and the scheduler no longer holds it; @ev is freed next. */
        void (*done)(void *userdata, const struct uevent *ev);
        /* load-modules loaded module @name (with its dependencies) in @took, or @failed (kmod-load.h). */
        void (*module_loaded)(void *userdata, const char *name, usec_t took, bool failed);
        /* The manager starts to stop (SIGTERM, SIGINT, manager_stop()). */
        void (*stopping)(void *userdata);
        /* manager_free(): release @userdata.  Observers are closed last added first. */
        void (*close)(void *userdata);
};

/**
 * manager_add_observer() - let an observer hear what the pipeline does.
 * @m: manager
 * @ops: the hooks (borrowed; must outlive the manager), each optional
 * @userdata: passed to every hook; the manager owns it only through @ops->close
 *
 * Observers are called in the order they were added.
 * Return: 0, or -ENOSPC when MANAGER_OBSERVERS_MAX are registered already.
 */
int manager_add_observer(struct manager *m, const struct manager_observer_ops *ops, void *userdata);
