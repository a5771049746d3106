/* SPDX-License-Identifier: MIT */
/*
 * The configuration file: every key, every error class with its exact
 * "FILE:LINE: reason", all-or-nothing parsing, file checks in conf_load(),
 * and command-line precedence in conf_apply().
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config/conffile.h"
#include "config/options.h"
#include "loop/manager.h"
#include "test.h"

/* The place of file key @k in the table, for struct conf's line[]. */
#define ROW(k) (option_by_key(k) - option_table)

/* The bits of every file key. */
static uint64_t every_key(void)
{
        uint64_t bits = 0;

        for (size_t i = 0; i < option_table_size; i++)
                if (option_table[i].key)
                        bits |= option_bit(&option_table[i]);
        return bits;
}

static int parse(const char *text, struct conf *c, struct conf_error *err)
{
        return conf_parse("t.conf", text, strlen(text), c, err);
}

/* Parse @text, expect failure with exactly @msg, and that @c was not touched. */
static void expect_error(const char *text, unsigned line, const char *msg)
{
        static struct conf c, before;
        struct conf_error err;

        memset(&c, 0x5a, sizeof(c));
        memcpy(&before, &c, sizeof(c));
        check_int(parse(text, &c, &err), -EINVAL);
        check_str(err.msg, msg);
        check_int(err.line, line);
        check(memcmp(&c, &before, sizeof(c)) == 0);
}

static void test_all_keys(void)
{
        static struct conf c;
        struct conf_error err;
        const char *text = "# hotplugd.conf\n"
                           "\n"
                           "agent = /sbin/hotplug\n"
                           "   ordering\t=\tstrict  \n"
                           "max-children=8\n"
                           "concurrency = 3\n"
                           "max-queue = 1000\n"
                           "max-queue-bytes = 3M\n"
                           "  # indented comment = ignored\n"
                           "timeout = 30\n"
                           "kill-grace = 2\n"
                           "after-udev = YES\n"
                           "after-udev-timeout = 5\n"
                           "all = yes\n"
                           "handler-dir = /usr/lib/hotplugd/handlers\n"
                           "hotplug-dir = /etc/hotplug\n"
                           "usb-device-path = proc\n"
                           "sysfs = /tmp/fake sys\n"
                           "rcvbuf = 128M\n"
                           "log-level = debug\n"
                           "record = /var/log/hotplugd.rec\n"
                           "rebroadcast = 4\n"
                           "resync = off\n"
                           "filter-policy = none, usb=keep *=drop\n"
                           "firmware-loader = on\n"
                           "firmware-path = /lib/firmware/local:/lib/firmware\n"
                           "handler-cache = 4096\n"
                           "resync-subsystems = net, block\n"
                           "input-strip-quotes = true\n"
                           "load-modules = no\n"
                           "handover-file = /run/hotplugd/handover\n"
                           "control-group = nogroup"; /* no final newline */
        struct group *nogroup = getgrnam("nogroup");

        check_int(parse(text, &c, &err), 0);
        check_int(c.set, every_key() & ~option_key_bit("hotplug-d"));
        check_str(c.values.cfg.agent, "/sbin/hotplug");
        check_str(c.values.cfg.handover_path, "/run/hotplugd/handover");
        check_int(c.values.cfg.ordering, ORDERING_STRICT);
        check_int(c.values.cfg.max_children, 8);
        check_int(c.values.cfg.max_queue_bytes, 3 * 1024 * 1024);
        check_int(c.values.cfg.after_udev, AFTER_UDEV_YES);
        check_int(c.values.cfg.load_modules, LOAD_MODULES_NO);
        check_int((int)c.values.cfg.after_udev_timeout_usec, 5 * USEC_PER_SEC);
        check_int(c.values.cfg.concurrency, 3);
        check_int(c.values.cfg.max_queue, 1000);
        check_int(c.values.cfg.timeout_usec, 30 * USEC_PER_SEC);
        check_int(c.values.cfg.kill_grace_usec, 2 * USEC_PER_SEC);
        check(c.values.cfg.handlers.pass_all);
        check_str(c.values.cfg.handlers.handler_dir, "/usr/lib/hotplugd/handlers");
        check_str(c.values.cfg.sysfs_root, "/tmp/fake sys"); /* inner blanks are part of the value */
        check_int(c.values.cfg.rcvbuf, 128 * 1024 * 1024);
        check_int(c.values.log_level, 7);
        check_str(c.values.cfg.record_path, "/var/log/hotplugd.rec");
        check_int(c.values.cfg.rebroadcast_group, 4);
        check(!c.values.cfg.resync);
        check_str(c.values.cfg.handlers.filter_policy, "none, usb=keep *=drop");
        check(c.values.cfg.handlers.firmware_loader);
        check_str(c.values.cfg.handlers.firmware_path, "/lib/firmware/local:/lib/firmware");
        check_int(c.values.cfg.handlers.cache_size, 4096);
        check(c.values.cfg.handlers.input_strip_quotes);
        check(nogroup && c.values.cfg.control_gid == (int)nogroup->gr_gid);
        check_str(c.values.cfg.resync_subsystems, "net, block");
        check_int(c.line[ROW("agent")], 3);
        check_int(c.line[ROW("ordering")], 4);
        check_int(c.line[ROW("concurrency")], 6);
        check_int(c.line[ROW("max-queue-bytes")], 8);
        check_int(c.line[ROW("after-udev")], 12);
        check_int(c.line[ROW("hotplug-dir")], 16);
        check_str(c.values.cfg.hotplug_dir, "/etc/hotplug");
        check_int(c.values.cfg.handlers.usb_device_path, USB_DEVICE_PATH_PROC);
        check_int(c.line[ROW("resync")], 23);
        check_int(c.line[ROW("resync-subsystems")], 28);
        check_int(c.line[ROW("input-strip-quotes")], 29);

        check_int(parse("hotplug-d = /etc/hotplug.d\n", &c, &err), 0);
        check_int(c.set, option_key_bit("hotplug-d"));
        check_str(c.values.cfg.hotplug_d, "/etc/hotplug.d");

        /* Empty and comment-only files are valid and set nothing. */
        check_int(parse("", &c, &err), 0);
        check_int(c.set, 0);
        check_int(parse("\n\n# nothing\n\t\n", &c, &err), 0);
        check_int(c.set, 0);
}

