/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * "Could anyone but us have written this?"  One rule for every file the
 * daemon runs or loads as itself (external handlers, hotplug.d programs,
 * the agent, recordings replayed to agents): the file and each directory
 * it is reached through are owned by the daemon's effective uid (or by
 * root) and not writable by group or others; a directory owned by root
 * with the sticky bit set (/tmp) counts as trusted on the way, since
 * nobody else can replace what root put in it.
 */

#include <stdbool.h>
#include <sys/stat.h>

/**
 * trust_reason() - why @st (file or directory) is not trusted.
 * Return: NULL if it is owned by geteuid() or root and not group/other-writable,
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

/**
 * trust_check_path() - check the absolute @path and every directory above it.
 * @path: absolute path (borrowed); a symbolic link anywhere on it is resolved
 * @want_dir: it must be a directory (else a regular file)
 * @ret_st: as for trust_check_at()
 * @ret_why: set to the reason on refusal ("link target ..." when @path
 *           itself is a symbolic link)
 *
 * The same rule as trust_check_at() gives a link's target: every directory
 * from "/" down to the resolved file passes trust_reason() or is root's and
 * sticky, and the file passes trust_reason().
 * Return: 0 trusted, -EPERM / -EMEDIUMTYPE refused (@ret_why set), -EINVAL
 * for a relative path, other negative errno (-ENOENT ...).
 */
int trust_check_path(const char *path, bool want_dir, struct stat *ret_st, const char **ret_why);
