/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The control socket: the daemon side of hotplugctl.
 *
 * Transport: AF_UNIX SOCK_SEQPACKET at HOTPLUGD_RUNDIR "/control" (mode 0666
 * so that anyone gets a clear answer; only uid 0 is served, and the
 * daemon's own euid when it does not run as root, checked with SO_PEERCRED
 * on accept).  One packet is one request or one reply record.
 *
 * Requests are one line of ASCII words separated by single spaces, at most
 * HP_CONTROL_REQUEST_MAX bytes, no trailing newline:
 *
 *   status                          -> "status ..." "gap ..."* "agent ..."* "firmware ..."* "end"
 *   pause | resume                  -> "ok"
 *   reload                          -> "ok" | "error ..." (message says why)
 *   settle SEQNUM TIMEOUT_MS [DEVPATH [present]]
 *                                   -> "ok seqnum=N last=L" once every event
 *                                      with SEQNUM <= N was processed, or
 *                                      "timeout seqnum=N lowest_held=S last=L";
 *                                      with DEVPATH, only the events whose
 *                                      DEVPATH or DEVPATH_OLD is DEVPATH
 *                                      count (hotplugctl wait); with
 *                                      "present", also not before the daemon
 *                                      believes the device present (there
 *                                      at its start, or its add received)
 *                                      and holds no event of it, whatever
 *                                      its SEQNUM: a sysfs directory made
 *                                      before the kernel sent the add, or
 *                                      while it holds the add back, does
 *                                      not answer early
 *   watch-uuids UUID...             -> "ok watched=TOTAL pending=P": from now
 *                                      on these SYNTH_UUIDs are ticked off as
 *                                      processed.  Watch before writing the
 *                                      uevent files, so none is missed.
 *   forget-uuids UUID...            -> "ok watched=TOTAL pending=P": tick these
 *                                      off unseen (their write failed)
 *   wait-uuids TIMEOUT_MS           -> "progress done=D total=T"* (at
 *                                      most one per 1% of the UUIDs and
 *                                      per HP_CONTROL_PROGRESS_USEC; an
 *                                      advance held back is told when the
 *                                      interval is over) then
 *                                      "ok done=T total=T" or
 *                                      "timeout done=D total=T missing=UUID..."
 *                                      (the watch list is then cleared)
 *   blame                           -> "blame ..." "row ..."* "end left_out=N":
 *                                      hotplugctl blame's sums since the
 *                                      daemon started; rows that would
 *                                      pass half of HP_CONTROL_OUTPUT_MAX
 *                                      are left out (the shortest), counted
 *                                      in left_out=
 *   blame chain                     -> "chain ..." "link ..."* "end":
 *                                      the chain of waits that ended last
 *                                      (hotplugctl blame --critical-chain)
 *   info devpath=DEVPATH            -> "device ..." "vars ..."* then per event
 *                                      kept, oldest first, "event ..."
 *                                      "wait ..."* "run ..."*, then "end":
 *                                      what the daemon knows of the device
 *                                      (hotplugctl info; DEVPATH escaped
 *                                      as a record's value)
 *   info export [after=DEVPATH]     -> the same for every device known, in
 *                                      DEVPATH order after DEVPATH, then
 *                                      "end more=0|1 last=DEVPATH": more=1
 *                                      when the reply stopped at half of
 *                                      HP_CONTROL_OUTPUT_MAX (ask again
 *                                      after last=)
 *   info handled [after=DEVPATH]    -> "handled devpath=DEVPATH"* for each
 *                                      device whose add ran in this boot
 *                                      (by this instance or one whose
 *                                      handover file it took), in DEVPATH
 *                                      order after DEVPATH, then "end
 *                                      more=0|1 last=DEVPATH", paged as
 *                                      info export is; "error errno=EAGAIN"
 *                                      while a handover's targeted resync
 *                                      has not planned its adds (ask again)
 *   monitor [processed] [properties] [subsystem=SUBSYSTEM[/DEVTYPE]]...
 *           [property=KEY=GLOB]...
 *                                   -> "ok", then records as events go
 *                                      until the client closes (the words
 *                                      in any order, the first two at most
 *                                      once; the values escaped as in
 *                                      records).  subsystem= and property=
 *                                      filter in the daemon (monitor-filter.h):
 *                                      the records of an event that does not
 *                                      pass are not sent; gap and overflow
 *                                      records always are
 *
 * Replies are records (control-proto.h): a word, then " key=value" fields
 * with values escaped.  Every failure is "error errno=N message=TEXT"; a
 * malformed request gets one and the connection stays usable.  Refusals at
 * accept (not root, too many clients) send an error and close.
 *
 * Records:
 *   status processed= gaps= gaps_overflow= missing= duplicates= late=
 *          overflows= baseline= last= received= rejected= filtered= started=
 *          finished= failed= timeouts= queued= running= paused=0|1 dropped_keys=
 *          overloaded=0|1 overloads= bytes_held= peak_bytes= max_queue_bytes=
 *          resync=0|1 resyncs= resync_changed= resync_added= resync_removed=
 *          resync_left_alone= devices= ordering= concurrency=fixed|adaptive
 *          limit= limit_max= awake_max= awake= asleep= raised= lowered= windows=
 *          probes= probes_kept= per_cpu_second=
 *          firmware_failed= firmware_missing= firmware_untracked=
 *          (adaptive: limit is awake, learnt from 1 to awake_max (the CPUs and one) in windows of
 *          completions, plus the agents seen asleep, at most limit_max; per_cpu_second: the events the
 *          last window finished per CPU-second of the daemon and its agents)
 *   gap first= last= count= class=unexplained|overflow   (newest first)
 *   agent seqnum= pid= age_ms= devpath= program=
 *   daemon pid= version= since= uptime_usec= [config=] [agent=] [hotplug_d=] log_level= log_target=
 *                                 (right after status; since= its start, CLOCK_REALTIME as time=)
 *   firmware name= requests=      (a name the loader found no file for, whose requests
 *                                  were failed at once: loop/observe-firmware.c)
 *   blame events= runs= run_usec= order_wait_usec= slot_wait_usec= udev_wait_usec=
 *         failed_events= failed_runs=
 *   row group=subsystem|program|device|module name= count= total_usec= slowest_usec=
 *       slowest_seqnum= order_wait_usec= slot_wait_usec= udev_wait_usec= failed=
 *       (each table longest total first; name=(other) sums what came
 *       past HP_BLAME_NAMES_MAX names; udev_wait_usec= is the wait for
 *       udevd's broadcast, after-udev: daemons before it send none;
 *       failed= and failed_*=: of count, the events with a failed run or
 *       the runs that failed, absent from daemons before them)
 *   chain known=0|1 settled=0|1 events= span_usec= cut_seqnum=
 *   link seqnum= blocker= at_usec= run_usec= order_wait_usec= slot_wait_usec=
 *        udev_wait_usec= runs= failed_runs= [action= subsystem= devpath=]
 *        [failed= failed_status=]   (the event that ended last first, then
 *        the one it waited for, and so on; struct control_blame_link)
 *   device devpath= history=0|1 events= modelled=0|1 [bus= driver=] in_resync_set=0|1|unknown
 *   vars more=0|1 (var=KEY=VALUE | cont=REST)*  (the legacy variables the model holds, as env records)
 *   event seqnum= action= time= mono_usec= outcome=held|done|filtered|dropped runs_left_out=
 *   wait seqnum= blocker= waited_us= reason=
 *   run seqnum= program= pid= started_usec= [status= failed=0|1 timed_out=0|1 duration_us=]
 *                                  (no status= while it runs; mono_usec= and started_usec=
 *                                   are CLOCK_MONOTONIC)
 *   Monitor (time= is CLOCK_REALTIME seconds.microseconds):
 *   received seqnum= time= action= devpath= subsystem= verdict=next|gap|late|duplicate [uuid=]
 *   gap first= last= count= class= time=
 *   overflow time=                                (the kernel dropped events)
 *   and with "processed" also:
 *   queued seqnum= time= devpath=
 *   filtered seqnum= time= devpath=               (left without running anything)
 *   started seqnum= time= pid= devpath= program= name=
 *   finished seqnum= time= devpath= program= name= status= duration_us=
 *   waited seqnum= time= devpath= blocker= reason= waited_us=
 *                                  (about to start, it waited: blocker= the event it waited for,
 *                                   0 a free slot, its own SEQNUM udevd; waited_us= since its arrival)
 *   (name= is the program's argv[1], the handler's NAME)
 *   and with "properties", right after each received, queued and started
 *   record, nothing between, its entries (see below):
 *   env seqnum= set=kernel|handlers|argv|agent more=0|1 (var=ENTRY | cont=REST)*
 *     received: set=kernel, every KEY=VALUE of the kernel's datagram in the
 *               kernel's order (the header "ACTION@DEVPATH" left out);
 *     queued:   set=handlers, what the handler chain added: each KEY=VALUE
 *               whose key the kernel did not send or whose value it changed,
 *               in the order they were added (may be empty);
 *     started:  set=argv, the agent's arguments (the program, then argv[1]),
 *               then set=agent, its whole environment in the order it got it.
 *   more=1: another env record of the same event follows; more=0 ends the
 *   event's entries.  An entry is never truncated or left out: one that does
 *   not fit in what is left of a record is cut there and continues as the
 *   first field, cont=, of the next record, so an event of any size
 *   (a datagram of HP_UEVENT_MAX_SIZE, each byte escaped to 4) takes as many
 *   records of at most HP_CONTROL_RECORD_MAX bytes as it needs; join every
 *   cont= to the entry before it.  Keys inside an entry are the kernel's
 *   ([A-Z0-9_]+); the kernel never repeats one in a datagram (uevent_parse()
 *   refuses it), nor does an agent environment, so each set is a map.
 *   A monitor whose unread replies exceed HP_CONTROL_OUTPUT_MAX bytes gets
 *   "error errno=105 message=..." after what it already has, and is closed.
 *
 * Field types (hotplugctl's JSON output follows them; every other field is
 * text): time= is a decimal number of seconds with six decimals; paused=,
 * overloaded= and resync= are 0 or 1; these are unsigned decimal integers: seqnum pid first
 * last count duration_us age_ms errno done total watched pending
 * lowest_held and every field of the status record but ordering= and
 * concurrency=, and every field of the blame and row records but group=
 * and name=.
 *
 * Settle rule: settle N is satisfied when no held (queued or running) event
 * has SEQNUM <= N (with DEVPATH: no such event on that path), and either the ledger has seen N or the uevent socket was
 * read to the end after the request arrived (so any event <= N still
 * unseen was not sent to us: another network namespace).
 *
 * The module does not own the event loop: it is given the manager's sd_event
 * and adds its own sources (listening socket, one io source and one timer per
 * client, one defer source).  That keeps per-client lifetimes here instead of
 * in the manager.  It calls the manager only through struct control_ops.
 *
 * Every public function except control_new() and control_free() may be
 * called from within an ops callback.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "pipeline/devcache.h"
#include "pipeline/devinfo.h"
#include "pipeline/ledger.h"
#include "shared/bounds.h"
#include "shared/time-util.h"

struct control;

/* Filled by ops->status(); all pointers borrowed for the duration of the call. */
struct control_status {
        const struct ledger *ledger;
        size_t queued;
        size_t running;
        bool paused;
        /* The bounds: reading stopped at one (overloaded), times it did, bytes held now, at most, the budget. */
        bool overloaded;
        uint64_t overloads, bytes_held, peak_bytes, max_queue_bytes;
        uint64_t received, rejected, filtered, started, finished, failed, timeouts;
        /* Spawns tried again (they found no process or descriptor), and events waiting for one now. */
        uint64_t spawn_retries, spawn_waiting;
        /* Variables left out of events read from a recording (--replay): keys no kernel sends. */
        uint64_t dropped_keys;
        /* Handover: events taken over from the previous instance, and those run a second time. */
        uint64_t taken_over, reruns;
        /* Poison guard: datagrams set aside because instances died processing them. */
        uint64_t set_aside;
        /* Resync after overflow: on, passes done, totals, devices believed present. */
        bool resync;
        uint64_t resyncs, resync_changed, resync_added, resync_removed;
        uint64_t resync_left_alone; /* devices not of resync-subsystems, over all passes */
        uint64_t devices;
        /* The concurrency limit (pipeline/concurrency.h): ordering name, how the limit is set
         * ("fixed", "adaptive"), the limit and its bound, the awake agents allowed and the asleep ones. */
        const char *ordering, *concurrency;
        unsigned limit, limit_max, awake_max, awake, asleep;
        uint64_t raised, lowered, windows, probes, probes_kept, per_cpu_second;
        /* after-udev (loop/udev-wait.h): its state (struct udev_wait_status); broadcasts paired,
         * events that waited and their waits summed, events that went on without their broadcast,
         * broadcasts that did not match, socket overflows, early broadcasts forgotten, waiting now. */
        const char *after_udev;
        uint64_t udev_confirmed, udev_waited, udev_wait_usec, udev_timeouts, udev_mismatched, udev_overflows,
                udev_forgotten, udev_waiting;
        /* load-modules (loop/kmod-load.h): its state, then struct modload_counts, the events
         * waiting for their modules and the lookups and loads in flight now. */
        const char *load_modules;
        uint64_t kmod_aliases, kmod_invalid, kmod_lookups, kmod_not_found, kmod_loads, kmod_saved, kmod_loaded,
                kmod_failed, kmod_blacklisted, kmod_timeouts, kmod_skipped, kmod_waiting, kmod_in_flight;
        /* Fail-fast firmware: requests failed at once, those of a name not kept, and the
         * names kept (at most HP_FIRMWARE_MISSING_NAMES) with their requests each. */
        uint64_t firmware_failed, firmware_untracked;
        size_t firmware_n;
        const char *firmware_name[HP_FIRMWARE_MISSING_NAMES];
        uint64_t firmware_requests[HP_FIRMWARE_MISSING_NAMES];
        /* Who answers: its PID, version, start (CLOCK_REALTIME) and age, configuration
         * file (NULL: none read), agent or hotplug.d directory, log level and target. */
        pid_t pid;
        const char *version, *config, *agent, *hotplug_d, *log_level, *log_target;
        usec_t since, uptime;
};

/* One running agent, passed to the for_each_agent visitor (borrowed for the call). */
struct control_agent {
        uint64_t seqnum;
        const char *devpath;
        const char *program;
        pid_t pid;
        usec_t started;      /* CLOCK_MONOTONIC */
};

/* The tables of hotplugctl blame (the daemon's side: src/loop/observe-blame.c). */
enum control_blame_group {
        CONTROL_BLAME_SUBSYSTEM,
        CONTROL_BLAME_PROGRAM,
        CONTROL_BLAME_DEVICE,
        CONTROL_BLAME_MODULE,      /* load-modules: loads (count) and their time, per module */
        _CONTROL_BLAME_MAX,
};

/* One row of a blame table, passed to the for_each_blame_row visitor (borrowed for the call). */
struct control_blame_row {
        enum control_blame_group group;
        const char *name;      /* subsystem, program or DEVPATH; "(other)" past the bound */
        uint64_t count;        /* events (subsystem, device) or runs (program) */
        usec_t total;          /* wall time, summed */
        usec_t slowest;        /* the longest one */
        uint64_t slowest_seqnum;
        usec_t order_wait;     /* waiting for earlier events, summed */
        usec_t slot_wait;      /* waiting for a free slot, summed */
        usec_t udev_wait;      /* waiting for udevd's broadcast (after-udev), summed */
        uint64_t failed;       /* of count: events with a failed run, or runs that failed */
};

/* The sums over every event since the daemon started. */
struct control_blame_totals {
        uint64_t events, runs;
        uint64_t failed_events, failed_runs;
        usec_t run_time, order_wait, slot_wait, udev_wait;
};

/* The chain of waits that ended last (hotplugctl blame --critical-chain, ctl/blame.h). */
struct control_blame_chain {
        bool known;            /* an agent ran */
        bool settled;          /* its busy period is over: nothing held */
        uint64_t events;       /* queued in that period */
        usec_t span;           /* the period's first arrival to its end (or now) */
        uint64_t cut_seqnum;   /* the chain goes on to this event, not kept; 0: not cut */
};

/* One link of it, first the event that ended last (borrowed for the call). */
struct control_blame_link {
        uint64_t seqnum, blocker;                   /* blocker: the event it waited for, 0: none */
        const char *action, *subsystem, *devpath;   /* NULL: not kept */
        usec_t at;                                  /* its first agent's start after the period's first arrival */
        usec_t ran;                                 /* its first agent's start to its last agent's end */
        usec_t order_wait, slot_wait, udev_wait;
        uint64_t runs, failed_runs;
        const char *failed, *failed_status;         /* its first failed run; NULL: none */
};

/* What the daemon knows of one device (hotplugctl info); pointers borrowed for the call. */
struct control_device_info {
        const char *devpath;
        const struct devinfo_device *history; /* its last events; NULL: none heard (or forgotten) */
        bool modelled;                        /* the device model has a record of it: */
        struct devcache_entry rec;            /* its bus, driver and legacy variables */
        int present;                          /* in the resync set (believed present): 1, 0; negative errno: not known */
        bool handled;                         /* its add ran in this boot (manager_device_handled()) */
};

/* What settle needs to know. */
struct control_progress {
        uint64_t last_seen;    /* highest SEQNUM the ledger accepted, 0 before any */
        uint64_t lowest_held;  /* lowest SEQNUM queued or running, 0 if none is held */
        bool replaying;        /* --replay: events come from a recording, no kernel uevent is read */
        uint64_t udev_waiting; /* events waiting for udevd's broadcast (after-udev) */
};

struct control_ops {
        /* Counters for "status". */
        void (*status)(void *userdata, struct control_status *ret);
        /* Call @fn once per running agent. */
        void (*for_each_agent)(void *userdata, void (*fn)(const struct control_agent *a, void *arg), void *arg);
        void (*progress)(void *userdata, struct control_progress *ret);
        /* Lowest SEQNUM held (queued or running) on @devpath, as DEVPATH or
         * DEVPATH_OLD; 0 if none.  Optional: without it a device settle
         * waits for every event, as a plain settle does. */
        uint64_t (*lowest_held_on)(void *userdata, const char *devpath);
        /* Does the daemon believe @devpath present (there at its start, or
         * added by an event it received since)?  1 or 0; negative errno: it
         * cannot tell.  Optional: without it "present" settles do not ask. */
        int (*device_known)(void *userdata, const char *devpath);
        /* Read the uevent socket now (a bounded amount; not dispatching is
         * fine).  Return: 1 if it was read to the end, 0 if not (the bound,
         * or reading switched off: queue full; control_notify_input_drained()
         * follows once it is), negative errno on failure. */
        int (*sync_input)(void *userdata);
        /* Stop / restart starting agents; events keep queueing.  0 or negative errno. */
        int (*pause)(void *userdata);
        int (*resume)(void *userdata);
        /* Re-read the configuration.  On failure return negative errno and
         * put the reason (file:line: why) in @err. */
        int (*reload)(void *userdata, char *err, size_t err_size);
        /* Optional: the blame sums, and @fn once per row, each table longest total first. */
        void (*blame_totals)(void *userdata, struct control_blame_totals *ret);
        void (*for_each_blame_row)(void *userdata, void (*fn)(const struct control_blame_row *r, void *arg),
                                   void *arg);
        /* Optional: the gid whose members may use the read-only requests (status,
         * monitor, blame, info; control-group), read at each accept; -1: none. */
        int (*reader_gid)(void *userdata);
        /* Optional, root only: the least severe level logged from now on
         * (syslog 0-7), and agents at once (0: auto, else 1..max-children). */
        int (*set_log_level)(void *userdata, int level);
        int (*set_concurrency)(void *userdata, unsigned n, char *err, size_t err_size);
        /* Optional: the chain of waits that ended last into *@ret, and @fn once per link. */
        void (*blame_chain)(void *userdata, struct control_blame_chain *ret,
                            void (*fn)(const struct control_blame_link *l, void *arg), void *arg);
        /* Optional (hotplugctl info): what is known of @devpath, to @fn; and every DEVPATH
         * known (its history kept, or in the resync set), each once, to @fn, for --export. */
        void (*device_info)(void *userdata, const char *devpath,
                            void (*fn)(const struct control_device_info *d, void *arg), void *arg);
        void (*for_each_device)(void *userdata, void (*fn)(const char *devpath, void *arg), void *arg);
        /* Optional (trigger --skip-handled): every DEVPATH whose add ran in this boot, to @fn. */
        void (*for_each_handled)(void *userdata, void (*fn)(const char *devpath, void *arg), void *arg);
        /* Optional: true while the list is not complete yet (a handover's targeted resync has
         * not planned its adds): "info handled" is then refused with EAGAIN. */
        bool (*handled_pending)(void *userdata);
};

enum control_event_kind {
        CONTROL_EVENT_RECEIVED,   /* valid datagram accounted by the ledger */
        CONTROL_EVENT_GAP,        /* the ledger opened a gap */
        CONTROL_EVENT_OVERFLOW,   /* receive-buffer overflow (ENOBUFS) */
        CONTROL_EVENT_QUEUED,     /* pushed into the scheduler */
        CONTROL_EVENT_FILTERED,   /* left the pipeline without an agent (filter, abort) */
        CONTROL_EVENT_STARTED,    /* an agent program started */
        CONTROL_EVENT_FINISHED,   /* that program ended */
        CONTROL_EVENT_WAITED,     /* about to start, it waited: for another event, a free slot or udevd */
};

/* An event for monitor clients; strings borrowed for the call, NULL if unknown. */
struct control_event {
        enum control_event_kind kind;
        uint64_t seqnum;
        usec_t time;                  /* CLOCK_REALTIME; 0: now */
        const char *action;
        const char *devpath;
        const char *subsystem;
        const char *uuid;             /* SYNTH_UUID */
        enum ledger_verdict verdict;  /* RECEIVED */
        struct ledger_gap gap;        /* GAP */
        pid_t pid;                    /* STARTED */
        const char *program;          /* STARTED, FINISHED */
        const char *name;             /* STARTED, FINISHED: argv[1] */
        const struct uevent *ev;      /* the event, for monitor filters; NULL for GAP, OVERFLOW */
        const char *status;           /* FINISHED: "exit 0", "signal 9 (Killed)", ... */
        usec_t duration_usec;         /* FINISHED */
        uint64_t blocker;             /* WAITED: the event it waited for; 0: a free slot; its own SEQNUM: udevd */
        const char *reason;           /* WAITED: "parent /devices/...", "a free slot (limit N)", "udevd" */
        usec_t waited_usec;           /* WAITED: since its arrival */
        /* For monitors that asked for "properties" ("env" records), borrowed:
         * RECEIVED: the kernel's KEY=VALUE entries in its order; QUEUED: the
         * handler additions that are new or change a kernel value; STARTED:
         * the agent's environment, and its arguments in argv. */
        const char *const *env;
        size_t n_env;
        const char *const *argv;      /* STARTED */
        size_t n_argv;
};

/**
 * control_new() - listen on the control socket.
 * @event: the manager's loop (a reference is taken)
 * @path: socket path, e.g. HOTPLUGD_RUNDIR "/control" (borrowed; copied).
 *        Its parent directory is created (0755) if missing; a stale socket
 *        is replaced, a live one (a daemon answers) is -EADDRINUSE.
 * @listen_fd: an already bound listening SOCK_SEQPACKET socket to adopt
 *        (consumed, even on failure), or -1 to create one at @path
 * @ops: manager callbacks (borrowed; must outlive the control)
 * @userdata: passed to every op
 * @ret: the control, owned by the caller (control_free())
 * Return: 0 or negative errno.
 */
int control_new(sd_event *event, const char *path, int listen_fd, const struct control_ops *ops, void *userdata,
                struct control **ret);

/* Close every client and the socket, unlink the path if we created it. Accepts NULL; returns NULL. */
struct control *control_free(struct control *c);

/* The listening socket (borrowed), e.g. for a file-descriptor store. */
int control_fd(const struct control *c);

/* Clients connected now (for tests and status). */
size_t control_clients(const struct control *c);

/**
 * control_notify_event() - tell monitor clients about @e.
 * @c: control (may be NULL: then nothing happens)
 * @e: the event (borrowed for the call)
 */
void control_notify_event(struct control *c, const struct control_event *e);

/**
 * control_wants_env() - does any monitor client want the entries of @kind's events?
 * @c: control (may be NULL: then false)
 * Return: true if a monitor asked for properties (and, for the kinds only
 * --processed shows, for processed events): only then is it worth building
 * control_event.env for control_notify_event().
 */
bool control_wants_env(const struct control *c, enum control_event_kind kind);

/**
 * control_notify_processed() - an event left the pipeline.
 * @c: control (may be NULL)
 * @seqnum: its SEQNUM
 *
 * Call after the event is no longer held (finished, filtered, aborted,
 * dropped as a duplicate), so that ops->progress() no longer counts it.
 * Settle waiters are answered here.
 */
void control_notify_processed(struct control *c, uint64_t seqnum);

/* The manager read the uevent socket until it was empty (may answer settle waiters). */
void control_notify_input_drained(struct control *c);

/**
 * control_notify_uuid() - an event with SYNTH_UUID=@uuid left the pipeline.
 * @c: control (may be NULL)
 * @uuid: the value (borrowed); anything not a UUID is ignored
 *
 * Call for every such event whatever became of it (ran, filtered, aborted).
 */
void control_notify_uuid(struct control *c, const char *uuid);
