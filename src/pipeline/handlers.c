/* SPDX-License-Identifier: MIT */
/*
 * The handler registry: built-ins from a static table, then external
 * handlers in the lexical order of their file names, run as the 2.6
 * kernel ran a kset's hotplug ops.  For one event:
 *   1. filter: the per-subsystem policy first ("drop" ends it, "keep" or
 *      pass_all ignores the handlers' verdicts), then every handler's
 *      filter(); the first HOTPLUGD_DROP drops the event;
 *   2. name: every handler's name(); the last one that returns a name wins;
 *   3. add_env: every handler's add_env(), in order; a later handler sees
 *      the earlier additions and may replace them.
 * Invariants: entries never move (hosts are handed out by address); no
 * allocation in handler_chain_run(); a hook error disables that handler
 * only; an overflow of the environment aborts the event only.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "pipeline/devcache.h"
#include "pipeline/devmodel.h"
#include "shared/escape.h"
#include "pipeline/filter-policy.h"
#include "pipeline/handler-internal.h"
#include "shared/log.h"
#include "shared/sysfs.h"

#define BUILTIN_MAX 16
#define HANDLER_ID_MAX 32
/* Smallest struct hotplugd_handler accepted (the ABI 1 layout). */
#define HANDLER_MIN_SIZE sizeof(struct hotplugd_handler)

_Static_assert(HOTPLUGD_NAME_MAX == HP_NAME_MAX, "name bound of the ABI and the daemon differ");

struct handler_entry {
        struct hotplugd_host host;    /* first member: callbacks get back to the entry */
        struct hotplugd_handler ops;  /* validated copy */
        struct handler_chain *chain;
        void *data;                   /* from init() */
        void *dl;                     /* dlopen() handle, NULL for built-ins */
        char *file;
        bool disabled;
};

struct handler_chain {
        struct handler_config cfg;    /* its strings point at the copies below */
        char *sysfs_root, *handler_dir, *filter_spec, *firmware_path;
        struct filter_policy policy;
        int sysfs_fd;
        struct devcache *cache;
        struct devmodel_binds binds;  /* probes ended by a bind, for the events started later */
        const struct uevent *current; /* event being run, for log lines */
        struct envbuf learn;          /* sysfs-derived additions of this event */
        struct envbuf snapshot;       /* env before an external add_env() */
        size_t n;
        struct handler_entry entries[BUILTIN_MAX + HP_HANDLERS_MAX];
};

static struct handler_entry *entry_of(const struct hotplugd_host *host)
{
        return (struct handler_entry *)(void *)host;
}

/* ---- host services ---- */

_printf_(3, 4) static void host_log(const struct hotplugd_host *host, int priority, const char *format, ...)
{
        const struct handler_entry *h = entry_of(host);
        char msg[512], esc[1024];
        struct log_fields f;
        va_list ap;

        if (priority > log_get_max_level())
                return;
        va_start(ap, format);
        vsnprintf(msg, sizeof(msg), format, ap);
        va_end(ap);
        uevent_log_fields(h->chain->current, &f);
        log_internal(priority < LOG_ERR ? LOG_ERR : priority > LOG_DEBUG ? LOG_DEBUG : priority, 0,
                     h->chain->current ? &f : NULL, "handler %s: %s", h->ops.id, escape_cstr(msg, esc, sizeof(esc)));
}

static const char *ev_get(const struct hotplugd_event *e, const char *key)
{
        return key ? uevent_get(e->ev, key) : NULL;
}

static const char *ev_action(const struct hotplugd_event *e)
{
        return e->ev->action;
}

static const char *ev_devpath(const struct hotplugd_event *e)
{
        return e->ev->devpath;
}

static const char *ev_subsystem(const struct hotplugd_event *e)
{
        return e->ev->subsystem;
}

static const char *ev_seqnum(const struct hotplugd_event *e)
{
        return uevent_get(e->ev, "SEQNUM");
}

static const char *ev_entry(const struct hotplugd_event *e, unsigned int i)
{
        return i < e->ev->n_vars ? uevent_var(e->ev, i) : NULL;
}

int handler_env_add(struct hotplugd_env *env, const char *key, const char *value)
{
        int r = envbuf_add(env->buf, key, value);

        if (r == -ENOMEM)
                env->overflow = true;
        return r;
}

int handler_env_vformat(struct hotplugd_env *env, char *buf, size_t size, const char *fmt, va_list ap)
{
        int r = format_bounded(buf, size, fmt, ap);

        if (r == -ENOMEM)
                env->overflow = true;
        return r;
}

