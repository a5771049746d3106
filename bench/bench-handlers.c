/* SPDX-License-Identifier: MIT */
/*
 * Cost of the handler chain per event: built-ins only, on cached data
 * (change and remove-like events of devices seen at add), against the
 * fixture sysfs tree.  Prints ns/event; also the cost of an uncached add
 * (sysfs reads) for comparison.  Not a test: run it with
 *   meson test -C build --benchmark   or   build/bench/bench-handlers [ROOT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/envbuf.h"
#include "pipeline/handlers.h"
#include "uevent/uevent.h"

#define KBD_IF "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0"
#define INPUT KBD_IF "/0003:046D:C31C.0001/input/input5"
#define NET "/devices/pci0000:00/0000:00:1f.6/net/enp0s31f6"
#define PCI "/devices/pci0000:00/0000:00:1f.6"

struct ev {
        char buf[1024];
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view;
};

static void make(struct ev *e, const char *action, const char *devpath, const char *subsystem, const char *extra)
{
        size_t n = 0;
        enum uevent_reject why;

        n += (size_t)sprintf(e->buf + n, "%s@%s", action, devpath) + 1;
        n += (size_t)sprintf(e->buf + n, "ACTION=%s", action) + 1;
        n += (size_t)sprintf(e->buf + n, "DEVPATH=%s", devpath) + 1;
        n += (size_t)sprintf(e->buf + n, "SUBSYSTEM=%s", subsystem) + 1;
        for (const char *p = extra; p && *p; p += strlen(p) + 1)
                n += (size_t)sprintf(e->buf + n, "%s", p) + 1;
        n += (size_t)sprintf(e->buf + n, "SEQNUM=4711") + 1;
        if (uevent_parse(e->buf, n, e->vars, &e->view, &why) < 0) {
                fprintf(stderr, "bad event: %s\n", uevent_reject_to_string(why));
                exit(1);
        }
}

static double now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run(struct handler_chain *c, struct ev *evs, size_t n, long iterations)
{
        struct envbuf env;
        char name[HP_NAME_MAX];
        double t0 = now_ns();

        for (long i = 0; i < iterations; i++) {
                envbuf_init(&env);
                if (handler_chain_run(c, &evs[(size_t)i % n].view, &env, name) < 0) {
                        fprintf(stderr, "chain failed\n");
                        exit(1);
                }
        }
        return (now_ns() - t0) / (double)iterations;
}

int main(int argc, char *argv[])
{
        const char *root = argc > 1 ? argv[1] : FIXTURE_DIR "/sysfs";
        struct handler_config cfg = { .sysfs_root = root, .input_strip_quotes = true };
        struct handler_chain *c = NULL;
        static struct ev add[4], change[4];
        double cached, uncached;

        if (handler_chain_new(&cfg, &c) < 0)
                return 1;
        make(&add[0], "add", KBD_IF, "usb", "DEVTYPE=usb_interface\0DRIVER=usbhid\0");
        make(&add[1], "add", INPUT, "input", "PRODUCT=3/46d/c31c/110\0NAME=\"Logitech USB Keyboard\"\0");
        make(&add[2], "add", NET, "net", "INTERFACE=enp0s31f6\0IFINDEX=2\0");
        make(&add[3], "add", PCI, "pci", "DRIVER=e1000e\0PCI_CLASS=20000\0PCI_ID=8086:15BB\0");
        make(&change[0], "change", KBD_IF, "usb", "DEVTYPE=usb_interface\0DRIVER=usbhid\0PRODUCT=46d/c31c/6400\0TYPE=0/0/0\0INTERFACE=3/1/1\0");
        make(&change[1], "change", INPUT, "input", "PRODUCT=3/46d/c31c/110\0NAME=\"Logitech USB Keyboard\"\0PHYS=\"usb-0000:00:14.0-2/input0\"\0");
        make(&change[2], "change", NET, "net", "INTERFACE=enp0s31f6\0IFINDEX=2\0");
        make(&change[3], "change", PCI, "pci", "DRIVER=e1000e\0PCI_CLASS=20000\0PCI_ID=8086:15BB\0PCI_SUBSYS_ID=17AA:2292\0");

        uncached = run(c, add, 4, 20000);     /* add always re-reads sysfs */
        (void)run(c, change, 4, 100000);      /* warm up */
        cached = run(c, change, 4, 2000000);
        printf("handler chain, built-ins, cached data: %.0f ns/event\n", cached);
        printf("handler chain, built-ins, add (sysfs reads): %.0f ns/event\n", uncached);
        handler_chain_free(c);
        return 0;
}
