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

#include "bounds.h"

struct uevent;
struct envbuf;
struct handler_chain;

struct handler_config {
        const char *sysfs_root;   /* "/sys" unless testing */
        const char *handler_dir;  /* external *.so handlers, NULL: none */
        bool pass_all;            /* --all: no handler may filter an event out */
        bool input_strip_quotes;  /* input: NAME/PHYS without quotes (2.6.14 compat) */
};

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
struct handler_chain *handler_chain_free(struct handler_chain *c);

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
