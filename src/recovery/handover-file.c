/* SPDX-License-Identifier: MIT */
/*
 * The handover file (format and trust in handover-file.h).
 *
 * Saving streams the journal's export and the device records through one
 * buffered writer into PATH.tmp, then writes the header (whose CRCs need
 * the whole body) at offset 0 and renames.  Loading maps the file
 * read-only, checks everything before it takes anything over, and removes
 * the file either way (a refused one is kept as PATH.refused for a look).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recovery/handover-file.h"
#include "recovery/handover.h"
#include "shared/bounds.h"
#include "shared/macro.h"
#include "shared/trust.h"
#include "uevent/record.h"

#define DEV_FRAME 8

struct file_header {
        char magic[8];
        uint32_t version;
        uint32_t size;
        uint64_t journal;
        uint64_t devices;
        uint64_t body;
        uint32_t body_crc;
        uint32_t header_crc;
        uint8_t boot_id[16];
};
_Static_assert(sizeof(struct file_header) == HANDOVER_FILE_HEADER_SIZE, "handover file header layout");

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int handover_boot_id(uint8_t ret[16])
{
        char text[64];
        size_t n = 0;
        ssize_t len;
        int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return negative_errno();
        len = read(fd, text, sizeof(text) - 1);
        safe_close(fd);
        if (len < 0)
                return negative_errno();
        for (ssize_t i = 0; i < len && n < 32; i++) {
                int v = hexval(text[i]);

                if (text[i] == '-' || text[i] == '\n')
                        continue;
                if (v < 0)
                        return -EBADMSG;
                if (n % 2 == 0)
                        ret[n / 2] = (uint8_t)(v << 4);
                else
                        ret[n / 2] |= (uint8_t)v;
                n++;
        }
        return n == 32 ? 0 : -EBADMSG;
}

/* ---- saving ---------------------------------------------------------------- */

struct writer {
        int fd;
        uint8_t buf[65536];
        size_t n;
        uint64_t body;
        uint32_t crc;
        int error;
};

static void w_flush(struct writer *w)
{
        size_t off = 0;

        while (w->error == 0 && off < w->n) {
                ssize_t k = write(w->fd, w->buf + off, w->n - off);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        w->error = k < 0 ? negative_errno() : -ENOSPC;
                else
                        off += (size_t)k;
        }
        w->n = 0;
}

static void w_put(struct writer *w, const void *data, size_t size)
{
        w->crc = record_crc32(w->crc, data, size);
        w->body += size;
        if (w->n + size > sizeof(w->buf))
                w_flush(w);
        memcpy(w->buf + w->n, data, size); /* a record is far smaller than the buffer */
        w->n += size;
}

/* Flags of @devpath: present in @present, handled in @handled. */
static uint8_t flags_of(const char *devpath, const struct devset *present, const struct devset *handled)
{
        return (uint8_t)((devset_get(present, devpath) ? HANDOVER_DEV_PRESENT : 0) |
                         (devset_get(handled, devpath) ? HANDOVER_DEV_HANDLED : 0));
}

/* One record per device of @s; a device of @skip too was written with @skip's records. */
static uint64_t put_devices(struct writer *w, const struct devset *s, const struct devset *skip,
                            const struct devset *present, const struct devset *handled)
{
        const struct devset_entry *e;
        uint64_t n = 0;
        size_t it = 0;

        while ((e = devset_next(s, &it))) {
                size_t dl = strlen(e->devpath), sl = strlen(e->subsystem);
                uint8_t frame[DEV_FRAME] = { flags_of(e->devpath, present, handled) };
                uint16_t d16 = (uint16_t)dl, s16 = (uint16_t)sl;

                if ((skip && devset_get(skip, e->devpath)) || dl == 0 || dl > HP_HANDOVER_DEVPATH_MAX ||
                    sl == 0 || sl > HP_HANDOVER_SUBSYSTEM_MAX)
                        continue;
                memcpy(frame + 2, &d16, 2);
                memcpy(frame + 4, &s16, 2);
                w_put(w, frame, sizeof(frame));
                w_put(w, e->devpath, dl);
                w_put(w, e->subsystem, sl);
                n++;
        }
        return n;
}

