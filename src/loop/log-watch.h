/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The log's writability watch (loop/ only): in buffered mode (log.h,
 * log_buffer_start()) lines the journal or stderr did not take wait in the
 * log's buffer; while they do, the loop watches the log's descriptor and
 * writes them out when it is writable.  One per process, as the log is.
 */

#include <systemd/sd-event.h>

/**
 * log_watch_open() - watch the log from @e's loop (borrowed; the watch
 * must be closed before @e goes).  Nothing to do when the log is direct.
 */
void log_watch_open(sd_event *e);

/* Stop watching; lines still waiting stay in the log's buffer (log_flush_wait() at exit). */
void log_watch_close(void);
