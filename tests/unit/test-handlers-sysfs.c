/* SPDX-License-Identifier: MIT */
/*
 * The built-in handlers against this machine's real /sys: PHYSDEV* of
 * virtio NICs and disks equal what sysfs says (computed here independently
 * with realpath()), PCI variables rebuilt from sysfs equal the kernel's
 * uevent file, block MAJOR/MINOR likewise, virtual devices get no PHYSDEV*.
 * Needs no root (reads only); skips parts this machine lacks.
 */
#include <dirent.h>
#include <limits.h>

#include "handler-test-util.h"

static struct run R;

/* /sys/class/X/NAME → DEVPATH. */
static int devpath_of(const char *syspath, char *ret, size_t size)
{
        char real[PATH_MAX];

        if (!realpath(syspath, real) || strncmp(real, "/sys/", 5) != 0 || strlen(real + 4) >= size)
                return -ENOENT;
        strcpy(ret, real + 4);
        return 0;
}

static const char *link_base(const char *path)
{
        static char buf[PATH_MAX];
        ssize_t n = readlink(path, buf, sizeof(buf) - 1);

        if (n < 0)
                return NULL;
        buf[n] = '\0';
        return strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf;
}

/* The expected physical device: first ancestor whose subsystem link leads into /sys/bus. */
static int expected_physdev(const char *devpath, char *ret, size_t size)
{
        char p[PATH_MAX], link[PATH_MAX + 16], real[PATH_MAX];

        snprintf(p, sizeof(p), "%s", devpath);
        for (char *s = strrchr(p, '/'); s && s != p; s = strrchr(p, '/')) {
                *s = '\0';
                snprintf(link, sizeof(link), "/sys%s/subsystem", p);
                if (realpath(link, real) && strncmp(real, "/sys/bus/", 9) == 0) {
                        snprintf(ret, size, "%s", p);
                        return 0;
                }
        }
        return -ENOENT;
}

static int check_class_device(struct handler_chain *c, const char *syspath, const char *subsystem)
{
        char devpath[PATH_MAX], phys[PATH_MAX], path[PATH_MAX + 16];

        if (devpath_of(syspath, devpath, sizeof(devpath)) < 0)
                return 0;
        check_int(run_event(c, &R, "add", devpath, subsystem, NULL), HANDLER_RUN);
        if (expected_physdev(devpath, phys, sizeof(phys)) < 0) {
                check(!agent_env(&R, "PHYSDEVPATH"));
                check(!agent_env(&R, "PHYSDEVBUS"));
                return 1;
        }
        fprintf(stderr, "   %s: PHYSDEVPATH=%s\n", devpath, phys);
        check_str(agent_env(&R, "PHYSDEVPATH"), phys);
        snprintf(path, sizeof(path), "/sys%s/subsystem", phys);
        check_str(agent_env(&R, "PHYSDEVBUS"), link_base(path));
        snprintf(path, sizeof(path), "/sys%s/driver", phys);
        if (link_base(path))
                check_str(agent_env(&R, "PHYSDEVDRIVER"), link_base(path));
        else
                check(!agent_env(&R, "PHYSDEVDRIVER"));
        return 1;
}

static void test_net(void)
{
        struct handler_chain *c = chain_for("/sys");
        char devpath[PATH_MAX], path[PATH_MAX + 32];
        struct dirent *de;
        DIR *d = opendir("/sys/class/net");
        int virtio = 0;

        check(d);
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/class/net/%s", de->d_name);
                if (!check_class_device(c, path, "net") || devpath_of(path, devpath, sizeof(devpath)) < 0)
                        continue;
                check_str(agent_env(&R, "INTERFACE"), de->d_name);
                if (agent_env(&R, "PHYSDEVBUS") && strcmp(agent_env(&R, "PHYSDEVBUS"), "virtio") == 0) {
                        snprintf(path, sizeof(path), "/sys%s/driver", agent_env(&R, "PHYSDEVPATH"));
                        check_str(agent_env(&R, "PHYSDEVDRIVER"), link_base(path));
                        virtio++;
                }
        }
        closedir(d);
        fprintf(stderr, "   virtio NICs checked: %d\n", virtio);
        /* lo is always virtual. */
        check_int(run_event(c, &R, "add", "/devices/virtual/net/lo", "net", "INTERFACE=lo", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVPATH"));
        run_release(&R);
        handler_chain_free(c);
}

static void test_block(void)
{
        struct handler_chain *c = chain_for("/sys");
        char path[PATH_MAX + 32], devpath[PATH_MAX], file[PATH_MAX + 64], major[4096], minor[4096];
        struct dirent *de;
        DIR *d = opendir("/sys/class/block");
        int n = 0;

        check(d);
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/class/block/%s", de->d_name);
                if (!check_class_device(c, path, "block"))
                        continue;
                /* MAJOR/MINOR rebuilt from "dev" equal the kernel's. */
                check_int(devpath_of(path, devpath, sizeof(devpath)), 0);
                snprintf(file, sizeof(file), "%s/uevent", path);
                snprintf(major, sizeof(major), "%s", uevent_file_get(file, "MAJOR"));
                snprintf(minor, sizeof(minor), "%s", uevent_file_get(file, "MINOR"));
                check_str(agent_env(&R, "MAJOR"), major);
                check_str(agent_env(&R, "MINOR"), minor);
                n++;
        }
        closedir(d);
        fprintf(stderr, "   block devices checked: %d\n", n);
        check(n > 0);
        run_release(&R);
        handler_chain_free(c);
}

static void test_pci(void)
{
        static const char *const keys[] = { "PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME", "MODALIAS" };
        struct handler_chain *c = chain_for("/sys");
        char devpath[PATH_MAX], path[PATH_MAX + 32], file[PATH_MAX + 64], drv[PATH_MAX + 8];
        struct dirent *de;
        DIR *d = opendir("/sys/bus/pci/devices");
        int n = 0;

        if (!d) {
                fprintf(stderr, "   no PCI bus, skipped\n");
                handler_chain_free(c);
                return;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", de->d_name);
                check_int(devpath_of(path, devpath, sizeof(devpath)), 0);
                snprintf(file, sizeof(file), "%s/uevent", path);
                /* An event without the PCI keys: the handler rebuilds each from sysfs. */
                check_int(run_event(c, &R, "add", devpath, "pci", NULL), HANDLER_RUN);
                for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                        check_str(agent_env(&R, keys[i]), uevent_file_get(file, keys[i]));
                check_str(agent_env(&R, "PHYSDEVBUS"), "pci");
                check(!agent_env(&R, "PHYSDEVDRIVER")); /* no DRIVER=: unbound when it was sent */
                /* PHYSDEVDRIVER is the event's DRIVER=, as the kernel's uevent file gives it. */
                snprintf(path, sizeof(path), "/sys%s/driver", devpath);
                if (link_base(path)) {
                        snprintf(drv, sizeof(drv), "DRIVER=%s", link_base(path));
                        check_int(run_event(c, &R, "change", devpath, "pci", drv, NULL), HANDLER_RUN);
                        check_str(agent_env(&R, "PHYSDEVDRIVER"), link_base(path));
                }
                n++;
        }
        closedir(d);
        fprintf(stderr, "   PCI devices checked: %d\n", n);
        run_release(&R);
        handler_chain_free(c);
}

int main(void)
{
        if (access("/sys/class/net", R_OK) < 0)
                return test_skip("no /sys/class/net");
        run_test(test_net);
        run_test(test_block);
        run_test(test_pci);
        return 0;
}
