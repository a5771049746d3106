/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Every bound hotplugd enforces, in one place.  Each one is also listed in
 * hotplugd(8) under LIMITS; change both together.
 */

/* Largest datagram accepted from the kernel (the kernel's own buffer is
 * UEVENT_BUFFER_SIZE = 2048 bytes of environment plus the header). */
#define HP_UEVENT_MAX_SIZE 8192

/* Most KEY=VALUE entries in one kernel message (kernel: UEVENT_NUM_ENVP = 64). */
#define HP_UEVENT_MAX_VARS 64

/* Longest KEY of a KEY=VALUE entry in a kernel message, in bytes (the
 * kernel's own keys are short: DEVPATH_OLD, SYNTH_ARG_<name>). */
#define HP_UEVENT_KEY_MAX 255

/* Bytes the handler chain may add to one event's environment, including
 * the "KEY=VALUE\0" framing, and the number of variables it may add.  Going
 * past either aborts that event, like the kernel's -ENOMEM did. */
#define HP_ENV_ADD_MAX_BYTES 2048
#define HP_ENV_ADD_MAX_VARS 32

/* Longest argv[1] (handler name() result or SUBSYSTEM). */
#define HP_NAME_MAX 64

/* Events held in the daemon (queued plus running).  At the limit hotplugd
 * stops reading the netlink socket, so further events wait in the kernel's
 * socket buffer; reading resumes below HP_QUEUE_RESUME.  If that buffer
 * overflows too, the loss is counted as an overflow gap by the ledger. */
#define HP_QUEUE_MAX_DEFAULT 65536
#define HP_QUEUE_MAX_LIMIT 1048576

/* Bytes the daemon holds for events at most (max-queue-bytes): the queued
 * events (the scheduler's window and the backlog), the running jobs and
 * their output buffers, and the handover journal.  At the budget hotplugd
 * stops reading the netlink socket as at max-queue ("overloaded"); the
 * kernel keeps what fits in the socket buffer and drops the rest with
 * ENOBUFS, which resync recovers once reading goes on.  Reading goes on
 * when the bytes fell to three quarters of the budget.  The default holds
 * a coldplug of some 10,000 events and keeps a daemon under 16 MiB of
 * memory on a small board; the least leaves room for a few backlog chunks. */
#define HP_QUEUE_BYTES_DEFAULT (8 * 1024 * 1024)
#define HP_QUEUE_BYTES_MIN (512 * 1024)
#define HP_QUEUE_BYTES_LIMIT (1024ULL * 1024 * 1024 * 1024)
/* One "overloaded" warning (and its "overload over" notice) at most in this
 * time; the overloads between are logged at debug level and counted in the
 * next warning (status counts them all). */
#define HP_OVERLOAD_LOG_USEC (60 * 1000000ULL)
/* The most one more event can add to the bytes held: a chunk of the
 * backlog (64 KiB, taken whole) or its copy in the window (the largest
 * datagram, the handler additions, argv[1], offsets and path nodes: under
 * 20 KiB), and its journal record (8 KiB).  Reading stops while the bytes
 * held are within this of the budget, so reading never passes the budget. */
#define HP_QUEUE_BYTES_EVENT_MAX (96 * 1024)

/* Queued events the dependency scheduler holds at most (or twice
 * max-children, if that is more); the rest of the queue waits behind it in
 * the backlog, compactly, and moves in, lowest SEQNUM first, as events are
 * done.  Late events (a SEQNUM below what waits) go in at once.  An event
 * in the window costs about 670 bytes (its parsed copy and the scheduler's
 * item with a link per path level), one in the backlog 45 to 212 (what
 * sets it apart from an earlier event of its device, or all of it).  512 is
 * 25 times the default max-children of a small machine (the lookahead for
 * unrelated events to run beside a long chain of one device's) and keeps
 * a 10,000-event burst's peak RSS at about 4 MiB, 0.35 MiB below what 1024
 * did (4096: 1.6 MiB more again). */
#define HP_QUEUE_WINDOW 512

/* Concurrent agents: default min(2 * CPUs + 16, HP_CHILDREN_MAX). */
#define HP_CHILDREN_MAX 2048

