/* SPDX-License-Identifier: MIT */
/*
 * The usb usermaps (pipeline/usermap.h): lines in the format packages
 * wrote, every match flag, the bcdDevice range's edges, device and
 * interface classes on device and interface events, every kind of
 * malformed line (reported as FILE:LINE and skipped), the limits (a
 * million-line map keeps 16384 entries and says so once), the blacklist,
 * the REMOVER name, and the files of a hotplug directory read through the
 * trust rule (a map or directory others can write is refused).
 *
 * With the argument "era": the maps of real packages fetched by
 * tests/data/hotplug-era/fetch (exit 77 when they are not there).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/usermap.h"
#include "shared/macro.h"
#include "test.h"
#include "test-dir.h"

/* The messages of the last parse or load. */
static char said[64][512];
static unsigned n_said;

static void on_error(const char *msg, void *userdata)
{
        (void)userdata;
        check(strlen(msg) < sizeof(said[0]));
        for (const char *p = msg; *p; p++)
                check(*p >= 0x20 && *p <= 0x7e);
        if (n_said < ELEMENTSOF(said))
                snprintf(said[n_said], sizeof(said[0]), "%s", msg);
        n_said++;
}

static struct usermap *parse(const char *text)
{
        struct usermap *m;

        n_said = 0;
        check_int(usermap_new(&m), 0);
        check_int(usermap_parse(m, "usb/test.usermap", USERMAP_USERMAP, text, strlen(text), on_error, NULL), 0);
        return m;
}

static struct usermap_device dev(const char *product, const char *type, const char *interface)
{
        struct usermap_device d;

        check_int(usermap_device_parse(product, type, interface, &d), 0);
        return d;
}

/* How many lines of @m match the device. */
static size_t matches(const struct usermap *m, const char *product, const char *type, const char *interface)
{
        struct usermap_device d = dev(product, type, interface);
        struct usermap_match out[8];

        return usermap_match(m, &d, out, ELEMENTSOF(out));
}

#define LINE(mod, flags, rest) mod " " flags " " rest "\n"

static void test_real_format(void)
{
        /* As mtp-hotplug, print-camera-list and sane-desc wrote them: aligned with blanks and tabs. */
        struct usermap *m = parse(
                "# This usermap will call the script \"libmtp.sh\" whenever a known MTP device is attached.\n"
                "\n"
                "# Creative ZEN Micro\n"
                "libmtp.sh    0x0003  0x041e  0x411e  0x0000  0x0000  0x00    0x00    0x00    0x00    0x00    0x00    0x00000000\n"
                "xpp_fxloader\t0x0003\t0xe4e4\t0x1130\t0x0000\t0x0000\t0x00\t0x00\t0x00\t0x00\t0x00\t0x00\t0x0\n");
        struct usermap_device d = dev("41e/411e/100", "0/0/0", NULL);
        struct usermap_match out[4];
        char text[128];

        check_int(n_said, 0);
        check_int(usermap_entries(m), 2);
        check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), 1);
        check_str(out[0].module, "libmtp.sh");
        check_str(out[0].file, "usb/test.usermap");
        check_int(out[0].line, 4);
        check_int(out[0].kind, USERMAP_USERMAP);
        check(!out[0].repeat);
        check_str(usermap_describe(&out[0], text, sizeof(text)), "usb/test.usermap:4 libmtp.sh");
        check_str(usermap_describe(&out[0], text, 10), "usb/test.");
        check_int(matches(m, "41e/411f/100", "0/0/0", NULL), 0);
        check_int(matches(m, "e4e4/1130/101", "255/255/255", NULL), 1);
        /* A line of ids acts on the device's event, not again for each of its interfaces. */
        check_int(matches(m, "e4e4/1130/101", "255/255/255", "255/0/255"), 0);
        usermap_free(m);
}

