/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The devices hotplugctl trigger enumerates, found by walking the sysfs
 * device tree as it goes, so that the first uevent files can be written
 * while the rest of the tree is still being read.
 *
 * A device is a directory below ROOT/devices that holds a regular file
 * "uevent" and a link "subsystem" (what libudev's enumeration lists).
 * Links are never followed: every device appears once, at its own path.
 * Devices come in trigger_path_cmp() order (a parent before its children,
 * siblings in byte order), except those udev's enumeration puts last on
 * purpose, which come after all others, in the same order among themselves:
 * a sound card's control devices (controlC*, announced once the card is
 * complete), then md and dm block devices (built on other block devices),
 * each with its descendants.
 */
#include <stddef.h>

/**
 * trigger_walk_fn - called for each device, in the order above
 * @userdata: trigger_walk()'s @userdata
 * @syspath: the device's path, ROOT included (borrowed for the call)
 * @subsystem: the last component of its subsystem link (borrowed)
 * Return: 0 to go on, or a negative errno that ends the walk.
 */
typedef int (*trigger_walk_fn)(void *userdata, const char *syspath, const char *subsystem);

/**
 * trigger_walk() - call @fn for every device below @root/devices
 * @root: the sysfs mount, e.g. "/sys" (borrowed)
 * @fn: the callback
 * @userdata: passed to @fn
 *
 * Directories that vanish or cannot be read during the walk (a device
 * removed meanwhile) are passed over; trees deeper than
 * HP_TRIGGER_WALK_DEPTH_MAX are not entered.
 *
 * Return: 0, @fn's negative return, -ENOMEM, or the negative errno of
 * opening @root/devices.
 */
int trigger_walk(const char *root, trigger_walk_fn fn, void *userdata);

/**
 * trigger_walk_subsystems() - call @fn for every module, bus and driver
 * @root: the sysfs mount (borrowed)
 * @fn: the callback; its subsystem is "module" (@root/module/NAME),
 *      "subsystem" (@root/bus/NAME) or "drivers" (@root/bus/BUS/drivers/NAME),
 *      as udev names them
 * @userdata: passed to @fn
 *
 * What udevadm trigger --type=subsystems lists: each directory there that
 * holds a "uevent" file, modules first, then buses, then drivers, each in
 * name order.  Directories that cannot be read are passed over.
 * Return: 0, @fn's negative return, or -ENOMEM.
 */
int trigger_walk_subsystems(const char *root, trigger_walk_fn fn, void *userdata);
