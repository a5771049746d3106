/* SPDX-License-Identifier: MIT */
/*
 * The option table: for every configuration-file key, the command line and
 * the file give the same effective configuration (--rcvbuf=16M and
 * "rcvbuf = 16M" included), different from the default; the command line
 * beats the file for every key; every file key is found by its name; every
 * boolean takes --NAME, --no-NAME and --NAME=BOOL with every spelling in
 * any case, as its key does; every size takes the K, M and G suffixes on
 * both sides and refuses garbage and overflow; getopt spellings (short
 * letters) and usage errors that name the option, the value and the
 * accepted form and point at --help.  The test walks the table, so a new
 * option is covered without an edit here.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config/conffile.h"
#include "config/options.h"
#include "loop/manager.h"
#include "test.h"

static char dir[] = "/tmp/test-options.XXXXXX";
static const char *installed_conf; /* argv[1] */

static char sample_buf[128], other_buf[128];

/* A value of @oi's type, in file syntax, that is not its default; NULL for a flag. */
static const char *sample(const struct option_info *oi)
{
        static const char *const orderings[] = { "strict", "none" };
        static const char *const levels[] = { "debug", "err" };

        switch (oi->type) {
        case OPTION_PATH:
                snprintf(sample_buf, sizeof(sample_buf), "/parity/%s", oi->name);
                return sample_buf;
        case OPTION_SEARCH:
                return "/parity/a:/parity/b";
        case OPTION_FILTER:
                return "usb=drop *=keep";
        case OPTION_SUBSYSTEMS:
                return "net,block";
        case OPTION_SIZE:
                return "16M";
        case OPTION_AUTO_UINT:
                if (oi->def.u == 0) {
                        snprintf(sample_buf, sizeof(sample_buf), "%" PRIu64, oi->max);
                        return sample_buf;
                }
                return "auto";
        case OPTION_UINT:
        case OPTION_SECONDS:
                snprintf(sample_buf, sizeof(sample_buf), "%" PRIu64, oi->def.u == oi->max ? oi->min : oi->max);
                return sample_buf;
        case OPTION_BOOL:
                return NULL; /* spell(): --NAME or --no-NAME, whichever is not the default */
        case OPTION_ORDERING:
                return orderings[oi->def.i == ORDERING_STRICT];
        case OPTION_LOG_LEVEL:
                return levels[oi->def.i == LOG_DEBUG];
        case OPTION_CHOICE:
                return oi->choices[oi->def.i == 0]; /* a choice other than the default */
        case OPTION_GROUP:
                return "nogroup"; /* Debian's group 65534 */
        default:
                fprintf(stderr, "no sample value for the type of '%s': extend sample()\n", oi->name);
                abort();
        }
}

/* A valid value of @oi's type other than sample()'s. */
static const char *other(const struct option_info *oi)
{
        switch (oi->type) {
        case OPTION_PATH:
                return "/file/path";
        case OPTION_SEARCH:
                return "/file/a";
        case OPTION_FILTER:
                return "net=drop";
        case OPTION_SUBSYSTEMS:
                return "input";
        case OPTION_SIZE: /* 8K, or the least that is valid */
                snprintf(other_buf, sizeof(other_buf), "%" PRIu64 "K", MAX(oi->min, UINT64_C(8192)) / 1024);
                return other_buf;
        case OPTION_AUTO_UINT:
                snprintf(other_buf, sizeof(other_buf), "%" PRIu64, oi->min);
                return other_buf;
        case OPTION_UINT:
        case OPTION_SECONDS:
                snprintf(other_buf, sizeof(other_buf), "%" PRIu64, oi->def.u == oi->max ? oi->max : oi->min);
                return other_buf;
        case OPTION_ORDERING:
                return "devpath";
        case OPTION_LOG_LEVEL:
                return "info";
        case OPTION_BOOL:
                return oi->def.b ? "yes" : "no"; /* the default, written out */
        case OPTION_CHOICE:
                return oi->choices[oi->def.i]; /* the default, written out */
        case OPTION_GROUP:
                return "root";
        default:
                fprintf(stderr, "no second value for the type of '%s': extend other()\n", oi->name);
                abort();
        }
}

/* @oi set to @value as a long option and as a file line; a boolean's NULL: not its default. */
static void spell(const struct option_info *oi, const char *value, char longopt[256], char line[256])
{
        if (value) {
                snprintf(longopt, 256, "--%s=%s", oi->name, value);
                snprintf(line, 256, "%s = %s\n", oi->key, value);
        } else {
                snprintf(longopt, 256, "--%s%s", oi->def.b ? "no-" : "", oi->name);
                snprintf(line, 256, "%s = %s\n", oi->key, oi->def.b ? "no" : "yes");
        }
}