static void test_each_flag(void)
{
        /* One line per flag, its field 0x12 (bcd 0x0012); the device has 0x12 everywhere, then each field other. */
        char text[2048] = "", line[256];
        struct usermap *m;

        for (unsigned i = 0; i < 10; i++) {
                snprintf(line, sizeof(line), "f%u 0x%x 0x12 0x12 0x12 0x12 0x12 0x12 0x12 0x12 0x12 0x12 0x0\n", i,
                         1u << i);
                strcat(text, line);
        }
        m = parse(text);
        check_int(n_said, 0);
        check_int(usermap_entries(m), 10);
        /* Device lines (flags 0x1-0x40) on the device's event, interface lines (0x80-0x200) on an interface's. */
        check_int(matches(m, "12/12/12", "18/18/18", NULL), 7);
        check_int(matches(m, "12/12/12", "18/18/18", "18/18/18"), 3);
        for (unsigned i = 0; i < 10; i++) {
                struct usermap_match out[10];
                char product[32];
                unsigned c[6];
                char type[32], intf[32];
                struct usermap_device d;
                unsigned v = 0x12, p = 0x12, b = 0x12;

                for (int k = 0; k < 6; k++)
                        c[k] = 18;
                if (i == 0)
                        v = 0x13;
                else if (i == 1)
                        p = 0x13;
                else if (i == 2)
                        b = 0x11; /* below lo */
                else if (i == 3)
                        b = 0x13; /* above hi */
                else
                        c[i - 4] = 19;
                snprintf(product, sizeof(product), "%x/%x/%x", v, p, b);
                snprintf(type, sizeof(type), "%u/%u/%u", c[0], c[1], c[2]);
                snprintf(intf, sizeof(intf), "%u/%u/%u", c[3], c[4], c[5]);
                /* Every line of the event's kind but the one of flag i matches (bcd 0x11 passes "hi",
                 * 0x13 passes "lo"). */
                d = dev(product, type, i < 7 ? NULL : intf);
                check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), i < 7 ? 6 : 2);
                for (unsigned k = 0; k < (i < 7 ? 6u : 2u); k++)
                        check(atoi(out[k].module + 1) != (int)i);
        }
        usermap_free(m);
}

static void test_bcd_range(void)
{
        struct usermap *m = parse(LINE("both", "0x000c", "0 0 0x0100 0x0200 0 0 0 0 0 0 0")
                                  LINE("lo", "0x0004", "0 0 0x0100 0x0000 0 0 0 0 0 0 0")
                                  LINE("hi", "0x0008", "0 0 0xffff 0x0200 0 0 0 0 0 0 0")
                                  LINE("none", "0x0000", "0 0 0xffff 0x0000 0 0 0 0 0 0 0"));

        check_int(n_said, 0);
        check_int(matches(m, "1/2/ff", NULL, NULL), 2);    /* hi, none */
        check_int(matches(m, "1/2/100", NULL, NULL), 4);   /* lo <= bcd: the low edge is in */
        check_int(matches(m, "1/2/200", NULL, NULL), 4);   /* bcd <= hi: the high edge is in */
        check_int(matches(m, "1/2/201", NULL, NULL), 2);   /* lo, none */
        check_int(matches(m, "1/2/0", NULL, NULL), 2);
        check_int(matches(m, "1/2/ffff", NULL, NULL), 2);
        usermap_free(m);
}