int handover_file_save(const char *path, const struct handover *journal, const struct devset *present,
                       const struct devset *handled, uint64_t *ret_bytes)
{
        _cleanup_free_ struct writer *w = calloc(1, sizeof(*w));
        struct file_header hd = { .version = HANDOVER_FILE_VERSION, .size = HANDOVER_FILE_HEADER_SIZE };
        char tmp[PATH_MAX];
        int64_t jbytes;
        int r;

        if (!w)
                return -ENOMEM;
        if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
                return -ENAMETOOLONG;
        r = handover_boot_id(hd.boot_id);
        if (r < 0)
                return r;
        (void)unlink(tmp);
        w->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (w->fd < 0)
                return negative_errno();
        /* The journal goes in after the header's room; its bytes enter the body's CRC as read back. */
        if (lseek(w->fd, HANDOVER_FILE_HEADER_SIZE, SEEK_SET) < 0)
                w->error = negative_errno();
        jbytes = w->error ? 0 : handover_export(journal, w->fd);
        if (jbytes < 0)
                w->error = (int)jbytes;
        else {
                hd.journal = (uint64_t)jbytes;
                w->body = hd.journal;
        }
        if (w->error == 0) {
                /* The journal's CRC: read back what was written (it is on the same tmpfs). */
                uint8_t buf[65536];

                for (uint64_t off = 0; off < hd.journal && w->error == 0;) {
                        size_t k = (size_t)MIN(hd.journal - off, (uint64_t)sizeof(buf));
                        ssize_t got = pread(w->fd, buf, k, (off_t)(HANDOVER_FILE_HEADER_SIZE + off));

                        if (got != (ssize_t)k)
                                w->error = got < 0 ? negative_errno() : -EIO;
                        else
                                w->crc = record_crc32(w->crc, buf, k);
                        off += k;
                }
        }
        if (w->error == 0) {
                hd.devices = put_devices(w, present, NULL, present, handled);
                hd.devices += put_devices(w, handled, present, present, handled);
                w_flush(w);
        }
        if (w->error == 0) {
                memcpy(hd.magic, HANDOVER_FILE_MAGIC, 8);
                hd.body = w->body;
                hd.body_crc = w->crc;
                hd.header_crc = record_crc32(0, &hd, sizeof(hd));
                if (pwrite(w->fd, &hd, sizeof(hd), 0) != (ssize_t)sizeof(hd))
                        w->error = -EIO;
        }
        r = w->error;
        if (close(w->fd) < 0 && r == 0)
                r = negative_errno();
        if (r == 0 && rename(tmp, path) < 0)
                r = negative_errno();
        if (r < 0) {
                (void)unlink(tmp);
                return r;
        }
        if (ret_bytes)
                *ret_bytes = HANDOVER_FILE_HEADER_SIZE + hd.body;
        return 0;
}

/* ---- loading ----------------------------------------------------------------- */

static int refuse(char *why, size_t size, int error, const char *fmt, ...) _printf_(4, 5);
static int refuse(char *why, size_t size, int error, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return error;
}

static bool subsystem_ok(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
                      s[i] == '_' || s[i] == '-' || s[i] == '.'))
                        return false;
        return true;
}

static bool devpath_ok(const char *s, size_t n)
{
        if (n == 0 || s[0] != '/')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] <= ' ' || s[i] > '~')
                        return false;
                if (s[i] == '/' && i + 1 < n && (s[i + 1] == '.' || s[i + 1] == '/'))
                        return false;
        }
        return true;
}

