/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * "Could anyone but us have written this?"  One rule for every file the
 * daemon runs or loads as itself (external handlers, hotplug.d programs):
 * the file and each directory it is reached through are owned by the
 * daemon's effective uid and not writable by group or others.
 */

#include <stdbool.h>
#include <sys/stat.h>

/**
 * trust_reason() - why @st (file or directory) is not trusted.
 * Return: NULL if it is owned by geteuid() and not group/other-writable,
 * else a short reason for a log line ("not owned by root", ...).
 */
const char *trust_reason(const struct stat *st);

/**
 * trust_check_at() - check the entry @name of the trusted directory @dirfd.
 * @want_dir: the entry must be a directory (else a regular file)
 * @ret_st: the stat of the entry (of the target, for a symbolic link); on
 *          -EPERM, of what was refused (the file, or a directory on the way)
 * @ret_why: set to the reason on refusal (a link's target: "link target ...")
 *
 * A symbolic link is followed; its target must pass trust_reason(), and so
 * must every directory on the target's resolved path from "/" down (a
 * directory owned by root with the sticky bit set, like /tmp, counts as
 * trusted: nobody else can replace what is in it).
 * Return: 0 trusted, -EPERM refused (@ret_why set), -EMEDIUMTYPE not a
 * directory / regular file (@ret_why set), other negative errno when the
 * entry cannot be looked at (-ENOENT ...).
 */
int trust_check_at(int dirfd, const char *name, bool want_dir, struct stat *ret_st, const char **ret_why);
