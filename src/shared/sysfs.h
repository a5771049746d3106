/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Reading sysfs without ever leaving it.  Every path is resolved below a
 * root directory fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 * (component by component with O_NOFOLLOW on kernels without openat2), and
 * is checked lexically first: relative, no "." or ".." component, no "//".
 * Symbolic links are read (readlinkat) and resolved as text, never followed.
 * Files are opened O_NONBLOCK; attribute reads are bounded by the caller's
 * buffer.  No state: every function takes the root fd.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True if @path is a relative path with no empty, "." or ".." component. */
bool sysfs_path_valid(const char *path);

/**
 * sysfs_open_root() - open the sysfs root directory.
 * @root: e.g. "/sys" (borrowed)
 * Return: an O_PATH directory fd owned by the caller, or negative errno.
 */
int sysfs_open_root(const char *root);

/**
 * sysfs_open_dir() - open a directory below the root.
 * @rootfd: from sysfs_open_root() (borrowed)
 * @path: DEVPATH ("/devices/...") or relative path; a leading '/' is skipped
 * Return: an O_PATH directory fd owned by the caller, or negative errno
 * (-EINVAL for an invalid path, -ELOOP if a component is a symbolic link).
 */
int sysfs_open_dir(int rootfd, const char *path);

/**
 * sysfs_read_at() - read a small attribute file.
 * @dirfd: directory (borrowed)
 * @attr: relative path below @dirfd, validated like any path
 * @buf: receives the contents, NUL-terminated, trailing newlines removed
 * @size: size of @buf
 * Return: length, -ENOBUFS if the file does not fit, or negative errno.
 */
int sysfs_read_at(int dirfd, const char *attr, char *buf, size_t size);

/* sysfs_read_at() of @attr of the directory @path below @rootfd. */
int sysfs_read(int rootfd, const char *path, const char *attr, char *buf, size_t size);

/**
 * sysfs_link_at() - resolve symbolic link @name in @dirfd as text.
 * @dirfd: the directory holding the link, opened at @dir_path (borrowed)
 * @dir_path: that directory's path relative to the root
 * @name: link name, e.g. "subsystem" or "driver"
 * @buf: receives the root-relative normalised target (e.g. "bus/pci")
 * @size: size of @buf
 * Return: length, or negative errno (-EXDEV if the target leaves the root).
 */
int sysfs_link_at(int dirfd, const char *dir_path, const char *name, char *buf, size_t size);

/* Last component of @path (borrowed from @path). */
const char *sysfs_basename(const char *path);

/**
 * sysfs_link_name() - the last component of a link's target.
 * @dirfd: the directory holding the link, opened at @dir_path (borrowed)
 * @dir_path: that directory's path relative to the root
 * @name: link name, e.g. "subsystem" or "driver"
 * @buf: receives e.g. "pci" for subsystem -> ../../../bus/pci
 * @size: size of @buf
 * Return: length, -ENOBUFS if it does not fit, or negative errno as
 * sysfs_link_at() (-EXDEV if the target leaves the root).
 */
int sysfs_link_name(int dirfd, const char *dir_path, const char *name, char *buf, size_t size);

/**
 * sysfs_read_seqnum() - the kernel's last uevent SEQNUM (kernel/uevent_seqnum).
 * @rootfd: the sysfs root (borrowed)
 * @ret: the number; untouched on failure
 * Return: 0, -EIO if the file does not hold a decimal number, or negative errno.
 */
int sysfs_read_seqnum(int rootfd, uint64_t *ret);

/* Test hook: pretend openat2 is missing (exercise the fallback). */
void sysfs_force_fallback(bool on);
