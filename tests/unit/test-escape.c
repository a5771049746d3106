/* SPDX-License-Identifier: MIT */
/* escape_bytes()/escape_cstr(): what is escaped, NUL, and truncation. */
#include <string.h>

#include "shared/escape.h"
#include "test.h"

static const char *esc(const char *s, size_t len, size_t size)
{
        static char out[512];

        check(size <= sizeof(out) - 1);
        memset(out, '#', sizeof(out));
        escape_bytes(s, len, out, size);
        check(strlen(out) < size);
        check(out[size] == '#');            /* nothing written past @size */
        return out;
}

static void test_plain(void)
{
        char out[64];

        check_str(esc("hello world ~!", 14, 64), "hello world ~!");
        check_str(esc("", 0, 64), "");
        check(escape_cstr("abc", out, sizeof(out)) == out);
        check_str(out, "abc");
        check_str(escape_cstr(NULL, out, sizeof(out)), "");
        check_str(escape_bytes(NULL, 0, out, sizeof(out)), "");
}

static void test_escaped(void)
{
        check_str(esc("a\nb", 3, 64), "a\\x0ab");
        check_str(esc("\t\r\x1b[0m", 6, 64), "\\x09\\x0d\\x1b[0m");
        check_str(esc("back\\slash", 10, 64), "back\\x5cslash");
        check_str(esc("\x7f\x80\xff", 3, 64), "\\x7f\\x80\\xff");
        check_str(esc("\x1f \x7e", 3, 64), "\\x1f ~");
        /* NUL is escaped, and bytes after it are kept. */
        check_str(esc("a\0b", 3, 64), "a\\x00b");
        check_str(esc("KEY=1\0KEY=2\0", 12, 64), "KEY=1\\x00KEY=2\\x00");
}

static void test_truncation(void)
{
        /* Exactly fits (5 chars + NUL): no marker. */
        check_str(esc("abcde", 5, 6), "abcde");
        /* One more byte: cut, and "..." fits with NUL. */
        check_str(esc("abcdef", 6, 6), "ab...");
        check_str(esc("abcdefghij", 10, 8), "abcd...");
        /* Never inside an escape: "\x0a" does not fit before "...", so it goes whole. */
        check_str(esc("ab\ncdef", 7, 8), "ab...");
        check_str(esc("ab\ncdef", 7, 10), "ab\\x0a...");
        check_str(esc("ab\ncdef", 7, 11), "ab\\x0acdef");
        check_str(esc("\n\n\n", 3, 12), "\\x0a\\x0a...");
        check_str(esc("\n\n\n", 3, 13), "\\x0a\\x0a\\x0a");
        /* An escape that exactly fits at the end needs no marker. */
        check_str(esc("a\n", 2, 6), "a\\x0a");
        check_str(esc("a\n", 2, 5), "a...");
        /* Tiny buffers. */
        check_str(esc("abcdef", 6, 4), "...");
        check_str(esc("abcdef", 6, 3), "..");
        check_str(esc("abcdef", 6, 2), ".");
        check_str(esc("abcdef", 6, 1), "");
        check_str(esc("a", 1, 2), "a");
        check_str(esc("\n", 1, 4), "...");
        {
                char out[1] = { '#' };
                escape_bytes("abc", 3, out, 0);   /* size 0: nothing written */
                check(out[0] == '#');
        }
        /* Long input, long output. */
        {
                static char in[4096], out[300];
                memset(in, '\x01', sizeof(in));
                escape_bytes(in, sizeof(in), out, sizeof(out));
                check_int(strlen(out), 296 + 3);
                check(strcmp(out + 296, "...") == 0);
                check(strncmp(out + 292, "\\x01", 4) == 0);
        }
}

int main(void)
{
        run_test(test_plain);
        run_test(test_escaped);
        run_test(test_truncation);
        return 0;
}