int handler_env_addf(struct hotplugd_env *env, const char *key, const char *fmt, ...)
{
        char value[HP_ENV_ADD_MAX_BYTES];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = handler_env_vformat(env, value, sizeof(value), fmt, ap);
        va_end(ap);
        return r < 0 ? r : handler_env_add(env, key, value);
}

static const char *env_get(const struct hotplugd_env *env, const char *key)
{
        return key ? envbuf_get(env->buf, key) : NULL;
}

static int host_sysfs_read(const struct hotplugd_host *host, const char *devpath, const char *attr, char *buf,
                           size_t size)
{
        int fd = entry_of(host)->chain->sysfs_fd;

        if (!devpath || !attr || !buf)
                return -EINVAL;
        return fd < 0 ? -ENOENT : sysfs_read(fd, devpath, attr, buf, size);
}

static int host_sysfs_link(const struct hotplugd_host *host, const char *devpath, const char *link, char *buf,
                           size_t size)
{
        int rootfd = entry_of(host)->chain->sysfs_fd;
        _cleanup_close_ int fd = -1;

        if (!devpath || !link || !buf)
                return -EINVAL;
        if (rootfd < 0)
                return -ENOENT;
        fd = sysfs_open_dir(rootfd, devpath);
        if (fd < 0)
                return fd;
        return sysfs_link_name(fd, devpath, link, buf, size);
}

static const struct hotplugd_host host_template = {
        .abi = HOTPLUGD_HANDLER_ABI,
        .size = sizeof(struct hotplugd_host),
        .log = host_log,
        .event_get = ev_get,
        .event_action = ev_action,
        .event_devpath = ev_devpath,
        .event_subsystem = ev_subsystem,
        .event_seqnum = ev_seqnum,
        .event_entry = ev_entry,
        .env_add = handler_env_add,
        .env_addf = handler_env_addf,
        .env_get = env_get,
        .sysfs_read = host_sysfs_read,
        .sysfs_link = host_sysfs_link,
};

/* ---- registration ---- */

