/* SPDX-License-Identifier: MIT */
/*
 * The "info" requests (control.h): what the daemon knows of one device, or
 * of every device (--export) a page at a time.  A page stops after the
 * device that passes half of HP_CONTROL_OUTPUT_MAX bytes of replies, so a
 * client that reads a page before asking for the next is never dropped
 * for its output; one device's records are at most HP_INFO_EVENTS times
 * (3 + HP_INFO_RUNS) records and its variables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control-internal.h"
#include "shared/macro.h"

struct info_visit {
        struct client *cl;
        size_t sent;  /* bytes of records sent */
};

static void info_send(struct info_visit *v, const struct ctlmsg *m)
{
        if (v->cl->fd < 0)
                return;
        v->sent += m->len + 2;
        client_reply(v->cl, m);
}

/* The model's legacy variables as "vars" records (entries cut across records as env records are). */
static void send_vars(struct info_visit *v, const struct devcache_entry *rec)
{
        _cleanup_free_ const char **entries = NULL;
        struct ctlmsg_cursor cur = { 0 };
        size_t n = 0, more;
        struct ctlmsg m;
        bool done;

        for (size_t off = 0; off < rec->size; off += strlen(rec->data + off) + 1)
                n++;
        if (n == 0)
                return;
        entries = calloc(n, sizeof(*entries));
        if (!entries)
                return; /* without memory the variables are left out */
        n = 0;
        for (size_t off = 0; off < rec->size; off += strlen(rec->data + off) + 1)
                entries[n++] = rec->data + off;
        cur = (struct ctlmsg_cursor){ .entries = entries, .n = n };
        do {
                ctlmsg_init(&m, "vars");
                ctlmsg_add_u64(&m, "more", 1);
                more = m.len - 1;
                done = ctlmsg_add_entries(&m, &cur);
                if (done)
                        m.buf[more] = '0';
                info_send(v, &m);
        } while (!done && v->cl->fd >= 0);
}

static void send_event(struct info_visit *v, const struct devinfo_event *e)
{
        struct ctlmsg m;

        ctlmsg_init(&m, "event");
        ctlmsg_add_u64(&m, "seqnum", e->seqnum);
        ctlmsg_add_str(&m, "action", e->action);
        ctlmsg_add_time(&m, "time", e->real);
        ctlmsg_add_u64(&m, "mono_usec", e->mono);
        ctlmsg_add_str(&m, "outcome", devinfo_outcome_to_string(e->outcome));
        ctlmsg_add_u64(&m, "runs_left_out", e->runs_left_out);
        info_send(v, &m);
        for (uint32_t i = 0; i < e->n_wait; i++) {
                ctlmsg_init(&m, "wait");
                ctlmsg_add_u64(&m, "seqnum", e->seqnum);
                ctlmsg_add_u64(&m, "blocker", e->wait[i].blocker);
                ctlmsg_add_u64(&m, "waited_us", e->wait[i].waited);
                ctlmsg_add_str(&m, "reason", e->wait[i].reason);
                info_send(v, &m);
        }
        for (uint32_t i = 0; i < e->n_run; i++) {
                const struct devinfo_run *r = &e->run[i];

                ctlmsg_init(&m, "run");
                ctlmsg_add_u64(&m, "seqnum", e->seqnum);
                ctlmsg_add_str(&m, "program", r->program ? r->program : "");
                ctlmsg_add_i64(&m, "pid", r->pid);
                ctlmsg_add_u64(&m, "started_usec", r->started);
                if (r->status) {
                        ctlmsg_add_str(&m, "status", r->status);
                        ctlmsg_add_u64(&m, "failed", r->failed);
                        ctlmsg_add_u64(&m, "timed_out", r->timed_out);
                        ctlmsg_add_u64(&m, "duration_us", r->duration);
                }
                info_send(v, &m);
        }
}

/* The records of one device, but "end". */
static void send_device(const struct control_device_info *d, void *arg)
{
        struct info_visit *v = arg;
        const struct devinfo_event *e;
        struct ctlmsg m;
        size_t n = 0;

        while (d->history && devinfo_device_event(d->history, n))
                n++;
        ctlmsg_init(&m, "device");
        ctlmsg_add_str(&m, "devpath", d->devpath);
        ctlmsg_add_u64(&m, "history", d->history != NULL);
        ctlmsg_add_u64(&m, "events", n);
        ctlmsg_add_u64(&m, "modelled", d->modelled);
        if (d->modelled) {
                ctlmsg_add_str(&m, "bus", d->rec.flags & DEVCACHE_BUS_KNOWN ? d->rec.bus : "");
                ctlmsg_add_str(&m, "driver", d->rec.driver);
        }
        ctlmsg_add_str(&m, "in_resync_set", d->present < 0 ? "unknown" : d->present ? "1" : "0");
        ctlmsg_add_u64(&m, "handled", d->handled);
        info_send(v, &m);
        if (d->modelled && (d->rec.flags & DEVCACHE_LEARNT))
                send_vars(v, &d->rec);
        for (size_t i = 0; i < n && v->cl->fd >= 0; i++)
                if ((e = devinfo_device_event(d->history, i)))
                        send_event(v, e);
}

