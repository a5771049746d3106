/* SPDX-License-Identifier: MIT */
/*
 * The recorder observer (--record FILE): every datagram read, gap,
 * overflow, wait and agent run is appended to the recording.
 *
 * Invariants: the recorder is the first observer, so a record is written
 * before monitor clients or anyone else hear of the same thing; data
 * reaches the disk within a second (one fdatasync per second at most,
 * never one per record); a write error stops recording (logged once) and
 * never the daemon.
 */
#include <errno.h>
#include <stdlib.h>

#include "shared/log.h"
#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "uevent/record.h"

struct observe_record {
        const char *path;           /* borrowed from the configuration */
        struct record_writer *w;    /* NULL once a write failed */
        sd_event_source *sync;      /* fdatasync at most once a second while dirty */
};

static int on_sync(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct observe_record *o = userdata;
        int r = record_writer_sync(o->w);

        if (r < 0)
                log_warning_errno(r, "cannot sync the recording %s", o->path);
        return 0;
}

static void record(struct observe_record *o, const struct record *rec)
{
        int r;

        if (!o->w)
                return;
        r = record_append(o->w, rec);
        if (r < 0) {
                log_error_errno(r, "writing the recording %s failed; recording stops", o->path);
                o->sync = sd_event_source_disable_unref(o->sync);
                o->w = record_writer_free(o->w);
                return;
        }
        /* Data reaches the disk within a second, never one fdatasync per record. */
        if (o->sync && sd_event_source_get_enabled(o->sync, NULL) == 0) {
                (void)sd_event_source_set_time_relative(o->sync, USEC_PER_SEC);
                (void)sd_event_source_set_enabled(o->sync, SD_EVENT_ONESHOT);
        }
}

static void on_datagram(void *userdata, const char *data, size_t size, usec_t mono, usec_t real)
{
        record(userdata, &(struct record){ .type = RECORD_DATAGRAM,
                                           .datagram = { .realtime = real, .monotonic = mono, .data = data,
                                                         .size = size } });
}

static void on_gap(void *userdata, const struct ledger_gap *gap)
{
        record(userdata, &(struct record){ .type = RECORD_GAP,
                                           .gap = { .monotonic = now_usec(CLOCK_MONOTONIC), .first = gap->first,
                                                    .last = gap->last,
                                                    .class = (enum record_gap_class)gap->class } });
}

static void on_overflow(void *userdata)
{
        record(userdata, &(struct record){ .type = RECORD_OVERFLOW,
                                           .overflow = { .realtime = now_usec(CLOCK_REALTIME),
                                                         .monotonic = now_usec(CLOCK_MONOTONIC) } });
}

static void on_waited(void *userdata, const struct uevent *ev, uint64_t blocker, const char *reason)
{
        record(userdata, &(struct record){ .type = RECORD_WAIT,
                                           .wait = { .seqnum = ev->seqnum, .blocker = blocker,
                                                     .monotonic = now_usec(CLOCK_MONOTONIC),
                                                     .reason = reason } });
}

/* An event the poison guard set aside: an agent end that never started. */
static void on_set_aside(void *userdata, const struct uevent *view, uint32_t tries)
{
        record(userdata, &(struct record){ .type = RECORD_AGENT_END,
                                           .agent_end = { .seqnum = view->seqnum,
                                                          .monotonic = now_usec(CLOCK_MONOTONIC), .pid = 0,
                                                          .status = RECORD_AGENT_SET_ASIDE,
                                                          .value = (int32_t)tries } });
}

static void on_started(void *userdata, const struct manager_agent *a)
{
        record(userdata, &(struct record){ .type = RECORD_AGENT_START,
                                           .agent_start = { .seqnum = a->ev->seqnum, .monotonic = a->started,
                                                            .pid = (uint32_t)a->pid, .program = a->program } });
}

static void on_exec_failed(void *userdata, const struct manager_agent *a, int error)
{
        record(userdata, &(struct record){ .type = RECORD_AGENT_END,
                                           .agent_end = { .seqnum = a->ev->seqnum,
                                                          .monotonic = now_usec(CLOCK_MONOTONIC), .pid = 0,
                                                          .status = RECORD_AGENT_EXEC_FAILED,
                                                          .value = error < 0 ? -error : error } });
}

static void on_finished(void *userdata, const struct manager_agent *a, const siginfo_t *si, const char *status)
{
        enum record_agent_status st = si->si_code == CLD_EXITED ? RECORD_AGENT_EXITED
                                      : a->timed_out            ? RECORD_AGENT_TIMEOUT
                                                                : RECORD_AGENT_SIGNALED;

        record(userdata, &(struct record){ .type = RECORD_AGENT_END,
                                           .agent_end = { .seqnum = a->ev->seqnum,
                                                          .monotonic = now_usec(CLOCK_MONOTONIC),
                                                          .pid = (uint32_t)a->pid, .status = st,
                                                          .value = si->si_status } });
}

static void on_close(void *userdata)
{
        struct observe_record *o = userdata;

        sd_event_source_disable_unref(o->sync);
        record_writer_free(o->w); /* syncs */
        free(o);
}

static const struct manager_observer_ops record_ops = {
        .datagram = on_datagram,
        .gap = on_gap,
        .overflow = on_overflow,
        .waited = on_waited,
        .set_aside = on_set_aside,
        .started = on_started,
        .exec_failed = on_exec_failed,
        .finished = on_finished,
        .close = on_close,
};

/**
 * observe_record_open() - start the recording if --record asked for one.
 * @m: manager, with its event loop
 *
 * Return: 0 (also without --record), or negative errno (logged): the file
 * cannot be opened or is a symbolic link.
 */
int observe_record_open(struct manager *m)
{
        const char *path = manager_cfg(m)->record_path;
        struct observe_record *o;
        int r;

        if (!path)
                return 0;
        o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        o->path = path;
        r = manager_add_observer(m, &record_ops, o);
        if (r < 0) {
                free(o);
                return r;
        }
        /* Registered: on_close() frees @o whatever happens now. */
        r = record_writer_open(path, &o->w);
        if (r == -ELOOP)
                return log_error_errno(r, "cannot open the recording %s: it is a symbolic link; refused", path);
        if (r == -EPERM)
                return log_error_errno(r, "cannot open the recording %s: owned by another user or writable by "
                                          "group or others; refused", path);
        if (r < 0)
                return log_error_errno(r, "cannot open the recording %s", path);
        r = sd_event_add_time_relative(manager_event(m), &o->sync, CLOCK_MONOTONIC, USEC_PER_SEC,
                                       USEC_PER_SEC / 10, on_sync, o);
        if (r < 0)
                return r;
        (void)sd_event_source_set_enabled(o->sync, SD_EVENT_OFF);
        log_info("recording to %s", path);
        return 0;
}
