/* SPDX-License-Identifier: MIT */
/*
 * The handover journal: what a new instance reads back after events were
 * written down and finished, the ledger mark, cutting back when idle,
 * compaction under load, torn tails, foreign files, that events still
 * to restore are never cut away, STARTED records (re-runs), version 1 and
 * 2 journals, and the intake and start marks (the poison guard).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "recovery/handover.h"
#include "shared/macro.h"
#include "test.h"

static size_t dgram(uint64_t seqnum, char *buf, size_t size)
{
        int n = snprintf(buf, size, "change@/devices/virtual/net/lo%cACTION=change%cDEVPATH=/devices/virtual/net/lo%c"
                         "SUBSYSTEM=net%cSEQNUM=%llu", 0, 0, 0, 0, (unsigned long long)seqnum);

        return (size_t)n + 1; /* with the final NUL */
}

static void add(struct handover *h, uint64_t seqnum)
{
        char buf[256];

        check_int(handover_event(h, seqnum, buf, dgram(seqnum, buf, sizeof(buf))), 0);
}

static void done(struct handover *h, uint64_t seqnum, size_t held)
{
        char buf[256];

        check_int(handover_done(h, seqnum, dgram(seqnum, buf, sizeof(buf)), held), 0);
}

/* What a next instance would see: adopt a duplicate of the memfd. */
static struct handover *reopen(struct handover *h)
{
        struct handover *n = NULL;
        int fd = fcntl(handover_fd(h), F_DUPFD_CLOEXEC, 3);

        check(fd >= 0);
        check_int(handover_adopt(fd, &n), 0);
        return n;
}

/* Restore everything from @h and compare with the expected SEQNUMs. */
static void expect_restore(struct handover *h, const uint64_t *want, size_t n_want)
{
        char buf[HP_UEVENT_MAX_SIZE], exp[256];
        uint64_t seqnum;
        size_t size, n = 0;
        int r;

        check_int(handover_restore_pending(h), n_want);
        while ((r = handover_restore_next(h, buf, &size, &seqnum, NULL)) > 0) {
                check(n < n_want);
                check_int(seqnum, want[n]);
                check_int(size, dgram(seqnum, exp, sizeof(exp)));
                check(memcmp(buf, exp, size) == 0);
                n++;
        }
        check_int(r, 0);
        check_int(n, n_want);
        check_int(handover_restore_pending(h), 0);
}

static void test_roundtrip(void)
{
        struct handover *h = NULL, *n;
        static const uint64_t want[] = { 101, 103, 105 };

        check_int(handover_new(&h), 0);
        check(fcntl(handover_fd(h), F_GETFD) & FD_CLOEXEC);
        for (uint64_t s = 101; s <= 105; s++)
                add(h, s);
        done(h, 102, 4);
        done(h, 104, 3);
        n = reopen(h);
        check_int(handover_ledger_last(n), 105);
        expect_restore(n, want, 3);
        /* The new instance goes on writing to the same journal. */
        add(n, 106);
        done(n, 101, 3);
        handover_free(n);
        n = reopen(h);
        {
                static const uint64_t want2[] = { 103, 105, 106 };
                expect_restore(n, want2, 3);
        }
        handover_free(n);
        handover_free(h);
}

static void test_ledger_and_idle(void)
{
        struct handover *h = NULL, *n;
        struct stat st;

        check_int(handover_new(&h), 0);
        add(h, 7);
        check_int(handover_ledger(h, 9), 0); /* 8 and 9 were filtered */
        done(h, 7, 0);                       /* nothing held: cut back */
        check(fstat(handover_fd(h), &st) == 0);
        check_int(st.st_size, HANDOVER_HEADER_SIZE);
        check_int(handover_size(h), 0);
        n = reopen(h);
        check_int(handover_ledger_last(n), 9);
        expect_restore(n, NULL, 0);
        handover_free(n);
        handover_free(h);
}