struct info_page {
        const char **v;
        size_t n, a;
        const char *after;
        int error;
};

static void collect(const char *devpath, void *arg)
{
        struct info_page *p = arg;
        const char **nv;

        if (p->error || (p->after && strcmp(devpath, p->after) <= 0))
                return;
        if (p->n == p->a) {
                nv = reallocarray(p->v, p->a ? p->a * 2 : 256, sizeof(*p->v));
                if (!nv) {
                        p->error = -ENOMEM;
                        return;
                }
                p->v = nv;
                p->a = p->a ? p->a * 2 : 256;
        }
        p->v[p->n++] = devpath;
}

static int cmp_path(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One device of a page: its records, to the client. */
typedef void (*page_send_fn)(struct client *cl, struct info_visit *v, const char *devpath);

static void send_export(struct client *cl, struct info_visit *v, const char *devpath)
{
        cl->ctl->ops->device_info(cl->ctl->userdata, devpath, send_device, v);
}

static void send_handled(struct client *cl, struct info_visit *v, const char *devpath)
{
        struct ctlmsg m;

        ctlmsg_init(&m, "handled");
        ctlmsg_add_str(&m, "devpath", devpath);
        info_send(v, &m);
}

/*
 * A page of the devices @for_each lists after @after, in DEVPATH order, each
 * sent by @send, then "end more=0|1 last=DEVPATH": "info export" (every
 * device known) and "info handled" (the devices whose add ran or is queued).
 */
static void req_info_page(struct client *cl, const char *after,
                          void (*for_each)(void *userdata, void (*fn)(const char *devpath, void *arg), void *arg),
                          page_send_fn send)
{
        struct info_page p = { .after = after };
        struct info_visit v = { .cl = cl };
        struct ctlmsg m;
        size_t i;

        for_each(cl->ctl->userdata, collect, &p);
        if (p.error) {
                free(p.v);
                client_error(cl, p.error, "out of memory");
                return;
        }
        qsort(p.v, p.n, sizeof(*p.v), cmp_path);
        for (i = 0; i < p.n && cl->fd >= 0 && v.sent < HP_CONTROL_OUTPUT_MAX / 2; i++)
                send(cl, &v, p.v[i]);
        if (cl->fd >= 0) {
                ctlmsg_init(&m, "end");
                ctlmsg_add_u64(&m, "more", i < p.n);
                if (i > 0)
                        ctlmsg_add_str(&m, "last", p.v[i - 1]);
                client_reply(cl, &m);
        }
        free(p.v);
}

void req_info(struct client *cl, char **w, size_t n)
{
        struct control *c = cl->ctl;
        char rec[HP_CONTROL_REQUEST_MAX + 8], devpath[HP_CONTROL_REQUEST_MAX + 1];
        struct info_visit v = { .cl = cl };
        struct ctlmsg m;
        bool handled = n >= 2 && strcmp(w[1], "handled") == 0;
        bool export = handled || (n >= 2 && strcmp(w[1], "export") == 0);
        const char *field = export ? (n == 3 ? w[2] : NULL) : (n == 2 ? w[1] : NULL);

        if (!c->ops->device_info || !c->ops->for_each_device) {
                client_error(cl, -EOPNOTSUPP, "device information is not kept");
                return;
        }
        if (n > (export ? 3u : 2u) || (!export && !field)) {
                client_error(cl, -EINVAL, "usage: info devpath=DEVPATH | info export|handled [after=DEVPATH]");
                return;
        }
        devpath[0] = '\0';
        if (field) {
                snprintf(rec, sizeof(rec), "info %s", field);
                if (ctlmsg_get(rec, export ? "after" : "devpath", devpath, sizeof(devpath)) < 0 ||
                    (!export && devpath[0] != '/')) {
                        client_error(cl, -EINVAL, "usage: info devpath=DEVPATH | info export|handled [after=DEVPATH]");
                        return;
                }
        }
        if (handled && !c->ops->for_each_handled) {
                client_error(cl, -EOPNOTSUPP, "handled devices are not kept");
                return;
        }
        if (handled && c->ops->handled_pending && c->ops->handled_pending(c->userdata)) {
                client_error(cl, -EAGAIN, "the handover's targeted resync has not planned its adds yet: ask again");
                return;
        }
        if (export) {
                req_info_page(cl, field ? devpath : NULL, handled ? c->ops->for_each_handled : c->ops->for_each_device,
                              handled ? send_handled : send_export);
                return;
        }
        c->ops->device_info(c->userdata, devpath, send_device, &v);
        if (cl->fd >= 0) {
                ctlmsg_init(&m, "end");
                client_reply(cl, &m);
        }
}