/* @oi's member of @a and @b hold the same value (strings compared by content). */
static bool same(const struct options *a, const struct options *b, const struct option_info *oi)
{
        const char *pa = (const char *)a + oi->offset, *pb = (const char *)b + oi->offset;
        const char *sa, *sb;

        if (option_is_text(oi->type)) {
                memcpy(&sa, pa, sizeof(sa));
                memcpy(&sb, pb, sizeof(sb));
                return sa == sb || (sa && sb && strcmp(sa, sb) == 0);
        }
        switch (oi->type) {
        case OPTION_HELP:
        case OPTION_VERSION:
                return true;
        default:
                return memcmp(pa, pb, oi->size) == 0;
        }
}

/* Every option's value agrees; the names of those that differ are printed. */
static bool all_same(const struct options *a, const struct options *b)
{
        bool ok = true;

        for (size_t i = 0; i < option_table_size; i++)
                if (!same(a, b, &option_table[i])) {
                        fprintf(stderr, "  --%s differs\n", option_table[i].name);
                        ok = false;
                }
        if (!a->cfg.handlers.sysfs_root || !b->cfg.handlers.sysfs_root ||
            strcmp(a->cfg.handlers.sysfs_root, b->cfg.handlers.sysfs_root) != 0) {
                fprintf(stderr, "  handlers.sysfs_root differs\n");
                ok = false;
        }
        return ok;
}

static void write_conf(const char *path, const char *text)
{
        int fd;

        (void)unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        check(fd >= 0);
        check(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
}

/* The options of hotplugd with @args on the command line. */
static int from_argv(struct options *o, const char *const *args)
{
        char *argv[16] = { (char *)"hotplugd" };
        int argc = 1;

        for (; *args; args++) {
                check(argc < (int)ELEMENTSOF(argv) - 1);
                argv[argc++] = (char *)*args;
        }
        argv[argc] = NULL;
        options_init(o);
        return options_parse_argv(o, argc, argv);
}

/* The options of hotplugd with @text as its configuration file (and @arg, if not NULL). */
static int from_file(struct options *o, struct conf *conf, const char *text, const char *arg)
{
        char path[PATH_MAX], config[PATH_MAX + 16];
        struct conf_error err;
        int r;

        snprintf(path, sizeof(path), "%s/hotplugd.conf", dir);
        snprintf(config, sizeof(config), "--config=%s", path);
        write_conf(path, text);
        check_int(from_argv(o, (const char *const[]){ config, arg, NULL }), 1);
        r = options_load(o, conf, &err);
        if (r < 0)
                fprintf(stderr, "  %s\n", err.msg);
        o->config = NULL; /* not compared: only one side named a file */
        return r;
}

static void test_parity(void)
{
        static struct conf conf, empty;
        struct options defaults, cli, file;
        unsigned keys = 0;

        /* Every side goes through options_load(), which settles the default agent. */
        check_int(from_file(&defaults, &empty, "", NULL), 0);
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char longopt[256], line[256];

                if (!oi->key)
                        continue;
                spell(oi, sample(oi), longopt, line);
                fprintf(stderr, "  %-28s  %s", longopt, line);
                check_int(from_file(&cli, &empty, "", longopt), 0);
                check_int(from_file(&file, &conf, line, NULL), 0);
                check(cli.set == option_bit(oi));
                cli.set = 0;
                check(all_same(&cli, &file));
                check(!same(&cli, &defaults, oi));
                keys++;
        }
        check(keys > 0);

        /* The case the table was made for. */
        check_int(from_argv(&cli, (const char *const[]){ "--rcvbuf=16M", NULL }), 1);
        check_int(cli.cfg.rcvbuf, 16 * 1024 * 1024);
        check_int(from_file(&file, &conf, "rcvbuf = 16M\n", NULL), 0);
        check_int(file.cfg.rcvbuf, 16 * 1024 * 1024);
}

/* The file cannot show a default: it is computed at start, or there is none. */
static bool default_unwritten(const struct option_info *oi)
{
        if (oi->def_fn)
                return true;
        if (oi->type == OPTION_SUBSYSTEMS)
                return !oi->def.s; /* no list: every subsystem, which no value spells */
        if (oi->def_text)
                return false;
        if (option_is_text(oi->type))
                return !oi->def.s;
        switch (oi->type) {
        case OPTION_UINT:
        case OPTION_SIZE:
        case OPTION_SECONDS:
                return oi->def.u == 0;
        case OPTION_GROUP:
                return oi->def.i < 0; /* none */
        default:
                return false;
        }
}