/* Under steady load the journal stays a small multiple of what is held. */
static void test_compaction(void)
{
        struct handover *h = NULL, *n;
        uint64_t want[16];
        struct stat st;

        check_int(handover_new(&h), 0);
        /* 16 events stay held throughout; 100000 more come and go. */
        for (uint64_t s = 1; s <= 16; s++) {
                add(h, s);
                want[s - 1] = s;
        }
        for (uint64_t s = 17; s < 100017; s++) {
                add(h, s);
                done(h, s, 16);
        }
        check(handover_size(h) <= HANDOVER_COMPACT_MIN + 4096);
        check(fstat(handover_fd(h), &st) == 0);
        /* Offsets grow, memory does not: the dead pages were punched out. */
        check((uint64_t)st.st_blocks * 512 <= 2 * HANDOVER_COMPACT_MIN + 65536);
        n = reopen(h);
        check_int(handover_ledger_last(n), 100016);
        expect_restore(n, want, 16);
        handover_free(n);
        handover_free(h);
}

static void test_torn_tail(void)
{
        struct handover *h = NULL, *n;
        static const uint64_t want[] = { 5, 6 };
        static const char junk[] = "\x01\x00\x00\x00\x40\x00\x00\x00garbage";
        struct stat st;

        check_int(handover_new(&h), 0);
        add(h, 5);
        check(fstat(handover_fd(h), &st) == 0);
        /* A crash inside write(2): a frame announcing more than is there. */
        check(pwrite(handover_fd(h), junk, sizeof(junk) - 1, st.st_size) == (ssize_t)sizeof(junk) - 1);
        n = reopen(h);
        check_int(handover_restore_pending(n), 1);
        add(n, 6); /* written over the torn bytes */
        handover_free(n);
        n = reopen(h);
        expect_restore(n, want, 2);
        handover_free(n);
        handover_free(h);
}

static void test_duplicate_records(void)
{
        struct handover *h = NULL, *n;
        static const uint64_t want[] = { 3, 8 };

        /* A compaction cut short leaves copies: each SEQNUM is restored once. */
        check_int(handover_new(&h), 0);
        add(h, 8);
        add(h, 3);
        add(h, 8);
        add(h, 3);
        n = reopen(h);
        expect_restore(n, want, 2);
        handover_free(n);
        handover_free(h);
}

static void test_foreign_file(void)
{
        struct handover *h = NULL;
        char hdr[HANDOVER_HEADER_SIZE];
        int fd = memfd_create("not-a-journal", MFD_CLOEXEC), fd2;

        check(fd >= 0);
        check(write(fd, "hello, world, this is not a journal at all", 42) == 42);
        fd2 = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        check_int(handover_adopt(fd2, &h), 1);
        check_int(handover_restore_pending(h), 0);
        /* Reset in place: the same file now starts with a journal header. */
        check(pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr));
        check(memcmp(hdr, HANDOVER_MAGIC, 8) == 0);
        add(h, 1);
        handover_free(h);
        check_int(handover_adopt(fd, &h), 0);
        check_int(handover_restore_pending(h), 1);
        handover_free(h);
}

static void test_restore_not_cut(void)
{
        struct handover *h = NULL, *n;
        char buf[HP_UEVENT_MAX_SIZE];
        uint64_t seqnum;
        size_t size;
        static const uint64_t want[] = { 12, 13 };

        check_int(handover_new(&h), 0);
        add(h, 11);
        add(h, 12);
        add(h, 13);
        n = reopen(h);
        check_int(handover_restore_next(n, buf, &size, &seqnum, NULL), 1);
        check_int(seqnum, 11);
        /* The first restored event is dropped with nothing else held yet:
         * 12 and 13 are still to restore, so the journal must keep them. */
        done(n, 11, 0);
        handover_free(n);
        n = reopen(h);
        expect_restore(n, want, 2);
        handover_free(n);
        handover_free(h);
}

/* STARTED records: a next instance knows which held events had their agent
 * started (they run a second time), also after a compaction. */