/* Adaptive concurrency (pipeline/concurrency.h): while events wait for a slot,
 * the running agents are looked at to tell which ones sleep: a program first
 * HP_CONCURRENCY_LOOK_FIRST_USEC after its start (one that ends sooner, a
 * process start and little more, is never looked at: a static no-op agent
 * lives about 1 ms on a small machine, and a wake-up to look at it costs
 * more than it could tell), then every HP_CONCURRENCY_LOOK_USEC while it
 * sleeps, twice as long after each look that found it awake, up to
 * HP_CONCURRENCY_LOOK_MAX_USEC. */
#define HP_CONCURRENCY_LOOK_USEC (1 * 1000)
#define HP_CONCURRENCY_LOOK_FIRST_USEC (2 * 1000)
#define HP_CONCURRENCY_LOOK_MAX_USEC (16 * 1000)

/* Agent run time before SIGTERM to its process group, and the grace before SIGKILL. */
#define HP_TIMEOUT_DEFAULT_SEC 180
#define HP_TIMEOUT_MAX_SEC 86400
#define HP_KILL_GRACE_SEC 5

/* after-udev: how long an event's agents wait for udevd's broadcast of it at
 * most, counted from the event's arrival (udevd kills a worker after 180 s;
 * its events take milliseconds to a few seconds).  Confirmations udevd
 * broadcast before hotplugd read the kernel's copy are kept, at most this
 * many; older ones are forgotten first. */
#define HP_AFTER_UDEV_TIMEOUT_DEFAULT 30
/* ... an event waits while udevd broadcasts others (it works through a
 * backlog), but at most this many after-udev-timeouts from its arrival
 * (by default 180 s: udevd's own limit for an event's worker). */
#define HP_AFTER_UDEV_BOUND_FACTOR 6
#define HP_UDEV_EARLY_MAX 1024
/* after-udev while udevd's control socket is missing: how often an event
 * makes hotplugd look for it again (libudev hears udevd only once it exists). */
#define HP_UDEV_PROBE_USEC (1 * 1000 * 1000)

/* A class device's event read during its physical device's probe (the
 * device model, pipeline/devmodel.h): the last HP_PROBE_BINDS binds that
 * ended a probe are remembered (with a DEVPATH of at most
 * HP_PROBE_BIND_PATH_MAX bytes; a longer one is not), after the device's
 * own record too; while such an event waits for the probe's end, the
 * source is read again HP_PROBE_LOOK_USEC after the last look (a read that
 * stopped at HP_INPUT_PER_WAKEUP as the socket emptied gets no wakeup). */
#define HP_PROBE_BINDS 32
#define HP_PROBE_BIND_PATH_MAX 512
#define HP_PROBE_LOOK_USEC (10 * 1000)

/* Longest agent output line kept for the log; longer lines are split. */
#define HP_OUTPUT_LINE_MAX 1024

/* Most bytes of one agent's output read per wakeup: a flooding agent cannot
 * keep the event loop (timeouts, other events, the watchdog) waiting. */
#define HP_OUTPUT_READ_MAX (64 * 1024)
/* Output pipes kept open between agent runs for the next ones (two fds each). */
#define HP_OUTPUT_PIPES_KEPT 8
/* A program that could not be started for want of resources (a process or
 * a descriptor: spawn_error_resources()) is tried again after a wait that
 * starts at the first and doubles with each failure up to the second; its
 * event keeps its place, and the tries go on until one succeeds or the
 * daemon stops. */
#define HP_SPAWN_RETRY_MIN_USEC (10 * 1000)
#define HP_SPAWN_RETRY_MAX_USEC (1000 * 1000)

/* Most output lines logged per agent run in each window of
 * HP_OUTPUT_LOG_INTERVAL_USEC; the rest are counted and reported. */
#define HP_OUTPUT_LOG_LINES_MAX 200
#define HP_OUTPUT_LOG_INTERVAL_USEC (5 * 1000000ULL)

/* The daemon's log never blocks it: lines the journal (or stderr) does not
 * take at once wait, in order, in a buffer of this many bytes (about 400
 * lines) and go out when it takes them again; lines that do not fit are
 * dropped, counted, and reported in one line once the buffer drained.  At
 * exit, what waits gets HP_LOG_EXIT_FLUSH_USEC to go out. */
