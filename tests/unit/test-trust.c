/* SPDX-License-Identifier: MIT */
/*
 * The trust rule (shared/trust.h) on a tree of the test's own under /tmp:
 * the path is checked as given (a link in a directory others can write is
 * refused even when its target is trusted), links are walked by the rule,
 * every error refuses (loops, a walked path past PATH_MAX, a dangling link),
 * and the descriptor returned is the file that was checked.  The cases
 * that need another owner (a link or file of user nobody) run as root only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "shared/macro.h"
#include "shared/trust.h"
#include "test.h"
#include "test-dir.h"

#define NOBODY 65534

static char base[64];

static char *at(const char *rel)
{
        return test_dir_at(base, rel);
}

static void mkdir_mode(const char *rel, mode_t mode)
{
        check_int(mkdir(at(rel), 0700), 0);
        check_int(chmod(at(rel), mode), 0);
}

static void file_mode(const char *rel, mode_t mode, const char *content)
{
        int fd = open(at(rel), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        check(fd >= 0);
        check((size_t)write(fd, content, strlen(content)) == strlen(content));
        close(fd);
        check_int(chmod(at(rel), mode), 0);
}

/* trust_check_path() of @rel under the base: its return, with @why (may be NULL) checked. */
static void expect(const char *rel, bool dir, int want, const char *why)
{
        const char *got = NULL;
        struct stat st;
        int r = trust_check_path(at(rel), dir, &st, &got);

        if (r != want || (why && (!got || strcmp(got, why) != 0))) {
                fprintf(stderr, "%s: got %d (%s), want %d (%s)\n", rel, r, got ? got : "-", want, why ? why : "-");
                check(false);
        }
}

static void build_tree(void)
{
        mkdir_mode("trusted", 0755);
        mkdir_mode("open", 0777);
        mkdir_mode("sticky", 01777);
        file_mode("trusted/agent", 0755, "trusted agent\n");
        file_mode("trusted/gw", 0775, "group-writable\n");
        file_mode("open/agent", 0755, "planted\n");
        check_int(symlink(at("trusted/agent"), at("open/link")), 0);
        check_int(symlink(at("open/agent"), at("trusted/to-open")), 0);
        check_int(symlink("agent", at("trusted/rel")), 0);
        check_int(symlink("../open/agent", at("trusted/up-open")), 0);
        check_int(symlink("../trusted/agent", at("trusted/up-trusted")), 0);
        check_int(symlink(at("open"), at("trusted/open-dir")), 0);
        check_int(symlink("missing", at("trusted/dangling")), 0);
        check_int(mkfifo(at("trusted/fifo"), 0644), 0);
}

static void test_as_given(void)
{
        expect("trusted/agent", false, 0, NULL);
        expect("trusted", true, 0, NULL);
        expect("trusted/gw", false, -EPERM, "writable by group or others");
        expect("open", true, -EPERM, "writable by group or others");
        expect("open/agent", false, -EPERM, "in a directory others can write");
        /* The link itself lies where others can repoint it: its trusted target does not help. */
        expect("open/link", false, -EPERM, "in a directory others can write");
        expect("trusted/to-open", false, -EPERM, "link target in a directory others can write");
        expect("trusted/rel", false, 0, NULL);
        expect("trusted/up-open", false, -EPERM, "link target in a directory others can write");
        expect("trusted/up-trusted", false, 0, NULL);
        expect("trusted/open-dir/agent", false, -EPERM, "link target in a directory others can write");
        expect("trusted/./rel", false, 0, NULL);
        expect("trusted/../trusted/agent", false, 0, NULL);
        expect("trusted/agent", true, -EMEDIUMTYPE, "not a directory");
        expect("trusted", false, -EMEDIUMTYPE, "not a regular file");
        expect("trusted/fifo", false, -EMEDIUMTYPE, "not a regular file");
        expect("trusted/dangling", false, -ENOENT, NULL);
        expect("trusted/agent/x", false, -ENOTDIR, NULL);
        expect("trusted/none", false, -ENOENT, NULL);
        check_int(trust_check_path("relative/path", false, &(struct stat){ 0 }, &(const char *){ NULL }), -EINVAL);
}

