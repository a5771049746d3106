/* SPDX-License-Identifier: MIT */
/*
 * The backlog (pipeline/backlog.h): events come out lowest SEQNUM first,
 * late ones included; each comes out exactly as uevent_dup() made it
 * (datagram, times, handler additions, argv[1]); storage is given back as
 * the backlog drains; and a large backlog with late events mixed in keeps
 * its order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/backlog.h"
#include "shared/envbuf.h"
#include "shared/macro.h"
#include "test.h"
#include "uevent/uevent.h"

/* A datagram and its parsed view, with room for both. */
struct tdg {
        char buf[HP_UEVENT_MAX_SIZE];
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view;
};

/* Parse "KEY=VALUE" entries (NUL-separated in @body, @body_len bytes) behind the header ACTION@DEVPATH. */
static void tdg_parse(struct tdg *t, const char *action, const char *devpath, const char *body, size_t body_len)
{
        int n = snprintf(t->buf, sizeof(t->buf), "%s@%s", action, devpath);

        check(n > 0 && (size_t)n + 1 + body_len <= sizeof(t->buf));
        memcpy(t->buf + n + 1, body, body_len);
        check_int(uevent_parse(t->buf, (size_t)n + 1 + body_len, t->vars, &t->view, NULL), 0);
}

/* A net "change" like the kernel's, on @dev, as a view. */
static void tdg_net(struct tdg *t, uint64_t seq, const char *dev)
{
        char body[512], devpath[128];
        int n;

        snprintf(devpath, sizeof(devpath), "/devices/virtual/net/%s", dev);
        n = snprintf(body, sizeof(body),
                     "ACTION=change%cDEVPATH=%s%cSUBSYSTEM=net%cSYNTH_UUID=0b2c5d0e-8c49-4f1e-9a57-%012llx%c"
                     "INTERFACE=%s%cIFINDEX=1%cSEQNUM=%llu%c",
                     0, devpath, 0, 0, (unsigned long long)seq, 0, dev, 0, 0, (unsigned long long)seq, 0);
        check(n > 0 && (size_t)n < sizeof(body));
        tdg_parse(t, "change", devpath, body, (size_t)n);
        t->view.received = 1000 + seq;
        t->view.received_real = 1700000000000000ULL + 3 * seq;
}

static void push_net_on(struct backlog *b, uint64_t seq, const char *dev)
{
        struct tdg t;

        tdg_net(&t, seq, dev);
        check_int(backlog_push(b, &t.view), 0);
}

static void push_net(struct backlog *b, uint64_t seq)
{
        push_net_on(b, seq, "lo");
}

static uint64_t pop_seq(struct backlog *b)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;

        check_int(backlog_pop(b, &ev), 0);
        return ev->seqnum;
}

/* Two events are the same: every byte and every field uevent_dup() sets. */
static void check_same(const struct uevent *a, const struct uevent *b)
{
        check(a->seqnum == b->seqnum);
        check(a->received == b->received);
        check(a->received_real == b->received_real);
        check_int(a->size, b->size);
        check(memcmp(a->buf, b->buf, a->size) == 0);
        check_int(a->n_vars, b->n_vars);
        check(memcmp(a->var, b->var, a->n_vars * sizeof(a->var[0])) == 0);
        check_str(a->action, b->action);
        check_str(a->devpath, b->devpath);
        check_int(a->devpath_len, b->devpath_len);
        check_str(a->subsystem, b->subsystem);
        check(!a->devpath_old == !b->devpath_old);
        if (a->devpath_old)
                check_str(a->devpath_old, b->devpath_old);
        check(a->action >= a->buf && a->action < a->buf + a->size);
        check(a->devpath >= a->buf && a->devpath < a->buf + a->size);
        check(a->subsystem >= a->buf && a->subsystem < a->buf + a->size);
        check_int(a->n_extra, b->n_extra);
        check_int(a->extra_size, b->extra_size);
        check(memcmp(a->extra, b->extra, a->extra_size) == 0);
        check_str(a->name, b->name);
        check(a->sched_data == NULL && a->owner_data == NULL);
}

static void test_empty(void)
{
        _cleanup_(uevent_freep) struct uevent *ev = NULL;
        struct backlog_slot slot;
        struct uevent view;
        struct backlog *b;

        check_int(backlog_new(&b), 0);
        check_int(backlog_count(b), 0);
        check(backlog_lowest(b) == 0);
        check_int(backlog_pop(b, &ev), -ENOENT);
        check(ev == NULL);
        check_int(backlog_peek(b, &slot, &view), -ENOENT);
        backlog_drop_first(b);
        check_int(backlog_count(b), 0);
        check(backlog_free(b) == NULL);
        check(backlog_free(NULL) == NULL);
}