#define HP_LOG_BUFFER_MAX (128 * 1024)
#define HP_LOG_EXIT_FLUSH_USEC (1000 * 1000ULL)
/* Largest journal entry, in bytes: a field value that would not fit is cut
 * and ends in "...[truncated]".  Far below a datagram's limit, so no entry
 * needs journald's memfd form. */
#define HP_LOG_ENTRY_MAX (12 * 1024)

/* hotplug.d multiplexer: most scripts run per event (NAME/ plus default/). */
#define HP_HOTPLUG_D_MAX_FILES 256
/* hotplug.d files refused for their owner or mode that are remembered, so
 * that each is logged once and not once per event (the oldest is forgotten). */
#define HP_HOTPLUG_D_REFUSED_MAX 256
/* Symbolic links a trusted path may pass through (trust_open_at()), as the kernel's own bound. */
#define HP_TRUST_MAX_LINKS 40
/* Instances that may die processing one datagram, or starting a queued event's agent, before the next one
 * sets it aside (the poison guard). */
#define HP_INTAKE_TRIES_MAX 2

/* Netlink receive buffer requested by default (SO_RCVBUFFORCE). */
#define HP_RCVBUF_DEFAULT (128 * 1024 * 1024)

/* At most one log line per this many microseconds for each class of
 * rejected datagram; the rest are counted and summarised. */
#define HP_REJECT_LOG_INTERVAL_USEC (5 * 1000000ULL)

/* Shutdown: how long running agents may go on after SIGTERM/SIGINT. */
#define HP_SHUTDOWN_GRACE_SEC 10

/* Configuration file: longest line (bytes, without the newline) and largest
 * file accepted.  Longer lines or larger files are rejected as errors. */
#define HP_CONF_LINE_MAX 1024
#define HP_CONF_FILE_MAX (64 * 1024)
/* Control socket (hotplugctl): clients connected at once (more are told
 * so and closed), longest request packet (longer ones get an error),
 * longest reply record, bytes of replies queued for one client before a
 * reader that cannot keep up (a slow monitor) is dropped, SYNTH_UUIDs one
 * client may wait for at once, and the longest settle or wait timeout. */
#define HP_CONTROL_CLIENTS_MAX 32
#define HP_CONTROL_REQUEST_MAX 4096
#define HP_CONTROL_RECORD_MAX 4096
#define HP_CONTROL_OUTPUT_MAX (1024 * 1024)
#define HP_CONTROL_UUIDS_MAX 65536
/* Least time between two "progress" records of one wait-uuids. */
#define HP_CONTROL_PROGRESS_USEC (100 * 1000ULL)
/* Subsystem matches, and property matches, one monitor may ask for (each kind). */
#define HP_CONTROL_MONITOR_MATCHES_MAX 64
#define HP_CONTROL_TIMEOUT_MAX_SEC 86400
/* hotplugctl trigger: uevent files written at once (--jobs), at most and by
 * default; each write is the kernel building and sending one event, so a
 * few writers cover a machine's CPUs and more only wait on each other. */
#define HP_TRIGGER_JOBS_MAX 16
#define HP_TRIGGER_JOBS_DEFAULT 4
/* hotplugctl trigger's walk of the device tree: directories deep (sysfs
 * paths hold ~20; deeper is a loop of bind mounts, not devices), and the
 * devices found before the first uevent files are written, doubling up to
 * the most written at once between two watch-uuids requests. */
#define HP_TRIGGER_WALK_DEPTH_MAX 64
#define HP_TRIGGER_PUBLISH_MAX 64
/* Datagrams read from the uevent socket per wakeup of the loop: a sender
 * that keeps the socket full (a flood of events, or of datagrams the trust
 * policy drops) cannot keep agents' exits, timeouts and hotplugctl waiting. */
#define HP_INPUT_PER_WAKEUP 64
/* Packets read and dropped from a refused control client (not root, or
 * too many clients) before it is closed, so that it may read why; a client
 * that keeps sending cannot hold the daemon longer than this. */
