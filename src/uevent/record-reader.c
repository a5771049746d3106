/* SPDX-License-Identifier: MIT */
/*
 * Event recordings: the checking reader and its search through damage
 * (resync); see READING in record.h.
 *
 * Invariants: the reader never returns a record whose frame, checksum or
 * payload layout is wrong, and never reads past HP_RECORD_MAX bytes of
 * payload per record.  r->pos lies in the window when a frame is checked;
 * the resync tables' prefix checksums cover buf[0..n_pre) of the current
 * window only.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/macro.h"
#include "uevent/record-internal.h"

/* Reader window: room for one full record and some to scan ahead. */
#define READ_WINDOW (64 * 1024)
_Static_assert(READ_WINDOW > RECORD_FRAME_SIZE + HP_RECORD_MAX, "reader window too small");

/* Resync state, allocated at the first damage: prefix checksums of the window. */
struct resync_tables {
        size_t n_pre;                  /* pre[0..n_pre] hold the register after buf[0..i) */
        uint32_t pre[READ_WINDOW + 1];
};

struct record_reader {
        int fd;
        unsigned version;
        uint64_t pos;          /* next frame to read */
        uint64_t win_off;      /* file offset of buf[0] */
        size_t win_len;        /* valid bytes in buf */
        bool win_eof;          /* the window reaches the end of the file */
        struct record_problem problem;
        struct record_reader_stats stats;
        struct resync_tables *rs; /* NULL until the first damage */
        uint64_t step;         /* most bytes of damage searched per call; 0: no bound */
        bool searching;        /* a search through damage goes on at search_at */
        uint64_t search_at;
        char text[HP_RECORD_TEXT_MAX + 1];
        uint8_t buf[READ_WINDOW];
};

/* Read from the file into buf[win_len..] until the window is full or the file ends. */
static int fill(struct record_reader *r)
{
        ssize_t k;

        while (r->win_len < sizeof(r->buf) && !r->win_eof) {
                k = pread(r->fd, r->buf + r->win_len, sizeof(r->buf) - r->win_len, (off_t)(r->win_off + r->win_len));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        r->win_eof = true;
                r->win_len += (size_t)k;
                r->stats.read_bytes += (uint64_t)k;
        }
        return 0;
}

/* Make [off, off + n) readable in the window.  Return: bytes available from @off (< @n only at EOF). */
static ssize_t window(struct record_reader *r, uint64_t off, size_t n)
{
        int k;

        if (off >= r->win_off && off - r->win_off <= r->win_len) {
                size_t have = r->win_len - (size_t)(off - r->win_off);
                if (have >= n || r->win_eof)
                        return (ssize_t)MIN(have, n);
        }
        r->win_off = off;
        r->win_len = 0;
        r->win_eof = false;
        if (r->rs)
                r->rs->n_pre = 0;
        k = fill(r);
        if (k < 0)
                return k;
        return (ssize_t)MIN(r->win_len, n);
}

static const uint8_t *at(const struct record_reader *r, uint64_t off)
{
        assert(off >= r->win_off && off - r->win_off <= r->win_len && r->win_len <= sizeof(r->buf));
        return r->buf + (off - r->win_off);
}

enum frame_verdict { FRAME_OK, FRAME_BAD, FRAME_END };