/* The device records at @p[0..size): into @f's sets. Return: 0 or a refusal. */
static int load_devices(const uint8_t *p, uint64_t size, uint64_t count, struct handover_file *f, char *why,
                        size_t why_size)
{
        char dev[HP_HANDOVER_DEVPATH_MAX + 1], sub[HP_HANDOVER_SUBSYSTEM_MAX + 1];
        uint64_t off = 0, i;

        for (i = 0; i < count; i++) {
                uint16_t dl, sl, zero;
                uint8_t flags;
                int r = 0;

                if (size - off < DEV_FRAME)
                        break;
                flags = p[off];
                memcpy(&dl, p + off + 2, 2);
                memcpy(&sl, p + off + 4, 2);
                memcpy(&zero, p + off + 6, 2);
                off += DEV_FRAME;
                if (flags == 0 || flags > (HANDOVER_DEV_PRESENT | HANDOVER_DEV_HANDLED) || p[off - DEV_FRAME + 1] ||
                    zero || dl == 0 || dl > HP_HANDOVER_DEVPATH_MAX || sl == 0 || sl > HP_HANDOVER_SUBSYSTEM_MAX ||
                    size - off < (uint64_t)dl + sl)
                        return refuse(why, why_size, -EBADMSG, "device record %" PRIu64 " is malformed", i + 1);
                memcpy(dev, p + off, dl);
                dev[dl] = '\0';
                memcpy(sub, p + off + dl, sl);
                sub[sl] = '\0';
                off += (uint64_t)dl + sl;
                if (!devpath_ok(dev, dl) || !subsystem_ok(sub, sl))
                        return refuse(why, why_size, -EBADMSG, "device record %" PRIu64 " has a bad DEVPATH or SUBSYSTEM",
                                      i + 1);
                if (flags & HANDOVER_DEV_PRESENT)
                        r = devset_put(&f->present, dev, sub);
                if (r >= 0 && (flags & HANDOVER_DEV_HANDLED))
                        r = devset_put(&f->handled, dev, sub);
                if (r == -ENOMEM)
                        return refuse(why, why_size, r, "out of memory");
                if (r < 0)
                        return refuse(why, why_size, r, "more than %d devices", HP_RESYNC_DEVICES_MAX);
        }
        if (i < count || off != size)
                return refuse(why, why_size, -EBADMSG, "%" PRIu64 " device records announced, %" PRIu64 " found",
                              count, i);
        return 0;
}

/* Check @map's header and body, then take them over into @f. */
static int load_map(const uint8_t *map, uint64_t size, struct handover_file *f, char *why, size_t why_size)
{
        struct file_header hd;
        uint8_t boot[16];
        uint32_t crc;
        int r;

        if (size < sizeof(hd))
                return refuse(why, why_size, -EBADMSG, "it is shorter than its header");
        memcpy(&hd, map, sizeof(hd));
        crc = hd.header_crc;
        hd.header_crc = 0;
        if (memcmp(hd.magic, HANDOVER_FILE_MAGIC, 8) != 0)
                return refuse(why, why_size, -EBADMSG, "it is not a handover file");
        if (hd.version != HANDOVER_FILE_VERSION || hd.size != HANDOVER_FILE_HEADER_SIZE)
                return refuse(why, why_size, -EPROTONOSUPPORT, "its version (%" PRIu32 ") is not %d",
                              hd.version, HANDOVER_FILE_VERSION);
        if (record_crc32(0, &hd, sizeof(hd)) != crc)
                return refuse(why, why_size, -EBADMSG, "its header's checksum is wrong");
        if (hd.body != size - sizeof(hd) || hd.journal > hd.body)
                return refuse(why, why_size, -EBADMSG, "its sizes do not add up (%" PRIu64 " bytes)", size);
        if (record_crc32(0, map + sizeof(hd), hd.body) != hd.body_crc)
                return refuse(why, why_size, -EBADMSG, "its body's checksum is wrong");
        r = handover_boot_id(boot);
        if (r < 0)
                return refuse(why, why_size, r, "this boot's ID cannot be read");
        if (memcmp(boot, hd.boot_id, sizeof(boot)) != 0)
                return refuse(why, why_size, -ESTALE, "it was written in another boot");
        r = load_devices(map + sizeof(hd) + hd.journal, hd.body - hd.journal, hd.devices, f, why, why_size);
        if (r < 0)
                return r;
        r = handover_import(map + sizeof(hd), hd.journal, &f->journal);
        if (r == -EBADMSG)
                return refuse(why, why_size, r, "its journal is not a handover journal");
        if (r < 0)
                return refuse(why, why_size, r, "its journal cannot be taken over");
        return 0;
}