/*
 * The table's defaults as they take effect: a key whose default is only
 * written in .def_text (firmware-path's NULL, handler-cache's 0, both
 * meaning the handler chain's default) holds that text's value.  The
 * default agent rule (options_default_agent()) is left out: the file's
 * agent line, once uncommented, chooses the agent, as its comment says.
 */
static void effective_defaults(struct options *o)
{
        options_init(o);
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                union option_value v;
                char why[256];

                if (!oi->key || default_unwritten(oi) || !oi->def_text)
                        continue;
                check_int(option_parse(oi, oi->key, oi->def_text, false, &v, why, sizeof(why)), 0);
                check(option_store(o, oi, &v, sizeof(*o)));
        }
}

/*
 * One "#key = VALUE" or "#key =" line of the installed file: the key must
 * be a file key not seen before; a value-less line is for a default the
 * file cannot show; hotplug-d shows the directory of the default agent
 * rule and stays commented out.  Other lines are appended to @text
 * uncommented.  Return: false (and why, on stderr) if the line is wrong.
 */
static bool installed_line(const char *line, uint64_t *seen, char *text, size_t size)
{
        char key[64];
        const char *value;
        const struct option_info *oi;
        size_t n = strcspn(line + 1, " =");

        value = line + 1 + n;
        if (n >= sizeof(key) || strncmp(value, " =", 2) != 0 || (value[2] && value[2] != ' ')) {
                fprintf(stderr, "  not '#key = value': %s\n", line);
                return false;
        }
        memcpy(key, line + 1, n);
        key[n] = '\0';
        value += value[2] ? 3 : 2;
        oi = option_by_key(key);
        if (!oi || (*seen & option_bit(oi))) {
                fprintf(stderr, "  %s key '%s'\n", oi ? "duplicate" : "unknown", key);
                return false;
        }
        *seen |= option_bit(oi);
        if (strcmp(oi->key, "hotplug-d") == 0) {
                if (strcmp(value, HOTPLUGD_HOTPLUG_D) == 0)
                        return true;
                fprintf(stderr, "  hotplug-d shows '%s', not %s\n", value, HOTPLUGD_HOTPLUG_D);
                return false;
        }
        if (default_unwritten(oi)) {
                if (!*value)
                        return true;
                fprintf(stderr, "  '%s' shows a value, but its default is computed or none\n", key);
                return false;
        }
        if (!*value) {
                fprintf(stderr, "  '%s' lacks its default\n", key);
                return false;
        }
        n = strlen(text);
        check(snprintf(text + n, size - n, "%s = %s\n", key, value) < (int)(size - n));
        return true;
}

/* The installed file lists every key at its default, and means the defaults. */
static void test_installed_conf(void)
{
        static struct conf conf;
        static char text[HP_CONF_FILE_MAX];
        struct options defaults, file;
        FILE *f;
        char line[HP_CONF_LINE_MAX + 2];
        uint64_t seen = 0;
        bool ok = true;

        fprintf(stderr, "  %s\n", installed_conf);
        f = fopen(installed_conf, "re");
        check(f != NULL);
        text[0] = '\0';
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (line[0] == '#' && line[1] >= 'a' && line[1] <= 'z')
                        ok &= installed_line(line, &seen, text, sizeof(text));
        }
        fclose(f);
        for (size_t i = 0; i < option_table_size; i++)
                if (option_table[i].key && !(seen & option_bit(&option_table[i]))) {
                        fprintf(stderr, "  key '%s' is missing\n", option_table[i].key);
                        ok = false;
                }
        check(ok);

        fprintf(stderr, "%s", text);
        effective_defaults(&defaults);
        check_int(from_file(&file, &conf, text, NULL), 0);
        check(all_same(&defaults, &file));
}

/* For every key with a value, the command line beats the file. */
static void test_precedence(void)
{
        static struct conf conf, empty;
        struct options cli, both;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char longopt[256], line[256], unused[256];

                if (!oi->key)
                        continue;
                spell(oi, sample(oi), longopt, unused);
                spell(oi, other(oi), unused, line);
                check_int(from_file(&cli, &empty, "", longopt), 0);
                check_int(from_file(&both, &conf, line, longopt), 0);
                check(all_same(&cli, &both));
        }
}

static void test_table(void)
{
        /* Every key has its row, its name, and a file key names itself. */
        check(option_table_size <= OPTION_ROWS_MAX);
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];

                check(!oi->key || option_by_key(oi->key) == oi);
                check(option_key_bit(oi->key ? oi->key : oi->name) == (oi->key ? option_bit(oi) : 0));
                check(option_by_name(oi->name) == oi);
                if (oi->short_name)
                        for (size_t j = i + 1; j < option_table_size; j++)
                                check(option_table[j].short_name != oi->short_name);
                check(oi->help && *oi->help);
                check(oi->type != OPTION_BOOL || !oi->arg);
        }
}

