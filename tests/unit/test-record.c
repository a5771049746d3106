/* SPDX-License-Identifier: MIT */
/*
 * Recording format: round trip of every record type, and the reader's
 * behaviour on torn, corrupt, unknown and foreign input; on hostile damage
 * (fake frames everywhere) its work stays linear in the file size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/record.h"
#include "test.h"
#include "test-dir.h"
#include "uevent/uevent.h"

static char dir[] = "/tmp/test-record.XXXXXX";

static const char dgram1[] = "add@/devices/virtual/net/veth0\0ACTION=add\0DEVPATH=/devices/virtual/net/veth0\0"
                             "SUBSYSTEM=net\0INTERFACE=veth0\0SEQNUM=1001";
static const char dgram2[] = "remove@/devices/virtual/net/veth0\0ACTION=remove\0DEVPATH=/devices/virtual/net/veth0\0"
                             "SUBSYSTEM=net\0SEQNUM=1002";

static char *path_of(const char *name)
{
        static char buf[4][256];
        static int i;

        i = (i + 1) % 4;
        snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
        return buf[i];
}

static void write_file(const char *path, const void *data, size_t size)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        check(fd >= 0);
        check(write(fd, data, size) == (ssize_t)size);
        close(fd);
}

static size_t read_file(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        check(fd >= 0);
        n = read(fd, buf, size);
        check(n >= 0);
        close(fd);
        return (size_t)n;
}

/* The six sample records, in file order; offsets[i] is where record i starts. */
static uint64_t offsets[8];
static size_t n_samples;

static void write_samples(const char *path)
{
        struct record_writer *w;
        const struct record recs[] = {
                { .type = RECORD_DATAGRAM,
                  .datagram = { .realtime = 1700000000000000, .monotonic = 5000000, .data = dgram1,
                                .size = sizeof(dgram1) } },
                { .type = RECORD_AGENT_START,
                  .agent_start = { .seqnum = 1001, .monotonic = 5000100, .pid = 4242, .program = "/sbin/hotplug" } },
                { .type = RECORD_WAIT,
                  .wait = { .seqnum = 1002, .blocker = 1001, .monotonic = 5000200,
                            .reason = "same devpath /devices/virtual/net/veth0" } },
                { .type = RECORD_AGENT_END,
                  .agent_end = { .seqnum = 1001, .monotonic = 5012000, .pid = 4242,
                                 .status = RECORD_AGENT_SIGNALED, .value = 9 } },
                { .type = RECORD_GAP,
                  .gap = { .monotonic = 5013000, .first = 1003, .last = 1009, .class = RECORD_GAP_OVERFLOW } },
                { .type = RECORD_OVERFLOW, .overflow = { .realtime = 1700000000013000, .monotonic = 5013000 } },
                { .type = RECORD_DATAGRAM,
                  .datagram = { .realtime = 1700000000020000, .monotonic = 5020000, .data = dgram2,
                                .size = sizeof(dgram2) } },
        };

        unlink(path);
        check_int(record_writer_open(path, &w), 0);
        check_int(record_writer_size(w), RECORD_FILE_HEADER_SIZE);
        for (size_t i = 0; i < ELEMENTSOF(recs); i++) {
                offsets[i] = record_writer_size(w);
                check_int(record_append(w, &recs[i]), 0);
        }
        offsets[ELEMENTSOF(recs)] = record_writer_size(w);
        n_samples = ELEMENTSOF(recs);
        check_int(record_writer_sync(w), 0);
        record_writer_free(w);
}

