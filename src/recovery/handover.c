/* SPDX-License-Identifier: MIT */
/*
 * The handover journal (format and invariants in handover.h).
 *
 * In memory the journal knows its start and end, the ledger's highest
 * SEQNUM, and roughly how many bytes are live (exact after every scan).
 * The list of held events is never kept in memory: adopting and compacting
 * read it back from the file, which is rare and linear.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "recovery/handover.h"
#include "shared/macro.h"
#include "uevent/record.h"

#define PAYLOAD_MAX (8 + HP_UEVENT_MAX_SIZE)
#define OFF_START 16
#define OFF_LEDGER 24
#define OFF_MARK 32

struct frame {
        uint16_t type;
        uint16_t zero;
        uint32_t length;
        uint32_t crc;
        uint32_t pad;
};
_Static_assert(sizeof(struct frame) == HANDOVER_FRAME_SIZE, "frame layout");

struct header {
        char magic[8];
        uint32_t version;
        uint32_t size;
        uint64_t start;
        uint64_t ledger_last;
};
/* Versions 1 and 2 end here; version 3 adds the marks, one slot after the other (handover.h). */
_Static_assert(sizeof(struct header) == HANDOVER_HEADER_SIZE_V2, "header layout");
_Static_assert(OFF_MARK + _HANDOVER_MARK_MAX * sizeof(struct handover_mark) <= HANDOVER_HEADER_SIZE,
               "mark layout");

/* An EVENT record found by a scan. */
struct held {
        uint64_t seqnum;
        uint64_t offset; /* of its frame */
        uint32_t length; /* payload */
        bool started;    /* a STARTED record follows: its agent may have run */
};

struct handover {
        int fd;
        uint64_t hsize;           /* header size: HANDOVER_HEADER_SIZE, or _V2 for an adopted old journal */
        void *map;                /* the header's page, shared; NULL: not mapped */
        struct handover_mark *marks;  /* the marks in @map, by slot; NULL: none (old journal) */
        struct handover_mark suspect[_HANDOVER_MARK_MAX]; /* the marks found by handover_adopt() */
        uint64_t start, end;
        uint64_t ledger_last;     /* highest known */
        uint64_t ledger_written;  /* what the header says */
        uint64_t live_bytes;      /* EVENT records not done (frames included) */
        uint64_t compact_min;     /* dead bytes tolerated before a compaction, at least (budget) */
        struct held *restore;     /* adopt: held events, by SEQNUM */
        size_t n_restore, next_restore;
        size_t n_restore_started; /* of them, events whose agent had been started */
};

static int pwrite_all(int fd, const void *buf, size_t size, uint64_t offset)
{
        ssize_t n = pwrite(fd, buf, size, (off_t)offset);

        if (n < 0)
                return negative_errno();
        return (size_t)n == size ? 0 : -ENOSPC;
}

static int pread_all(int fd, void *buf, size_t size, uint64_t offset)
{
        ssize_t n = pread(fd, buf, size, (off_t)offset);

        if (n < 0)
                return negative_errno();
        return (size_t)n == size ? 0 : -ENODATA;
}

static uint32_t frame_crc(const struct frame *f, const void *payload, size_t size)
{
        return record_crc32(record_crc32(0, f, 8), payload, size);
}

/* Append one record with one write; a partial one is cut away again. */
static int append(struct handover *h, enum handover_record type, uint64_t seqnum, const void *data, size_t size)
{
        uint8_t buf[HANDOVER_FRAME_SIZE + PAYLOAD_MAX];
        struct frame f = { .type = (uint16_t)type, .length = (uint32_t)(8 + size) };
        int r;

        memcpy(buf + HANDOVER_FRAME_SIZE, &seqnum, 8);
        if (size)
                memcpy(buf + HANDOVER_FRAME_SIZE + 8, data, size);
        f.crc = frame_crc(&f, buf + HANDOVER_FRAME_SIZE, f.length);
        memcpy(buf, &f, sizeof(f));
        r = pwrite_all(h->fd, buf, HANDOVER_FRAME_SIZE + f.length, h->end);
        if (r < 0) {
                /* Best effort: a frame left past h->end is never read (a scan stops at a bad
                 * checksum) and the next append writes over it. */
                (void)!ftruncate(h->fd, (off_t)h->end);
                return r;
        }
        h->end += HANDOVER_FRAME_SIZE + f.length;
        return 0;
}

