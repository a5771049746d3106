/* SPDX-License-Identifier: MIT */
/*
 * Resync decisions (see resync.h): the sysfs listing, the reconciliation
 * plan, SEQNUMs for synthesised removes and their datagrams.
 *
 * Invariants: a plan lists each DEVPATH at most once, in its operations
 * or among the devices it leaves alone, never in both; its removes come
 * first, in reverse DEVPATH order (a child sorts after its parent, so it
 * is removed first), then its adds and changes in DEVPATH order (parents
 * first); every operation is of a listed subsystem (all, without a list);
 * it owns copies of every string, so the sets it was built from may
 * change while it is carried out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/bounds.h"
#include "shared/macro.h"
#include "recovery/resync.h"
#include "shared/sysfs.h"
#include "uevent/subsystem-list.h"

/* ---- sysfs listing ------------------------------------------------------- */

struct scan {
        struct devset *set;
        resync_visit_fn visit;
        void *userdata;
        char path[PATH_MAX]; /* DEVPATH of the directory being read */
        int error;           /* first fatal error (-ENOMEM) */
};

static void scan_dir(struct scan *sc, int fd, size_t len, unsigned depth);

static void scan_child(struct scan *sc, int parent, const char *name, size_t len, unsigned depth)
{
        size_t nl = strlen(name);
        int fd;

        if (depth >= HP_RESYNC_DEPTH_MAX || len + 1 + nl >= sizeof(sc->path))
                return;
        /* O_NOFOLLOW: a symbolic link is never entered; a file fails O_DIRECTORY. */
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        sc->path[len] = '/';
        memcpy(sc->path + len + 1, name, nl + 1);
        scan_dir(sc, fd, len + 1 + nl, depth + 1);
        sc->path[len] = '\0';
}

/* Read directory @fd (consumed) at sc->path[0..len). */
static void scan_dir(struct scan *sc, int fd, size_t len, unsigned depth)
{
        DIR *d = fdopendir(fd);
        bool has_uevent = false, has_subsystem = false;
        struct dirent *de;
        char link[PATH_MAX];
        ssize_t n;

        if (!d) {
                safe_close(fd);
                return;
        }
        while (sc->error == 0 && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (strcmp(de->d_name, "uevent") == 0 && (de->d_type == DT_REG || de->d_type == DT_UNKNOWN))
                        has_uevent = true;
                else if (strcmp(de->d_name, "subsystem") == 0 &&
                         (de->d_type == DT_LNK || de->d_type == DT_UNKNOWN))
                        has_subsystem = true;
                else if (de->d_type == DT_DIR || de->d_type == DT_UNKNOWN)
                        scan_child(sc, dirfd(d), de->d_name, len, depth);
        }
        if (sc->error == 0 && has_uevent && has_subsystem &&
            (n = readlinkat(dirfd(d), "subsystem", link, sizeof(link) - 1)) > 0) {
                link[n] = '\0';
                sc->path[len] = '\0';
                int r = devset_put(sc->set, sc->path, sysfs_basename(link));
                if (r == -ENOMEM)
                        sc->error = r;
                else if (sc->visit)
                        sc->visit(sc->userdata, dirfd(d), sc->path);
        }
        closedir(d);
}

int resync_scan(const char *root, struct devset *ret)
{
        return resync_scan_visit(root, ret, NULL, NULL);
}