static void test_spellings(void)
{
        struct options o, d;

        options_init(&d);
        check(d.cfg.resync);
        check_int(from_argv(&o, (const char *const[]){ "--no-resync", "-n", "-j", "7", "-t5", "-ostrict",
                                                       "-l", "debug", "-a", "/x/agent", NULL }),
                  1);
        check(!o.cfg.resync);
        check(o.cfg.dry_run);
        check_int(o.cfg.max_children, 7);
        check_int(o.cfg.timeout_usec, 5 * USEC_PER_SEC);
        check_int(o.cfg.ordering, ORDERING_STRICT);
        check_int(o.log_level, LOG_DEBUG);
        check_str(o.cfg.agent, "/x/agent");
        check_int(o.set, option_key_bit("resync") | option_key_bit("max-children") | option_key_bit("timeout") |
                                 option_key_bit("ordering") | option_key_bit("log-level") | option_key_bit("agent"));
        check_int(from_argv(&o, (const char *const[]){ "--control-socket=", "--listen-fd", "3", "--speed=max",
                                                       "--log-target=journal", "--check-config", NULL }),
                  1);
        check_str(o.cfg.control_path, "");
        check_int(o.cfg.source_fd, 3);
        check(o.cfg.replay_speed == 0);
        check_int(o.log_target, LOG_TARGET_JOURNAL);
        check(o.check_config);
        check(!o.verbose);
        check_int(o.set, 0);
        check(o.given & (UINT64_C(1) << (option_by_name("listen-fd") - option_table)));
        check(!(o.given & (UINT64_C(1) << (option_by_name("ready-fd") - option_table))));
        /* --check-config and --verbose ask for something: no --no-NAME, no value; -v only with --check-config. */
        check_int(from_argv(&o, (const char *const[]){ "--check-config", "-v", NULL }), 1);
        check(o.check_config && o.verbose);
        check_int(from_argv(&o, (const char *const[]){ "--no-check-config", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--check-config=yes", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--verbose", NULL }), -EINVAL);
        check(option_table_size <= 64); /* struct options.given has a bit per row */
        /* The last word wins: --no-NAME after --NAME, and the other way round. */
        check_int(from_argv(&o, (const char *const[]){ "--resync", "--no-resync", "--no-all", "--all", NULL }), 1);
        check(!o.cfg.resync);
        check(o.cfg.handlers.pass_all);

        /* Refused: the value, the range, a value for --no-NAME, a stray argument. */
        check_int(from_argv(&o, (const char *const[]){ "--rcvbuf=2G", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--rcvbuf=128MB", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--max-children=0", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--no-all=yes", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--listen-fd=-1", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "stray", NULL }), -EINVAL);
        check_int(from_argv(&o, (const char *const[]){ "--ready-fd=1000000", NULL }), -EINVAL);
}

static bool get_bool(const struct options *o, const struct option_info *oi)
{
        bool b;

        memcpy(&b, (const char *)o + oi->offset, sizeof(b));
        return b;
}

static uint64_t get_uint(const struct options *o, const struct option_info *oi)
{
        uint32_t w;
        uint64_t v;

        if (oi->size == sizeof(w)) {
                memcpy(&w, (const char *)o + oi->offset, sizeof(w));
                return w;
        }
        memcpy(&v, (const char *)o + oi->offset, sizeof(v));
        return v;
}

/* @word in case @k: as is, UPPER, Capitalised, aLtErNaTiNg. */
static void recase(const char *word, int k, char *out, size_t size)
{
        size_t i;

        for (i = 0; word[i] && i + 1 < size; i++) {
                bool up = k == 1 || (k == 2 && i == 0) || (k == 3 && i % 2 == 1);

                out[i] = up ? (char)toupper((unsigned char)word[i]) : word[i];
        }
        out[i] = '\0';
}

/* @oi from "--NAME=@word" and, for a key, "KEY = @word": both hold @want. */
static void check_bool_word(const struct option_info *oi, const char *word, bool want)
{
        static struct conf conf;
        char arg[128], line[128];
        struct options o;

        snprintf(arg, sizeof(arg), "--%s=%s", oi->name, word);
        check_int(from_argv(&o, (const char *const[]){ arg, NULL }), 1);
        check(get_bool(&o, oi) == want);
        if (!oi->key)
                return;
        check(o.set == option_bit(oi));
        snprintf(line, sizeof(line), "%s = %s\n", oi->key, word);
        check_int(from_file(&o, &conf, line, NULL), 0);
        check(get_bool(&o, oi) == want);
}

