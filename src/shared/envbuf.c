/* SPDX-License-Identifier: MIT */
/*
 * Bounded "KEY=VALUE\0" builder.  Invariants: entries lie back to back in
 * data[0..used) in the order of off[0..n); no key appears twice; a call that
 * fails leaves the builder exactly as it was.
 */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "shared/envbuf.h"
#include "shared/macro.h"

int env_key_valid(const char *key, size_t len)
{
        if (!key || len == 0 || (key[0] >= '0' && key[0] <= '9'))
                return 0;
        for (size_t i = 0; i < len; i++) {
                char c = key[i];
                if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                        return 0;
        }
        return 1;
}

/* Keys no agent gets (hotplugd(8), ENVIRONMENT): the kernel sends none of
 * them, so refusing them costs a real event nothing. */
static const char *const refused_keys[] = {
        /* Fixed by the agent contract. */
        "HOME", "PATH",
        /* What glibc itself drops for set-user-ID programs (unsecvars.h):
         * they load code, read files or change where files are made. */
        "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "NIS_PATH",
        "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR",
        /* Read by shells at start or while parsing (bash, dash, POSIX sh). */
        "BASH_ENV", "ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "CDPATH", "GLOBIGNORE", "EXECIGNORE",
        "BASH_XTRACEFD", "POSIXLY_CORRECT",
        /* Code loaded by interpreters and libraries at start. */
        "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PERL5LIB", "PERLLIB", "PERL5OPT",
        "PERL5DB", "RUBYLIB", "RUBYOPT", "NODE_OPTIONS", "NODE_PATH", "OPENSSL_CONF", "OPENSSL_MODULES",
        "OPENSSL_ENGINES", "PYTHONWARNINGS", "PYTHONINSPECT", "PYTHONBREAKPOINT", "PYTHONEXECUTABLE",
        "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "PHPRC", "PHP_INI_SCAN_DIR",
        "TCLLIBPATH", "TCL_LIBRARY", "GEM_PATH", "GEM_HOME", "RUBYSHELL",
        /* Files other programs read or write, or commands they run, on the agent's behalf. */
        "SSLKEYLOGFILE", "LESSOPEN", "LESSCLOSE", "LESSKEYIN", "KRB5_CONFIG", "KRB5_KDC_PROFILE", "KRB5CCNAME",
        "TERMINFO", "TERMINFO_DIRS", "TERMCAP", "ZDOTDIR", "SSH_ASKPASS", "PAGER", "EDITOR", "VISUAL",
        "BROWSER",
};

/* Whole families: the dynamic loader's LD_*, glibc's MALLOC_*, bash's exported functions, Lua's
 * LUA_INIT/LUA_PATH (and their _5_x forms), git's GIT_* (GIT_SSH_COMMAND, GIT_EXEC_PATH, ...). */
static const char *const refused_prefixes[] = { "LD_", "MALLOC_", "BASH_FUNC_", "LUA_", "GIT_" };

/* The locale variables: a value with a '/' makes glibc load locale files from that path. */
static bool locale_path(const char *entry, size_t len)
{
        if (entry[len] != '=' || !strchr(entry + len + 1, '/'))
                return false;
        return (len == 4 && memcmp(entry, "LANG", 4) == 0) || (len == 8 && memcmp(entry, "LANGUAGE", 8) == 0) ||
               (len > 3 && memcmp(entry, "LC_", 3) == 0);
}