/* Check the frame at @off.  FRAME_OK: *len is its payload length; FRAME_BAD: problem reason set. */
static int check_frame(struct record_reader *r, uint64_t off, uint32_t *len)
{
        const uint8_t *f;
        ssize_t k;
        uint32_t crc;

        k = window(r, off, RECORD_FRAME_SIZE);
        if (k <= 0)
                return k < 0 ? (int)k : FRAME_END;
        r->problem.have = r->problem.want = 0;
        if (k < RECORD_FRAME_SIZE) {
                r->problem.reason = "frame cut short";
                r->problem.have = (uint64_t)k;
                r->problem.want = RECORD_FRAME_SIZE;
                return FRAME_BAD;
        }
        f = at(r, off);
        if (memcmp(f, RECORD_SYNC, 4) != 0) {
                r->problem.reason = "no record marker";
                return FRAME_BAD;
        }
        *len = get32(f + 8);
        if (*len > HP_RECORD_MAX) {
                r->problem.reason = "record length over the limit";
                return FRAME_BAD;
        }
        k = window(r, off, RECORD_FRAME_SIZE + *len);
        if (k < 0)
                return (int)k;
        f = at(r, off);
        if ((size_t)k < RECORD_FRAME_SIZE + *len) {
                r->problem.reason = "payload cut short";
                r->problem.have = (uint64_t)k - RECORD_FRAME_SIZE;
                r->problem.want = *len;
                return FRAME_BAD;
        }
        crc = record_crc32(record_crc32(0, f + 4, 8), f + RECORD_FRAME_SIZE, *len);
        r->stats.crc_bytes += 8 + *len;
        if (crc != get32(f + 12)) {
                r->problem.reason = "checksum mismatch";
                return FRAME_BAD;
        }
        return FRAME_OK;
}

/*
 * Resync.  Searching damage for the next valid frame checks a candidate at
 * every sync marker, and a hostile file can hold one every 8 bytes, each
 * claiming HP_RECORD_MAX bytes of payload.  So that this costs time linear
 * in the file size, the window only slides forward (each byte is read
 * once) and a candidate's checksum comes from prefix checksums of the
 * window in constant time, by the linearity of CRC:
 *
 *   With U(s, D) the raw CRC register after feeding D to state s (zlib's
 *   crc32(c, D) is ~U(~c, D)), and P[i] = U(0, buf[0..i)):
 *     U(s, buf[a..b)) = s * x^(8(b-a)) + P[b] + P[a] * x^(8(b-a))
 *   (+ is XOR, * multiplication modulo the CRC polynomial), so a frame's
 *   CRC is ~(((U(~0, frame bytes 4..11) + P[a]) * x^(8 len)) + P[b]) with
 *   a, b the ends of its payload.
 *
 * In the bit-reflected form used here, bit 31 is the coefficient of x^0.
 */
#define CRC_POLY 0xEDB88320u

/* a * b modulo the CRC polynomial. */
static uint32_t crc_mul(uint32_t a, uint32_t b)
{
        uint32_t p = 0;

        /* Without branches on the data: they would be mispredicted half the time. */
        for (int i = 31; i >= 0; i--) {
                p ^= b & (0u - ((a >> i) & 1));
                b = (b >> 1) ^ (CRC_POLY & (0u - (b & 1))); /* b *= x */
        }
        return p;
}

/* One byte into the raw register (no inversions). */
static uint32_t crc_step(const uint32_t *table, uint32_t s, uint8_t byte)
{
        return table[(s ^ byte) & 0xff] ^ (s >> 8);
}

/* x^(8n) mod the CRC polynomial (n zero bytes), for n up to HP_RECORD_MAX: the
 * same for every reader, so computed once per process. */
static const uint32_t *x8n_table(void)
{
        static uint32_t x8n[HP_RECORD_MAX + 1];

        if (!x8n[0]) {
                uint32_t v = UINT32_C(1) << 31; /* x^0 */

                for (size_t n = 1; n <= HP_RECORD_MAX; n++)
                        x8n[n] = v = crc_step(record_crc_table(), v, 0);
                x8n[0] = UINT32_C(1) << 31; /* last: marks the table ready */
        }
        return x8n;
}

