/* SPDX-License-Identifier: MIT */
/*
 * Built-in handlers against the hand-written fixture sysfs tree
 * tests/fixtures/sysfs (a Logitech K120 USB keyboard with its interface,
 * HID and input devices, a Realtek RTL8153 USB NIC, a hub, and an Intel
 * I219 PCI NIC), checked digit by digit against the 2.6 formats:
 *   DEVICE=/proc/bus/usb/%03d/%03d   PRODUCT=%x/%x/%x
 *   TYPE=%d/%d/%d                    INTERFACE=%d/%d/%d
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "handler-test-util.h"
#include "recovery/resync.h"
#include "shared/sysfs.h"

#define ROOT FIXTURE_DIR "/sysfs"
#define KBD "/devices/pci0000:00/0000:00:14.0/usb1/1-2"
#define KBD_IF KBD "/1-2:1.0"
#define KBD_INPUT KBD_IF "/0003:046D:C31C.0001/input/input5"
#define NIC_USB "/devices/pci0000:00/0000:00:14.0/usb2/2-1"
#define HUB "/devices/pci0000:00/0000:00:14.0/usb1/1-3"
#define PCI_NIC "/devices/pci0000:00/0000:00:1f.6"

static struct run R;

/* The USB device event without the variables the kernel computes: all rebuilt from sysfs. */
static void test_usb_device_rebuilt(void)
{
        struct handler_chain *c = chain_for(ROOT);

        check_int(run_event(c, &R, "add", KBD, "usb", "DEVTYPE=usb_device", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check_str(agent_env(&R, "PRODUCT"), "46d/c31c/6400");
        check_str(agent_env(&R, "TYPE"), "0/0/0");
        check(!agent_env(&R, "INTERFACE"));
        check_str(agent_env(&R, "PHYSDEVBUS"), "usb");
        /* The kernel sends "add" before it probes: unbound then, though sysfs shows a driver now. */
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        check(!agent_env(&R, "PHYSDEVPATH")); /* a bus device: 2.6 sent no PHYSDEVPATH */
        check_str(R.view.subsystem, "usb");
        check(!R.ev || strcmp(R.ev->name, "usb") == 0);

        /* The same values as the fixture's uevent file (what the kernel sends today). */
        check_str(agent_env(&R, "PRODUCT"), uevent_file_get(ROOT KBD "/uevent", "PRODUCT"));
        check_str(agent_env(&R, "TYPE"), uevent_file_get(ROOT KBD "/uevent", "TYPE"));

        /* Hub: class 9, protocol 2, device 105: no zero padding but %03d for DEVICE. */
        check_int(run_event(c, &R, "add", HUB, "usb", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/105");
        check_str(agent_env(&R, "PRODUCT"), "5e3/610/9323");
        check_str(agent_env(&R, "TYPE"), "9/0/2");
        run_release(&R);
        handler_chain_free(c);
}

/* The handler that gave @key in the last run (its trace), or NULL if none did. */
static const char *added_by(const struct run *r, const char *key)
{
        size_t k = strlen(key);

        for (unsigned i = 0; i < r->env.n; i++)
                if (strncmp(envbuf_entry(&r->env, i), key, k) == 0 && envbuf_entry(&r->env, i)[k] == '=')
                        return r->trace.added_by[i];
        return NULL;
}

/* Kernel values pass through untouched; DEVICE comes from BUSNUM/DEVNUM. */
static void test_usb_device_passthrough(void)
{
        struct handler_chain *c = chain_for(ROOT);

        check_int(run_event(c, &R, "add", NIC_USB, "usb", "DEVTYPE=usb_device", "PRODUCT=bda/8153/3000",
                            "TYPE=0/0/0", "BUSNUM=002", "DEVNUM=012", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/002/012");
        check_str(agent_env(&R, "PRODUCT"), "bda/8153/3000");
        check_int(R.env.n, 2); /* DEVICE, PHYSDEVBUS (no DRIVER=: unbound): nothing recomputed */
        /* A kernel value wins even if sysfs disagrees. */
        check_int(run_event(c, &R, "add", NIC_USB, "usb", "PRODUCT=1/2/3", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PRODUCT"), "1/2/3");
        run_release(&R);
        handler_chain_free(c);
}

static void test_usb_interface(void)
{
        struct handler_chain *c = chain_for(ROOT);

        check_int(run_event(c, &R, "add", KBD_IF, "usb", "DEVTYPE=usb_interface", "DRIVER=usbhid", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "INTERFACE"), "3/1/1");
        check_str(agent_env(&R, "PRODUCT"), "46d/c31c/6400");
        check_str(agent_env(&R, "TYPE"), "0/0/0");
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check_str(agent_env(&R, "PHYSDEVBUS"), "usb");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "usbhid");
        check_str(agent_env(&R, "INTERFACE"), uevent_file_get(ROOT KBD_IF "/uevent", "INTERFACE"));

        /* Vendor-specific interface ff/ff/00 is 255/255/0 in decimal; no DEVTYPE: found from sysfs. */
        check_int(run_event(c, &R, "add", NIC_USB "/2-1:1.0", "usb", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "INTERFACE"), "255/255/0");
        check_str(agent_env(&R, "PRODUCT"), "bda/8153/3000");
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/002/012");
        check(!agent_env(&R, "PHYSDEVDRIVER")); /* unbound */
        check_str(agent_env(&R, "INTERFACE"), uevent_file_get(ROOT NIC_USB "/2-1:1.0/uevent", "INTERFACE"));
        run_release(&R);
        handler_chain_free(c);
}

static void test_input_keyboard(void)
{
        struct handler_config cfg = { .sysfs_root = ROOT, .input_strip_quotes = true };
        struct handler_chain *c = chain_for(ROOT), *strip = NULL;

        check_int(handler_chain_new(&cfg, &strip), 0);
        check_int(run_event(c, &R, "add", KBD_INPUT, "input", "PRODUCT=3/46d/c31c/110",
                            "NAME=\"Logitech USB Keyboard\"", "PHYS=\"usb-0000:00:14.0-2/input0\"", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "NAME"), "\"Logitech USB Keyboard\"");
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_IF "/0003:046D:C31C.0001");
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "hid-generic");

        check_int(run_event(strip, &R, "add", KBD_INPUT, "input", "NAME=\"Logitech USB Keyboard\"",
                            "PHYS=\"usb-0000:00:14.0-2/input0\"", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "NAME"), "Logitech USB Keyboard");
        check_str(agent_env(&R, "PHYS"), "usb-0000:00:14.0-2/input0");
        check_str(agent_env(&R, "PRODUCT"), "3/46d/c31c/110"); /* rebuilt from id/ */
        check_str(agent_env(&R, "PRODUCT"), uevent_file_get(ROOT KBD_INPUT "/uevent", "PRODUCT"));

        /* The event child: a class device whose physical device is the same HID device. */
        check_int(run_event(strip, &R, "add", KBD_INPUT "/event3", "input", "DEVNAME=input/event3", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_IF "/0003:046D:C31C.0001");
        check(!agent_env(&R, "PRODUCT"));
        run_release(&R);
        handler_chain_free(c);
        handler_chain_free(strip);
}

static void test_pci_and_net(void)
{
        static const char *const keys[] = { "PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME", "MODALIAS" };
        struct handler_chain *c = chain_for(ROOT);

        check_int(run_event(c, &R, "add", PCI_NIC, "pci", "DRIVER=e1000e", NULL), HANDLER_RUN);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                check_str(agent_env(&R, keys[i]), uevent_file_get(ROOT PCI_NIC "/uevent", keys[i]));
        check_str(agent_env(&R, "PCI_ID"), "8086:15BB");
        check_str(agent_env(&R, "PCI_CLASS"), "20000");
        check_str(agent_env(&R, "PHYSDEVBUS"), "pci");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "e1000e");

        check_int(run_event(c, &R, "add", PCI_NIC "/net/enp0s31f6", "net", "IFINDEX=2", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "INTERFACE"), "enp0s31f6");
        check_str(agent_env(&R, "PHYSDEVPATH"), PCI_NIC);
        check_str(agent_env(&R, "PHYSDEVBUS"), "pci");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "e1000e");
        /* The trace names the handler of each addition, and of nothing the kernel sent. */
        for (unsigned i = 0; i < R.env.n; i++)
                check(R.trace.added_by[i] != NULL);
        check_str(added_by(&R, "PHYSDEVPATH"), "physdev");
        check_str(added_by(&R, "PHYSDEVBUS"), "physdev");
        check_str(added_by(&R, "PHYSDEVDRIVER"), "physdev");
        check_str(added_by(&R, "INTERFACE"), "net"); /* the event above has none: rebuilt */
        check(!added_by(&R, "IFINDEX"));
        check_int(run_event(c, &R, "add", KBD_IF, "usb", "DEVTYPE=usb_interface", NULL), HANDLER_RUN);
        check_str(added_by(&R, "DEVICE"), "usb");
        check_str(added_by(&R, "PHYSDEVBUS"), "physdev");

        /* The kernel sends no MODALIAS with an unbind (zap_modalias_env()): none is made up, learnt or recalled. */
        check_int(run_event(c, &R, "unbind", PCI_NIC, "pci", "PCI_CLASS=20000", "PCI_ID=8086:15BB",
                            "PCI_SUBSYS_ID=17AA:2245", "PCI_SLOT_NAME=0000:00:1f.6", NULL),
                  HANDLER_RUN);
        check(!agent_env(&R, "MODALIAS"));
        check_int(run_event(c, &R, "unbind", PCI_NIC, "pci", NULL), HANDLER_RUN);
        check(R.trace.from_cache);
        check_str(agent_env(&R, "PCI_ID"), "8086:15BB");
        check(!agent_env(&R, "MODALIAS"));
        handler_chain_free(c);
        c = chain_for(ROOT);
        check_int(run_event(c, &R, "unbind", PCI_NIC, "pci", NULL), HANDLER_RUN);
        check(!R.trace.from_cache);
        check_str(agent_env(&R, "PCI_SLOT_NAME"), "0000:00:1f.6");
        check(!agent_env(&R, "MODALIAS"));
        run_release(&R);
        handler_chain_free(c);
}

static void test_filter_policy(void)
{
        const char *q = PCI_NIC "/net/enp0s31f6/queues/rx-0";
        struct handler_config cfg = { .sysfs_root = ROOT };
        struct handler_chain *c = chain_for(ROOT), *d = NULL;

        check_int(run_event(c, &R, "add", q, "queues", NULL), HANDLER_FILTERED);
        check_str(R.trace.filtered_by, "policy");
        check_int(run_event(c, &R, "add", "/bus/pci/drivers/e1000e", "drivers", NULL), HANDLER_FILTERED);
        check_int(run_event(c, &R, "add", "/devices/pci0000:00/0000:00:17.0/ata1/host0", "scsi",
                            "DEVTYPE=scsi_host", NULL),
                  HANDLER_FILTERED);
        check_str(R.trace.filtered_by, "scsi");
        check_int(run_event(c, &R, "add", "/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0",
                            "scsi", "DEVTYPE=scsi_device", NULL),
                  HANDLER_RUN);
        handler_chain_free(c);

        cfg.pass_all = true;
        check_int(handler_chain_new(&cfg, &d), 0);
        check_int(run_event(d, &R, "add", q, "queues", NULL), HANDLER_RUN);
        check_int(run_event(d, &R, "add", "/devices/x/host0", "scsi", "DEVTYPE=scsi_host", NULL), HANDLER_RUN);
        d = handler_chain_free(d);

        cfg.pass_all = false;
        cfg.filter_policy = "queues=keep, scsi=keep net=drop";
        check_int(handler_chain_new(&cfg, &d), 0);
        check_int(run_event(d, &R, "add", q, "queues", NULL), HANDLER_RUN);
        check_int(run_event(d, &R, "add", "/devices/x/host0", "scsi", "DEVTYPE=scsi_host", NULL), HANDLER_RUN);
        check_int(run_event(d, &R, "add", PCI_NIC "/net/enp0s31f6", "net", NULL), HANDLER_FILTERED);
        d = handler_chain_free(d);

        cfg.filter_policy = "none *=drop block=handlers";
        check_int(handler_chain_new(&cfg, &d), 0);
        check_int(run_event(d, &R, "add", "/devices/virtual/block/zram9", "block", NULL), HANDLER_RUN);
        check_int(run_event(d, &R, "add", "/devices/virtual/misc/x", "misc", NULL), HANDLER_FILTERED);
        d = handler_chain_free(d);

        cfg.filter_policy = "queues=maybe";
        check_int(handler_chain_new(&cfg, &d), -EINVAL);
        check(!d);
        run_release(&R);
}

/* Copy the fixture so a test may delete or write parts of it. */
static void copy_fixture(char *dir, size_t size)
{
        char cmd[1024];

        snprintf(dir, size, "/tmp/hotplugd-fixture.XXXXXX");
        check(mkdtemp(dir));
        snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s/'", ROOT, dir);
        check_int(system(cmd), 0);
        strncat(dir, "/sysfs", size - strlen(dir) - 1);
}

static void remove_tree(const char *dir)
{
        char cmd[1024];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        check_int(system(cmd), 0);
}

/* Remove a copy_fixture() tree with its temporary parent. */
static void remove_fixture(char *root)
{
        char *s = strrchr(root, '/');

        check(s && strcmp(s, "/sysfs") == 0);
        *s = '\0';
        remove_tree(root);
}

static void test_remove_after_gone(void)
{
        char root[512], path[1024];
        struct handler_chain *c;

        copy_fixture(root, sizeof(root));
        c = chain_for(root);
        check_int(run_event(c, &R, "add", KBD_IF, "usb", "DEVTYPE=usb_interface", "DRIVER=usbhid", NULL),
                  HANDLER_RUN);
        check(!R.trace.from_cache);
        check_int(run_event(c, &R, "change", KBD_IF, "usb", "DEVTYPE=usb_interface", "DRIVER=usbhid", NULL),
                  HANDLER_RUN);
        check(R.trace.from_cache);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "usbhid");

        /* Unplug: the whole device directory is gone before the remove event is handled. */
        snprintf(path, sizeof(path), "%s%s", root, KBD);
        remove_tree(path);
        check_int(run_event(c, &R, "remove", KBD_IF, "usb", "DEVTYPE=usb_interface", NULL), HANDLER_RUN);
        check(R.trace.from_cache);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check_str(agent_env(&R, "PRODUCT"), "46d/c31c/6400");
        check_str(agent_env(&R, "TYPE"), "0/0/0");
        check_str(agent_env(&R, "INTERFACE"), "3/1/1");
        check_str(agent_env(&R, "PHYSDEVBUS"), "usb");
        check(!agent_env(&R, "PHYSDEVDRIVER")); /* "remove" comes after the unbind */

        /* The entry went with the remove: a second remove only knows what survives without sysfs. */
        check_int(run_event(c, &R, "remove", KBD_IF, "usb", "DEVTYPE=usb_interface", NULL), HANDLER_RUN);
        check(!R.trace.from_cache);
        check(!agent_env(&R, "DEVICE"));
        check_str(agent_env(&R, "PHYSDEVBUS"), "usb"); /* bus/usb still exists */
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

#define KBD_HID KBD_IF "/0003:046D:C31C.0001"

/*
 * The legacy variables as the event stream says, not as sysfs shows when
 * the event is handled (the fixture's sysfs shows every device bound and,
 * after remove_tree(), none at all).  A USB keyboard plugged in, as the
 * kernel announces it: the HID device's probe creates the input device
 * before the "bind" that names hid-generic; then a change, an unbind, a
 * surprise removal.
 */
static void test_model_stream(void)
{
        char root[512], path[1024];
        struct handler_chain *c;

        copy_fixture(root, sizeof(root));
        c = chain_for(root);
        /* A bus device's PHYSDEVDRIVER is its event's DRIVER=: none at add, whatever sysfs says. */
        check_int(run_event(c, &R, "add", KBD, "usb", "DEVTYPE=usb_device", "BUSNUM=001", "DEVNUM=003", NULL),
                  HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        check_int(run_event(c, &R, "add", KBD_IF, "usb", "DEVTYPE=usb_interface", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check_int(run_event(c, &R, "add", KBD_HID, "hid", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVPATH"));
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        /* Created by the HID device's probe: its driver is set already (sysfs says so), the bind comes later. */
        check_int(run_event(c, &R, "add", KBD_HID "/input/input5", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_HID);
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "hid-generic");
        check_int(run_event(c, &R, "bind", KBD_HID, "hid", "DRIVER=hid-stream", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "hid-stream");
        /* A bind keeps the children's records; their driver is the stream's from now on. */
        check_int(run_event(c, &R, "change", KBD_HID "/input/input5", "input", NULL), HANDLER_RUN);
        check(R.trace.from_cache);
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_HID);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "hid-stream");
        check_int(run_event(c, &R, "bind", KBD_IF, "usb", "DEVTYPE=usb_interface", "DRIVER=usbhid", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "usbhid");
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        /* A change carries the DRIVER= of its moment, which no cache overrides. */
        check_int(run_event(c, &R, "change", KBD, "usb", "DEVTYPE=usb_device", "BUSNUM=001", "DEVNUM=003",
                            "DRIVER=usb", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "usb");

        /* Surprise removal: sysfs is gone before hotplugd gets to the events. */
        snprintf(path, sizeof(path), "%s%s", root, KBD);
        remove_tree(path);
        check_int(run_event(c, &R, "remove", KBD_HID "/input/input5", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_HID);
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "hid-stream"); /* sent from the driver's remove() */
        check_int(run_event(c, &R, "unbind", KBD_HID, "hid", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check_int(run_event(c, &R, "remove", KBD_HID, "hid", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check(!agent_env(&R, "PHYSDEVPATH"));
        check_int(run_event(c, &R, "unbind", KBD_IF, "usb", "DEVTYPE=usb_interface", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check(!agent_env(&R, "PHYSDEVDRIVER")); /* unbound, though the record knew usbhid */
        check_int(run_event(c, &R, "remove", KBD_IF, "usb", "DEVTYPE=usb_interface", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check_int(run_event(c, &R, "remove", KBD, "usb", "DEVTYPE=usb_device", "BUSNUM=001", "DEVNUM=003", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/003");
        check_str(agent_env(&R, "PHYSDEVBUS"), "usb");
        check(!agent_env(&R, "PHYSDEVPATH")); /* a bus device, never its parent */
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

/*
 * A class device that is gone, of which the model knows nothing: its
 * physical device is an ancestor the model knows, or nothing; never the
 * nearest directory that happens to be left (here the root hub usb1).
 */
static void test_model_gone(void)
{
        char root[512], path[1024];
        struct handler_chain *c;

        copy_fixture(root, sizeof(root));
        c = chain_for(root);
        snprintf(path, sizeof(path), "%s%s", root, KBD);
        remove_tree(path);
        check_int(run_event(c, &R, "remove", KBD_HID "/input/input5/event3", "input", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVPATH"));
        check(!agent_env(&R, "PHYSDEVBUS"));
        handler_chain_free(c);

        c = chain_for(root);
        check_int(run_event(c, &R, "change", KBD_HID, "hid", "DRIVER=hid-generic", NULL), HANDLER_RUN);
        check_int(run_event(c, &R, "remove", KBD_HID "/input/input5/event3", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_HID);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "hid-generic");
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

/*
 * The value of @key the agent of @r's event gets when it starts now: what
 * the daemon does at a start (manager_physdev_driver()), the driver of the
 * bind that ended the probe the event was sent in, in place of what the
 * handlers found at intake.
 */
static const char *started_env(struct handler_chain *c, const struct run *r, const char *key)
{
        static char driver[DEVMODEL_NAME_MAX];

        if (strcmp(key, "PHYSDEVDRIVER") == 0 && !uevent_get(r->ev, key) &&
            handler_chain_probe(c, r->ev, driver, sizeof(driver)) == DEVMODEL_PROBE_BOUND)
                return driver;
        return agent_env(r, key);
}

#define LATE_HID KBD_IF "/0003:046D:C31C.0009"

/*
 * A keyboard plugged and unplugged before hotplugd read its events (issue
 * 39 item 6b): its HID device (absent from the fixture, as gone by then)
 * is added, its probe makes the input device, the "bind" naming
 * hid-generic comes after; the child, read before the bind with no
 * "driver" link left to read, gets the bind's driver when it starts after
 * the bind was read, even after the device's unbind and remove.  Until the
 * bind is read, the model says the probe is open (the daemon holds the
 * child's start).
 */
static void test_probe_read_late(void)
{
        struct handler_chain *c = chain_for(ROOT);
        static struct run child, later;

        check_int(run_event(c, &R, "add", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        check_int(run_event(c, &child, "add", LATE_HID "/input/input9", "input", "NAME=\"K\"", NULL), HANDLER_RUN);
        check_str(agent_env(&child, "PHYSDEVPATH"), LATE_HID);
        check(!agent_env(&child, "PHYSDEVDRIVER")); /* nothing in sysfs to read at intake */
        check_int(handler_chain_probe(c, child.ev, NULL, 0), DEVMODEL_PROBE_OPEN);
        check(!started_env(c, &child, "PHYSDEVDRIVER"));

        check_int(run_event(c, &R, "bind", LATE_HID, "hid", "DRIVER=hid-generic", NULL), HANDLER_RUN);
        check_str(started_env(c, &child, "PHYSDEVDRIVER"), "hid-generic");
        /* The unplug, read before the child starts: the bind is remembered after the device's record. */
        check_int(run_event(c, &later, "remove", LATE_HID "/input/input9", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&later, "PHYSDEVDRIVER"), "hid-generic"); /* sent from the driver's remove() */
        check_int(handler_chain_probe(c, later.ev, NULL, 0), DEVMODEL_PROBE_NONE);
        check_int(run_event(c, &R, "unbind", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_int(run_event(c, &R, "remove", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_str(started_env(c, &child, "PHYSDEVDRIVER"), "hid-generic");
        check_str(started_env(c, &later, "PHYSDEVDRIVER"), "hid-generic");
        check_str(started_env(c, &child, "PHYSDEVPATH"), LATE_HID);
        run_release(&child);
        run_release(&later);
        run_release(&R);
        handler_chain_free(c);
}

/*
 * Probes the stream says failed, or that were not under way: nothing is
 * added at the start, the intake's word (here none) stands.  A child sent
 * after an unbind, whose device is then removed without a bind; a child of
 * a device bound again later, sent before its unbind (bound then: the
 * intake said so); and one whose bind was read before it (nothing open).
 */
static void test_probe_not_bound(void)
{
        struct handler_chain *c = chain_for(ROOT);
        static struct run child, before;

        check_int(run_event(c, &R, "add", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_int(run_event(c, &R, "bind", LATE_HID, "hid", "DRIVER=hid-generic", NULL), HANDLER_RUN);
        check_int(run_event(c, &before, "change", LATE_HID "/input/input9", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&before, "PHYSDEVDRIVER"), "hid-generic");
        check_int(handler_chain_probe(c, before.ev, NULL, 0), DEVMODEL_PROBE_NONE);
        check_int(run_event(c, &R, "unbind", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_int(run_event(c, &child, "add", LATE_HID "/input/input9", "input", NULL), HANDLER_RUN);
        check(!agent_env(&child, "PHYSDEVDRIVER"));
        check_int(handler_chain_probe(c, child.ev, NULL, 0), DEVMODEL_PROBE_OPEN);
        /* A bind again, of another driver: the child sent between unbind and bind gets it; the one before not. */
        check_int(run_event(c, &R, "bind", LATE_HID, "hid", "DRIVER=hid-other", NULL), HANDLER_RUN);
        check_str(started_env(c, &child, "PHYSDEVDRIVER"), "hid-other");
        check_str(started_env(c, &before, "PHYSDEVDRIVER"), "hid-generic");
        /* Unbound, then removed without a bind: the probe failed, nothing to add. */
        check_int(run_event(c, &R, "unbind", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_int(run_event(c, &child, "add", LATE_HID "/input/input9", "input", NULL), HANDLER_RUN);
        check_int(handler_chain_probe(c, child.ev, NULL, 0), DEVMODEL_PROBE_OPEN);
        check_int(run_event(c, &R, "remove", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_int(handler_chain_probe(c, child.ev, NULL, 0), DEVMODEL_PROBE_NONE);
        check(!started_env(c, &child, "PHYSDEVDRIVER"));
        /* A bus device's own event and a virtual device's: nothing to look up. */
        check_int(run_event(c, &R, "add", LATE_HID, "hid", NULL), HANDLER_RUN);
        check_int(handler_chain_probe(c, R.ev, NULL, 0), DEVMODEL_PROBE_NONE);
        check_int(run_event(c, &R, "add", "/devices/virtual/net/lo", "net", NULL), HANDLER_RUN);
        check_int(handler_chain_probe(c, R.ev, NULL, 0), DEVMODEL_PROBE_NONE);
        run_release(&child);
        run_release(&before);
        run_release(&R);
        handler_chain_free(c);
}

/* Events the filter policy drops still tell the model: the driver a child sees is the stream's. */
static void test_model_filtered(void)
{
        struct handler_config cfg = { .sysfs_root = ROOT, .filter_policy = "pci=drop" };
        struct handler_chain *c = NULL;

        check_int(handler_chain_new(&cfg, &c), 0);
        check_int(run_event(c, &R, "bind", PCI_NIC, "pci", "DRIVER=stream-e1000e", NULL), HANDLER_FILTERED);
        check_int(run_event(c, &R, "add", PCI_NIC "/net/enp0s31f6", "net", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), PCI_NIC);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "stream-e1000e");
        run_release(&R);
        handler_chain_free(c);
}

/* The daemon's seeding at start: the resync listing shows each device to the chain's model. */
static void seed_visit(void *userdata, int dirfd, const char *devpath)
{
        (void)handler_chain_seed(userdata, dirfd, devpath);
}

static void seed_from(struct handler_chain *c, const char *root)
{
        struct devset set;

        devset_init(&set, 0);
        check_int(resync_scan_visit(root, &set, seed_visit, c), 0);
        check(set.n > 0);
        devset_clear(&set);
}

/*
 * A device present before hotplugd started, removed through its parent's
 * unbind (a sound card's control device when snd_hda_intel unbinds; here
 * the I219's net device): the kernel sends the child's remove from the
 * driver's remove(), still bound, but by the time hotplugd handles it the
 * child's directory and the parent's "driver" link are gone and no event
 * told the model of the parent.  Seeded at start, the model knows the
 * parent's bus and the driver bound then.
 */
static void test_model_seeded(void)
{
        char root[512], path[1024];
        struct handler_chain *c;

        copy_fixture(root, sizeof(root));
        c = chain_for(root);
        seed_from(c, root);
        snprintf(path, sizeof(path), "%s%s/net", root, PCI_NIC);
        remove_tree(path);
        snprintf(path, sizeof(path), "%s%s/driver", root, PCI_NIC);
        check_int(unlink(path), 0);
        check_int(run_event(c, &R, "remove", PCI_NIC "/net/enp0s31f6", "net", "INTERFACE=enp0s31f6", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), PCI_NIC);
        check_str(agent_env(&R, "PHYSDEVBUS"), "pci");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "e1000e");
        /* Then the parent's unbind: the stream's word from now on. */
        check_int(run_event(c, &R, "unbind", PCI_NIC, "pci", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVBUS"), "pci");
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        check_int(run_event(c, &R, "remove", PCI_NIC "/net/enp0s31f6", "net", "INTERFACE=enp0s31f6", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), PCI_NIC);
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        handler_chain_free(c);

        /* A device the stream told of first keeps the stream's word. */
        c = chain_for(root);
        check_int(run_event(c, &R, "bind", KBD_HID, "hid", "DRIVER=stream-hid", NULL), HANDLER_RUN);
        seed_from(c, root);
        snprintf(path, sizeof(path), "%s%s", root, KBD);
        remove_tree(path);
        check_int(run_event(c, &R, "remove", KBD_HID "/input/input5", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVPATH"), KBD_HID);
        check_str(agent_env(&R, "PHYSDEVBUS"), "hid");
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "stream-hid");
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

/*
 * A bus device read late, while it goes: device_del() takes its "subsystem"
 * link away before its directory (a sound card's hdaudioC0D0, read between
 * the two).  It is still a bus device: its SUBSYSTEM is a bus.
 */
static void test_bus_device_going(void)
{
        char root[512], path[1024];
        struct handler_chain *c;

        copy_fixture(root, sizeof(root));
        snprintf(path, sizeof(path), "%s%s/subsystem", root, PCI_NIC);
        check_int(unlink(path), 0);
        c = chain_for(root);
        check_int(run_event(c, &R, "unbind", PCI_NIC, "pci", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVBUS"), "pci");
        check(!agent_env(&R, "PHYSDEVPATH"));
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

/* A reload builds a new chain: it goes on with the old one's model (seeds, the stream's word, the binds). */
static void test_model_reload(void)
{
        char root[512], path[1024];
        struct handler_chain *c, *next;
        struct handler_config other = { .sysfs_root = NULL, .cache_size = 7 };

        copy_fixture(root, sizeof(root));
        c = chain_for(root);
        seed_from(c, root);
        check_int(run_event(c, &R, "bind", KBD_HID, "hid", "DRIVER=stream-hid", NULL), HANDLER_RUN);
        next = chain_for(root);
        handler_chain_take_model(next, c);
        handler_chain_free(c);
        c = next;
        snprintf(path, sizeof(path), "%s%s/net", root, PCI_NIC);
        remove_tree(path);
        snprintf(path, sizeof(path), "%s%s/driver", root, PCI_NIC);
        check_int(unlink(path), 0);
        snprintf(path, sizeof(path), "%s%s", root, KBD);
        remove_tree(path);
        /* The seed and the stream's word, across the reload. */
        check_int(run_event(c, &R, "remove", PCI_NIC "/net/enp0s31f6", "net", "INTERFACE=enp0s31f6", NULL),
                  HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "e1000e");
        check_int(run_event(c, &R, "remove", KBD_HID "/input/input5", "input", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PHYSDEVDRIVER"), "stream-hid");
        /* Another handler-cache: the new chain starts empty (and says so). */
        other.sysfs_root = root;
        check_int(handler_chain_new(&other, &next), 0);
        handler_chain_take_model(next, c);
        handler_chain_free(c);
        c = next;
        check_int(run_event(c, &R, "remove", KBD_HID "/input/input5", "input", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVDRIVER"));
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

/* Seeding fills free slots only: what the stream stores later may evict seeds, seeds evict nothing. */
static void test_model_seed_bounded(void)
{
        struct handler_config cfg = { .sysfs_root = ROOT, .cache_size = 2 };
        struct handler_chain *c = NULL;
        struct devset set;

        check_int(handler_chain_new(&cfg, &c), 0);
        check_int(run_event(c, &R, "add", PCI_NIC "/net/enp0s31f6", "net", NULL), HANDLER_RUN);
        devset_init(&set, 0);
        check_int(resync_scan_visit(ROOT, &set, seed_visit, c), 0);
        devset_clear(&set);
        /* The net device's record (learnt at its add) was not evicted by a seed. */
        check_int(run_event(c, &R, "change", PCI_NIC "/net/enp0s31f6", "net", NULL), HANDLER_RUN);
        check(R.trace.from_cache);
        run_release(&R);
        handler_chain_free(c);
}

static void test_cache_bounded(void)
{
        struct handler_config cfg = { .sysfs_root = NULL, .cache_size = 2 };
        char root[512], path[1024];
        struct handler_chain *c = NULL;

        copy_fixture(root, sizeof(root));
        cfg.sysfs_root = root;
        check_int(handler_chain_new(&cfg, &c), 0);
        check_int(run_event(c, &R, "add", PCI_NIC "/net/enp0s31f6", "net", NULL), HANDLER_RUN);
        check_int(run_event(c, &R, "add", KBD, "usb", NULL), HANDLER_RUN);
        check_int(run_event(c, &R, "add", HUB, "usb", NULL), HANDLER_RUN);
        snprintf(path, sizeof(path), "%s%s", root, PCI_NIC);
        remove_tree(path);
        /* The oldest entry was evicted: the NIC's remove cannot recall its PHYSDEVPATH. */
        check_int(run_event(c, &R, "remove", PCI_NIC "/net/enp0s31f6", "net", "INTERFACE=enp0s31f6", NULL),
                  HANDLER_RUN);
        check(!R.trace.from_cache);
        check(!agent_env(&R, "PHYSDEVPATH"));
        check_int(run_event(c, &R, "change", HUB, "usb", NULL), HANDLER_RUN);
        check(R.trace.from_cache);
        check_str(agent_env(&R, "DEVICE"), "/proc/bus/usb/001/105");
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

/* The "loading" value of firmware device @fw once the copy is over (not "1"); waits while it is "1". */
static const char *wait_loading(const char *root, const char *fw)
{
        static char buf[16];
        char path[1024];

        snprintf(path, sizeof(path), "%s%s/loading", root, fw);
        for (int i = 0; i < 10 * 100; i++) { /* the copy itself is followed by the reader; this is its end */
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

                if (fd >= 0)
                        close(fd);
                buf[n > 0 ? n : 0] = '\0';
                buf[strcspn(buf, "\n")] = '\0';
                if (strcmp(buf, "1") != 0)
                        return buf;
                usleep(10000);
        }
        return buf;
}

static void test_firmware_loader(void)
{
        struct handler_config cfg = { .firmware_loader = true, .firmware_path = "/nonexistent:" FIXTURE_DIR "/firmware" };
        const char *fw = PCI_NIC "/firmware/0000:00:1f.6";
        char root[512], path[1024], buf[256];
        struct handler_chain *c = NULL;
        int fd;
        ssize_t n;

        copy_fixture(root, sizeof(root));
        cfg.sysfs_root = root;
        check_int(handler_chain_new(&cfg, &c), 0);
        /* Not found: the agent gets the request, with TIMEOUT rebuilt from class/firmware/timeout. */
        check_int(run_event(c, &R, "add", fw, "firmware", "FIRMWARE=e1000e/missing.bin", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "TIMEOUT"), "60");
        check_str(agent_env(&R, "FIRMWARE"), "e1000e/missing.bin");
        /* A name escaping the search path is never opened. */
        check_int(run_event(c, &R, "add", fw, "firmware", "FIRMWARE=../sysfs/class/firmware/timeout", NULL),
                  HANDLER_RUN);
        /* Found: loaded through loading/data and the event is consumed. */
        check_int(run_event(c, &R, "add", fw, "firmware", "FIRMWARE=e1000e/test.bin", "TIMEOUT=60", NULL),
                  HANDLER_FILTERED);
        check_str(R.trace.filtered_by, "firmware");
        check_str(wait_loading(root, fw), "0");
        snprintf(path, sizeof(path), "%s%s/data", root, fw);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        check(fd >= 0);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        check(n > 0);
        buf[n] = '\0';
        check_str(buf, "hotplugd test firmware\n");
        snprintf(path, sizeof(path), "%s%s/loading", root, fw);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        check(n >= 1 && buf[0] == '0');
        handler_chain_free(c);

        /* Loader off (default): the request goes to the agent. */
        cfg.firmware_loader = false;
        check_int(handler_chain_new(&cfg, &c), 0);
        check_int(run_event(c, &R, "add", fw, "firmware", "FIRMWARE=e1000e/test.bin", NULL), HANDLER_RUN);
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
}

static int alarm_fd = STDERR_FILENO; /* the real stderr while it is captured */

/* Run one event with stderr captured; returns the captured log (static). */
static const char *run_logged(struct handler_chain *c, int *ret, const char *devpath, const char *fwname)
{
        static char log[8192];
        char name[] = "/tmp/hotplugd-fwlog.XXXXXX", kv[512];
        int fd = mkstemp(name), saved = dup(STDERR_FILENO);
        ssize_t n;

        check(fd >= 0 && saved >= 0);
        unlink(name);
        snprintf(kv, sizeof(kv), "FIRMWARE=%s", fwname);
        fflush(stderr);
        alarm_fd = saved;
        dup2(fd, STDERR_FILENO);
        *ret = run_event(c, &R, "add", devpath, "firmware", kv, "TIMEOUT=60", NULL);
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        alarm_fd = STDERR_FILENO;
        close(saved);
        n = pread(fd, log, sizeof(log) - 1, 0);
        close(fd);
        log[n > 0 ? n : 0] = '\0';
        fprintf(stderr, "%s", log);
        return log;
}

static void on_alarm(int sig)
{
        static const char msg[] = "FAIL: the firmware handler blocked the event loop (no progress for 10 s)\n";
        (void)sig;
        (void)!write(alarm_fd, msg, sizeof(msg) - 1);
        _exit(1);
}

static void make_file(const char *path, off_t size, bool pattern)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        static unsigned char buf[65536];

        check(fd >= 0);
        if (pattern)
                for (off_t o = 0; o < size; o += (off_t)sizeof(buf)) {
                        size_t k = size - o < (off_t)sizeof(buf) ? (size_t)(size - o) : sizeof(buf);
                        for (size_t i = 0; i < k; i++)
                                buf[i] = (unsigned char)((o + (off_t)i) % 251);
                        check(write(fd, buf, k) == (ssize_t)k);
                }
        check_int(ftruncate(fd, size), 0);
        close(fd);
}

/* Refusals happen before any copy and never block: each one is a log line and the agent gets the event. */
static void test_firmware_refusals(void)
{
        struct handler_config cfg = { .firmware_loader = true };
        const char *fw = PCI_NIC "/firmware/0000:00:1f.6";
        char root[512], fwdir[] = "/tmp/hotplugd-fw.XXXXXX", search[128], p[1024];
        struct handler_chain *c = NULL;
        const char *log;
        int r;

        copy_fixture(root, sizeof(root));
        cfg.sysfs_root = root;
        check(mkdtemp(fwdir));
        snprintf(search, sizeof(search), "%s/lib", fwdir);
        cfg.firmware_path = search;
        check_int(mkdir(search, 0755), 0);
        snprintf(p, sizeof(p), "%s/outside.bin", fwdir);
        make_file(p, 100, true);
        snprintf(p, sizeof(p), "%s/lib/sub", fwdir);
        check_int(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/lib/inside.bin", fwdir);
        make_file(p, 1000, true);
        snprintf(p, sizeof(p), "%s/lib/sub/link-in.bin", fwdir);
        check_int(symlink("../inside.bin", p), 0);
        snprintf(p, sizeof(p), "%s/lib/escape.bin", fwdir);
        check_int(symlink("../outside.bin", p), 0);
        snprintf(p, sizeof(p), "%s/lib/escape-abs.bin", fwdir);
        check_int(symlink(FIXTURE_DIR "/firmware/e1000e/test.bin", p), 0);
        snprintf(p, sizeof(p), "%s/lib/fifo.bin", fwdir);
        check_int(mkfifo(p, 0644), 0);
        snprintf(p, sizeof(p), "%s/lib/big.bin", fwdir);
        make_file(p, HP_FIRMWARE_MAX_BYTES + 1, false);
        check_int(handler_chain_new(&cfg, &c), 0);
        signal(SIGALRM, on_alarm);

        /* A link that leads out of the firmware directory: refused, the agent gets the request. */
        alarm(10);
        log = run_logged(c, &r, fw, "escape.bin");
        check_int(r, HANDLER_RUN);
        check(strstr(log, "escape.bin") && strstr(log, "refused"));
        log = run_logged(c, &r, fw, "escape-abs.bin");
        check_int(r, HANDLER_RUN);
        check(strstr(log, "escape-abs.bin") && strstr(log, "refused"));
        /* A FIFO: refused without waiting for a writer. */
        log = run_logged(c, &r, fw, "fifo.bin");
        check_int(r, HANDLER_RUN);
        check(strstr(log, "fifo.bin") && strstr(log, "not a regular file"));
        /* Larger than the limit. */
        log = run_logged(c, &r, fw, "big.bin");
        check_int(r, HANDLER_RUN);
        check(strstr(log, "big.bin") && strstr(log, "HP_FIRMWARE_MAX_BYTES"));
        alarm(0);
        /* A link inside the tree is followed. */
        log = run_logged(c, &r, fw, "sub/link-in.bin");
        check_int(r, HANDLER_FILTERED);
        check_str(wait_loading(root, fw), "0");
        snprintf(p, sizeof(p), "%s%s/data", root, fw);
        struct stat st;
        check_int(stat(p, &st), 0);
        check_int((int)st.st_size, 1000);
        signal(SIGALRM, SIG_DFL);
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
        remove_tree(fwdir);
}

/*
 * The kernel side of the copy, as a FIFO in place of "data": a thread that
 * reads it, in the test's own time.  Growing: after the first chunk the
 * source file is made larger than the limit.
 */
struct sink {
        char path[1024];
        const char *grow;            /* file to extend after the first chunk, or NULL */
        atomic_bool go;              /* set when the event returned */
        bool blocked;                /* the event did not return while nothing was read */
        unsigned long long total;
        bool pattern_ok, stalled;
};

static void *sink_run(void *arg)
{
        struct sink *k = arg;
        static unsigned char buf[65536];
        int fd, idle = 0;

        for (int i = 0; !atomic_load(&k->go); i++) {
                if (i >= 1000) { /* 10 s and the event has not returned: the handler waits for us */
                        k->blocked = true;
                        break;
                }
                usleep(10000);
        }
        fd = open(k->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        k->pattern_ok = true;
        for (;;) {
                struct pollfd pfd = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (poll(&pfd, 1, 100) == 0) {
                        if (++idle >= 100) { /* nothing moved for 10 s */
                                k->stalled = true;
                                break;
                        }
                        continue;
                }
                n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EAGAIN)
                        continue;
                if (n <= 0)
                        break;
                idle = 0;
                for (ssize_t i = 0; i < n; i++)
                        if (buf[i] != (unsigned char)((k->total + (unsigned long long)i) % 251))
                                k->pattern_ok = false;
                if (k->grow && k->total == 0)
                        check_int(truncate(k->grow, HP_FIRMWARE_MAX_BYTES + (1 << 20)), 0);
                k->total += (unsigned long long)n;
        }
        close(fd);
        return NULL;
}

/*
 * True if a process other than ours holds the write end of the pipe @rd
 * reads: no end of file within 5 s of ours being closed (well before the
 * sink gives up waiting, at 10 s, and lets a blocked copy end).
 */
static bool write_end_held(int rd)
{
        struct pollfd pfd = { .fd = rd, .events = POLLIN };
        char c;

        return poll(&pfd, 1, 5000) != 1 || read(rd, &c, 1) != 0;
}

static void firmware_copy_case(bool grow)
{
        struct handler_config cfg = { .firmware_loader = true };
        const char *fw = PCI_NIC "/firmware/0000:00:1f.6";
        char root[512], fwdir[] = "/tmp/hotplugd-fw.XXXXXX", src[600];
        struct handler_chain *c = NULL;
        struct sink k = { 0 };
        pthread_t t;
        int r, probe[2];
        bool held;

        copy_fixture(root, sizeof(root));
        cfg.sysfs_root = root;
        check(mkdtemp(fwdir));
        cfg.firmware_path = fwdir;
        snprintf(src, sizeof(src), "%s/fw.bin", fwdir);
        make_file(src, grow ? (1 << 20) : HP_FIRMWARE_MAX_BYTES, true);
        snprintf(k.path, sizeof(k.path), "%s%s/data", root, fw);
        check_int(unlink(k.path), 0);
        check_int(mkfifo(k.path, 0644), 0);
        k.grow = grow ? src : NULL;
        check_int(handler_chain_new(&cfg, &c), 0);
        check_int(pthread_create(&t, NULL, sink_run, &k), 0);

        /* A descriptor without O_CLOEXEC, as every one of the daemon's is to a fork without exec. */
        check_int(pipe(probe), 0);

        /* The request is answered without waiting for the copy... */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        (void)run_logged(c, &r, fw, "fw.bin");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        /* ...by a copy (blocked on the FIFO until the sink reads) that holds none of our descriptors. */
        close(probe[1]);
        held = write_end_held(probe[0]);
        close(probe[0]);
        check_int(r, HANDLER_FILTERED);
        fprintf(stderr, "firmware event handled in %.3f ms\n",
                (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
        /* ...and other events go on while nothing of it has been read yet. */
        check_int(run_event(c, &R, "add", KBD, "usb", "DEVTYPE=usb_device", NULL), HANDLER_RUN);
        check_str(agent_env(&R, "PRODUCT"), "46d/c31c/6400");
        atomic_store(&k.go, true);
        check_int(pthread_join(t, NULL), 0);
        check(!held); /* checked once the copy could end: a failure leaves no process behind */
        check(!k.blocked);
        check(!k.stalled);
        check(k.pattern_ok);
        if (grow) {
                fprintf(stderr, "growing file: %llu bytes reached the kernel\n", k.total);
                check(k.total <= HP_FIRMWARE_MAX_BYTES);
                check_str(wait_loading(root, fw), "-1");
        } else {
                check_int((long long)k.total, (long long)HP_FIRMWARE_MAX_BYTES);
                check_str(wait_loading(root, fw), "0");
        }
        run_release(&R);
        handler_chain_free(c);
        remove_fixture(root);
        remove_tree(fwdir);
}

static void test_firmware_big_copy(void)
{
        firmware_copy_case(false);
}

static void test_firmware_growing(void)
{
        firmware_copy_case(true);
}

/* Sysfs reads stay below the root: no "..", no symbolic link followed, in both implementations. */
static void test_sysfs_confined(void)
{
        int rootfd = sysfs_open_root(ROOT);
        char buf[256];

        check(rootfd >= 0);
        for (int pass = 0; pass < 2; pass++) {
                sysfs_force_fallback(pass == 1);
                check_int(sysfs_read(rootfd, KBD, "idVendor", buf, sizeof(buf)), 4);
                check_str(buf, "046d");
                check_int(sysfs_read(rootfd, "/devices/virtual/net/evil0", "passwd", buf, sizeof(buf)), -ELOOP);
                check_int(sysfs_read(rootfd, KBD, "subsystem/drivers", buf, sizeof(buf)), -ELOOP);
                check_int(sysfs_read(rootfd, KBD "/..", "idVendor", buf, sizeof(buf)), -EINVAL);
                check_int(sysfs_read(rootfd, KBD, "../1-3/idVendor", buf, sizeof(buf)), -EINVAL);
                check_int(sysfs_read(rootfd, KBD, "idVendor", buf, 3), -ENOBUFS);
                check_int(sysfs_read(rootfd, KBD, "nonexistent", buf, sizeof(buf)), -ENOENT);
        }
        sysfs_force_fallback(false);
        check(!sysfs_path_valid("a//b"));
        check(!sysfs_path_valid("a/./b"));
        check(!sysfs_path_valid("/abs"));
        check(!sysfs_path_valid("a/"));
        check(sysfs_path_valid("a/b.c/..d"));
        close(rootfd);

        /* The chain on a link out of the root learns nothing. */
        struct handler_chain *c = chain_for(ROOT);
        check_int(run_event(c, &R, "add", "/devices/virtual/net/evil0", "net", NULL), HANDLER_RUN);
        check(!agent_env(&R, "PHYSDEVPATH"));
        run_release(&R);
        handler_chain_free(c);
}

static void test_link_escape(void)
{
        char dir[] = "/tmp/hotplugd-link.XXXXXX", path[256], buf[256];
        int rootfd, fd;

        check(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/devices/d", dir);
        check_int(system("true"), 0);
        check_int(mkdir(strcat(strcpy(buf, dir), "/devices"), 0755), 0);
        check_int(mkdir(path, 0755), 0);
        check_int(symlink("../../../../../etc", strcat(strcpy(buf, path), "/subsystem")), 0);
        check_int(symlink("../../bus/pci", strcat(strcpy(buf, path), "/driver")), 0);
        rootfd = sysfs_open_root(dir);
        fd = sysfs_open_dir(rootfd, "/devices/d");
        check(fd >= 0);
        check_int(sysfs_link_at(fd, "/devices/d", "subsystem", buf, sizeof(buf)), -EXDEV);
        check_int(sysfs_link_at(fd, "/devices/d", "driver", buf, sizeof(buf)), 7);
        check_str(buf, "bus/pci");
        close(fd);
        close(rootfd);
        remove_tree(dir);
}

int main(void)
{
        run_test(test_usb_device_rebuilt);
        run_test(test_usb_device_passthrough);
        run_test(test_usb_interface);
        run_test(test_input_keyboard);
        run_test(test_pci_and_net);
        run_test(test_filter_policy);
        run_test(test_remove_after_gone);
        run_test(test_model_stream);
        run_test(test_model_gone);
        run_test(test_model_filtered);
        run_test(test_model_seeded);
        run_test(test_model_reload);
        run_test(test_bus_device_going);
        run_test(test_probe_read_late);
        run_test(test_probe_not_bound);
        run_test(test_model_seed_bounded);
        run_test(test_cache_bounded);
        run_test(test_firmware_loader);
        run_test(test_firmware_refusals);
        run_test(test_firmware_big_copy);
        run_test(test_firmware_growing);
        run_test(test_sysfs_confined);
        run_test(test_link_escape);
        return 0;
}
