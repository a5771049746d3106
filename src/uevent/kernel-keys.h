/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The keys a kernel puts into uevents (kernel-keys.c holds the table, the
 * one list of them), and what an event read from a recording keeps.
 *
 * The kernel is trusted, a file is not: an event replayed from a recording
 * (--replay) keeps the keys a kernel sends and those the agent
 * environment's block list refuses (env_key_refused(): left in, so that
 * the environment builder leaves them out and logs them as it does for the
 * kernel's events); every other entry is left out.  Events from the
 * kernel's socket are not filtered here.
 */

#include <stdbool.h>
#include <stddef.h>

struct uevent;

/**
 * uevent_key_sent_by_kernel() - is @key one a kernel puts into uevents?
 * @key: the key (borrowed; need not be NUL-terminated)
 * @len: its length
 *
 * A name of the table, or of a family whose names the kernel builds:
 * POWER_SUPPLY_*, OF_COMPATIBLE_*, OF_ALIAS_*, SDIO_INFO*, and
 * SYNTH_ARG_NAME where NAME is letters and digits (what the kernel takes
 * from a uevent file) and not a name env_key_refused() refuses.
 * Return: true if it is.
 */
bool uevent_key_sent_by_kernel(const char *key, size_t len);

/**
 * uevent_strip_unsent() - @ev as a datagram without the keys no kernel sends.
 * @ev: a parsed event (borrowed)
 * @out: receives the datagram, at most @ev->size bytes: the header, then
 *       the entries kept in their order
 * @ret_size: the size of the datagram in @out
 * @ret_dropped: receives the entries left out, at most @ev->n_vars
 *               (pointers into @ev's buffer, borrowed)
 *
 * An entry is kept if uevent_key_sent_by_kernel() or env_key_refused()
 * says yes to its key.  What @out holds is a valid datagram: ACTION,
 * DEVPATH, SUBSYSTEM and SEQNUM are kept, and a part of a valid event is
 * valid.
 * Return: the number of entries left out.
 */
size_t uevent_strip_unsent(const struct uevent *ev, char *out, size_t *ret_size, const char **ret_dropped);

/* For the unit test: the table, @ret_n names. */
const char *const *uevent_kernel_keys(size_t *ret_n);
