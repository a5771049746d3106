/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What getopt_long() refused, in words: one wording for hotplugd and
 * hotplugctl.  Both call getopt_long() with opterr = 0 and short options
 * that begin with ':', so that it returns ':' for a missing value and '?'
 * for anything else it refuses, and prints nothing itself.
 */

#include <getopt.h>
#include <stddef.h>

/**
 * getopt_refused_arg() - the argument getopt_long() just refused.
 * @argc: as given to getopt_long()
 * @argv: as given to getopt_long()
 * @before: optind before the call (1 when it was 0)
 * Return: the argument it stepped over, or the one it stopped at (borrowed).
 */
const char *getopt_refused_arg(int argc, char *const argv[], int before);

/**
 * getopt_refusal() - the message for what getopt_long() refused.
 * @c: its return: ':' (a missing value) or '?'
 * @arg: the argument refused, getopt_refused_arg()
 * @longopts: its long options (borrowed)
 * @buf: receives the message, the user's text escaped (escape_cstr()):
 *       "unknown option '-x'", "option '-j' needs a value",
 *       "unknown option '--colour'", "option '--timeout' needs a value",
 *       "option '--version' takes no value",
 *       "ambiguous option '--re' (could be --rcvbuf, --resync)"
 * @size: size of @buf
 * Return: @buf.
 */
char *getopt_refusal(int c, const char *arg, const struct option *longopts, char *buf, size_t size);
