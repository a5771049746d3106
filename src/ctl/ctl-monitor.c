/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl monitor [--json] [--processed]: print events as the daemon
 * receives them (SEQNUM, time, gap markers) and, with --processed, as they
 * are queued, started and finished (agent status and duration).  Runs until
 * interrupted or the daemon goes away (exit 1).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/macro.h"

#define FIELD_MAX HP_CONTROL_RECORD_MAX

static bool is_number(const char *s)
{
        bool dot = false;

        if (!*s)
                return false;
        for (; *s; s++) {
                if (*s == '.' && !dot)
                        dot = true;
                else if (*s < '0' || *s > '9')
                        return false;
        }
        return true;
}

static void json_string(const char *s)
{
        putchar('"');
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        printf("\\%c", *p);
                else if (*p < 0x20 || *p >= 0x7f)
                        printf("\\u%04x", *p);
                else
                        putchar(*p);
        }
        putchar('"');
}

/* One record as a JSON object: {"kind":WORD, key: value...}; digits stay numbers. */
static void print_json(const char *rec)
{
        char key[64], val[FIELD_MAX];
        const char *p = rec;
        char kind[32];

        snprintf(kind, sizeof(kind), "%.*s", (int)strcspn(rec, " "), rec);
        printf("{\"kind\":");
        json_string(kind);
        while ((p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val)))) {
                printf(",\"%s\":", key);
                if (is_number(val) && strcmp(key, "uuid") != 0)
                        fputs(val, stdout);
                else
                        json_string(val);
        }
        printf("}\n");
}

/* Value of @key escaped for a terminal, "" if absent. */
static const char *field(const char *rec, const char *key, char *buf, size_t size)
{
        char raw[FIELD_MAX];

        if (ctlmsg_get(rec, key, raw, sizeof(raw)) < 0)
                return strcpy(buf, "");
        return escape_cstr(raw, buf, size);
}

static void print_time(const char *rec)
{
        char t[48], stamp[32];
        time_t sec;
        struct tm tm;

        if (ctlmsg_get(rec, "time", t, sizeof(t)) < 0) {
                printf("%-15s ", "-");
                return;
        }
        sec = (time_t)strtoll(t, NULL, 10);
        localtime_r(&sec, &tm);
        strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
        printf("%s.%.6s ", stamp, strchr(t, '.') ? strchr(t, '.') + 1 : "000000");
}

static void print_human(const char *rec)
{
        char a[FIELD_MAX], b[FIELD_MAX], c[FIELD_MAX], d[FIELD_MAX];
        char word[16];

        snprintf(word, sizeof(word), "%.*s", (int)MIN(strcspn(rec, " "), sizeof(word) - 1), rec);
        for (char *w = word; *w; w++)
                *w = (char)(*w >= 'a' && *w <= 'z' ? *w - 32 : *w);
        printf("%-9s", word);
        print_time(rec);
        if (ctlmsg_is(rec, "gap")) {
                printf("GAP %s-%s: %s events missing (%s)\n", field(rec, "first", a, sizeof(a)),
                       field(rec, "last", b, sizeof(b)), field(rec, "count", c, sizeof(c)),
                       field(rec, "class", d, sizeof(d)));
                return;
        }
        if (ctlmsg_is(rec, "overflow")) {
                printf("receive buffer overflowed: the kernel dropped events\n");
                return;
        }
        printf("%-8s ", field(rec, "seqnum", a, sizeof(a)));
        if (ctlmsg_is(rec, "received")) {
                printf("%s %s (%s)", field(rec, "action", a, sizeof(a)), field(rec, "devpath", b, sizeof(b)),
                       field(rec, "subsystem", c, sizeof(c)));
                field(rec, "verdict", d, sizeof(d));
                if (strcmp(d, "next") != 0)
                        printf(" [%s]", d);
                if (*field(rec, "uuid", a, sizeof(a)))
                        printf(" uuid=%s", a);
        } else if (ctlmsg_is(rec, "started")) {
                printf("pid %s: %s %s", field(rec, "pid", a, sizeof(a)), field(rec, "program", b, sizeof(b)),
                       field(rec, "devpath", c, sizeof(c)));
        } else if (ctlmsg_is(rec, "finished")) {
                uint64_t us = 0;
                (void)ctlmsg_get_u64(rec, "duration_us", &us);
                printf("%s after %" PRIu64 ".%03" PRIu64 " ms: %s %s", field(rec, "status", a, sizeof(a)),
                       us / 1000, us % 1000, field(rec, "program", b, sizeof(b)),
                       field(rec, "devpath", c, sizeof(c)));
        } else {
                printf("%s", field(rec, "devpath", a, sizeof(a)));
        }
        putchar('\n');
}

static const char help[] =
        "monitor [--processed] [--json] [--socket=PATH]\n\n"
        "Print events as the daemon receives them (SEQNUM, time, gaps, overflows) until\n"
        "interrupted.\n\n"
        "Options:\n"
        "      --processed        also show each event queued, filtered, its agent started\n"
        "                         and finished (exit status or signal, duration)\n"
        "  -j, --json             one JSON object per line instead of text\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 1 when the daemon goes away, 3 no daemon (or refused), 64 usage.\n";

int verb_monitor(int argc, char *argv[])
{
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "processed", no_argument, NULL, 'P' },
                CTL_OPTION_SOCKET,
                CTL_OPTION_HELP,
                { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "monitor", "jh", options, help };
        _cleanup_close_ int fd = -1;
        char rec[CTL_RECORD_SIZE];
        bool json = false, processed = false;
        int c, r;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                if (c == 'j')
                        json = true;
                else if (c == 'P')
                        processed = true;
        }
        if (c != CTL_GETOPT_END)
                return c == CTL_GETOPT_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
        if (optind < argc)
                return ctl_no_arguments("monitor", argc, argv);
        r = ctl_open("monitor", &fd);
        if (r != CTL_EXIT_OK)
                return r;
        r = ctl_request("monitor", fd, processed ? "monitor processed" : "monitor", rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (!ctlmsg_is(rec, "ok"))
                return ctlmsg_is(rec, "error") ? ctl_report_error("monitor", rec) : CTL_EXIT_FAILURE;
        for (;;) {
                r = ctl_recv(fd, rec, -1);
                if (r < 0) {
                        ctl_err("monitor", "%s", r == -ECONNRESET ? "the daemon closed the connection" : strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                if (ctlmsg_is(rec, "error"))
                        return ctl_report_error("monitor", rec);
                if (json)
                        print_json(rec);
                else
                        print_human(rec);
                fflush(stdout);
        }
}
