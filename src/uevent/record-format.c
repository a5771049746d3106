/* SPDX-License-Identifier: MIT */
/*
 * Event recordings: the format's names, its checksum, the encoding of one
 * record and the file header.  The format is described in record.h; the
 * writer is record-writer.c, the reader record-reader.c.
 *
 * Invariants: record_encode() writes only records a reader accepts (frame,
 * checksum and payload layout as record.h states) or refuses with -EINVAL;
 * it never writes past @size.
 */
#include <errno.h>
#include <string.h>

#include "uevent/record-internal.h"

_Static_assert(sizeof(RECORD_MAGIC) - 1 == 8, "magic is 8 bytes");
_Static_assert(sizeof(RECORD_SYNC) - 1 == 4, "sync is 4 bytes");

/* ---- names and checksum ---------------------------------------------------- */

const char *record_type_to_string(enum record_type t)
{
        static const char *const names[_RECORD_TYPE_MAX] = {
                [RECORD_DATAGRAM] = "datagram",   [RECORD_AGENT_START] = "agent-start",
                [RECORD_AGENT_END] = "agent-end", [RECORD_WAIT] = "wait",
                [RECORD_GAP] = "gap",             [RECORD_OVERFLOW] = "overflow",
        };
        return (unsigned)t < _RECORD_TYPE_MAX && names[t] ? names[t] : "unknown";
}

const char *record_agent_status_to_string(enum record_agent_status s)
{
        static const char *const names[_RECORD_AGENT_STATUS_MAX] = {
                [RECORD_AGENT_EXITED] = "exit",
                [RECORD_AGENT_SIGNALED] = "signal",
                [RECORD_AGENT_TIMEOUT] = "timeout",
                [RECORD_AGENT_EXEC_FAILED] = "exec-failed",
                [RECORD_AGENT_SET_ASIDE] = "set-aside",
        };
        return (unsigned)s < _RECORD_AGENT_STATUS_MAX ? names[s] : "unknown";
}

const char *record_gap_class_to_string(enum record_gap_class c)
{
        return c == RECORD_GAP_OVERFLOW ? "overflow" : c == RECORD_GAP_UNEXPLAINED ? "unexplained" : "unknown";
}

const uint32_t *record_crc_table(void)
{
        static uint32_t table[256];

        if (table[1] == 0) /* filled once; the same values from any thread */
                for (uint32_t i = 0; i < 256; i++) {
                        uint32_t c = i;
                        for (int k = 0; k < 8; k++)
                                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
                        table[i] = c;
                }
        return table;
}

uint32_t record_crc32(uint32_t crc, const void *data, size_t size)
{
        const uint32_t *table = record_crc_table();
        const uint8_t *p = data;

        crc = ~crc;
        while (size--)
                crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
        return ~crc;
}

/* ---- encoding -------------------------------------------------------------- */

static ssize_t text_len(const char *s)
{
        size_t n;

        if (!s)
                return -EINVAL;
        n = strnlen(s, HP_RECORD_TEXT_MAX + 1);
        return n == 0 || n > HP_RECORD_TEXT_MAX ? -EINVAL : (ssize_t)n;
}