/* Check that sample record @i was read back intact. */
static void check_sample(size_t i, const struct record *rec)
{
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent ev;

        check_int(rec->offset, offsets[i]);
        switch (i) {
        case 0:
        case 6:
                check_int(rec->type, RECORD_DATAGRAM);
                check_int(rec->datagram.size, i == 0 ? sizeof(dgram1) : sizeof(dgram2));
                check(memcmp(rec->datagram.data, i == 0 ? dgram1 : dgram2, rec->datagram.size) == 0);
                check_int(rec->datagram.monotonic, i == 0 ? 5000000 : 5020000);
                /* The consumer validates what it reads back, as for live input. */
                check_int(uevent_parse(rec->datagram.data, rec->datagram.size, vars, &ev, NULL), 0);
                check_int(ev.seqnum, i == 0 ? 1001 : 1002);
                break;
        case 1:
                check_int(rec->type, RECORD_AGENT_START);
                check_int(rec->agent_start.seqnum, 1001);
                check_int(rec->agent_start.pid, 4242);
                check_int(rec->agent_start.monotonic, 5000100);
                check_str(rec->agent_start.program, "/sbin/hotplug");
                break;
        case 2:
                check_int(rec->type, RECORD_WAIT);
                check_int(rec->wait.seqnum, 1002);
                check_int(rec->wait.blocker, 1001);
                check_str(rec->wait.reason, "same devpath /devices/virtual/net/veth0");
                break;
        case 3:
                check_int(rec->type, RECORD_AGENT_END);
                check_int(rec->agent_end.status, RECORD_AGENT_SIGNALED);
                check_int(rec->agent_end.value, 9);
                check_int(rec->agent_end.monotonic, 5012000);
                break;
        case 4:
                check_int(rec->type, RECORD_GAP);
                check_int(rec->gap.first, 1003);
                check_int(rec->gap.last, 1009);
                check_int(rec->gap.class, RECORD_GAP_OVERFLOW);
                break;
        case 5:
                check_int(rec->type, RECORD_OVERFLOW);
                check_int(rec->overflow.realtime, 1700000000013000);
                break;
        default:
                check(false);
        }
}

/*
 * Read @path: every record must be sample expect[k] in order; problems are
 * formatted into @msgs (one per line).  Return: records read.
 */
static size_t read_all(const char *path, const size_t *expect, size_t n_expect, char *msgs, size_t msgs_size)
{
        struct record_reader *r;
        struct record rec;
        size_t n = 0, o = 0;
        char line[512];
        int k;

        msgs[0] = '\0';
        check_int(record_reader_open(path, &r), 0);
        while ((k = record_reader_next(r, &rec)) > 0) {
                if (k == RECORD_NEXT_PROBLEM) {
                        record_problem_format(record_reader_problem(r), line, sizeof(line));
                        fprintf(stderr, "  reader: %s\n", line);
                        o += (size_t)snprintf(msgs + o, msgs_size - o, "%s\n", line);
                        check(o < msgs_size);
                        continue;
                }
                check(n < n_expect);
                check_sample(expect[n], &rec);
                n++;
        }
        check_int(k, 0);
        check_int(record_reader_stats(r)->records, n);
        record_reader_free(r);
        return n;
}