static int resync_tables_init(struct record_reader *r)
{
        struct resync_tables *t = malloc(sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->n_pre = 0;
        t->pre[0] = 0;
        r->rs = t;
        return 0;
}

/* Extend the prefix checksums to cover buf[0..n). */
static void prefix_to(struct record_reader *r, size_t n)
{
        const uint32_t *table = record_crc_table();
        struct resync_tables *t = r->rs;
        uint32_t c = t->pre[t->n_pre];

        assert(n <= r->win_len && t->n_pre <= READ_WINDOW);
        for (size_t i = t->n_pre; i < n; i++)
                t->pre[i + 1] = c = crc_step(table, c, r->buf[i]);
        if (n > t->n_pre) {
                r->stats.crc_bytes += n - t->n_pre;
                t->n_pre = n;
        }
}

/* Move the window forward to start at @off (within it), keeping what was read, and fill it. */
static int slide(struct record_reader *r, uint64_t off)
{
        struct resync_tables *t = r->rs;
        size_t drop = (size_t)(off - r->win_off);

        assert(off >= r->win_off && drop <= r->win_len && t->n_pre <= r->win_len);
        memmove(r->buf, r->buf + drop, r->win_len - drop);
        if (t->n_pre >= drop) {
                memmove(t->pre, t->pre + drop, (t->n_pre - drop + 1) * sizeof(t->pre[0]));
                t->n_pre -= drop;
        } else {
                t->n_pre = 0;
                t->pre[0] = 0;
        }
        r->win_off = off;
        r->win_len -= drop;
        return fill(r);
}

/* Is there a valid frame at @off, which the window holds with all its payload (or up to EOF)? */
static bool frame_at(struct record_reader *r, uint64_t off)
{
        size_t i = (size_t)(off - r->win_off), a, b;
        const uint8_t *f = r->buf + i;
        uint32_t len, s;

        if (r->win_len - i < RECORD_FRAME_SIZE)
                return false;
        len = get32(f + 8);
        if (len > HP_RECORD_MAX || r->win_len - i - RECORD_FRAME_SIZE < len)
                return false;
        a = i + RECORD_FRAME_SIZE;
        b = a + len;
        prefix_to(r, b);
        s = ~record_crc32(0, f + 4, 8); /* U(~0, frame bytes 4..11) */
        r->stats.crc_bytes += 8;
        s = crc_mul(s ^ r->rs->pre[a], x8n_table()[len]) ^ r->rs->pre[b];
        return ~s == get32(f + 12);
}

/*
 * From @from on, the offset of the next valid frame, or the end of the
 * file.  Linear time (see above).  -EAGAIN after r->step bytes (if set),
 * with r->search_at where to go on.
 */
static int64_t resync(struct record_reader *r, uint64_t from)
{
        uint64_t c = from;
        int k;

        if (!r->rs && (k = resync_tables_init(r)) < 0)
                return k;
        if (c < r->win_off || c > r->win_off + r->win_len) {
                k = (int)window(r, c, 0);
                if (k < 0)
                        return k;
        }
        for (;;) {
                size_t have = r->win_len - (size_t)(c - r->win_off), scan;
                const uint8_t *hit;

                if (r->step && c - from >= r->step) {
                        r->search_at = c;
                        return -EAGAIN;
                }
                /* Keep a whole largest frame ahead of the search in the window: slide when less is left. */
                if (have < RECORD_FRAME_SIZE + HP_RECORD_MAX && !r->win_eof && c > r->win_off) {
                        k = slide(r, c);
                        if (k < 0)
                                return k;
                        continue;
                }
                /* Only where a whole largest frame fits in the window, unless the file ends in it. */
                scan = r->win_eof ? have : have - (RECORD_FRAME_SIZE + HP_RECORD_MAX) + 4;
                hit = scan >= 4 ? memmem(at(r, c), scan, RECORD_SYNC, 4) : NULL;
                if (!hit) {
                        if (r->win_eof)
                                return (int64_t)(r->win_off + r->win_len);
                        c += scan - 3;
                        continue;
                }
                c += (uint64_t)(hit - at(r, c));
                if (frame_at(r, c))
                        return (int64_t)c;
                c++;
        }
}

static int take_text(struct record_reader *r, const uint8_t *p, size_t n, const char **ret)
{
        if (n == 0 || n > HP_RECORD_TEXT_MAX || memchr(p, '\0', n))
                return -EBADMSG;
        memcpy(r->text, p, n);
        r->text[n] = '\0';
        *ret = r->text;
        return 0;
}

/* Decode a checked payload.  Return: 0, -EBADMSG (layout), -EPROTO (unknown type). */
static int decode(struct record_reader *r, unsigned type, const uint8_t *p, size_t n, struct record *rec)
{
        rec->type = (enum record_type)type;
        switch (type) {
        case RECORD_DATAGRAM:
                if (n <= 16 || n - 16 > HP_UEVENT_MAX_SIZE)
                        return -EBADMSG;
                rec->datagram.realtime = get64(p);
                rec->datagram.monotonic = get64(p + 8);
                rec->datagram.data = p + 16;
                rec->datagram.size = n - 16;
                return 0;
        case RECORD_AGENT_START:
                if (n <= 20)
                        return -EBADMSG;
                rec->agent_start.seqnum = get64(p);
                rec->agent_start.monotonic = get64(p + 8);
                rec->agent_start.pid = get32(p + 16);
                return take_text(r, p + 20, n - 20, &rec->agent_start.program);
        case RECORD_AGENT_END:
                if (n != 28 || get16(p + 20) >= _RECORD_AGENT_STATUS_MAX)
                        return -EBADMSG;
                rec->agent_end.seqnum = get64(p);
                rec->agent_end.monotonic = get64(p + 8);
                rec->agent_end.pid = get32(p + 16);
                rec->agent_end.status = (enum record_agent_status)get16(p + 20);
                rec->agent_end.value = (int32_t)get32(p + 24);
                return 0;
        case RECORD_WAIT:
                if (n <= 24)
                        return -EBADMSG;
                rec->wait.seqnum = get64(p);
                rec->wait.blocker = get64(p + 8);
                rec->wait.monotonic = get64(p + 16);
                return take_text(r, p + 24, n - 24, &rec->wait.reason);
        case RECORD_GAP:
                if (n != 28 || get32(p + 24) >= _RECORD_GAP_CLASS_MAX || get64(p + 8) > get64(p + 16))
                        return -EBADMSG;
                rec->gap.monotonic = get64(p);
                rec->gap.first = get64(p + 8);
                rec->gap.last = get64(p + 16);
                rec->gap.class = (enum record_gap_class)get32(p + 24);
                return 0;
        case RECORD_OVERFLOW:
                if (n != 16)
                        return -EBADMSG;
                rec->overflow.realtime = get64(p);
                rec->overflow.monotonic = get64(p + 8);
                return 0;
        default:
                return -EPROTO;
        }
}

int record_reader_open_fd(int fd, struct record_reader **ret)
{
        _cleanup_free_ struct record_reader *r = NULL;
        struct stat st;
        ssize_t k;
        int hsize;

        if (fstat(fd, &st) < 0) {
                hsize = negative_errno();
                close(fd);
                return hsize;
        }
        /* Read with pread() at any offset: a FIFO or a device cannot be one. */
        if (!S_ISREG(st.st_mode)) {
                close(fd);
                return -EMEDIUMTYPE;
        }
        r = calloc(1, sizeof(*r));
        if (!r) {
                close(fd);
                return -ENOMEM;
        }
        r->fd = fd;
        k = window(r, 0, RECORD_FILE_HEADER_SIZE);
        hsize = k < 0 ? (int)k : k == 0 ? -ENODATA : record_check_header(r->buf, (size_t)k, &r->version);
        if (hsize < 0) {
                safe_close(r->fd);
                return hsize;
        }
        r->pos = (uint64_t)hsize;
        *ret = TAKE_PTR(r);
        return 0;
}

int record_reader_open(const char *path, struct record_reader **ret)
{
        /* O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused above). */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return negative_errno();
        return record_reader_open_fd(fd, ret);
}

/* A damaged region starts at r->pos (reason already set): report it and move past it. */
static int report_damage(struct record_reader *r)
{
        int64_t next = resync(r, r->searching ? r->search_at : r->pos + 1);

        r->searching = next == -EAGAIN;
        if (next == -EAGAIN)
                return RECORD_NEXT_AGAIN;
        if (next < 0)
                return (int)next;
        r->problem.offset = r->pos;
        r->problem.resume = (uint64_t)next;
        r->problem.skipped = (uint64_t)next - r->pos;
        /* Valid frames after it mean damage in the middle; none means a torn end. */
        r->problem.kind = window(r, (uint64_t)next, 1) > 0 ? RECORD_PROBLEM_CORRUPT : RECORD_PROBLEM_TORN_TAIL;
        r->pos = (uint64_t)next;
        r->stats.problems++;
        r->stats.skipped += r->problem.skipped;
        return RECORD_NEXT_PROBLEM;
}

int record_reader_next(struct record_reader *r, struct record *ret)
{
        uint32_t len = 0;
        unsigned type;
        int v;

        if (r->searching)
                return report_damage(r);
        v = check_frame(r, r->pos, &len);
        if (v < 0)
                return v;
        if (v == FRAME_END)
                return 0;
        if (v == FRAME_BAD)
                return report_damage(r);

        type = get16(at(r, r->pos) + 4);
        ret->offset = r->pos;
        v = decode(r, type, at(r, r->pos) + RECORD_FRAME_SIZE, len, ret);
        if (v < 0) {
                r->problem = (struct record_problem){
                        .kind = v == -EPROTO ? RECORD_PROBLEM_UNKNOWN_TYPE : RECORD_PROBLEM_INVALID,
                        .offset = r->pos,
                        .skipped = RECORD_FRAME_SIZE + len,
                        .resume = r->pos + RECORD_FRAME_SIZE + len,
                        .type = type,
                        .reason = v == -EPROTO ? "unknown record type" : "payload does not match the record type",
                };
                r->pos = r->problem.resume;
                r->stats.problems++;
                r->stats.skipped += r->problem.skipped;
                return RECORD_NEXT_PROBLEM;
        }
        assert(len <= HP_RECORD_MAX);
        r->pos += RECORD_FRAME_SIZE + len;
        r->stats.records++;
        return 1;
}

void record_reader_set_step(struct record_reader *r, uint64_t bytes)
{
        r->step = bytes;
}

const struct record_problem *record_reader_problem(const struct record_reader *r)
{
        return &r->problem;
}

char *record_problem_format(const struct record_problem *p, char *buf, size_t size)
{
        char detail[96] = "";

        if (p->want > 0)
                snprintf(detail, sizeof(detail), ": %" PRIu64 " of %" PRIu64 " bytes", p->have, p->want);
        switch (p->kind) {
        case RECORD_PROBLEM_TORN_TAIL:
                snprintf(buf, size,
                         "offset %" PRIu64 ": torn record at end of file (%s%s), %" PRIu64
                         " bytes ignored; the writer probably stopped mid-write",
                         p->offset, p->reason, detail, p->skipped);
                break;
        case RECORD_PROBLEM_CORRUPT:
                snprintf(buf, size,
                         "offset %" PRIu64 ": corrupt record (%s%s), %" PRIu64
                         " bytes skipped, reading resumes at offset %" PRIu64,
                         p->offset, p->reason, detail, p->skipped, p->resume);
                break;
        case RECORD_PROBLEM_INVALID:
                snprintf(buf, size, "offset %" PRIu64 ": invalid %s record (%s), skipped", p->offset,
                         record_type_to_string((enum record_type)p->type), p->reason);
                break;
        case RECORD_PROBLEM_UNKNOWN_TYPE:
                snprintf(buf, size, "offset %" PRIu64 ": record of unknown type %u, skipped", p->offset, p->type);
                break;
        }
        return buf;
}

const struct record_reader_stats *record_reader_stats(const struct record_reader *r)
{
        return &r->stats;
}

unsigned record_reader_version(const struct record_reader *r)
{
        return r->version;
}

struct record_reader *record_reader_free(struct record_reader *r)
{
        if (!r)
                return NULL;
        safe_close(r->fd);
        free(r->rs);
        free(r);
        return NULL;
}