static void test_values(void)
{
        static struct conf c;
        struct conf_error err;

        check_int(parse("rcvbuf = 4096", &c, &err), 0);
        check_int(c.values.cfg.rcvbuf, 4096);
        check_int(parse("rcvbuf = 64k", &c, &err), 0);
        check_int(c.values.cfg.rcvbuf, 65536);
        check_int(parse("rcvbuf = 1G", &c, &err), 0);
        check_int(c.values.cfg.rcvbuf, 1024 * 1024 * 1024);
        check_int(parse("max-children = 2048", &c, &err), 0);
        check_int(parse("max-queue = 1048576", &c, &err), 0);
        check_int(parse("timeout = 86400", &c, &err), 0);
        for (const char *const *b = (const char *const[]){ "yes", "true", "on", "1", NULL }; *b; b++) {
                char line[32];

                snprintf(line, sizeof(line), "all = %s", *b);
                check_int(parse(line, &c, &err), 0);
                check(c.values.cfg.handlers.pass_all);
        }
        for (const char *const *b = (const char *const[]){ "no", "false", "off", "0", NULL }; *b; b++) {
                char line[32];

                snprintf(line, sizeof(line), "all = %s", *b);
                check_int(parse(line, &c, &err), 0);
                check(!c.values.cfg.handlers.pass_all);
        }
        /* Booleans in any case (every spelling and case: test-options). */
        check_int(parse("resync = No\nall = TRUE\nfirmware-loader = oN\n", &c, &err), 0);
        check(!c.values.cfg.resync && c.values.cfg.handlers.pass_all && c.values.cfg.handlers.firmware_loader);
        check_int(parse("ordering = none", &c, &err), 0);
        check_int(c.values.cfg.ordering, ORDERING_NONE);
        check_int(parse("ordering = devpath", &c, &err), 0);
        check_int(c.values.cfg.ordering, ORDERING_DEVPATH);
        check_int(parse("log-level = 3", &c, &err), 0);
        check_int(c.values.log_level, 3);
        check_int(parse("rebroadcast = 32", &c, &err), 0);
        check_int(parse("handler-cache = 1", &c, &err), 0);
        check_int(parse("handler-cache = 65536", &c, &err), 0);
        check_int(c.values.cfg.handlers.cache_size, HP_DEVCACHE_MAX);
        check_int(parse("firmware-path = /fw", &c, &err), 0);
        check_str(c.values.cfg.handlers.firmware_path, "/fw");
        check_int(parse("filter-policy = queues=keep", &c, &err), 0);
        check_str(c.values.cfg.handlers.filter_policy, "queues=keep");
}

