/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the control socket's record format (control-proto.h), as
 * the daemon reads a request and hotplugctl reads a reply: any packet, cut
 * at HP_CONTROL_RECORD_MAX like the receiving side does.
 *
 * Invariants: iterating the fields ends; a field read by
 * ctlmsg_next_field() is the one ctlmsg_get() finds first for its key
 * (unless the key repeats); every value read survives a round trip through
 * ctlmsg_add_str() and ctlmsg_get(); an escaped value holds no space,
 * control byte or non-ASCII byte; ctlmsg_get_u64() accepts only decimal
 * digits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control/control-proto.h"
#include "fuzz.h"

static void check_escaped(const char *s)
{
        for (; *s; s++)
                fuzz_check((unsigned char)*s > ' ' && (unsigned char)*s < 0x7f);
}

/* @val goes into a new record under @key and comes back unchanged. */
static void round_trip(const char *key, const char *val)
{
        static struct ctlmsg m;
        static char back[HP_CONTROL_RECORD_MAX + 1];
        static char esc[4 * HP_CONTROL_RECORD_MAX + 1];
        int r;

        r = ctlmsg_escape(val, esc, sizeof(esc));
        fuzz_check(r >= 0 && (size_t)r == strlen(esc));
        check_escaped(esc);

        ctlmsg_init(&m, "reply");
        ctlmsg_add_str(&m, key, val);
        fuzz_check(m.len == strlen(m.buf) && m.len <= HP_CONTROL_RECORD_MAX);
        fuzz_check(ctlmsg_is(m.buf, "reply"));
        if (m.truncated) {
                fuzz_check(ctlmsg_get(m.buf, key, back, sizeof(back)) == -ENOENT);
                return;
        }
        fuzz_check(strchr(m.buf, '\n') == NULL);
        fuzz_check(ctlmsg_get(m.buf, key, back, sizeof(back)) == 0);
        fuzz_check(strcmp(back, val) == 0);
}

/* ctlmsg_get_u64() reads the first @key, and only a plain decimal number. */
static void check_u64(const char *rec, const char *key)
{
        static char first[HP_CONTROL_RECORD_MAX + 1];
        uint64_t v;

        if (ctlmsg_get_u64(rec, key, &v) == 0) {
                fuzz_check(ctlmsg_get(rec, key, first, sizeof(first)) == 0);
                fuzz_check(first[0] && strspn(first, "0123456789") == strlen(first));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char key[64], val[HP_CONTROL_RECORD_MAX + 1], first[HP_CONTROL_RECORD_MAX + 1];
        char *rec;
        const char *p;
        size_t fields = 0;

        if (size > HP_CONTROL_RECORD_MAX)
                size = HP_CONTROL_RECORD_MAX;
        rec = malloc(size + 1);
        if (!rec)
                return 0;
        memcpy(rec, data, size);
        rec[size] = '\0';

        (void)ctlmsg_is(rec, "status");
        (void)ctlmsg_is(rec, "");
        for (p = rec; (p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val)));) {
                fuzz_check(++fields <= size);
                fuzz_check(key[0] && strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(key));
                if (ctlmsg_get(rec, key, first, sizeof(first)) == 0 && fields == 1)
                        fuzz_check(strcmp(first, val) == 0);
                check_u64(rec, key);
                round_trip(key, val);
        }
        free(rec);
        return 0;
}