/* A version 3 header with no marks. */
static int write_header(int fd, uint64_t start, uint64_t ledger_last)
{
        uint8_t buf[HANDOVER_HEADER_SIZE] = { 0 };
        struct header hd = { .version = HANDOVER_VERSION, .size = HANDOVER_HEADER_SIZE, .start = start,
                             .ledger_last = ledger_last };

        memcpy(hd.magic, HANDOVER_MAGIC, 8);
        memcpy(buf, &hd, sizeof(hd));
        return pwrite_all(fd, buf, sizeof(buf), 0);
}

/* Map the header's page (the file holds a version 3 header) so that marks cost no system call. */
static int map_mark(struct handover *h)
{
        if (!h->map) {
                void *p = mmap(NULL, HANDOVER_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, h->fd, 0);

                if (p == MAP_FAILED)
                        return negative_errno();
                h->map = p;
        }
        h->marks = (struct handover_mark *)((uint8_t *)h->map + OFF_MARK);
        return 0;
}

static struct handover *alloc_for(int fd)
{
        struct handover *h = calloc(1, sizeof(*h));

        if (!h)
                return NULL;
        h->fd = fd;
        h->hsize = HANDOVER_HEADER_SIZE;
        h->start = h->end = HANDOVER_HEADER_SIZE;
        return h;
}

