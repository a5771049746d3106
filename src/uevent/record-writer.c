/* SPDX-License-Identifier: MIT */
/*
 * Event recordings: the append-only writer (see WRITING in record.h).
 *
 * Invariants: the writer's file always ends on a record boundary unless the
 * process died inside write(2); every record it writes went through
 * record_encode(); w->size is the file's size as far as this writer knows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/trust.h"
#include "uevent/record-internal.h"

struct record_writer {
        int fd;
        uint64_t size;
        bool dirty;
        uint8_t buf[RECORD_FRAME_SIZE + HP_RECORD_MAX];
};

static int write_all(int fd, const void *p, size_t n)
{
        ssize_t k = write(fd, p, n);

        if (k < 0)
                return negative_errno();
        return (size_t)k == n ? 0 : -ENOSPC;
}

/* Give an empty file (or one holding only the start of a header) our header. */
static int writer_init_file(struct record_writer *w, const uint8_t *have, size_t n)
{
        uint8_t h[RECORD_FILE_HEADER_SIZE];
        int r;

        record_file_header(h);
        if (n > 0 && memcmp(have, h, MIN(n, (size_t)8)) != 0)
                return -EBADMSG;
        if (n > 0 && ftruncate(w->fd, 0) < 0)
                return negative_errno();
        r = write_all(w->fd, h, sizeof(h));
        if (r < 0) {
                /* Best effort: a file holding part of a header is given a whole one next time. */
                (void)!ftruncate(w->fd, 0);
                return r;
        }
        w->size = sizeof(h);
        w->dirty = true;
        return 0;
}

int record_writer_open(const char *path, struct record_writer **ret)
{
        _cleanup_free_ struct record_writer *w = NULL;
        uint8_t h[RECORD_FILE_HEADER_SIZE];
        struct stat st;
        ssize_t n;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        /* Never through a symbolic link (-ELOOP), and readable by root only:
         * a recording holds every event's environment. */
        w->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
        if (w->fd < 0)
                return negative_errno();
        if (flock(w->fd, LOCK_EX | LOCK_NB) < 0) {
                r = errno == EWOULDBLOCK ? -EBUSY : negative_errno();
                goto fail;
        }
        if (fstat(w->fd, &st) < 0) {
                r = negative_errno();
                goto fail;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto fail;
        }
        /* Someone else's file, or one others can write: they could plant
         * records that root replays later, or read what it appends. */
        if (trust_reason(&st)) {
                r = -EPERM;
                goto fail;
        }
        n = pread(w->fd, h, sizeof(h), 0);
        if (n < 0) {
                r = negative_errno();
                goto fail;
        }
        if ((size_t)n < sizeof(h) && (uint64_t)st.st_size == (uint64_t)n)
                r = writer_init_file(w, h, (size_t)n);
        else {
                r = record_check_header(h, (size_t)n, NULL);
                w->size = (uint64_t)st.st_size;
        }
        if (r < 0)
                goto fail;
        *ret = TAKE_PTR(w);
        return 0;
fail:
        safe_close(w->fd);
        return r;
}

int record_append(struct record_writer *w, const struct record *rec)
{
        ssize_t n;
        int r;

        n = record_encode(rec, w->buf, sizeof(w->buf));
        if (n < 0)
                return (int)n;
        r = write_all(w->fd, w->buf, (size_t)n);
        if (r < 0) {
                /* Leave no torn record behind us: the file ends on a boundary again.  Best
                 * effort: the caller stops writing, and a reader reports a torn last record. */
                (void)!ftruncate(w->fd, (off_t)w->size);
                return r;
        }
        w->size += (uint64_t)n;
        w->dirty = true;
        return 0;
}

int record_writer_sync(struct record_writer *w)
{
        if (!w->dirty)
                return 0;
        if (fdatasync(w->fd) < 0)
                return negative_errno();
        w->dirty = false;
        return 0;
}

uint64_t record_writer_size(const struct record_writer *w)
{
        return w->size;
}

struct record_writer *record_writer_free(struct record_writer *w)
{
        if (!w)
                return NULL;
        (void)record_writer_sync(w);
        safe_close(w->fd);
        free(w);
        return NULL;
}
