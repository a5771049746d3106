/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the recording reader (record.h) on any file.  The input is
 * the file, with one twist so that the fuzzer reaches the payload checks
 * behind the checksums: if the first byte is odd, the frames found where a
 * reader expects them get their checksum set right before reading.
 *
 * Invariants: the reader ends (end of file or a read error) after a number
 * of calls bounded by the file size; damage is reported with offsets inside
 * the file, in increasing order; every record it returns is one
 * record_encode() accepts, and encodes to the bytes read when the frame has
 * no extra payload.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "uevent/record.h"

static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Set the checksum of each frame found back to back after the header. */
static void fix_checksums(uint8_t *buf, size_t size)
{
        size_t pos = RECORD_FILE_HEADER_SIZE;

        while (pos + RECORD_FRAME_SIZE <= size && memcmp(buf + pos, RECORD_SYNC, 4) == 0) {
                uint32_t len = le32(buf + pos + 8), crc;

                if (len > HP_RECORD_MAX || len > size - pos - RECORD_FRAME_SIZE)
                        break;
                crc = record_crc32(0, buf + pos + 4, 8);
                crc = record_crc32(crc, buf + pos + RECORD_FRAME_SIZE, len);
                for (int i = 0; i < 4; i++)
                        buf[pos + 12 + i] = (uint8_t)(crc >> (8 * i));
                pos += RECORD_FRAME_SIZE + len;
        }
}

static int memfd_with(const uint8_t *data, size_t size)
{
        static int fd = -1;

        if (fd < 0)
                fd = memfd_create("fuzz-record", MFD_CLOEXEC);
        fuzz_check(fd >= 0);
        fuzz_check(ftruncate(fd, 0) == 0);
        fuzz_check(pwrite(fd, data, size, 0) == (ssize_t)size);
        return fd;
}

/* A record read back encodes to the payload it was read from (but for
 * AGENT_END's reserved u16, which readers ignore and writers zero). */
static void check_record(const struct record *rec, const uint8_t *file, size_t size)
{
        static uint8_t enc[RECORD_FRAME_SIZE + HP_RECORD_MAX], was[HP_RECORD_MAX];
        ssize_t n;

        fuzz_check(rec->offset >= RECORD_FILE_HEADER_SIZE && rec->offset < size);
        n = record_encode(rec, enc, sizeof(enc));
        fuzz_check(n >= RECORD_FRAME_SIZE && (size_t)n <= size - rec->offset);
        memcpy(was, file + rec->offset + RECORD_FRAME_SIZE, (size_t)n - RECORD_FRAME_SIZE);
        if (rec->type == RECORD_AGENT_END)
                was[22] = was[23] = 0;
        fuzz_check(memcmp(enc + RECORD_FRAME_SIZE, was, (size_t)n - RECORD_FRAME_SIZE) == 0);
        fuzz_check(record_type_to_string(rec->type) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct record_reader *rd;
        uint64_t last_offset = 0;
        char path[64], msg[512];
        struct record rec;
        size_t calls = 0;
        uint8_t *buf;
        int r;

        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        if (size > RECORD_FILE_HEADER_SIZE && (buf[0] & 1)) {
                memcpy(buf, RECORD_MAGIC, 8);
                fix_checksums(buf, size);
        }
        snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd_with(buf, size));

        r = record_reader_open(path, &rd);
        if (r < 0) {
                fuzz_check(r == -ENODATA || r == -EBADMSG || r == -EPROTONOSUPPORT);
                free(buf);
                return 0;
        }
        /* A small search step on some inputs: the bounded search must find the same. */
        if (size > 1 && (data[size - 1] & 1))
                record_reader_set_step(rd, 1 + data[size - 1] % 64);
        while ((r = record_reader_next(rd, &rec)) > 0) {
                fuzz_check(++calls <= 2 * size + 8);
                if (r == RECORD_NEXT_AGAIN)
                        continue;
                if (r == RECORD_NEXT_PROBLEM) {
                        const struct record_problem *p = record_reader_problem(rd);

                        fuzz_check(p->offset >= last_offset && p->offset < size);
                        fuzz_check(p->resume > p->offset && p->resume <= size);
                        fuzz_check(p->reason != NULL);
                        record_problem_format(p, msg, sizeof(msg));
                        last_offset = p->resume;
                        continue;
                }
                fuzz_check(r == 1);
                fuzz_check(rec.offset >= last_offset);
                check_record(&rec, buf, size);
                last_offset = rec.offset + 1;
        }
        fuzz_check(r == 0);
        fuzz_check(record_reader_stats(rd)->read_bytes <= 2 * (uint64_t)size + 2 * HP_RECORD_MAX);
        record_reader_free(rd);
        free(buf);
        return 0;
}