static void test_order(void)
{
        struct backlog *b;

        check_int(backlog_new(&b), 0);
        for (uint64_t s = 100; s < 110; s++)
                push_net(b, s);
        check_int(backlog_count(b), 10);
        check(backlog_lowest(b) == 100);
        for (uint64_t s = 100; s < 105; s++)
                check(pop_seq(b) == s);
        /* Pushing goes on behind what is left. */
        push_net(b, 110);
        check(backlog_lowest(b) == 105);
        for (uint64_t s = 105; s <= 110; s++)
                check(pop_seq(b) == s);
        check_int(backlog_count(b), 0);
        check(backlog_lowest(b) == 0);
        backlog_free(b);
}

static void test_late(void)
{
        static const uint64_t in[] = { 10, 20, 30, 15, 5, 25, 40, 35, 1 };
        static const uint64_t out[] = { 1, 5, 10, 15, 20 };
        struct backlog_slot slot;
        struct uevent view;
        struct backlog *b;

        check_int(backlog_new(&b), 0);
        for (size_t i = 0; i < ELEMENTSOF(in); i++)
                push_net(b, in[i]);
        check_int(backlog_count(b), ELEMENTSOF(in));
        check(backlog_lowest(b) == 1);
        for (size_t i = 0; i < ELEMENTSOF(out); i++) {
                check(backlog_lowest(b) == out[i]);
                check_int(backlog_peek(b, &slot, &view), 0);
                check(view.seqnum == out[i]);
                check(pop_seq(b) == out[i]);
        }
        /* Late again, below and between what is left (25 30 35 40). */
        push_net(b, 22);
        push_net(b, 33);
        check(backlog_lowest(b) == 22);
        check_int(backlog_peek(b, &slot, &view), 0);
        check(view.seqnum == 22);
        backlog_drop_first(b);
        check(pop_seq(b) == 25);
        check(pop_seq(b) == 30);
        check(pop_seq(b) == 33);
        /* Only the in-order part left, then only late ones. */
        check(pop_seq(b) == 35);
        push_net(b, 36);
        check(pop_seq(b) == 36);
        check(pop_seq(b) == 40);
        check_int(backlog_count(b), 0);
        push_net(b, 50);
        push_net(b, 45);
        push_net(b, 60);
        check(pop_seq(b) == 45);
        check(pop_seq(b) == 50);
        check(pop_seq(b) == 60);
        check_int(backlog_count(b), 0);
        backlog_free(b);
}

/* An event with handler additions, another argv[1], DEVPATH_OLD and an '@' in DEVPATH. */
static void test_round_trip(void)
{
        static const char body[] = "ACTION=move\0DEVPATH=/devices/virtual/net/a@b\0SUBSYSTEM=net\0"
                                   "DEVPATH_OLD=/devices/virtual/net/old\0INTERFACE=a@b\0HOME=/x\0"
                                   "SEQNUM=77\0";
        _cleanup_(uevent_freep) struct uevent *d = NULL, *out = NULL;
        struct backlog_slot slot;
        struct envbuf extra;
        struct uevent view;
        struct backlog *b;
        struct tdg t;

        tdg_parse(&t, "move", "/devices/virtual/net/a@b", body, sizeof(body) - 1);
        t.view.received = 123456789;
        t.view.received_real = 1699999999999999ULL;
        envbuf_init(&extra);
        check_int(envbuf_add(&extra, "PHYSDEVPATH", "/devices/pci0000:00"), 0);
        check_int(envbuf_add(&extra, "DEVNAME", "a\nb"), 0);
        check_int(uevent_dup(&t.view, &extra, "netdev", &d), 0);

        check_int(backlog_new(&b), 0);
        check_int(backlog_push(b, d), 0);
        check_int(backlog_peek(b, &slot, &view), 0);
        check_same(&view, d);
        check_int(backlog_pop(b, &out), 0);
        check_same(out, d);
        check_str(uevent_get_extra(out, "DEVNAME"), "a\nb");
        check_str(uevent_get(out, "HOME"), "/x");

        /* A view: no additions, argv[1] is SUBSYSTEM, as uevent_dup() without them. */
        free(d);
        free(out);
        out = NULL;
        check_int(uevent_dup(&t.view, NULL, NULL, &d), 0);
        check_int(backlog_push(b, &t.view), 0);
        check_int(backlog_pop(b, &out), 0);
        check_same(out, d);
        check_str(out->name, "net");
        check_int(out->n_extra, 0);
        backlog_free(b);
}

