/* SPDX-License-Identifier: MIT */
#ifndef HOTPLUGD_HANDLER_H
#define HOTPLUGD_HANDLER_H

/*
 * <hotplugd/handler.h> - the hotplugd handler ABI.
 *
 * A handler mirrors the 2.6 kernel's struct kset_hotplug_ops: for each
 * kernel uevent of a subsystem it may
 *   filter()   keep or drop the event (no agent runs for a dropped event),
 *   name()     choose argv[1] of the agent (default: SUBSYSTEM),
 *   add_env()  append variables to the agent's environment, into a bounded
 *              builder that returns -ENOMEM when full (the event is then
 *              aborted, as the kernel's add_hotplug_env_var() did).
 * All hooks are optional.  An external handler is a shared object in the
 * handler directory that exports one object of type struct hotplugd_handler
 * under the name HOTPLUGD_HANDLER_SYMBOL ("hotplugd_handler_v1").  hotplugd
 * loads it with dlopen(RTLD_NOW | RTLD_LOCAL), checks .abi and .size, and
 * gives it a struct hotplugd_host: every service of the daemon is reached
 * through the host's function pointers, the daemon exports no symbols.
 *
 * Ownership: events, environments and the host are borrowed for the call
 * (the host for the handler's lifetime); a handler keeps no pointer to an
 * event or environment after its hook returns.  Strings returned by the
 * accessors live as long as the event.
 *
 * This header is C89 clean; see hotplugd-handler(3).
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Incompatible changes bump the number and the symbol name together. */
#define HOTPLUGD_HANDLER_ABI 1
#define HOTPLUGD_HANDLER_SYMBOL "hotplugd_handler_v1"

/* Define the one exported handler object: HOTPLUGD_HANDLER_EXPORT = { ... }; */
#if defined(__GNUC__) && __GNUC__ >= 4
#define HOTPLUGD_HANDLER_EXPORT \
        __attribute__((visibility("default"))) const struct hotplugd_handler hotplugd_handler_v1
#define HOTPLUGD_PRINTF_(a, b) __attribute__((format(printf, a, b)))
#else
#define HOTPLUGD_HANDLER_EXPORT const struct hotplugd_handler hotplugd_handler_v1
#define HOTPLUGD_PRINTF_(a, b)
#endif

/* filter() verdicts. */
#define HOTPLUGD_DROP 0
#define HOTPLUGD_KEEP 1

/* Log priorities (the syslog levels). */
#define HOTPLUGD_LOG_ERR 3
#define HOTPLUGD_LOG_WARNING 4
#define HOTPLUGD_LOG_NOTICE 5
#define HOTPLUGD_LOG_INFO 6
#define HOTPLUGD_LOG_DEBUG 7

/* Longest argv[1] name() may produce, including the terminating NUL. */
#define HOTPLUGD_NAME_MAX 64

/* One kernel uevent (opaque, read-only). */
struct hotplugd_event;
/* The bounded environment builder of one event (opaque). */
struct hotplugd_env;

/*
 * Services of the daemon.  Each handler gets its own host; it is valid from
 * init() until done() returns.  A newer daemon may append members: test
 * host->size before using a member added after ABI 1.
 */
struct hotplugd_host {
        unsigned int abi;   /* HOTPLUGD_HANDLER_ABI */
        unsigned int size;  /* sizeof(struct hotplugd_host) of the daemon */

        /* One log line, prefixed with the handler's id; never write to stderr yourself. */
        void (*log)(const struct hotplugd_host *host, int priority, const char *format, ...)
                HOTPLUGD_PRINTF_(3, 4);

        /* Value of kernel key @key (without "KEY="), or NULL. */
        const char *(*event_get)(const struct hotplugd_event *ev, const char *key);
        const char *(*event_action)(const struct hotplugd_event *ev);
        const char *(*event_devpath)(const struct hotplugd_event *ev);
        const char *(*event_subsystem)(const struct hotplugd_event *ev);
        /* SEQNUM as the kernel sent it: decimal digits of a 64-bit number. */
        const char *(*event_seqnum)(const struct hotplugd_event *ev);
        /* Kernel entry @index as "KEY=VALUE", in the kernel's order; NULL past the end. */
        const char *(*event_entry)(const struct hotplugd_event *ev, unsigned int index);

        /*
         * Append KEY=VALUE (a key already added is replaced).  Return 0,
         * -EINVAL for a key outside [A-Za-z_][A-Za-z0-9_]*, or -ENOMEM when
         * the bound is reached: return that -ENOMEM from add_env().
         */
        int (*env_add)(struct hotplugd_env *env, const char *key, const char *value);
        int (*env_addf)(struct hotplugd_env *env, const char *key, const char *format, ...)
                HOTPLUGD_PRINTF_(3, 4);
        /* Value added so far for @key (by this or an earlier handler), or NULL. */
        const char *(*env_get)(const struct hotplugd_env *env, const char *key);

        /*
         * Read sysfs attribute @attribute (a relative path without "..") of
         * the device at @devpath (a DEVPATH, e.g. the event's) into @buf,
         * NUL-terminated, without the trailing newline.  Never follows a
         * symbolic link and never leaves the sysfs root.  Return the length,
         * or negative errno (-ENOENT: no such device or attribute, e.g. after
         * removal; -ENOBUFS: @size too small).
         */
        int (*sysfs_read)(const struct hotplugd_host *host, const char *devpath, const char *attribute,
                          char *buf, size_t size);
        /* Last component of the target of link @link (e.g. "driver") of @devpath; as sysfs_read. */
        int (*sysfs_link)(const struct hotplugd_host *host, const char *devpath, const char *link,
                          char *buf, size_t size);
};

/*
 * The handler.  Hooks return negative errno on failure: the handler is then
 * disabled (with a log line) and the event goes on without it, except
 * -ENOMEM from add_env(), which aborts this one event only.
 */
struct hotplugd_handler {
        unsigned int abi;   /* HOTPLUGD_HANDLER_ABI */
        unsigned int size;  /* sizeof(struct hotplugd_handler) */
        const char *id;     /* short name for log lines, e.g. "example" */
        /* NULL-terminated list of SUBSYSTEM values to see; NULL: every event. */
        const char *const *subsystems;

        /* Once at load; *@data is passed to every hook.  Nonzero disables the handler. */
        int (*init)(const struct hotplugd_host *host, void **data);
        /* Once at unload (not called if init() failed). */
        void (*done)(void *data);

        /* HOTPLUGD_KEEP or HOTPLUGD_DROP. */
        int (*filter)(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev);
        /*
         * Write argv[1] (printable ASCII, no '/', shorter than @size) into @buf
         * and return 1, or return 0 to leave the name alone.
         */
        int (*name)(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev,
                    char *buf, size_t size);
        /* Append variables with host->env_add(); return 0. */
        int (*add_env)(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev,
                       struct hotplugd_env *env);
};

#ifdef __cplusplus
}
#endif

#endif /* HOTPLUGD_HANDLER_H */
