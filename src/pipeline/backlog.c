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
 *    struct entry_head (37 bytes): SEQNUM, received, received_real, sizes
 *    the datagram without its first line "ACTION@DEVPATH\0" (the body),
 *    stored as follows
 *    the handler additions, "KEY=VALUE\0" back to back
 *    argv[1] with its NUL, only when it is not SUBSYSTEM
 * The first line is rebuilt on the way out: uevent_parse() accepted the
 * datagram only if that line is exactly ACTION= "@" DEVPATH=, so it comes
 * back byte for byte, and the datagram is parsed again from the rebuilt
 * bytes.  Both receive times are kept whole: a replayed event's realtime is
 * the recorded one, not its monotonic time plus any one offset, and the
 * realtime clock may be set while events wait.
 *
 * The body, stored against a key, an earlier entry of the same chunk:
 *  - a last variable "SEQNUM=N" that the head's SEQNUM prints exactly (the
 *    kernel's always does) is left out and printed again on the way out;
 *    what is left is the entry's core;
 *  - of the core, only what lies between the bytes it shares with the
 *    key's core at the start (prefix) and at the end (suffix) is stored.
 *    The key is the chunk's latest one for a DEVPATH of the same hash
 *    (BACKLOG_KEYS of them, by hash: a burst round robin over dozens of
 *    devices has a key for nearly each); an entry that would still store
 *    more than half of its core, or has no such key, is stored whole and
 *    becomes the key of its DEVPATH's slot instead (so a key's stored
 *    bytes are its core).
 *    A key stays readable while any entry of its chunk is held: a chunk is
 *    unmapped or reused only once every entry in it left.  A late entry
 *    has no key.
 * Events of a burst differ from one another mostly in SEQNUM and in
 * SYNTH_UUID's last digits: a kernel net event of about 175 bytes takes
 * about 40 here, 212 when it is a key.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pipeline/backlog.h"
#include "shared/hash.h"
#include "shared/heap.h"
#include "shared/macro.h"
#include "uevent/uevent.h"

#define BACKLOG_CHUNK_SIZE (64 * 1024)
#define BACKLOG_KEYS 256

struct entry_head {
        uint64_t seqnum;
        uint64_t received;
        uint64_t received_real;
        uint16_t stored_size;   /* bytes of the core stored, between prefix and suffix */
        uint16_t key;           /* the key's entry: its offset in the chunk's data, if prefix or suffix */
        uint16_t prefix;        /* the core's first bytes, the key's first */
        uint16_t suffix;        /* the core's last bytes, the key's last */
        uint16_t extra_size;
        uint8_t n_extra;
        uint8_t name_size;      /* argv[1] with its NUL; 0: it is SUBSYSTEM */
        uint8_t flags;          /* ENTRY_SEQNUM_OMITTED */
} __attribute__((packed));

/* The body's last variable is "SEQNUM=" the head's SEQNUM, not stored. */
#define ENTRY_SEQNUM_OMITTED 0x1

_Static_assert(HP_ENV_ADD_MAX_VARS <= UINT8_MAX, "n_extra fits a byte");
_Static_assert(HP_NAME_MAX <= UINT8_MAX, "name_size fits a byte");

struct chunk {
        struct chunk *next;     /* newer */
        uint32_t used;          /* bytes of data[] written */
        char data[];
};

#define CHUNK_DATA (BACKLOG_CHUNK_SIZE - offsetof(struct chunk, data))
_Static_assert(BACKLOG_CHUNK_SIZE <= 64 * 1024, "a new chunk fits the room HP_QUEUE_BYTES_EVENT_MAX leaves");
_Static_assert(CHUNK_DATA <= UINT16_MAX, "an offset in a chunk, and one more, fit 16 bits");
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
        uint16_t keys[BACKLOG_KEYS]; /* the tail chunk's keys by DEVPATH hash: offset in its data + 1, 0: none */
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
        return sizeof(*h) + h->stored_size + h->extra_size + h->name_size;
}

/* An event on its way in: its head (prefix and suffix still 0), its core and its key slot. */
struct incoming {
        struct entry_head h;
        const char *core;
        size_t core_size;
        unsigned slot;
        const struct uevent *ev;
};

/* Is @body's (@size bytes) last variable "SEQNUM=" @seqnum as printed?  Then the core is the rest. */
static bool seqnum_omitted(const char *body, size_t size, uint64_t seqnum, size_t *ret_core_size)
{
        char last[sizeof("SEQNUM=") + 20];
        size_t len = (size_t)snprintf(last, sizeof(last), "SEQNUM=%" PRIu64, seqnum) + 1; /* with its NUL */

        if (size < len || memcmp(body + size - len, last, len) != 0 || (size > len && body[size - len - 1] != '\0'))
                return false;
        *ret_core_size = size - len;
        return true;
}

