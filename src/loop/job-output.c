/* SPDX-License-Identifier: MIT */
/*
 * An agent's output (job.h): the pipes its programs write into, kept from
 * one run to the next, and the lines read from them into the log.
 *
 * Invariants: an output pipe belongs to at most one job (o->job) and is
 * idle (on m->jobs->idle_outputs, at most HP_OUTPUT_PIPES_KEPT) otherwise:
 * it goes back there only when the program that wrote into it left nothing
 * behind in its process group and nothing unread in the pipe (the caller of
 * job_output_put() says so), and an idle pipe found holding bytes is
 * closed; a read takes at most HP_OUTPUT_READ_MAX bytes; at most
 * HP_OUTPUT_LOG_LINES_MAX lines per job reach the log in each
 * HP_OUTPUT_LOG_INTERVAL_USEC, the rest are counted and reported.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "shared/escape.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/job.h"
#include "loop/manager-internal.h"
#include "pipeline/spawner.h"
#include "uevent/uevent.h"

void job_output_free(struct job_output *o)
{
        if (list_linked(&o->link)) {
                list_unlink(&o->link);
                o->m->jobs->n_idle_outputs--;
        }
        sd_event_source_disable_unref(o->io);
        safe_close(o->wfd);
        assert(o->m->jobs->bytes >= sizeof(*o));
        o->m->jobs->bytes -= sizeof(*o);
        free(o);
}

static int on_output(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct job_output *o = userdata;

        if (!o->job) {
                int unread = 0;

                /* Readiness seen before the last job read the pipe empty
                 * and gave it back: stale, the pipe stays idle. */
                if (ioctl(fd, FIONREAD, &unread) >= 0 && unread == 0)
                        return 0;
                /* Idle, yet written to: a process that left its agent's
                 * process group holds the write end.  Not ours to read. */
                log_debug("output pipe written to after its agent exited; closed");
                job_output_free(o);
                return 0;
        }
        (void)job_read_output(o->job, false); /* at the bound: the next iteration reads on */
        return 0;
}

/* An output pipe for @j's next program: an idle one, or a new one. */
int job_output_get(struct job *j)
{
        struct manager *m = j->m;
        struct job_output *o;
        int rfd = -1, r;

        o = list_first(&m->jobs->idle_outputs, struct job_output, link);
        if (o) {
                list_unlink(&o->link);
                m->jobs->n_idle_outputs--;
        } else {
                o = calloc(1, sizeof(*o));
                if (!o)
                        return -ENOMEM;
                list_node_init(&o->link);
                o->m = m;
                o->wfd = -1;
                m->jobs->bytes += sizeof(*o);
                r = spawn_pipe(&rfd, &o->wfd);
                if (r >= 0)
                        r = sd_event_add_io(m->event, &o->io, rfd, EPOLLIN, on_output, o);
                if (r < 0) {
                        safe_close(rfd);
                        job_output_free(o);
                        return r;
                }
                (void)sd_event_source_set_io_fd_own(o->io, true);
        }
        o->job = j;
        j->out = o;
        return 0;
}

/*
 * @j's program is over: keep its pipe for the next run if @reusable and
 * there is room, else close it.
 */
void job_output_put(struct job *j, bool reusable)
{
        struct job_output *o = j->out;
        struct manager *m = j->m;

        if (!o)
                return;
        j->out = NULL;
        o->job = NULL;
        if (!reusable || m->jobs->n_idle_outputs >= HP_OUTPUT_PIPES_KEPT) {
                job_output_free(o);
                return;
        }
        list_add_head(&m->jobs->idle_outputs, &o->link);
        m->jobs->n_idle_outputs++;
}

/* The log fields of @j's event and its current program. */
void job_log_fields(const struct job *j, struct log_fields *f)
{
        uevent_log_fields(j->ev, f);
        f->agent = j->program;
}

/* Say how many output lines the rate limit kept out of the log, if any. */
static void job_report_suppressed(struct job *j)
{
        struct log_fields f;

        if (j->out_suppressed == 0)
                return;
        job_log_fields(j, &f);
        log_internal(LOG_WARNING, 0, &f, "%s: %" PRIu64 " output lines suppressed (more than %d in %llus)",
                     j->program, j->out_suppressed, HP_OUTPUT_LOG_LINES_MAX,
                     (unsigned long long)(HP_OUTPUT_LOG_INTERVAL_USEC / USEC_PER_SEC));
        j->out_suppressed = 0;
}

static void job_log_line(struct job *j, const char *line, size_t len)
{
        char esc[HP_OUTPUT_LINE_MAX * 4 + 4];
        struct log_fields f;
        usec_t now;

        if (log_get_max_level() < LOG_INFO)
                return; /* nothing to log: no escaping, no clock */
        now = now_usec(CLOCK_MONOTONIC);
        if (now - j->out_window >= HP_OUTPUT_LOG_INTERVAL_USEC) {
                /* The window ended: report what it suppressed, open the next. */
                job_report_suppressed(j);
                j->out_window = now;
                j->out_lines = 0;
        }
        if (j->out_lines >= HP_OUTPUT_LOG_LINES_MAX) {
                j->out_suppressed++;
                return;
        }
        j->out_lines++;
        job_log_fields(j, &f);
        escape_bytes(line, len, esc, sizeof(esc));
        log_internal(LOG_INFO, 0, &f, "%s: %s", j->program, esc);
}

/* The run's output is over: log the partial line, report suppressed lines. */
static void job_output_flush(struct job *j)
{
        if (j->line_len > 0) {
                job_log_line(j, j->line, j->line_len);
                j->line_len = 0;
        }
        job_report_suppressed(j);
}

bool job_read_output(struct job *j, bool final)
{
        int fd = j->out ? sd_event_source_get_io_fd(j->out->io) : -1;
        char buf[4096];
        size_t total = 0;
        ssize_t n;

        /* At the program's exit, a read that finds nothing is a system call
         * per event for nothing: what the program wrote was in the pipe
         * before its pidfd became readable, so the wait that reported the
         * exit reported the pipe too (level-triggered, one slot per source),
         * and sd-event marked it pending; not pending, it was empty (or
         * on_output() read it to the end since). */
        if (final && fd >= 0 && sd_event_source_get_pending(j->out->io) == 0)
                fd = -1;

        while (fd >= 0 && total < HP_OUTPUT_READ_MAX &&
               (n = read(fd, buf, MIN(sizeof(buf), (size_t)HP_OUTPUT_READ_MAX - total))) > 0) {
                total += (size_t)n;
                for (ssize_t i = 0; i < n; i++) {
                        if (buf[i] == '\n') {
                                job_log_line(j, j->line, j->line_len);
                                j->line_len = 0;
                                continue;
                        }
                        j->line[j->line_len++] = buf[i];
                        if (j->line_len == HP_OUTPUT_LINE_MAX) {
                                job_log_line(j, j->line, j->line_len);
                                j->line_len = 0;
                        }
                }
        }
        if (final)
                job_output_flush(j);
        return total >= HP_OUTPUT_READ_MAX;
}
