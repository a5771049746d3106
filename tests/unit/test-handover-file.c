/* SPDX-License-Identifier: MIT */
/*
 * The handover file: a round trip (held events, the ledger's last SEQNUM,
 * the present and handled devices), that the file is removed once taken
 * over, and that a truncated, grown, bit-flipped or foreign file is
 * refused whole with its reason and kept as .refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recovery/devset.h"
#include "recovery/handover-file.h"
#include "recovery/handover.h"
#include "shared/bounds.h"
#include "shared/macro.h"
#include "test.h"

static char dir[] = "/tmp/test-handover-file.XXXXXX";
static char path[256];

static size_t dgram(uint64_t seqnum, char *buf, size_t size)
{
        int n = snprintf(buf, size, "add@/devices/virtual/net/x%cACTION=add%cDEVPATH=/devices/virtual/net/x%c"
                         "SUBSYSTEM=net%cSEQNUM=%llu", 0, 0, 0, 0, (unsigned long long)seqnum);

        return (size_t)n + 1;
}

/* A file of two held events (7, 9; 8 done), ledger at 12, two devices present, one of them handled. */
static void make_file(void)
{
        struct handover *h = NULL;
        struct devset present, handled;
        char buf[256];
        uint64_t bytes = 0;

        check_int(handover_new(&h), 0);
        for (uint64_t s = 7; s <= 9; s++)
                check_int(handover_event(h, s, buf, dgram(s, buf, sizeof(buf))), 0);
        check_int(handover_done(h, 8, dgram(8, buf, sizeof(buf)), 2), 0);
        check_int(handover_ledger(h, 12), 0);
        devset_init(&present, 0);
        devset_init(&handled, 0);
        check_int(devset_put(&present, "/devices/virtual/net/lo", "net"), 1);
        check_int(devset_put(&present, "/devices/platform/serial8250/tty/ttyS0", "tty"), 1);
        check_int(devset_put(&handled, "/devices/virtual/net/lo", "net"), 1);
        check_int(devset_put(&handled, "/devices/virtual/net/gone", "net"), 1);
        check_int(handover_file_save(path, h, &present, &handled, &bytes), 0);
        check_int((int)bytes > HANDOVER_FILE_HEADER_SIZE, 1);
        devset_clear(&present);
        devset_clear(&handled);
        handover_free(h);
}

static void test_roundtrip(void)
{
        struct handover_file f;
        char why[256], buf[HP_UEVENT_MAX_SIZE];
        uint64_t seqnum;
        size_t size;
        struct stat st;

        make_file();
        check_int(stat(path, &st), 0);
        check_int((int)(st.st_mode & 07777), 0600);
        check_int(handover_file_load(path, &f, why, sizeof(why)), 0);
        check_int(access(path, F_OK) < 0 && errno == ENOENT, 1);
        check_int((int)handover_ledger_last(f.journal), 12);
        check_int((int)handover_restore_pending(f.journal), 2);
        check_int(handover_restore_next(f.journal, buf, &size, &seqnum, NULL), 1);
        check_int((int)seqnum, 7);
        check_int(handover_restore_next(f.journal, buf, &size, &seqnum, NULL), 1);
        check_int((int)seqnum, 9);
        check_int((int)f.present.n, 2);
        check_int((int)f.handled.n, 2);
        check_str(devset_get(&f.present, "/devices/platform/serial8250/tty/ttyS0"), "tty");
        check(devset_get(&f.handled, "/devices/virtual/net/lo") != NULL);
        check(devset_get(&f.handled, "/devices/virtual/net/gone") != NULL);
        check(devset_get(&f.present, "/devices/virtual/net/gone") == NULL);
        handover_file_done(&f);
        check_int(handover_file_load(path, &f, why, sizeof(why)), -ENOENT);
}

/* Damage the file with @damage, then expect a refusal naming @reason, the file kept as .refused. */
static void refused(void (*damage)(void), const char *reason)
{
        struct handover_file f;
        char why[256], kept[300];

        make_file();
        damage();
        check(handover_file_load(path, &f, why, sizeof(why)) < 0);
        if (!strstr(why, reason)) {
                fprintf(stderr, "refusal '%s' does not name '%s'\n", why, reason);
                check(false);
        }
        check(f.journal == NULL && f.present.n == 0 && f.handled.n == 0);
        snprintf(kept, sizeof(kept), "%s.refused", path);
        check_int(access(kept, F_OK), 0);
        check_int(access(path, F_OK) < 0 && errno == ENOENT, 1);
        check_int(unlink(kept), 0);
}

static void truncate_it(void)
{
        struct stat st;

        check_int(stat(path, &st), 0);
        check_int(truncate(path, st.st_size - 1), 0);
}

static void grow_it(void)
{
        int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

        check(fd >= 0);
        check_int((int)write(fd, "x", 1), 1);
        close(fd);
}

static void flip_it(void)
{
        int fd = open(path, O_RDWR | O_CLOEXEC);
        uint8_t b;

        check(fd >= 0);
        check_int((int)pread(fd, &b, 1, HANDOVER_FILE_HEADER_SIZE + 20), 1);
        b ^= 0x10;
        check_int((int)pwrite(fd, &b, 1, HANDOVER_FILE_HEADER_SIZE + 20), 1);
        close(fd);
}

static void foreign_it(void)
{
        int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        char junk[128];

        check(fd >= 0);
        memset(junk, 'J', sizeof(junk));
        check_int((int)write(fd, junk, sizeof(junk)), (int)sizeof(junk));
        close(fd);
}

static void writable_it(void)
{
        check_int(chmod(path, 0620), 0);
}

static void open_dir(void)
{
        check_int(chmod(dir, 0777), 0);
}

static void test_refused(void)
{
        refused(truncate_it, "sizes do not add up");
        refused(grow_it, "sizes do not add up");
        refused(flip_it, "checksum is wrong");
        refused(foreign_it, "not a handover file");
        refused(writable_it, "others may write to it");
        /* A directory anyone may write to (no sticky bit): another file could be put in its place. */
        refused(open_dir, "is not trusted");
        check_int(chmod(dir, 0700), 0);
}

int main(void)
{
        check(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/handover", dir);
        run_test(test_roundtrip);
        run_test(test_refused);
        check_int(rmdir(dir), 0);
        return 0;
}
