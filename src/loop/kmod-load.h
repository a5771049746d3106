/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * load-modules: for each "add" with a MODALIAS, the modules its alias
 * names are loaded with libkmod (modprobe.d, blacklists and softdeps as
 * modprobe applies them) before the event's agents start, so that an agent
 * finds the driver bound and the children it made.  Only src/loop/
 * includes this: manager.c reconfigures it, manager-job.c asks it before an
 * event's first program and is told when to go on.
 *
 * Invariants:
 *  - libkmod runs only on the HP_KMOD_THREADS loader threads, each with
 *    its own context (a libkmod context is not thread-safe); the loop's
 *    thread only queues requests and reads results (an eventfd says when),
 *    so one slow module holds neither the others nor the loop;
 *  - the same alias or module is never in flight twice, and a module
 *    loaded (or built in) is not loaded again (pipeline/modload.h);
 *  - an event waits at most the agent timeout (timeout=) from its alias's
 *    first lookup: a module whose init hangs holds its thread, not the
 *    queue; its waiters go on, and later events of the alias do not wait;
 *  - a MODALIAS is validated (modload_alias()) before libkmod sees it;
 *    only events of the kernel's socket are looked at (not a replay, a dry
 *    run, or the test build's socket of any sender).
 */

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/modload.h"

struct job;
struct manager;
struct uevent;

/* load-modules in numbers, for status. */
struct kmod_load_status {
        const char *state;            /* "on", "off", or why auto is off */
        struct modload_counts counts;
        size_t waiting;               /* events waiting for their modules now */
        size_t in_flight;             /* lookups and loads in flight */
};

/* Set load-modules up as the configuration says (an observer, closed with them).  Return: 0 or -ENOMEM. */
int kmod_load_open(struct manager *m);
/* After a reload: load-modules as the new configuration says; the loaders read modprobe.d anew. */
void kmod_load_reconfigured(struct manager *m);

/**
 * kmod_load_begin() - may @ev's agents start, or wait for its modules?
 * @m: manager
 * @ev: the event, about to start its first program
 * @j: its job, told with job_kmod_go() when to go on
 * Return: 0 start now; 1 wait (j->kmod_link is on a waiting list until
 * job_kmod_go(), or kmod_load_abandon() if the job goes first).
 */
int kmod_load_begin(struct manager *m, const struct uevent *ev, struct job *j);
/* @j goes away while it waits: forget it. */
void kmod_load_abandon(struct job *j);
void kmod_load_get_status(const struct manager *m, struct kmod_load_status *ret);

/* manager-job.c: @j's modules were tried (or @timed_out), it goes on. */
void job_kmod_go(struct job *j, bool timed_out);
