/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdarg.h>

/*
 * Internals shared by the handler registry (pipeline/handlers.c), the loader
 * of external handlers (pipeline/handler-loader.c) and the built-in handlers
 * (src/handlers/).  Not installed: external handlers only see the opaque
 * types of <hotplugd/handler.h>.
 */

#include <stdbool.h>
#include <stddef.h>

#include <hotplugd/handler.h>

#include "shared/envbuf.h"
#include "shared/macro.h"
#include "pipeline/devmodel.h"
#include "pipeline/handlers.h"
#include "uevent/uevent.h"

/* The event as handlers see it: valid for one handler_chain_run() call. */
struct hotplugd_event {
        const struct uevent *ev;
        int sysfs_fd;                       /* sysfs root (O_PATH), -1 if unavailable */
        const struct handler_config *cfg;
        /* The device as the model sees it at this event (pipeline/devmodel.h),
         * and the model's store, for the records of other devices. */
        const struct devmodel_event *dev;
        struct devcache *cache;
        /* Legacy variables learnt from sysfs: recalled from the device's
         * record (recalled != NULL: do not read sysfs), or collected in @learn. */
        const char *recalled;
        size_t recalled_size;
        struct envbuf *learn;
};

struct hotplugd_env {
        struct envbuf *buf;
        bool overflow;                      /* an add hit the bound: the event is aborted */
};

/* Host services (also called directly by built-ins). */
int handler_env_add(struct hotplugd_env *env, const char *key, const char *value);
int handler_env_addf(struct hotplugd_env *env, const char *key, const char *fmt, ...) _printf_(3, 4);
/* format_bounded() into @buf; a value too long for it overflows @env like a full environment. */
int handler_env_vformat(struct hotplugd_env *env, char *buf, size_t size, const char *fmt, va_list ap)
        _printf_(4, 0);

/**
 * handler_chain_add() - validate and initialise one handler, append it.
 * @c: chain
 * @ops: the handler (borrowed; must outlive the chain, i.e. static data of
 *       the binary or of @dl)
 * @dl: dlopen() handle to dlclose() at free, or NULL for a built-in; on
 *      failure the caller keeps it
 * @file: path for log lines (copied), NULL for a built-in
 *
 * Checks abi, size, id and the subsystem list, then calls init().
 * Return: 0, or negative errno (logged with the reason) when refused.
 */
int handler_chain_add(struct handler_chain *c, const struct hotplugd_handler *ops, void *dl, const char *file);

/*
 * Takes one handler handler_load_dir() loaded: @ops lives in @dl; on success
 * @dl is the callee's, on failure (negative errno) the loader dlclose()s it.
 * @file is the path, borrowed for the call.
 */
typedef int (*handler_accept_fn)(void *userdata, const struct hotplugd_handler *ops, void *dl, const char *file);

/**
 * handler_load_dir() - load every eligible *.so of @dir, in strcmp order.
 * @dir: the handler directory
 * @accept: called with each loaded handler (e.g. to add it to a chain)
 * @userdata: passed to @accept
 *
 * Files not owned by root, writable by group or others, not regular, or
 * in such a directory are refused with a log line; so are files without
 * the HOTPLUGD_HANDLER_SYMBOL symbol or that @accept refuses.
 * Return: number of handlers loaded, or negative errno if @dir cannot be
 * read at all (a missing directory is 0).
 */
int handler_load_dir(const char *dir, handler_accept_fn accept, void *userdata);

/* dlclose() a handle from handler_load_dir() (NULL: no-op). */
void handler_dlclose(void *dl);

/* Built-in helpers (src/handlers/builtin.c). */
extern const struct hotplugd_handler *const builtin_handlers[];
extern const size_t builtin_handlers_count;