#define HP_CONTROL_REFUSE_DRAIN_MAX 64
/* Devices whose sysfs-derived legacy variables are remembered for later
 * events (remove after the device is gone), and the bytes one entry may
 * take (DEVPATH plus variables); the least recently used entry is evicted. */
#define HP_DEVCACHE_DEFAULT 1024
#define HP_DEVCACHE_MAX 65536
#define HP_DEVCACHE_SLOT_BYTES 1024

/* hotplugctl info: what the daemon remembers per device (pipeline/devinfo.h):
 * its last HP_INFO_EVENTS events (SEQNUM, action, times, waits, programs),
 * at most HP_INFO_RUNS programs of each (more are only counted), each
 * program path or wait reason cut at HP_INFO_TEXT_MAX bytes; as many devices
 * as the device cache holds (handler-cache), and HP_INFO_BYTES bytes in all:
 * past either the least recently heard device is forgotten. */
#define HP_INFO_EVENTS 8
#define HP_INFO_RUNS 16
#define HP_INFO_TEXT_MAX 256
#define HP_INFO_BYTES (4 * 1024 * 1024)

/* External handlers loaded from the handler directory, at most. */
#define HP_HANDLERS_MAX 64

/* Largest firmware image the built-in loader copies into the kernel. */
#define HP_FIRMWARE_MAX_BYTES (64 * 1024 * 1024)
/* Firmware names hotplugctl status lists as missing (the requests failed at
 * once, loop/observe-firmware.c), each once, and the longest kept; past
 * these a failed request is only counted. */
#define HP_FIRMWARE_MISSING_NAMES 32
#define HP_FIRMWARE_NAME_MAX 256

/* Longest sysfs attribute value a handler reads in one call. */
#define HP_SYSFS_ATTR_MAX 4096

/* Per-subsystem filter rules (built-in defaults plus configured ones). */
#define HP_FILTER_RULES_MAX 64
/* Recordings: largest record payload (a datagram of HP_UEVENT_MAX_SIZE plus
 * its times fits), and the longest text (agent path, wait reason) in one. */
#define HP_RECORD_MAX 16384
#define HP_RECORD_TEXT_MAX 4096

/* Replay: the longest pause kept between two recorded events (a recording
 * appended to across hours or reboots replays without the idle time). */
#define HP_REPLAY_MAX_DELAY_USEC (10 * 1000000ULL)

/* Replay with --dry-run: the longest recorded agent time (one run, or the
 * sum of one event's runs) an event is held for; longer ones (damaged or
 * forged recordings) are cut to it, with a log line.  It is the longest an
 * agent can run: HP_TIMEOUT_MAX_SEC plus HP_KILL_GRACE_SEC. */
#define HP_REPLAY_MAX_RUN_USEC ((86400 + 5) * 1000000ULL)

/* Replay --speed: at most this many times the recorded pace, and at least
 * 1/HP_REPLAY_SLOWDOWN_MAX of it (0 means no waiting at all). */
#define HP_REPLAY_SPEED_MAX 1000000
#define HP_REPLAY_SLOWDOWN_MAX 1000

/* Replay: bytes of a damaged region searched for the next valid record in
 * one turn of the event loop (signals, agents and clients are served
 * between turns). */
#define HP_REPLAY_RESYNC_STEP (1024 * 1024)

/* hotplugctl timeline: most agent runs and events read from one recording
 * (the rest is ignored, with a note), and most lanes drawn in the SVG (the
 * remaining lanes are merged into the last one). */
#define HP_TIMELINE_MAX_RUNS 100000
#define HP_TIMELINE_MAX_EVENTS 200000
#define HP_TIMELINE_MAX_LANES 400

/* hotplugctl blame of the running daemon: names the daemon sums under in
 * each table (subsystems, programs, devices; what comes later under a new
 * name is summed in one row "(other)"), and the events whose end is
 * remembered to tell a wait for order from a wait for a free slot (an event
 * that waited for one done longer ago counts its whole wait as order). */
#define HP_BLAME_NAMES_MAX 1024
#define HP_BLAME_RECENT_DONE 256

