/* SPDX-License-Identifier: MIT */
/*
 * envbuf: both bounds, failures leave the builder untouched, replacement,
 * key rules, and values that point into the builder itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shared/envbuf.h"
#include "shared/macro.h"
#include "test.h"

/* The entries joined with '|' for compact comparisons. */
static const char *dump(const struct envbuf *e)
{
        static char out[HP_ENV_ADD_MAX_BYTES + 1];
        size_t o = 0;

        for (unsigned i = 0; i < e->n; i++) {
                size_t l = strlen(envbuf_entry(e, i));
                memcpy(out + o, envbuf_entry(e, i), l);
                o += l;
                out[o++] = '|';
        }
        out[o] = '\0';
        return out;
}

/* Structural invariants: entries back to back, used adds up. */
static void check_packed(const struct envbuf *e)
{
        size_t o = 0;

        for (unsigned i = 0; i < e->n; i++) {
                check_int(e->off[i], o);
                o += strlen(envbuf_entry(e, i)) + 1;
        }
        check_int(e->used, o);
}

static void test_basic(void)
{
        struct envbuf e;

        envbuf_init(&e);
        check_int(e.n, 0);
        check_int(e.used, 0);
        check(envbuf_get(&e, "A") == NULL);
        check_int(envbuf_add(&e, "A", "1"), 0);
        check_int(envbuf_add(&e, "lower_9", "x y\nz"), 0);
        check_int(envbuf_add(&e, "_", ""), 0);
        check_str(dump(&e), "A=1|lower_9=x y\nz|_=|");
        check_str(envbuf_get(&e, "A"), "1");
        check_str(envbuf_get(&e, "lower_9"), "x y\nz");
        check_str(envbuf_get(&e, "_"), "");
        check(envbuf_get(&e, "lower") == NULL);
        check(envbuf_get(&e, "lower_99") == NULL);
        check_packed(&e);

        check_int(envbuf_addf(&e, "N", "%d-%s", 42, "x"), 0);
        check_str(envbuf_get(&e, "N"), "42-x");
}

static void test_bad_keys(void)
{
        static const char *const bad[] = { "", "1A", "A=B", "A B", "A-B", "A.B", "\xc3\x84", "A\n" };
        struct envbuf e;

        envbuf_init(&e);
        check_int(envbuf_add(&e, "K", "v"), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                check_int(envbuf_add(&e, bad[i], "v"), -EINVAL);
                check_int(envbuf_addf(&e, bad[i], "%s", "v"), -EINVAL);
                check(envbuf_get(&e, bad[i]) == NULL);
        }
        check_int(envbuf_add(&e, NULL, "v"), -EINVAL);
        check_int(envbuf_add(&e, "K", NULL), -EINVAL);
        check(envbuf_get(&e, NULL) == NULL);
        check_str(dump(&e), "K=v|");

        check(env_key_valid("A1_b", 4));
        check(env_key_valid("A=B", 1));            /* only @len bytes count */
        check(!env_key_valid("A=B", 3));
        check(!env_key_valid("9", 1));
        check(!env_key_valid("A", 0));

        /* A key holding '=' must not match inside an entry "K=v=w". */
        check_int(envbuf_add(&e, "K", "v=w"), 0);
        check(envbuf_get(&e, "K=v") == NULL);
}

