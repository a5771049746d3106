/* SPDX-License-Identifier: MIT */
/*
 * The backlog (see backlog.h): queued events as bytes, lowest SEQNUM out first.
 *
 * Storage, and why there is no index:
 *  - the arena: entries back to back in chunks of BACKLOG_CHUNK_SIZE bytes,
 *    mapped and unmapped whole (so a drained chunk goes back to the kernel
 *    at once, never a hole in the heap), in strictly increasing SEQNUM
 *    order, the oldest chunk first.  An entry never spans two chunks; the
 *    tail of a chunk too short for the next entry stays unused.  Events
 *    nearly always come in SEQNUM order, so the arena alone is a FIFO that
 *    needs no index records: its head is its lowest SEQNUM.
 *  - the late heap: an event whose SEQNUM is not above the arena's newest
 *    one (a late datagram, a resync's synthesised event: rare) is encoded
 *    the same way into an allocation of its own, kept in the shared
 *    min-heap (shared/heap.h) by SEQNUM.  The lowest event is the lower of the arena's head and the
 *    heap's top.
 * When the arena empties, its last chunk is kept for what comes next (a
 * backlog that fills and drains by one does not map and unmap each time).
 *
 * An entry, byte-aligned (read and written with memcpy):
 *    struct entry_head (30 bytes): SEQNUM, received, received_real, sizes
 *    the datagram without its first line "ACTION@DEVPATH\0"
 *    the handler additions, "KEY=VALUE\0" back to back
 *    argv[1] with its NUL, only when it is not SUBSYSTEM
 * The first line is rebuilt on the way out: uevent_parse() accepted the
 * datagram only if that line is exactly ACTION= "@" DEVPATH=, so it comes
 * back byte for byte, and the datagram is parsed again from the rebuilt
 * bytes.  Both receive times are kept whole: a replayed event's realtime is
 * the recorded one, not its monotonic time plus any one offset, and the
 * realtime clock may be set while events wait.  A kernel net event of about
 * 175 bytes takes about 175 bytes here.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pipeline/backlog.h"
#include "shared/heap.h"
#include "shared/macro.h"
#include "uevent/uevent.h"

#define BACKLOG_CHUNK_SIZE (64 * 1024)

struct entry_head {
        uint64_t seqnum;
        uint64_t received;
        uint64_t received_real;
        uint16_t body_size;     /* the datagram less its first line */
        uint16_t extra_size;
        uint8_t n_extra;
        uint8_t name_size;      /* argv[1] with its NUL; 0: it is SUBSYSTEM */
} __attribute__((packed));

_Static_assert(HP_ENV_ADD_MAX_VARS <= UINT8_MAX, "n_extra fits a byte");
_Static_assert(HP_NAME_MAX <= UINT8_MAX, "name_size fits a byte");

struct chunk {
        struct chunk *next;     /* newer */
        uint32_t used;          /* bytes of data[] written */
        char data[];
};

#define CHUNK_DATA (BACKLOG_CHUNK_SIZE - offsetof(struct chunk, data))
_Static_assert(sizeof(struct entry_head) + HP_UEVENT_MAX_SIZE + HP_ENV_ADD_MAX_BYTES + HP_NAME_MAX <= CHUNK_DATA,
               "the largest entry fits a chunk");

struct backlog {
        struct chunk *head, *tail;
        uint32_t head_off;      /* the arena's first entry in head->data */
        size_t n_arena;
        size_t n_chunks;
        uint64_t newest;        /* SEQNUM of the arena's last entry, if n_arena > 0 */
        struct heap late;       /* late entries (malloc'd, owned) by SEQNUM */
        size_t late_bytes;      /* allocated for the late entries themselves */
};

int backlog_new(struct backlog **ret)
{
        struct backlog *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        heap_init(&b->late, HEAP_NO_INDEX);
        *ret = b;
        return 0;
}

struct backlog *backlog_free(struct backlog *b)
{
        struct chunk *c;
        char *e;

        if (!b)
                return NULL;
        while ((c = b->head)) {
                b->head = c->next;
                munmap(c, BACKLOG_CHUNK_SIZE);
        }
        while ((e = heap_pop(&b->late)))
                free(e);
        heap_clear(&b->late);
        free(b);
        return NULL;
}

/* ---- entries ------------------------------------------------------------- */

