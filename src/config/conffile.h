/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The configuration file, /etc/hotplugd/hotplugd.conf (hotplugd.conf(5)).
 *
 * Invariants: parsing is all or nothing.  conf_load() and conf_parse() fill
 * the caller's struct conf only when the whole file is valid; on any error
 * the struct is untouched and the error names the file, the line and the
 * reason.  Nothing here logs, opens sockets or changes global state, so the
 * daemon can parse a new file on reload and keep its running configuration
 * when the file is broken.
 *
 * Keys, their types, ranges and value parsers come from the option table
 * (options.h); a key is the daemon's long option name, and takes the
 * same values (a boolean key's --no-NAME is "NAME = no").  A long option
 * without a key is refused by name: "'dry-run' is a command-line option
 * only (--dry-run)".  Command-line options override the file:
 * conf_apply() skips every key the caller says was given on the command
 * line.
 *
 * (The module is not called config.h: that name is meson's generated
 * build configuration, which the core's files include.)
 */

#include <stdbool.h>
#include <stdint.h>

#include "shared/bounds.h"
#include "pipeline/scheduler.h"

struct manager_config;
struct handler_config;
struct options;

/* One bit per key; conf.set and conf_apply()'s @cli_set use them.  Each
 * has its row in the option table (options.c). */
enum conf_key {
        CONF_AGENT,
        CONF_HOTPLUG_D,
        CONF_ORDERING,
        CONF_MAX_CHILDREN,
        CONF_CONCURRENCY,
        CONF_MAX_QUEUE,
        CONF_TIMEOUT,
        CONF_KILL_GRACE,
        CONF_ALL,
        CONF_HANDLER_DIR,
        CONF_SYSFS,
        CONF_RCVBUF,
        CONF_LOG_LEVEL,
        CONF_RECORD,
        CONF_REBROADCAST,
        CONF_RESYNC,
        CONF_FILTER_POLICY,
        CONF_FIRMWARE_LOADER,
        CONF_FIRMWARE_PATH,
        CONF_HANDLER_CACHE,
        CONF_INPUT_STRIP_QUOTES,
        CONF_RESYNC_SUBSYSTEMS,
        _CONF_KEY_MAX,
};

#define CONF_BIT(k) (UINT32_C(1) << (k))

/* A parsed file.  Members are meaningful only when their bit is in @set. */
struct conf {
        uint32_t set;                       /* CONF_BIT() of every key the file sets */
        unsigned line[_CONF_KEY_MAX];       /* line that set each key (for messages) */
        char agent[HP_CONF_LINE_MAX];
        char hotplug_d[HP_CONF_LINE_MAX];
        char handler_dir[HP_CONF_LINE_MAX];
        char sysfs[HP_CONF_LINE_MAX];
        char record[HP_CONF_LINE_MAX];      /* --record */
        char filter_policy[HP_CONF_LINE_MAX]; /* checked with filter_policy_parse() */
        char firmware_path[HP_CONF_LINE_MAX]; /* ':'-separated absolute directories */
        char resync_subsystems[HP_CONF_LINE_MAX]; /* subsystem names, ','-separated */
        enum ordering ordering;
        int log_level;                      /* syslog priority */
        bool all;
        bool firmware_loader;
        bool input_strip_quotes;
        bool resync;                        /* overflow resync */
        uint64_t max_children;
        uint64_t concurrency;
        uint64_t max_queue;
        uint64_t timeout_sec;
        uint64_t kill_grace_sec;
        uint64_t rcvbuf;
        uint64_t rebroadcast;               /* --rebroadcast: netlink group 2..32 */
        uint64_t handler_cache;             /* DEVPATH cache entries, 1..HP_DEVCACHE_MAX */
};

/* Room for "FILE:LINE: reason" with a long path. */
#define CONF_ERROR_MAX (HP_CONF_LINE_MAX + 512)

struct conf_error {
        unsigned line;                      /* 0: the error is about the whole file */
        char msg[CONF_ERROR_MAX];           /* "FILE:LINE: reason" or "FILE: reason" */
};

/* Name of a key as written in the file ("max-children"), or NULL. */
const char *conf_key_to_string(enum conf_key k);

/**
 * conf_set_handler_option() - set a handler-chain key, worded as for the file.
 * @k: CONF_FILTER_POLICY, CONF_FIRMWARE_LOADER, CONF_FIRMWARE_PATH,
 *     CONF_HANDLER_CACHE or CONF_INPUT_STRIP_QUOTES
 * @value: the option's argument, NULL for the two flags (borrowed; string
 *         keys keep pointing at it, so it must outlive @h)
 * @h: updated only on success (borrowed)
 * @why: receives the reason on failure, worded as for the file
 * @why_size: size of @why
 *
 * The option accepts exactly what its key accepts in the file.
 * Return: 0, or -EINVAL with the reason in @why.
 */
int conf_set_handler_option(enum conf_key k, const char *value, struct handler_config *h, char *why,
                            size_t why_size);

/**
 * conf_parse() - parse a configuration held in memory.
 * @name: file name used in error messages (borrowed)
 * @data: the file's bytes, not necessarily NUL-terminated (borrowed)
 * @size: number of bytes
 * @ret: filled only on success (borrowed; owned by the caller)
 * @err: receives the error on failure, may be NULL (borrowed)
 *
 * Return: 0, or -EINVAL for an invalid file (@err says where and why),
 * -EFBIG when @size exceeds HP_CONF_FILE_MAX.
 */
int conf_parse(const char *name, const char *data, size_t size, struct conf *ret, struct conf_error *err);

/**
 * conf_load() - read and parse a configuration file.
 * @path: file to read (borrowed)
 * @ret: filled only on success (borrowed; owned by the caller)
 * @err: receives the error on failure, may be NULL (borrowed)
 *
 * The file must be a regular file of at most HP_CONF_FILE_MAX bytes, owned
 * by root or by the caller, and not writable by group or others (it names
 * programs the daemon runs as root).
 *
 * Return: 0; -ENOENT if the file does not exist (the caller decides whether
 * that is an error); -EINVAL for an invalid file; another negative errno if
 * it cannot be read.  @err is filled in every failure case.
 */
int conf_load(const char *path, struct conf *ret, struct conf_error *err);

/**
 * conf_apply() - set the daemon configuration from a parsed file.
 * @c: parsed file (borrowed; its strings are referenced by @cfg, so @c must
 *     outlive every use of @cfg)
 * @cfg: configuration to update (borrowed)
 * @cli_set: CONF_BIT()s of keys given on the command line; those are kept.
 *
 * agent and hotplug-d are one choice: if either is on the command line,
 * the file's agent and hotplug-d are both ignored.  log-level is not a
 * member of struct manager_config: conf_apply_options() applies it too.
 * handlers.sysfs_root follows sysfs_root.
 */
void conf_apply(const struct conf *c, struct manager_config *cfg, uint32_t cli_set);

/**
 * conf_apply_options() - conf_apply() for all options, log-level included.
 * @c: parsed file (borrowed; must outlive every use of @o)
 * @o: options to update (borrowed); keys in o->set are kept
 */
void conf_apply_options(const struct conf *c, struct options *o);