static void test_syntax_errors(void)
{
        expect_error("# ok\nagent /sbin/hotplug\n", 2, "t.conf:2: expected 'key = value'");
        expect_error(" = 5\n", 1, "t.conf:1: missing key before '='");
        expect_error("control-group = no-such-group-here\n", 1, "t.conf:1: 'control-group': no such group: 'no-such-group-here'");
        expect_error("control-group =\n", 1, "t.conf:1: missing value for 'control-group': it must be the name or "
                                             "number of an existing group");
        expect_error("\n\ntimeout =   \n", 3, "t.conf:3: missing value for 'timeout': it must be a number 1..86400");
        expect_error("all =\n", 1, "t.conf:1: missing value for 'all': it must be " OPTION_BOOL_FORM);
        expect_error("colour = blue\n", 1, "t.conf:1: unknown key 'colour'");
        expect_error("max_children = 4\n", 1,
                     "t.conf:1: unknown key 'max_children' (did you mean 'max-children'?)");
        expect_error("Agent = /x\n", 1, "t.conf:1: unknown key 'Agent' (did you mean 'agent'?)");
        expect_error("config = /etc/other.conf\n", 1, "t.conf:1: 'config' is a command-line option only (--config)");
        expect_error("no-resync = yes\n", 1, "t.conf:1: unknown key 'no-resync' (did you mean 'resync = no'?)");
        expect_error("no-all = 1\n", 1, "t.conf:1: unknown key 'no-all' (did you mean 'all = no'?)");
        expect_error("no-timeout = 1\n", 1, "t.conf:1: unknown key 'no-timeout'");
        /* A typing slip: the nearest key, if one is near enough and nearest alone. */
        expect_error("max-chidren = 3\n", 1, "t.conf:1: unknown key 'max-chidren' (did you mean 'max-children'?)");
        expect_error("max-chlidren = 3\n", 1, "t.conf:1: unknown key 'max-chlidren' (did you mean 'max-children'?)");
        expect_error("maxchildren = 3\n", 1, "t.conf:1: unknown key 'maxchildren' (did you mean 'max-children'?)");
        expect_error("timout = 3\n", 1, "t.conf:1: unknown key 'timout' (did you mean 'timeout'?)");
        expect_error("Concurency = 3\n", 1, "t.conf:1: unknown key 'Concurency' (did you mean 'concurrency'?)");
        expect_error("al = yes\n", 1, "t.conf:1: unknown key 'al' (did you mean 'all'?)");
        expect_error("children = 3\n", 1, "t.conf:1: unknown key 'children'");
        expect_error("ordered = strict\n", 1, "t.conf:1: unknown key 'ordered'");
        expect_error("timeout = 30 # seconds\n", 1,
                     "t.conf:1: 'timeout' must be a number 1..86400: '30 # seconds'");
        expect_error("timeout = 5\n\n# x\ntimeout = 6\n", 4,
                     "t.conf:4: duplicate key 'timeout' (first set on line 1)");
        expect_error("agent = /a\nhotplug-d = /etc/hotplug.d\n", 2,
                     "t.conf:2: 'agent' and 'hotplug-d' exclude each other ('agent' set on line 1)");
}