/* Variables that change how programs are loaded or how shells behave. */
static void test_refused_keys(void)
{
        static const char *const refused[] = {
                "HOME", "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_DEBUG", "LD_",
                "GLIBC_TUNABLES", "MALLOC_CHECK_", "MALLOC_TRACE", "MALLOC_", "GCONV_PATH", "GETCONF_DIR",
                "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF",
                "RES_OPTIONS", "TMPDIR", "TZDIR", "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS",
                "PS4", "CDPATH", "GLOBIGNORE", "EXECIGNORE", "BASH_XTRACEFD", "POSIXLY_CORRECT",
                "BASH_FUNC_x", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PERL5LIB", "PERLLIB",
                "PERL5OPT", "RUBYLIB", "RUBYOPT", "NODE_OPTIONS", "NODE_PATH", "OPENSSL_CONF",
                "OPENSSL_MODULES", "OPENSSL_ENGINES", "PYTHONUSERBASE", "PERL5DB",
                /* Round two (issue 24). */
                "LUA_INIT", "LUA_INIT_5_4", "LUA_PATH", "LUA_CPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
                "JDK_JAVA_OPTIONS", "CLASSPATH", "PYTHONWARNINGS", "PYTHONINSPECT", "PYTHONBREAKPOINT",
                "SSLKEYLOGFILE", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXEC_PATH", "GIT_CONFIG_PARAMETERS",
                "LESSOPEN", "LESSCLOSE", "PHPRC", "PHP_INI_SCAN_DIR", "TCLLIBPATH", "KRB5_CONFIG", "TERMINFO",
                "TERMINFO_DIRS", "ZDOTDIR", "GEM_PATH", "GEM_HOME", "SSH_ASKPASS", "PAGER", "EDITOR", "VISUAL",
        };
        static const char *const passed[] = {
                "ACTION", "DEVPATH", "SUBSYSTEM", "SEQNUM", "DEVPATH_OLD", "MAJOR", "MINOR", "DEVNAME",
                "DEVTYPE", "DRIVER", "MODALIAS", "INTERFACE", "IFINDEX", "PRODUCT", "TYPE", "FIRMWARE",
                "SYNTH_UUID", "SYNTH_ARG_LD_PRELOAD", "SYNTH_ARG_IFS", "PHYSDEVPATH", "PHYSDEVBUS",
                "PHYSDEVDRIVER", "DEVICE", "HOTPLUGD_RESYNC", "LD", "LDX", "ENVX", "XENV", "IFS2",
                "PATHS", "HOMEDIR", "MALLOC", "TMPDIRS", "ld_preload", "Path", "home", "PS1", "TZ",
                "LANG", "LC_ALL", "RESOLV_HOST_CONFX", "RESOLV_HOST_CON", "POSIXLY_CORRECT_",
                "OPENSSL_ENGINESX", "E", "I", "P", "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
                "LUA", "GIT", "LC_", "LANGUAGES", "TERM", "JAVA_HOME", "SSLKEYLOGFILES",
        };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                if (!env_key_refused(refused[i], strlen(refused[i])))
                        fprintf(stderr, "   %s passed\n", refused[i]);
                check(env_key_refused(refused[i], strlen(refused[i])));
        }
        for (size_t i = 0; i < ELEMENTSOF(passed); i++) {
                if (env_key_refused(passed[i], strlen(passed[i])))
                        fprintf(stderr, "   %s refused\n", passed[i]);
                check(!env_key_refused(passed[i], strlen(passed[i])));
        }
        /* Only @len bytes count, so an entry "KEY=VALUE" can be asked directly. */
        check(env_key_refused("IFS= ", 3));
        check(env_key_refused("LD_PRELOAD=/x.so", 10));
        check(!env_key_refused("IFS= ", 2));
        check(!env_key_refused("LD_PRELOAD", 2));
        check(env_key_refused("ENVIRONMENT", 3));
        check(!env_key_refused("ENVIRONMENT", 4));
        check(!env_key_refused("", 0));
        check(!env_key_refused(NULL, 0));
        /* The locale variables: refused as entries whose value is a path, passed otherwise. */
        check(env_key_refused("LC_ALL=/tmp/evil", 6));
        check(env_key_refused("LANG=../../tmp/evil", 4));
        check(env_key_refused("LANGUAGE=en:/tmp/x", 8));
        check(env_key_refused("LC_CTYPE=/tmp/x", 8));
        check(!env_key_refused("LC_ALL=C.UTF-8", 6));
        check(!env_key_refused("LANG=de_DE.UTF-8", 4));
        check(!env_key_refused("LC_ALL=/tmp/evil", 5));
        check(!env_key_refused("LANGX=/tmp/x", 5));
}

static void test_var_bound(void)
{
        struct envbuf e, saved;
        char k[16];

        envbuf_init(&e);
        for (unsigned i = 0; i < HP_ENV_ADD_MAX_VARS; i++) {
                snprintf(k, sizeof(k), "V%u", i);
                check_int(envbuf_add(&e, k, "x"), 0);
        }
        check_int(e.n, HP_ENV_ADD_MAX_VARS);
        saved = e;
        check_int(envbuf_add(&e, "ONE_MORE", "x"), -ENOMEM);
        check_int(envbuf_addf(&e, "ONE_MORE", "%s", "x"), -ENOMEM);
        check(memcmp(&e, &saved, sizeof(e)) == 0);
        /* Replacing does not need a new slot. */
        check_int(envbuf_add(&e, "V0", "y"), 0);
        check_int(e.n, HP_ENV_ADD_MAX_VARS);
        check_str(envbuf_get(&e, "V0"), "y");
        check_packed(&e);
}

