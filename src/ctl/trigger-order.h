/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The order hotplugctl trigger keeps when it writes uevent files several at
 * once.  The devices come as a list (the walk's, or the DEVICEs as given).
 * The list is cut into segments where it leaves path order (a path that
 * sorts before the one before it: the walk, as udev's enumeration, moves
 * sound cards' control devices and md and dm block devices to the end on
 * purpose); the segments are written one after another, so everything in
 * a segment is sent after everything in the segments before it.  Within a
 * segment a device's write starts only after the write of its nearest
 * ancestor in the segment returned, so a device's event is sent after its
 * parent's, grandparent's... whenever they are triggered too.  Pure: no I/O.
 */
#include <stdbool.h>
#include <stddef.h>

#define TRIGGER_NO_PARENT ((size_t)-1)

/**
 * trigger_path_cmp() - compare two paths component by component
 * @a: a path (borrowed)
 * @b: another (borrowed)
 *
 * As strcmp(), but '/' sorts before every other byte, so a device's
 * descendants follow it directly ("/a", "/a/b", "/a-b"), as libudev sorts.
 *
 * Return: <0, 0 or >0.
 */
int trigger_path_cmp(const char *a, const char *b);

/**
 * trigger_segment() - the first index of @i's segment, as the list grows
 * @paths: the list up to @i (borrowed)
 * @i: an index
 * @prev: trigger_segment() of @i - 1 (ignored when @i is 0)
 *
 * Return: @prev if @i's path sorts after the one before it, else @i (a new
 * segment starts where the list steps back or repeats a path).
 */
size_t trigger_segment(char *const *paths, size_t i, size_t prev);

/**
 * trigger_parent() - the device whose write must return before @i's starts
 * @paths: the list (borrowed); [@from, @i] sorted by trigger_path_cmp()
 * @from: the first index of @i's segment
 * @i: the device
 *
 * Return: the index in [@from, @i) of @i's nearest ancestor (a path that is
 * a prefix of @i's up to a '/'), or TRIGGER_NO_PARENT.
 */
size_t trigger_parent(char *const *paths, size_t from, size_t i);

/**
 * trigger_prioritize() - the order of a list with some subsystems first
 * @paths: the list, in the walk's order (borrowed)
 * @subsystems: each device's subsystem (borrowed)
 * @n: entries of both
 * @prio: the subsystems to put first, in this order (borrowed)
 * @n_prio: entries of @prio
 * @ret_order: receives @n indices into @paths: for each of @prio in turn,
 *             each of its devices not placed yet, in list order, right
 *             after those of its ancestors in the list not placed yet (in
 *             list order); then every other device, in list order
 * @placed: scratch, @n entries
 */
void trigger_prioritize(char *const *paths, char *const *subsystems, size_t n, char *const *prio, size_t n_prio,
                        size_t *ret_order, bool *placed);