/* Every long option without a key is refused by name, pointing at its --NAME. */
static void test_command_line_only(void)
{
        unsigned n = 0;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char text[128], msg[256];

                if (oi->key)
                        continue;
                snprintf(text, sizeof(text), "# x\n%s = 1\n", oi->name);
                snprintf(msg, sizeof(msg), "t.conf:2: '%s' is a command-line option only (--%s)", oi->name, oi->name);
                expect_error(text, 2, msg);
                n++;
        }
        check(n > 0);
        expect_error("dry-run = yes\n", 1, "t.conf:1: 'dry-run' is a command-line option only (--dry-run)");
}

static void test_bad_bytes(void)
{
        static struct conf c, before;
        struct conf_error err;
        char big[HP_CONF_LINE_MAX + 64];
        const char nul[] = "timeout = 5\nagent = /sbin/hot\0plug\n";

        expect_error("agent = /sbin/hotplug\r\n", 1, "t.conf:1: control character 0x0d at column 22");
        expect_error("timeout = 5\n\x1b[31mall = yes\n", 2, "t.conf:2: control character 0x1b at column 1");
        expect_error("all = yes\x7f\n", 1, "t.conf:1: control character 0x7f at column 10");

        memset(&c, 0x5a, sizeof(c));
        memcpy(&before, &c, sizeof(c));
        check_int(conf_parse("t.conf", nul, sizeof(nul) - 1, &c, &err), -EINVAL);
        check_str(err.msg, "t.conf:2: NUL byte at column 18");
        check(memcmp(&c, &before, sizeof(c)) == 0);

        /* A line of exactly HP_CONF_LINE_MAX bytes is fine, one more is not. */
        memset(big, 0, sizeof(big));
        memcpy(big, "agent = /", 9);
        memset(big + 9, 'a', HP_CONF_LINE_MAX - 9);
        check_int(parse(big, &c, &err), 0);
        check_int(strlen(c.values.cfg.agent), HP_CONF_LINE_MAX - 8);
        big[HP_CONF_LINE_MAX] = '\n';
        check_int(parse(big, &c, &err), 0);
        big[HP_CONF_LINE_MAX] = 'a';
        expect_error(big, 1, "t.conf:1: line longer than 1024 bytes");
}

#define RCVBUF_ERR "t.conf:1: 'rcvbuf' must be a number 4096..2147483647, optionally followed by K, M or G " \
                   "(KiB, MiB, GiB): "