static void test_crc(void)
{
        check_int(record_crc32(0, "123456789", 9), 0xCBF43926u);
        check_int(record_crc32(record_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
}

static void test_round_trip(void)
{
        const size_t all[] = { 0, 1, 2, 3, 4, 5, 6 };
        char msgs[1024];

        write_samples(path_of("rt"));
        check_int(read_all(path_of("rt"), all, ELEMENTSOF(all), msgs, sizeof(msgs)), 7);
        check_str(msgs, "");
}

static void test_torn_tail(void)
{
        const size_t all[] = { 0, 1, 2, 3, 4, 5, 6 };
        const char *p = path_of("rt"), *t = path_of("torn");
        static char buf[65536];
        char msgs[1024], want[512];
        size_t size = read_file(p, buf, sizeof(buf));

        /* The last record cut in its payload: the first six read, then one clear message. */
        write_file(t, buf, (size_t)offsets[6] + RECORD_FRAME_SIZE + 40);
        check_int(read_all(t, all, ELEMENTSOF(all), msgs, sizeof(msgs)), 6);
        snprintf(want, sizeof(want),
                 "offset %llu: torn record at end of file (payload cut short: 40 of %zu bytes), %d bytes ignored; "
                 "the writer probably stopped mid-write\n",
                 (unsigned long long)offsets[6], 16 + sizeof(dgram2), RECORD_FRAME_SIZE + 40);
        check_str(msgs, want);

        /* Cut inside the frame. */
        write_file(t, buf, (size_t)offsets[6] + 7);
        check_int(read_all(t, all, ELEMENTSOF(all), msgs, sizeof(msgs)), 6);
        check(strstr(msgs, "torn record at end of file (frame cut short: 7 of 16 bytes), 7 bytes ignored"));

        /* Whole length present but garbage (zeros after a crash): also a torn tail. */
        memset(buf + offsets[6] + RECORD_FRAME_SIZE, 0, size - offsets[6] - RECORD_FRAME_SIZE);
        write_file(t, buf, size);
        check_int(read_all(t, all, ELEMENTSOF(all), msgs, sizeof(msgs)), 6);
        check(strstr(msgs, "torn record at end of file (checksum mismatch)"));

        /* A file holding only the header is an empty recording, not an error. */
        write_file(t, buf, RECORD_FILE_HEADER_SIZE);
        check_int(read_all(t, all, 0, msgs, sizeof(msgs)), 0);
        check_str(msgs, "");
}

static void test_corrupt_middle(void)
{
        const size_t rest[] = { 0, 1, 3, 4, 5, 6 };
        const size_t after_len[] = { 0, 1, 2, 4, 5, 6 };
        const char *p = path_of("rt"), *t = path_of("corrupt");
        static char buf[65536], orig[65536];
        char msgs[1024], want[512];
        size_t size = read_file(p, orig, sizeof(orig));

        /* One flipped payload byte in record 2: reported, skipped, the rest read. */
        memcpy(buf, orig, size);
        buf[offsets[2] + RECORD_FRAME_SIZE + 3] ^= 0x40;
        write_file(t, buf, size);
        check_int(read_all(t, rest, ELEMENTSOF(rest), msgs, sizeof(msgs)), 6);
        snprintf(want, sizeof(want),
                 "offset %llu: corrupt record (checksum mismatch), %llu bytes skipped, reading resumes at offset %llu\n",
                 (unsigned long long)offsets[2], (unsigned long long)(offsets[3] - offsets[2]),
                 (unsigned long long)offsets[3]);
        check_str(msgs, want);

        /* A huge length in record 3's frame: the reader finds record 4 again. */
        memcpy(buf, orig, size);
        memcpy(buf + offsets[3] + 8, "\xff\xff\xff\x7f", 4);
        write_file(t, buf, size);
        check_int(read_all(t, after_len, ELEMENTSOF(after_len), msgs, sizeof(msgs)), 6);
        check(strstr(msgs, "corrupt record (record length over the limit)"));

        /* Garbage inserted between two records (e.g. a torn write, then more appends). */
        memcpy(buf, orig, offsets[4]);
        memcpy(buf + offsets[4], "HPR\x1e garbage", 12);
        memcpy(buf + offsets[4] + 12, orig + offsets[4], size - offsets[4]);
        write_file(t, buf, size + 12);
        for (size_t i = 4; i <= n_samples; i++)
                offsets[i] += 12;
        {
                const size_t all[] = { 0, 1, 2, 3, 4, 5, 6 };
                check_int(read_all(t, all, ELEMENTSOF(all), msgs, sizeof(msgs)), 7);
        }
        for (size_t i = 4; i <= n_samples; i++)
                offsets[i] -= 12;
        snprintf(want, sizeof(want),
                 "offset %llu: corrupt record (record length over the limit), 12 bytes skipped, "
                 "reading resumes at offset %llu\n",
                 (unsigned long long)offsets[4], (unsigned long long)offsets[4] + 12);
        check_str(msgs, want);
}

/* A good frame of an unknown type, and a known type with the wrong payload size. */
static void test_unknown_and_invalid(void)
{
        const size_t rest[] = { 0, 1, 2, 3, 4, 5, 6 };
        static char buf[65536];
        const char *p = path_of("rt"), *t = path_of("unknown");
        size_t size = read_file(p, buf, sizeof(buf));
        uint8_t frame[RECORD_FRAME_SIZE + 4] = "HPR\x1e";
        uint32_t crc;
        char msgs[1024];

        frame[4] = 99;                 /* type 99 */
        frame[8] = 4;                  /* length 4 */
        memcpy(frame + 16, "abcd", 4);
        crc = record_crc32(record_crc32(0, frame + 4, 8), frame + 16, 4);
        memcpy(frame + 12, &crc, 4);   /* the test runs on little-endian machines */
        memcpy(buf + size, frame, sizeof(frame));
        frame[4] = RECORD_OVERFLOW;    /* overflow needs 16 bytes, not 4 */
        crc = record_crc32(record_crc32(0, frame + 4, 8), frame + 16, 4);
        memcpy(frame + 12, &crc, 4);
        memcpy(buf + size + sizeof(frame), frame, sizeof(frame));
        write_file(t, buf, size + 2 * sizeof(frame));

        check_int(read_all(t, rest, ELEMENTSOF(rest), msgs, sizeof(msgs)), 7);
        check(strstr(msgs, "record of unknown type 99, skipped\n"));
        check(strstr(msgs, "invalid overflow record (payload does not match the record type), skipped\n"));
}

static void test_headers(void)
{
        struct record_reader *r;
        struct record_writer *w;
        char hdr[RECORD_FILE_HEADER_SIZE];

        write_file(path_of("empty"), "", 0);
        check_int(record_reader_open(path_of("empty"), &r), -ENODATA);
        write_file(path_of("text"), "hello world, not a recording\n", 29);
        check_int(record_reader_open(path_of("text"), &r), -EBADMSG);
        check_int(record_writer_open(path_of("text"), &w), -EBADMSG);
        write_file(path_of("short"), RECORD_MAGIC, 8);
        check_int(record_reader_open(path_of("short"), &r), -EBADMSG);

        memcpy(hdr, RECORD_MAGIC "\x02\x00\x10\x00\x00\x00\x00\x00", sizeof(hdr));
        write_file(path_of("v2"), hdr, sizeof(hdr));
        check_int(record_reader_open(path_of("v2"), &r), -EPROTONOSUPPORT);
        check_int(record_writer_open(path_of("v2"), &w), -EPROTONOSUPPORT);
        check_int(record_reader_open(path_of("missing"), &r), -ENOENT);

        /* A torn header (crash while creating) is rewritten by the next writer. */
        write_file(path_of("tornhdr"), RECORD_MAGIC, 5);
        check_int(record_writer_open(path_of("tornhdr"), &w), 0);
        check_int(record_writer_size(w), RECORD_FILE_HEADER_SIZE);
        record_writer_free(w);
        check_int(record_reader_open(path_of("tornhdr"), &r), 0);
        check_int(record_reader_version(r), 1);
        record_reader_free(r);

        /* Others could write it: refused, even to append to a valid recording; 0600 again passes. */
        check_int(chmod(path_of("tornhdr"), 0620), 0);
        check_int(record_writer_open(path_of("tornhdr"), &w), -EPERM);
        check_int(chmod(path_of("tornhdr"), 0602), 0);
        check_int(record_writer_open(path_of("tornhdr"), &w), -EPERM);
        check_int(chmod(path_of("tornhdr"), 0600), 0);
        check_int(record_writer_open(path_of("tornhdr"), &w), 0);
        record_writer_free(w);
}

static void test_append_and_lock(void)
{
        struct record_writer *w, *w2;
        const struct record again = {
                .type = RECORD_DATAGRAM,
                .datagram = { .realtime = 1, .monotonic = 5000000, .data = dgram1, .size = sizeof(dgram1) },
        };
        struct stat st;

        write_samples(path_of("app"));
        check_int(record_writer_open(path_of("app"), &w), 0);
        check_int(record_writer_size(w), offsets[7]);
        /* One writer at a time. */
        check_int(record_writer_open(path_of("app"), &w2), -EBUSY);
        offsets[7] = record_writer_size(w);
        check_int(record_append(w, &again), 0);
        record_writer_free(w);
        check(stat(path_of("app"), &st) == 0);
        check_int(st.st_mode & 0777, 0600); /* the environment of every event: root only */
        /* Never through a symbolic link. */
        check(symlink(path_of("app"), path_of("app.link")) == 0);
        check_int(record_writer_open(path_of("app.link"), &w2), -ELOOP);
        check(unlink(path_of("app.link")) == 0);

        /* The appended record reads back after the seven old ones, at the old end of file. */
        {
                struct record_reader *r;
                struct record rec;
                size_t n = 0;
                check_int(record_reader_open(path_of("app"), &r), 0);
                while (record_reader_next(r, &rec) == 1)
                        n++;
                check_int(n, 8);
                check_int(rec.offset, offsets[7]);
                record_reader_free(r);
        }
}

static void test_encode_refuses(void)
{
        static char big[HP_UEVENT_MAX_SIZE + 1];
        uint8_t buf[RECORD_FRAME_SIZE + HP_RECORD_MAX];
        char longtext[HP_RECORD_TEXT_MAX + 2];

        memset(longtext, 'a', sizeof(longtext) - 1);
        longtext[sizeof(longtext) - 1] = '\0';
        check_int(record_encode(&(struct record){ .type = RECORD_DATAGRAM,
                                                  .datagram = { .data = big, .size = sizeof(big) } },
                                buf, sizeof(buf)),
                  -EINVAL);
        check_int(record_encode(&(struct record){ .type = RECORD_DATAGRAM, .datagram = { .data = big, .size = 0 } },
                                buf, sizeof(buf)),
                  -EINVAL);
        check_int(record_encode(&(struct record){ .type = RECORD_AGENT_START, .agent_start = { .program = "" } },
                                buf, sizeof(buf)),
                  -EINVAL);
        check_int(record_encode(&(struct record){ .type = RECORD_WAIT, .wait = { .reason = longtext } }, buf,
                                sizeof(buf)),
                  -EINVAL);
        check_int(record_encode(&(struct record){ .type = RECORD_GAP, .gap = { .first = 5, .last = 4 } }, buf,
                                sizeof(buf)),
                  -EINVAL);
        check_int(record_encode(&(struct record){ .type = (enum record_type)77 }, buf, sizeof(buf)), -EINVAL);
        check_int(record_encode(&(struct record){ .type = RECORD_OVERFLOW }, buf, 20), -ENOBUFS);
        check_int(record_encode(&(struct record){ .type = RECORD_OVERFLOW }, buf, 32), 32);
        longtext[HP_RECORD_TEXT_MAX] = '\0';
        check_int(record_encode(&(struct record){ .type = RECORD_WAIT, .wait = { .reason = longtext } }, buf,
                                sizeof(buf)),
                  RECORD_FRAME_SIZE + 24 + HP_RECORD_TEXT_MAX);
}

/* ---- hostile damage ------------------------------------------------------------- */

/* Fake frames every 8 bytes (two interleaved syncs per 16), each claiming HP_RECORD_MAX bytes of payload. */
static void fake_frames(uint8_t *p, size_t n)
{
        uint8_t pat[16] = { 'H', 'P', 'R', 0x1e, 'H', 'P', 'R', 0x1e };

        for (int i = 0; i < 4; i++)
                pat[8 + i] = pat[12 + i] = (uint8_t)((uint32_t)HP_RECORD_MAX >> (8 * i));
        for (size_t i = 0; i < n; i++)
                p[i] = pat[i % 16];
}

/* @n intact datagram records, SEQNUMs from @seq, each with fake syncs in its payload, appended at *@o. */
static void intact(uint8_t *buf, size_t *o, uint64_t seq, size_t n)
{
        for (size_t i = 0; i < n; i++, seq++) {
                char d[256];
                int len = snprintf(d, sizeof(d), "add@/devices/x%cACTION=add%cDEVPATH=/devices/x%cSUBSYSTEM=x%c"
                                   "X=HPR\x1e%c%c%c%cSEQNUM=%llu", 0, 0, 0, 0, 0x40, 1, 1, 0, (unsigned long long)seq);
                ssize_t k = record_encode(&(struct record){ .type = RECORD_DATAGRAM,
                                                            .datagram = { seq, seq * 10, d, (size_t)len + 1 } },
                                          buf + *o, RECORD_FRAME_SIZE + HP_RECORD_MAX);
                check(k > 0);
                *o += (size_t)k;
        }
}

/*
 * A few MiB of fake frames in three regions (the last one running to the
 * end of the file) between intact records: every intact record is read,
 * each region is one problem, and the reader's work (bytes read, bytes
 * checksummed) stays a small multiple of the file size.
 */
static void test_hostile(void)
{
        const size_t region[3] = { 1 << 20, 2 << 20, 512 << 10 }, per_block = 100;
        size_t size = RECORD_FILE_HEADER_SIZE + 3 * per_block * 256 + region[0] + region[1] + region[2];
        uint8_t *buf = malloc(size);
        const char *t = path_of("hostile");
        const struct record_reader_stats *st;
        struct record_reader *r;
        struct record rec;
        struct timespec a, b;
        size_t o, problems = 0, skipped = 0;
        uint64_t seq = 1;
        double sec;
        int k;

        check(buf);
        o = RECORD_FILE_HEADER_SIZE;
        memcpy(buf, RECORD_MAGIC "\x01\x00\x10\x00\x00\x00\x00\x00", RECORD_FILE_HEADER_SIZE);
        for (int i = 0; i < 3; i++) {
                intact(buf, &o, 1 + (uint64_t)i * per_block, per_block);
                fake_frames(buf + o, region[i]);
                o += region[i];
        }
        check(o <= size);
        write_file(t, buf, o);

        clock_gettime(CLOCK_MONOTONIC, &a);
        check_int(record_reader_open(t, &r), 0);
        while ((k = record_reader_next(r, &rec)) > 0) {
                if (k == RECORD_NEXT_PROBLEM) {
                        char line[512];
                        const struct record_problem *p = record_reader_problem(r);
                        fprintf(stderr, "  reader: %s\n", record_problem_format(p, line, sizeof(line)));
                        check_int(p->skipped, region[problems]);
                        check_int(p->kind, problems < 2 ? RECORD_PROBLEM_CORRUPT : RECORD_PROBLEM_TORN_TAIL);
                        skipped += p->skipped;
                        problems++;
                        continue;
                }
                /* Every intact record, in order, nothing else. */
                check_int(rec.type, RECORD_DATAGRAM);
                check_int(rec.datagram.realtime, seq);
                seq++;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        check_int(k, 0);
        check_int(seq - 1, 3 * per_block);
        check_int(problems, 3);
        st = record_reader_stats(r);
        sec = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        fprintf(stderr, "  %zu bytes: %llu read, %llu checksummed, %.3f s (%.1f MiB/s)\n", o,
                (unsigned long long)st->read_bytes, (unsigned long long)st->crc_bytes, sec,
                (double)o / (1 << 20) / (sec > 0 ? sec : 1e-9));
        /* Linear: each byte read about once, and checksummed a bounded number of times. */
        check(st->read_bytes <= 2 * (uint64_t)o + 65536);
        check(st->crc_bytes <= 3 * (uint64_t)o);
        check_int(st->skipped, skipped);
        record_reader_free(r);
        free(buf);
}

/* Damage of many sizes (around the reader's window and the largest frame): the next record is always found. */
static void test_resync_sizes(void)
{
        const size_t sizes[] = { 1, 3, 4, 5, 15, 16, 17, 100, 16399, 16400, 16401, 32768, 49135, 49136, 49137,
                                 65519, 65535, 65536, 65537, 98304, 131072 + 11 };
        const size_t max = 131072 + 11 + 4096;
        uint8_t *buf = malloc(max);
        const char *t = path_of("sizes");

        check(buf);
        for (size_t i = 0; i < ELEMENTSOF(sizes); i++)
                for (size_t lead = 0; lead < 2; lead++) {
                        struct record_reader *r;
                        struct record rec;
                        size_t o = RECORD_FILE_HEADER_SIZE, n = 0, problems = 0;
                        int k;

                        memcpy(buf, RECORD_MAGIC "\x01\x00\x10\x00\x00\x00\x00\x00", RECORD_FILE_HEADER_SIZE);
                        intact(buf, &o, 1, 3);
                        /* lead 1: the damage starts with a whole fake frame, else in the middle of one. */
                        fake_frames(buf + o, sizes[i] + 16);
                        if (!lead)
                                memmove(buf + o, buf + o + 5, sizes[i]);
                        o += sizes[i];
                        intact(buf, &o, 4, 3);
                        write_file(t, buf, o);
                        check_int(record_reader_open(t, &r), 0);
                        while ((k = record_reader_next(r, &rec)) > 0) {
                                if (k == RECORD_NEXT_PROBLEM) {
                                        check_int(record_reader_problem(r)->kind, RECORD_PROBLEM_CORRUPT);
                                        check_int(record_reader_problem(r)->skipped, sizes[i]);
                                        problems++;
                                        continue;
                                }
                                check_int(rec.datagram.realtime, ++n);
                        }
                        check_int(k, 0);
                        check_int(n, 6);
                        check_int(problems, 1);
                        record_reader_free(r);
                }
        free(buf);
}

/* ---- the reader against a plain model of the format ------------------------------ */

static uint32_t rng_state = 12345;

static uint32_t rng(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 17;
        rng_state ^= rng_state << 5;
        return rng_state;
}

static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The format's definition of a valid frame at @off, checked the slow, obvious way. */
static bool model_frame(const uint8_t *b, size_t size, size_t off, size_t *ret_len)
{
        uint32_t len;

        if (size - off < RECORD_FRAME_SIZE || memcmp(b + off, RECORD_SYNC, 4) != 0)
                return false;
        len = le32(b + off + 8);
        if (len > HP_RECORD_MAX || size - off - RECORD_FRAME_SIZE < len)
                return false;
        if (record_crc32(record_crc32(0, b + off + 4, 8), b + off + RECORD_FRAME_SIZE, len) != le32(b + off + 12))
                return false;
        *ret_len = len;
        return true;
}

/* Damage of one random kind at a random place. */
static size_t damage(uint8_t *b, size_t size, size_t cap)
{
        size_t at = RECORD_FILE_HEADER_SIZE + rng() % (size - RECORD_FILE_HEADER_SIZE), n = rng();

        switch (rng() % 5) {
        case 0: /* flipped bits */
                for (int i = 0; i < 1 + (int)(rng() % 4); i++)
                        b[RECORD_FILE_HEADER_SIZE + rng() % (size - RECORD_FILE_HEADER_SIZE)] ^= (uint8_t)(1u << (rng() % 8));
                return size;
        case 1: /* inserted garbage holding record markers */
                n = MIN(1 + n % 3000, cap - size); /* (MIN evaluates twice: no rng() in it) */
                memmove(b + at + n, b + at, size - at);
                for (size_t i = 0; i < n; i++)
                        b[at + i] = (uint8_t)rng();
                for (size_t i = 0; i + 4 <= n; i += 1 + rng() % 64)
                        memcpy(b + at + i, RECORD_SYNC, 4);
                return size + n;
        case 2: /* inserted fake frames */
                n = MIN(16 * (1 + n % 200), cap - size);
                memmove(b + at + n, b + at, size - at);
                fake_frames(b + at, n);
                return size + n;
        case 3: /* a hole */
                n = MIN(1 + n % 5000, size - at);
                memmove(b + at, b + at + n, size - at - n);
                return size - n;
        default: /* cut off */
                return at;
        }
}

static void test_reader_model(void)
{
        const size_t cap = 600 * 1024;
        uint8_t *b = malloc(cap);
        const char *t = path_of("model");
        size_t files = 0, records = 0, problems = 0, again = 0;

        check(b);
        for (int iter = 0; iter < 150; iter++) {
                struct record_reader *r;
                struct record rec;
                size_t size = RECORD_FILE_HEADER_SIZE, pos, len;
                int k;

                memcpy(b, RECORD_MAGIC "\x01\x00\x10\x00\x00\x00\x00\x00", RECORD_FILE_HEADER_SIZE);
                /* Records of all sizes, up to the largest datagram. */
                for (uint64_t seq = 1; size < cap / 2; seq++) {
                        static char d[HP_UEVENT_MAX_SIZE];
                        size_t n = 1 + rng() % (rng() % 4 ? 300 : HP_UEVENT_MAX_SIZE);
                        for (size_t i = 0; i < n; i++)
                                d[i] = (char)(rng() % 4 ? 'a' + rng() % 26 : rng());
                        ssize_t e = record_encode(&(struct record){ .type = RECORD_DATAGRAM,
                                                                    .datagram = { seq, seq, d, n } },
                                                  b + size, cap - size);
                        check(e > 0);
                        size += (size_t)e;
                }
                for (int i = 1 + (int)(rng() % 6); i > 0 && size > RECORD_FILE_HEADER_SIZE + 1; i--)
                        size = damage(b, size, cap);
                write_file(t, b, size);
                files++;

                /* The model: frames where they are valid; anything else up to the next valid frame is one problem. */
                check_int(record_reader_open(t, &r), 0);
                if (iter % 2) /* a bound on the search per call changes nothing but the RECORD_NEXT_AGAIN calls */
                        record_reader_set_step(r, 1 + rng() % 5000);
                pos = RECORD_FILE_HEADER_SIZE;
                while ((k = record_reader_next(r, &rec)) > 0) {
                        if (k == RECORD_NEXT_AGAIN) {
                                check(iter % 2);
                                again++;
                                continue;
                        }
                        check(pos < size);
                        if (model_frame(b, size, pos, &len)) {
                                /* Payloads are random: a datagram record, or one reported invalid. */
                                if (k == 1) {
                                        check_int(rec.offset, pos);
                                        records++;
                                } else {
                                        check_int(record_reader_problem(r)->offset, pos);
                                        check(record_reader_problem(r)->kind == RECORD_PROBLEM_INVALID ||
                                              record_reader_problem(r)->kind == RECORD_PROBLEM_UNKNOWN_TYPE);
                                }
                                pos += RECORD_FRAME_SIZE + len;
                                continue;
                        }
                        size_t next = pos + 1;
                        while (next < size && !model_frame(b, size, next, &len))
                                next++;
                        check_int(k, RECORD_NEXT_PROBLEM);
                        check_int(record_reader_problem(r)->offset, pos);
                        check_int(record_reader_problem(r)->resume, MIN(next, size));
                        check_int(record_reader_problem(r)->kind,
                                  next < size ? RECORD_PROBLEM_CORRUPT : RECORD_PROBLEM_TORN_TAIL);
                        problems++;
                        pos = MIN(next, size);
                }
                check_int(k, 0);
                check_int(pos, size);
                check(record_reader_stats(r)->read_bytes <= 2 * (uint64_t)size + 65536);
                record_reader_free(r);
        }
        fprintf(stderr, "  %zu damaged files: %zu records and %zu damaged regions as the model says (%zu step returns)\n",
                files, records, problems, again);
        check(again > 0);
        free(b);
}

static void cleanup(void)
{
        (void)test_dir_remove(dir);
}

int main(void)
{
        check(mkdtemp(dir));
        atexit(cleanup);
        run_test(test_crc);
        run_test(test_round_trip);
        run_test(test_torn_tail);
        run_test(test_corrupt_middle);
        run_test(test_unknown_and_invalid);
        run_test(test_headers);
        run_test(test_append_and_lock);
        run_test(test_encode_refuses);
        run_test(test_hostile);
        run_test(test_resync_sizes);
        run_test(test_reader_model);
        return 0;
}