static void test_byte_bound(void)
{
        static char big[HP_ENV_ADD_MAX_BYTES + 8];
        struct envbuf e, saved;

        /* One entry of exactly HP_ENV_ADD_MAX_BYTES: "B=" + value + NUL. */
        envbuf_init(&e);
        memset(big, 'b', sizeof(big));
        big[HP_ENV_ADD_MAX_BYTES - 3] = '\0';
        check_int(envbuf_add(&e, "B", big), 0);
        check_int(e.used, HP_ENV_ADD_MAX_BYTES);
        saved = e;
        check_int(envbuf_add(&e, "C", ""), -ENOMEM);
        check(memcmp(&e, &saved, sizeof(e)) == 0);

        /* One byte more does not fit even in an empty builder. */
        envbuf_init(&e);
        big[HP_ENV_ADD_MAX_BYTES - 3] = 'b';
        big[HP_ENV_ADD_MAX_BYTES - 2] = '\0';
        check_int(envbuf_add(&e, "B", big), -ENOMEM);
        check_int(envbuf_addf(&e, "B", "%s", big), -ENOMEM);
        check_int(e.used, 0);
        check_int(e.n, 0);

        /* A value far beyond the bound (vsnprintf truncates) is -ENOMEM too. */
        check_int(envbuf_addf(&e, "B", "%s%s", big, big), -ENOMEM);
        check_int(e.n, 0);
}

static void test_replace(void)
{
        static char val[HP_ENV_ADD_MAX_BYTES];
        struct envbuf e, saved;
        size_t fits;

        envbuf_init(&e);
        check_int(envbuf_add(&e, "A", "1"), 0);
        check_int(envbuf_add(&e, "B", "2"), 0);
        check_int(envbuf_add(&e, "C", "3"), 0);
        check_int(envbuf_add(&e, "A", "one"), 0);     /* replaced, moves to the end */
        check_str(dump(&e), "B=2|C=3|A=one|");
        check_packed(&e);
        check_int(envbuf_add(&e, "C", ""), 0);
        check_str(dump(&e), "B=2|A=one|C=|");
        check_packed(&e);

        /* A replacement that does not fit fails and keeps the old entry. */
        /* Replacing B frees 4 bytes ("B=2\0"); the new entry needs "B=" + len + NUL. */
        fits = HP_ENV_ADD_MAX_BYTES - (e.used - 4u) - 3u;
        memset(val, 'v', sizeof(val) - 1);
        val[fits + 1] = '\0';
        saved = e;
        check_int(envbuf_add(&e, "B", val), -ENOMEM);
        check(memcmp(&e, &saved, sizeof(e)) == 0);
        check_str(envbuf_get(&e, "B"), "2");
        /* ... but one byte shorter fits exactly, because the old entry's room is reused. */
        val[fits] = '\0';
        check_int(envbuf_add(&e, "B", val), 0);
        check_int(e.used, HP_ENV_ADD_MAX_BYTES);
        check_int(e.n, 3);
        check_packed(&e);
}

static void test_value_from_self(void)
{
        struct envbuf e;

        /* The value lives after the replaced entry: removal shifts it. */
        envbuf_init(&e);
        check_int(envbuf_add(&e, "A", "old"), 0);
        check_int(envbuf_add(&e, "B", "from-b"), 0);
        check_int(envbuf_add(&e, "A", envbuf_get(&e, "B")), 0);
        check_str(dump(&e), "B=from-b|A=from-b|");

        /* The value is the replaced entry's own value. */
        check_int(envbuf_add(&e, "B", envbuf_get(&e, "B") + 5), 0);
        check_str(dump(&e), "A=from-b|B=b|");
        check_packed(&e);
}

int main(void)
{
        run_test(test_basic);
        run_test(test_bad_keys);
        run_test(test_refused_keys);
        run_test(test_var_bound);
        run_test(test_byte_bound);
        run_test(test_replace);
        run_test(test_value_from_self);
        return 0;
}