static void test_started(void)
{
        struct handover *h = NULL, *n;
        char buf[HP_UEVENT_MAX_SIZE];
        uint64_t seqnum;
        size_t size, k = 0;
        bool started;
        int r;

        check_int(handover_new(&h), 0);
        for (uint64_t s = 1; s <= 16; s++) {
                add(h, s);
                if (s % 2 == 0)
                        check_int(handover_started(h, s), 0);
        }
        /* Enough traffic for compactions; each event is started before it is done. */
        for (uint64_t s = 17; s < 100017; s++) {
                add(h, s);
                check_int(handover_started(h, s), 0);
                done(h, s, 16);
        }
        n = reopen(h);
        check_int(handover_restore_pending(n), 16);
        check_int(handover_restore_started(n), 8);
        while ((r = handover_restore_next(n, buf, &size, &seqnum, &started)) > 0) {
                check_int(seqnum, ++k);
                check_int(started, seqnum % 2 == 0);
        }
        check_int(r, 0);
        check_int(k, 16);
        handover_free(n);
        handover_free(h);
}

/*
 * An older journal: @h's records behind a 32-byte version @version header,
 * in a new memfd (returned, owned by the caller).
 */
static int old_journal(struct handover *h, uint32_t version)
{
        uint8_t buf[4096], hdr[HANDOVER_HEADER_SIZE_V2] = "HPDQUEUE";
        uint32_t size = HANDOVER_HEADER_SIZE_V2;
        uint64_t start = HANDOVER_HEADER_SIZE_V2;
        struct stat st;
        ssize_t n;
        int fd = memfd_create("old-journal", MFD_CLOEXEC);

        check(fd >= 0 && fstat(handover_fd(h), &st) == 0);
        n = pread(handover_fd(h), buf, sizeof(buf), HANDOVER_HEADER_SIZE);
        check(n == st.st_size - HANDOVER_HEADER_SIZE);
        memcpy(hdr + 8, &version, 4);
        memcpy(hdr + 12, &size, 4);
        memcpy(hdr + 16, &start, 8);
        check(pwrite(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr));
        check(pwrite(fd, buf, (size_t)n, sizeof(hdr)) == n);
        return fd;
}

/*
 * Version 1 and 2 journals (32-byte header, no intake mark) are taken over,
 * version 1 then marked version 2; with no mark nothing is suspected, marking
 * is refused, and once nothing is held the file becomes version 3.
 */
static void test_old_versions(void)
{
        static const uint64_t want[] = { 7, 9 };
        static const struct handover_mark mark = { .seqnum = 9, .digest = 1, .tries = 1 };

        for (uint32_t v = HANDOVER_VERSION_1; v <= HANDOVER_VERSION_2; v++) {
                struct handover *h = NULL, *n = NULL;
                struct handover_mark got;
                uint32_t version;
                struct stat st;
                int fd;

                check_int(handover_new(&h), 0);
                add(h, 7);
                add(h, 9);
                fd = old_journal(h, v);
                check_int(handover_adopt(fd, &n), 0);
                check_int(handover_restore_started(n), 0);
                expect_restore(n, want, 2);
                check(pread(fd, &version, sizeof(version), 8) == (ssize_t)sizeof(version));
                check_int(version, HANDOVER_VERSION_2);
                for (int slot = 0; slot < _HANDOVER_MARK_MAX; slot++) {
                        handover_suspect(n, (enum handover_slot)slot, &got);
                        check_int(got.seqnum, 0);
                        check_int(handover_mark(n, (enum handover_slot)slot, &mark), -EOPNOTSUPP);
                }
                done(n, 7, 1);
                done(n, 9, 0);
                check(fstat(fd, &st) == 0);
                check_int(st.st_size, HANDOVER_HEADER_SIZE);
                check(pread(fd, &version, sizeof(version), 8) == (ssize_t)sizeof(version));
                check_int(version, HANDOVER_VERSION);
                check_int(handover_mark(n, HANDOVER_MARK_INTAKE, &mark), 0);
                check_int(handover_mark(n, HANDOVER_MARK_START, &mark), 0);
                handover_free(n);
                handover_free(h);
        }
}