static void test_device_and_interface_events(void)
{
        struct usermap *m = parse(LINE("devclass", "0x0010", "0 0 0 0 9 0 0 0 0 0 0")
                                  LINE("ifclass", "0x0080", "0 0 0 0 0 0 0 3 0 0 0")
                                  LINE("ifproto", "0x0380", "0 0 0 0 0 0 0 3 1 2 0")
                                  LINE("devzero", "0x0010", "0 0 0 0 0 0 0 0 0 0 0"));
        struct usermap_device d;

        /* A device event: TYPE, no INTERFACE: interface fields never match. */
        check_int(matches(m, "1d6b/2/600", "9/0/1", NULL), 1);
        check_int(matches(m, "46d/c52b/1211", "0/0/0", NULL), 1);     /* devzero */
        /* An interface event: only the lines about interfaces (devzero acted on the device's event). */
        check_int(matches(m, "46d/c52b/1211", "0/0/0", "3/1/2"), 2);   /* ifclass, ifproto */
        check_int(matches(m, "46d/c52b/1211", "0/0/0", "3/1/1"), 1);
        check_int(matches(m, "46d/c52b/1211", NULL, "3/1/2"), 2);
        check_int(usermap_device_parse("46d/c52b/1211", NULL, NULL, &d), 0);
        check_int(d.dev[0], -1);
        check_int(d.intf[2], -1);
        usermap_free(m);

        /* Malformed keys of an event. */
        check_int(usermap_device_parse("46d/c52b", NULL, NULL, &d), -EINVAL);
        check_int(usermap_device_parse("46d/c52b/1211/1", NULL, NULL, &d), -EINVAL);
        check_int(usermap_device_parse("10000/1/1", NULL, NULL, &d), -EINVAL);
        check_int(usermap_device_parse("4g/1/1", NULL, NULL, &d), -EINVAL);
        check_int(usermap_device_parse("//", NULL, NULL, &d), -EINVAL);
        check_int(usermap_device_parse(NULL, NULL, NULL, &d), -EINVAL);
        check_int(usermap_device_parse("1/1/1", "256/0/0", NULL, &d), -EINVAL);
        check_int(usermap_device_parse("1/1/1", "1/0", NULL, &d), -EINVAL);
        check_int(usermap_device_parse("1/1/1", NULL, "a/0/0", &d), -EINVAL);
        check_int(usermap_device_parse("1/1/1", NULL, "1/0/0 ", &d), -EINVAL);
        check_int(usermap_device_parse("46D/C52B/1211", "255/255/255", "0/0/0", &d), 0);
        check_int(d.vendor, 0x46d);
        check_int(d.dev[2], 255);
}

/* @text parsed gives no entry and exactly the message @want. */
static void expect_refused(const char *text, const char *want)
{
        struct usermap *m = parse(text);

        if (n_said != 1 || strcmp(said[0], want) != 0) {
                fprintf(stderr, "%s-> %u messages, first \"%s\", want \"%s\"\n", text, n_said, n_said ? said[0] : "",
                        want);
                check(false);
        }
        check_int(usermap_entries(m), 0);
        usermap_free(m);
}

