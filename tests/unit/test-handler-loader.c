/* SPDX-License-Identifier: MIT */
/*
 * External handlers through dlopen: the example handler loaded from a
 * root-owned 0755 file adds its variables and renames argv[1]; wrong ABI,
 * wrong size, missing symbol, failing init, world- or group-writable and
 * non-root files are refused with a log line while the chain keeps
 * working; a handler that overflows the environment aborts that event
 * only; a handler whose hook fails is disabled and its additions undone.
 * Needs root (chown); skipped otherwise.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "handler-test-util.h"
#include "shared/log.h"
#include "shared/macro.h"

static struct run R;
static char dir[] = "/tmp/hotplugd-handlers.XXXXXX";
static char logfile[] = "/tmp/hotplugd-handlers-log.XXXXXX";

static void install(const char *src, const char *name, mode_t mode, uid_t uid)
{
        char cmd[2048], dst[512];

        snprintf(dst, sizeof(dst), "%s/%s", dir, name);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, dst);
        check_int(system(cmd), 0);
        check_int(chown(dst, uid, 0), 0);
        check_int(chmod(dst, mode), 0);
}

static void install_mod(const char *variant, const char *name, mode_t mode, uid_t uid)
{
        char src[512];

        snprintf(src, sizeof(src), "%s/handler-mod-%s.so", MOD_DIR, variant);
        install(src, name, mode, uid);
}

/* Build a chain from @dir with stderr captured; returns the captured log (static). */
static const char *new_chain(struct handler_chain **c)
{
        static char log[16384];
        int fd = mkstemp(logfile), saved = dup(STDERR_FILENO);
        struct handler_config cfg = { .sysfs_root = "/sys", .handler_dir = dir };
        ssize_t n;

        check(fd >= 0 && saved >= 0);
        fflush(stderr);
        dup2(fd, STDERR_FILENO);
        check_int(handler_chain_new(&cfg, c), 0);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
        n = pread(fd, log, sizeof(log) - 1, 0);
        close(fd);
        unlink(logfile);
        strcpy(logfile, "/tmp/hotplugd-handlers-log.XXXXXX");
        log[n > 0 ? n : 0] = '\0';
        fprintf(stderr, "%s", log);
        return log;
}

static bool loaded(const struct handler_chain *c, const char *file_suffix)
{
        struct handler_info hi;

        for (size_t i = 0; handler_chain_info(c, i, &hi) >= 0; i++)
                if (hi.file && strlen(hi.file) >= strlen(file_suffix) &&
                    strcmp(hi.file + strlen(hi.file) - strlen(file_suffix), file_suffix) == 0)
                        return true;
        return false;
}

static void check_refused(const char *log, const char *file, const char *why)
{
        char needle[512];

        snprintf(needle, sizeof(needle), "%s/%s", dir, file);
        const char *p = strstr(log, needle);
        check(p);
        check(strstr(p, why));
}

static void test_refusals(void)
{
        struct handler_chain *c = NULL;
        const char *log;

        install(EXAMPLE_SO, "50-example.so", 0755, 0);
        install_mod("bad-abi", "60-bad-abi.so", 0755, 0);
        install_mod("bad-size", "61-bad-size.so", 0755, 0);
        install_mod("fail-init", "62-fail-init.so", 0755, 0);
        install_mod("nosym", "63-nosym.so", 0755, 0);
        install(EXAMPLE_SO, "64-world-writable.so", 0757, 0);
        install(EXAMPLE_SO, "65-group-writable.so", 0775, 0);
        install(EXAMPLE_SO, "66-not-root.so", 0755, 65534);
        install(EXAMPLE_SO, "not-a-module.txt", 0755, 0);

        log = new_chain(&c);
        check(loaded(c, "/50-example.so"));
        check_refused(log, "60-bad-abi.so", "ABI 2, this hotplugd has ABI 1; refused");
        check_refused(log, "61-bad-size.so", "struct size");
        check_refused(log, "62-fail-init.so", "init() failed");
        check(strstr(log, "handler mod: refusing to start")); /* its own log line, through the host */
        check_refused(log, "63-nosym.so", "no symbol hotplugd_handler_v1");
        check_refused(log, "64-world-writable.so", "writable by group or others");
        check_refused(log, "65-group-writable.so", "writable by group or others");
        check_refused(log, "66-not-root.so", "not owned by root");
        for (const char *const *f = (const char *const[]){ "60-", "61-", "62-", "63-", "64-", "65-", "66-", NULL }; *f;
             f++) {
                char suffix[16];
                snprintf(suffix, sizeof(suffix), "/%s", *f);
                for (size_t i = 0; i < handler_chain_count(c); i++) {
                        struct handler_info hi;
                        check_int(handler_chain_info(c, i, &hi), 0);
                        check(!hi.file || !strstr(hi.file, suffix));
                }
        }
        check(!strstr(log, "not-a-module"));

        /* The chain serves: the example renames argv[1] and adds its variables. */
        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", "INTERFACE=lo", NULL), HANDLER_RUN);
        check_str(R.ev->name, "net-virtual");
        check_str(R.trace.named_by, "example");
        check_str(agent_env(&R, "EXAMPLE_HANDLER"), "1");
        check_str(agent_env(&R, "EXAMPLE_MTU"), "65536");
        /* Not its subsystem: untouched. */
        check_int(run_event(c, &R, "change", "/devices/virtual/block/loop0", "block", NULL), HANDLER_RUN);
        check_str(R.ev->name, "block");
        check(!agent_env(&R, "EXAMPLE_HANDLER"));
        run_release(&R);
        handler_chain_free(c);
}

