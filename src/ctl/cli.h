/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugctl's command-line conventions, shared by every verb:
 *
 *  - messages start with the program's basename and the verb:
 *    "hotplugctl: settle: ..." (ctl_err());
 *  - a usage error says what was wrong (the option, the argument, the value)
 *    and ends with "Try 'hotplugctl VERB --help' for more information."
 *    (ctl_usage_error()); its exit status is CTL_EXIT_USAGE;
 *  - "-h"/"--help" prints the verb's full usage on stdout and exits 0;
 *  - "--socket=PATH" (on the verbs that talk to the daemon) picks the
 *    daemon, like hotplugd's --control-socket.
 *
 * A verb parses its options with ctl_getopt(), which handles --help,
 * --socket, getopt's errors and the count of positional arguments itself:
 *
 *      static const struct option opts[] = {
 *              { "timeout", required_argument, NULL, 't' },
 *              CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
 *      };
 *      struct ctl_getopt g = { "settle", "t:h", opts, help_text, NULL };
 *      while ((c = ctl_getopt(&g, argc, argv)) >= 0)
 *              ...
 *      if (c != CTL_GETOPT_END)
 *              return ctl_getopt_exit(c);
 *      (positional arguments, if the verb takes any, from argv[optind])
 */

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctl/ctl.h"

/* The program name used in messages: the basename of argv[0]. */
extern const char *ctl_program;

/* Set ctl_program from argv[0] (borrowed; "hotplugctl" if empty). */
void ctl_set_program(const char *argv0);

/* Use @path as the control socket (borrowed, must outlive the process's use of it). */
void ctl_set_socket(const char *path);

/* "PROG: VERB: MESSAGE\n" on stderr. */
void ctl_err(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * ctl_usage_error() - report a usage error.
 * Prints "PROG: VERB: MESSAGE" and "Try 'PROG VERB --help' for more
 * information." on stderr.
 * Return: CTL_EXIT_USAGE.
 */
int ctl_usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * ctl_bad_value() - "invalid value 'VALUE' for OPTION: EXPECTED", as a usage error.
 * @option: as the user knows it, e.g. "--timeout"
 * @value: as given (escaped for the terminal here)
 * @expected: what would have been accepted, e.g. "seconds, 0 to 3600"
 * Return: CTL_EXIT_USAGE.
 */
int ctl_bad_value(const char *verb, const char *option, const char *value, const char *expected);

/* A number as text, for help strings: CTL_STR(HP_CONTROL_TIMEOUT_MAX_SEC). */
#define CTL_STR_(x) #x
#define CTL_STR(x) CTL_STR_(x)

#define CTL_OPT_SOCKET 0x7f01
#define CTL_OPTION_HELP { "help", no_argument, NULL, 'h' }
#define CTL_OPTION_SOCKET { "socket", required_argument, NULL, CTL_OPT_SOCKET }

/* Help text line for --socket, to put in a verb's option list. */
#define CTL_HELP_SOCKET "      --socket=PATH      the daemon's control socket (default $HOTPLUGCTL_SOCKET,\n" \
                        "                         else " HOTPLUGD_RUNDIR "/control)\n"
#define CTL_HELP_HELP   "  -h, --help             show this help and exit\n"

struct ctl_getopt {
        const char *verb;
        const char *shortopts;        /* must contain "h"; no leading ':' or '+' */
        const struct option *longopts;
        /* Full usage, printed after "Usage: PROG ": starts with the verb's synopsis. */
        const char *help;
        /*
         * Positional arguments, as the synopsis names them: NULL none, "FILE"
         * exactly one, "[FILE]" one or none, "DEVICE..." (ending in "...")
         * any number.
         */
        const char *args;
};

#define CTL_GETOPT_END   (-1)  /* all options read; positional arguments from optind */
#define CTL_GETOPT_HELP  (-2)  /* help printed on stdout: exit CTL_EXIT_OK */
#define CTL_GETOPT_ERROR (-3)  /* error printed on stderr: exit CTL_EXIT_USAGE */

/**
 * ctl_getopt() - the next option, like getopt_long(), with hotplugctl's messages.
 * Handles -h/--help (prints the help) and --socket (ctl_set_socket()) itself.
 * An unknown option, a missing value or a value given to an option that takes
 * none is reported by name; a short letter the verb gave up (so that each
 * letter means one thing in every verb, as in udevadm) with the spelling
 * to use instead.  After the last option, positional arguments
 * that g->args does not allow ("unexpected argument 'X'", "no FILE given")
 * are reported too.
 * Return: the option's value, or CTL_GETOPT_END (the arguments are from
 * optind on), CTL_GETOPT_HELP, CTL_GETOPT_ERROR.
 */
int ctl_getopt(const struct ctl_getopt *g, int argc, char *argv[]);

/* A verb's own argument parser says: go on (else it returns the exit status). */
#define CTL_RUN (-1)

/* The exit status after ctl_getopt() returned CTL_GETOPT_HELP or CTL_GETOPT_ERROR. */
static inline int ctl_getopt_exit(int c)
{
        return c == CTL_GETOPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
}

/* Print the verb's help on @f. */
void ctl_help(const struct ctl_getopt *g, FILE *f);

/* The actions a device's uevent file accepts, as the kernel lists them. */
#define CTL_KERNEL_ACTIONS "add, remove, change, move, online, offline, bind, unbind"

/* Is @value one of CTL_KERNEL_ACTIONS? */
bool ctl_is_action(const char *value);

/**
 * ctl_check_action() - refuse an action the kernel does not know.
 * @value: the value given to --action (borrowed)
 * Return: CTL_EXIT_OK, or CTL_EXIT_USAGE after naming @value and listing
 * CTL_KERNEL_ACTIONS.
 */
int ctl_check_action(const char *verb, const char *value);

/**
 * ctl_parse_seconds() - seconds, fractions allowed, as milliseconds.
 * @option: for the message, e.g. "--timeout"
 * @text: as given (borrowed)
 * @min_ms: the smallest value accepted; 1 refuses 0
 * @max_sec: the largest value accepted
 * @ret_ms: the value, untouched on failure
 * Return: CTL_EXIT_OK, or CTL_EXIT_USAGE after naming the value and the range.
 */
int ctl_parse_seconds(const char *verb, const char *option, const char *text, uint64_t min_ms, unsigned max_sec,
                      uint64_t *ret_ms);

/**
 * ctl_device() - the DEVPATH ("/devices/...") of a device named on the command line.
 * @root: the sysfs root, e.g. "/sys" (borrowed)
 * @arg: as given: a path below @root, symbolic links allowed, a device node
 *       (block or char, through @root/dev/block/MAJOR:MINOR or .../char/...),
 *       or a DEVPATH ("/devices/...", taken as below @root) (borrowed)
 * @ret: receives the DEVPATH, with every link resolved (@size bytes)
 *
 * A device is a directory below @root holding a "uevent" file.  When @arg
 * is not one, "PROG: VERB: ARG: why" is printed, with @arg as given; a file
 * that exists but is neither a device node nor below @root is said to be
 * that, and a node without a device in sysfs too, never "does not exist".
 * Return: 0, or a negative errno after printing why.
 */
int ctl_device(const char *verb, const char *root, const char *arg, char *ret, size_t size);

/**
 * ctl_signalfd() - SIGINT and SIGTERM as a file descriptor.
 * Blocks both signals in the process, so that they arrive only there.
 * Return: the fd (owned by the caller, CLOEXEC, non-blocking) or negative errno.
 */
int ctl_signalfd(void);
