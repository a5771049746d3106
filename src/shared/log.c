/* SPDX-License-Identifier: MIT */
/*
 * Log backend.  One line per call; per-event lines carry SEQNUM/DEVPATH/ACTION/
 * SUBSYSTEM either as journal fields or as "KEY=value" words on stderr.
 * Strings in @fields are escaped here, so callers may pass kernel data.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <systemd/sd-journal.h>

#include "shared/escape.h"
#include "shared/log.h"

static int max_level = LOG_INFO;
static int use_journal;
static const char *log_ident = "hotplugd";

static int stderr_is_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return 0;
        if (fstat(STDERR_FILENO, &st) < 0)
                return 0;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_open(enum log_target target, const char *ident)
{
        if (ident)
                log_ident = ident;
        switch (target) {
        case LOG_TARGET_JOURNAL:
                use_journal = 1;
                break;
        case LOG_TARGET_STDERR:
                use_journal = 0;
                break;
        default:
                use_journal = stderr_is_journal();
        }
}

void log_set_max_level(int level)
{
        max_level = level;
}

int log_get_max_level(void)
{
        return max_level;
}

int log_is_journal(void)
{
        return use_journal;
}

static const char *const level_names[] = { "emerg", "alert", "crit", "err",
                                           "warning", "notice", "info", "debug" };

static const char *const target_names[] = {
        [LOG_TARGET_AUTO] = "auto",
        [LOG_TARGET_STDERR] = "stderr",
        [LOG_TARGET_JOURNAL] = "journal",
};

const char *log_level_to_string(int level)
{
        return level >= 0 && (size_t)level < ELEMENTSOF(level_names) ? level_names[level] : NULL;
}

const char *log_target_to_string(enum log_target t)
{
        return (size_t)t < ELEMENTSOF(target_names) ? target_names[t] : NULL;
}

int log_target_from_string(const char *s)
{
        for (size_t i = 0; i < ELEMENTSOF(target_names); i++)
                if (strcmp(s, target_names[i]) == 0)
                        return (int)i;
        return -EINVAL;
}

int log_level_from_string(const char *s)
{
        if (!s || !*s)
                return -EINVAL;
        if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        for (size_t i = 0; i < ELEMENTSOF(level_names); i++)
                if (strcasecmp(s, level_names[i]) == 0)
                        return (int)i;
        if (strcasecmp(s, "error") == 0)
                return LOG_ERR;
        if (strcasecmp(s, "warn") == 0)
                return LOG_WARNING;
        return -EINVAL;
}

static void log_to_journal(int level, const struct log_fields *f, const char *msg)
{
        char prio[16], seq[40], dur[48];
        struct iovec iov[12];
        size_t n = 0;
        /* Field values need no escaping for the journal; they are kept as bytes. */
        char *bufs[7] = { 0 };

        snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
        iov[n++] = (struct iovec){ .iov_base = prio, .iov_len = strlen(prio) };
        if (asprintf(&bufs[0], "MESSAGE=%s", msg) >= 0)
                iov[n++] = (struct iovec){ .iov_base = bufs[0], .iov_len = strlen(bufs[0]) };
        if (f) {
                if (f->seqnum) {
                        snprintf(seq, sizeof(seq), "SEQNUM=%" PRIu64, f->seqnum);
                        iov[n++] = (struct iovec){ .iov_base = seq, .iov_len = strlen(seq) };
                }
                const char *keys[] = { "DEVPATH", "ACTION", "SUBSYSTEM", "AGENT", "AGENT_STATUS" };
                const char *vals[] = { f->devpath, f->action, f->subsystem, f->agent, f->agent_status };
                for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                        if (!vals[i] || asprintf(&bufs[i + 1], "%s=%s", keys[i], vals[i]) < 0)
                                continue;
                        iov[n++] = (struct iovec){ .iov_base = bufs[i + 1], .iov_len = strlen(bufs[i + 1]) };
                }
                if (f->duration_usec >= 0) {
                        snprintf(dur, sizeof(dur), "AGENT_DURATION_USEC=%" PRId64, f->duration_usec);
                        iov[n++] = (struct iovec){ .iov_base = dur, .iov_len = strlen(dur) };
                }
        }
        if (sd_journal_sendv(iov, (int)n) < 0)
                fprintf(stderr, "%s: %s\n", log_ident, msg);
        for (size_t i = 0; i < ELEMENTSOF(bufs); i++)
                free(bufs[i]);
}

static void log_to_stderr(const struct log_fields *f, const char *msg)
{
        char line[2048], esc[512];
        size_t o = 0;

#define APPEND(...)                                                                                        \
        do {                                                                                               \
                int k_ = snprintf(line + o, sizeof(line) - o, __VA_ARGS__);                                \
                if (k_ > 0)                                                                                \
                        o = MIN(sizeof(line) - 1, o + (size_t)k_);                                         \
        } while (0)

        APPEND("%s: ", log_ident);
        if (f) {
                if (f->seqnum)
                        APPEND("SEQNUM=%" PRIu64 " ", f->seqnum);
                if (f->action)
                        APPEND("ACTION=%s ", escape_cstr(f->action, esc, sizeof(esc)));
                if (f->devpath)
                        APPEND("DEVPATH=%s ", escape_cstr(f->devpath, esc, sizeof(esc)));
                if (f->subsystem)
                        APPEND("SUBSYSTEM=%s ", escape_cstr(f->subsystem, esc, sizeof(esc)));
        }
        APPEND("%s", msg);
        if (f) {
                if (f->agent_status)
                        APPEND(" status=%s", f->agent_status);
                if (f->duration_usec >= 0)
                        APPEND(" duration=%" PRId64 ".%03" PRId64 "ms", f->duration_usec / 1000,
                               f->duration_usec % 1000);
        }
#undef APPEND
        line[o++] = '\n';
        /* One write per line so concurrent writers do not interleave. */
        (void)!write(STDERR_FILENO, line, o);
}

int log_internalv(int level, int error, const struct log_fields *fields, const char *fmt, va_list ap)
{
        char msg[1536];
        int saved = errno;

        if (error < 0)
                error = -error;
        if ((level & 7) > max_level) {
                errno = saved;
                return -error;
        }
        int k = vsnprintf(msg, sizeof(msg), fmt, ap);
        if (error && k >= 0 && (size_t)k < sizeof(msg))
                snprintf(msg + k, sizeof(msg) - (size_t)k, ": %s", strerror(error));

        if (use_journal)
                log_to_journal(level & 7, fields, msg);
        else
                log_to_stderr(fields, msg);
        errno = saved;
        return -error;
}

int log_internal(int level, int error, const struct log_fields *fields, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = log_internalv(level, error, fields, fmt, ap);
        va_end(ap);
        return r;
}