static void test_value_errors(void)
{
        expect_error("agent = sbin/hotplug\n", 1,
                     "t.conf:1: 'agent' must be an absolute path: 'sbin/hotplug'");
        expect_error("hotplug-d = ./hotplug.d\n", 1,
                     "t.conf:1: 'hotplug-d' must be an absolute path: './hotplug.d'");
        expect_error("handler-dir = lib\n", 1, "t.conf:1: 'handler-dir' must be an absolute path: 'lib'");
        expect_error("sysfs = sys\n", 1, "t.conf:1: 'sysfs' must be an absolute path: 'sys'");
        expect_error("record = x.rec\n", 1, "t.conf:1: 'record' must be an absolute path: 'x.rec'");
        expect_error("max-children = 0\n", 1, "t.conf:1: 'max-children' must be a number 1..2048: '0'");
        expect_error("max-children = 2049\n", 1,
                     "t.conf:1: 'max-children' must be a number 1..2048: '2049'");
        expect_error("concurrency = 0\n", 1, "t.conf:1: 'concurrency' must be auto or a number 1..2048: '0'");
        expect_error("concurrency = Auto\n", 1,
                     "t.conf:1: 'concurrency' must be auto or a number 1..2048: 'Auto'");
        expect_error("concurrency = 2049\n", 1,
                     "t.conf:1: 'concurrency' must be auto or a number 1..2048: '2049'");
        expect_error("max-queue = -1\n", 1, "t.conf:1: 'max-queue' must be a number 1..1048576: '-1'");
        expect_error("max-queue = +5\n", 1, "t.conf:1: 'max-queue' must be a number 1..1048576: '+5'");
        expect_error("timeout = 30s\n", 1, "t.conf:1: 'timeout' must be a number 1..86400: '30s'");
        expect_error("timeout = 0x10\n", 1, "t.conf:1: 'timeout' must be a number 1..86400: '0x10'");
        expect_error("kill-grace = 99999999999999999999999\n", 1,
                     "t.conf:1: 'kill-grace' must be a number 1..86400: '99999999999999999999999'");
        expect_error("rcvbuf = 4095\n", 1,
                     RCVBUF_ERR "'4095'");
        expect_error("rcvbuf = 2G\n", 1,
                     RCVBUF_ERR "'2G'");
        expect_error("rcvbuf = 128MB\n", 1,
                     RCVBUF_ERR "'128MB'");
        expect_error("rcvbuf = 17179869184G\n", 1,
                     RCVBUF_ERR "'17179869184G'");
        expect_error("rebroadcast = 1\n", 1, "t.conf:1: 'rebroadcast' must be a number 2..32: '1'");
        expect_error("all = maybe\n", 1, "t.conf:1: 'all' must be " OPTION_BOOL_FORM ": 'maybe'");
        expect_error("resync = Yess\n", 1, "t.conf:1: 'resync' must be " OPTION_BOOL_FORM ": 'Yess'");
        expect_error("resync-subsystems = net,block/x\n", 1,
                     "t.conf:1: 'resync-subsystems' wants subsystem names separated by ',', and 'block/x' is not "
                     "one: 'net,block/x'");
        expect_error("ordering = fast\n", 1, "t.conf:1: 'ordering' must be devpath, strict or none: 'fast'");
        expect_error("log-level = loud\n", 1,
                     "t.conf:1: 'log-level' must be err, warning, notice, info, debug or 0-7: 'loud'");
        expect_error("handler-cache = 0\n", 1, "t.conf:1: 'handler-cache' must be a number 1..65536: '0'");
        expect_error("handler-cache = 65537\n", 1, "t.conf:1: 'handler-cache' must be a number 1..65536: '65537'");
        expect_error("firmware-loader = sometimes\n", 1, "t.conf:1: 'firmware-loader' must be " OPTION_BOOL_FORM ": 'sometimes'");
        expect_error("input-strip-quotes = y\n", 1, "t.conf:1: 'input-strip-quotes' must be " OPTION_BOOL_FORM ": 'y'");
        expect_error("firmware-path = lib/firmware\n", 1,
                     "t.conf:1: 'firmware-path' must be absolute paths separated by ':': 'lib/firmware'");
        expect_error("firmware-path = /lib/firmware:\n", 1,
                     "t.conf:1: 'firmware-path' must be absolute paths separated by ':': '/lib/firmware:'");
        expect_error("firmware-path = /a::/b\n", 1,
                     "t.conf:1: 'firmware-path' must be absolute paths separated by ':': '/a::/b'");
        expect_error("filter-policy = usb\n", 1,
                     "t.conf:1: 'filter-policy' wants SUBSYSTEM=keep|drop|handlers items: 'usb'");
        expect_error("filter-policy = usb=maybe\n", 1,
                     "t.conf:1: 'filter-policy' wants SUBSYSTEM=keep|drop|handlers items: 'usb=maybe'");
        expect_error("filter-policy = a/b=drop\n", 1,
                     "t.conf:1: 'filter-policy' wants SUBSYSTEM=keep|drop|handlers items: 'a/b=drop'");
        /* Bytes above 0x7f are allowed in values but escaped in messages. */
        expect_error("agent = caf\xc3\xa9\n", 1,
                     "t.conf:1: 'agent' must be an absolute path: 'caf\\xc3\\xa9'");
}