/* The largest datagram, the most additions and the longest argv[1] fit. */
static void test_round_trip_largest(void)
{
        _cleanup_(uevent_freep) struct uevent *d = NULL, *out = NULL;
        char body[HP_UEVENT_MAX_SIZE], name[HP_NAME_MAX];
        const char *devpath = "/devices/x";
        struct envbuf extra;
        struct backlog *b;
        struct tdg t;
        size_t o = 0, fill;

        o += (size_t)snprintf(body + o, sizeof(body) - o, "ACTION=add%cDEVPATH=%s%cSUBSYSTEM=s%cSEQNUM=9%cBIG=",
                              0, devpath, 0, 0, 0);
        /* Header "add@/devices/x\0" + body == HP_UEVENT_MAX_SIZE. */
        fill = HP_UEVENT_MAX_SIZE - (strlen("add@") + strlen(devpath) + 1) - o - 1;
        memset(body + o, 'v', fill);
        o += fill;
        body[o++] = '\0';
        tdg_parse(&t, "add", devpath, body, o);
        check_int(t.view.size, HP_UEVENT_MAX_SIZE);

        envbuf_init(&extra);
        for (unsigned i = 0; i < HP_ENV_ADD_MAX_VARS; i++) {
                char key[16];

                snprintf(key, sizeof(key), "K%u", i);
                check_int(envbuf_add(&extra, key, "value"), 0);
        }
        /* K31 again, with the value that fills the bytes exactly. */
        fill = HP_ENV_ADD_MAX_BYTES - (extra.used - sizeof("K31=value")) - sizeof("K31=");
        memset(body, 'w', fill);
        body[fill] = '\0';
        check_int(envbuf_add(&extra, "K31", body), 0);
        check_int(extra.used, HP_ENV_ADD_MAX_BYTES);
        memset(name, 'n', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        check_int(uevent_dup(&t.view, &extra, name, &d), 0);

        check_int(backlog_new(&b), 0);
        check_int(backlog_push(b, d), 0);
        check_int(backlog_pop(b, &out), 0);
        check_same(out, d);
        backlog_free(b);
}

/* Storage is given back as the backlog drains, and taken again. */
static void test_bytes(void)
{
        size_t n = 20000, full, half;
        struct backlog *b;

        check_int(backlog_new(&b), 0);
        check_int(backlog_bytes(b), 0);
        for (uint64_t s = 1; s <= n; s++)
                push_net(b, s);
        full = backlog_bytes(b);
        /* Events of one device that differ in SEQNUM and SYNTH_UUID's last
         * digits: each stores little more than its head and those digits. */
        check(full <= n * 48);
        for (uint64_t s = 1; s <= n / 2; s++)
                check(pop_seq(b) == s);
        half = backlog_bytes(b);
        check(half <= full / 2 + 64 * 1024);
        /* A late event costs its own allocation until it leaves. */
        push_net(b, 1);
        check(backlog_bytes(b) > half);
        check(pop_seq(b) == 1);
        check(backlog_bytes(b) <= half);
        for (uint64_t s = n / 2 + 1; s <= n; s++)
                check(pop_seq(b) == s);
        check(backlog_bytes(b) <= 64 * 1024);
        for (uint64_t s = n + 1; s <= 2 * n; s++)
                push_net(b, s);
        check(backlog_bytes(b) <= full + 64 * 1024);
        backlog_free(b);

        /* Round robin over four devices, and over sixteen: as little, each against a key of its own device. */
        for (unsigned devs = 4; devs <= 16; devs *= 4) {
                check_int(backlog_new(&b), 0);
                for (uint64_t s = 1; s <= n; s++) {
                        char dev[16];

                        snprintf(dev, sizeof(dev), "veth%u", (unsigned)(s % devs));
                        push_net_on(b, s, dev);
                }
                check(backlog_bytes(b) <= n * 48);
                for (uint64_t s = 1; s <= n; s++)
                        check(pop_seq(b) == s);
                backlog_free(b);
        }
}

/* The reference: a plain binary min-heap of SEQNUMs. */
struct ref {
        uint64_t *v;
        size_t n;
};

static void ref_push(struct ref *r, uint64_t s)
{
        size_t i = r->n++;

        for (; i > 0 && r->v[(i - 1) / 2] > s; i = (i - 1) / 2)
                r->v[i] = r->v[(i - 1) / 2];
        r->v[i] = s;
}

static uint64_t ref_pop(struct ref *r)
{
        uint64_t top = r->v[0], x = r->v[--r->n];
        size_t i = 0;

        for (;;) {
                size_t c = 2 * i + 1;
                if (c >= r->n)
                        break;
                if (c + 1 < r->n && r->v[c + 1] < r->v[c])
                        c++;
                if (r->v[c] >= x)
                        break;
                r->v[i] = r->v[c];
                i = c;
        }
        if (r->n > 0)
                r->v[i] = x;
        return top;
}

/* Many events, with late ones among them and pops in between: each pop
 * gives the lowest SEQNUM held, as the reference says; what is left when
 * the backlog is freed is not leaked. */
static void test_large(void)
{
        const size_t n = 300000;
        struct ref ref = { .v = calloc(n, sizeof(uint64_t)) };
        unsigned rnd = 1;
        struct backlog *b;

        check(ref.v);
        check_int(backlog_new(&b), 0);
        for (uint64_t i = 1; i <= n; i++) {
                /* Every 1000th is late: 1 to 500 places below the newest (all distinct). */
                uint64_t s = i * 1000000;

                rnd = rnd * 1103515245u + 12345u;
                if (i % 1000 == 0)
                        s -= (1 + (rnd >> 16) % 500) * 1000000 + 1;
                push_net(b, s);
                ref_push(&ref, s);
                check(backlog_lowest(b) == ref.v[0]);
                if (i % 7 == 0)
                        check(pop_seq(b) == ref_pop(&ref));
        }
        check_int(backlog_count(b), ref.n);
        while (backlog_count(b) > n / 4)
                check(pop_seq(b) == ref_pop(&ref));
        check(backlog_free(b) == NULL);
        free(ref.v);
}

/* Events with nothing in common with one another (each its own device and
 * variables): still compact, about their datagram's size. */
static void test_bytes_unlike(void)
{
        size_t n = 20000, full;
        struct backlog *b;

        check_int(backlog_new(&b), 0);
        for (uint64_t s = 1; s <= n; s++) {
                char body[256], devpath[64];
                struct tdg t;
                int len;

                snprintf(devpath, sizeof(devpath), "/devices/%llx", (unsigned long long)(s * 2654435761u));
                len = snprintf(body, sizeof(body), "ACTION=add%cDEVPATH=%s%cSUBSYSTEM=%llx%cV%llX=%0120llu%c"
                               "SEQNUM=%llu%c", 0, devpath, 0, (unsigned long long)s, 0, (unsigned long long)s,
                               (unsigned long long)s * 7919, 0, (unsigned long long)s, 0);
                tdg_parse(&t, "add", devpath, body, (size_t)len);
                check(t.view.size >= 150);
                check_int(backlog_push(b, &t.view), 0);
        }
        full = backlog_bytes(b);
        check(full >= n * 150 && full <= n * 250);
        for (uint64_t s = 1; s <= n; s++)
                check(pop_seq(b) == s);
        backlog_free(b);
}

/*
 * What is stored against a key comes back byte for byte, whatever the
 * events share: the same device and another, a core that is the key's
 * start or end or the key itself or longer, SEQNUM not last, more
 * devices than a chunk holds keys, across chunks, late ones (no key)
 * among them, and a chunk that emptied and took new keys.
 */
/* Add "KEY=VALUE" to @e, the value printed from @fmt. */
#define add_var(e, key, ...) check_int(envbuf_addf(e, key, __VA_ARGS__), 0)

/* The body of shape @k on net device @dev with SEQNUM @seq, into @e. */
static void shape_body(unsigned k, unsigned dev, uint64_t seq, struct envbuf *e)
{
        unsigned long long q = (unsigned long long)seq;

        envbuf_init(e);
        add_var(e, "ACTION", "%s", k == 5 ? "add" : k == 6 ? "remove" : "change");
        if (k == 5)
                add_var(e, "DEVPATH", "/devices/virtual/mem/null");
        else
                add_var(e, "DEVPATH", "/devices/virtual/net/d%u", dev);
        add_var(e, "SUBSYSTEM", "%s", k == 5 ? "mem" : "net");
        switch (k) {
        case 0: /* a burst's: SYNTH_UUID differs in its last digits */
                add_var(e, "SYNTH_UUID", "0b2c5d0e-%llu", q);
                add_var(e, "INTERFACE", "lo");
                add_var(e, "IFINDEX", "1");
                break;
        case 2: /* SEQNUM not last */
                add_var(e, "SEQNUM", "%llu", q);
                add_var(e, "X", "%llu", q);
                return;
        case 3: /* longer than the others, the same start and end as 4 */
                add_var(e, "PAD", "%0200llu", q);
                add_var(e, "INTERFACE", "lo");
                add_var(e, "IFINDEX", "1");
                break;
        case 4:
                add_var(e, "INTERFACE", "lo");
                add_var(e, "IFINDEX", "1");
                break;
        case 5:
                add_var(e, "MAJOR", "1");
                add_var(e, "MINOR", "3");
                add_var(e, "DEVNAME", "null");
                break;
        default: /* 1, 6: the shortest */
                break;
        }
        add_var(e, "SEQNUM", "%llu", q);
}

/* Push an event of shape @k on @dev with SEQNUM @seq and argv[1] @name (NULL: SUBSYSTEM); keep a copy in *@ret. */
static void push_shape(struct backlog *b, unsigned k, unsigned dev, uint64_t seq, const char *name,
                       struct uevent **ret)
{
        struct envbuf body;
        struct tdg t;

        shape_body(k, dev, seq, &body);
        tdg_parse(&t, envbuf_get(&body, "ACTION"), envbuf_get(&body, "DEVPATH"), body.data, body.used);
        t.view.received = seq;
        t.view.received_real = 1700000000000000ULL + seq;
        check_int(uevent_dup(&t.view, NULL, name, ret), 0);
        check_int(backlog_push(b, *ret), 0);
}

/* Pop one event and check it against the one of @want (N + 1 slots) with its SEQNUM; forget that one. */
static void pop_check(struct backlog *b, struct uevent **want, size_t n)
{
        _cleanup_(uevent_freep) struct uevent *out = NULL;
        size_t i;

        check_int(backlog_pop(b, &out), 0);
        for (i = 1; i <= n && (!want[i] || want[i]->seqnum != out->seqnum); i++)
                ;
        check(i <= n);
        check_same(out, want[i]);
        free(want[i]);
        want[i] = NULL;
}

/*
 * What is stored against a key comes back byte for byte, whatever the
 * events share: the same device and another, a core that is the key's
 * start or end or the key itself or longer, SEQNUM not last, more
 * devices than a chunk holds keys, across chunks, late ones (no key)
 * among them, and a chunk that emptied and took new keys.
 */
static void test_round_trip_shared(void)
{
        enum { N = 3000, SHAPES = 7 };
        struct uevent **want = calloc(N + 1, sizeof(*want));
        unsigned rnd = 7;
        struct backlog *b;

        check(want);
        /* Each shape against each other as its key. */
        for (unsigned key = 0; key < SHAPES; key++)
                for (unsigned k = 0; k < SHAPES; k++) {
                        check_int(backlog_new(&b), 0);
                        push_shape(b, key, 0, 10, NULL, &want[1]);
                        push_shape(b, k, 0, 20, NULL, &want[2]);
                        push_shape(b, k, 0, 30, NULL, &want[3]);
                        for (int i = 0; i < 3; i++)
                                pop_check(b, want, 3);
                        backlog_free(b);
                }

        check_int(backlog_new(&b), 0);
        for (uint64_t s = 1; s <= N; s++) {
                /* Every 50th comes late, below the newest (unique: odd, between the evens). */
                uint64_t seq = s % 50 == 0 ? 2 * (s - 10) + 1 : 2 * s;

                rnd = rnd * 1103515245u + 12345u;
                /* More devices than a chunk holds keys for. */
                push_shape(b, (rnd >> 16) % SHAPES, (rnd >> 8) % 400, seq, s % 3 ? NULL : "other", &want[s]);
                /* Drain now and then, twice down to empty: the chunk kept takes a new key. */
                if (s % 700 == 0)
                        while (backlog_count(b) > (s % 1400 == 0 ? 0 : 5))
                                pop_check(b, want, s);
        }
        while (backlog_count(b) > 0)
                pop_check(b, want, N);
        for (size_t i = 1; i <= N; i++)
                check(want[i] == NULL);
        backlog_free(b);
        free(want);
}

int main(void)
{
        run_test(test_empty);
        run_test(test_order);
        run_test(test_late);
        run_test(test_round_trip);
        run_test(test_round_trip_largest);
        run_test(test_bytes);
        run_test(test_bytes_unlike);
        run_test(test_round_trip_shared);
        run_test(test_large);
        return 0;
}