static void test_malformed(void)
{
        char *longline;

        expect_refused(LINE("m", "0x0003", "0xZZ 0 0 0 0 0 0 0 0 0 0"), "usb/test.usermap:1: idVendor 0xZZ: not a number");
        expect_refused(LINE("m", "0x0003", "0x 0 0 0 0 0 0 0 0 0 0"), "usb/test.usermap:1: idVendor 0x: not a number");
        expect_refused(LINE("m", "0x0003", "-1 0 0 0 0 0 0 0 0 0 0"), "usb/test.usermap:1: idVendor -1: not a number");
        expect_refused(LINE("m", "0x0003", "16#ff 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: idVendor 16#ff: not a number");
        expect_refused(LINE("m", "0x0003", "09 0 0 0 0 0 0 0 0 0 0"), "usb/test.usermap:1: idVendor 09: not a number");
        expect_refused(LINE("m", "0x0003", "0x10000 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: idVendor 0x10000: out of range");
        expect_refused(LINE("m", "0x0003", "0 0 0 0 0x100 0 0 0 0 0 0"),
                       "usb/test.usermap:1: bDeviceClass 0x100: out of range");
        expect_refused(LINE("m", "0x0003", "0 0 0 0 0 0 0 0 0 256 0"),
                       "usb/test.usermap:1: bInterfaceProtocol 256: out of range");
        expect_refused(LINE("m", "0x0003", "0 0 0 0 0 0 0 0 0 0 0x10000000000000000"),
                       "usb/test.usermap:1: driver_info 0x10000000000000000: out of range");
        expect_refused(LINE("m", "0x0400", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: match_flags 0x400: unknown bits 0x400");
        expect_refused(LINE("m", "0x0003", "0 0 0 0 0 0 0 0 0 0"), "usb/test.usermap:1: 12 fields, not 13");
        expect_refused(LINE("m", "0x0003", "0 0 0 0 0 0 0 0 0 0 0 extra"), "usb/test.usermap:1: 14 fields, not 13");
        expect_refused("m\n", "usb/test.usermap:1: 1 fields, not 13");
        expect_refused(LINE("../x", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \"../x\" is not a safe file name");
        expect_refused(LINE("a/b", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \"a/b\" is not a safe file name");
        expect_refused(LINE(".hidden", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \".hidden\" is not a safe file name");
        expect_refused(LINE("..", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \"..\" is not a safe file name");
        expect_refused(LINE("-C/etc/x", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \"-C/etc/x\" is not a safe file name");
        expect_refused(LINE("a$(id)", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \"a$(id)\" is not a safe file name");
        expect_refused(LINE("esc\x1b[31m", "0x0003", "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name \"esc\\x1b[31m\" is not a safe file name");
        expect_refused(LINE("m0123456789012345678901234567890123456789012345678901234567890123", "0x0003",
                            "0 0 0 0 0 0 0 0 0 0 0"),
                       "usb/test.usermap:1: module name "
                       "\"m0123456789012345678901234567890123456789012345678901234567890123\" is not a safe file name");
        /* A NUL in a line: the whole line is refused, not the part before it. */
        {
                static const char nul[] = "m 0x0003 0 0 0 0 0 0 0 0 0 0 0\0 extra\n";
                struct usermap *m;

                n_said = 0;
                check_int(usermap_new(&m), 0);
                check_int(usermap_parse(m, "x", USERMAP_USERMAP, nul, sizeof(nul) - 1, on_error, NULL), 0);
                check_int(usermap_entries(m), 0);
                check_int(n_said, 1);
                check_str(said[0], "x:1: contains a NUL byte");
                usermap_free(m);
        }
        /* An overlong line is skipped whole; the next line is read. */
        longline = malloc(HP_USERMAP_LINE_MAX * 3 + 128);
        check(longline);
        memset(longline, 'x', HP_USERMAP_LINE_MAX * 3);
        strcpy(longline + HP_USERMAP_LINE_MAX * 3, "\n" LINE("ok", "0x0003", "1 2 0 0 0 0 0 0 0 0 0"));
        {
                struct usermap *m = parse(longline);

                check_int(n_said, 1);
                check_str(said[0], "usb/test.usermap:1: longer than 512 bytes");
                check_int(usermap_entries(m), 1);
                check_int(matches(m, "1/2/0", NULL, NULL), 1);
                usermap_free(m);
        }
        /* One byte under, at and past the bound. */
        for (int extra = -1; extra <= 1; extra++) {
                size_t len = (size_t)(HP_USERMAP_LINE_MAX + extra);
                struct usermap *m;

                memset(longline, ' ', len);
                memcpy(longline + len - 30, "m 3 1 2 0 0 0 0 0 0 0 0 0", 25);
                longline[len] = '\0';
                m = parse(longline);
                check_int(usermap_entries(m), extra <= 0 ? 1 : 0);
                check_int(n_said, extra <= 0 ? 0 : 1);
                usermap_free(m);
        }
        free(longline);
}

static void test_accepted_forms(void)
{
        /* CRLF, comments (indented too), blank and blank-looking lines, decimal and octal, no last newline. */
        struct usermap *m = parse("# comment\r\n"
                                  "   # indented comment 1 2 3\n"
                                  "\n"
                                  " \t \r\n"
                                  "crlf 0x0003 0x0001 0x0002 0 0 0 0 0 0 0 0 0x0\r\n"
                                  "dec 3 1 2 0 0 0 0 0 0 0 0 0\n"
                                  "oct 03 01 02 0 0 0 0 0 0 0 0 0\n"
                                  "octal-is-8 0x0001 010 0 0 0 0 0 0 0 0 0 0\n"
                                  "upper 0X0003 0X0001 0XAbC 0 0 0 0 0 0 0 0 0XFFFFFFFFFFFFFFFF\n"
                                  "last 0x0001 0x8 0 0 0 0 0 0 0 0 0 0");
        struct usermap_device d = dev("1/2/0", NULL, NULL);
        struct usermap_match out[8];

        check_int(n_said, 0);
        check_int(usermap_entries(m), 6);
        check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), 3);
        check_str(out[0].module, "crlf");
        check_int(out[0].line, 5);
        check_str(out[1].module, "dec");
        check_str(out[2].module, "oct");
        check_int(matches(m, "8/0/0", NULL, NULL), 2);       /* octal-is-8, last */
        check_int(matches(m, "1/abc/0", NULL, NULL), 1);     /* upper */
        usermap_free(m);
}

static void test_interning_and_repeat(void)
{
        char *text = malloc(1000 * 64);
        struct usermap_match out[4];
        struct usermap_device d;
        struct usermap *m;
        size_t n = 0;

        check(text);
        for (int i = 0; i < 1000; i++)
                n += (size_t)sprintf(text + n, "%s 0x0001 0x%x 0 0 0 0 0 0 0 0 0 0\n", i % 2 ? "odd" : "even", i % 5);
        m = parse(text);
        check_int(usermap_entries(m), 1000);
        check_int(usermap_names(m), 2);
        check_int(usermap_files(m), 1);
        /* Vendor 0: lines 1, 6, 11, ...: even, odd, even, ... : the third and later are repeats. */
        d = dev("0/0/0", NULL, NULL);
        check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), 200);
        check_str(out[0].module, "even");
        check_str(out[1].module, "odd");
        check(!out[0].repeat && !out[1].repeat && out[2].repeat && out[3].repeat);
        check_int(out[1].line, 6);
        free(text);
        usermap_free(m);
}

static void test_limits(void)
{
        const char *line = "m 0 0 0 0 0 0 0 0 0 0 0 0\n";
        size_t ll = strlen(line), n = 1000000;
        char *text = malloc(n * ll + 1), bad[64];
        struct usermap *m;

        check(text);
        for (size_t i = 0; i < n; i++)
                memcpy(text + i * ll, line, ll);
        text[n * ll] = '\0';
        m = parse(text);
        check_int(usermap_entries(m), HP_USERMAP_ENTRIES_MAX);
        check_int(usermap_names(m), 1);
        check_int(n_said, 1);
        check_str(said[0], "usb/test.usermap:16385: more than 16384 entries: this line and the rest of the maps are ignored");
        /* A later map adds nothing and says nothing more. */
        n_said = 0;
        check_int(usermap_parse(m, "usb/later.usermap", USERMAP_USERMAP, line, ll, on_error, NULL), 0);
        check_int(usermap_entries(m), HP_USERMAP_ENTRIES_MAX);
        check_int(n_said, 0);
        usermap_free(m);

        /* A million comment lines: the file's byte bound, said once. */
        for (size_t i = 0; i < n; i++)
                memcpy(text + i * ll, "# 0 0 0 0 0 0 0 0 0 0 0 0\n", ll);
        m = parse(text);
        check_int(n_said, 1);
        check_str(said[0], "usb/test.usermap: larger than 4194304 bytes: the rest is ignored");
        usermap_free(m);

        /* A thousand malformed lines: 16 said, then their count. */
        n = 0;
        for (int i = 0; i < 1000; i++)
                n += (size_t)sprintf(text + n, "bad line %d\n", i);
        m = parse(text);
        check_int(n_said, HP_USERMAP_ERRORS_MAX + 1);
        check_str(said[0], "usb/test.usermap:1: 3 fields, not 13");
        check_str(said[HP_USERMAP_ERRORS_MAX], "usb/test.usermap: 984 more malformed lines not reported one by one");
        usermap_free(m);

        /* Map files. */
        check_int(usermap_new(&m), 0);
        n_said = 0;
        for (int i = 0; i < HP_USERMAP_FILES_MAX; i++) {
                snprintf(bad, sizeof(bad), "usb/%d.usermap", i);
                check_int(usermap_parse(m, bad, USERMAP_USERMAP, "", 0, on_error, NULL), 0);
        }
        check_int(usermap_parse(m, "usb/one-more.usermap", USERMAP_USERMAP, "", 0, on_error, NULL), -E2BIG);
        check_int(n_said, 1);
        check_str(said[0], "usb/one-more.usermap: more than 256 map files: ignored");
        usermap_free(m);
        free(text);
}

static void test_blacklist(void)
{
        static const char text[] = "# modules no agent may load\n"
                                   "usbkbd\n"
                                   "  snd-usb-audio  \r\n"
                                   "\n"
                                   "two words\n"
                                   "../evil\n"
                                   "evdev";
        struct usermap *m;

        n_said = 0;
        check_int(usermap_new(&m), 0);
        check(!usermap_blacklisted(m, "usbkbd"));
        check_int(usermap_parse_blacklist(m, "blacklist", text, strlen(text), on_error, NULL), 0);
        check_int(n_said, 2);
        check_str(said[0], "blacklist:5: \"two\" is not a module name");
        check_str(said[1], "blacklist:6: \"../evil\" is not a module name");
        check(usermap_blacklisted(m, "usbkbd"));
        check(usermap_blacklisted(m, "snd-usb-audio"));
        check(usermap_blacklisted(m, "snd_usb_audio")); /* '-' and '_' are one character in module names */
        check(usermap_blacklisted(m, "snd_usb-audio"));
        check(usermap_blacklisted(m, "evdev"));
        check(!usermap_blacklisted(m, "usbhid"));
        check(!usermap_blacklisted(m, "usbkbd2"));
        check(!usermap_blacklisted(m, "usbkb"));
        check(usermap_blacklisted(m, "../x")); /* no module name: nothing acts on it */
        usermap_free(m);
}

static void test_remover(void)
{
        static const char *const base = "/run/hotplugd/remover/usb";
        char a[PATH_MAX], b[PATH_MAX], *deep;

        check_int(usermap_remover_path(base, "/devices/pci0000:00/0000:00:14.0/usb1/1-1", a, sizeof(a)), 0);
        check_str(a, "/run/hotplugd/remover/usb/%devices%pci0000:00%0000:00:14.0%usb1%1-1");
        check_int(usermap_remover_path(base, "/", a, sizeof(a)), 0);
        check_str(a, "/run/hotplugd/remover/usb/%");
        /* '%' and '\\' are escaped, so a DEVPATH with '%' never names another device's remover. */
        check_int(usermap_remover_path(base, "/a%b", a, sizeof(a)), 0);
        check_int(usermap_remover_path(base, "/a/b", b, sizeof(b)), 0);
        check_str(a, "/run/hotplugd/remover/usb/%a\\x25b");
        check_str(b, "/run/hotplugd/remover/usb/%a%b");
        check_int(usermap_remover_path(base, "/a\\x25b", a, sizeof(a)), 0);
        check_str(a, "/run/hotplugd/remover/usb/%a\\x5cx25b");
        check_int(usermap_remover_path(base, "/../..", a, sizeof(a)), 0);
        check_str(a, "/run/hotplugd/remover/usb/%..%..");
        check_int(usermap_remover_path(base, "/a b\n\xff", a, sizeof(a)), 0);
        check_str(a, "/run/hotplugd/remover/usb/%a\\x20b\\x0a\\xff");
        check_int(usermap_remover_path(base, "devices/x", a, sizeof(a)), -EINVAL);
        check_int(usermap_remover_path(base, "", a, sizeof(a)), -EINVAL);
        check_int(usermap_remover_path(base, "/devices/x", a, 30), -ENAMETOOLONG);
        /* The name is one component of at most NAME_MAX bytes. */
        deep = malloc(NAME_MAX + 2);
        check(deep);
        memset(deep, 'd', NAME_MAX + 1);
        deep[0] = '/';
        deep[NAME_MAX] = '\0';
        check_int(usermap_remover_path(base, deep, a, sizeof(a)), 0);
        check_int(strlen(a), strlen(base) + 1 + NAME_MAX);
        deep[NAME_MAX] = 'd';
        deep[NAME_MAX + 1] = '\0';
        check_int(usermap_remover_path(base, deep, a, sizeof(a)), -ENAMETOOLONG);
        free(deep);
}

/* A hotplug directory of the test's own. */
static char top[64];

static char *at(const char *rel)
{
        return test_dir_at(top, rel);
}

static void put(const char *rel, mode_t mode, const char *content)
{
        int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        check(fd >= 0);
        check((size_t)write(fd, content, strlen(content)) == strlen(content));
        close(fd);
        check_int(chmod(at(rel), mode), 0);
}

static int load(struct usermap **ret)
{
        n_said = 0;
        return usermap_load(top, ret, on_error, NULL);
}

static void test_load(void)
{
        struct usermap_match out[8];
        struct usermap_device d = dev("1/2/3", "0/0/0", NULL), di = dev("1/2/3", "0/0/0", "255/0/0");
        struct usermap *m;

        test_dir_make(top, sizeof(top), "test-usermap");
        /* Missing files, then a missing directory: empty, no error. */
        check_int(load(&m), 0);
        check_int(usermap_entries(m), 0);
        check_int(n_said, 0);
        usermap_free(m);
        n_said = 0;
        check_int(usermap_load("/nonexistent/hotplug", &m, on_error, NULL), 0);
        check_int(usermap_entries(m) + n_said, 0);
        usermap_free(m);

        check_int(mkdir(at("usb"), 0755), 0);
        check_int(mkdir(at("blacklist.d"), 0755), 0);
        put("usb.handmap", 0644, LINE("handmod", "0x0003", "1 2 0 0 0 0 0 0 0 0 0"));
        put("usb.usermap", 0644, "# user map\n" LINE("top", "0x0003", "1 2 0 0 0 0 0 0 0 0 0"));
        put("usb/b.usermap", 0644, LINE("b_script", "0x0083", "1 2 0 0 0 0 0 0xff 0 0 0"));
        put("usb/a.usermap", 0644, "\n" LINE("a-script", "0x0001", "1 0 0 0 0 0 0 0 0 0 0") "bad\n");
        put("usb/.hidden.usermap", 0644, LINE("hidden", "0x0000", "0 0 0 0 0 0 0 0 0 0 0"));
        put("usb/not-a-map", 0644, LINE("notmap", "0x0000", "0 0 0 0 0 0 0 0 0 0 0"));
        put("blacklist", 0644, "# none yet\nb-script\n");
        put("blacklist.d/local", 0644, "handmod\n");
        check_int(load(&m), 0);
        check_int(n_said, 1);
        check(strstr(said[0], "/usb/a.usermap:3: 1 fields, not 13") != NULL);
        check_int(usermap_files(m), 4);
        check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), 3);
        check_str(out[0].file, "usb.handmap");
        check_int(out[0].kind, USERMAP_HANDMAP);
        check_str(out[1].file, "usb.usermap");
        check_int(out[1].line, 2);
        check_str(out[2].file, "usb/a.usermap");
        check_int(out[2].line, 2);
        /* The interface line, on an interface's event. */
        check_int(usermap_match(m, &di, out, ELEMENTSOF(out)), 1);
        check_str(out[0].file, "usb/b.usermap");
        check_int(out[0].kind, USERMAP_USERMAP);
        check(usermap_blacklisted(m, "b_script"));
        check(usermap_blacklisted(m, "handmod"));
        check(!usermap_blacklisted(m, "a-script"));
        usermap_free(m);
}

static void test_load_untrusted(void)
{
        struct usermap *m;

        /* A map others can write: refused by name, the rest read. */
        check_int(chmod(at("usb/a.usermap"), 0666), 0);
        check_int(load(&m), 0);
        check_int(n_said, 1);
        check(strstr(said[0], "/usb/a.usermap: refused: writable by group or others") != NULL);
        check_int(usermap_files(m), 3);
        usermap_free(m);
        put("usb/a.usermap", 0644, LINE("a-script", "0x0001", "1 0 0 0 0 0 0 0 0 0 0"));

        /* A directory of maps others can write: nothing may act. */
        check_int(chmod(at("usb"), 0777), 0);
        check_int(load(&m), -EPERM);
        check_int(n_said, 1);
        check(strstr(said[0], "/usb: refused: writable by group or others") != NULL);
        check_int(chmod(at("usb"), 0755), 0);

        /* A blacklist that cannot be trusted fails the load (what it forbids is not known). */
        check_int(chmod(at("blacklist.d/local"), 0666), 0);
        check_int(load(&m), -EPERM);
        check(strstr(said[0], "/blacklist.d/local: refused: writable by group or others") != NULL);
        check_int(chmod(at("blacklist.d/local"), 0644), 0);
        check_int(mkdir(at("blacklist.d/sub"), 0755), 0);
        check_int(load(&m), -EMEDIUMTYPE);
        check(strstr(said[0], "/blacklist.d/sub: not a regular file") != NULL);
        check_int(rmdir(at("blacklist.d/sub")), 0);

        /* The hotplug directory itself. */
        check_int(chmod(top, 0777), 0);
        check_int(load(&m), -EPERM);
        check_int(chmod(top, 0755), 0);

        /* A map that is a link into a directory others can write. */
        check_int(mkdir(at("open"), 0700), 0);
        check_int(chmod(at("open"), 0777), 0);
        put("open/planted.usermap", 0644, LINE("planted", "0x0000", "0 0 0 0 0 0 0 0 0 0 0"));
        check_int(symlink(at("open/planted.usermap"), at("usb/planted.usermap")), 0);
        check_int(load(&m), 0);
        check_int(n_said, 1);
        check(strstr(said[0], "/usb/planted.usermap: refused: link target in a directory others can write") != NULL);
        check_int(usermap_files(m), 4);
        usermap_free(m);

        /* A million-line map on disk: bounded, said once. */
        {
                FILE *f = fopen(at("usb/zz-huge.usermap"), "we");

                check(f);
                for (int i = 0; i < 1000000; i++)
                        fputs("huge 0 0 0 0 0 0 0 0 0 0 0 0\n", f);
                check_int(fclose(f), 0);
                check_int(load(&m), 0);
                check_int(usermap_entries(m), HP_USERMAP_ENTRIES_MAX);
                check_int(n_said, 2);
                check(strstr(said[1], "/usb/zz-huge.usermap:") != NULL);
                check(strstr(said[1], ": more than 16384 entries") != NULL);
                usermap_free(m);
        }
        check_int(test_dir_remove(top), 0);
}

/* The real maps tests/data/hotplug-era/fetch unpacked into CACHE/hotplug-era (a hotplug directory). */
static int test_era(void)
{
        const char *cache = getenv("HOTPLUGD_TEST_DATA");
        struct usermap_match out[4];
        struct usermap_device d;
        struct usermap *m;
        char dir[PATH_MAX];
        struct stat st;

        snprintf(dir, sizeof(dir), "%s/hotplug-era", cache ? cache : "/var/cache/hotplugd-test-data");
        if (stat(dir, &st) < 0) {
                char why[PATH_MAX + 128];

                snprintf(why, sizeof(why), "%s is missing: run tests/data/hotplug-era/fetch first", dir);
                return test_skip(why);
        }
        check_int(usermap_load(dir, &m, on_error, NULL), 0);
        check_int(n_said, 0);
        /* libmtp's map as mtp-hotplug prints it: every line an entry, one script name. */
        check(usermap_entries(m) > 1000);
        check_int(usermap_names(m), 1);
        check_int(usermap_files(m), 1);
        d = dev("41e/411e/100", "0/0/0", NULL); /* Creative ZEN Micro */
        check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), 1);
        check_str(out[0].module, "libmtp.sh");
        check_str(out[0].file, "usb/libmtp.usermap");
        check_int(out[0].line, 4);
        d = dev("46d/c52b/1211", "0/0/0", "3/1/2"); /* a Logitech receiver: no MTP */
        check_int(usermap_match(m, &d, out, ELEMENTSOF(out)), 0);
        fprintf(stderr, "%s: %zu entries\n", dir, usermap_entries(m));
        usermap_free(m);
        return 0;
}

int main(int argc, char **argv)
{
        if (argc > 1 && strcmp(argv[1], "era") == 0)
                return test_era();
        run_test(test_real_format);
        run_test(test_each_flag);
        run_test(test_bcd_range);
        run_test(test_device_and_interface_events);
        run_test(test_malformed);
        run_test(test_accepted_forms);
        run_test(test_interning_and_repeat);
        run_test(test_limits);
        run_test(test_blacklist);
        run_test(test_remover);
        run_test(test_load);
        run_test(test_load_untrusted);
        return 0;
}
