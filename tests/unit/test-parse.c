/* SPDX-License-Identifier: MIT */
/*
 * uevent_parse(): real datagrams captured from a 6.18 kernel (veth, lo,
 * zram, a serial port's synthetic bind/unbind/offline, a rename), one case
 * per reject class, the SEQNUM bounds, and uevent_dup()/uevent_get().
 * Also the keys kernels send (uevent/kernel-keys.h): what an event read
 * from a recording keeps.
 *
 * Every datagram is parsed from an exactly sized heap copy, so ASan sees any
 * read past its end.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/envbuf.h"
#include "shared/macro.h"
#include "test.h"
#include "uevent/kernel-keys.h"
#include "uevent/subsystem-list.h"
#include "uevent/uevent.h"

/* ---- datagrams captured from NETLINK_KOBJECT_UEVENT group 1, byte for byte ---- */

static const char real_net_add[] =
        "add@/devices/virtual/net/hpv3284p\0"
        "ACTION=add\0"
        "DEVPATH=/devices/virtual/net/hpv3284p\0"
        "SUBSYSTEM=net\0"
        "INTERFACE=hpv3284p\0"
        "IFINDEX=7\0"
        "SEQNUM=842\0";

static const char real_queues_add[] =
        "add@/devices/virtual/net/hpv3284p/queues/rx-0\0"
        "ACTION=add\0"
        "DEVPATH=/devices/virtual/net/hpv3284p/queues/rx-0\0"
        "SUBSYSTEM=queues\0"
        "SEQNUM=843\0";

static const char real_change_synth[] =
        "change@/devices/virtual/net/lo\0"
        "ACTION=change\0"
        "DEVPATH=/devices/virtual/net/lo\0"
        "SUBSYSTEM=net\0"
        "SYNTH_UUID=0\0"
        "INTERFACE=lo\0"
        "IFINDEX=1\0"
        "SEQNUM=862\0";

static const char real_change_synth_args[] =
        "change@/devices/virtual/net/lo\0"
        "ACTION=change\0"
        "DEVPATH=/devices/virtual/net/lo\0"
        "SUBSYSTEM=net\0"
        "SYNTH_UUID=c81769ea-de07-4326-a32c-28d04eef4b8b\0"
        "SYNTH_ARG_A=1\0"
        "SYNTH_ARG_B=x\0"
        "INTERFACE=lo\0"
        "IFINDEX=1\0"
        "SEQNUM=863\0";

static const char real_online[] =
        "online@/devices/virtual/net/lo\0"
        "ACTION=online\0"
        "DEVPATH=/devices/virtual/net/lo\0"
        "SUBSYSTEM=net\0"
        "SYNTH_UUID=0\0"
        "INTERFACE=lo\0"
        "IFINDEX=1\0"
        "SEQNUM=864\0";

static const char real_bdi_add[] =
        "add@/devices/virtual/bdi/253:1\0"
        "ACTION=add\0"
        "DEVPATH=/devices/virtual/bdi/253:1\0"
        "SUBSYSTEM=bdi\0"
        "SEQNUM=865\0";

static const char real_block_add[] =
        "add@/devices/virtual/block/zram1\0"
        "ACTION=add\0"
        "DEVPATH=/devices/virtual/block/zram1\0"
        "SUBSYSTEM=block\0"
        "MAJOR=253\0"
        "MINOR=1\0"
        "DEVNAME=zram1\0"
        "DEVTYPE=disk\0"
        "DISKSEQ=11\0"
        "SEQNUM=866\0";

static const char real_block_remove[] =
        "remove@/devices/virtual/block/zram1\0"
        "ACTION=remove\0"
        "DEVPATH=/devices/virtual/block/zram1\0"
        "SUBSYSTEM=block\0"
        "MAJOR=253\0"
        "MINOR=1\0"
        "DEVNAME=zram1\0"
        "DEVTYPE=disk\0"
        "DISKSEQ=11\0"
        "SEQNUM=868\0";

static const char real_net_move[] =
        "move@/devices/virtual/net/hpm3284x\0"
        "ACTION=move\0"
        "DEVPATH=/devices/virtual/net/hpm3284x\0"
        "SUBSYSTEM=net\0"
        "DEVPATH_OLD=/devices/virtual/net/hpm3284\0"
        "INTERFACE=hpm3284x\0"
        "IFINDEX=12\0"
        "SEQNUM=908\0";

static const char real_bind[] =
        "bind@/devices/pnp0/00:00/00:00:0/00:00:0.0\0"
        "ACTION=bind\0"
        "DEVPATH=/devices/pnp0/00:00/00:00:0/00:00:0.0\0"
        "SUBSYSTEM=serial-base\0"
        "SYNTH_UUID=6347d44f-cf13-4f23-9f3e-4a9cac465c50\0"
        "DEVTYPE=port\0"
        "DRIVER=port\0"
        "SEQNUM=915\0";

static const char real_unbind[] =
        "unbind@/devices/pnp0/00:00/00:00:0/00:00:0.0\0"
        "ACTION=unbind\0"
        "DEVPATH=/devices/pnp0/00:00/00:00:0/00:00:0.0\0"
        "SUBSYSTEM=serial-base\0"
        "SYNTH_UUID=6347d44f-cf13-4f23-9f3e-4a9cac465c50\0"
        "DEVTYPE=port\0"
        "DRIVER=port\0"
        "SEQNUM=916\0";

static const char real_offline[] =
        "offline@/devices/pnp0/00:00/00:00:0/00:00:0.0\0"
        "ACTION=offline\0"
        "DEVPATH=/devices/pnp0/00:00/00:00:0/00:00:0.0\0"
        "SUBSYSTEM=serial-base\0"
        "SYNTH_UUID=6347d44f-cf13-4f23-9f3e-4a9cac465c50\0"
        "DEVTYPE=port\0"
        "DRIVER=port\0"
        "SEQNUM=917\0";