/* Links in a loop, one too many, and a walk whose path outgrows PATH_MAX: refused, never "could not tell". */
static void test_errors_refuse(void)
{
        char name[32], target[32], *longer;
        size_t n;

        check_int(symlink("loop-b", at("trusted/loop-a")), 0);
        check_int(symlink("loop-a", at("trusted/loop-b")), 0);
        expect("trusted/loop-a", false, -ELOOP, NULL);

        /* chain-0 -> chain-1 -> ... -> chain-N -> agent: N+1 links. */
        for (int i = 0; i <= HP_TRUST_MAX_LINKS; i++) {
                snprintf(name, sizeof(name), "trusted/chain-%d", i);
                snprintf(target, sizeof(target), i == HP_TRUST_MAX_LINKS ? "agent" : "chain-%d", i + 1);
                check_int(symlink(target, at(name)), 0);
        }
        expect("trusted/chain-1", false, 0, NULL);         /* HP_TRUST_MAX_LINKS links */
        expect("trusted/chain-0", false, -ELOOP, NULL);    /* one more */

        /* Links whose targets add up past PATH_MAX: walked to the end and judged there, like the kernel does. */
        n = 3000;
        longer = malloc(n + 32);
        check(longer);
        for (size_t i = 0; i + 2 <= n; i += 2)
                memcpy(longer + i, "./", 2);
        strcpy(longer + n, "long-b");
        check_int(symlink(longer, at("trusted/long-a")), 0);
        strcpy(longer + n, "agent");
        check_int(symlink(longer, at("trusted/long-b")), 0);
        strcpy(longer + n, "long-d");
        check_int(symlink(longer, at("trusted/long-c")), 0);
        strcpy(longer + n, "../open/agent");
        check_int(symlink(longer, at("trusted/long-d")), 0);
        free(longer);
        expect("trusted/long-a", false, 0, NULL);
        expect("trusted/long-c", false, -EPERM, "link target in a directory others can write");
}

/* The descriptor is what was checked: readable, the file's content, and never a FIFO opened. */
static void test_open(void)
{
        char buf[64] = { 0 };
        struct stat st, fst;
        const char *why;
        int fd = -1;

        check_int(trust_open_at(AT_FDCWD, at("trusted/rel"), TRUST_READ, &fd, &st, &why), 0);
        check(read(fd, buf, sizeof(buf) - 1) > 0);
        check_str(buf, "trusted agent\n");
        check_int(fstat(fd, &fst), 0);
        check(fst.st_ino == st.st_ino);
        close(fd);

        fd = -1;
        check_int(trust_open_at(AT_FDCWD, at("trusted/fifo"), TRUST_READ, &fd, &st, &why), -EMEDIUMTYPE);
        check_int(fd, -1);
        check_int(trust_open_at(AT_FDCWD, at("open/link"), TRUST_READ, &fd, &st, &why), -EPERM);
        check_int(fd, -1);

        /* Relative to a directory descriptor, as the hotplug.d walk does. */
        int dfd = open(at("trusted"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        check(dfd >= 0);
        check_int(trust_open_at(dfd, "up-trusted", 0, &fd, &st, &why), 0);
        check(fd >= 0);
        close(fd);
        check_int(trust_open_at(dfd, "..", TRUST_DIR | TRUST_READ, &fd, &st, &why), 0);
        close(fd);
        /* A directory to read, named by a link: followed by the rule, not taken for a file. */
        check_int(symlink(".", at("trusted/self")), 0);
        fd = -1;
        check_int(trust_open_at(dfd, "self", TRUST_DIR | TRUST_READ, &fd, &st, &why), 0);
        check(fd >= 0);
        close(fd);
        check_int(trust_open_at(dfd, "open-dir", TRUST_DIR | TRUST_READ, &fd, &st, &why), -EPERM);
        check_str(why, "link target writable by group or others");
        check_int(trust_open_at(dfd, "agent", TRUST_DIR | TRUST_READ, &fd, &st, &why), -EMEDIUMTYPE);
        check_str(why, "not a directory");
        check_int(trust_check_at(dfd, "up-open", false, &st, &why), -EPERM);
        close(dfd);
}

/* Another user's link or file, also in a sticky directory where they may create entries. */
static void test_other_owner(void)
{
        if (geteuid() != 0) {
                /* The other cases ran: say what did not, and fail where every test must run. */
                check_int(test_skip("not root: no file of another user can be made"), 77);
                return;
        }
        file_mode("trusted/nobodys", 0755, "nobody's\n");
        check_int(chown(at("trusted/nobodys"), NOBODY, NOBODY), 0);
        expect("trusted/nobodys", false, -EPERM, "not owned by root");
        check_int(symlink("nobodys", at("trusted/to-nobodys")), 0);
        expect("trusted/to-nobodys", false, -EPERM, "link target not owned by root");

        /* In /tmp-like directories anyone may make a link: one of nobody's leads to root's agent. */
        check_int(symlink(at("trusted/agent"), at("sticky/nobodys-link")), 0);
        check_int(lchown(at("sticky/nobodys-link"), NOBODY, NOBODY), 0);
        expect("sticky/nobodys-link", false, -EPERM, "symbolic link not owned by root");
        check_int(symlink(at("trusted/agent"), at("sticky/roots-link")), 0);
        expect("sticky/roots-link", false, 0, NULL);
        mkdir_mode("sticky/nobodys-dir", 0755);
        check_int(chown(at("sticky/nobodys-dir"), NOBODY, NOBODY), 0);
        file_mode("sticky/nobodys-dir/agent", 0755, "x\n");
        expect("sticky/nobodys-dir/agent", false, -EPERM, "in a directory others can write");
}

int main(void)
{
        test_dir_make(base, sizeof(base), "test-trust");
        build_tree();

        run_test(test_as_given);
        run_test(test_errors_refuse);
        run_test(test_open);
        run_test(test_other_owner);

        check_int(test_dir_remove(base), 0);
        return 0;
}