/* Every boolean: --NAME, --no-NAME, --NAME=BOOL and its key, every spelling in any case. */
static void test_bools(void)
{
        static const char *const words[] = { "yes", "true", "on", "1", "no", "false", "off", "0" };
        static const char *const bad[] = { "maybe", "", "y", "n", "2", "yess", " yes", "oui" };
        static struct conf conf;
        unsigned n = 0;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char arg[128], line[128], word[16], why[512], want[512];
                struct options o;

                if (oi->type != OPTION_BOOL)
                        continue;
                n++;
                fprintf(stderr, "  --[no-]%s\n", oi->name);
                snprintf(arg, sizeof(arg), "--%s", oi->name);
                check_int(from_argv(&o, (const char *const[]){ arg, NULL }), 1);
                check(get_bool(&o, oi));
                check(o.set == (oi->key ? option_bit(oi) : 0));
                snprintf(arg, sizeof(arg), "--no-%s", oi->name);
                check_int(from_argv(&o, (const char *const[]){ arg, NULL }), 1);
                check(!get_bool(&o, oi));
                check(o.set == (oi->key ? option_bit(oi) : 0));
                check_int(from_argv(&o, (const char *const[]){ "--no-x", arg, NULL }), -EINVAL);
                snprintf(arg, sizeof(arg), "--no-%s=yes", oi->name);
                check_int(from_argv(&o, (const char *const[]){ arg, NULL }), -EINVAL);

                for (size_t w = 0; w < ELEMENTSOF(words); w++)
                        for (int k = 0; k < 4; k++) {
                                recase(words[w], k, word, sizeof(word));
                                check_bool_word(oi, word, w < 4);
                        }
                for (size_t b = 0; b < ELEMENTSOF(bad); b++) {
                        options_init(&o);
                        check_int(option_set_arg(&o, sizeof(o), oi, bad[b], why, sizeof(why)), -EINVAL);
                        snprintf(want, sizeof(want), "--%s must be %s: '%s' (%s)", oi->name, OPTION_BOOL_FORM,
                                 bad[b], oi->help);
                        check_str(why, want);
                }
                if (!oi->key)
                        continue;
                /* The command line undoes the file either way. */
                snprintf(line, sizeof(line), "%s = YES\n", oi->key);
                snprintf(arg, sizeof(arg), "--no-%s", oi->name);
                check_int(from_file(&o, &conf, line, arg), 0);
                check(!get_bool(&o, oi));
                snprintf(line, sizeof(line), "%s = Off\n", oi->key);
                snprintf(arg, sizeof(arg), "--%s", oi->name);
                check_int(from_file(&o, &conf, line, arg), 0);
                check(get_bool(&o, oi));
        }
        check(n > 0);
}

/* Every size: K, M, G in either case on both sides; garbage and overflow refused by name. */
static void test_sizes(void)
{
        static const struct {
                const char *suffix;
                uint64_t mult;
        } units[] = {
                { "", 1 }, { "k", 1 << 10 }, { "K", 1 << 10 }, { "m", 1 << 20 },
                { "M", 1 << 20 }, { "g", 1 << 30 }, { "G", 1 << 30 },
        };
        static const char *const bad[] = {
                "16X", "16MB", "16KiB", "16 M", "16KK", "K", "-1", "+16K", "0x10", "16.5M", "1T", "1e6",
                "99999999999999999999", "18446744073709551616", "17179869184G", "9999999999999999999K",
        };
        static struct conf conf;
        unsigned n = 0;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char arg[128], line[128], why[512], want[512], form[160];
                struct options o;

                if (oi->type != OPTION_SIZE)
                        continue;
                n++;
                for (size_t u = 0; u < ELEMENTSOF(units); u++) {
                        uint64_t k = MAX((oi->min + units[u].mult - 1) / units[u].mult, UINT64_C(1));

                        check(k * units[u].mult <= oi->max); /* every suffix can express a valid value */
                        snprintf(arg, sizeof(arg), "--%s=%" PRIu64 "%s", oi->name, k, units[u].suffix);
                        snprintf(line, sizeof(line), "%s = %" PRIu64 "%s\n", oi->key, k, units[u].suffix);
                        fprintf(stderr, "  %s  %s", arg, line);
                        check_int(from_argv(&o, (const char *const[]){ arg, NULL }), 1);
                        check_int(get_uint(&o, oi), k * units[u].mult);
                        check_int(from_file(&o, &conf, line, NULL), 0);
                        check_int(get_uint(&o, oi), k * units[u].mult);
                }
                /* Garbage, overflow and the range: the option, the value and the form, both sides. */
                for (size_t b = 0; b < ELEMENTSOF(bad) + 2; b++) {
                        char edge[32];
                        const char *v = edge;
                        struct conf_error err;

                        if (b < ELEMENTSOF(bad))
                                v = bad[b];
                        else
                                snprintf(edge, sizeof(edge), "%" PRIu64, b == ELEMENTSOF(bad) ? oi->min - 1 : oi->max + 1);
                        options_init(&o);
                        check_int(option_set_arg(&o, sizeof(o), oi, v, why, sizeof(why)), -EINVAL);
                        snprintf(want, sizeof(want), "--%s must be %s: '%s' (%s)", oi->name,
                                 option_form(oi, form, sizeof(form)), v, oi->help);
                        check_str(why, want);
                        check(strstr(why, "K, M or G"));
                        snprintf(line, sizeof(line), "%s = %s\n", oi->key, v);
                        check_int(conf_parse("t.conf", line, strlen(line), &conf, &err), -EINVAL);
                        snprintf(want, sizeof(want), "t.conf:1: '%s' must be %s: '%s'", oi->key, form, v);
                        check_str(err.msg, want);
                }
        }
        check(n > 0);
}