int resync_scan_visit(const char *root, struct devset *ret, resync_visit_fn visit, void *userdata)
{
        struct scan *sc;
        _cleanup_close_ int rootfd = -1;
        int fd, r;

        rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        fd = openat(rootfd, "devices", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        sc = malloc(sizeof(*sc));
        if (!sc) {
                safe_close(fd);
                return -ENOMEM;
        }
        sc->set = ret;
        sc->visit = visit;
        sc->userdata = userdata;
        sc->error = 0;
        strcpy(sc->path, "/devices");
        scan_dir(sc, fd, strlen(sc->path), 1);
        r = sc->error;
        free(sc);
        return r;
}

/* ---- the plan ------------------------------------------------------------ */

const char *resync_action_to_string(enum resync_action a)
{
        switch (a) {
        case RESYNC_REMOVE:
                return "remove";
        case RESYNC_ADD:
                return "add";
        case RESYNC_CHANGE:
                return "change";
        case RESYNC_LEARN:
                return "learn";
        case RESYNC_FORGET:
                return "forget";
        default:
                return NULL;
        }
}

static int by_devpath(const void *a, const void *b)
{
        const struct devset_entry *x = *(const struct devset_entry *const *)a;
        const struct devset_entry *y = *(const struct devset_entry *const *)b;

        return strcmp(x->devpath, y->devpath);
}

static int by_devpath_reverse(const void *a, const void *b)
{
        return by_devpath(b, a);
}

static int op_set(struct resync_op *op, enum resync_action a, const struct devset_entry *e)
{
        *op = (struct resync_op){ .action = a, .devpath = strdup(e->devpath),
                                  .subsystem = strdup(e->subsystem) };
        return op->devpath && op->subsystem ? 0 : -ENOMEM;
}

/* Append @v[0..k) to @op[*n..] as @a; Return: 0 or -ENOMEM (*n counts what was set, the failed one too). */
static int ops_append(struct resync_op *op, size_t *n, const struct devset_entry *const *v, size_t k,
                      enum resync_action a)
{
        int r = 0;

        for (size_t i = 0; i < k && r == 0; i++, (*n)++)
                r = op_set(&op[*n], a, v[i]);
        return r;
}

static void ops_free(struct resync_op *op, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(op[i].devpath);
                free(op[i].subsystem);
        }
        free(op);
}

void resync_plan_free(struct resync_plan *p)
{
        ops_free(p->op, p->n);
        ops_free(p->left, p->n_left);
        *p = (struct resync_plan){ .op = NULL };
}

/* The devices only @a->known has and that are gone: listed ones into @gone (reverse DEVPATH
 * order), the others into @forget (DEVPATH order). */
static void pick_gone(const struct resync_plan_args *a, const struct devset_entry **gone, size_t *n_gone,
                      const struct devset_entry **forget, size_t *n_forget)
{
        const struct devset_entry *e;
        size_t it = 0;

        *n_gone = *n_forget = 0;
        while ((e = devset_next(a->known, &it)))
                if (!devset_get(a->now, e->devpath) && !(a->exists && a->exists(e->devpath, a->userdata))) {
                        if (subsystem_list_has(a->subsystems, e->subsystem))
                                gone[(*n_gone)++] = e;
                        else
                                forget[(*n_forget)++] = e;
                }
        qsort(gone, *n_gone, sizeof(*gone), by_devpath_reverse);
        qsort(forget, *n_forget, sizeof(*forget), by_devpath);
}

/* Entries of @a->now of listed subsystems to write: adds first, then changes, at most
 * @a->max_writes; sorted by DEVPATH. */
static size_t pick_writes(const struct resync_plan_args *a, const struct devset_entry **out, size_t *ret_adds)
{
        size_t n = 0, it, adds = 0, max = MIN(a->max_writes, a->now->n);
        const struct devset_entry *e;

        for (int pass = 0; pass < (a->no_changes ? 1 : 2); pass++) {
                it = 0;
                while ((e = devset_next(a->now, &it)) && n < max)
                        if ((devset_get(a->known, e->devpath) == NULL) == (pass == 0) &&
                            subsystem_list_has(a->subsystems, e->subsystem))
                                out[n++] = e;
                if (pass == 0)
                        adds = n;
        }
        *ret_adds = adds;
        qsort(out, n, sizeof(*out), by_devpath);
        return n;
}

/* Entries of @a->now of other subsystems: those @a->known lacks into @learn (DEVPATH order).
 * Return: how many entries are of other subsystems. */
static size_t pick_learn(const struct resync_plan_args *a, const struct devset_entry **learn, size_t *n_learn)
{
        const struct devset_entry *e;
        size_t it = 0, unlisted = 0;

        *n_learn = 0;
        while ((e = devset_next(a->now, &it)))
                if (!subsystem_list_has(a->subsystems, e->subsystem)) {
                        unlisted++;
                        if (!devset_get(a->known, e->devpath))
                                learn[(*n_learn)++] = e;
                }
        qsort(learn, *n_learn, sizeof(*learn), by_devpath);
        return unlisted;
}