/*
 * The loader's dlopen() goes through this one: when swap_name is set, the
 * file of that name is replaced by an untrusted one (not root's, mode 0777)
 * just before the library is mapped: the window between the check and the
 * load.  The loader must map the file it checked, not what the name holds now.
 */
static const char *swap_name;
static char swap_src[512];

void *dlopen(const char *file, int flags)
{
        static void *(*real)(const char *, int);

        if (!real) {
                void *sym = dlsym(RTLD_NEXT, "dlopen");
                memcpy(&real, &sym, sizeof(real));
        }
        if (swap_name && file) {
                char dst[512], tmp[520], cmd[4096];

                snprintf(dst, sizeof(dst), "%s/%s", dir, swap_name);
                snprintf(tmp, sizeof(tmp), "%s.new", dst);
                snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chown 65534 '%s' && chmod 0777 '%s' && mv '%s' '%s'",
                         swap_src, tmp, tmp, tmp, tmp, dst);
                check_int(system(cmd), 0);
                swap_name = NULL;
        }
        return real(file, flags);
}

static void test_checked_file_is_loaded(void)
{
        struct handler_chain *c = NULL;
        struct handler_info hi;
        const char *log;
        char cmd[600];

        snprintf(cmd, sizeof(cmd), "rm -f '%s'/*", dir);
        check_int(system(cmd), 0);
        install(EXAMPLE_SO, "50-example.so", 0755, 0);
        snprintf(swap_src, sizeof(swap_src), "%s/handler-mod-error.so", MOD_DIR);
        swap_name = "50-example.so";
        log = new_chain(&c);
        check(!swap_name); /* the swap happened */
        (void)log;
        /* What runs is the example that passed the checks, not the swapped-in module. */
        check_int((int)handler_chain_count(c) > 0, 1);
        check(loaded(c, "/50-example.so"));
        for (size_t i = 0; handler_chain_info(c, i, &hi) >= 0; i++)
                if (hi.file && strstr(hi.file, "/50-example.so"))
                        check_str(hi.id, "example");
        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "EXAMPLE_HANDLER"), "1");
        check(!agent_env(&R, "MOD_PARTIAL"));
        run_release(&R);
        handler_chain_free(c);
}

static void test_unsafe_directory(void)
{
        struct handler_chain *c = NULL;
        const char *log;

        check_int(chmod(dir, 0777), 0);
        log = new_chain(&c);
        check(strstr(log, "writable by group or others"));
        check(strstr(log, "no handler loaded from it"));
        check(!loaded(c, "/50-example.so"));
        check_int(chmod(dir, 0755), 0);
        handler_chain_free(c);

        /* The whole path as given: the directory reached through a link others can repoint. */
        char saved[sizeof(dir)], open_dir[] = "/tmp/hpo.XXXXXX";

        check(mkdtemp(open_dir));
        check_int(chmod(open_dir, 0777), 0);
        memcpy(saved, dir, sizeof(dir));
        check((size_t)snprintf(dir, sizeof(dir), "%s/h", open_dir) < sizeof(dir));
        check_int(symlink(saved, dir), 0);
        c = NULL;
        log = new_chain(&c);
        check(strstr(log, "in a directory others can write"));
        check(strstr(log, "no handler loaded from it"));
        check(!loaded(c, "/50-example.so"));
        handler_chain_free(c);
        check_int(unlink(dir), 0);
        check_int(rmdir(open_dir), 0);
        memcpy(dir, saved, sizeof(dir));
}