/* options_parse_argv() of @args; what it printed on stderr in @buf. */
static int argv_stderr(const char *const *args, char *buf, size_t size)
{
        char path[PATH_MAX];
        struct options o;
        ssize_t n;
        int fd, saved, r;

        snprintf(path, sizeof(path), "%s/stderr", dir);
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        check(fd >= 0);
        saved = dup(STDERR_FILENO);
        check(saved >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
        r = from_argv(&o, args);
        check(dup2(saved, STDERR_FILENO) == STDERR_FILENO);
        close(saved);
        n = pread(fd, buf, size - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        close(fd);
        check(unlink(path) == 0);
        return r;
}

#define TRY "Try 'hotplugd --help' for more information.\n"

/* @args are a usage error, printed as exactly @msg and the --help line. */
static void expect_usage(const char *const *args, const char *msg)
{
        char out[2048], want[1024];

        check_int(argv_stderr(args, out, sizeof(out)), -EINVAL);
        snprintf(want, sizeof(want), "hotplugd: %s\n" TRY, msg);
        check_str(out, want);
}

static void test_usage_errors(void)
{
        char out[2048], want[512], arg[128], form[160];

        expect_usage((const char *const[]){ "--rcvbuf=16X", NULL },
                     "--rcvbuf must be a number 4096..2147483647, optionally followed by K, M or G (KiB, MiB, GiB): "
                     "'16X' (netlink receive buffer)");
        expect_usage((const char *const[]){ "--resync=maybe", NULL },
                     "--resync must be yes, true, on, 1 or no, false, off, 0 (any case): 'maybe' "
                     "(re-trigger devices after a buffer overflow)");
        expect_usage((const char *const[]){ "--rcvbuf=16M ", NULL },
                     "--rcvbuf must be a number 4096..2147483647, optionally followed by K, M or G (KiB, MiB, GiB): "
                     "'16M ' (netlink receive buffer)");
        expect_usage((const char *const[]){ "--no-resync=yes", NULL }, "option '--no-resync' takes no value");
        expect_usage((const char *const[]){ "--version=2", NULL }, "option '--version' takes no value");
        expect_usage((const char *const[]){ "--timeout", NULL }, "option '--timeout' needs a value: a number 1..86400");
        expect_usage((const char *const[]){ "-n", "-j", NULL }, "option '-j' needs a value: a number 1..2048");
        expect_usage((const char *const[]){ "--colour=blue", NULL }, "unknown option '--colour'");
        expect_usage((const char *const[]){ "--no-timeout", NULL }, "unknown option '--no-timeout'");
        expect_usage((const char *const[]){ "-nx", NULL }, "unknown option '-x'");
        expect_usage((const char *const[]){ "-\x07", NULL }, "unknown option '-\\x07'");
        expect_usage((const char *const[]){ "--\x1b[31m", NULL }, "unknown option '--\\x1b[31m'");
        expect_usage((const char *const[]){ "stray", NULL }, "unexpected argument 'stray': hotplugd takes options only");
        expect_usage((const char *const[]){ "--ready-fd=1000000", NULL },
                     "--ready-fd must be an open descriptor: '1000000' is not open");
        expect_usage((const char *const[]){ "--listen-fd=-1", NULL },
                     "--listen-fd must be a descriptor number: '-1' (use socket fd N instead of opening one)");
        check_int(argv_stderr((const char *const[]){ "--re", NULL }, out, sizeof(out)), -EINVAL);
        check(strncmp(out, "hotplugd: ambiguous option '--re' (could be --", 46) == 0);
        check(strstr(out, "--record, ") && strstr(out, "--resync-subsystems"));
        check(strstr(out, ")\n" TRY));

        /* Every option with a value, given none: its name and its form. */
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];

                if (!oi->arg)
                        continue;
                snprintf(arg, sizeof(arg), "--%s", oi->name);
                snprintf(want, sizeof(want), "option '--%s' needs a value: %s", oi->name,
                         option_form(oi, form, sizeof(form)));
                expect_usage((const char *const[]){ arg, NULL }, want);
        }
}

