/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How far apart two short words are, for "did you mean ...?" suggestions.
 * No state, no allocation: words longer than DISTANCE_WORD_MAX are as far
 * from everything as they are long.
 */

#include <stddef.h>

#define DISTANCE_WORD_MAX 64

/**
 * edit_distance() - the optimal string alignment distance of @a and @b.
 * @a: a word (borrowed)
 * @b: another (borrowed)
 *
 * The fewest insertions, deletions, substitutions and swaps of two
 * neighbouring characters that turn @a into @b ("timout" and "timeout": 1,
 * "max-chlidren" and "max-children": 1).
 * Return: the distance; for a word longer than DISTANCE_WORD_MAX, the
 * longer length.
 */
size_t edit_distance(const char *a, const char *b);
