/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The one logging layer.  Modules return errors; the manager, the mains and
 * hotplugctl decide what to log.  Output goes to stderr or, when running
 * under systemd with stderr connected to the journal, to journald natively
 * with structured fields so that `journalctl SEQNUM=1234` finds an event.
 *
 * Every string that came from the kernel or an agent must go through
 * escape_cstr() (or log_event's fields, which escape) before it is printed.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>

#include "shared/macro.h"

enum log_target {
        LOG_TARGET_AUTO,    /* journal if stderr is the journal stream, else stderr */
        LOG_TARGET_STDERR,
        LOG_TARGET_JOURNAL,
};

/* Structured fields of a per-event log line.  Unset members are skipped. */
struct log_fields {
        uint64_t seqnum;           /* 0: none */
        const char *devpath;
        const char *action;
        const char *subsystem;
        const char *agent;         /* AGENT= program path */
        const char *agent_status;  /* AGENT_STATUS= e.g. "exit 0", "signal 9", "timeout" */
        int64_t duration_usec;     /* AGENT_DURATION_USEC=, < 0: none */
};

#define LOG_FIELDS_INIT { .duration_usec = -1 }

void log_open(enum log_target target, const char *ident);
void log_set_max_level(int level);
int log_get_max_level(void);
/* Parse "err", "warning", "notice", "info", "debug" or 0-7; negative errno on bad input. */
int log_level_from_string(const char *s);
/* "err", "info", ... for a syslog level; NULL outside 0..7. */
const char *log_level_to_string(int level);
/* "auto", "stderr", "journal"; from_string: the enum, or -EINVAL. */
const char *log_target_to_string(enum log_target t);
int log_target_from_string(const char *s);
/* True if lines go to the journal (structured fields available). */
int log_is_journal(void);

/*
 * Never waiting on the log (the daemon).  After log_buffer_start(), lines
 * are written without blocking: a line the journal or stderr does not take
 * now is kept, in order, in a buffer of at most HP_LOG_BUFFER_MAX bytes,
 * and written by log_flush() when the target takes lines again; a line
 * that does not fit is dropped and counted, and once the buffer drained
 * one line says how many: "N log lines dropped while the journal (stderr)
 * did not take them".  Without it (hotplugctl, a forked child) each line
 * is written at once, blocking.  log_open() goes back to that.
 */
typedef void (*log_wake_fn)(void *userdata);

/**
 * log_buffer_start() - write without blocking from now on (after log_open()).
 *
 * Journal: a datagram socket of its own connected to journald's (if that
 * cannot be connected, lines go to stderr).  stderr: a pipe, FIFO or
 * terminal is opened again non-blocking (its other holders keep theirs
 * as it is), a socket gets MSG_DONTWAIT, a file is written as it is.
 * Return: 0, or negative errno (the log stays direct, as it was).
 */
int log_buffer_start(void);

/**
 * log_buffer_set_wake() - be told when lines start to wait.
 * @wake: called (from inside a log call) each time the buffer goes from
 *        empty to holding a line, and when log_buffer_fd() changed while
 *        lines wait; the caller then watches log_buffer_fd() for
 *        writability and calls log_flush().  NULL: nobody is told.
 * @userdata: for @wake (borrowed)
 */
void log_buffer_set_wake(log_wake_fn wake, void *userdata);

/* The descriptor to watch for writability while lines wait; -1 outside buffered mode. */
int log_buffer_fd(void);

/* True while lines wait in the buffer. */
bool log_buffer_pending(void);

/**
 * log_flush() - write what waits, as far as the target takes it now.
 * Once the buffer drained, lines dropped since the last report are
 * reported in one line.
 * Return: 0 when nothing waits any more, 1 when lines still wait.
 */
int log_flush(void);

/**
 * log_flush_wait() - at exit: write what waits, waiting at most @usec in all.
 * Return: the lines still waiting (lost) after that.
 */
size_t log_flush_wait(uint64_t usec);

/* Log lines dropped since log_buffer_start() (never reset). */
uint64_t log_lines_dropped(void);

/*
 * True once stderr, the buffered log's target, refused a line with EPIPE:
 * the pipe's reader (or the socket's peer) is gone.  Nothing is written to
 * it again; every line from then on is dropped and counted.  Writing there
 * raises SIGPIPE first: the daemon ignores it (main.c).
 */
bool log_target_gone(void);

/* Leave buffered mode: what still waits is discarded; closes what log_buffer_start() opened. */
void log_buffer_stop(void);

/**
 * log_internal() - write one line.
 * @level: syslog priority
 * @error: errno value (positive or negative) appended as ": strerror", 0 for none
 * @fields: optional per-event fields (borrowed for the call), may be NULL
 * @fmt: printf format
 *
 * Return: -abs(@error) so callers can `return log_error_errno(r, ...)`, or 0
 * when @error is 0.
 */
int log_internal(int level, int error, const struct log_fields *fields, const char *fmt, ...) _printf_(4, 5);
int log_internalv(int level, int error, const struct log_fields *fields, const char *fmt, va_list ap)
        _printf_(4, 0);

#define log_full(level, ...) log_internal((level), 0, NULL, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_ERR, (e), NULL, __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, (e), NULL, __VA_ARGS__)
#define log_debug_errno(e, ...) log_internal(LOG_DEBUG, (e), NULL, __VA_ARGS__)