int handover_new(struct handover **ret)
{
        struct handover *h;
        int fd, r;

        fd = memfd_create("hotplugd-queue", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        h = alloc_for(fd);
        if (!h) {
                safe_close(fd);
                return -ENOMEM;
        }
        r = write_header(fd, HANDOVER_HEADER_SIZE, 0);
        if (r >= 0)
                r = map_mark(h);
        if (r < 0) {
                handover_free(h);
                return r;
        }
        *ret = h;
        return 0;
}

struct handover *handover_free(struct handover *h)
{
        if (!h)
                return NULL;
        if (h->map)
                munmap(h->map, HANDOVER_HEADER_SIZE);
        safe_close(h->fd);
        free(h->restore);
        free(h);
        return NULL;
}

int handover_fd(const struct handover *h)
{
        return h->fd;
}

uint64_t handover_ledger_last(const struct handover *h)
{
        return h->ledger_last;
}

void handover_set_compact_min(struct handover *h, uint64_t bytes)
{
        h->compact_min = bytes;
}

uint64_t handover_size(const struct handover *h)
{
        return h->end - h->start;
}

uint64_t handover_live_bytes(const struct handover *h)
{
        return h->live_bytes;
}

size_t handover_restore_pending(const struct handover *h)
{
        return h->n_restore - h->next_restore;
}

/* ---- scanning ------------------------------------------------------------ */

static int cmp_held(const void *a, const void *b)
{
        const struct held *x = a, *y = b;

        if (x->seqnum != y->seqnum)
                return x->seqnum < y->seqnum ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

static int grow(void **array, size_t *alloc, size_t n, size_t elem)
{
        void *p;

        if (n < *alloc)
                return 0;
        *alloc = *alloc ? *alloc * 2 : 256;
        p = realloc(*array, *alloc * elem);
        if (!p)
                return -ENOMEM;
        *array = p;
        return 0;
}

struct scan {
        struct held *events;
        size_t n_events, a_events;
        uint64_t *dones;
        size_t n_dones, a_dones;
        uint64_t *starts;
        size_t n_starts, a_starts;
        uint64_t end;     /* after the last valid record */
        uint64_t max_seq; /* highest SEQNUM in any record */
};

/* Read one record at @off into @s.  Return: 1 read, 0 no valid record here, negative errno. */
static int scan_one(int fd, uint64_t off, uint64_t size, struct scan *s, uint8_t *payload)
{
        struct frame f;
        uint64_t seqnum;
        int r;

        if (size - off < HANDOVER_FRAME_SIZE || pread_all(fd, &f, sizeof(f), off) < 0)
                return 0;
        if ((f.type != HANDOVER_EVENT && f.type != HANDOVER_DONE && f.type != HANDOVER_STARTED) || f.zero ||
            f.pad || f.length < 8 || f.length > PAYLOAD_MAX || (f.type != HANDOVER_EVENT && f.length != 8) ||
            (f.type == HANDOVER_EVENT && f.length == 8) || size - off - HANDOVER_FRAME_SIZE < f.length)
                return 0;
        if (pread_all(fd, payload, f.length, off + HANDOVER_FRAME_SIZE) < 0 ||
            frame_crc(&f, payload, f.length) != f.crc)
                return 0;
        memcpy(&seqnum, payload, 8);
        s->max_seq = MAX(s->max_seq, seqnum);
        if (f.type == HANDOVER_DONE) {
                r = grow((void **)&s->dones, &s->a_dones, s->n_dones, sizeof(uint64_t));
                if (r < 0)
                        return r;
                s->dones[s->n_dones++] = seqnum;
        } else if (f.type == HANDOVER_STARTED) {
                r = grow((void **)&s->starts, &s->a_starts, s->n_starts, sizeof(uint64_t));
                if (r < 0)
                        return r;
                s->starts[s->n_starts++] = seqnum;
        } else {
                r = grow((void **)&s->events, &s->a_events, s->n_events, sizeof(struct held));
                if (r < 0)
                        return r;
                s->events[s->n_events++] = (struct held){ .seqnum = seqnum, .offset = off, .length = f.length };
        }
        s->end = off + HANDOVER_FRAME_SIZE + f.length;
        return 1;
}

/* Keep in s->events only the held ones: no DONE, each SEQNUM once, ascending. */
static void scan_reduce(struct scan *s)
{
        size_t n = 0, d = 0, st = 0;

        /* qsort() must not be given NULL, even for zero elements. */
        if (s->n_events > 0)
                qsort(s->events, s->n_events, sizeof(*s->events), cmp_held);
        if (s->n_dones > 0)
                qsort(s->dones, s->n_dones, sizeof(*s->dones), cmp_u64);
        if (s->n_starts > 0)
                qsort(s->starts, s->n_starts, sizeof(*s->starts), cmp_u64);
        for (size_t i = 0; i < s->n_events; i++) {
                uint64_t seq = s->events[i].seqnum;

                if (n > 0 && s->events[n - 1].seqnum == seq)
                        continue;
                while (d < s->n_dones && s->dones[d] < seq)
                        d++;
                if (d < s->n_dones && s->dones[d] == seq)
                        continue;
                while (st < s->n_starts && s->starts[st] < seq)
                        st++;
                s->events[n] = s->events[i];
                s->events[n++].started = st < s->n_starts && s->starts[st] == seq;
        }
        s->n_events = n;
}

/* Every record from h->start; the held events end up in s->events. */
static int scan(struct handover *h, struct scan *s)
{
        _cleanup_free_ uint8_t *payload = malloc(PAYLOAD_MAX);
        struct stat st;
        uint64_t off;
        int r;

        *s = (struct scan){ .end = h->start };
        if (!payload)
                return -ENOMEM;
        if (fstat(h->fd, &st) < 0)
                return negative_errno();
        for (off = h->start; off < (uint64_t)st.st_size; off = s->end) {
                r = scan_one(h->fd, off, (uint64_t)st.st_size, s, payload);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
        }
        scan_reduce(s);
        return 0;
}

static void scan_done(struct scan *s)
{
        free(s->events);
        free(s->dones);
        free(s->starts);
}

static uint64_t held_bytes(const struct held *e, size_t n)
{
        uint64_t sum = 0;

        for (size_t i = 0; i < n; i++)
                sum += HANDOVER_FRAME_SIZE + e[i].length;
        return sum;
}

/* ---- adopting ------------------------------------------------------------- */

/* Make @h an empty version 3 journal in its own file, keeping only @ledger_last. */
static int reset_file(struct handover *h, uint64_t ledger_last)
{
        int r;

        h->marks = NULL;
        if (ftruncate(h->fd, 0) < 0)
                return negative_errno();
        h->hsize = HANDOVER_HEADER_SIZE;
        h->start = h->end = HANDOVER_HEADER_SIZE;
        h->ledger_last = h->ledger_written = ledger_last;
        r = write_header(h->fd, HANDOVER_HEADER_SIZE, ledger_last);
        return r < 0 ? r : map_mark(h);
}

static bool header_ok(const struct header *hd)
{
        if (memcmp(hd->magic, HANDOVER_MAGIC, 8) != 0 || hd->start < hd->size)
                return false;
        if (hd->version == HANDOVER_VERSION)
                return hd->size == HANDOVER_HEADER_SIZE;
        return (hd->version == HANDOVER_VERSION_2 || hd->version == HANDOVER_VERSION_1) &&
               hd->size == HANDOVER_HEADER_SIZE_V2;
}

int handover_adopt(int fd, struct handover **ret)
{
        struct handover *h;
        struct header hd;
        struct scan s;
        int r;

        h = alloc_for(fd);
        if (!h) {
                safe_close(fd);
                return -ENOMEM;
        }
        if (pread_all(fd, &hd, sizeof(hd), 0) < 0 || !header_ok(&hd)) {
                r = reset_file(h, 0);
                if (r < 0)
                        goto fail;
                *ret = h;
                return 1;
        }
        h->hsize = hd.size;
        if (hd.version == HANDOVER_VERSION) {
                r = pread_all(fd, h->suspect, sizeof(h->suspect), OFF_MARK);
                if (r >= 0)
                        r = map_mark(h);
                if (r < 0)
                        goto fail;
        }
        h->start = hd.start;
        r = scan(h, &s);
        if (r < 0) {
                scan_done(&s);
                goto fail;
        }
        h->end = s.end;
        h->ledger_last = h->ledger_written = hd.ledger_last;
        h->ledger_last = MAX(h->ledger_last, s.max_seq);
        h->live_bytes = held_bytes(s.events, s.n_events);
        h->restore = s.events; /* ownership moves */
        h->n_restore = s.n_events;
        free(s.dones);
        free(s.starts);
        for (size_t i = 0; i < h->n_restore; i++)
                h->n_restore_started += h->restore[i].started;
        /* A version 1 journal is read the same way; what follows may hold STARTED records. */
        if (hd.version == HANDOVER_VERSION_1) {
                uint32_t v = HANDOVER_VERSION_2;

                r = pwrite_all(fd, &v, sizeof(v), 8);
                if (r < 0)
                        goto fail;
        }
        /* Cut off a torn tail, so that new records follow valid ones. */
        if (ftruncate(fd, (off_t)h->end) < 0) {
                r = negative_errno();
                goto fail;
        }
        *ret = h;
        return 0;
fail:
        handover_free(h);
        return r;
}

int handover_restore_next(struct handover *h, char *buf, size_t *ret_size, uint64_t *ret_seqnum,
                          bool *ret_started)
{
        struct held *e;
        uint8_t payload[PAYLOAD_MAX];
        int r;

        if (h->next_restore >= h->n_restore) {
                free(h->restore);
                h->restore = NULL;
                h->n_restore = h->next_restore = 0;
                return 0;
        }
        e = &h->restore[h->next_restore++];
        r = pread_all(h->fd, payload, e->length, e->offset + HANDOVER_FRAME_SIZE);
        if (r < 0)
                return r;
        memcpy(buf, payload + 8, e->length - 8);
        *ret_size = e->length - 8;
        *ret_seqnum = e->seqnum;
        if (ret_started)
                *ret_started = e->started;
        return 1;
}

/* ---- writing --------------------------------------------------------------- */

int handover_started(struct handover *h, uint64_t seqnum)
{
        return append(h, HANDOVER_STARTED, seqnum, NULL, 0);
}

size_t handover_restore_started(const struct handover *h)
{
        return h->n_restore_started;
}

int handover_event(struct handover *h, uint64_t seqnum, const void *data, size_t size)
{
        int r;

        if (size == 0 || size > HP_UEVENT_MAX_SIZE)
                return -EINVAL;
        r = append(h, HANDOVER_EVENT, seqnum, data, size);
        if (r < 0)
                return r;
        h->live_bytes += HANDOVER_FRAME_SIZE + 8 + size;
        h->ledger_last = MAX(h->ledger_last, seqnum);
        return 0;
}

int handover_ledger(struct handover *h, uint64_t last)
{
        int r;

        h->ledger_last = MAX(h->ledger_last, last);
        if (h->ledger_last == h->ledger_written)
                return 0;
        r = pwrite_all(h->fd, &h->ledger_last, 8, OFF_LEDGER);
        if (r < 0)
                return r;
        h->ledger_written = h->ledger_last;
        return 0;
}

/*
 * Nothing held: back to the header alone.  Each step leaves an empty
 * journal.  An adopted version 1 or 2 journal becomes version 3 here.
 */
static int cut_back(struct handover *h)
{
        uint64_t start = HANDOVER_HEADER_SIZE;
        int r;

        if (h->hsize != HANDOVER_HEADER_SIZE) {
                r = reset_file(h, h->ledger_last);
                if (r >= 0)
                        h->live_bytes = 0;
                return r;
        }
        if (ftruncate(h->fd, HANDOVER_HEADER_SIZE) < 0)
                return negative_errno();
        r = pwrite_all(h->fd, &start, 8, OFF_START);
        if (r < 0)
                return r;
        h->start = h->end = HANDOVER_HEADER_SIZE;
        h->live_bytes = 0;
        return 0;
}

/* Copy the held EVENT records to the end, then move start past the old ones. */
static int compact(struct handover *h)
{
        _cleanup_free_ uint8_t *buf = malloc(HANDOVER_FRAME_SIZE + PAYLOAD_MAX);
        uint64_t new_start = h->end;
        struct scan s;
        int r;

        if (!buf)
                return -ENOMEM;
        r = scan(h, &s);
        for (size_t i = 0; r >= 0 && i < s.n_events; i++) {
                size_t len = HANDOVER_FRAME_SIZE + s.events[i].length;

                r = pread_all(h->fd, buf, len, s.events[i].offset);
                if (r >= 0)
                        r = pwrite_all(h->fd, buf, len, h->end);
                if (r >= 0)
                        h->end += len;
                if (r >= 0 && s.events[i].started)
                        r = append(h, HANDOVER_STARTED, s.events[i].seqnum, NULL, 0);
        }
        if (r >= 0)
                r = handover_ledger(h, s.max_seq);
        if (r >= 0)
                r = pwrite_all(h->fd, &new_start, 8, OFF_START);
        if (r < 0) {
                /* The old start still rules; drop the partial copies (best effort, as in
                 * append(): the next append writes over what stays). */
                h->end = new_start;
                (void)!ftruncate(h->fd, (off_t)new_start);
                scan_done(&s);
                return r;
        }
        h->start = new_start;
        h->live_bytes = held_bytes(s.events, s.n_events);
        scan_done(&s);
        /* Give the dead pages back; the offsets stay (a sparse file). */
        (void)fallocate(h->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)h->hsize,
                        (off_t)(new_start - h->hsize));
        return 0;
}

int handover_done(struct handover *h, uint64_t seqnum, size_t size, size_t held)
{
        uint64_t rec = HANDOVER_FRAME_SIZE + 8 + size, used;
        int r;

        h->live_bytes -= MIN(h->live_bytes, rec);
        h->ledger_last = MAX(h->ledger_last, seqnum);
        /* Events still to restore are held too, even if not handed out yet. */
        if (held == 0 && handover_restore_pending(h) == 0) {
                r = handover_ledger(h, h->ledger_last);
                return r < 0 ? r : cut_back(h);
        }
        r = append(h, HANDOVER_DONE, seqnum, NULL, 0);
        if (r < 0)
                return r;
        used = h->end - h->start;
        /* Under a budget (compact_min): as soon as the dead bytes outgrow the live ones. */
        if (used > (h->compact_min ? h->compact_min : HANDOVER_COMPACT_MIN) &&
            used - MIN(used, h->live_bytes) > (h->compact_min ? 1 : 3) * h->live_bytes)
                return compact(h);
        return 0;
}

/* ---- the marks -------------------------------------------------------------- */

int handover_mark(struct handover *h, enum handover_slot slot, const struct handover_mark *mark)
{
        struct handover_mark *m;

        assert(slot < _HANDOVER_MARK_MAX);
        if (!h->marks)
                return -EOPNOTSUPP;
        m = &h->marks[slot];
        /* SEQNUM last when marking, first when clearing: a mark read back is never torn. */
        __atomic_store_n(&m->seqnum, 0, __ATOMIC_RELEASE);
        if (!mark)
                return 0;
        __atomic_store_n(&m->digest, mark->digest, __ATOMIC_RELAXED);
        __atomic_store_n(&m->tries, mark->tries, __ATOMIC_RELAXED);
        __atomic_store_n(&m->seqnum, mark->seqnum, __ATOMIC_RELEASE);
        return 0;
}

void handover_suspect(const struct handover *h, enum handover_slot slot, struct handover_mark *ret)
{
        assert(slot < _HANDOVER_MARK_MAX);
        *ret = h->suspect[slot];
}

/* ---- a copy outside the memfd (handover-file.h) ----------------------------- */

/* Write all of @buf to @fd at its position. */
static int write_all(int fd, const void *buf, size_t size)
{
        const uint8_t *p = buf;

        while (size > 0) {
                ssize_t n = write(fd, p, size);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return -ENOSPC;
                p += n;
                size -= (size_t)n;
        }
        return 0;
}

int64_t handover_export(const struct handover *h, int out)
{
        uint8_t buf[65536];
        struct header hd;
        uint64_t off, left;
        int r;

        r = pread_all(h->fd, buf, h->hsize, 0);
        if (r < 0)
                return r;
        /* The records follow the header at once in the copy; the ledger's last is the one known. */
        memcpy(&hd, buf, sizeof(hd));
        hd.start = h->hsize;
        hd.ledger_last = h->ledger_last;
        memcpy(buf, &hd, sizeof(hd));
        r = write_all(out, buf, h->hsize);
        for (off = h->start, left = h->end - h->start; r >= 0 && left > 0;) {
                size_t n = (size_t)MIN(left, (uint64_t)sizeof(buf));

                r = pread_all(h->fd, buf, n, off);
                if (r >= 0)
                        r = write_all(out, buf, n);
                off += n;
                left -= n;
        }
        return r < 0 ? r : (int64_t)(h->hsize + h->end - h->start);
}

int handover_import(const void *data, size_t size, struct handover **ret)
{
        int fd, r;

        fd = memfd_create("hotplugd-queue", MFD_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        r = pwrite_all(fd, data, size, 0);
        if (r < 0) {
                safe_close(fd);
                return r;
        }
        r = handover_adopt(fd, ret);
        if (r == 1) {
                *ret = handover_free(*ret);
                return -EBADMSG;
        }
        return r;
}
