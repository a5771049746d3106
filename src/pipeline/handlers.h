/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The handler chain: kset-ops semantics (filter, name, add_env) applied to
 * each event before it is queued.  Built-in handlers come from a static
 * table; external ones are loaded from the handler directory (see
 * include/hotplugd/handler.h for the ABI).
 */

#include <stdbool.h>
#include <stddef.h>

#include "pipeline/devmodel.h"
#include "shared/bounds.h"
#include "shared/macro.h"

struct uevent;
struct envbuf;
struct handler_chain;

/* What a usb event's DEVICE names (usb-device-path). */
enum usb_device_path {
        USB_DEVICE_PATH_PROC, /* /proc/bus/usb/BBB/DDD, as 2.6 kernels had it (gone today) */
        USB_DEVICE_PATH_DEV,  /* /dev/bus/usb/BBB/DDD, the same node where today's kernels have it */
};

struct handler_config {
        const char *sysfs_root;   /* "/sys" unless testing */
        const char *handler_dir;  /* external *.so handlers, NULL: none */
        bool pass_all;            /* --all: no handler may filter an event out */
        bool input_strip_quotes;  /* input: NAME/PHYS without quotes (2.6.14 compat) */
        /* Per-subsystem filter rules on top of the defaults, see filter-policy.h
         * ("queues=drop,scsi=keep"); NULL: defaults only. */
        const char *filter_policy;
        bool firmware_loader;     /* built-in firmware loader (off by default) */
        const char *firmware_path;/* ':'-separated search path; NULL: HP_FIRMWARE_PATH_DEFAULT */
        size_t cache_size;        /* DEVPATH cache entries; 0: HP_DEVCACHE_DEFAULT */
        enum usb_device_path usb_device_path; /* usb: what DEVICE names */
        /* --dry-run, a dry-run replay, hotplugctl test: handlers write nothing
         * (to sysfs or anywhere) and say what they would have done. */
        bool dry_run;
};

#define HP_FIRMWARE_PATH_DEFAULT "/lib/firmware/updates:/lib/firmware"
/* Added (=1) to an "add" with FIRMWARE the firmware loader found no file for:
 * once its agents are done, a request still open is failed (loop/observe-firmware.c). */
#define HANDLER_FIRMWARE_MISSING_KEY "HOTPLUGD_FIRMWARE_MISSING"

enum handler_verdict {
        HANDLER_RUN = 1,     /* keep the event: run the agent */
        HANDLER_FILTERED = 0 /* a filter() dropped it */
};

/**
 * handler_chain_new() - build the chain (built-ins, then external handlers).
 * @cfg: configuration (borrowed for the call; strings copied)
 * @ret: the chain, owned by the caller
 * Return: 0 or negative errno.  A broken external handler is logged and
 * skipped, never an error here.
 */
int handler_chain_new(const struct handler_config *cfg, struct handler_chain **ret);

/**
 * handler_chain_take_model() - a reload: @to goes on with what @from knows of the devices.
 * @to: the new chain (borrowed)
 * @from: the chain it replaces (borrowed; freed next)
 *
 * The device records (what each device's events said, the seeding at
 * start) and the binds that ended probes move to @to when both chains
 * read the same sysfs root and keep as many records (handler-cache);
 * otherwise @to starts empty and this says so (one log line).
 */
void handler_chain_take_model(struct handler_chain *to, struct handler_chain *from);
struct handler_chain *handler_chain_free(struct handler_chain *c);
DEFINE_FREEP(struct handler_chain, handler_chain_free)

/**
 * handler_chain_run() - apply the chain to one event.
 * @c: chain
 * @ev: the parsed event (borrowed, const)
 * @env: receives the additions (borrowed; initialised by the caller)
 * @name: receives argv[1] (HP_NAME_MAX bytes); left empty for "SUBSYSTEM"
 *
 * A handler whose hook returns an error other than -ENOMEM is disabled
 * (with one log line) and the event goes on without it: a valid event is
 * never lost to a broken handler.
 *
 * Return: HANDLER_RUN, HANDLER_FILTERED, or -ENOMEM when a handler
 * overflowed the environment bound (the caller aborts this event only).
 */
int handler_chain_run(struct handler_chain *c, const struct uevent *ev, struct envbuf *env,
                      char name[HP_NAME_MAX]);

/* Who decided what, for hotplugctl test (all borrowed from the chain). */
struct handler_trace {
        const char *filtered_by;  /* handler id, "policy" or "pass-all"; NULL: kept by default */
        const char *named_by;     /* handler id whose name() set argv[1], or NULL */
        int from_cache;           /* legacy variables came from the DEVPATH cache */
        /* The id of the handler whose add_env() gave entry i of the
         * environment, for each of its entries (the last to set a key). */
        const char *added_by[HP_ENV_ADD_MAX_VARS];
};

/* handler_chain_run() that also fills @trace (may be NULL). */
int handler_chain_run_traced(struct handler_chain *c, const struct uevent *ev, struct envbuf *env,
                             char name[HP_NAME_MAX], struct handler_trace *trace);

/**
 * handler_chain_seed() - tell the device model of a device present at start.
 * @c: chain
 * @dirfd: the device's directory (borrowed for the call)
 * @devpath: its DEVPATH (borrowed for the call)
 *
 * devmodel_seed() into the chain's store (pipeline/devmodel.h).
 * Return: 1 seeded, 0 nothing to keep, -ENOSPC the store is full, -E2BIG.
 */
int handler_chain_seed(struct handler_chain *c, int dirfd, const char *devpath);

/**
 * handler_chain_model_peek() - the device model's record of @devpath (hotplugctl info).
 * @ret: the record, borrowed from the chain until its next event
 * Return: 1 if there is one, 0 if not; its place in the store's LRU order is left alone.
 */
int handler_chain_model_peek(const struct handler_chain *c, const char *devpath, struct devcache_entry *ret);

/**
 * handler_chain_probe() - what the stream says now of the driver @ev was sent under.
 * @c: chain
 * @ev: a dup'd event (borrowed); its physical device is the PHYSDEVPATH the
 *      handlers added at its intake (none: DEVMODEL_PROBE_NONE)
 * @driver: receives the driver for DEVMODEL_PROBE_BOUND (@size bytes), or NULL
 *
 * devmodel_probe_at() on the chain's model, for an event about to start:
 * a class device's event sent while its physical device's probe ran (the
 * kernel sends the device's "bind" after probe() returned, so after the
 * children the probe made) gets the driver the bind names, even when the
 * device was gone from sysfs by the time hotplugd read the event.
 * Return: enum devmodel_probe.
 */
enum devmodel_probe handler_chain_probe(const struct handler_chain *c, const struct uevent *ev, char *driver,
                                        size_t size);

struct handler_info {
        const char *id;       /* borrowed from the chain */
        const char *file;     /* shared object path, NULL for a built-in */
        bool builtin;
        bool disabled;        /* init failed or a hook returned an error */
};

/* Number of handlers (built-in and loaded) and the description of handler @i. */
size_t handler_chain_count(const struct handler_chain *c);
int handler_chain_info(const struct handler_chain *c, size_t i, struct handler_info *ret);
