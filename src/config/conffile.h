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

#include "config/options.h"
#include "shared/bounds.h"

struct manager_config;
struct handler_config;

/*
 * A parsed file.  A key is its row of the option table, and its value is
 * held where the row says, in @values: the file needs no list of its own.
 * Members of @values are meaningful only for rows in @set.  Not to be
 * copied by assignment: the text values point into @text.
 */
struct conf {
        uint64_t set;                       /* option_bit() of every key the file sets */
        unsigned line[OPTION_ROWS_MAX];     /* line that set each row, by its place in the table */
        struct options values;              /* each key's value, in its row's member */
        size_t text_used;                   /* bytes of @text in use */
        char text[HP_CONF_FILE_MAX + 1];    /* the text values, which @values point into */
};

/* Room for "FILE:LINE: reason" with a long path. */
#define CONF_ERROR_MAX (HP_CONF_LINE_MAX + 512)

struct conf_error {
        unsigned line;                      /* 0: the error is about the whole file */
        char msg[CONF_ERROR_MAX];           /* "FILE:LINE: reason" or "FILE: reason" */
};

/**
 * conf_set_handler_option() - set a handler-chain key, worded as for the file.
 * @key: "filter-policy", "firmware-loader", "firmware-path", "handler-cache"
 *       or "input-strip-quotes" (borrowed)
 * @value: the option's argument, NULL for the two flags (borrowed; string
 *         keys keep pointing at it, so it must outlive @h)
 * @h: updated only on success (borrowed)
 * @why: receives the reason on failure, worded as for the file
 * @why_size: size of @why
 *
 * The option accepts exactly what its key accepts in the file.
 * Return: 0, or -EINVAL with the reason in @why.
 */
int conf_set_handler_option(const char *key, const char *value, struct handler_config *h, char *why,
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
 *     outlive every use of @cfg, or the strings be copied: manager_reconfigure())
 * @cfg: configuration to update (borrowed)
 * @cli_set: option_bit()s of keys given on the command line; those are kept.
 *
 * agent and hotplug-d are one choice: if either is on the command line,
 * the file's agent and hotplug-d are both ignored.  log-level is not a
 * member of struct manager_config: conf_apply_options() applies it too.
 * handlers.sysfs_root follows sysfs_root.
 */
void conf_apply(const struct conf *c, struct manager_config *cfg, uint64_t cli_set);

/**
 * conf_apply_options() - conf_apply() for all options, log-level included.
 * @c: parsed file (borrowed; must outlive every use of @o)
 * @o: options to update (borrowed); keys in o->set are kept
 */
void conf_apply_options(const struct conf *c, struct options *o);