/* What @h's slot holds for the next instance (a takeover of a duplicate). */
static struct handover_mark suspect_after(struct handover *h, enum handover_slot slot)
{
        struct handover *n = reopen(h);
        struct handover_mark got;

        handover_suspect(n, slot, &got);
        handover_free(n);
        return got;
}

/*
 * The marks, intake and start: what a process that dies while one is set
 * leaves to the next instance, each slot apart from the other, at its
 * place in the header (FORMAT: bytes 32 and 48).
 */
static void test_mark(void)
{
        static const struct handover_mark mark = { .seqnum = 42, .digest = 0xdeadbeef, .tries = 2 };
        static const struct handover_mark start = { .seqnum = 41, .digest = 0xfeed, .tries = 1 };
        struct handover *h = NULL;
        struct handover_mark got;

        check_int(handover_new(&h), 0);
        add(h, 41);
        check_int(handover_mark(h, HANDOVER_MARK_INTAKE, &mark), 0);
        got = suspect_after(h, HANDOVER_MARK_INTAKE);
        check_int(got.seqnum, 42);
        check_int(got.digest, 0xdeadbeef);
        check_int(got.tries, 2);
        check_int(suspect_after(h, HANDOVER_MARK_START).seqnum, 0);
        check_int(handover_mark(h, HANDOVER_MARK_START, &start), 0);
        got = suspect_after(h, HANDOVER_MARK_START);
        check_int(got.seqnum, 41);
        check_int(got.digest, 0xfeed);
        check_int(got.tries, 1);
        check(pread(handover_fd(h), &got, sizeof(got), 48) == (ssize_t)sizeof(got));
        check_int(got.seqnum, 41);
        check(pread(handover_fd(h), &got, sizeof(got), 32) == (ssize_t)sizeof(got));
        check_int(got.seqnum, 42);
        /* Cleared: nothing suspected there, the other slot keeps its mark. */
        check_int(handover_mark(h, HANDOVER_MARK_INTAKE, NULL), 0);
        check_int(suspect_after(h, HANDOVER_MARK_INTAKE).seqnum, 0);
        check_int(suspect_after(h, HANDOVER_MARK_START).seqnum, 41);
        check_int(handover_mark(h, HANDOVER_MARK_START, NULL), 0);
        check_int(suspect_after(h, HANDOVER_MARK_START).seqnum, 0);
        /* Cutting back (nothing held) keeps a mark in place. */
        check_int(handover_mark(h, HANDOVER_MARK_INTAKE, &mark), 0);
        check_int(handover_mark(h, HANDOVER_MARK_START, &start), 0);
        done(h, 41, 0);
        check_int(suspect_after(h, HANDOVER_MARK_INTAKE).seqnum, 42);
        check_int(suspect_after(h, HANDOVER_MARK_START).seqnum, 41);
        handover_free(h);
}

static void test_bad_input(void)
{
        struct handover *h = NULL;
        char big[HP_UEVENT_MAX_SIZE + 1] = "";

        check_int(handover_new(&h), 0);
        check_int(handover_event(h, 1, big, 0), -EINVAL);
        check_int(handover_event(h, 1, big, sizeof(big)), -EINVAL);
        check_int(handover_size(h), 0);
        handover_free(h);
        check(handover_free(NULL) == NULL);
}

int main(void)
{
        run_test(test_roundtrip);
        run_test(test_ledger_and_idle);
        run_test(test_compaction);
        run_test(test_torn_tail);
        run_test(test_duplicate_records);
        run_test(test_foreign_file);
        run_test(test_restore_not_cut);
        run_test(test_started);
        run_test(test_old_versions);
        run_test(test_mark);
        run_test(test_bad_input);
        return 0;
}
