/* SPDX-License-Identifier: MIT */
/*
 * Log backend.  One line per call; per-event lines carry SEQNUM/DEVPATH/ACTION/
 * SUBSYSTEM either as journal fields or as "KEY=value" words on stderr.
 * Strings in @fields are escaped here, so callers may pass kernel data.
 * This file formats: a journal entry in journald's native format (what
 * sd_journal_sendv() would send, no field more) or a stderr line;
 * log-sink.c writes it, at once or, in the daemon, without blocking.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "shared/escape.h"
#include "shared/log.h"
#include "shared/log-sink.h"

static int max_level = LOG_INFO;
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
                sink_reset(true, log_ident);
                break;
        case LOG_TARGET_STDERR:
                sink_reset(false, log_ident);
                break;
        default:
                sink_reset(stderr_is_journal(), log_ident);
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
        return sink_journal();
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

/* An entry in journald's native format, at most HP_LOG_ENTRY_MAX bytes. */
struct entry {
        char data[HP_LOG_ENTRY_MAX];
        size_t n;
};

/*
 * KEY=value, or KEY, a newline, the length (64 bits, little endian) and
 * the value when it holds a newline.  A value that does not fit is cut
 * and ends in a marker; a field that cannot fit even so is left out.
 */
static void entry_add(struct entry *e, const char *key, const char *val)
{
        static const char cut[] = "...[truncated]";
        size_t klen = strlen(key), vlen = strlen(val), room;
        bool binary = memchr(val, '\n', vlen) != NULL, cutting = false;
        size_t frame = klen + 1 + (binary ? sizeof(uint64_t) : 0) + 1;

        if (e->n + frame > sizeof(e->data))
                return;
        room = sizeof(e->data) - e->n - frame;
        if (vlen > room) {
                if (room < sizeof(cut) - 1)
                        return;
                vlen = room - (sizeof(cut) - 1);
                cutting = true;
        }
        memcpy(e->data + e->n, key, klen);
        e->n += klen;
        if (binary) {
                uint64_t len = htole64((uint64_t)(vlen + (cutting ? sizeof(cut) - 1 : 0)));

                e->data[e->n++] = '\n';
                memcpy(e->data + e->n, &len, sizeof(len));
                e->n += sizeof(len);
        } else
                e->data[e->n++] = '=';
        memcpy(e->data + e->n, val, vlen);
        e->n += vlen;
        if (cutting) {
                memcpy(e->data + e->n, cut, sizeof(cut) - 1);
                e->n += sizeof(cut) - 1;
        }
        e->data[e->n++] = '\n';
}

static void log_to_journal(int level, const struct log_fields *f, const char *msg)
{
        struct entry e;
        char num[32];

        e.n = 0;
        snprintf(num, sizeof(num), "%d", level);
        entry_add(&e, "PRIORITY", num);
        entry_add(&e, "MESSAGE", msg);
        if (f) {
                if (f->seqnum) {
                        snprintf(num, sizeof(num), "%" PRIu64, f->seqnum);
                        entry_add(&e, "SEQNUM", num);
                }
                /* Field values need no escaping for the journal; they are kept as bytes. */
                const char *keys[] = { "DEVPATH", "ACTION", "SUBSYSTEM", "AGENT", "AGENT_STATUS" };
                const char *vals[] = { f->devpath, f->action, f->subsystem, f->agent, f->agent_status };
                for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                        if (vals[i])
                                entry_add(&e, keys[i], vals[i]);
                if (f->duration_usec >= 0) {
                        snprintf(num, sizeof(num), "%" PRId64, f->duration_usec);
                        entry_add(&e, "AGENT_DURATION_USEC", num);
                }
        }
        if (sink_line(e.data, e.n) < 0)
                fprintf(stderr, "%s: %s\n", log_ident, msg);
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
        (void)sink_line(line, o);
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

        if (sink_journal())
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
