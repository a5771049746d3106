/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugd's options, in one table (options.c): for every option its long
 * name, short letter, type, range, default, configuration-file key (or
 * none: command line only) and help text.  The table drives getopt_long
 * (cmdline.c), the configuration file parser (conffile.c), --help, the
 * defaults, and the manual-page check (tests/service/man-sync.py reads it).
 *
 * Invariants: a value is parsed by one function, option_parse(), whether it
 * comes from the command line or the file, so both accept the same text
 * (paths excepted: the command line also takes relative ones, resolved by
 * options_resolve_paths()): sizes with the same K, M or G suffixes,
 * booleans with the same spellings in any case.  Every boolean option has
 * --NAME (yes), --no-NAME (no) and --NAME=BOOL, generated from its row, so
 * the command line can undo a file's "yes".  A rejection names the option
 * or key, the value and the accepted form (option_form()).  Defaults live
 * only in the table; options_init() is the one place that fills them in.
 *
 * Adding an option: one row in the table, naming the member of struct
 * options (its struct manager_config, or the daemon's own) it sets; a file
 * key is the row's .key.  A row is identified by its place in the table
 * (option_bit()): there is no other list of keys or values.  The manual
 * pages (man-sync) and the command-line/file parity test (test-options)
 * then cover it without further edits.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loop/manager.h"
#include "shared/log.h"

struct option;
struct conf;
struct conf_error;

/* Everything the options set: the manager's configuration and the daemon's own. */
struct options {
        struct manager_config cfg;  /* first: a table offset below sizeof(cfg) is a cfg member */
        int log_level;              /* syslog priority */
        enum log_target log_target;
        const char *config;         /* --config; NULL: the default file, whose absence is fine */
        bool check_config;          /* --check-config: validate and exit */
        bool verbose;               /* --verbose: --check-config prints every setting */
        int ready_fd;               /* --ready-fd, -1: none */
        uint64_t set;               /* option_bit() of every file key given on the command line */
        uint64_t given;             /* bit i: row i of option_table given on the command line */
        bool default_agent_missing; /* options_default_agent() chose the multiplexer */
};

enum option_type {
        OPTION_PATH,       /* a path; absolute in the file, resolved on the command line */
        OPTION_STRING,     /* any text, "" included */
        OPTION_SEARCH,     /* ':'-separated absolute directories */
        OPTION_FILTER,     /* filter policy rules (pipeline/filter-policy.h) */
        OPTION_SUBSYSTEMS, /* subsystem names separated by ',' (uevent/subsystem-list.h) */
        OPTION_UINT,       /* decimal, min..max */
        OPTION_AUTO_UINT,  /* "auto" (kept as 0) or decimal, min..max */
        OPTION_SIZE,       /* decimal with an optional K, M or G suffix (KiB, MiB, GiB), min..max */
        OPTION_SECONDS,    /* decimal seconds, min..max; kept in microseconds */
        OPTION_BOOL,       /* yes/true/on/1 or no/false/off/0, any case; --NAME, --no-NAME, --NAME=BOOL */
        OPTION_FLAG,       /* a command-line switch that asks for something: --NAME only (bool member) */
        OPTION_ORDERING,   /* enum ordering */
        OPTION_LOG_LEVEL,  /* syslog level name or 0-7 */
        OPTION_LOG_TARGET, /* enum log_target */
        OPTION_CHOICE,     /* one of the row's .choices, any case; kept as its index (int) */
        OPTION_SPEED,      /* replay pace factor (double) */
        OPTION_FD,         /* a file descriptor number (int) */
        OPTION_GROUP,      /* a group name or number, looked up when parsed; kept as its gid (int, -1: none) */
        OPTION_HELP,       /* print --help and exit */
        OPTION_VERSION,    /* print the version and exit */
};

/* A parsed value; which member depends on the type. */
union option_value {
        uint64_t u;        /* UINT, AUTO_UINT (0: auto), SIZE, SECONDS (in seconds) */
        int i;             /* ORDERING, LOG_LEVEL, LOG_TARGET, FD */
        bool b;            /* BOOL */
        double d;          /* SPEED */
        const char *s;     /* PATH, STRING, SEARCH, FILTER, SUBSYSTEMS (borrowed) */
};

struct option_info {
        const char *name;            /* long option, --NAME */
        char short_name;             /* -X, or 0 */
        enum option_type type;
        const char *key;             /* key in hotplugd.conf; NULL: command line only */
        size_t offset, size;         /* member of struct options (below sizeof(struct manager_config): of cfg) */
        uint64_t min, max;           /* UINT, AUTO_UINT, SIZE, SECONDS */
        union option_value def;      /* the default */
        uint64_t (*def_fn)(void);    /* UINT: a default computed at start, instead of .def */
        const char *def_text;        /* --help's default when .def does not say it, or NULL */
        const char *const *choices;  /* CHOICE: the names, NULL-terminated; the value is the index */
        const char *arg;             /* --help's name for the argument; NULL: takes none */
        const char *help;
};

extern const struct option_info option_table[];
extern const size_t option_table_size;

/* The row whose long name is @name, or NULL. */
const struct option_info *option_by_name(const char *name);
/* The row whose file key is @key, or NULL. */
const struct option_info *option_by_key(const char *key);

/* Rows in the table, at most: a set of rows is a uint64_t (option_bit()). */
#define OPTION_ROWS_MAX 64

/* Row @oi's bit in a set of rows (struct options.set and .given, struct conf.set). */
static inline uint64_t option_bit(const struct option_info *oi)
{
        return UINT64_C(1) << (oi - option_table);
}

/* The bit of the row whose file key is @key; 0 if there is none. */
uint64_t option_key_bit(const char *key);

/* The index of @s (any case) among @oi's .choices, or -EINVAL. */
int option_choice_from_string(const struct option_info *oi, const char *s);

/* The spellings of a boolean, "yes, true, on, 1 or no, false, off, 0 (any case)". */
#define OPTION_BOOL_FORM "yes, true, on, 1 or no, false, off, 0 (any case)"

/**
 * option_form() - what @oi accepts, for messages: "a number 1..2048".
 * @oi: the option (borrowed)
 * @buf: room for a form with numbers in it
 * @size: size of @buf
 *
 * Return: @buf, or a static string.
 */
const char *option_form(const struct option_info *oi, char *buf, size_t size);

/* The kinds whose value is text (union option_value.s, borrowed). */
static inline bool option_is_text(enum option_type t)
{
        return t == OPTION_PATH || t == OPTION_STRING || t == OPTION_SEARCH || t == OPTION_FILTER ||
               t == OPTION_SUBSYSTEMS;
}

/**
 * option_parse() - parse one value of an option.
 * @oi: the option (borrowed)
 * @name: the option as @why names it: "'timeout'" (file) or "--timeout"
 * @text: the value (borrowed; string values point into it)
 * @cli: from the command line (paths may then be relative)
 * @ret: receives the value, untouched on failure
 * @why: receives the reason on failure ("NAME must be ..."), without the value
 * @why_size: size of @why
 *
 * Return: 0, or -EINVAL with the reason in @why.
 */
int option_parse(const struct option_info *oi, const char *name, const char *text, bool cli,
                 union option_value *ret, char *why, size_t why_size);

/**
 * option_store() - set an option's member of @o to @v.
 * @o: options (borrowed)
 * @oi: the option (borrowed)
 * @v: the value (strings are borrowed and must outlive @o)
 * @limit: bytes of @o that may be written: sizeof(struct options), or
 *         sizeof(struct manager_config) when @o is only a manager_config
 *
 * Return: true if stored, false if the member lies past @limit.
 */
bool option_store(void *o, const struct option_info *oi, const union option_value *v, size_t limit);

/**
 * option_set_arg() - set one option from a command line.
 * @o: struct options, or a struct manager_config when @limit says so (borrowed)
 * @limit: sizeof(*@o)
 * @oi: the option (borrowed)
 * @arg: its argument, NULL for a boolean's bare --NAME (yes) (borrowed;
 *       string options point into it)
 * @why: receives "--NAME must be ...: 'VALUE' (HELP)" on failure
 * @why_size: size of @why
 *
 * Return: 0, or -EINVAL with the reason in @why.
 */
int option_set_arg(void *o, size_t limit, const struct option_info *oi, const char *arg, char *why,
                   size_t why_size);

/**
 * options_init() - the defaults, from the table.
 * @o: filled completely (borrowed)
 */
void options_init(struct options *o);

/**
 * options_defaults() - a manager configuration holding the defaults.
 * @cfg: filled completely (borrowed)
 */
void options_defaults(struct manager_config *cfg);

/* Print --help, generated from the table. */
void options_help(void);

/**
 * option_help_line() - a row's line of --help: "  -x, --[no-]NAME=ARG  HELP (MIN..MAX, default D)".
 * @oi: the row
 * @column: where HELP starts (a longer left part puts it on a line of its own)
 * @buf: receives the line, with its newline
 * @size: size of @buf
 * Return: @buf.
 */
char *option_help_line(const struct option_info *oi, int column, char *buf, size_t size);

/* Room for the long options of every row, their --no-NAME forms and a terminator. */
#define OPTIONS_GETOPT_MAX 96

/**
 * options_getopt() - getopt_long()'s long options for rows of the table.
 * @names: the rows' long names, or NULL for every row
 * @n_names: how many
 * @longopts: receives them from index *@l on, then a terminator
 * @room: entries @longopts has
 * @l: entries of @longopts in use (the caller's own come first); advanced
 *
 * A row gives --NAME (with its argument); a boolean row --NAME[=BOOL] and
 * --no-NAME, as hotplugd takes them.  Their values are above every
 * character: options_getopt_row() maps them back.
 * Return: 0, or -E2BIG if @room is too small.
 */
int options_getopt(const char *const *names, size_t n_names, struct option *longopts, size_t room, size_t *l);

/**
 * options_getopt_row() - the row of a value options_getopt() gave getopt_long().
 * @c: getopt_long()'s return
 * @neg: set: it was --no-NAME (pass "no" as the argument to option_set_arg())
 * Return: the row, or NULL if @c is not such a value.
 */
const struct option_info *options_getopt_row(int c, bool *neg);

/**
 * options_parse_argv() - the command line over @o.
 * @o: options, as options_init() left them (borrowed; string members point into @argv)
 * @argc: argument count
 * @argv: arguments (borrowed, must outlive @o)
 *
 * Errors are printed to stderr naming the option, the value and what it
 * accepts, followed by "Try 'hotplugd --help' for more information.".
 * Return: 1 run, 0 done (--help or --version printed), -EINVAL usage error.
 */
int options_parse_argv(struct options *o, int argc, char *argv[]);

/**
 * options_resolve_paths() - make every relative path option absolute.
 * @o: options (borrowed; resolved paths are allocated and live as long as the process)
 * @why: receives "--NAME: cannot resolve 'PATH': REASON" on failure
 * @why_size: size of @why
 *
 * Return: 0, or a negative errno with the reason in @why.
 */
int options_resolve_paths(struct options *o, char *why, size_t why_size);

/**
 * options_load() - read the configuration file and apply it under the command line.
 * @o: options after options_parse_argv() (borrowed; string members will
 *     point into @conf)
 * @conf: receives the parsed file (borrowed; must outlive @o)
 * @err: receives the error on failure (borrowed)
 *
 * The file is o->config, or the default file.  File keys that the command
 * line set (o->set) keep the command line's value.  Then the default agent
 * is settled (options_default_agent()), and the agent in effect must pass
 * the hotplug.d trust rule (trust_check_path(); one not installed passes).
 * Return: 0 applied; 1 the default file does not exist (built-in defaults);
 * a negative errno with the reason in @err (an untrusted agent: -EPERM).
 */
int options_load(struct options *o, struct conf *conf, struct conf_error *err);

/**
 * options_default_agent() - the agent when nobody chose one.
 * @o: options, with the file applied (borrowed)
 * @chosen: option_bit()s of the keys set by the command line or the file
 * @dir: the hotplug.d directory to fall back on (borrowed, must outlive @o)
 *
 * When neither `agent` nor `hotplug-d` is in @chosen, hotplugd runs the
 * built-in agent (o->cfg.agent, the build's default_agent) if it is
 * executable, and otherwise the hotplug.d multiplexer over @dir (an absent
 * or empty directory runs nothing), setting o->default_agent_missing.
 * options_load() calls this; at every start and reload the choice is made again.
 */
void options_default_agent(struct options *o, uint64_t chosen, const char *dir);

/**
 * options_print_effective() - every setting, its value and where it came from.
 * @o: options after options_load() (borrowed)
 * @conf: the file that was applied, or NULL when there was none (borrowed)
 * @path: the file's name, for "FILE:LINE" (borrowed)
 * @out: where to print (borrowed)
 *
 * One line per row of the table that holds a setting, "NAME VALUE # SOURCE"
 * as `sshd -T` prints them, SOURCE being "default", "FILE:LINE" or
 * "command line"; for --check-config --verbose.
 */
void options_print_effective(const struct options *o, const struct conf *conf, const char *path, FILE *out);

/* The configuration file read when --config is not given. */
const char *options_config_path(const char *config);