/* ---- helpers ---- */

struct parsed {
        char *buf;                         /* exactly sized copy of the datagram */
        struct uevent ev;
        uint16_t var[HP_UEVENT_MAX_VARS];
        enum uevent_reject why;
        int r;
};

static void parse_bytes(struct parsed *p, const char *data, size_t size)
{
        p->buf = malloc(size ? size : 1);
        check(p->buf);
        memcpy(p->buf, data, size);
        memset(&p->ev, 0xaa, sizeof(p->ev));
        p->why = (enum uevent_reject)-1;
        p->r = uevent_parse(p->buf, size, p->var, &p->ev, &p->why);
}

/* A datagram written with '|' for each NUL (the final '|' is the final NUL). */
static size_t spec_to_bytes(const char *spec, char *out, size_t max)
{
        size_t n = strlen(spec);

        check(n <= max);
        for (size_t i = 0; i < n; i++)
                out[i] = spec[i] == '|' ? '\0' : spec[i];
        return n;
}

static enum uevent_reject reject_of_bytes(const char *data, size_t size)
{
        struct parsed p;
        struct uevent untouched;

        parse_bytes(&p, data, size);
        memset(&untouched, 0xaa, sizeof(untouched));
        if (p.r == 0)
                check_int(p.why, UEVENT_OK);
        else {
                check_int(p.r, -EBADMSG);
                /* On failure the event is left alone. */
                check(memcmp(&p.ev, &untouched, sizeof(untouched)) == 0);
        }
        free(p.buf);
        return p.why;
}

static enum uevent_reject reject_of(const char *spec)
{
        char b[HP_UEVENT_MAX_SIZE + 16];

        return reject_of_bytes(b, spec_to_bytes(spec, b, sizeof(b)));
}

#define GOOD_TAIL "ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUM=1|"
#define GOOD "add@/devices/x|" GOOD_TAIL

/* ---- real datagrams ---- */

struct real {
        const char *name;
        const char *data;
        size_t size;        /* of the C literal, minus its implicit NUL */
        size_t captured;    /* length recvmsg() returned */
        unsigned n_vars;    /* as captured */
        const char *action, *devpath, *subsystem;
        uint64_t seqnum;
};

#define REAL(n, sz, nv, a, d, s, q) { #n, real_##n, sizeof(real_##n) - 1, sz, nv, a, d, s, q }
static const struct real reals[] = {
        REAL(net_add, 137, 6, "add", "/devices/virtual/net/hpv3284p", "net", 842),
        REAL(queues_add, 135, 4, "add", "/devices/virtual/net/hpv3284p/queues/rx-0", "queues", 843),
        REAL(change_synth, 138, 7, "change", "/devices/virtual/net/lo", "net", 862),
        REAL(change_synth_args, 201, 9, "change", "/devices/virtual/net/lo", "net", 863),
        REAL(online, 138, 7, "online", "/devices/virtual/net/lo", "net", 864),
        REAL(bdi_add, 102, 4, "add", "/devices/virtual/bdi/253:1", "bdi", 865),
        REAL(block_add, 164, 9, "add", "/devices/virtual/block/zram1", "block", 866),
        REAL(block_remove, 170, 9, "remove", "/devices/virtual/block/zram1", "block", 868),
        REAL(net_move, 181, 7, "move", "/devices/virtual/net/hpm3284x", "net", 908),
        REAL(bind, 207, 7, "bind", "/devices/pnp0/00:00/00:00:0/00:00:0.0", "serial-base", 915),
        REAL(unbind, 211, 7, "unbind", "/devices/pnp0/00:00/00:00:0/00:00:0.0", "serial-base", 916),
        REAL(offline, 213, 7, "offline", "/devices/pnp0/00:00/00:00:0/00:00:0.0", "serial-base", 917),
};

static void test_real_datagrams(void)
{
        for (size_t i = 0; i < ELEMENTSOF(reals); i++) {
                const struct real *t = &reals[i];
                struct parsed p;
                size_t hlen = strlen(t->data);

                fprintf(stderr, "   %s\n", t->name);
                check_int(t->size, t->captured);
                parse_bytes(&p, t->data, t->size);
                check_int(p.r, 0);
                check_int(p.why, UEVENT_OK);
                check(p.ev.buf == p.buf);
                check_int(p.ev.size, t->size);
                check_int(p.ev.n_vars, t->n_vars);
                check_str(p.ev.action, t->action);
                check_str(p.ev.devpath, t->devpath);
                check_str(p.ev.subsystem, t->subsystem);
                check_int(p.ev.devpath_len, strlen(t->devpath));
                check(p.ev.seqnum == t->seqnum);
                check(p.ev.extra == NULL || p.ev.n_extra == 0);

                /* Offsets: entries follow the header back to back, and the
                 * well-known values point into the caller's buffer. */
                check_int(p.ev.var[0], hlen + 1);
                for (unsigned k = 1; k < p.ev.n_vars; k++)
                        check_int(p.ev.var[k], p.ev.var[k - 1] + strlen(uevent_var(&p.ev, k - 1)) + 1);
                check_int(p.ev.var[p.ev.n_vars - 1] + strlen(uevent_var(&p.ev, p.ev.n_vars - 1)) + 1, t->size);
                check(p.ev.devpath > p.buf && p.ev.devpath < p.buf + t->size);
                check_str(uevent_get(&p.ev, "ACTION"), t->action);
                check_str(uevent_get(&p.ev, "DEVPATH"), t->devpath);
                check(uevent_get(&p.ev, "SEQNUM") == p.buf + p.ev.var[p.ev.n_vars - 1] + STRLEN("SEQNUM="));
                free(p.buf);
        }
}