/* hotplugctl blame --critical-chain: links shown at most, and the events the
 * daemon remembers (SEQNUM, times, waits, names) to follow a chain back
 * through: about 200 bytes each; a chain that goes back further is cut. */
#define HP_BLAME_CHAIN_LINKS 32
#define HP_BLAME_CHAIN_EVENTS 128

/* Built-in module loading (load-modules, loop/kmod-load.c): a MODALIAS
 * the loader takes is at most HP_MODALIAS_MAX - 1 bytes of printable
 * ASCII without blanks (the kernel's UEVENT_BUFFER_SIZE: no longer one can
 * come; an x86 cpu's lists its features, hundreds of bytes); HP_KMOD_THREADS
 * loader threads, each with its own libkmod
 * context; aliases in flight (looked up or loading) at most (an event past
 * that starts its agents without a load, counted); the modules one alias
 * may name that are followed (more are not loaded, counted); the longest
 * module name (the kernel's MODULE_NAME_LEN is 56). */
#define HP_MODALIAS_MAX 2048
#define HP_KMOD_THREADS 4
#define HP_KMOD_ALIASES_MAX 1024
#define HP_KMOD_MODULES_PER_ALIAS 16
#define HP_KMOD_NAME_MAX 64

/* Supplementary groups of a control client looked at, at most, for control-group
 * (the kernel's NGROUPS_MAX). */
#define HP_CONTROL_PEER_GROUPS_MAX 65536

/* Resync after a receive-buffer overflow: devices the daemon remembers as
 * present (more are not remembered; a resync then sends them `add`), the
 * deepest sysfs directory walked, uevent files one pass writes at most (the
 * rest are skipped and counted), writes or synthesised removes per turn of
 * the event loop and the time one turn may take, the quiet time after the
 * last overflow before a pass starts, the longest a pass is put off by
 * overflows that keep coming, the longest wait before the next pass
 * when passes keep seeing overflows (the wait doubles each time), and the
 * removes-only passes in a row, each after reading the socket to the end,
 * that try again to give a lost SEQNUM to removes a pass could not place. */
#define HP_RESYNC_DEVICES_MAX 262144
#define HP_RESYNC_DEPTH_MAX 64
#define HP_RESYNC_WRITES_MAX 65536
#define HP_RESYNC_BATCH 64
#define HP_RESYNC_TURN_USEC (10 * 1000ULL)
#define HP_RESYNC_DELAY_USEC (100 * 1000ULL)
#define HP_RESYNC_DELAY_MAX_USEC (5 * 1000000ULL)
#define HP_RESYNC_BACKOFF_MAX_USEC (300 * 1000000ULL)
#define HP_RESYNC_PLACE_TRIES 4

/* The handover file (recovery/handover-file.h): its largest size in bytes
 * (a larger one is refused), and the longest DEVPATH and SUBSYSTEM a
 * device record may hold (longer ones are left out when it is written). */
#define HP_HANDOVER_FILE_MAX (256 * 1024 * 1024)
#define HP_HANDOVER_DEVPATH_MAX 4095
#define HP_HANDOVER_SUBSYSTEM_MAX 64

/* hotplug-dir usermaps (pipeline/usermap.h): longest map or blacklist line
 * (bytes, without the newline; a longer one is reported and skipped, read
 * no further than this), most bytes read of one file (the rest is
 * ignored, reported), map files read (usb.usermap, usb.handmap and the
 * lexically first of usb/ *.usermap) and blacklist files, entries kept
 * over all maps (24 bytes each; each distinct module name is stored once),
 * longest module or script name a map may give,
 * blacklisted names, malformed lines reported one by one per file (the
 * rest are counted), and the matches of one event acted on. */
#define HP_USERMAP_LINE_MAX 512
#define HP_USERMAP_FILE_MAX (4 * 1024 * 1024)
#define HP_USERMAP_FILES_MAX 256
#define HP_USERMAP_ENTRIES_MAX 16384
#define HP_USERMAP_NAME_MAX 63
#define HP_USERMAP_BLACKLIST_MAX 1024
#define HP_USERMAP_ERRORS_MAX 16
#define HP_USERMAP_MATCHES_MAX 64