static struct entry_head head_of(const char *entry)
{
        struct entry_head h;

        memcpy(&h, entry, sizeof(h));
        return h;
}

static size_t entry_size(const struct entry_head *h)
{
        return sizeof(*h) + h->body_size + h->extra_size + h->name_size;
}

/* The head @ev's entry gets, and where its datagram's body starts. */
static struct entry_head head_for(const struct uevent *ev, const char **ret_body)
{
        size_t first = strlen(ev->buf) + 1;
        bool own_name = ev->name && strcmp(ev->name, ev->subsystem) != 0;

        /* What uevent_parse() and uevent_dup() promise: the fields fit their bytes. */
        assert(first <= ev->size && ev->size - first <= UINT16_MAX);
        assert(ev->n_extra <= HP_ENV_ADD_MAX_VARS && ev->extra_size <= HP_ENV_ADD_MAX_BYTES);
        assert(!own_name || strlen(ev->name) < HP_NAME_MAX);
        *ret_body = ev->buf + first;
        return (struct entry_head){
                .seqnum = ev->seqnum,
                .received = ev->received,
                .received_real = ev->received_real,
                .body_size = (uint16_t)(ev->size - first),
                .extra_size = ev->extra_size,
                .n_extra = (uint8_t)ev->n_extra,
                .name_size = (uint8_t)(own_name ? strlen(ev->name) + 1 : 0),
        };
}

static void entry_write(char *dst, const struct entry_head *h, const char *body, const struct uevent *ev)
{
        memcpy(dst, h, sizeof(*h));
        dst += sizeof(*h);
        memcpy(dst, body, h->body_size);
        dst += h->body_size;
        if (h->extra_size > 0)
                memcpy(dst, ev->extra, h->extra_size);
        dst += h->extra_size;
        if (h->name_size > 0)
                memcpy(dst, ev->name, h->name_size);
}

/* The value of "KEY=" among @n bytes of entries at @p (the key is there: the datagram was valid). */
static const char *body_value(const char *p, size_t n, const char *key, size_t klen)
{
        for (const char *end = p + n; p < end; p += strlen(p) + 1)
                if (strncmp(p, key, klen) == 0)
                        return p + klen;
        return NULL;
}

/* Rebuild the event of @entry in @slot, as uevent_dup() made it. */
static int entry_read(const char *entry, struct backlog_slot *slot, struct uevent *ret)
{
        struct entry_head h = head_of(entry);
        const char *body = entry + sizeof(h), *action, *devpath;
        size_t first, size;
        char *p = slot->data;

        action = body_value(body, h.body_size, "ACTION=", strlen("ACTION="));
        devpath = body_value(body, h.body_size, "DEVPATH=", strlen("DEVPATH="));
        if (!action || !devpath)
                return -EBADMSG;
        first = strlen(action) + 1 + strlen(devpath) + 1;
        size = first + h.body_size;
        if (size > HP_UEVENT_MAX_SIZE)
                return -EBADMSG;
        p = stpcpy(p, action);
        *p++ = '@';
        p = stpcpy(p, devpath) + 1;
        memcpy(p, body, h.body_size);
        p += h.body_size;
        if (uevent_parse(slot->data, size, slot->vars, ret, NULL) < 0)
                return -EBADMSG;

        ret->received = h.received;
        ret->received_real = h.received_real;
        memcpy(p, body + h.body_size, h.extra_size + h.name_size);
        ret->extra = p;
        ret->n_extra = h.n_extra;
        ret->extra_size = h.extra_size;
        ret->name = h.name_size > 0 ? p + h.extra_size : ret->subsystem;
        return 0;
}

/* ---- the late heap ------------------------------------------------------- */

static int late_push(struct backlog *b, const struct entry_head *h, const char *body, const struct uevent *ev)
{
        size_t size = entry_size(h);
        char *entry = malloc(size);

        if (!entry)
                return -ENOMEM;
        entry_write(entry, h, body, ev);
        if (heap_push(&b->late, h->seqnum, entry) < 0) {
                free(entry);
                return -ENOMEM;
        }
        b->late_bytes += size;
        return 0;
}

