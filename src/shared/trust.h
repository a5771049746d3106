/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * "Could anyone but us have written this?"  One rule for every file the
 * daemon runs or loads as itself (external handlers, hotplug.d programs,
 * the agent, recordings replayed to agents), applied to the path as it is
 * given, not to where it leads:
 *  - every directory a name is looked up in is owned by the daemon's
 *    effective uid (or by root) and not writable by group or others; a
 *    directory owned by root with the sticky bit set (/tmp) counts as
 *    trusted on the way, since nobody else can replace what root put in it;
 *  - every symbolic link met on the way is owned by the daemon's euid or
 *    root, and is followed by the walk itself (its target is walked as a
 *    path of its own, by the same rule, from the link's directory or "/");
 *  - the file (or directory) reached is owned by the daemon's euid or root
 *    and not writable by group or others.
 * So nobody but root (or the daemon's user) can change what such a path
 * names, nor what is in the file, after the check: executing the path by
 * name later runs the file that was checked, and a change only root can
 * make is seen at the next check.  Every error of the walk is a refusal
 * to the callers: "could not tell" is never "trusted".
 */

#include <stdbool.h>
#include <sys/stat.h>

/**
 * trust_reason() - why @st (file or directory) is not trusted.
 * Return: NULL if it is owned by geteuid() or root and not group/other-writable,
 * else a short reason for a log line ("not owned by root", ...).
 */
const char *trust_reason(const struct stat *st);

/* Flags of trust_open_at(). */
enum {
        TRUST_DIR = 1 << 0,  /* the path must name a directory (else a regular file) */
        TRUST_READ = 1 << 1, /* *ret_fd is open for reading (else O_PATH) */
};

/**
 * trust_open_at() - walk @path by the trust rule, and open what it names.
 * @dirfd: where a relative @path starts: AT_FDCWD, the working directory,
 *         checked as the first directory on the way; or a directory the
 *         caller found trusted (a single name in it that is no link is
 *         judged by one lookup, its directory not looked at again)
 * @path: the path as given (borrowed); every component and every symbolic
 *        link on the way is checked (at most HP_TRUST_MAX_LINKS links, the
 *        walked path at most PATH_MAX bytes)
 * @flags: TRUST_DIR, TRUST_READ
 * @ret_fd: NULL, or receives the descriptor of the file reached (owned by
 *          the caller, close-on-exec): O_PATH, or with TRUST_READ opened
 *          O_RDONLY | O_NONBLOCK | O_NOCTTY (a directory O_DIRECTORY); set
 *          only on success
 * @ret_st: the stat of what was reached; on -EPERM / -EMEDIUMTYPE, of what
 *          was refused (the file, a directory on the way or a link)
 * @ret_why: set to the reason on -EPERM / -EMEDIUMTYPE ("link target ..."
 *           once a link was followed)
 *
 * Return: 0 trusted, -EPERM refused, -EMEDIUMTYPE not a directory / regular
 * file, -ELOOP too many links, -ENAMETOOLONG a name or the walked path too
 * long, other negative errno when a component cannot be looked at (-ENOENT
 * ...).  Every negative value is a refusal.
 */
int trust_open_at(int dirfd, const char *path, unsigned flags, int *ret_fd, struct stat *ret_st,
                  const char **ret_why);

/**
 * trust_check_at() - check the entry @name of the directory @dirfd.
 * @dirfd: a directory the caller has found trusted (a name in it that is
 *         no link is judged by one look; a link is walked by the rule)
 * @name: a name in it (a path with '/' is walked whole)
 * @want_dir: the entry must be a directory (else a regular file)
 * @ret_st: as for trust_open_at()
 * @ret_why: as for trust_open_at()
 *
 * trust_open_at(@dirfd, @name) without the descriptor: a symbolic link is
 * followed by the rule, its target walked from @dirfd (relative) or "/".
 * Return: as trust_open_at().
 */
int trust_check_at(int dirfd, const char *name, bool want_dir, struct stat *ret_st, const char **ret_why);

/**
 * trust_check_path() - check the absolute @path, every directory and link on it.
 * @path: absolute path (borrowed)
 * @want_dir: it must be a directory (else a regular file)
 * @ret_st: as for trust_open_at()
 * @ret_why: as for trust_open_at()
 *
 * Return: as trust_open_at(), or -EINVAL for a relative path.
 */
int trust_check_path(const char *path, bool want_dir, struct stat *ret_st, const char **ret_why);
