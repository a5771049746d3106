/* SPDX-License-Identifier: MIT */
/* Built-in module loading's decisions (pipeline/modload.h): which MODALIAS
 * values reach libkmod, and that the same alias or module is not looked up
 * or loaded twice while in flight, nor a loaded one loaded again, with the
 * counts status shows; an alias completes once each of its modules was
 * tried, and an expired one lets later events go at once. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "pipeline/modload.h"
#include "test.h"

static void test_valid(void)
{
        char long_alias[HP_MODALIAS_MAX + 1], out[HP_MODALIAS_MAX];

        check_int(modload_alias("pci:v00008086d00000D57sv00000000sd00000000bc06sc00i00", out), 0);
        check_int(modload_alias("usb:v0627p0001d0000dc00dsc00dp00ic03isc01ip01in00", out), 0);
        check_int(modload_alias("dmi:bvnSeaBIOS:pnStandardPC(Q35+ICH9,2009):", out), 0);
        check_int(modload_alias("", out), -EINVAL);
        check_int(modload_alias("pci:v1 d2", out), -EINVAL);        /* a blank */
        check_int(modload_alias("pci:v1\td2", out), -EINVAL);       /* a control character */
        check_int(modload_alias("pci:v1\nalias x y", out), -EINVAL);
        check_int(modload_alias("pci:\x7f", out), -EINVAL);
        check_int(modload_alias("pci:\xc3\xa9", out), -EINVAL);     /* not ASCII */
        /* An x86 cpu's MODALIAS ends with a newline: taken without it; none elsewhere. */
        check_int(modload_alias("cpu:type:x86,ven0000fam0006mod003F:feature:,0000,0001\n", out), 0);
        check_str(out, "cpu:type:x86,ven0000fam0006mod003F:feature:,0000,0001");
        check_int(modload_alias("cpu:x\n\n", out), -EINVAL);
        check_int(modload_alias("\n", out), -EINVAL);
        memset(long_alias, 'a', HP_MODALIAS_MAX);
        long_alias[HP_MODALIAS_MAX] = '\0';
        check_int(modload_alias(long_alias, out), -E2BIG);           /* HP_MODALIAS_MAX bytes: one too many */
        long_alias[HP_MODALIAS_MAX - 1] = '\0';
        check_int(modload_alias(long_alias, out), 0);                /* the longest taken */
}

struct completed {
        struct modload_alias *v[8];
        size_t n, seen;
};

static void on_alias(struct modload_alias *a, bool complete, void *userdata)
{
        struct completed *c = userdata;

        c->seen++;
        if (complete)
                c->v[c->n++] = a;
}

/* Two events of one alias, a second alias that names a module in flight and one loaded. */
static void test_dedup(void)
{
        struct modload ml;
        struct modload_alias *a, *a2, *b;
        const char *names_a[] = { "xhci_pci", "xhci_hcd" };
        const char *names_b[] = { "xhci_pci", "usbcore" };
        bool present_a[] = { false, false }, present_b[] = { false, true }, issue[2];
        struct completed c = { 0 };

        modload_init(&ml);
        check_int(modload_begin(&ml, "pci:v1d2", &a), 1);            /* look it up */
        check_int(modload_begin(&ml, "pci:v1d2", &a2), 0);           /* in flight: wait for it */
        check(a == a2);
        check_int(ml.counts.aliases, 2);
        check_int(ml.counts.lookups, 1);
        check_int(ml.counts.saved, 1);

        check_int(modload_looked_up(&ml, a, names_a, present_a, issue, 2), 0);
        check(issue[0] && issue[1]);
        check_int(ml.counts.loads, 2);
        check_int(modload_modules(&ml), 2);

        check_int(modload_begin(&ml, "pci:v3d4", &b), 1);
        check_int(modload_looked_up(&ml, b, names_b, present_b, issue, 2), 0);
        check(!issue[0] && !issue[1]);                                /* in flight, and loaded */
        check_int(ml.counts.loads, 2);
        check_int(ml.counts.saved, 3);
        check_int(b->pending, 1);

        /* xhci_hcd done: a waits for xhci_pci still. */
        check_int(modload_module_done(&ml, "xhci_hcd", MODLOAD_INSERTED, on_alias, &c), 1);
        check_int(c.n, 0);
        /* xhci_pci done: both aliases complete. */
        check_int(modload_module_done(&ml, "xhci_pci", MODLOAD_FAILED, on_alias, &c), 2);
        check_int(c.n, 2);
        check(c.v[0] == a || c.v[1] == a);
        check(c.v[0] == b || c.v[1] == b);
        check_int(modload_module_done(&ml, "xhci_pci", MODLOAD_INSERTED, on_alias, &c), -ENOENT);
        check_int(ml.counts.loaded, 1);
        check_int(ml.counts.failed, 1);
        modload_alias_end(&ml, a);
        modload_alias_end(&ml, b);
        check_int(modload_aliases(&ml), 0);
        check_int(modload_modules(&ml), 0);

        /* Done and gone: the same alias is looked up again (a module may have been unloaded). */
        check_int(modload_begin(&ml, "pci:v1d2", &a), 1);
        check_int(modload_looked_up(&ml, a, NULL, NULL, NULL, 0), 1); /* names no module */
        check_int(ml.counts.not_found, 1);
        modload_alias_end(&ml, a);
        modload_clear(&ml);
}

