/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A list of subsystem names as a setting gives it (resync-subsystems):
 * names separated by ',' or blanks, each following the rule a kernel
 * SUBSYSTEM follows for hotplugd to accept the event
 * (uevent_subsystem_valid()).  A list that names no subsystem ("", or
 * separators only) stands for every subsystem.
 *
 * The list is used as the text it is: no copy, no allocation, no bound
 * beyond the text's own length.  Pure: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>

/**
 * subsystem_list_check() - validate a list.
 * @spec: the list (borrowed); NULL is the empty list
 * @ret_bad: receives the first invalid name on failure (borrowed from @spec)
 * @ret_len: receives its length
 * Return: 0, or -EINVAL with @ret_bad and @ret_len set.
 */
int subsystem_list_check(const char *spec, const char **ret_bad, size_t *ret_len);

/**
 * subsystem_list_has() - does a list take in @subsystem?
 * @spec: a list subsystem_list_check() accepted (borrowed), NULL for none
 * @subsystem: a SUBSYSTEM value (borrowed)
 * Return: true if @spec names no subsystem at all (every one is taken in) or names @subsystem.
 */
bool subsystem_list_has(const char *spec, const char *subsystem);