static void test_messages(void)
{
        struct options o;
        char why[512];

        options_init(&o);
        check_int(option_set_arg(&o, sizeof(o), option_by_name("ordering"), "fast", why, sizeof(why)), -EINVAL);
        check_str(why, "--ordering must be devpath, strict or none: 'fast' (event order: devpath, strict or none)");
        check_int(option_set_arg(&o, sizeof(o), option_by_name("handler-cache"), "0", why, sizeof(why)), -EINVAL);
        check_str(why, "--handler-cache must be a number 1..65536: '0' (devices whose legacy variables are kept)");
        check_int(option_set_arg(&o, sizeof(o), option_by_name("rebroadcast"), "1", why, sizeof(why)), -EINVAL);
        check_str(why, "--rebroadcast must be a number 2..32: '1' (re-send processed events on this netlink group)");
        check_int(option_set_arg(&o, sizeof(o), option_by_name("concurrency"), "Auto", why, sizeof(why)), -EINVAL);
        check_str(why, "--concurrency must be auto or a number 1..2048: 'Auto' "
                       "(agents at once: the awake ones that pay for their CPU, plus those asleep, up to "
                       "max-children, or N)");
        check_int(option_set_arg(&o, sizeof(o), option_by_name("firmware-path"), "a:/b", why, sizeof(why)), -EINVAL);
        check_str(why, "--firmware-path must be absolute paths separated by ':': 'a:/b' "
                       "(firmware directories, ':'-separated)");
        check_int(option_set_arg(&o, sizeof(o), option_by_name("resync-subsystems"), "net,../x", why,
                                 sizeof(why)),
                  -EINVAL);
        check_str(why, "--resync-subsystems wants subsystem names separated by ',', and '../x' is not one: "
                       "'net,../x' (a resync writes only to devices of these subsystems, ','-separated)");
        /* Empty on the command line: every subsystem again, over a list in the file. */
        check_int(option_set_arg(&o, sizeof(o), option_by_name("resync-subsystems"), "", why, sizeof(why)), 0);
        check_str(o.cfg.resync_subsystems, "");
        /* A bare boolean (hotplugctl test's --all) is yes. */
        check_int(option_set_arg(&o.cfg, sizeof(o.cfg), option_by_name("all"), NULL, why, sizeof(why)), 0);
        check(o.cfg.handlers.pass_all);
        /* A manager_config alone takes its members only. */
        check_int(option_set_arg(&o.cfg, sizeof(o.cfg), option_by_name("rcvbuf"), "8K", why, sizeof(why)), 0);
        check_int(o.cfg.rcvbuf, 8192);
        check_int(option_set_arg(&o.cfg, sizeof(o.cfg), option_by_name("log-level"), "debug", why, sizeof(why)),
                  -EINVAL);
}

/* Relative paths on the command line become absolute (agents run with cwd "/"). */
static void test_resolve(void)
{
        char cwd[PATH_MAX], real[PATH_MAX], want[PATH_MAX + 16], agent[PATH_MAX + 16], why[PATH_MAX + 128];
        struct options o;

        check(getcwd(cwd, sizeof(cwd)) != NULL);
        check(realpath(dir, real) != NULL);
        snprintf(agent, sizeof(agent), "%s/agent", dir);
        write_conf(agent, "#!/bin/sh\n");
        check(chdir(dir) == 0);

        check_int(from_argv(&o, (const char *const[]){ "--agent=agent", "--sysfs=.", "--hotplug-d=/x/y", NULL }), 1);
        check_int(options_resolve_paths(&o, why, sizeof(why)), 0);
        snprintf(want, sizeof(want), "%s/agent", real);
        check_str(o.cfg.agent, want);
        check_str(o.cfg.sysfs_root, real);
        check(o.cfg.handlers.sysfs_root == o.cfg.sysfs_root); /* the handlers see the same root */
        check_str(o.cfg.hotplug_d, "/x/y");                   /* absolute: kept as given */
        free((char *)o.cfg.agent);
        free((char *)o.cfg.sysfs_root);

        check_int(from_argv(&o, (const char *const[]){ "--agent=missing", NULL }), 1);
        check_int(options_resolve_paths(&o, why, sizeof(why)), -ENOENT);
        check(strstr(why, "--agent: cannot resolve 'missing'") != NULL);

        check(chdir(cwd) == 0);
        check(unlink(agent) == 0);
}

