/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Where log.c's formatted lines go (log.c only): journald's native socket
 * or stderr, at once and blocking (direct mode), or, in the daemon, never
 * blocking (buffered mode, log_buffer_start() in log.h).
 */

#include <stdbool.h>
#include <stddef.h>

/*
 * Direct mode towards the journal (@journal) or stderr, @ident naming the
 * program in the drop report's stderr line (borrowed, kept: a literal);
 * forgets buffered mode without closing anything (a forked child calls it).
 */
void sink_reset(bool journal, const char *ident);
/* True if lines go to the journal. */
bool sink_journal(void);

/**
 * sink_line() - hand over one line: a journal entry in the native format,
 * or a stderr line with its newline.
 * @p: the bytes (borrowed for the call; buffered mode copies what it keeps)
 * @n: their length
 *
 * Return: 0 when the line was written or kept (or, in buffered mode,
 * counted as dropped), negative errno when the target refused it in direct
 * mode (the caller may say it elsewhere).
 */
int sink_line(const char *p, size_t n);

/* Tests: journald's socket at @path (borrowed, kept); NULL: its real place. */
void sink_set_journal_path(const char *path);