static void test_overflow_and_errors(void)
{
        struct handler_chain *c = NULL;
        const char *log;
        char cmd[600];
        struct handler_info hi;

        snprintf(cmd, sizeof(cmd), "rm -f '%s'/*", dir);
        check_int(system(cmd), 0);
        install_mod("overflow", "10-overflow.so", 0755, 0);
        install_mod("error", "20-error.so", 0755, 0);
        install(EXAMPLE_SO, "30-example.so", 0755, 0);
        log = new_chain(&c);
        check(loaded(c, "/10-overflow.so") && loaded(c, "/20-error.so") && loaded(c, "/30-example.so"));
        (void)log;

        /* The failing handler is disabled on its first event, its addition undone, the event goes on. */
        log_open(LOG_TARGET_STDERR, "test");
        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", NULL), HANDLER_RUN);
        check(!agent_env(&R, "MOD_PARTIAL"));
        check_str(agent_env(&R, "MOD_OVERFLOW_SEEN"), "no");
        check_str(agent_env(&R, "EXAMPLE_HANDLER"), "1");
        for (size_t i = 0; handler_chain_info(c, i, &hi) >= 0; i++)
                check(hi.disabled == (hi.file && strstr(hi.file, "20-error.so") != NULL));

        /* Overflow: this event only is aborted; the handler stays and the next event is fine. */
        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", "OVERFLOW=1", NULL), -ENOMEM);
        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "MOD_OVERFLOW_SEEN"), "no");
        check_str(agent_env(&R, "EXAMPLE_HANDLER"), "1");
        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", "OVERFLOW=1", NULL), -ENOMEM);
        run_release(&R);
        handler_chain_free(c);
}

/* An external handler's LD_PRELOAD, BASH_ENV, IFS or PATH is accepted by the
 * chain (the handler is not disabled) but never reaches the agent. */
static void test_refused_additions(void)
{
        struct handler_chain *c = NULL;
        const char *refused[SPAWN_ENV_MAX];
        struct handler_info hi;
        char cmd[600];
        size_t n;

        snprintf(cmd, sizeof(cmd), "rm -f '%s'/*", dir);
        check_int(system(cmd), 0);
        install_mod("loader-vars", "10-loader-vars.so", 0755, 0);
        (void)new_chain(&c);
        check(loaded(c, "/10-loader-vars.so"));

        check_int(run_event(c, &R, "change", "/devices/virtual/net/lo", "net", NULL), HANDLER_RUN);
        check_str(envbuf_get(&R.env, "LD_PRELOAD"), "/tmp/evil.so");
        check_str(agent_env(&R, "MOD_LOADED"), "1");
        check(!agent_env(&R, "LD_PRELOAD") && !agent_env(&R, "BASH_ENV") && !agent_env(&R, "IFS"));
        check_str(agent_env(&R, "PATH"), "/sbin:/bin:/usr/sbin:/usr/bin");
        for (size_t i = 0; handler_chain_info(c, i, &hi) >= 0; i++)
                check(!hi.disabled);
        n = spawn_env_refused(R.ev, refused, ELEMENTSOF(refused));
        check_int(n, 4);
        check_str(refused[0], "LD_PRELOAD=/tmp/evil.so");
        check_str(refused[1], "BASH_ENV=/tmp/evil.sh");
        check_str(refused[2], "IFS=/");
        check_str(refused[3], "PATH=/tmp");
        run_release(&R);
        handler_chain_free(c);
}

int main(void)
{
        if (geteuid() != 0)
                return test_skip("needs root (handler files must be root-owned)");
        check(mkdtemp(dir));
        check_int(chmod(dir, 0755), 0);
        run_test(test_refusals);
        run_test(test_unsafe_directory);
        run_test(test_overflow_and_errors);
        run_test(test_refused_additions);
        run_test(test_checked_file_is_loaded);
        snprintf(R.buf, sizeof(R.buf), "rm -rf '%s'", dir);
        check_int(system(R.buf), 0);
        return 0;
}
