/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * For the timeline tests: write a recording record by record, read it into
 * a finished model, and render the model into memory.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctl/timeline.h"
#include "uevent/record.h"
#include "test.h"

/* A new recording @dir/@name; its path in @path. */
static inline struct record_writer *tl_test_open(const char *dir, const char *name, char *path, size_t size)
{
        struct record_writer *w;

        snprintf(path, size, "%s/%s", dir, name);
        check_int(record_writer_open(path, &w), 0);
        return w;
}

/* A datagram "ACTION@DEVPATH" with its ACTION, DEVPATH, SUBSYSTEM and SEQNUM, received at @mono (@real on CLOCK_REALTIME). */
static inline void tl_test_datagram(struct record_writer *w, uint64_t seqnum, usec_t mono, usec_t real,
                                    const char *action, const char *devpath, const char *subsystem)
{
        char buf[1024];
        int n = snprintf(buf, sizeof(buf), "%s@%s%cACTION=%s%cDEVPATH=%s%cSUBSYSTEM=%s%cSEQNUM=%" PRIu64, action,
                         devpath, 0, action, 0, devpath, 0, subsystem, 0, seqnum);

        check(n > 0 && (size_t)n < sizeof(buf));
        check_int(record_append(w, &(struct record){ .type = RECORD_DATAGRAM,
                                                     .datagram = { real, mono, buf, (size_t)n + 1 } }),
                  0);
}

static inline void tl_test_start(struct record_writer *w, uint64_t seqnum, usec_t t, uint32_t pid,
                                 const char *program)
{
        check_int(record_append(w, &(struct record){ .type = RECORD_AGENT_START,
                                                     .agent_start = { seqnum, t, pid, program } }),
                  0);
}

static inline void tl_test_end(struct record_writer *w, uint64_t seqnum, usec_t t, uint32_t pid,
                               enum record_agent_status st, int value)
{
        check_int(record_append(w, &(struct record){ .type = RECORD_AGENT_END,
                                                     .agent_end = { seqnum, t, pid, st, value } }),
                  0);
}

/* A WAIT record: @seqnum waited for @blocker (0: a slot; @seqnum itself: udevd), recorded at @t. */
static inline void tl_test_wait(struct record_writer *w, uint64_t seqnum, uint64_t blocker, usec_t t,
                                const char *reason)
{
        check_int(record_append(w, &(struct record){ .type = RECORD_WAIT,
                                                     .wait = { seqnum, blocker, t, reason } }),
                  0);
}

/* @path read into a finished model by @by; *@problems: the damaged records the reader reported and skipped. */
static inline struct timeline *tl_test_load(const char *path, enum timeline_lanes by, size_t *problems)
{
        struct record_reader *r;
        struct timeline *tl;
        struct record rec;
        int k;

        *problems = 0;
        check_int(timeline_new(&tl), 0);
        check_int(record_reader_open(path, &r), 0);
        while ((k = record_reader_next(r, &rec)) > 0) {
                if (k == RECORD_NEXT_PROBLEM) {
                        ++*problems;
                        continue;
                }
                check_int(timeline_add(tl, &rec), 0);
        }
        check_int(k, 0);
        record_reader_free(r);
        check_int(timeline_finish(tl, by), 0);
        return tl;
}

/* The SVG of @tl under @title, in memory (NUL-terminated; *@size bytes). */
static inline char *tl_test_svg(const struct timeline *tl, const char *title, size_t *size)
{
        char *buf = NULL;
        FILE *f = open_memstream(&buf, size);

        check(f);
        check_int(timeline_render_svg(tl, title, f), 0);
        check_int(fclose(f), 0);
        return buf;
}

/* The text rendering of @tl with bars @columns wide, in memory. */
static inline char *tl_test_text(const struct timeline *tl, unsigned columns)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        check(f);
        check_int(timeline_render_text(tl, columns, f), 0);
        check_int(fclose(f), 0);
        return buf;
}
