/* SPDX-License-Identifier: MIT */
/*
 * The JSON writer (shared/json.h): UTF-8 validity (valid, overlong,
 * surrogates, out of range, truncated, stray continuation bytes), escaping
 * of control characters, byte arrays for invalid text, numbers only from
 * integers or number text, structure and misuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/json.h"
#include "test.h"

/* What one top-level value written by @fn comes out as (without the newline), or "ERROR". */
static const char *out_of(void (*fn)(struct json_writer *w, const void *arg), const void *arg)
{
        static char result[1024];
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        int r;

        check(f);
        r = json_print_line(f, fn, arg);
        fclose(f);
        check(size < sizeof(result));
        if (r < 0) {
                check(r == -EINVAL);
                check(size == 0); /* nothing of a refused value reaches the stream */
                strcpy(result, "ERROR");
        } else {
                check(size > 0 && buf[size - 1] == '\n');
                buf[size - 1] = '\0';
                strcpy(result, buf);
        }
        free(buf);
        return result;
}

static void write_str(struct json_writer *w, const void *arg)
{
        json_str(w, arg);
}

static const char *str(const char *s)
{
        return out_of(write_str, s);
}

static void test_utf8_valid(void)
{
        check_str(str("caf\xc3\xa9"), "\"caf\xc3\xa9\"");                     /* é, 2 bytes */
        check_str(str("\xe6\x97\xa5\xe6\x9c\xac"), "\"\xe6\x97\xa5\xe6\x9c\xac\""); /* 日本, 3 bytes each */
        check_str(str("\xf0\x9f\x94\x8c"), "\"\xf0\x9f\x94\x8c\"");           /* U+1F50C, 4 bytes */
        check_str(str("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");           /* U+10FFFF, the last */
        check_str(str("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");                   /* U+D7FF, below the surrogates */
        check_str(str("\xee\x80\x80"), "\"\xee\x80\x80\"");                   /* U+E000, above them */
        check_str(str("\xe0\xa0\x80"), "\"\xe0\xa0\x80\"");                   /* U+0800, shortest 3-byte */
        check_str(str("\xf0\x90\x80\x80"), "\"\xf0\x90\x80\x80\"");           /* U+10000, shortest 4-byte */
        check_str(str("\xc2\xa0"), "\"\xc2\xa0\"");                           /* U+00A0 is not a control */
        check_str(str(""), "\"\"");
}

static void test_utf8_invalid(void)
{
        check_str(str("caf\xe9"), "[99,97,102,233]");          /* Latin-1 é */
        check_str(str("\xc0\xaf"), "[192,175]");               /* overlong '/' */
        check_str(str("\xc1\xbf"), "[193,191]");               /* overlong */
        check_str(str("\xe0\x80\xaf"), "[224,128,175]");       /* overlong 3-byte */
        check_str(str("\xe0\x9f\xbf"), "[224,159,191]");       /* overlong U+07FF */
        check_str(str("\xf0\x80\x80\xaf"), "[240,128,128,175]"); /* overlong 4-byte */
        check_str(str("\xf0\x8f\xbf\xbf"), "[240,143,191,191]"); /* overlong U+FFFF */
        check_str(str("\xed\xa0\x80"), "[237,160,128]");       /* U+D800, a surrogate */
        check_str(str("\xed\xbf\xbf"), "[237,191,191]");       /* U+DFFF */
        check_str(str("\xf4\x90\x80\x80"), "[244,144,128,128]"); /* U+110000 */
        check_str(str("\xf5\x80\x80\x80"), "[245,128,128,128]");
        check_str(str("\xff"), "[255]");
        check_str(str("\x80"), "[128]");                       /* stray continuation */
        check_str(str("a\xc3"), "[97,195]");                   /* truncated at the end */
        check_str(str("\xe6\x97"), "[230,151]");               /* truncated 3-byte */
        check_str(str("\xe6\x97x"), "[230,151,120]");          /* continuation missing */
        check_str(str("\xf0\x9f\x94"), "[240,159,148]");       /* truncated 4-byte */
        check_str(str("ok\xc3\xa9\xc3"), "[111,107,195,169,195]"); /* valid then truncated: all bytes */

        check(utf8_char_len((const unsigned char *)"\xc3\xa9", 1) == 0); /* not within n */
        check(utf8_char_len((const unsigned char *)"\xc3\xa9", 2) == 2);
        check(utf8_valid("", 0));
        check(!utf8_valid("\xc3", 1));
}

static void test_controls(void)
{
        check_str(str("a\nb\tc\"d\\e"), "\"a\\nb\\tc\\\"d\\\\e\"");
        check_str(str("\r\b\f"), "\"\\r\\b\\f\"");
        check_str(str("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
        check_str(str("\x1b[31m"), "\"\\u001b[31m\"");
        check_str(str("\xc2\x85\xc2\x9f"), "\"\\u0085\\u009f\"");   /* C1 controls */
        check_str(str("/ '<>"), "\"/ '<>\"");                        /* nothing else is escaped */
        /* Latin-1 bytes are not escaped characters: the value is bytes. */
        check_str(str("\x85"), "[133]");
}

static void write_number_text(struct json_writer *w, const void *arg)
{
        json_number_text(w, arg);
}

static void test_numbers(void)
{
        /* Text, then what json_number_text() makes of it: JSON numbers as they are, the rest strings. */
        static const char *const cases[][2] = {
                { "42", "42" }, { "0", "0" }, { "1712345678.000123", "1712345678.000123" },
                { "-1.5e+3", "-1.5e+3" }, { "007", "\"007\"" }, { "1.", "\"1.\"" }, { ".5", "\".5\"" },
                { "+1", "\"+1\"" }, { "", "\"\"" }, { "1e", "\"1e\"" }, { "0x10", "\"0x10\"" },
                { "NaN", "\"NaN\"" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check_str(out_of(write_number_text, cases[i][0]), cases[i][1]);
        /* A string that looks like a number stays a string. */
        check_str(str("42"), "\"42\"");
        check_str(str("007"), "\"007\"");
        check(json_is_number("10") && !json_is_number("01") && !json_is_number("-") && !json_is_number("1.e5"));
}

static void write_object(struct json_writer *w, const void *arg)
{
        json_begin_object(w);
        json_keyz(w, "seqnum");
        json_u64(w, 18446744073709551615ULL);
        json_keyz(w, "pid");
        json_i64(w, -1);
        json_keyz(w, "paused");
        json_bool(w, false);
        json_keyz(w, "uuid");
        json_null(w);
        json_keyz(w, "argv");
        json_begin_array(w);
        json_str(w, "/sbin/agent");
        json_str(w, "net");
        json_begin_object(w);
        json_end_object(w);
        json_end_array(w);
        json_keyz(w, "event");
        json_begin_object(w);
        json_key(w, "ACTION=add", 6);
        json_str(w, "add");
        json_keyz(w, "BAD");
        json_str(w, "\xff");
        json_end_object(w);
        json_end_object(w);
}

static void test_structure(void)
{
        check_str(out_of(write_object, NULL),
                  "{\"seqnum\":18446744073709551615,\"pid\":-1,\"paused\":false,\"uuid\":null,"
                  "\"argv\":[\"/sbin/agent\",\"net\",{}],\"event\":{\"ACTION\":\"add\",\"BAD\":[255]}}");
}

static void misuse_key_in_array(struct json_writer *w, const void *arg)
{
        json_begin_array(w);
        json_keyz(w, "k");
        json_end_array(w);
}

static void misuse_value_without_key(struct json_writer *w, const void *arg)
{
        json_begin_object(w);
        json_u64(w, 1);
        json_end_object(w);
}

static void misuse_unclosed(struct json_writer *w, const void *arg)
{
        json_begin_object(w);
        json_keyz(w, "k");
}

static void misuse_two_values(struct json_writer *w, const void *arg)
{
        json_u64(w, 1);
        json_u64(w, 2);
}

static void misuse_too_deep(struct json_writer *w, const void *arg)
{
        for (int i = 0; i <= JSON_DEPTH_MAX; i++)
                json_begin_array(w);
        for (int i = 0; i <= JSON_DEPTH_MAX; i++)
                json_end_array(w);
}

static void misuse_wrong_close(struct json_writer *w, const void *arg)
{
        json_begin_array(w);
        json_end_object(w);
}

static void nothing(struct json_writer *w, const void *arg)
{
}

static void test_misuse(void)
{
        check_str(out_of(misuse_key_in_array, NULL), "ERROR");
        check_str(out_of(misuse_value_without_key, NULL), "ERROR");
        check_str(out_of(misuse_unclosed, NULL), "ERROR");
        check_str(out_of(misuse_two_values, NULL), "ERROR");
        check_str(out_of(misuse_too_deep, NULL), "ERROR");
        check_str(out_of(misuse_wrong_close, NULL), "ERROR");
        check_str(out_of(nothing, NULL), "ERROR");
}

/* Every byte sequence of length 1-2 and a sample of 3-4: the validator agrees with a reference. */
static bool reference_valid(const unsigned char *p, size_t n)
{
        for (size_t i = 0; i < n;) {
                unsigned c = p[i], need, cp;

                if (c < 0x80) {
                        i++;
                        continue;
                }
                if (c >= 0xc0 && c < 0xe0)
                        need = 1, cp = c & 0x1f;
                else if (c >= 0xe0 && c < 0xf0)
                        need = 2, cp = c & 0x0f;
                else if (c >= 0xf0 && c < 0xf8)
                        need = 3, cp = c & 0x07;
                else
                        return false;
                if (i + need >= n) /* truncated */
                        return false;
                for (unsigned k = 1; k <= need; k++) {
                        if ((p[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = cp << 6 | (p[i + k] & 0x3f);
                }
                if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) || (need == 3 && cp < 0x10000))
                        return false; /* overlong */
                if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                        return false;
                i += need + 1;
        }
        return true;
}

static void test_exhaustive(void)
{
        unsigned char b[4];

        for (unsigned x = 0; x < 0x10000; x++) {
                b[0] = (unsigned char)(x >> 8);
                b[1] = (unsigned char)x;
                check(utf8_valid((char *)b, 2) == reference_valid(b, 2));
                check(utf8_valid((char *)b, 1) == reference_valid(b, 1));
        }
        for (unsigned x = 0xe00000; x < 0xf50000; x += 0x0101) {
                b[0] = (unsigned char)(x >> 16);
                b[1] = (unsigned char)(x >> 8);
                b[2] = (unsigned char)x;
                b[3] = 0x80 | (unsigned char)(x & 0x3f);
                check(utf8_valid((char *)b, 3) == reference_valid(b, 3));
                check(utf8_valid((char *)b, 4) == reference_valid(b, 4));
        }
}

int main(void)
{
        run_test(test_utf8_valid);
        run_test(test_utf8_invalid);
        run_test(test_controls);
        run_test(test_numbers);
        run_test(test_structure);
        run_test(test_misuse);
        run_test(test_exhaustive);
        return 0;
}
