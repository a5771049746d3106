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