/* An alias whose waiters went on at the timeout: later events go at once; its end unlinks it. */
static void test_expire(void)
{
        struct modload ml;
        struct modload_alias *a, *b;
        const char *names[] = { "hangs" };
        bool present[] = { false }, issue[1];
        struct completed c = { 0 };

        modload_init(&ml);
        check_int(modload_begin(&ml, "acpi:HANG:", &a), 1);
        check_int(modload_looked_up(&ml, a, names, present, issue, 1), 0);
        check(issue[0]);
        modload_alias_expire(&ml, a, 2);
        check_int(ml.counts.timeouts, 2);
        check_int(modload_begin(&ml, "acpi:HANG:", &b), -ETIME);
        check_int(ml.counts.timeouts, 3);
        /* A second alias waits on the same module; the first is ended while it is in flight. */
        check_int(modload_begin(&ml, "acpi:HANG2:", &b), 1);
        check_int(modload_looked_up(&ml, b, names, present, issue, 1), 0);
        check(!issue[0]);
        modload_alias_end(&ml, a);
        check_int(modload_module_done(&ml, "hangs", MODLOAD_INSERTED, on_alias, &c), 1);
        check_int(c.n, 1);
        check(c.v[0] == b);
        modload_alias_end(&ml, b);
        modload_clear(&ml);
}

/* At HP_KMOD_ALIASES_MAX in flight a new alias is not held; names past the bound are skipped. */
static void test_bounds(void)
{
        struct modload ml;
        struct modload_alias *a;
        char alias[32];
        const char *names[HP_KMOD_MODULES_PER_ALIAS + 1];
        bool present[HP_KMOD_MODULES_PER_ALIAS + 1] = { false }, issue[HP_KMOD_MODULES_PER_ALIAS + 1];
        char name[HP_KMOD_MODULES_PER_ALIAS + 1][16];

        modload_init(&ml);
        for (int i = 0; i < HP_KMOD_ALIASES_MAX; i++) {
                snprintf(alias, sizeof(alias), "x:%d", i);
                check_int(modload_begin(&ml, alias, &a), 1);
        }
        check_int(modload_begin(&ml, "x:more", &a), -ENOSPC);
        check_int(ml.counts.skipped, 1);
        check_int(modload_begin(&ml, "x:0", &a), 0);                  /* one in flight still joins */
        for (int i = 0; i <= HP_KMOD_MODULES_PER_ALIAS; i++) {
                snprintf(name[i], sizeof(name[i]), "m%d", i);
                names[i] = name[i];
        }
        check_int(modload_looked_up(&ml, a, names, present, issue, HP_KMOD_MODULES_PER_ALIAS + 1), 0);
        check(!issue[HP_KMOD_MODULES_PER_ALIAS]);
        check_int(ml.counts.skipped, 2);
        check_int(a->pending, HP_KMOD_MODULES_PER_ALIAS);
        modload_clear(&ml);
}

int main(void)
{
        run_test(test_valid);
        run_test(test_dedup);
        run_test(test_expire);
        run_test(test_bounds);
        return 0;
}