static void late_drop_top(struct backlog *b)
{
        char *entry = heap_pop(&b->late);
        struct entry_head h = head_of(entry);

        assert(b->late_bytes >= entry_size(&h));
        b->late_bytes -= entry_size(&h);
        free(entry);
        /* Late events are rare: give the heap back too. */
        if (heap_count(&b->late) == 0)
                heap_clear(&b->late);
}

/* ---- the arena ----------------------------------------------------------- */

static int arena_push(struct backlog *b, const struct entry_head *h, const char *body, const struct uevent *ev)
{
        size_t size = entry_size(h);

        /* The arena is in strictly increasing SEQNUM order, and an entry fits a chunk. */
        assert(b->n_arena == 0 || h->seqnum > b->newest);
        assert(size <= CHUNK_DATA);
        if (!b->tail || b->tail->used + size > CHUNK_DATA) {
                struct chunk *c = mmap(NULL, BACKLOG_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                                       -1, 0);

                if (c == MAP_FAILED)
                        return -ENOMEM;
                c->next = NULL;
                c->used = 0;
                if (b->tail)
                        b->tail->next = c;
                else
                        b->head = c;
                b->tail = c;
                b->n_chunks++;
        }
        entry_write(b->tail->data + b->tail->used, h, body, ev);
        b->tail->used += (uint32_t)size;
        assert(b->tail->used <= CHUNK_DATA);
        b->newest = h->seqnum;
        b->n_arena++;
        return 0;
}

static const char *arena_first(const struct backlog *b)
{
        return b->n_arena > 0 ? b->head->data + b->head_off : NULL;
}

static void arena_drop_first(struct backlog *b)
{
        struct entry_head h = head_of(arena_first(b));
        struct chunk *c = b->head;

        assert(b->n_arena > 0 && b->head_off + entry_size(&h) <= c->used);
        b->head_off += (uint32_t)entry_size(&h);
        b->n_arena--;
        if (b->head_off < c->used)
                return;
        if (c == b->tail) {
                /* Empty: keep the chunk for what comes next. */
                c->used = 0;
                b->head_off = 0;
                return;
        }
        b->head = c->next;
        b->head_off = 0;
        munmap(c, BACKLOG_CHUNK_SIZE);
        b->n_chunks--;
}

/* ---- the interface ------------------------------------------------------- */

int backlog_push(struct backlog *b, const struct uevent *ev)
{
        const char *body;
        struct entry_head h = head_for(ev, &body);

        /* A SEQNUM is pushed at most once, so a late one is below the arena's newest. */
        assert(b->n_arena == 0 || ev->seqnum != b->newest);
        if (b->n_arena > 0 && ev->seqnum <= b->newest)
                return late_push(b, &h, body, ev);
        return arena_push(b, &h, body, ev);
}

/* The entry with the lowest SEQNUM, and whether it is the late heap's top; NULL if empty. */
static const char *first(const struct backlog *b, bool *ret_late)
{
        const char *a = arena_first(b);

        *ret_late = heap_count(&b->late) > 0 && (!a || heap_top_key(&b->late) < head_of(a).seqnum);
        return *ret_late ? heap_top(&b->late) : a;
}

int backlog_peek(const struct backlog *b, struct backlog_slot *slot, struct uevent *ret)
{
        bool late;
        const char *e = first(b, &late);

        if (!e)
                return -ENOENT;
        return entry_read(e, slot, ret);
}

void backlog_drop_first(struct backlog *b)
{
        bool late;

        if (!first(b, &late))
                return;
        if (late)
                late_drop_top(b);
        else
                arena_drop_first(b);
}

int backlog_pop(struct backlog *b, struct uevent **ret)
{
        struct backlog_slot slot;
        struct uevent view;
        int r;

        r = backlog_peek(b, &slot, &view);
        if (r < 0)
                return r;
        r = uevent_clone(&view, ret);
        if (r < 0)
                return r;
        backlog_drop_first(b);
        return 0;
}

uint64_t backlog_lowest(const struct backlog *b)
{
        bool late;
        const char *e = first(b, &late);

        return e ? head_of(e).seqnum : 0;
}

size_t backlog_count(const struct backlog *b)
{
        return b->n_arena + heap_count(&b->late);
}

size_t backlog_bytes(const struct backlog *b)
{
        return b->n_chunks * BACKLOG_CHUNK_SIZE + b->late_bytes + b->late.cap * sizeof(struct heap_slot);
}
