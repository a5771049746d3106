/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The handover journal: the events hotplugd accepted into its scheduler and
 * has not finished yet, written down in a memfd that the service manager
 * keeps for it (systemd's file descriptor store).  A restart or a crash then
 * loses none of them: the next instance gets the memfd back and runs every
 * event that has no DONE record, before it reads anything new.  The journal
 * also carries the ledger's highest SEQNUM, so the next instance continues
 * the ledger instead of mistaking the events still waiting in the socket for
 * a gap or a duplicate.
 *
 * FORMAT, version 3, host byte order (a memfd never leaves the machine or
 * outlives the boot):
 *
 *   Header, HANDOVER_HEADER_SIZE (64) bytes:
 *     0   8  magic        "HPDQUEUE"
 *     8   4  version      3 (versions 1 and 2, a 32-byte header without the
 *                         intake mark, and version 1 without STARTED records,
 *                         are read too; adopting one rewrites this field to 2
 *                         and the file becomes version 3 when it is next cut
 *                         back to its header)
 *     12  4  header size  64 (32 for versions 1 and 2)
 *     16  8  start        offset of the first live record (records before it
 *                         are dead and may have been punched out)
 *     24  8  ledger last  highest SEQNUM the ledger accepted, 0 if none
 *     32  8  mark seqnum  the intake mark: SEQNUM of the datagram going
 *                         through parse, ledger and handlers right now, 0
 *                         when none is (handover_mark())
 *     40  4  mark digest  record_crc32() of that datagram
 *     44  4  mark tries   how many instances began processing it
 *     48 16  start mark   the same for the held event being started right
 *                         now (dispatched, its job set up, its agent's
 *                         environment built, its program spawned); zeroes
 *                         in a journal of a hotplugd that had only the
 *                         intake mark (these bytes were reserved): no mark
 *   The marks are written through a shared mapping of the header's page, a
 *   few stores and no system call per datagram; a process that dies keeps
 *   what it stored (the page belongs to the memfd).
 *   Records from start, back to back, each a 16-byte frame and a payload:
 *     0   2  type         1 EVENT, 2 DONE, 3 STARTED
 *     2   2  0
 *     4   4  length       payload bytes
 *     8   4  crc          record_crc32() over bytes 0..7 and the payload
 *     12  4  0
 *     16     payload      EVENT: u64 SEQNUM, then the datagram exactly as
 *                         received (1..HP_UEVENT_MAX_SIZE bytes); DONE: u64 SEQNUM;
 *                         STARTED: u64 SEQNUM, written before the event's
 *                         first agent is started, so that an event taken over
 *                         with it is known to run a second time
 *   The first frame that does not check (zeroes, torn by a crash inside
 *   write(2)) ends the journal.
 *
 * Invariants: every record is written with one pwrite(2) at the end the
 * writer knows, never over a live record; the header's start only moves
 * forward, and only after the records it skips to are complete, so at every
 * instant the journal read from start says which events are held (an EVENT
 * may appear twice during a compaction: SEQNUM is the key).  When nothing is
 * held the file is cut back to its header; otherwise, once the dead bytes
 * outgrow the live ones, the live EVENT records (each followed by its
 * STARTED record, if any) are copied to the end, start moves past the old
 * ones and their pages are punched out.
 *
 * The module knows nothing of the manager or of systemd: it is given
 * SEQNUMs, datagrams and the number of events held.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HANDOVER_MAGIC "HPDQUEUE"
#define HANDOVER_VERSION 3
#define HANDOVER_VERSION_2 2
#define HANDOVER_VERSION_1 1
#define HANDOVER_HEADER_SIZE 64
#define HANDOVER_HEADER_SIZE_V2 32
#define HANDOVER_FRAME_SIZE 16
/* Dead bytes tolerated before a compaction: at least this, and at least 3x the live bytes. */
#define HANDOVER_COMPACT_MIN (1024 * 1024)

enum handover_record {
        HANDOVER_EVENT = 1,
        HANDOVER_DONE = 2,
        HANDOVER_STARTED = 3,
};

struct handover;

/**
 * handover_new() - start a new, empty journal in a fresh memfd.
 * @ret: the journal, owned by the caller (handover_free())
 *
 * The memfd is close-on-exec; handover_fd() lends it out, e.g. to hand a
 * duplicate to the service manager.
 * Return: 0 or negative errno.
 */
int handover_new(struct handover **ret);

/**
 * handover_adopt() - take over the journal a previous instance left.
 * @fd: the memfd (consumed, also on failure)
 * @ret: the journal, owned by the caller
 *
 * Reads the header and every record from start; the events without a DONE
 * become the restore list (handover_restore_next()).  A torn tail is cut
 * off.  A file that is not a version 1 or 2 journal is reset to an empty one
 * in place (the same memfd, so a copy the service manager holds stays valid).
 * (An older hotplugd that reads only version 1 resets a version 2 journal:
 * after a downgrade the events held at that moment are not run again.)
 *
 * Return: 0 when the journal was read, 1 when it was reset (not a journal),
 * negative errno on I/O failure.
 */
int handover_adopt(int fd, struct handover **ret);

/* Close and free.  Accepts NULL; returns NULL. */
struct handover *handover_free(struct handover *h);

/* The memfd (borrowed from @h). */
int handover_fd(const struct handover *h);

/* Highest SEQNUM the ledger had accepted, as far as the journal knows; 0 if none. */
uint64_t handover_ledger_last(const struct handover *h);

/* Events still to restore after handover_adopt() (0 once handed out). */
size_t handover_restore_pending(const struct handover *h);

/* Of the events handover_adopt() found held, those with a STARTED record. */
size_t handover_restore_started(const struct handover *h);

/**
 * handover_restore_next() - the next event to run again, lowest SEQNUM first.
 * @h: journal
 * @buf: room for the datagram (borrowed), HP_UEVENT_MAX_SIZE bytes
 * @ret_size: its size
 * @ret_seqnum: its SEQNUM
 * @ret_started: whether its agent had been started (it runs again), may be NULL
 *
 * Each held SEQNUM is handed out once even if the journal has it twice.  Its
 * EVENT record stays live: the caller must not append it again, and must
 * end it with handover_done() like any other event.
 * Return: 1 with an event, 0 when there are no more, negative errno.
 */
int handover_restore_next(struct handover *h, char *buf, size_t *ret_size, uint64_t *ret_seqnum,
                          bool *ret_started);

/**
 * handover_event() - write down an event accepted into the scheduler.
 * @h: journal
 * @seqnum: its SEQNUM
 * @data: the datagram as received (borrowed), 1..HP_UEVENT_MAX_SIZE bytes
 * @size: its size
 * Return: 0 or negative errno (nothing written).
 */
int handover_event(struct handover *h, uint64_t seqnum, const void *data, size_t size);

/**
 * handover_started() - an event's first agent is about to start.
 * @h: journal
 * @seqnum: its SEQNUM (written down with handover_event() before)
 * Return: 0 or negative errno (nothing written).
 */
int handover_started(struct handover *h, uint64_t seqnum);

/**
 * handover_done() - an event's job is over (or it was dropped after all).
 * @h: journal
 * @seqnum: its SEQNUM
 * @size: its datagram's size, as given to handover_event()
 * @held: events the daemon still holds after this one
 *
 * With @held 0 the journal is cut back to its header; with many dead bytes
 * it is compacted.
 * Return: 0 or negative errno.
 */
int handover_done(struct handover *h, uint64_t seqnum, size_t size, size_t held);

/**
 * handover_ledger() - note the ledger's highest SEQNUM (cheap when unchanged).
 * Return: 0 or negative errno.
 */
int handover_ledger(struct handover *h, uint64_t last);

/* A mark: a datagram being processed, or an event being started (handover.h, FORMAT). */
struct handover_mark {
        uint64_t seqnum;  /* 0: none */
        uint32_t digest;  /* record_crc32() of the datagram */
        uint32_t tries;   /* instances that began processing it, this one included */
};

/* The header's marks, one slot each. */
enum handover_slot {
        HANDOVER_MARK_INTAKE,  /* parse, ledger, handlers, queueing */
        HANDOVER_MARK_START,   /* dispatch up to the spawn of a held event's program */
        _HANDOVER_MARK_MAX,
};

/**
 * handover_mark() - mark the datagram about to be processed, or clear the mark.
 * @h: journal
 * @slot: which step it is about to go through
 * @mark: the datagram's SEQNUM, digest and tries; NULL clears the mark
 *
 * A few stores into the shared mapping of the header, no system call: it
 * survives the process dying while the datagram is processed.
 * Return: 0, or -EOPNOTSUPP when the journal has no marks (an adopted
 * version 1 or 2 journal, until it is next cut back).
 */
int handover_mark(struct handover *h, enum handover_slot slot, const struct handover_mark *mark);

/**
 * handover_suspect() - a mark handover_adopt() found: the datagram the
 * previous instance died processing in that step.
 * @h: journal
 * @slot: which mark
 * @ret: filled (seqnum 0 when there was none)
 */
void handover_suspect(const struct handover *h, enum handover_slot slot, struct handover_mark *ret);

/* Compact once the journal is over @bytes and its dead bytes outgrow its live ones, not at
 * HANDOVER_COMPACT_MIN and three times: a memory budget's share (0: those again). */
void handover_set_compact_min(struct handover *h, uint64_t bytes);

/* Bytes from start to the end of the last record, and live EVENT bytes (for tests and status). */
uint64_t handover_size(const struct handover *h);
uint64_t handover_live_bytes(const struct handover *h);

/**
 * handover_export() - write a self-contained copy of the journal to @out.
 * @h: journal
 * @out: a file open for writing, written at its position (write(2))
 *
 * The copy is the header, with start right behind it and the ledger's
 * highest SEQNUM as last noted (handover_ledger()), then the live part's
 * records as they are: what handover_import() takes.  Dead records before
 * start are left out.
 * Return: bytes written, or negative errno.
 */
int64_t handover_export(const struct handover *h, int out);

/**
 * handover_import() - take over a journal handover_export() wrote.
 * @data: its bytes (borrowed)
 * @size: their number
 * @ret: the journal, in a fresh memfd, adopted as handover_adopt() does
 * Return: 0, -EBADMSG when the bytes are not a journal, or negative errno.
 */
int handover_import(const void *data, size_t size, struct handover **ret);
