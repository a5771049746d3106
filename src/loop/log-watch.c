/* SPDX-License-Identifier: MIT */
/*
 * The log's writability watch (log-watch.h).  Invariant: while lines wait
 * in the log's buffer and the watch is open, an io source on the log's
 * current descriptor is enabled for EPOLLOUT; it is turned off when a
 * flush leaves nothing waiting.  A flush writes at most the buffer's
 * HP_LOG_BUFFER_MAX bytes, so one wakeup does bounded work.
 */
#include <sys/epoll.h>

#include "shared/log.h"
#include "loop/log-watch.h"

static sd_event_source *watch;

static int on_writable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        /* watch, not s: a new journal socket may have replaced it during the flush (on_wake). */
        if (log_flush() == 0 && watch)
                (void)sd_event_source_set_enabled(watch, SD_EVENT_OFF);
        return 0;
}

/* Lines started to wait, or the log's descriptor changed while they wait. */
static void on_wake(void *userdata)
{
        sd_event *e = userdata;
        int fd = log_buffer_fd();

        if (watch && sd_event_source_get_io_fd(watch) != fd)
                watch = sd_event_source_disable_unref(watch);
        if (!watch && sd_event_add_io(e, &watch, fd, EPOLLOUT, on_writable, NULL) < 0)
                return; /* they wait for the next line's try, or for the exit */
        (void)sd_event_source_set_enabled(watch, SD_EVENT_ON);
}

void log_watch_open(sd_event *e)
{
        if (log_buffer_fd() < 0)
                return;
        log_buffer_set_wake(on_wake, e);
        if (log_buffer_pending())
                on_wake(e);
}

void log_watch_close(void)
{
        log_buffer_set_wake(NULL, NULL);
        watch = sd_event_source_disable_unref(watch);
}
