/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The observer list (manager-observe.c), as the core sees it: open and
 * close it, and tell every observer what happened.  Only the core's files
 * (manager.c, manager-queue.c, manager-job.c) call these; the observers
 * hear them through their ops (observer.h).  Only src/loop/ includes this.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipeline/ledger.h"
#include "shared/time-util.h"

struct manager;
struct manager_agent;
struct scheduler_wait;
struct uevent;

/* Register the built-in observers in their fixed order (none may be told anything before).
 * Return: 0 or negative errno (logged). */
int manager_observe_open(struct manager *m);
/* Close every observer, last added first, and free the list. */
void manager_observe_close(struct manager *m);
/* Some observer wants observe_waited(). */
bool observe_wants_waiting(const struct manager *m);
void observe_datagram(struct manager *m, const char *data, size_t size, usec_t mono, usec_t real);
void observe_received(struct manager *m, const struct uevent *view, enum ledger_verdict v,
                      const struct ledger_gap *gap);
void observe_gap(struct manager *m, const struct ledger_gap *gap);
void observe_overflow(struct manager *m);
void observe_input_drained(struct manager *m);
void observe_overload(struct manager *m, bool overloaded);
void observe_queued(struct manager *m, const struct uevent *ev);
/* @ev, about to start, waited as @w says (the scheduler's answer; nothing happens if it did not wait). */
void observe_waited(struct manager *m, const struct uevent *ev, const struct scheduler_wait *w);
/* @ev's first program is about to start after it waited @waited for udevd's broadcast (@timed_out: in vain). */
void observe_udev_waited(struct manager *m, const struct uevent *ev, usec_t waited, bool timed_out);
/* load-modules tried to load @name (borrowed) for @took (kmod-load.c). */
void observe_module_loaded(struct manager *m, const char *name, usec_t took, bool failed);
void observe_set_aside(struct manager *m, const struct uevent *view, uint32_t tries);
void observe_dropped(struct manager *m, const struct uevent *view, bool filtered);
void observe_starting(struct manager *m, const struct uevent *ev);
void observe_started(struct manager *m, const struct manager_agent *a);
void observe_exec_failed(struct manager *m, const struct manager_agent *a, int error);
void observe_finished(struct manager *m, const struct manager_agent *a, const siginfo_t *si, const char *status);
void observe_done(struct manager *m, const struct uevent *ev);
void observe_stopping(struct manager *m);