int handover_file_load(const char *path, struct handover_file *ret, char *why, size_t why_size)
{
        char refused[PATH_MAX];
        struct stat st;
        void *map = NULL;
        int fd, r;

        *ret = (struct handover_file){ .journal = NULL };
        devset_init(&ret->present, 0);
        devset_init(&ret->handled, 0);
        why[0] = '\0';
        /* The directories on the way by the daemon's one trust rule (shared/trust.h): nobody but
         * root may have put another file in its place.  The file itself is checked below. */
        if (snprintf(refused, sizeof(refused), "%s", path) >= (int)sizeof(refused))
                return refuse(why, why_size, -ENAMETOOLONG, "its path is too long");
        {
                char *slash = strrchr(refused, '/');
                const char *dir_why = NULL;

                if (slash)
                        *(slash == refused ? slash + 1 : slash) = '\0';
                r = slash ? trust_check_path(refused, true, &st, &dir_why) : 0;
                if (r == -ENOENT)
                        return r;
                if (r < 0) {
                        r = refuse(why, why_size, r, "its directory %s is not trusted (%s)", refused,
                                   dir_why ? dir_why : strerror(-r));
                        goto out;
                }
        }
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                r = negative_errno();
                if (r == -ENOENT)
                        return r;
                if (r == -ELOOP)
                        r = refuse(why, why_size, r, "it is a symbolic link");
                else
                        r = refuse(why, why_size, r, "it cannot be opened (%s)", strerror(-r));
                goto out;
        }
        if (fstat(fd, &st) < 0)
                r = refuse(why, why_size, negative_errno(), "it cannot be examined");
        else if (!S_ISREG(st.st_mode))
                r = refuse(why, why_size, -EPERM, "it is not a regular file");
        else if (st.st_uid != geteuid())
                r = refuse(why, why_size, -EPERM, "it is owned by uid %u, not %u", (unsigned)st.st_uid,
                           (unsigned)geteuid());
        else if (st.st_mode & (S_IWGRP | S_IWOTH))
                r = refuse(why, why_size, -EPERM, "others may write to it (mode %04o)", (unsigned)(st.st_mode & 07777));
        else if (st.st_nlink != 1)
                r = refuse(why, why_size, -EPERM, "it has %ju links", (uintmax_t)st.st_nlink);
        else if (st.st_size > HP_HANDOVER_FILE_MAX)
                r = refuse(why, why_size, -EFBIG, "it is larger than %d bytes", HP_HANDOVER_FILE_MAX);
        else if (st.st_size < (off_t)sizeof(struct file_header))
                r = refuse(why, why_size, -EBADMSG, "it is shorter than its header");
        else if ((map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
                map = NULL;
                r = refuse(why, why_size, negative_errno(), "it cannot be mapped");
        } else
                r = load_map(map, (uint64_t)st.st_size, ret, why, why_size);
        if (map)
                munmap(map, (size_t)st.st_size);
        safe_close(fd);
out:
        if (r == 0)
                (void)unlink(path);
        else {
                /* Kept for a look, out of the way of the next instance. */
                if ((size_t)snprintf(refused, sizeof(refused), "%s.refused", path) >= sizeof(refused) ||
                    rename(path, refused) < 0)
                        (void)unlink(path);
                handover_file_done(ret);
        }
        return r;
}

void handover_file_done(struct handover_file *f)
{
        f->journal = handover_free(f->journal);
        devset_clear(&f->present);
        devset_clear(&f->handled);
}