static bool printable_word(const char *s, size_t max)
{
        size_t n = 0;

        if (!s || !*s)
                return false;
        for (; *s; s++, n++)
                if (n >= max || (unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f || *s == '/')
                        return false;
        return true;
}

static int check_ops(const struct hotplugd_handler *ops, const char *what)
{
        if (ops->abi != HOTPLUGD_HANDLER_ABI)
                return log_error_errno(-EPROTO, "handler %s: ABI %u, this hotplugd has ABI %d; refused", what,
                                       ops->abi, HOTPLUGD_HANDLER_ABI);
        if (ops->size < HANDLER_MIN_SIZE || ops->size > sizeof(struct hotplugd_handler))
                return log_error_errno(-EPROTO, "handler %s: struct size %u, expected %zu; refused", what, ops->size,
                                       sizeof(struct hotplugd_handler));
        if (!printable_word(ops->id, HANDLER_ID_MAX))
                return log_error_errno(-EINVAL, "handler %s: missing or invalid id; refused", what);
        if (ops->subsystems) {
                size_t n = 0;
                for (const char *const *s = ops->subsystems; *s; s++, n++)
                        if (n >= HP_FILTER_RULES_MAX || !printable_word(*s, HP_NAME_MAX - 1))
                                return log_error_errno(-EINVAL, "handler %s: invalid subsystem list; refused",
                                                       what);
        }
        return 0;
}

int handler_chain_add(struct handler_chain *c, const struct hotplugd_handler *ops, void *dl, const char *file)
{
        const char *what = file ? file : ops->id ? ops->id : "(built-in)";
        struct handler_entry *h;
        int r;

        if (c->n >= ELEMENTSOF(c->entries))
                return log_error_errno(-E2BIG, "handler %s: more than %d handlers; refused", what, HP_HANDLERS_MAX);
        r = check_ops(ops, what);
        if (r < 0)
                return r;
        h = &c->entries[c->n];
        *h = (struct handler_entry){ .host = host_template, .chain = c, .dl = dl };
        memcpy(&h->ops, ops, ops->size);
        if (file && !(h->file = strdup(file)))
                return -ENOMEM;
        if (h->ops.init) {
                r = h->ops.init(&h->host, &h->data);
                if (r != 0) {
                        log_error_errno(r < 0 ? r : -EINVAL, "handler %s (%s): init() failed; handler disabled",
                                        h->ops.id, what);
                        free(h->file);
                        return r < 0 ? r : -EINVAL;
                }
        }
        c->n++;
        log_debug("handler %s loaded%s%s", h->ops.id, file ? " from " : " (built-in)", file ? file : "");
        return 0;
}

static int copy_config(struct handler_chain *c, const struct handler_config *cfg)
{
        c->cfg = *cfg;
#define DUP_(field, src)                                                                                   \
        do {                                                                                               \
                if ((src) && !(c->field = strdup(src)))                                                    \
                        return -ENOMEM;                                                                    \
        } while (0)
        DUP_(sysfs_root, cfg->sysfs_root ? cfg->sysfs_root : "/sys");
        DUP_(handler_dir, cfg->handler_dir);
        DUP_(filter_spec, cfg->filter_policy);
        DUP_(firmware_path, cfg->firmware_path ? cfg->firmware_path : HP_FIRMWARE_PATH_DEFAULT);
#undef DUP_
        c->cfg.sysfs_root = c->sysfs_root;
        c->cfg.handler_dir = c->handler_dir;
        c->cfg.filter_policy = c->filter_spec;
        c->cfg.firmware_path = c->firmware_path;
        return 0;
}

/*
 * External handlers.  The built-in default directory need not exist (no
 * package installed a handler); a missing directory that was named in the
 * configuration is worth a warning.
 */
/* handler_accept_fn: an external handler joins the chain. */
static int accept_loaded(void *userdata, const struct hotplugd_handler *ops, void *dl, const char *file)
{
        return handler_chain_add(userdata, ops, dl, file);
}

static void load_external(struct handler_chain *c)
{
        const char *dir = c->cfg.handler_dir;
        int r;

        if (!dir)
                return;
        if (access(dir, F_OK) < 0 && errno == ENOENT) {
                if (strcmp(dir, HOTPLUGD_HANDLER_DIR) != 0)
                        log_warning("handler directory %s does not exist; no external handlers loaded", dir);
                return;
        }
        r = handler_load_dir(dir, accept_loaded, c);
        if (r < 0)
                log_warning_errno(r, "cannot read handler directory %s; no external handlers loaded", dir);
}

int handler_chain_new(const struct handler_config *cfg, struct handler_chain **ret)
{
        _cleanup_(handler_chain_freep) struct handler_chain *c = NULL;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->sysfs_fd = -1;
        r = copy_config(c, cfg);
        if (r < 0)
                return r;
        r = filter_policy_parse(&c->policy, c->cfg.filter_policy);
        if (r < 0)
                return log_error_errno(r, "invalid filter policy \"%s\"", c->cfg.filter_policy);
        r = devcache_new(c->cfg.cache_size, &c->cache);
        if (r < 0)
                return r;
        c->sysfs_fd = sysfs_open_root(c->cfg.sysfs_root);
        if (c->sysfs_fd < 0)
                log_warning_errno(c->sysfs_fd, "cannot open sysfs root %s, legacy variables limited",
                                  c->cfg.sysfs_root);
        if (builtin_handlers_count > BUILTIN_MAX)
                return -E2BIG;
        for (size_t i = 0; i < builtin_handlers_count; i++) {
                r = handler_chain_add(c, builtin_handlers[i], NULL, NULL);
                if (r < 0)
                        return r;
        }
        load_external(c);
        *ret = TAKE_PTR(c);
        return 0;
}

void handler_chain_take_model(struct handler_chain *to, struct handler_chain *from)
{
        struct devcache *swap;

        if (to->cfg.cache_size != from->cfg.cache_size || strcmp(to->cfg.sysfs_root, from->cfg.sysfs_root) != 0) {
                log_notice("handler-cache or sysfs changed: the legacy variables of devices seen before are "
                           "learnt again from sysfs");
                return;
        }
        swap = to->cache;
        to->cache = from->cache;
        from->cache = swap;
        to->binds = from->binds;
}

struct handler_chain *handler_chain_free(struct handler_chain *c)
{
        if (!c)
                return NULL;
        for (size_t i = c->n; i-- > 0;) {
                struct handler_entry *h = &c->entries[i];
                if (h->ops.done)
                        h->ops.done(h->data);
                if (h->dl)
                        handler_dlclose(h->dl);
                free(h->file);
        }
        devcache_free(c->cache);
        safe_close(c->sysfs_fd);
        free(c->sysfs_root);
        free(c->handler_dir);
        free(c->filter_spec);
        free(c->firmware_path);
        free(c);
        return NULL;
}

int handler_chain_seed(struct handler_chain *c, int dirfd, const char *devpath)
{
        return c->sysfs_fd < 0 ? 0 : devmodel_seed(c->cache, c->sysfs_fd, dirfd, devpath);
}

int handler_chain_model_peek(const struct handler_chain *c, const char *devpath, struct devcache_entry *ret)
{
        return devcache_peek(c->cache, devpath, ret);
}

enum devmodel_probe handler_chain_probe(const struct handler_chain *c, const struct uevent *ev, char *driver,
                                        size_t size)
{
        const char *physpath = uevent_get_extra(ev, "PHYSDEVPATH");

        if (!physpath)
                return DEVMODEL_PROBE_NONE;
        return devmodel_probe_at(c->cache, &c->binds, physpath, ev->seqnum, driver, size);
}

size_t handler_chain_count(const struct handler_chain *c)
{
        return c->n;
}

int handler_chain_info(const struct handler_chain *c, size_t i, struct handler_info *ret)
{
        if (i >= c->n)
                return -ENOENT;
        *ret = (struct handler_info){
                .id = c->entries[i].ops.id,
                .file = c->entries[i].file,
                .builtin = !c->entries[i].dl,
                .disabled = c->entries[i].disabled,
        };
        return 0;
}

/* ---- running ---- */

static bool entry_wants(const struct handler_entry *h, const char *subsystem)
{
        if (h->disabled)
                return false;
        if (!h->ops.subsystems)
                return true;
        for (const char *const *s = h->ops.subsystems; *s; s++)
                if (strcmp(*s, subsystem) == 0)
                        return true;
        return false;
}

static void disable(struct handler_entry *h, const char *hook, int r)
{
        struct log_fields f;

        h->disabled = true;
        uevent_log_fields(h->chain->current, &f);
        log_internal(LOG_ERR, r < 0 ? r : -EINVAL, &f, "handler %s: %s() failed (returned %d); handler disabled",
                     h->ops.id, hook, r);
}

static int run_filters(struct handler_chain *c, const struct hotplugd_event *e, struct handler_trace *t)
{
        enum filter_rule rule = c->cfg.pass_all ? FILTER_KEEP : filter_policy_lookup(&c->policy, e->ev->subsystem);
        const char *dropped_by = NULL;

        if (rule == FILTER_DROP) {
                t->filtered_by = "policy";
                return HANDLER_FILTERED;
        }
        for (size_t i = 0; i < c->n; i++) {
                struct handler_entry *h = &c->entries[i];
                int r;

                if (!h->ops.filter || !entry_wants(h, e->ev->subsystem))
                        continue;
                r = h->ops.filter(&h->host, h->data, e);
                if (r < 0)
                        disable(h, "filter", r);
                else if (r == HOTPLUGD_DROP && !dropped_by) {
                        dropped_by = h->ops.id;
                        /* Under "keep" the remaining filters still run (they may act, e.g. load firmware). */
                        if (rule != FILTER_KEEP)
                                break;
                }
        }
        if (dropped_by && rule != FILTER_KEEP) {
                t->filtered_by = dropped_by;
                return HANDLER_FILTERED;
        }
        return HANDLER_RUN;
}

/* argv[1]: printable ASCII, no '/', no space, not "." or "..". */
static bool name_valid(const char *s, size_t size)
{
        if (!memchr(s, '\0', size) || !printable_word(s, size - 1))
                return false;
        return strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

static void run_names(struct handler_chain *c, const struct hotplugd_event *e, char name[HP_NAME_MAX],
                      struct handler_trace *t)
{
        char tmp[HP_NAME_MAX];

        for (size_t i = 0; i < c->n; i++) {
                struct handler_entry *h = &c->entries[i];
                int r;

                if (!h->ops.name || !entry_wants(h, e->ev->subsystem))
                        continue;
                tmp[0] = '\0';
                r = h->ops.name(&h->host, h->data, e, tmp, sizeof(tmp));
                if (r < 0)
                        disable(h, "name", r);
                else if (r > 0 && !name_valid(tmp, sizeof(tmp)))
                        disable(h, "name", -EINVAL);
                else if (r > 0) {
                        strcpy(name, tmp);
                        t->named_by = h->ops.id;
                }
        }
}

static void envbuf_copy(struct envbuf *dst, const struct envbuf *src)
{
        dst->used = src->used;
        dst->n = src->n;
        memcpy(dst->off, src->off, src->n * sizeof(src->off[0]));
        memcpy(dst->data, src->data, src->used);
}

/*
 * Who gave each entry of @now, @before being the environment before handler
 * @id ran and @owner its owners (updated).  envbuf_add() keeps the entries
 * it does not replace in their order and appends what it adds or replaces:
 * the entries of @now that match @before's in order are the earlier ones',
 * and from the first that does not, every entry is @id's.
 */
static void trace_owners(const struct envbuf *before, const struct envbuf *now, const char *id,
                         const char *owner[HP_ENV_ADD_MAX_VARS])
{
        const char *kept[HP_ENV_ADD_MAX_VARS];
        unsigned j = 0, i;

        assert(before->n <= HP_ENV_ADD_MAX_VARS && now->n <= HP_ENV_ADD_MAX_VARS);

        for (i = 0; i < now->n; i++) {
                while (j < before->n && strcmp(envbuf_entry(before, j), envbuf_entry(now, i)) != 0)
                        j++;
                if (j == before->n)
                        break;
                kept[i] = owner[j++];
        }
        for (unsigned k = 0; k < i; k++)
                owner[k] = kept[k];
        for (; i < now->n; i++)
                owner[i] = id;
}

/* Each handler's add_env() in turn; @t (or NULL) receives who added what. */
static int run_add_env(struct handler_chain *c, const struct hotplugd_event *e, struct hotplugd_env *env,
                       struct handler_trace *t)
{
        for (size_t i = 0; i < c->n; i++) {
                struct handler_entry *h = &c->entries[i];
                int r;

                if (!h->ops.add_env || !entry_wants(h, e->ev->subsystem))
                        continue;
                if (h->dl || t)
                        envbuf_copy(&c->snapshot, env->buf);
                r = h->ops.add_env(&h->host, h->data, e, env);
                if (r == -ENOMEM || env->overflow)
                        return -ENOMEM;
                if (r < 0) {
                        if (h->dl)
                                envbuf_copy(env->buf, &c->snapshot);
                        disable(h, "add_env", r);
                }
                if (t)
                        trace_owners(&c->snapshot, env->buf, h->ops.id, t->added_by);
        }
        return 0;
}

/* The device model first, so that it hears every event, filtered ones too. */
static void model_begin(struct handler_chain *c, struct hotplugd_event *e, struct devmodel_event *m)
{
        devmodel_begin(c->cache, &c->binds, c->sysfs_fd, e->ev, m);
        envbuf_init(&c->learn);
        e->dev = m;
        e->cache = c->cache;
        e->learn = &c->learn;
        e->recalled = NULL;
        e->recalled_size = 0;
        if (m->rec.flags & DEVCACHE_LEARNT) {
                e->recalled = m->rec.data;
                e->recalled_size = m->rec.size;
        }
}

int handler_chain_run_traced(struct handler_chain *c, const struct uevent *ev, struct envbuf *env,
                             char name[HP_NAME_MAX], struct handler_trace *trace)
{
        struct hotplugd_event e = { .ev = ev, .sysfs_fd = c->sysfs_fd, .cfg = &c->cfg };
        struct hotplugd_env henv = { .buf = env };
        struct handler_trace dummy, *want = trace;
        struct devmodel_event m;
        bool learnt = false;
        int r;

        if (!trace)
                trace = &dummy;
        trace->filtered_by = trace->named_by = NULL;
        trace->from_cache = 0;
        name[0] = '\0';
        assert(!c->current); /* one event at a time (c->current names it in log lines) */
        c->current = ev;
        model_begin(c, &e, &m);
        r = run_filters(c, &e, trace);
        if (r == HANDLER_RUN) {
                run_names(c, &e, name, trace);
                trace->from_cache = e.recalled != NULL;
                r = run_add_env(c, &e, &henv, want);
                learnt = r >= 0 && !e.recalled;
                if (r >= 0)
                        r = HANDLER_RUN;
        }
        devmodel_end(c->cache, ev, &m, learnt ? c->learn.data : NULL, c->learn.used);
        c->current = NULL;
        return r;
}

int handler_chain_run(struct handler_chain *c, const struct uevent *ev, struct envbuf *env,
                      char name[HP_NAME_MAX])
{
        return handler_chain_run_traced(c, ev, env, name, NULL);
}
