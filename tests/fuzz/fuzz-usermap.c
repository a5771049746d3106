/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the usermap parser (pipeline/usermap.h) on any bytes, as a
 * map and as a blacklist, then matched against a device the input names.
 *
 * Invariants: parsing never fails but for memory; every message names the
 * file, is printable and bounded; at most HP_USERMAP_ERRORS_MAX + 1
 * messages for malformed lines; every entry kept came from a line of the
 * input and its module is a safe file name (no '/', no leading '.' or '-',
 * at most HP_USERMAP_NAME_MAX bytes); matches come in file order, a repeat
 * only after the first match of its module; a module name that
 * is no name ("../x") is always refused.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "pipeline/usermap.h"

static unsigned said;

static void on_error(const char *msg, void *userdata)
{
        const char *file = userdata;

        fuzz_check(strncmp(msg, file, strlen(file)) == 0 && msg[strlen(file)] == ':');
        for (const char *p = msg; *p; p++)
                fuzz_check(*p >= 0x20 && *p <= 0x7e);
        said++;
}

static unsigned count_lines(const uint8_t *data, size_t size)
{
        unsigned n = 1;

        for (size_t i = 0; i < size; i++)
                n += data[i] == '\n';
        return n;
}

static void check_name(const char *s)
{
        size_t n = strlen(s);

        fuzz_check(n >= 1 && n <= HP_USERMAP_NAME_MAX);
        fuzz_check(s[0] != '.' && s[0] != '-' && !strchr(s, '/'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct usermap_match out[HP_USERMAP_MATCHES_MAX];
        struct usermap_device d = { .dev = { -1, -1, -1 }, .intf = { -1, -1, -1 } };
        struct usermap *m;
        unsigned lines = count_lines(data, size);
        size_t n, entries;
        char text[HP_USERMAP_NAME_MAX * 2 + 64];

        fuzz_check(usermap_new(&m) == 0);
        said = 0;
        fuzz_check(usermap_parse(m, "fuzz.usermap", USERMAP_USERMAP, data, size, on_error, "fuzz.usermap") == 0);
        fuzz_check(said <= HP_USERMAP_ERRORS_MAX + 2);
        entries = usermap_entries(m);
        fuzz_check(entries <= lines && entries <= HP_USERMAP_ENTRIES_MAX);
        fuzz_check(usermap_names(m) <= entries);

        /* The device: the first bytes of the input. */
        if (size >= 6) {
                d.vendor = (uint16_t)(data[0] | data[1] << 8);
                d.product = (uint16_t)(data[2] | data[3] << 8);
                d.bcd = (uint16_t)(data[4] | data[5] << 8);
        }
        if (size >= 12)
                for (int i = 0; i < 3; i++) {
                        d.dev[i] = data[6 + i];
                        d.intf[i] = data[9 + i];
                }
        n = usermap_match(m, &d, out, HP_USERMAP_MATCHES_MAX);
        fuzz_check(n <= entries);
        for (size_t i = 0; i < n && i < HP_USERMAP_MATCHES_MAX; i++) {
                bool seen = false;

                check_name(out[i].module);
                fuzz_check(strcmp(out[i].file, "fuzz.usermap") == 0);
                fuzz_check(out[i].line >= 1 && out[i].line <= lines);
                fuzz_check(i == 0 || out[i].line > out[i - 1].line);
                for (size_t j = 0; j < i; j++)
                        seen |= strcmp(out[j].module, out[i].module) == 0;
                fuzz_check(seen == out[i].repeat);
                usermap_describe(&out[i], text, sizeof(text));
                fuzz_check(strncmp(text, "fuzz.usermap:", 13) == 0);
        }

        /* The same bytes as a blacklist. */
        said = 0;
        fuzz_check(usermap_parse_blacklist(m, "fuzz.blacklist", data, size, on_error, "fuzz.blacklist") == 0);
        fuzz_check(said <= HP_USERMAP_ERRORS_MAX + 2);
        fuzz_check(usermap_blacklisted(m, "../x"));
        usermap_free(m);
        return 0;
}