static void test_too_large(void)
{
        static struct conf c;
        struct conf_error err;
        size_t n = HP_CONF_FILE_MAX + 1;
        char *buf = malloc(n);

        check(buf);
        memset(buf, '\n', n);
        check_int(conf_parse("big.conf", buf, n - 1, &c, &err), 0);
        check_int(conf_parse("big.conf", buf, n, &c, &err), -EFBIG);
        check_str(err.msg, "big.conf: larger than 65536 bytes");
        check_int(err.line, 0);
        free(buf);
}

/* Create @path afresh (owned by us) holding @text, with @mode. */
static void write_file(const char *path, const char *text, mode_t mode)
{
        int fd;

        (void)unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        check(fd >= 0);
        check(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        check(fchmod(fd, mode) == 0);
        close(fd);
}

static void test_load(void)
{
        char dir[] = "/tmp/test-config.XXXXXX", path[PATH_MAX], msg[PATH_MAX + 128];
        static struct conf c;
        struct conf_error err;

        check(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/hotplugd.conf", dir);

        check_int(conf_load(path, &c, &err), -ENOENT);
        snprintf(msg, sizeof(msg), "%s: cannot open: %s", path, strerror(ENOENT));
        check_str(err.msg, msg);

        write_file(path, "# test\nordering = strict\ntimeout = 7\n", 0644);
        check_int(conf_load(path, &c, &err), 0);
        check_int(c.set, option_key_bit("ordering") | option_key_bit("timeout"));
        check_int(c.values.cfg.timeout_usec, 7 * USEC_PER_SEC);

        write_file(path, "ordering = strict\ntimeout = never\n", 0644);
        c.values.cfg.timeout_usec = 1234;
        check_int(conf_load(path, &c, &err), -EINVAL);
        snprintf(msg, sizeof(msg), "%s:2: 'timeout' must be a number 1..86400: 'never'", path);
        check_str(err.msg, msg);
        check_int(c.values.cfg.timeout_usec, 1234);

        write_file(path, "timeout = 7\n", 0664);
        check_int(conf_load(path, &c, &err), -EPERM);
        snprintf(msg, sizeof(msg), "%s: writable by group or others (mode 0664); refusing it", path);
        check_str(err.msg, msg);
        write_file(path, "timeout = 7\n", 0646);
        check_int(conf_load(path, &c, &err), -EPERM);

        check_int(conf_load(dir, &c, &err), -EINVAL);
        snprintf(msg, sizeof(msg), "%s: not a regular file", dir);
        check_str(err.msg, msg);

        if (geteuid() == 0) {
                /* Owned by someone else than root or us. */
                write_file(path, "timeout = 7\n", 0644);
                check(chown(path, 12345, 12345) == 0);
                check_int(conf_load(path, &c, &err), -EPERM);
                snprintf(msg, sizeof(msg), "%s: owned by uid 12345, not by root; refusing it", path);
                check_str(err.msg, msg);
        }

        /* Larger than the bound on disk. */
        {
                char *big = malloc(HP_CONF_FILE_MAX + 2);

                check(big);
                memset(big, '#', HP_CONF_FILE_MAX + 1);
                big[HP_CONF_FILE_MAX + 1] = '\0';
                write_file(path, big, 0644);
                free(big);
                check_int(conf_load(path, &c, &err), -EFBIG);
        }

        check(unlink(path) == 0);
        check(rmdir(dir) == 0);
}

static void test_precedence(void)
{
        static struct conf c;
        struct manager_config cfg;
        struct conf_error err;

        check_int(parse("agent = /file/agent\nordering = strict\nmax-children = 3\nmax-queue = 10\n"
                        "timeout = 9\nkill-grace = 4\nall = yes\nhandler-dir = /file/h\nsysfs = /file/sys\n"
                        "rcvbuf = 8K\nfilter-policy = usb=drop\nfirmware-loader = yes\nfirmware-path = /file/fw\n"
                        "handler-cache = 5\ninput-strip-quotes = yes\n",
                        &c, &err),
                  0);

        /* The defaults, before anything applies. */
        options_defaults(&cfg);
        check_str(cfg.handlers.handler_dir, HOTPLUGD_HANDLER_DIR);
        check(cfg.handlers.filter_policy == NULL);
        check(!cfg.handlers.firmware_loader);
        check(cfg.handlers.firmware_path == NULL);
        check_int(cfg.handlers.cache_size, 0);
        check(!cfg.handlers.input_strip_quotes);

        /* Nothing on the command line: the file wins over the defaults. */
        options_defaults(&cfg);
        conf_apply(&c, &cfg, 0);
        check_str(cfg.agent, "/file/agent");
        check(cfg.hotplug_d == NULL);
        check_int(cfg.ordering, ORDERING_STRICT);
        check_int(cfg.max_children, 3);
        check_int(cfg.max_queue, 10);
        check_int(cfg.timeout_usec, 9 * USEC_PER_SEC);
        check_int(cfg.kill_grace_usec, 4 * USEC_PER_SEC);
        check(cfg.handlers.pass_all);
        check_str(cfg.handlers.handler_dir, "/file/h");
        check_str(cfg.sysfs_root, "/file/sys");
        check_str(cfg.handlers.sysfs_root, "/file/sys");
        check_int(cfg.rcvbuf, 8192);
        check_str(cfg.handlers.filter_policy, "usb=drop");
        check(cfg.handlers.firmware_loader);
        check_str(cfg.handlers.firmware_path, "/file/fw");
        check_int(cfg.handlers.cache_size, 5);
        check(cfg.handlers.input_strip_quotes);

        /* The command line wins key by key, the handler keys too. */
        options_defaults(&cfg);
        cfg.ordering = ORDERING_NONE;
        cfg.timeout_usec = 1;
        cfg.sysfs_root = cfg.handlers.sysfs_root = "/cli/sys";
        cfg.handlers.filter_policy = "usb=keep";
        cfg.handlers.cache_size = 9;
        conf_apply(&c, &cfg, option_key_bit("ordering") | option_key_bit("timeout") | option_key_bit("sysfs") |
                                     option_key_bit("filter-policy") | option_key_bit("handler-cache"));
        check_str(cfg.handlers.filter_policy, "usb=keep");
        check_int(cfg.handlers.cache_size, 9);
        check_str(cfg.handlers.firmware_path, "/file/fw");
        check(cfg.handlers.input_strip_quotes);
        check_int(cfg.ordering, ORDERING_NONE);
        check_int(cfg.timeout_usec, 1);
        check_str(cfg.sysfs_root, "/cli/sys");
        check_str(cfg.handlers.sysfs_root, "/cli/sys");
        check_int(cfg.max_children, 3);
        check_str(cfg.agent, "/file/agent");

        /* --hotplug-d on the command line beats the file's agent... */
        options_defaults(&cfg);
        cfg.hotplug_d = "/cli/hotplug.d";
        conf_apply(&c, &cfg, option_key_bit("hotplug-d"));
        check_str(cfg.hotplug_d, "/cli/hotplug.d");
        check_str(cfg.agent, HOTPLUGD_DEFAULT_AGENT);

        /* ...and --agent beats the file's hotplug-d. */
        check_int(parse("hotplug-d = /file/hotplug.d\nall = no\n", &c, &err), 0);
        options_defaults(&cfg);
        cfg.agent = "/cli/agent";
        cfg.handlers.pass_all = true;
        conf_apply(&c, &cfg, option_key_bit("agent") | option_key_bit("all"));
        check(cfg.hotplug_d == NULL);
        check_str(cfg.agent, "/cli/agent");
        check(cfg.handlers.pass_all);
        options_defaults(&cfg);
        conf_apply(&c, &cfg, 0);
        check_str(cfg.hotplug_d, "/file/hotplug.d");
        check(!cfg.handlers.pass_all);

        /* resync: on by default, off from the file, and --no-resync beats "resync = yes". */
        options_defaults(&cfg);
        check(cfg.resync);
        check_int(parse("resync = no\n", &c, &err), 0);
        conf_apply(&c, &cfg, 0);
        check(!cfg.resync);
        check_int(parse("resync = yes\n", &c, &err), 0);
        options_defaults(&cfg);
        cfg.resync = false;
        conf_apply(&c, &cfg, option_key_bit("resync"));
        check(!cfg.resync);
        conf_apply(&c, &cfg, 0);
        check(cfg.resync);
}

/* More rules than HP_FILTER_RULES_MAX, counting the two defaults. */
static void test_filter_rules_bound(void)
{
        static struct conf c;
        struct conf_error err;
        char text[HP_CONF_LINE_MAX], exp[256];
        size_t len;
        int i;

        len = (size_t)snprintf(text, sizeof(text), "filter-policy =");
        for (i = 0; i < HP_FILTER_RULES_MAX - 2; i++)
                len += (size_t)snprintf(text + len, sizeof(text) - len, " s%d=drop", i);
        check_int(parse(text, &c, &err), 0);
        snprintf(text + len, sizeof(text) - len, " s%d=drop", i);
        snprintf(exp, sizeof(exp), "t.conf:1: 'filter-policy' has more than %d rules with the defaults: ",
                 HP_FILTER_RULES_MAX);
        check_int(parse(text, &c, &err), -EINVAL);
        check(strncmp(err.msg, exp, strlen(exp)) == 0);
}

/* The command-line form of the handler keys accepts what the file accepts. */
static void test_handler_options(void)
{
        struct handler_config h, before;
        char why[256];

        memset(&h, 0, sizeof(h));
        check_int(conf_set_handler_option("filter-policy", "net=drop", &h, why, sizeof(why)), 0);
        check_str(h.filter_policy, "net=drop");
        check_int(conf_set_handler_option("firmware-path", "/a:/b", &h, why, sizeof(why)), 0);
        check_str(h.firmware_path, "/a:/b");
        check_int(conf_set_handler_option("handler-cache", "77", &h, why, sizeof(why)), 0);
        check_int(h.cache_size, 77);
        check_int(conf_set_handler_option("firmware-loader", NULL, &h, why, sizeof(why)), 0);
        check(h.firmware_loader);
        check_int(conf_set_handler_option("input-strip-quotes", NULL, &h, why, sizeof(why)), 0);
        check(h.input_strip_quotes);

        memcpy(&before, &h, sizeof(h));
        check_int(conf_set_handler_option("handler-cache", "65537", &h, why, sizeof(why)), -EINVAL);
        check_str(why, "'handler-cache' must be a number 1..65536");
        check_int(conf_set_handler_option("filter-policy", "net", &h, why, sizeof(why)), -EINVAL);
        check_str(why, "'filter-policy' wants SUBSYSTEM=keep|drop|handlers items");
        check_int(conf_set_handler_option("firmware-path", "fw", &h, why, sizeof(why)), -EINVAL);
        check_str(why, "'firmware-path' must be absolute paths separated by ':'");
        check_int(conf_set_handler_option("agent", "/x", &h, why, sizeof(why)), -EINVAL);
        check(memcmp(&h, &before, sizeof(h)) == 0);
}

static void test_key_names(void)
{
        /* A key is its row: its name, its bit. */
        check_str(option_by_key("max-children")->name, "max-children");
        check(option_key_bit("resync") == option_bit(option_by_name("resync")));
        check(option_key_bit("input-strip-quotes") != 0);
        check(option_key_bit("config") == 0); /* command line only */
        check(option_key_bit("colour") == 0);
}

int main(void)
{
        run_test(test_all_keys);
        run_test(test_values);
        run_test(test_syntax_errors);
        run_test(test_command_line_only);
        run_test(test_bad_bytes);
        run_test(test_value_errors);
        run_test(test_too_large);
        run_test(test_load);
        run_test(test_precedence);
        run_test(test_filter_rules_bound);
        run_test(test_handler_options);
        run_test(test_key_names);
        return 0;
}