int resync_plan_build(const struct resync_plan_args *a, struct resync_plan *ret)
{
        _cleanup_free_ const struct devset_entry **gone = NULL, **forget = NULL, **writes = NULL,
                                                 **learn = NULL;
        struct resync_plan p = { .op = NULL };
        size_t n_gone, n_writes, n_adds, unlisted;
        int r;

        gone = calloc(a->known->n + 1, sizeof(*gone));
        forget = calloc(a->known->n + 1, sizeof(*forget));
        writes = calloc(a->now->n + 1, sizeof(*writes));
        learn = calloc(a->now->n + 1, sizeof(*learn));
        if (!gone || !forget || !writes || !learn)
                return -ENOMEM;
        pick_gone(a, gone, &n_gone, forget, &p.n_forget);
        n_writes = pick_writes(a, writes, &n_adds);
        unlisted = pick_learn(a, learn, &p.n_learn);

        p.op = calloc(n_gone + n_writes + 1, sizeof(*p.op));
        p.left = calloc(p.n_learn + p.n_forget + 1, sizeof(*p.left));
        r = p.op && p.left ? 0 : -ENOMEM;
        if (r == 0)
                r = ops_append(p.op, &p.n, gone, n_gone, RESYNC_REMOVE);
        for (size_t i = 0; i < n_writes && r == 0; i++, p.n++)
                r = op_set(&p.op[p.n], devset_get(a->known, writes[i]->devpath) ? RESYNC_CHANGE : RESYNC_ADD,
                           writes[i]);
        if (r == 0)
                r = ops_append(p.left, &p.n_left, learn, p.n_learn, RESYNC_LEARN);
        if (r == 0)
                r = ops_append(p.left, &p.n_left, forget, p.n_forget, RESYNC_FORGET);
        if (r < 0) {
                resync_plan_free(&p);
                return r;
        }
        p.n_remove = n_gone;
        p.n_add = n_adds;
        p.n_change = n_writes - n_adds;
        p.skipped = a->now->n - unlisted - n_writes;
        p.left_alone = unlisted + p.n_forget;
        *ret = p;
        return 0;
}

/* ---- synthesised removes ------------------------------------------------- */

/* Append the numbers of [first, last] above @floor to @out, up to @n in all. */
static size_t take_range(uint64_t first, uint64_t last, uint64_t floor, uint64_t *out, size_t k, size_t n)
{
        if (last <= floor || first > last)
                return k;
        for (uint64_t s = MAX(first, floor + 1); k < n; s++) {
                out[k++] = s;
                if (s == last)
                        break;
        }
        return k;
}

size_t resync_pick_seqnums(const struct ledger *l, uint64_t floor, uint64_t kernel, uint64_t *out, size_t n)
{
        uint64_t seen = MAX(l->last, l->baseline);
        size_t k = 0;

        for (unsigned g = 0; g < l->n_open && k < n; g++)
                k = take_range(l->open[g].first, l->open[g].last, floor, out, k, n);
        if (kernel > seen && seen < UINT64_MAX)
                k = take_range(seen + 1, kernel, floor, out, k, n);
        return k;
}

int resync_remove_datagram(const char *devpath, const char *subsystem, uint64_t seqnum, const char *uuid,
                           char *buf, size_t size)
{
        static const char end[] = ""; /* marks the NUL that ends an entry */
        char seq[32];
        /* The kernel's order: header, ACTION, DEVPATH, SUBSYSTEM, extras, SEQNUM last. */
        const char *parts[] = {
                "remove@", devpath, end, "ACTION=remove", end, "DEVPATH=", devpath, end,
                "SUBSYSTEM=", subsystem, end, RESYNC_ENV_KEY "=1", end,
                uuid ? "SYNTH_UUID=" : "", uuid ? uuid : "", uuid ? end : "",
                "SEQNUM=", seq, end,
        };
        size_t o = 0;

        snprintf(seq, sizeof(seq), "%" PRIu64, seqnum);
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                size_t l = parts[i] == end ? 1 : strlen(parts[i]);

                if (o + l > size)
                        return -ENOBUFS;
                memcpy(buf + o, parts[i], l);
                o += l;
        }
        return (int)o;
}