static void test_real_quirks(void)
{
        struct parsed p;

        /* move: DEVPATH_OLD is exposed and validated like DEVPATH. */
        parse_bytes(&p, real_net_move, sizeof(real_net_move) - 1);
        check_int(p.r, 0);
        check_str(p.ev.devpath_old, "/devices/virtual/net/hpm3284");
        check(p.ev.devpath_old == uevent_get(&p.ev, "DEVPATH_OLD"));
        check_str(uevent_get(&p.ev, "INTERFACE"), "hpm3284x");
        free(p.buf);

        /* Without DEVPATH_OLD the field is NULL. */
        parse_bytes(&p, real_net_add, sizeof(real_net_add) - 1);
        check_int(p.r, 0);
        check(p.ev.devpath_old == NULL);
        check(uevent_get(&p.ev, "DEVPATH_OLD") == NULL);
        check(uevent_get(&p.ev, "SYNTH_UUID") == NULL);
        check(uevent_get(&p.ev, "") == NULL);
        check(uevent_get(&p.ev, "SUBSYS") == NULL);             /* a prefix of a key */
        check(uevent_get(&p.ev, "SUBSYSTEMS") == NULL);         /* longer than a key */
        check(uevent_get(&p.ev, "A_KEY_LONGER_THAN_ANY_ENTRY_IN_THIS_DATAGRAM_AT_ALL") == NULL);
        free(p.buf);

        /* Synthetic events: SYNTH_UUID ("0" when none given) and SYNTH_ARG_*. */
        parse_bytes(&p, real_change_synth, sizeof(real_change_synth) - 1);
        check_int(p.r, 0);
        check_str(uevent_get(&p.ev, "SYNTH_UUID"), "0");
        free(p.buf);
        parse_bytes(&p, real_change_synth_args, sizeof(real_change_synth_args) - 1);
        check_int(p.r, 0);
        check_str(uevent_get(&p.ev, "SYNTH_UUID"), "c81769ea-de07-4326-a32c-28d04eef4b8b");
        check_str(uevent_get(&p.ev, "SYNTH_ARG_A"), "1");
        check_str(uevent_get(&p.ev, "SYNTH_ARG_B"), "x");
        free(p.buf);

        /* bind/unbind carry DRIVER. */
        parse_bytes(&p, real_bind, sizeof(real_bind) - 1);
        check_int(p.r, 0);
        check_str(uevent_get(&p.ev, "DRIVER"), "port");
        free(p.buf);
        parse_bytes(&p, real_unbind, sizeof(real_unbind) - 1);
        check_int(p.r, 0);
        check_str(uevent_get(&p.ev, "DRIVER"), "port");
        free(p.buf);

        /* Block devices: MAJOR/MINOR/DEVNAME. */
        parse_bytes(&p, real_block_add, sizeof(real_block_add) - 1);
        check_int(p.r, 0);
        check_str(uevent_get(&p.ev, "MAJOR"), "253");
        check_str(uevent_get(&p.ev, "DEVNAME"), "zram1");
        check_str(uevent_get(&p.ev, "DISKSEQ"), "11");
        free(p.buf);
}

/* ---- accepted edge cases ---- */

