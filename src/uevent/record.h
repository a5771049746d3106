/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Event recordings: a versioned, append-only file of kernel datagrams and
 * what the daemon did with them.
 *
 * FORMAT, version 1.  All integers are little-endian, unaligned.
 *
 *   File header, 16 bytes:
 *     0   8  magic       "\x89HPDREC\n" (the high byte and the newline catch
 *                        7-bit and text-mode damage, as PNG's signature does)
 *     8   2  version     1.  A reader refuses a higher version.
 *     10  2  header size 16.  Readers skip this many bytes, so a later version
 *                        may append fields without breaking old readers.
 *     12  4  flags       0 (reserved; readers ignore it)
 *
 *   Then records, back to back, each a 16-byte frame and a payload:
 *     0   4  sync        "HPR\x1e"
 *     4   2  type        RECORD_* below
 *     6   2  flags       0 (reserved)
 *     8   4  length      payload bytes, at most HP_RECORD_MAX
 *     12  4  crc         CRC-32 (IEEE 802.3, as zlib's crc32()) over bytes
 *                        4..11 of the frame followed by the payload
 *     16  length payload
 *
 *   Payloads ("usec" = microseconds; "mono" = CLOCK_MONOTONIC, "real" =
 *   CLOCK_REALTIME; "text" = the rest of the payload, no NUL, 1..HP_RECORD_TEXT_MAX
 *   bytes):
 *     1 DATAGRAM     u64 real usec, u64 mono usec, the datagram exactly as the
 *                    kernel sent it (1..HP_UEVENT_MAX_SIZE bytes, not validated
 *                    when written: consumers run it through uevent_parse())
 *     2 AGENT_START  u64 seqnum, u64 mono usec, u32 pid, text program
 *     3 AGENT_END    u64 seqnum, u64 mono usec, u32 pid (0 if it never
 *                    started), u16 status (RECORD_AGENT_*), u16 0, i32 value
 *                    (exit code, signal number, or errno for exec failure;
 *                    status 4, set aside: the instances that died processing
 *                    the datagram, which never ran)
 *     4 WAIT         u64 seqnum, u64 blocker seqnum, u64 mono usec, text reason
 *                    (e.g. "parent /devices/..."): the event had to wait for
 *                    the blocker's agent to finish (the last of those it
 *                    waited for; written as it is dispatched); blocker 0: it
 *                    had to wait for a free slot, reason "a free slot
 *                    (limit N)", written then too; blocker its own seqnum:
 *                    after that its agents waited for udevd's broadcast of
 *                    it (after-udev), reason "udevd" or "udevd, not
 *                    broadcast in time", written when that wait ended, just
 *                    before its first AGENT_START (the wait ran from its
 *                    dispatch: its last other WAIT, or its arrival).
 *                    (Older recordings name the first blocker, written
 *                    when the event was queued.)
 *     5 GAP          u64 mono usec, u64 first, u64 last, u32 class
 *                    (RECORD_GAP_*): SEQNUMs first..last (inclusive) missing
 *     6 OVERFLOW     u64 real usec, u64 mono usec: the receive buffer
 *                    overflowed (ENOBUFS); the kernel dropped events
 *   Records of an unknown type with a good checksum are skipped (a later
 *   version 1 writer may add types); a known type with a payload that does
 *   not match its layout is reported and skipped.
 *
 * WRITING.  The writer opens with O_APPEND and takes an exclusive flock();
 * each record is built in memory and written with one write(2).  A short
 * write (disk full) is cut off again with ftruncate(2).  Records are not
 * synced one by one: record_writer_sync() calls fdatasync(2) and the owner
 * calls it about once a second while records are being written and at
 * close, so a crash loses at most the last second and may leave a torn last
 * record.
 *
 * READING.  The reader checks every frame (sync, length bound, checksum)
 * and every payload layout.  A damaged region is reported with its offset
 * and reason, then the reader searches forward for the next valid frame: a
 * damaged region with valid records after it is "corrupt" (the skipped
 * bytes are reported), one that runs to the end of the file is a "torn
 * tail" (the usual trace of a crash during a write).  That search reads
 * each byte once and checks each candidate frame in constant time (prefix
 * checksums), so any damage costs time linear in its size.  Nothing read
 * from a recording is trusted: datagrams go through uevent_parse() and
 * texts must be escaped before printing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/bounds.h"
#include "shared/time-util.h"

#define RECORD_MAGIC "\x89HPDREC\n"
#define RECORD_VERSION 1
#define RECORD_FILE_HEADER_SIZE 16
#define RECORD_SYNC "HPR\x1e"
#define RECORD_FRAME_SIZE 16

enum record_type {
        RECORD_DATAGRAM = 1,
        RECORD_AGENT_START = 2,
        RECORD_AGENT_END = 3,
        RECORD_WAIT = 4,
        RECORD_GAP = 5,
        RECORD_OVERFLOW = 6,
        _RECORD_TYPE_MAX,
};

enum record_agent_status {
        RECORD_AGENT_EXITED = 0,       /* value: exit code */
        RECORD_AGENT_SIGNALED = 1,     /* value: signal number */
        RECORD_AGENT_TIMEOUT = 2,      /* killed after its timeout; value: the last signal sent */
        RECORD_AGENT_EXEC_FAILED = 3,  /* never ran; value: positive errno */
        RECORD_AGENT_SET_ASIDE = 4,    /* never ran: the poison guard set the event aside; value: instances that died on it */
        _RECORD_AGENT_STATUS_MAX,
};

enum record_gap_class {
        RECORD_GAP_UNEXPLAINED = 0,
        RECORD_GAP_OVERFLOW = 1,
        _RECORD_GAP_CLASS_MAX,
};

/*
 * One record.  Pointers (datagram.data, program, reason) point into the
 * reader's buffer and stay valid until the next record_reader_next(); texts
 * read back are NUL-terminated and contain no NUL.
 */
struct record {
        enum record_type type;
        uint64_t offset;  /* reader: file offset of the frame */
        union {
                struct {
                        usec_t realtime, monotonic;
                        const void *data;
                        size_t size;
                } datagram;
                struct {
                        uint64_t seqnum;
                        usec_t monotonic;
                        uint32_t pid;
                        const char *program;
                } agent_start;
                struct {
                        uint64_t seqnum;
                        usec_t monotonic;
                        uint32_t pid;
                        enum record_agent_status status;
                        int32_t value;
                } agent_end;
                struct {
                        uint64_t seqnum, blocker;
                        usec_t monotonic;
                        const char *reason;
                } wait;
                struct {
                        usec_t monotonic;
                        uint64_t first, last;
                        enum record_gap_class class;
                } gap;
                struct {
                        usec_t realtime, monotonic;
                } overflow;
        };
};

const char *record_type_to_string(enum record_type t);
/* "exit", "signal", "timeout", "exec-failed". */
const char *record_agent_status_to_string(enum record_agent_status s);
/* "unexplained", "overflow" (the ledger's words). */
const char *record_gap_class_to_string(enum record_gap_class c);

/* CRC-32 (IEEE, reflected, as zlib): pass 0 to start, the result to continue. */
uint32_t record_crc32(uint32_t crc, const void *data, size_t size);

/**
 * record_encode() - serialise one record, frame included.
 * @rec: the record (borrowed)
 * @buf: output (borrowed), at least RECORD_FRAME_SIZE + HP_RECORD_MAX bytes
 * @size: size of @buf
 *
 * Return: bytes written, or -EINVAL (unknown type, text empty, too long or
 * containing NUL, datagram empty or over HP_UEVENT_MAX_SIZE, bad enum),
 * -ENOBUFS if @buf is too small.
 */
ssize_t record_encode(const struct record *rec, void *buf, size_t size);

/* ---- writer -------------------------------------------------------------- */

struct record_writer;

/**
 * record_writer_open() - open a recording for appending.
 * @path: file to create (mode 0600) or append to (borrowed); never
 *        through a symbolic link
 * @ret: the writer, owned by the caller (record_writer_free())
 *
 * An existing file must pass trust_reason() (owned by the caller's euid
 * or root, not writable by group or others), checked on the opened file.
 * A new or empty file gets a header.  An existing file must carry a
 * version 1 header (a torn header, a strict prefix of ours, is rewritten).
 * Records after a torn tail left by an earlier crash are still found by
 * readers (the torn bytes are reported as a corrupt region).
 *
 * Return: 0; -EBUSY if another writer holds the file; -EBADMSG if it is not
 * a recording; -EPROTONOSUPPORT for another version; -ELOOP for a symbolic
 * link; -EPERM for a file that fails trust_reason(); other negative errno.
 */
int record_writer_open(const char *path, struct record_writer **ret);

/**
 * record_append() - append one record with one write(2).
 * @w: writer
 * @rec: record (borrowed for the call)
 *
 * Not synced; see record_writer_sync().
 * Return: 0; -EINVAL for a record record_encode() refuses; negative errno
 * from write(2) (a partial record is truncated away again).
 */
int record_append(struct record_writer *w, const struct record *rec);

/**
 * record_writer_sync() - fdatasync(2) if anything was appended since the last sync.
 * Return: 0 or negative errno.
 */
int record_writer_sync(struct record_writer *w);

/* Bytes in the file (header included) as far as this writer knows. */
uint64_t record_writer_size(const struct record_writer *w);

/* Sync, close and free. Accepts NULL; returns NULL. */
struct record_writer *record_writer_free(struct record_writer *w);

/* ---- reader -------------------------------------------------------------- */

enum record_problem_kind {
        RECORD_PROBLEM_CORRUPT,       /* damaged region, valid records follow it */
        RECORD_PROBLEM_TORN_TAIL,     /* damaged or incomplete region up to end of file */
        RECORD_PROBLEM_INVALID,       /* good frame, payload does not match its type */
        RECORD_PROBLEM_UNKNOWN_TYPE,  /* good frame of a type this reader does not know */
};

struct record_problem {
        enum record_problem_kind kind;
        uint64_t offset;    /* where the damaged region or the record starts */
        uint64_t skipped;   /* bytes skipped */
        uint64_t resume;    /* offset of the next valid frame (end of file for a torn tail) */
        unsigned type;      /* INVALID, UNKNOWN_TYPE: the record's type */
        const char *reason; /* static string, e.g. "checksum mismatch" */
        uint64_t have, want; /* "cut short" reasons: bytes present and expected, else 0 */
};

/* Return value of record_reader_next() when a problem is reported instead of a record. */
#define RECORD_NEXT_PROBLEM 2
/* Return value of record_reader_next() with a step bound: the search through damage goes on. */
#define RECORD_NEXT_AGAIN 3

struct record_reader;

/**
 * record_reader_open() - open a recording and check its header.
 * @path: file (borrowed)
 * @ret: the reader, owned by the caller (record_reader_free())
 *
 * Opened without blocking (a FIFO is refused, not waited on).
 * Return: 0; -ENODATA for an empty file; -EBADMSG if it is not a recording
 * (bad magic or short header); -EPROTONOSUPPORT for a newer version;
 * -EMEDIUMTYPE if it is not a regular file; other negative errno from
 * open/read.
 */
int record_reader_open(const char *path, struct record_reader **ret);

/**
 * record_reader_open_fd() - record_reader_open() of an open file.
 * @fd: the recording, open for reading (consumed: the reader's, or closed on failure)
 * @ret: as record_reader_open()
 *
 * Return: as record_reader_open().
 */
int record_reader_open_fd(int fd, struct record_reader **ret);

/**
 * record_reader_next() - the next record, or the next problem.
 * @r: reader
 * @ret: filled with the record (pointers borrowed from @r until the next call)
 *
 * Return: 1 with a record in *@ret; RECORD_NEXT_PROBLEM with the details in
 * record_reader_problem() (keep calling: reading resumes after the damage);
 * RECORD_NEXT_AGAIN (only with record_reader_set_step()) when the bound
 * was reached in damage: call again to go on searching; 0 at the end of
 * the file; negative errno on read errors.
 */
int record_reader_next(struct record_reader *r, struct record *ret);

/**
 * record_reader_set_step() - bound the work of one record_reader_next() call.
 * @r: reader
 * @bytes: most bytes of damage one call searches (0: no bound, the default)
 *
 * A damaged region is still reported once, as a whole, when the search
 * through it ends; the calls before that return RECORD_NEXT_AGAIN.
 */
void record_reader_set_step(struct record_reader *r, uint64_t bytes);

/* The problem last reported by record_reader_next() (borrowed from @r). */
const struct record_problem *record_reader_problem(const struct record_reader *r);

/**
 * record_problem_format() - one clear line, e.g. "offset 4242: torn record at end of
 * file (payload cut short: 80 of 312 bytes), 96 bytes ignored".
 * Return: @buf.
 */
char *record_problem_format(const struct record_problem *p, char *buf, size_t size);

/* Counters of what the reader saw so far, and of its work. */
struct record_reader_stats {
        uint64_t records;   /* valid records returned */
        uint64_t problems;  /* problems reported */
        uint64_t skipped;   /* bytes in damaged regions and invalid records */
        uint64_t read_bytes; /* bytes read from the file */
        uint64_t crc_bytes;  /* bytes run through CRC-32 */
};
const struct record_reader_stats *record_reader_stats(const struct record_reader *r);

/* Recording format version of the file being read. */
unsigned record_reader_version(const struct record_reader *r);

/* Close and free. Accepts NULL; returns NULL. */
struct record_reader *record_reader_free(struct record_reader *r);
