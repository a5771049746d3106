/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * after-udev: an event's agents start only once udevd has broadcast the
 * same event (its rules, node permissions, links and RUN programs done),
 * as they did when udev was the first hotplug.d script.  Only src/loop/
 * includes this: manager.c opens and reconfigures it, manager-job.c asks
 * it before an event's first program and is told when to go on.
 *
 * Invariants:
 *  - the kernel's stream stays the only source of events: a broadcast of
 *    udevd's only releases an event the kernel itself sent and this
 *    instance read live from its socket, paired by SEQNUM, DEVPATH and
 *    ACTION (a broadcast that names a held SEQNUM with another DEVPATH or
 *    ACTION is counted and ignored); udev's environment never reaches an
 *    agent (uevent/udev-listen.h keeps three fields of it);
 *  - an event waits until its broadcast, or until udevd has broadcast
 *    nothing for after-udev-timeout (counted from its arrival at the
 *    earliest): then udevd counts as silent, every waiting event goes on at
 *    once and new ones do not wait, until udevd broadcasts again; or until
 *    udevd broadcast a later event of the same device (it passed this one);
 *    and never longer than HP_AFTER_UDEV_BOUND_FACTOR after-udev-timeouts
 *    from its arrival, however busy udevd is;
 *  - synthesised (resync), taken-over and replayed events never wait, nor
 *    any when the source is not the kernel's socket (a replay, or the test
 *    build's socket of any sender);
 *  - memory: while udevd counts as running, one entry per event held
 *    (about 150 bytes with its hash slot; none while it does not), and at
 *    most HP_UDEV_EARLY_MAX broadcasts of events not read from the kernel
 *    yet.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/time-util.h"

struct job;
struct manager;
struct uevent;

/* after-udev in numbers, for status. */
struct udev_wait_status {
        const char *state;     /* "off", "on" (udevd broadcasts), "on, udevd silent" (it did not broadcast
                                * an event in time) or "auto, udevd not running" (no control socket) */
        uint64_t confirmed;    /* broadcasts paired with an event held */
        uint64_t waited;       /* events whose agents waited for one */
        usec_t waited_usec;    /* their waits, summed */
        uint64_t timeouts;     /* events that went on without one (timed out, or udevd silent) */
        uint64_t mismatched;   /* broadcasts naming a held SEQNUM with another DEVPATH or ACTION */
        uint64_t overflows;    /* times the broadcast socket overflowed */
        uint64_t forgotten;    /* early broadcasts forgotten at HP_UDEV_EARLY_MAX */
        size_t waiting;        /* events waiting now */
};

/**
 * udev_wait_open() - set after-udev up as the configuration says.
 * @m: manager, its configuration and loop set up
 *
 * Off for a replay and for after-udev=no.  Otherwise it listens to udevd's
 * broadcasts (if it cannot, it logs why and stays off) and waits from the
 * start for after-udev=yes, or for auto when /run/udev/control exists;
 * auto without it waits from udevd's first broadcast on.
 * It registers as an observer, closed (and freed) with the others.
 * Return: 0, or -ENOMEM.
 */
int udev_wait_open(struct manager *m);
/* After a reload: after-udev and its timeout as the new configuration says (auto looks again). */
void udev_wait_reconfigured(struct manager *m);

/**
 * udev_wait_begin() - may @ev's agents start, or wait for udevd?
 * @m: manager
 * @ev: the event, about to start its first program
 * @j: its job, told with job_udev_go() when to go on
 * Return: 0 start now; 1 wait (job_udev_go() comes later, or never if the
 * job is dropped first with udev_wait_abandon()).
 */
int udev_wait_begin(struct manager *m, const struct uevent *ev, struct job *j);
/* @ev's job goes away while it waits (stopping): forget it. */
void udev_wait_abandon(struct manager *m, const struct uevent *ev);
/* The jobs waiting now (manager-job.c frees them when stopping). */
size_t udev_wait_waiting(const struct manager *m);
/* Bytes of its entries (one per event read while udevd runs, until done) and their table: the budget's. */
size_t udev_wait_bytes(const struct manager *m);
void udev_wait_get_status(const struct manager *m, struct udev_wait_status *ret);

/* manager-job.c: @j waited for udevd and goes on (@timed_out: without its broadcast), after @waited. */
void job_udev_go(struct job *j, bool timed_out, usec_t waited);
