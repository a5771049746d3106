/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the timeline model of hotplugctl (timeline.h) and both of
 * its renderers.  The input is read as a program of records rather than as
 * a recording file, so that every byte reaches the model instead of a
 * checksum: each step takes a record type, its times and numbers from the
 * input (any 64-bit value, UINT64_MAX included), and datagrams either built
 * from a few devices, actions and subsystems (they parse) or taken raw
 * (they mostly do not).
 *
 * Invariants: the model finishes; runs are sorted by start and marks by
 * time; every run ends no earlier than it starts and starts no earlier than
 * its wait; every event and run has a lane below n_lanes, which stays
 * within HP_TIMELINE_MAX_LANES; every run has a sub-row of its lane, and
 * the lanes' rows add up; wall-clock times of any value format; both
 * renderers succeed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bounds.h"
#include "fuzz.h"
#include "ctl/timeline.h"

struct input {
        const uint8_t *p;
        size_t n;
};

static uint8_t take8(struct input *in)
{
        uint8_t b = 0;

        if (in->n) {
                b = *in->p++;
                in->n--;
        }
        return b;
}

/* A 64-bit number: small ones are common in real recordings, so one byte
 * chooses between a byte, two bytes, and all eight. */
static uint64_t take64(struct input *in)
{
        uint8_t how = take8(in);
        unsigned bytes = how < 128 ? 1 : how < 224 ? 2 : 8;
        uint64_t v = 0;

        for (unsigned i = 0; i < bytes; i++)
                v = v << 8 | take8(in);
        return v;
}

/* A text of 1..32 bytes without NUL, into @buf. */
static const char *take_text(struct input *in, char *buf)
{
        unsigned len = 1 + take8(in) % 32;

        for (unsigned i = 0; i < len; i++) {
                uint8_t c = take8(in);
                buf[i] = c ? (char)c : 'x';
        }
        buf[len] = '\0';
        return buf;
}

static size_t make_datagram(struct input *in, char *buf, size_t size)
{
        static const char *const actions[] = { "add", "remove", "change", "move", "bind", "online", "a_b" };
        static const char *const subsystems[] = { "net", "block", "usb", "input", "pci", "tty" };
        static const char *const devices[] = { "/devices/virtual/net/lo", "/devices/pci0000:00/0000:00:1d.0",
                                                "/devices/pci0000:00/0000:00:1d.0/usb2", "/devices/virtual/block/loop" };
        uint8_t a = take8(in), d = take8(in), s = take8(in), sub = take8(in);
        uint64_t seq = take64(in);
        int n;

        if (a == 0xff) { /* raw bytes: exercises the rejected count */
                size_t len = take8(in);

                len = len < in->n ? len : in->n;
                memcpy(buf, in->p, len);
                in->p += len;
                in->n -= len;
                if (!len)
                        buf[len++] = '\0';
                return len;
        }
        n = snprintf(buf, size, "%s@%s%s%.0u%c" "ACTION=%s%c" "DEVPATH=%s%s%.0u%c" "SUBSYSTEM=%s%c" "SEQNUM=%llu",
                     actions[a % 7], devices[d % 4], sub ? "/sub" : "", sub, 0, actions[a % 7], 0, devices[d % 4],
                     sub ? "/sub" : "", sub, 0, subsystems[s % 6], 0, (unsigned long long)seq);
        fuzz_check(n > 0 && (size_t)n < size);
        return (size_t)n + 1;
}

static void check_model(const struct timeline *tl)
{
        fuzz_check(tl->finished && tl->n_lanes <= HP_TIMELINE_MAX_LANES);
        for (size_t i = 0; i < tl->n_events; i++)
                fuzz_check(tl->events[i].lane < tl->n_lanes);
        size_t rows = 0;
        char buf[64];

        for (size_t i = 0; i < tl->n_lanes; i++) {
                fuzz_check(tl->lanes[i].rows >= 1 && tl->lanes[i].first_row == rows);
                rows += tl->lanes[i].rows;
        }
        fuzz_check(rows == tl->n_rows);
        for (size_t i = 0; i < tl->n_runs; i++) {
                fuzz_check(tl->runs[i].lane < tl->n_lanes && tl->runs[i].end >= tl->runs[i].start);
                fuzz_check(tl->runs[i].row < tl->lanes[tl->runs[i].lane].rows);
                fuzz_check(tl->runs[i].queued <= tl->runs[i].start);
                (void)timeline_wall(tl, tl->runs[i].queued, TL_WALL_DATE, buf, sizeof(buf));
                fuzz_check(i == 0 || tl->runs[i - 1].start <= tl->runs[i].start);
                fuzz_check(tl->runs[i].event < (long)tl->n_events);
        }
        for (size_t i = 1; i < tl->n_marks; i++)
                fuzz_check(tl->marks[i - 1].t <= tl->marks[i].t);
        for (size_t i = 0; i < tl->n_waits; i++)
                fuzz_check(tl->waits[i].from_run < (long)tl->n_runs && tl->waits[i].to_run < (long)tl->n_runs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static FILE *null;
        struct input in = { data, size };
        char dgram[HP_UEVENT_MAX_SIZE], text[33];
        struct timeline *tl;
        uint8_t mode = take8(&in);
        struct record rec;

        if (!null)
                null = fopen("/dev/null", "we");
        fuzz_check(null != NULL);
        fuzz_check(timeline_new(&tl) == 0);
        while (in.n) {
                memset(&rec, 0, sizeof(rec));
                rec.type = 1 + take8(&in) % (_RECORD_TYPE_MAX - 1);
                switch (rec.type) {
                case RECORD_DATAGRAM:
                        rec.datagram.realtime = take64(&in);
                        rec.datagram.monotonic = take64(&in);
                        rec.datagram.size = make_datagram(&in, dgram, sizeof(dgram));
                        rec.datagram.data = dgram;
                        break;
                case RECORD_AGENT_START:
                        rec.agent_start.seqnum = take64(&in);
                        rec.agent_start.monotonic = take64(&in);
                        rec.agent_start.pid = (uint32_t)take64(&in);
                        rec.agent_start.program = take_text(&in, text);
                        break;
                case RECORD_AGENT_END:
                        rec.agent_end.seqnum = take64(&in);
                        rec.agent_end.monotonic = take64(&in);
                        rec.agent_end.pid = (uint32_t)take64(&in);
                        rec.agent_end.status = take8(&in) % _RECORD_AGENT_STATUS_MAX;
                        rec.agent_end.value = (int32_t)take64(&in);
                        break;
                case RECORD_WAIT:
                        rec.wait.seqnum = take64(&in);
                        rec.wait.blocker = take64(&in);
                        rec.wait.monotonic = take64(&in);
                        rec.wait.reason = take_text(&in, text);
                        break;
                case RECORD_GAP:
                        rec.gap.monotonic = take64(&in);
                        rec.gap.first = take64(&in);
                        rec.gap.last = take64(&in);
                        rec.gap.class = take8(&in) % _RECORD_GAP_CLASS_MAX;
                        break;
                default:
                        rec.overflow.realtime = take64(&in);
                        rec.overflow.monotonic = take64(&in);
                        break;
                }
                fuzz_check(timeline_add(tl, &rec) == 0);
        }
        fuzz_check(timeline_finish(tl, mode & 1 ? TIMELINE_LANES_SUBSYSTEM : TIMELINE_LANES_DEVICE) == 0);
        check_model(tl);
        fuzz_check(timeline_render_svg(tl, "fuzz <&>\"", null) == 0);
        fuzz_check(timeline_render_text(tl, 10 + mode % 200, null) == 0);
        timeline_free(tl);
        return 0;
}