/* Fixed part of the payload into @p; the variable tail in @tail and @tail_len.  Return: fixed size or -EINVAL. */
static ssize_t encode_payload(const struct record *rec, uint8_t *p, const void **tail, size_t *tail_len)
{
        ssize_t n;

        *tail = NULL;
        *tail_len = 0;
        switch (rec->type) {
        case RECORD_DATAGRAM:
                if (rec->datagram.size == 0 || rec->datagram.size > HP_UEVENT_MAX_SIZE || !rec->datagram.data)
                        return -EINVAL;
                put64(p, rec->datagram.realtime);
                put64(p + 8, rec->datagram.monotonic);
                *tail = rec->datagram.data;
                *tail_len = rec->datagram.size;
                return 16;
        case RECORD_AGENT_START:
                if ((n = text_len(rec->agent_start.program)) < 0)
                        return n;
                put64(p, rec->agent_start.seqnum);
                put64(p + 8, rec->agent_start.monotonic);
                put32(p + 16, rec->agent_start.pid);
                *tail = rec->agent_start.program;
                *tail_len = (size_t)n;
                return 20;
        case RECORD_AGENT_END:
                if ((unsigned)rec->agent_end.status >= _RECORD_AGENT_STATUS_MAX)
                        return -EINVAL;
                put64(p, rec->agent_end.seqnum);
                put64(p + 8, rec->agent_end.monotonic);
                put32(p + 16, rec->agent_end.pid);
                put16(p + 20, (uint16_t)rec->agent_end.status);
                put16(p + 22, 0);
                put32(p + 24, (uint32_t)rec->agent_end.value);
                return 28;
        case RECORD_WAIT:
                if ((n = text_len(rec->wait.reason)) < 0)
                        return n;
                put64(p, rec->wait.seqnum);
                put64(p + 8, rec->wait.blocker);
                put64(p + 16, rec->wait.monotonic);
                *tail = rec->wait.reason;
                *tail_len = (size_t)n;
                return 24;
        case RECORD_GAP:
                if ((unsigned)rec->gap.class >= _RECORD_GAP_CLASS_MAX || rec->gap.first > rec->gap.last)
                        return -EINVAL;
                put64(p, rec->gap.monotonic);
                put64(p + 8, rec->gap.first);
                put64(p + 16, rec->gap.last);
                put32(p + 24, (uint32_t)rec->gap.class);
                return 28;
        case RECORD_OVERFLOW:
                put64(p, rec->overflow.realtime);
                put64(p + 8, rec->overflow.monotonic);
                return 16;
        default:
                return -EINVAL;
        }
}

ssize_t record_encode(const struct record *rec, void *buf, size_t size)
{
        uint8_t *b = buf, fixed[32];
        const void *tail;
        size_t tail_len, len;
        ssize_t n;

        n = encode_payload(rec, fixed, &tail, &tail_len);
        if (n < 0)
                return n;
        len = (size_t)n + tail_len;
        if (len > HP_RECORD_MAX)
                return -EINVAL;
        if (size < RECORD_FRAME_SIZE + len)
                return -ENOBUFS;
        memcpy(b, RECORD_SYNC, 4);
        put16(b + 4, (uint16_t)rec->type);
        put16(b + 6, 0);
        put32(b + 8, (uint32_t)len);
        memcpy(b + RECORD_FRAME_SIZE, fixed, (size_t)n);
        if (tail_len)
                memcpy(b + RECORD_FRAME_SIZE + n, tail, tail_len);
        put32(b + 12, record_crc32(0, b + 4, 8));
        put32(b + 12, record_crc32(get32(b + 12), b + RECORD_FRAME_SIZE, len));
        return (ssize_t)(RECORD_FRAME_SIZE + len);
}

void record_file_header(uint8_t h[RECORD_FILE_HEADER_SIZE])
{
        memcpy(h, RECORD_MAGIC, 8);
        put16(h + 8, RECORD_VERSION);
        put16(h + 10, RECORD_FILE_HEADER_SIZE);
        put32(h + 12, 0);
}

int record_check_header(const uint8_t *h, size_t n, unsigned *ret_version)
{
        uint16_t version, hsize;

        if (n < RECORD_FILE_HEADER_SIZE || memcmp(h, RECORD_MAGIC, 8) != 0)
                return -EBADMSG;
        version = get16(h + 8);
        hsize = get16(h + 10);
        if (version == 0 || hsize < RECORD_FILE_HEADER_SIZE)
                return -EBADMSG;
        if (version > RECORD_VERSION)
                return -EPROTONOSUPPORT;
        if (ret_version)
                *ret_version = version;
        return hsize;
}