/* Nobody chose an agent: the built-in one if executable, else the multiplexer directory. */
static void test_default_agent(void)
{
        char agent[PATH_MAX + 16];
        struct options o;

        snprintf(agent, sizeof(agent), "%s/default-agent", dir);
        (void)unlink(agent);

        /* The built-in agent is missing: hotplug.d runs instead, and says so. */
        options_init(&o);
        o.cfg.agent = agent;
        options_default_agent(&o, 0, "/fallback/hotplug.d");
        check_str(o.cfg.hotplug_d, "/fallback/hotplug.d");
        check(o.default_agent_missing);

        /* Chosen by the command line or the file: kept, even if missing. */
        for (int k = 0; k < 2; k++) {
                options_init(&o);
                o.cfg.agent = agent;
                options_default_agent(&o, option_key_bit(k ? "hotplug-d" : "agent"), "/fallback/hotplug.d");
                check(o.cfg.hotplug_d == NULL);
                check(!o.default_agent_missing);
        }

        /* Present but not executable: still missing. */
        write_conf(agent, "#!/bin/sh\n");
        check(chmod(agent, 0644) == 0);
        options_init(&o);
        o.cfg.agent = agent;
        options_default_agent(&o, 0, "/fallback/hotplug.d");
        check_str(o.cfg.hotplug_d, "/fallback/hotplug.d");

        /* Executable: the built-in agent runs. */
        check(chmod(agent, 0755) == 0);
        options_init(&o);
        o.cfg.agent = agent;
        options_default_agent(&o, 0, "/fallback/hotplug.d");
        check(o.cfg.hotplug_d == NULL);
        check(!o.default_agent_missing);
        check_str(o.cfg.agent, agent);
        check(unlink(agent) == 0);
}

/* The member of @cfg that row @oi sets, when it is a text member of struct manager_config; else NULL. */
static const char **cfg_text(struct manager_config *cfg, const struct option_info *oi)
{
        if (!option_is_text(oi->type) || oi->offset + oi->size > sizeof(*cfg))
                return NULL;
        return (const char **)(void *)((char *)cfg + oi->offset);
}

/* The manager's copy of a configuration owns every text option's string, and frees them in one place. */
static void test_config_copy(void)
{
        static char texts[OPTION_ROWS_MAX][32];
        struct manager_config src, copy;
        unsigned n = 0;

        options_defaults(&src);
        for (size_t i = 0; i < option_table_size; i++) {
                const char **p = cfg_text(&src, &option_table[i]);

                if (!p)
                        continue;
                snprintf(texts[i], sizeof(texts[i]), "/t%zu", i);
                *p = texts[i];
                n++;
        }
        check(n > 0);
        check_int(manager_config_copy(&src, &copy), 0);
        check(copy.handlers.sysfs_root && copy.handlers.sysfs_root != src.handlers.sysfs_root);
        for (size_t i = 0; i < option_table_size; i++) {
                const char **p = cfg_text(&copy, &option_table[i]);

                if (!p)
                        continue;
                check(*p != texts[i]); /* a string of its own: LeakSanitizer sees one the free path misses */
                check_str(*p, texts[i]);
        }
        manager_config_free(&copy);
        for (size_t i = 0; i < option_table_size; i++) {
                const char **p = cfg_text(&copy, &option_table[i]);

                check(!p || *p == NULL);
        }
        manager_config_free(&copy); /* a freed copy holds nothing */
}

int main(int argc, char *argv[])
{
        if (argc != 2) {
                fprintf(stderr, "usage: %s INSTALLED-HOTPLUGD.CONF\n", argv[0]);
                return 1;
        }
        installed_conf = argv[1];
        check(mkdtemp(dir));
        run_test(test_table);
        run_test(test_parity);
        run_test(test_precedence);
        run_test(test_spellings);
        run_test(test_bools);
        run_test(test_sizes);
        run_test(test_usage_errors);
        run_test(test_messages);
        run_test(test_resolve);
        run_test(test_default_agent);
        run_test(test_installed_conf);
        run_test(test_config_copy);
        {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/hotplugd.conf", dir);
                (void)unlink(path);
                check(rmdir(dir) == 0);
        }
        return 0;
}
