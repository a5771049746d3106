/* SPDX-License-Identifier: MIT */
/*
 * The linux-hotplug USB dispatch plan (usb-dispatch.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "pipeline/usb-dispatch.h"
#include "pipeline/usermap.h"
#include "shared/macro.h"
#include "shared/trust.h"
#include "uevent/uevent.h"

/* Where modprobe is looked for (the agents' PATH). */
static const char *const modprobe_paths[] = { "/sbin/modprobe", "/usr/sbin/modprobe", "/bin/modprobe",
                                              "/usr/bin/modprobe" };

/* The first modprobe of the agents' PATH that passes the trust rule (as every program run is) and can be executed. */
static const char *modprobe_path(void)
{
        struct stat st;

        for (size_t i = 0; i < ELEMENTSOF(modprobe_paths); i++)
                if (trust_check_path(modprobe_paths[i], false, &st, NULL) == 0 && (st.st_mode & 0111))
                        return modprobe_paths[i];
        return NULL;
}

static void note_of(usb_plan_note_fn note, void *userdata, const struct usermap_match *m, bool problem,
                    const char *fmt, ...) _printf_(5, 6);
static void note_of(usb_plan_note_fn note, void *userdata, const struct usermap_match *m, bool problem,
                    const char *fmt, ...)
{
        char buf[PATH_MAX + 128];
        va_list ap;

        if (!note)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        note(userdata, m, problem, buf);
}

static int add_step(struct usb_plan *p, enum usb_step_kind kind, const char *module, const char *path)
{
        char *copy = strdup(path);

        if (!copy)
                return -ENOMEM;
        p->step[p->n++] = (struct usb_step){ .kind = kind, .module = module, .path = copy };
        return 0;
}

/* One match of an add: its script, or its module, or nothing (said why). */
static int plan_match(const struct usermap *map, const char *dir, const struct usermap_match *m, struct usb_plan *p,
                      usb_plan_note_fn note, void *userdata)
{
        char path[PATH_MAX];
        const char *why = NULL, *modprobe;
        struct stat st;
        int r;

        if (m->repeat) {
                note_of(note, userdata, m, false, "already acted on for an earlier line");
                return 0;
        }
        if (usermap_blacklisted(map, m->module)) {
                note_of(note, userdata, m, false, "blacklisted: nothing runs");
                return 0;
        }
        if ((size_t)snprintf(path, sizeof(path), "%s/usb/%s", dir, m->module) >= sizeof(path)) {
                note_of(note, userdata, m, true, "script path too long: nothing runs");
                return 0;
        }
        r = trust_check_path(path, false, &st, &why);
        if (r == 0 && (st.st_mode & 0111)) {
                note_of(note, userdata, m, false, "runs %s", path);
                return add_step(p, USB_STEP_SCRIPT, m->module, path);
        }
        if (r < 0 && r != -ENOENT) {
                note_of(note, userdata, m, true, "%s refused (%s): nothing runs", path, why ? why : strerror(-r));
                return 0;
        }
        modprobe = modprobe_path();
        if (!modprobe) {
                note_of(note, userdata, m, true, "no script %s and no modprobe: nothing runs", path);
                return 0;
        }
        note_of(note, userdata, m, false, "no executable %s: loads module %s (%s -b -q)", path, m->module, modprobe);
        return add_step(p, USB_STEP_MODULE, m->module, modprobe);
}

static int plan_add(const struct usermap *map, const char *dir, const char *remover_dir, const struct uevent *ev,
                    struct usb_plan *p, usb_plan_note_fn note, void *userdata)
{
        struct usermap_match m[HP_USERMAP_MATCHES_MAX];
        struct usermap_device d;
        bool scripts = false;
        size_t n;
        int r;

        if (usermap_device_parse(uevent_get(ev, "PRODUCT"), uevent_get(ev, "TYPE"), uevent_get(ev, "INTERFACE"),
                                 &d) < 0) {
                note_of(note, userdata, NULL, true, "PRODUCT, TYPE or INTERFACE malformed: no usermap line can match");
                return 0;
        }
        n = usermap_match(map, &d, m, ELEMENTSOF(m));
        if (n > ELEMENTSOF(m))
                note_of(note, userdata, NULL, true, "%zu map lines match; only the first %zu act", n, ELEMENTSOF(m));
        for (size_t i = 0; i < MIN(n, ELEMENTSOF(m)); i++) {
                r = plan_match(map, dir, &m[i], p, note, userdata);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < p->n; i++)
                scripts = scripts || p->step[i].kind == USB_STEP_SCRIPT;
        if (scripts && usermap_remover_path(remover_dir, ev->devpath, p->remover, sizeof(p->remover)) < 0)
                p->remover[0] = '\0';
        return 0;
}

static int plan_remove(const char *remover_dir, const struct uevent *ev, struct usb_plan *p, usb_plan_note_fn note,
                       void *userdata)
{
        const char *why = NULL;
        struct stat st;
        int r;

        if (usermap_remover_path(remover_dir, ev->devpath, p->remover, sizeof(p->remover)) < 0) {
                p->remover[0] = '\0';
                return 0;
        }
        if (lstat(p->remover, &st) < 0) {
                p->remover[0] = '\0';
                return 0; /* no script left one */
        }
        r = trust_check_path(p->remover, false, &st, &why);
        if (r < 0 || !(st.st_mode & 0111)) {
                note_of(note, userdata, NULL, true, "remover %s refused (%s): not run", p->remover,
                        r < 0 ? (why ? why : strerror(-r)) : "not executable");
                return 0;
        }
        note_of(note, userdata, NULL, false, "runs the remover %s, then removes it", p->remover);
        return add_step(p, USB_STEP_REMOVER, NULL, p->remover);
}

char *usb_remover_dir(const char *control, char *buf, size_t size)
{
        const char *slash = control ? strrchr(control, '/') : NULL;

        if (!slash || slash == control)
                snprintf(buf, size, "%s/remover/usb", HOTPLUGD_RUNDIR);
        else
                snprintf(buf, size, "%.*s/remover/usb", (int)(slash - control), control);
        return buf;
}

int usb_plan_build(const struct usermap *map, const char *dir, const char *remover_dir, const struct uevent *ev,
                   struct usb_plan *ret, usb_plan_note_fn note, void *userdata)
{
        int r = 0;

        ret->n = 0;
        ret->remover[0] = '\0';
        if (!map || !dir || strcmp(ev->subsystem, "usb") != 0 || !uevent_get(ev, "PRODUCT"))
                return 0;
        if (strcmp(ev->action, "add") == 0)
                r = plan_add(map, dir, remover_dir, ev, ret, note, userdata);
        else if (strcmp(ev->action, "remove") == 0)
                r = plan_remove(remover_dir, ev, ret, note, userdata);
        if (r < 0) {
                usb_plan_free(ret);
                return r;
        }
        return (int)ret->n;
}

void usb_plan_free(struct usb_plan *p)
{
        for (size_t i = 0; i < p->n; i++)
                free(p->step[i].path);
        p->n = 0;
}

const char **usb_step_argv(const struct usb_step *s, const char *argv[6])
{
        size_t n = 0;

        argv[n++] = s->path;
        if (s->kind == USB_STEP_MODULE) {
                argv[n++] = "-b";
                argv[n++] = "-q";
                argv[n++] = "--";
                argv[n++] = s->module;
        }
        argv[n] = NULL;
        return argv;
}
