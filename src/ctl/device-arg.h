/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A device named on hotplugctl's command line: a path below /sys (links
 * allowed, e.g. /sys/class/net/eth0), a DEVPATH (/devices/...) or a device
 * node (/dev/sda), turned into its DEVPATH.  Shared by the verbs that take
 * devices (wait, info).  Only sysfs and the node are read; nothing here
 * talks to the daemon.
 */

#include <stdbool.h>
#include <stddef.h>

/**
 * ctl_device_arg_check() - refuse what can never name a device.
 * @verb: for the message
 * @arg: as given (borrowed)
 * Return: CTL_EXIT_OK, or CTL_EXIT_USAGE after saying why.
 */
int ctl_device_arg_check(const char *verb, const char *arg);

/**
 * ctl_devpath_of_node() - the DEVPATH of the device node @node (block or char).
 * @ret: receives it (@size bytes)
 * Return: 0, -ENOTBLK (not a device node), -EXDEV (its link leads out of
 * /sys), or the negative errno of stat() or realpath().
 */
int ctl_devpath_of_node(const char *node, char *ret, size_t size);

/**
 * ctl_devpath_of_sysfs() - the DEVPATH of a path below /sys or a DEVPATH, if the device is there now.
 * @ret: receives it (@size bytes)
 * Return: 0, -ENODEV (a directory with no uevent file: no device), -EXDEV,
 * or the negative errno of realpath().
 */
int ctl_devpath_of_sysfs(const char *arg, char *ret, size_t size);

/* @arg is a DEVPATH as given (/devices/... or /sys/devices/...): its DEVPATH, known even while it is absent. */
bool ctl_device_arg_devpath(const char *arg, char *ret, size_t size);