static struct incoming incoming_of(const struct uevent *ev)
{
        size_t first = strlen(ev->buf) + 1, body_size, core_size;
        bool own_name = ev->name && strcmp(ev->name, ev->subsystem) != 0;
        struct incoming in = { .ev = ev };

        /* What uevent_parse() and uevent_dup() promise: the fields fit their bytes. */
        assert(first <= ev->size && ev->size - first <= UINT16_MAX);
        assert(ev->n_extra <= HP_ENV_ADD_MAX_VARS && ev->extra_size <= HP_ENV_ADD_MAX_BYTES);
        assert(!own_name || strlen(ev->name) < HP_NAME_MAX);
        in.core = ev->buf + first;
        in.slot = (unsigned)(hash_bytes(ev->devpath, ev->devpath_len) % BACKLOG_KEYS);
        body_size = core_size = ev->size - first;
        if (seqnum_omitted(in.core, body_size, ev->seqnum, &core_size))
                in.h.flags = ENTRY_SEQNUM_OMITTED;
        in.core_size = core_size;
        in.h.seqnum = ev->seqnum;
        in.h.received = ev->received;
        in.h.received_real = ev->received_real;
        in.h.stored_size = (uint16_t)core_size;
        in.h.extra_size = ev->extra_size;
        in.h.n_extra = (uint8_t)ev->n_extra;
        in.h.name_size = (uint8_t)(own_name ? strlen(ev->name) + 1 : 0);
        return in;
}

/* The core of the key whose entry starts at @key (a key's stored bytes are its whole core). */
static void key_core(const char *key, const char **ret, size_t *ret_size)
{
        struct entry_head k = head_of(key);

        assert(k.prefix == 0 && k.suffix == 0);
        *ret = key + sizeof(k);
        *ret_size = k.stored_size;
}

/* How many bytes of @in's core are the same as the core of @key at the start (*@ret_prefix) and the end. */
static size_t shared_with(const struct incoming *in, const char *key, size_t *ret_prefix)
{
        const char *k;
        size_t kn, n = in->core_size, p = 0, s = 0;

        key_core(key, &k, &kn);
        while (p < n && p < kn && in->core[p] == k[p])
                p++;
        while (s < n - p && s < kn && in->core[n - 1 - s] == k[kn - 1 - s])
                s++;
        *ret_prefix = p;
        return s;
}

/*
 * Store of @in's core only what it does not share with the key of its
 * slot in the tail chunk @c; or, if there is none or that is more than
 * half of it, all of it, as a key.  Return: whether it is to be a key.
 */
static bool share(const struct backlog *b, const struct chunk *c, struct incoming *in)
{
        unsigned key = b->keys[in->slot];
        size_t p, s;

        if (key == 0)
                return true;
        s = shared_with(in, c->data + key - 1, &p);
        if (in->core_size - (p + s) > in->core_size / 2)
                return true;
        in->h.key = (uint16_t)(key - 1);
        in->h.prefix = (uint16_t)p;
        in->h.suffix = (uint16_t)s;
        in->h.stored_size = (uint16_t)(in->core_size - p - s);
        return false;
}

static void unshare(struct incoming *in)
{
        in->h.key = in->h.prefix = in->h.suffix = 0;
        in->h.stored_size = (uint16_t)in->core_size;
}

static void entry_write(char *dst, const struct incoming *in)
{
        const struct entry_head *h = &in->h;

        memcpy(dst, h, sizeof(*h));
        dst += sizeof(*h);
        memcpy(dst, in->core + h->prefix, h->stored_size);
        dst += h->stored_size;
        if (h->extra_size > 0)
                memcpy(dst, in->ev->extra, h->extra_size);
        dst += h->extra_size;
        if (h->name_size > 0)
                memcpy(dst, in->ev->name, h->name_size);
}

/* The value of "KEY=" among @n bytes of entries at @p (the key is there: the datagram was valid). */
static const char *body_value(const char *p, size_t n, const char *key, size_t klen)
{
        for (const char *end = p + n; p < end; p += strlen(p) + 1)
                if (strncmp(p, key, klen) == 0)
                        return p + klen;
        return NULL;
}