static void test_accepted(void)
{
        struct parsed p;
        char b[256];
        size_t n;

        check_int(reject_of(GOOD), UEVENT_OK);
        /* SEQNUM anywhere, well-known keys in any order. */
        check_int(reject_of("add@/devices/x|SEQNUM=1|SUBSYSTEM=net|DEVPATH=/devices/x|ACTION=add|"), UEVENT_OK);
        /* Kernel-sent HOME and PATH are accepted (the spawner drops them). */
        check_int(reject_of(GOOD "HOME=/|PATH=/sbin:/bin:/usr/sbin:/usr/bin|"), UEVENT_OK);
        /* Values are bytes: '=', spaces, newlines, control and high bytes pass. */
        check_int(reject_of(GOOD "A=b=c|B= x |C=line1\nline2|D=\x01\x7f\xff|E=|"), UEVENT_OK);
        /* Digits and '_' in keys, '@' and ':' in a devpath, spaces in the action. */
        check_int(reject_of("add@/devices/soc@0/a:b|ACTION=add|DEVPATH=/devices/soc@0/a:b|SUBSYSTEM=s|"
                            "SEQNUM=1|_=1|9=2|A_1=3|"),
                  UEVENT_OK);
        /* "..." and ".x" are ordinary names. */
        check_int(reject_of("add@/.../.x/x.|ACTION=add|DEVPATH=/.../.x/x.|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        /* Every action the kernel sends, and unknown ones of [a-z0-9_]+. */
        check_int(reject_of("remove@/d|ACTION=remove|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("change@/d|ACTION=change|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("move@/d|ACTION=move|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|DEVPATH_OLD=/e|"), UEVENT_OK);
        check_int(reject_of("online@/d|ACTION=online|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("offline@/d|ACTION=offline|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("bind@/d|ACTION=bind|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("unbind@/d|ACTION=unbind|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("new_thing2@/d|ACTION=new_thing2|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        check_int(reject_of("_@/d|ACTION=_|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|"), UEVENT_OK);
        /* A dot inside or at the end of a subsystem is fine; only a leading one is not. */
        check_int(reject_of("add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=a.b.|SEQNUM=1|"), UEVENT_OK);

        n = spec_to_bytes(GOOD "V=a\nb\x80|", b, sizeof(b));
        parse_bytes(&p, b, n);
        check_int(p.r, 0);
        check_str(uevent_get(&p.ev, "V"), "a\nb\x80");
        check_str(uevent_get(&p.ev, "SEQNUM"), "1");
        check_int(p.ev.n_vars, 5);
        free(p.buf);
}

static void test_seqnum(void)
{
        static const struct {
                const char *value;
                enum uevent_reject why;
                uint64_t seqnum;
        } cases[] = {
                { "0", UEVENT_OK, 0 },
                { "1", UEVENT_OK, 1 },
                { "9", UEVENT_OK, 9 },
                { "4294967296", UEVENT_OK, 4294967296ULL },
                { "18446744073709551609", UEVENT_OK, 18446744073709551609ULL },
                { "18446744073709551615", UEVENT_OK, UINT64_MAX },
                { "18446744073709551616", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "18446744073709551620", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "99999999999999999999", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "184467440737095516150", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "", UEVENT_REJECT_EMPTY_VALUE, 0 },
                { "+1", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "-1", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { " 1", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "1 ", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "1\n", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "01", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "00", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "0x10", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "1e3", UEVENT_REJECT_BAD_SEQNUM, 0 },
                { "\xd9\xa1", UEVENT_REJECT_BAD_SEQNUM, 0 }, /* a non-ASCII digit */
        };
        char spec[256], b[256];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct parsed p;

                snprintf(spec, sizeof(spec), "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=%s|", cases[i].value);
                parse_bytes(&p, b, spec_to_bytes(spec, b, sizeof(b)));
                check_int(p.why, cases[i].why);
                if (cases[i].why == UEVENT_OK)
                        check(p.ev.seqnum == cases[i].seqnum);
                free(p.buf);
        }
}

/* ---- one input per reject class; every class must be produced ---- */

struct reject_case {
        const char *spec;
        enum uevent_reject why;
};

static const struct reject_case reject_cases[] = {
        { "", UEVENT_REJECT_EMPTY },
        { "add@/devices/x|ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUM=1", UEVENT_REJECT_NOT_TERMINATED },
        { "libudev|\xfe\xed\xca\xfe", UEVENT_REJECT_LIBUDEV },
        { "libudev|" GOOD_TAIL, UEVENT_REJECT_LIBUDEV },
        { "|" GOOD_TAIL, UEVENT_REJECT_BAD_HEADER },
        { "add|" GOOD_TAIL, UEVENT_REJECT_BAD_HEADER },
        { "@/devices/x|" GOOD_TAIL, UEVENT_REJECT_BAD_HEADER },
        /* The first '@' ends ACTION; an ACTION holding '@' cannot form a header. */
        { "a@b@/d|ACTION=a@b|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_HEADER },
        { "add@devices/x|" GOOD_TAIL, UEVENT_REJECT_BAD_HEADER },
        { "add@|" GOOD_TAIL, UEVENT_REJECT_BAD_HEADER },
        { "ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUM=1|", UEVENT_REJECT_BAD_HEADER },
        { "add@/devices/x||" GOOD_TAIL, UEVENT_REJECT_EMPTY_ENTRY },
        { GOOD "|", UEVENT_REJECT_EMPTY_ENTRY },
        { "add@/devices/x|ACTION=add||SEQNUM=1|", UEVENT_REJECT_EMPTY_ENTRY },
        { GOOD "NOEQUALS|", UEVENT_REJECT_NO_EQUALS },
        { GOOD "=value|", UEVENT_REJECT_BAD_KEY },
        { GOOD "lower=1|", UEVENT_REJECT_BAD_KEY },
        { GOOD "A-B=1|", UEVENT_REJECT_BAD_KEY },
        { GOOD "A B=1|", UEVENT_REJECT_BAD_KEY },
        { GOOD "A\n=1|", UEVENT_REJECT_BAD_KEY },
        { GOOD "\xc3\x84=1|", UEVENT_REJECT_BAD_KEY },
        { GOOD "SEQNUM=1|", UEVENT_REJECT_DUPLICATE_KEY },
        { GOOD "X=1|X=2|", UEVENT_REJECT_DUPLICATE_KEY },
        { GOOD "HOME=/|HOME=/|", UEVENT_REJECT_DUPLICATE_KEY },
        { "add@/devices/x|ACTION=add|ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUM=1|",
          UEVENT_REJECT_DUPLICATE_KEY },
        /* TOO_MANY_VARS: built in test_bounds(). */
        { "add@/devices/x|ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=net|", UEVENT_REJECT_MISSING_KEY },
        { "add@/devices/x|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUM=1|", UEVENT_REJECT_MISSING_KEY },
        { "add@/devices/x|ACTION=add|SUBSYSTEM=net|SEQNUM=1|", UEVENT_REJECT_MISSING_KEY },
        { "add@/devices/x|ACTION=add|DEVPATH=/devices/x|SEQNUM=1|", UEVENT_REJECT_MISSING_KEY },
        { "add@/devices/x|", UEVENT_REJECT_MISSING_KEY },
        { "add@/devices/x|ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUMBER=1|", UEVENT_REJECT_MISSING_KEY },
        { "add@/devices/x|ACTION=|DEVPATH=/devices/x|SUBSYSTEM=net|SEQNUM=1|", UEVENT_REJECT_EMPTY_VALUE },
        { "add@/devices/x|ACTION=add|DEVPATH=|SUBSYSTEM=net|SEQNUM=1|", UEVENT_REJECT_EMPTY_VALUE },
        { "add@/devices/x|ACTION=add|DEVPATH=/devices/x|SUBSYSTEM=|SEQNUM=1|", UEVENT_REJECT_EMPTY_VALUE },
        { GOOD "DEVPATH_OLD=|", UEVENT_REJECT_EMPTY_VALUE },
        { "remove@/devices/x|" GOOD_TAIL, UEVENT_REJECT_HEADER_MISMATCH },
        { "ad@/devices/x|" GOOD_TAIL, UEVENT_REJECT_HEADER_MISMATCH },
        { "addd@/devices/x|" GOOD_TAIL, UEVENT_REJECT_HEADER_MISMATCH },
        { "add@/devices/y|" GOOD_TAIL, UEVENT_REJECT_HEADER_MISMATCH },
        { "add@/devices/x/|" GOOD_TAIL, UEVENT_REJECT_HEADER_MISMATCH },
        { "add@/devices|" GOOD_TAIL, UEVENT_REJECT_HEADER_MISMATCH },
        { "add@/d|ACTION=add|DEVPATH=/d@x|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_HEADER_MISMATCH },
        { "add\n@/d|ACTION=add\n|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_CHARS },
        { "add@/d\n/e|ACTION=add|DEVPATH=/d\n/e|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_CHARS },
        { "add@/d\x7f|ACTION=add|DEVPATH=/d\x7f|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_CHARS },
        { "add@/d\xc3\xa9|ACTION=add|DEVPATH=/d\xc3\xa9|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_CHARS },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=s\t|SEQNUM=1|", UEVENT_REJECT_BAD_CHARS },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=\x1b[31m|SEQNUM=1|", UEVENT_REJECT_BAD_CHARS },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|DEVPATH_OLD=/e\r|", UEVENT_REJECT_BAD_CHARS },
        { "add@/|ACTION=add|DEVPATH=/|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@//d|ACTION=add|DEVPATH=//d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/a//b|ACTION=add|DEVPATH=/a//b|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/a/|ACTION=add|DEVPATH=/a/|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/a/..|ACTION=add|DEVPATH=/a/..|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/../a|ACTION=add|DEVPATH=/../a|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/a/../b|ACTION=add|DEVPATH=/a/../b|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/a/./b|ACTION=add|DEVPATH=/a/./b|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/.|ACTION=add|DEVPATH=/.|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_DEVPATH },
        { GOOD "DEVPATH_OLD=devices/y|", UEVENT_REJECT_BAD_DEVPATH },
        { GOOD "DEVPATH_OLD=/devices/../y|", UEVENT_REJECT_BAD_DEVPATH },
        { GOOD "DEVPATH_OLD=/devices/y/|", UEVENT_REJECT_BAD_DEVPATH },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=a/b|SEQNUM=1|", UEVENT_REJECT_BAD_SUBSYSTEM },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=/|SEQNUM=1|", UEVENT_REJECT_BAD_SUBSYSTEM },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=..|SEQNUM=1|", UEVENT_REJECT_BAD_SUBSYSTEM },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=.|SEQNUM=1|", UEVENT_REJECT_BAD_SUBSYSTEM },
        /* A dot name would be a hidden hotplug.d directory. */
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=.hidden|SEQNUM=1|", UEVENT_REJECT_BAD_SUBSYSTEM },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=.x.|SEQNUM=1|", UEVENT_REJECT_BAD_SUBSYSTEM },
        /* An action is [a-z0-9_]+; printable but other bytes are refused. */
        { "add/x@/d|ACTION=add/x|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "../add@/d|ACTION=../add|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "Add@/d|ACTION=Add|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "add x@/d|ACTION=add x|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "add-x@/d|ACTION=add-x|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "add;id@/d|ACTION=add;id|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "$(id)@/d|ACTION=$(id)|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        /* The action's rule comes after BAD_CHARS and before BAD_DEVPATH. */
        { "add/x@/|ACTION=add/x|DEVPATH=/|SUBSYSTEM=s|SEQNUM=1|", UEVENT_REJECT_BAD_ACTION },
        { "add@/d|ACTION=add|DEVPATH=/d|SUBSYSTEM=s|SEQNUM=x|", UEVENT_REJECT_BAD_SEQNUM },
};

static void test_reject_classes(void)
{
        bool seen[_UEVENT_REJECT_MAX] = { false };
        char b[HP_UEVENT_MAX_SIZE + 16];

        for (size_t i = 0; i < ELEMENTSOF(reject_cases); i++) {
                enum uevent_reject why = reject_of(reject_cases[i].spec);

                if (why != reject_cases[i].why)
                        fprintf(stderr, "   case %zu: got %s\n", i, uevent_reject_to_string(why));
                check_int(why, reject_cases[i].why);
                seen[why] = true;
        }

        /* Classes that need more bytes than a spec string comfortably holds. */
        memset(b, 'a', sizeof(b));
        b[HP_UEVENT_MAX_SIZE] = '\0';
        check_int(reject_of_bytes(b, HP_UEVENT_MAX_SIZE + 1), UEVENT_REJECT_TOO_LONG);
        seen[UEVENT_REJECT_TOO_LONG] = true;
        check_int(reject_of_bytes("x", 1), UEVENT_REJECT_NOT_TERMINATED);
        check_int(reject_of_bytes("libudev\0", 8), UEVENT_REJECT_LIBUDEV);
        check_int(reject_of_bytes("libudev", 7), UEVENT_REJECT_NOT_TERMINATED); /* no NUL: not the magic */
        check_int(reject_of_bytes("\0", 1), UEVENT_REJECT_BAD_HEADER);
        check_int(reject_of_bytes(GOOD_TAIL, 0), UEVENT_REJECT_EMPTY);

        /* Keys: HP_UEVENT_KEY_MAX bytes pass, one more is too long. */
        for (size_t klen = HP_UEVENT_KEY_MAX - 1; klen <= HP_UEVENT_KEY_MAX + 45; klen++) {
                size_t n = spec_to_bytes(GOOD, b, sizeof(b));
                enum uevent_reject want = klen <= HP_UEVENT_KEY_MAX ? UEVENT_OK : UEVENT_REJECT_KEY_TOO_LONG;

                memset(b + n, 'K', klen);
                memcpy(b + n + klen, "=v", 3);
                check_int(reject_of_bytes(b, n + klen + 3), want);
                seen[want] = true;
        }
        {
                /* A long key with a bad byte is a bad key; a long key repeated is
                 * refused as too long where it first appears. */
                size_t n = spec_to_bytes(GOOD, b, sizeof(b));

                memset(b + n, 'K', 300);
                b[n + 299] = 'k';
                memcpy(b + n + 300, "=v", 3);
                check_int(reject_of_bytes(b, n + 303), UEVENT_REJECT_BAD_KEY);
                b[n + 299] = 'K';
                memcpy(b + n + 303, b + n, 303);
                check_int(reject_of_bytes(b, n + 606), UEVENT_REJECT_KEY_TOO_LONG);
        }

        /* NULL reason pointer is allowed. */
        {
                struct uevent ev;
                uint16_t var[HP_UEVENT_MAX_VARS];
                check_int(uevent_parse("\0", 1, var, &ev, NULL), -EBADMSG);
        }

        seen[UEVENT_REJECT_TOO_MANY_VARS] = true; /* proved in test_bounds() */
        for (int r = UEVENT_OK + 1; r < _UEVENT_REJECT_MAX; r++) {
                if (!seen[r])
                        fprintf(stderr, "   reject class %s never produced\n", uevent_reject_to_string(r));
                check(seen[r]);
        }
}

/* ---- bounds ---- */

/* A valid datagram with @extra additional "Knn=v" entries and, if @pad,
 * a PAD= value that brings the datagram to exactly @pad bytes. */
static size_t build(char *b, size_t max, unsigned extra, size_t pad)
{
        size_t n = spec_to_bytes(GOOD, b, max);

        for (unsigned i = 0; i < extra; i++)
                n += (size_t)snprintf(b + n, max - n, "K%02u=v", i) + 1;
        if (pad) {
                size_t fill;

                check(pad >= n + STRLEN("PAD=") + 1);
                fill = pad - n - STRLEN("PAD=") - 1;
                memcpy(b + n, "PAD=", 4);
                memset(b + n + 4, 'p', fill);
                n += 4 + fill;
                b[n++] = '\0';
        }
        return n;
}

static void test_bounds(void)
{
        static char b[HP_UEVENT_MAX_SIZE * 2];
        struct parsed p;
        size_t n;

        /* GOOD has 4 entries: 60 more is exactly HP_UEVENT_MAX_VARS. */
        n = build(b, sizeof(b), HP_UEVENT_MAX_VARS - 4, 0);
        parse_bytes(&p, b, n);
        check_int(p.r, 0);
        check_int(p.ev.n_vars, HP_UEVENT_MAX_VARS);
        check_str(uevent_get(&p.ev, "K59"), "v");
        free(p.buf);

        n = build(b, sizeof(b), HP_UEVENT_MAX_VARS - 3, 0);
        check_int(reject_of_bytes(b, n), UEVENT_REJECT_TOO_MANY_VARS);

        /* Exactly HP_UEVENT_MAX_SIZE bytes is fine; one more is too long. */
        n = build(b, sizeof(b), 0, HP_UEVENT_MAX_SIZE);
        check_int(n, HP_UEVENT_MAX_SIZE);
        parse_bytes(&p, b, n);
        check_int(p.r, 0);
        check_int(p.ev.size, HP_UEVENT_MAX_SIZE);
        check_int(strlen(uevent_get(&p.ev, "PAD")), HP_UEVENT_MAX_SIZE - strlen(GOOD) - 5);
        free(p.buf);

        n = build(b, sizeof(b), 0, HP_UEVENT_MAX_SIZE + 1);
        check_int(reject_of_bytes(b, n), UEVENT_REJECT_TOO_LONG);
}

static void test_reject_names(void)
{
        for (int i = 0; i < _UEVENT_REJECT_MAX; i++) {
                const char *s = uevent_reject_to_string(i);

                check(s && *s && strcmp(s, "unknown") != 0);
                for (int j = 0; j < i; j++)
                        check(strcmp(s, uevent_reject_to_string(j)) != 0);
        }
        check_str(uevent_reject_to_string(UEVENT_OK), "ok");
        check_str(uevent_reject_to_string(UEVENT_REJECT_BAD_DEVPATH), "bad-devpath");
        check_str(uevent_reject_to_string(_UEVENT_REJECT_MAX), "unknown");
        check_str(uevent_reject_to_string((enum uevent_reject)-1), "unknown");
}

/* ---- uevent_dup() ---- */

static void test_dup(void)
{
        _cleanup_(uevent_freep) struct uevent *d = NULL, *d2 = NULL;
        struct envbuf extra;
        struct parsed p;

        parse_bytes(&p, real_net_move, sizeof(real_net_move) - 1);
        check_int(p.r, 0);
        p.ev.received = 1234;

        envbuf_init(&extra);
        check_int(envbuf_add(&extra, "DEVNAME", "hpm"), 0);
        check_int(envbuf_add(&extra, "PHYSDEVPATH", "/devices/p"), 0);
        check_int(envbuf_add(&extra, "DEVNAME", "hpm3284x"), 0); /* replaced */
        check_int(uevent_dup(&p.ev, &extra, "netdev", &d), 0);

        /* Wipe every source: the copy must not point into any of them. */
        memset(p.buf, 'Z', p.ev.size);
        memset(p.var, 0xff, sizeof(p.var));
        memset(&extra, 0x55, sizeof(extra));
        free(p.buf);

        check(d->buf != NULL);
        check_int(d->size, sizeof(real_net_move) - 1);
        check(memcmp(d->buf, real_net_move, d->size) == 0);
        check_int(d->n_vars, 7);
        check_int(d->received, 1234);
        check(d->seqnum == 908);
        check_str(d->action, "move");
        check_str(d->devpath, "/devices/virtual/net/hpm3284x");
        check_int(d->devpath_len, strlen(d->devpath));
        check_str(d->subsystem, "net");
        check_str(d->devpath_old, "/devices/virtual/net/hpm3284");
        check(d->action >= d->buf && d->action < d->buf + d->size);
        check(d->devpath_old >= d->buf && d->devpath_old < d->buf + d->size);
        check_str(uevent_var(d, 0), "ACTION=move");
        check_str(uevent_var(d, 6), "SEQNUM=908");
        check_str(uevent_get(d, "IFINDEX"), "12");
        check(uevent_get(d, "DEVNAME") == NULL);      /* additions are not kernel keys */

        check_str(d->name, "netdev");
        check_int(d->n_extra, 2);
        check_int(d->extra_size, sizeof("PHYSDEVPATH=/devices/p") + sizeof("DEVNAME=hpm3284x"));
        check_str(uevent_get_extra(d, "DEVNAME"), "hpm3284x");
        check_str(uevent_get_extra(d, "PHYSDEVPATH"), "/devices/p");
        check(uevent_get_extra(d, "DEV") == NULL);
        check(uevent_get_extra(d, "IFINDEX") == NULL);
        check(d->sched_data == NULL && d->owner_data == NULL);

        /* A dup of a dup; no extras and no name: argv[1] is SUBSYSTEM. */
        check_int(uevent_dup(d, NULL, NULL, &d2), 0);
        check(d2->buf != d->buf);
        check_str(d2->name, "net");
        check_int(d2->n_extra, 0);
        check(uevent_get_extra(d2, "DEVNAME") == NULL);
        check_str(d2->devpath_old, "/devices/virtual/net/hpm3284");
        check_str(uevent_get(d2, "INTERFACE"), "hpm3284x");
}

static void test_devpath_is_prefix(void)
{
        check(devpath_is_prefix("/a/b", 4, "/a/b", 4));
        check(devpath_is_prefix("/a/b", 4, "/a/b/c", 6));
        check(!devpath_is_prefix("/a/b", 4, "/a/bc", 5));
        check(!devpath_is_prefix("/a/b/c", 6, "/a/b", 4));
}

/* A setting's list of subsystem names: the names follow uevent_subsystem_valid(). */
static void test_subsystem_list(void)
{
        const char *bad = NULL;
        size_t n = 0;

        check_int(subsystem_list_check(NULL, &bad, &n), 0);
        check_int(subsystem_list_check("", &bad, &n), 0);
        check_int(subsystem_list_check("net", &bad, &n), 0);
        check_int(subsystem_list_check(" net , block,scsi_host,i2c-dev,pci_express ", &bad, &n), 0);
        /* The names the kernel's SUBSYSTEM may not have: '/', a leading '.', control and non-ASCII bytes. */
        check_int(subsystem_list_check("net,a/b,block", &bad, &n), -EINVAL);
        check(n == 3 && strncmp(bad, "a/b", n) == 0);
        check_int(subsystem_list_check("..", &bad, &n), -EINVAL);
        check(n == 2 && strncmp(bad, "..", n) == 0);
        check_int(subsystem_list_check("net,\001x", &bad, &n), -EINVAL);
        check_int(subsystem_list_check("n\xc3\xa9t", &bad, &n), -EINVAL);
        check_int(n, 4);

        check(subsystem_list_has(NULL, "net"));
        check(subsystem_list_has("", "net"));
        check(subsystem_list_has(" , ", "net")); /* no name: every subsystem */
        check(subsystem_list_has("net,block", "block"));
        check(subsystem_list_has("net block", "net"));
        check(!subsystem_list_has("net,block", "bloc"));
        check(!subsystem_list_has("net", "netx"));
        check(!subsystem_list_has("net", "ne"));
        check(!subsystem_list_has("net,block", "tty"));
}

/* The table: sorted, each name once, [A-Z0-9_]+, none of them a name the block list refuses. */
static void test_kernel_key_table(void)
{
        size_t n;
        const char *const *keys = uevent_kernel_keys(&n);

        check(n > 200);
        for (size_t i = 0; i < n; i++) {
                check(strspn(keys[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(keys[i]));
                check(!env_key_refused(keys[i], strlen(keys[i])));
                check(uevent_key_sent_by_kernel(keys[i], strlen(keys[i])));
                check(i == 0 || strcmp(keys[i - 1], keys[i]) < 0);
        }
}

static void test_kernel_keys(void)
{
        static const char *const sent[] = {
                "ACTION", "DEVPATH", "SUBSYSTEM", "SEQNUM", "DEVPATH_OLD", "SYNTH_UUID", "MODALIAS", "DRIVER",
                "INTERFACE", "IFINDEX", "PCI_SLOT_NAME", "DISKSEQ", "HID_NAME", "EV", "KEY", "ABS",
                /* The legacy keys the handlers rebuild. */
                "PHYSDEVPATH", "PHYSDEVBUS", "PHYSDEVDRIVER", "DEVICE",
                /* Families. */
                "SYNTH_ARG_NOTE", "SYNTH_ARG_HOTPLUGD", "SYNTH_ARG_X1", "POWER_SUPPLY_ONLINE", "OF_COMPATIBLE_0",
                "OF_COMPATIBLE_N", "OF_ALIAS_0", "SDIO_INFO1",
        };
        static const char *const unsent[] = {
                /* Issue 40, N4: code loaded, files read, proxies and buses chosen by other programs. */
                "GIO_EXTRA_MODULES", "GTK_MODULES", "GST_PLUGIN_PATH", "QT_PLUGIN_PATH", "LIBGL_DRIVERS_PATH",
                "SASL_PATH", "ALSA_CONFIG_PATH", "PYTHONPYCACHEPREFIX", "SSL_CERT_FILE", "HTTPS_PROXY", "WGETRC",
                "CURL_HOME", "HGRCPATH", "TZ", "XDG_CONFIG_HOME", "DBUS_SYSTEM_BUS_ADDRESS",
                /* The uevent helper's, hotplugd's own, and the block list's. */
                "HOME", "PATH", "HOTPLUGD_RESYNC", "LD_PRELOAD", "BASH_ENV",
                /* Not what the kernel makes of a uevent file, or named after a refused variable. */
                "SYNTH_ARG_", "SYNTH_ARG_LD_PRELOAD", "SYNTH_ARG_PYTHONPATH", "SYNTH_ARG_IFS", "SYNTH_ARG_HOME",
                "SYNTH_ARG", "POWER_SUPPLY_", "OF_COMPATIBLE_",
                /* A table name's prefix or extension. */
                "MODALIA", "MODALIASX", "DEVPAT", "A", "ZZZ",
        };

        for (size_t i = 0; i < ELEMENTSOF(sent); i++) {
                if (!uevent_key_sent_by_kernel(sent[i], strlen(sent[i])))
                        fprintf(stderr, "not taken for a kernel's: %s\n", sent[i]);
                check(uevent_key_sent_by_kernel(sent[i], strlen(sent[i])));
        }
        for (size_t i = 0; i < ELEMENTSOF(unsent); i++) {
                if (uevent_key_sent_by_kernel(unsent[i], strlen(unsent[i])))
                        fprintf(stderr, "taken for a kernel's: %s\n", unsent[i]);
                check(!uevent_key_sent_by_kernel(unsent[i], strlen(unsent[i])));
        }
        /* Only @len bytes count. */
        check(uevent_key_sent_by_kernel("MODALIAS=pci:v1", 8));
        check(!uevent_key_sent_by_kernel("MODALIAS=pci:v1", 7));
        check(!uevent_key_sent_by_kernel("TZ=/tmp/zone", 2));
        check(!uevent_key_sent_by_kernel("SYNTH_ARG_LANG=/x", 14));
        check(!uevent_key_sent_by_kernel("", 0));
        check(!uevent_key_sent_by_kernel(NULL, 0));
}

/* An event as read from a recording: what no kernel sends is left out, the rest kept in order. */
static void test_strip_unsent(void)
{
        static const char dg[] =
                "change@/devices/virtual/net/lo\0"
                "ACTION=change\0"
                "DEVPATH=/devices/virtual/net/lo\0"
                "GTK_MODULES=/tmp/x.so\0"
                "SUBSYSTEM=net\0"
                "INTERFACE=lo\0"
                "TZ=/tmp/zone\0"
                "LD_PRELOAD=/tmp/y.so\0"
                "SYNTH_ARG_LD_PRELOAD=/tmp/y.so\0"
                "SYNTH_ARG_NOTE=kept\0"
                "SEQNUM=77\0";
        static const char want[] =
                "change@/devices/virtual/net/lo\0"
                "ACTION=change\0"
                "DEVPATH=/devices/virtual/net/lo\0"
                "SUBSYSTEM=net\0"
                "INTERFACE=lo\0"
                "LD_PRELOAD=/tmp/y.so\0" /* left to the block list, which logs it */
                "SYNTH_ARG_NOTE=kept\0"
                "SEQNUM=77\0";
        uint16_t vars[HP_UEVENT_MAX_VARS], vars2[HP_UEVENT_MAX_VARS];
        const char *dropped[HP_UEVENT_MAX_VARS];
        char *copy = malloc(sizeof(dg) - 1), out[sizeof(dg)];
        struct uevent view, again;
        size_t size;

        check(copy);
        memcpy(copy, dg, sizeof(dg) - 1);
        check_int(uevent_parse(copy, sizeof(dg) - 1, vars, &view, NULL), 0);
        check_int(uevent_strip_unsent(&view, out, &size, dropped), 3);
        check_str(dropped[0], "GTK_MODULES=/tmp/x.so");
        check_str(dropped[1], "TZ=/tmp/zone");
        check_str(dropped[2], "SYNTH_ARG_LD_PRELOAD=/tmp/y.so");
        check_int(size, sizeof(want) - 1);
        check(memcmp(out, want, size) == 0);
        check_int(uevent_parse(out, size, vars2, &again, NULL), 0);
        check_int(again.seqnum, 77);
        check(!uevent_get(&again, "GTK_MODULES") && !uevent_get(&again, "TZ"));
        free(copy);

        /* A kernel's datagram loses nothing, byte for byte. */
        copy = malloc(sizeof(real_net_add) - 1);
        check(copy);
        memcpy(copy, real_net_add, sizeof(real_net_add) - 1);
        check_int(uevent_parse(copy, sizeof(real_net_add) - 1, vars, &view, NULL), 0);
        check_int(uevent_strip_unsent(&view, out, &size, dropped), 0);
        check_int(size, sizeof(real_net_add) - 1);
        check(memcmp(out, real_net_add, size) == 0);
        free(copy);
}

int main(void)
{
        run_test(test_real_datagrams);
        run_test(test_real_quirks);
        run_test(test_accepted);
        run_test(test_seqnum);
        run_test(test_reject_classes);
        run_test(test_bounds);
        run_test(test_reject_names);
        run_test(test_dup);
        run_test(test_devpath_is_prefix);
        run_test(test_subsystem_list);
        run_test(test_kernel_key_table);
        run_test(test_kernel_keys);
        run_test(test_strip_unsent);
        return 0;
}