/* @key's first @len bytes against the NUL-terminated @name, as strcmp() orders them. */
static int key_cmp(const char *key, size_t len, const char *name)
{
        int c = strncmp(key, name, len);

        return c != 0 ? c : name[len] != '\0' ? -1 : 0;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key's bit in the filter of env_key_refused(): from its length and its first and last bytes. */
static unsigned key_bit(const char *key, size_t len)
{
        return ((unsigned)len * 31u + (unsigned char)key[0] + (unsigned char)key[len - 1] * 7u) & 255u;
}

int env_key_refused(const char *key, size_t len)
{
        /* This runs for every key of every event, twice (queueing and
         * spawning), and the kernel sends none of the refused keys: a
         * 256-bit filter of them answers almost every call, then
         * refused_keys, sorted once, are searched. */
        static const char *sorted[ELEMENTSOF(refused_keys)];
        static uint64_t filter[4];
        static bool ready;
        size_t lo = 0, hi = ELEMENTSOF(sorted);
        unsigned bit;

        if (!key || len == 0)
                return 0;
        if (!ready) {
                memcpy(sorted, refused_keys, sizeof(sorted));
                qsort(sorted, ELEMENTSOF(sorted), sizeof(sorted[0]), name_cmp);
                for (size_t i = 0; i < ELEMENTSOF(sorted); i++) {
                        bit = key_bit(sorted[i], strlen(sorted[i]));
                        filter[bit / 64] |= UINT64_C(1) << (bit % 64);
                }
                ready = true;
        }
        for (size_t i = 0; i < ELEMENTSOF(refused_prefixes); i++) {
                size_t plen = strlen(refused_prefixes[i]);

                if (key[0] == refused_prefixes[i][0] && len >= plen && memcmp(key, refused_prefixes[i], plen) == 0)
                        return 1;
        }
        if (key[0] == 'L' && locale_path(key, len))
                return 1;
        bit = key_bit(key, len);
        if (!(filter[bit / 64] & (UINT64_C(1) << (bit % 64))))
                return 0;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = key_cmp(key, len, sorted[mid]);

                if (c == 0)
                        return 1;
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return 0;
}

/* The invariant above: entries back to back in data[0..used), each "KEY=VALUE" and its NUL, within bounds. */
static _unused_ bool envbuf_sane(const struct envbuf *e)
{
        size_t end = 0;

        if (e->used > sizeof(e->data) || e->n > HP_ENV_ADD_MAX_VARS)
                return false;
        for (unsigned i = 0; i < e->n; i++) {
                const char *nul;

                if (e->off[i] != end)
                        return false;
                nul = memchr(e->data + end, '\0', e->used - end);
                if (!nul || !strchr(e->data + end, '='))
                        return false;
                end = (size_t)(nul - e->data) + 1;
        }
        return end == e->used;
}

static int envbuf_find(const struct envbuf *e, const char *key, size_t klen)
{
        for (unsigned i = 0; i < e->n; i++) {
                const char *s = envbuf_entry(e, i);
                if (strncmp(s, key, klen) == 0 && s[klen] == '=')
                        return (int)i;
        }
        return -1;
}

static void envbuf_remove(struct envbuf *e, unsigned idx)
{
        size_t start = e->off[idx];
        size_t len = strlen(e->data + start) + 1;

        assert(idx < e->n && start + len <= e->used);
        memmove(e->data + start, e->data + start + len, e->used - start - len);
        e->used = (uint16_t)(e->used - len);
        for (unsigned i = idx; i + 1 < e->n; i++)
                e->off[i] = (uint16_t)(e->off[i + 1] - len);
        e->n--;
}

int envbuf_add(struct envbuf *e, const char *key, const char *value)
{
        char entry[sizeof(e->data)];
        size_t klen = key ? strlen(key) : 0, vlen, need, freed = 0;
        int old;

        if (!env_key_valid(key, klen) || !value)
                return -EINVAL;
        vlen = strlen(value);
        need = klen + 1 + vlen + 1;
        if (need > sizeof(e->data))
                return -ENOMEM;
        old = envbuf_find(e, key, klen);
        if (old >= 0)
                freed = strlen(envbuf_entry(e, (unsigned)old)) + 1;
        if (e->used - freed + need > sizeof(e->data) || (old < 0 && e->n >= HP_ENV_ADD_MAX_VARS))
                return -ENOMEM;

        /* Build the entry aside first: @key or @value may point into @e
         * (e.g. a value from envbuf_get()), and removing the old entry
         * moves the bytes after it. */
        memcpy(entry, key, klen);
        entry[klen] = '=';
        memcpy(entry + klen + 1, value, vlen + 1);
        if (old >= 0)
                envbuf_remove(e, (unsigned)old);

        memcpy(e->data + e->used, entry, need);
        e->off[e->n++] = e->used;
        e->used = (uint16_t)(e->used + need);
        assert(envbuf_sane(e));
        return 0;
}

int format_bounded(char *buf, size_t size, const char *fmt, va_list ap)
{
        int k = vsnprintf(buf, size, fmt, ap);

        if (k < 0)
                return -EINVAL;
        return (size_t)k >= size ? -ENOMEM : 0;
}

int envbuf_addf(struct envbuf *e, const char *key, const char *fmt, ...)
{
        char value[HP_ENV_ADD_MAX_BYTES];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = format_bounded(value, sizeof(value), fmt, ap);
        va_end(ap);
        return r < 0 ? r : envbuf_add(e, key, value);
}

const char *envbuf_get(const struct envbuf *e, const char *key)
{
        size_t klen = key ? strlen(key) : 0;
        int i;

        /* A "key" holding '=' would otherwise match inside a value. */
        if (!env_key_valid(key, klen))
                return NULL;
        i = envbuf_find(e, key, klen);
        return i < 0 ? NULL : envbuf_entry(e, (unsigned)i) + klen + 1;
}