/* The body of @entry, in the chunk whose data starts at @keys (NULL: none), into @body.  Its size, or -EBADMSG. */
static ssize_t body_read(const char *entry, const char *keys, char body[static HP_UEVENT_MAX_SIZE])
{
        struct entry_head h = head_of(entry);
        const char *k = NULL;
        size_t kn = 0, n;

        if (h.prefix > 0 || h.suffix > 0) {
                if (!keys || keys + h.key >= entry)
                        return -EBADMSG;
                key_core(keys + h.key, &k, &kn);
                if (h.prefix > kn || h.suffix > kn)
                        return -EBADMSG;
        }
        if ((size_t)h.prefix + h.stored_size + h.suffix > HP_UEVENT_MAX_SIZE)
                return -EBADMSG;
        if (h.prefix > 0)
                memcpy(body, k, h.prefix);
        memcpy(body + h.prefix, entry + sizeof(h), h.stored_size);
        n = (size_t)h.prefix + h.stored_size;
        if (h.suffix > 0)
                memcpy(body + n, k + kn - h.suffix, h.suffix);
        n += h.suffix;
        if (h.flags & ENTRY_SEQNUM_OMITTED) {
                int r = snprintf(body + n, HP_UEVENT_MAX_SIZE - n, "SEQNUM=%" PRIu64, h.seqnum);

                if (r < 0 || (size_t)r >= HP_UEVENT_MAX_SIZE - n)
                        return -EBADMSG;
                n += (size_t)r + 1;
        }
        return (ssize_t)n;
}

/* Rebuild the event of @entry (in the chunk whose data starts at @keys, NULL: none) in @slot, as uevent_dup() made it. */
static int entry_read(const char *entry, const char *keys, struct backlog_slot *slot, struct uevent *ret)
{
        struct entry_head h = head_of(entry);
        char body[HP_UEVENT_MAX_SIZE];
        const char *action, *devpath;
        ssize_t body_size = body_read(entry, keys, body);
        size_t first, size;
        char *p = slot->data;

        if (body_size < 0)
                return (int)body_size;
        action = body_value(body, (size_t)body_size, "ACTION=", strlen("ACTION="));
        devpath = body_value(body, (size_t)body_size, "DEVPATH=", strlen("DEVPATH="));
        if (!action || !devpath)
                return -EBADMSG;
        first = strlen(action) + 1 + strlen(devpath) + 1;
        size = first + (size_t)body_size;
        if (size > HP_UEVENT_MAX_SIZE)
                return -EBADMSG;
        p = stpcpy(p, action);
        *p++ = '@';
        p = stpcpy(p, devpath) + 1;
        memcpy(p, body, (size_t)body_size);
        p += body_size;
        if (uevent_parse(slot->data, size, slot->vars, ret, NULL) < 0)
                return -EBADMSG;

        ret->received = h.received;
        ret->received_real = h.received_real;
        memcpy(p, entry + sizeof(h) + h.stored_size, h.extra_size + h.name_size);
        ret->extra = p;
        ret->n_extra = h.n_extra;
        ret->extra_size = h.extra_size;
        ret->name = h.name_size > 0 ? p + h.extra_size : ret->subsystem;
        return 0;
}

/* ---- the late heap ------------------------------------------------------- */

static int late_push(struct backlog *b, struct incoming *in)
{
        size_t size;
        char *entry;

        unshare(in); /* no key */
        size = entry_size(&in->h);
        entry = malloc(size);
        if (!entry)
                return -ENOMEM;
        entry_write(entry, in);
        if (heap_push(&b->late, in->h.seqnum, entry) < 0) {
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

static int arena_push(struct backlog *b, struct incoming *in)
{
        bool key = true;
        size_t size;

        /* The arena is in strictly increasing SEQNUM order. */
        assert(b->n_arena == 0 || in->h.seqnum > b->newest);
        /* Against the tail chunk's keys if it fits there; else it is the next chunk's first key. */
        if (b->tail && !share(b, b->tail, in))
                key = b->tail->used + entry_size(&in->h) > CHUNK_DATA;
        if (key)
                unshare(in);
        size = entry_size(&in->h);
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
                memset(b->keys, 0, sizeof(b->keys));
        }
        if (key)
                b->keys[in->slot] = (uint16_t)(b->tail->used + 1);
        entry_write(b->tail->data + b->tail->used, in);
        b->tail->used += (uint32_t)size;
        assert(b->tail->used <= CHUNK_DATA);
        b->newest = in->h.seqnum;
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
                /* Empty: keep the chunk for what comes next, with no key. */
                c->used = 0;
                b->head_off = 0;
                memset(b->keys, 0, sizeof(b->keys));
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
        struct incoming in = incoming_of(ev);

        /* A SEQNUM is pushed at most once, so a late one is below the arena's newest. */
        assert(b->n_arena == 0 || ev->seqnum != b->newest);
        if (b->n_arena > 0 && ev->seqnum <= b->newest)
                return late_push(b, &in);
        return arena_push(b, &in);
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
        /* An arena entry's key is in its own chunk, the head chunk. */
        return entry_read(e, late ? NULL : b->head->data, slot, ret);
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
