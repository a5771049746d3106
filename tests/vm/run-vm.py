#!/usr/bin/env python3
"""The VM suite's host driver (test vm-drivers): hotplugd on real drivers.

Boots Debian's kernel (tests/vm/fetch-kernel) under QEMU in TCG mode with
an initramfs made here (tests/vm/mkinitramfs, guest side tests/vm/init),
a q35 machine with an xHCI controller, two PCIe root ports (pciehp) and a
virtio-scsi controller, and drives this scenario, each step followed by a
settle (no event for a while, both daemons settled, the capture caught up):

  a. load the drivers (xhci_pci, usbhid, hid_generic, evdev, usb_storage,
     sd_mod, sg, cdc_ether, virtio_net, e1000e, virtio_scsi) once the
     daemons are up, so the stream has the controllers' binds;
  b. USB: a keyboard, a tablet, a storage stick with two MBR partitions,
     a USB NIC, a hub and a keyboard behind the hub;
  c. PCIe native hot-plug: a virtio NIC and an e1000e on the root ports;
  d. a SCSI disk on virtio-scsi;
  e. test_firmware: a request daemon A's --firmware-loader answers (the
     bytes are compared afterwards) and one for a missing file, which A's
     loader fails once its agent is done;
  f. removal of everything: USB surprise removal, pciehp removal, the SCSI
     disk.
Besides (issue 39 item 6): an Intel HD Audio card (hda-duplex codec) is
bound before the daemons start, and in step a its PCI driver is unbound
through sysfs, so the removes of its control, PCM and hwdep devices come
when their directories and the card's driver link are gone: their
PHYSDEVPATH/PHYSDEVBUS/PHYSDEVDRIVER are what the daemons knew at start.
In step b, one more keyboard is plugged and unplugged while daemon A is
stopped (SIGSTOP), and A is continued only once the keyboard is gone
(issue 39 item 6b): A reads its whole life late, B at once, and both must
give what the stream says.  When A reads the input children, created by
the HID device's probe before its bind, the HID device and its driver
link are gone, and the bind that names hid-generic is read after them:
their PHYSDEVDRIVER is the bind's (the child waits for it, or takes it
from the model when it starts).
Daemon B runs with --hotplug-dir: a usermap naming QEMU's HID devices runs
recording scripts for each keyboard and tablet plugged (issue 39 item 4).
Then the guest stops both daemons and sends its results back over 9p, and
tests/vm/check.py compares the agents' runs with the raw netlink capture.

Environment (tests/vm/meson.build sets it): HOTPLUGD, HOTPLUGCTL,
AGENT_DUMP, VM_CAPTURE, VM_SNAPSHOT, VM_SYSFS_WRITE, SRCDIR, B_SANITIZE.
HOTPLUGD_VM_CACHE: the kernel cache (default /var/cache/hotplugd-vm).
HOTPLUGD_VM_KEEP=1 keeps the run directory even when the test passes (it
is always kept, and its path printed, when the test fails).
HOTPLUGD_VM_HDA_FAULT=1 makes the sound card's first codec probe fail on
purpose (hp.hda_fault=1, tests/vm/init), to test the init's rebind of the
controller; the test must pass all the same.
Exit status: 0 passed, 1 failed, 77 skipped (not root, no QEMU; with
HOTPLUGD_TEST_REQUIRE_ROOT=1 a missing QEMU or kernel is a failure).

Every wait is progress-based: it gives up only when neither the guest's
console nor its command channel produced anything for IDLE seconds.
"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for vmlib
from vmlib import (  # noqa: E402
                   CONTROLLERS, HDA, HERE, RP1, RP2, T0, USB, VSCSI, Failure, Guest, blank_image, finish_run, log,
                   mbr_image, preflight, qemu_base)

MODULES_HARNESS = ["virtio_pci", "9pnet_virtio", "9p"]
MODULES_BEFORE = ["snd_hda_intel", "snd_hda_codec_generic"]  # loaded by the init before the daemons start
MODULES_SCENARIO = ["xhci_pci", "usbhid", "hid_generic", "evdev", "usb_storage", "sd_mod", "sg",
                    "cdc_ether", "virtio_net", "e1000e", "virtio_scsi"]
MODULES_LATER = ["test_firmware"]
FW_SERVED = "hotplugd-test.bin"
FW_MISSING = "hotplugd-missing.bin"
BINARIES = ("HOTPLUGD", "HOTPLUGCTL", "AGENT_DUMP", "VM_CAPTURE", "VM_SNAPSHOT", "VM_SYSFS_WRITE", "VM_CLOCK")


def firmware_bytes():
    """3000 bytes, every byte value, not a text file: compared byte for byte."""
    x, out = 0x2545F491, bytearray()
    while len(out) < 3000:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        out.append((x >> 16) & 0xFF)
    return bytes(out)


def build_initramfs(run, root, version):
    env = os.environ
    fw = os.path.join(run, "fw")
    os.makedirs(fw)
    with open(os.path.join(fw, FW_SERVED), "wb") as f:
        f.write(firmware_bytes())
    out = os.path.join(run, "initramfs.cpio")
    argv = [sys.executable, os.path.join(HERE, "mkinitramfs"), "--kernel-root", root, "--version", version,
            "--out", out, "--init", os.path.join(HERE, "init")]
    for m in MODULES_HARNESS + MODULES_BEFORE + MODULES_SCENARIO + MODULES_LATER:
        argv += ["--module", m]
    for b in BINARIES:
        src = env[b]
        name = {"AGENT_DUMP": "agent-dump"}.get(b, os.path.basename(src))
        argv += ["--bin", "%s:/usr/bin/%s" % (src, name)]
    argv += ["--file", "%s:/hp/fw/%s" % (os.path.join(fw, FW_SERVED), FW_SERVED)]
    argv += ["--file", "%s:/lib/vm-init.sh" % os.path.join(HERE, "init-lib.sh")]
    subprocess.run(argv, check=True)
    return out


def qemu_argv(run, root, version, initrd):
    # With a sanitized build, the guest's hotplugd reports end the daemon
    # (non-zero exit, which check.py fails on): vmlib.qemu_base().
    base = qemu_base(run, root, version, initrd)
    if os.environ.get("HOTPLUGD_VM_HDA_FAULT") == "1":
        base[base.index("-append") + 1] += " hp.hda_fault=1"
    return base + CONTROLLERS + [
        "-fsdev", "local,id=out,path=%s,security_model=none" % os.path.join(run, "out"),
        "-device", "virtio-9p-pci,fsdev=out,mount_tag=out,bus=pcie.0,addr=0x9",
        "-drive", "if=none,id=stick,format=raw,file=%s" % os.path.join(run, "stick.img"),
        "-drive", "if=none,id=disk,format=raw,file=%s" % os.path.join(run, "disk.img"),
        "-netdev", "user,id=n1,restrict=on", "-netdev", "user,id=n2,restrict=on",
        "-netdev", "user,id=n3,restrict=on",
        "-device", "intel-hda,id=hda,bus=pcie.0,addr=0xa", "-device", "hda-duplex,bus=hda.0",
    ]


def report_sound_rebinds(run):
    """Say in the test's log when the init had to bind the sound card's
    controller again (the codec missed its probe), with the kernel's line."""
    marks = ("Cannot probe codecs", "binding snd_hda_intel again", "sound card is bound after")
    with open(os.path.join(run, "serial.log"), errors="replace") as f:
        for line in f:
            if any(m in line for m in marks):
                log("guest console: %s" % line.strip())


def scenario(g):
    # a. drivers, loaded while the daemons listen
    g.command("modprobe", *MODULES_SCENARIO)
    g.command("wait", USB + "/usb1", USB + "/usb2")
    g.command("settle")
    # the sound card, bound since before the daemons started, loses its driver
    g.command("unbind", "snd_hda_intel", HDA.rsplit("/", 1)[1])
    g.command("wait", "!" + HDA + "/sound/card*")
    g.command("settle")

    # b. USB devices (xHCI's USB 2 root hub is bus 1: port N is device 1-N;
    # the storage stick is a USB 3 device and comes on bus 2, as 2-3)
    g.device_add("usb-kbd", id="kbd", bus="xhci.0", port="1")
    g.device_add("usb-tablet", id="tablet", bus="xhci.0", port="2")
    g.device_add("usb-storage", id="stick", bus="xhci.0", port="3", drive="stick")
    g.device_add("usb-net", id="unet", bus="xhci.0", port="4", netdev="n3")
    g.device_add("usb-hub", id="hub", bus="xhci.0", port="5")
    g.device_add("usb-kbd", id="kbd2", bus="xhci.0", port="5.1")
    g.command("wait", USB + "/1-1:1.0/0003:*/input/input*/event*", USB + "/1-2:1.0/0003:*/input/input*/event*",
              USB + "/2-3:1.0/host*/target*/*/block/sd*/sd*2", USB + "/1-4:*/net/*",
              USB + "/1-5.1:1.0/0003:*/input/input*/event*")
    g.command("settle")
    # a keyboard daemon A reads late: plugged and unplugged while A is stopped
    g.command("stop-a")
    g.device_add("usb-kbd", id="kbd3", bus="xhci.0", port="6")
    g.command("wait", USB + "/1-6:1.0/0003:*/input/input*/event*")
    g.device_del("kbd3")
    g.command("wait", "!" + USB + "/1-6")
    g.command("cont-a")
    g.command("settle")

    # c. PCIe native hot-plug on the two root ports
    g.device_add("virtio-net-pci", id="nic1", bus="rp1", netdev="n1", romfile="")
    g.device_add("e1000e", id="nic2", bus="rp2", netdev="n2", romfile="")
    g.command("wait", RP1 + "/0000:*:00.0/virtio*/net/*", RP2 + "/0000:*:00.0/net/*")
    g.command("settle")

    # d. a SCSI disk on virtio-scsi
    g.device_add("scsi-hd", id="sdisk", bus="scsi0.0", drive="disk")
    g.command("wait", VSCSI + "/virtio*/host*/target*/*/block/sd*")
    g.command("settle")

    # e. firmware through the sysfs fallback
    g.command("modprobe", "test_firmware")
    g.command("settle")
    served = g.command("fw-serve", FW_SERVED)
    g.command("settle")
    missing = g.command("fw-missing", FW_MISSING)
    g.command("settle")

    # f. removal of everything
    for dev in ("kbd", "tablet", "stick", "unet", "kbd2", "hub", "nic1", "nic2", "sdisk"):
        g.device_del(dev)
    g.command("wait", "!" + USB + "/1-1", "!" + USB + "/1-2", "!" + USB + "/2-3", "!" + USB + "/1-4",
              "!" + USB + "/1-5", "!" + RP1 + "/0000:*:00.0", "!" + RP2 + "/0000:*:00.0",
              "!" + VSCSI + "/virtio*/host*/target*/*:*")
    g.wait_deleted(["nic1", "nic2"])
    g.command("settle")
    return {"serve": served, "missing": missing}


def main():
    root, version = preflight(BINARIES)
    run = tempfile.mkdtemp(prefix="hotplugd-vm.")
    os.makedirs(os.path.join(run, "out"))
    log("run directory %s, kernel %s" % (run, version))
    ok = False
    g = None
    try:
        mbr_image(os.path.join(run, "stick.img"), 16)
        blank_image(os.path.join(run, "disk.img"), 8)
        initrd = build_initramfs(run, root, version)
        g = Guest(run, qemu_argv(run, root, version, initrd))
        log("guest ready: %s" % g.expect_ready())
        report_sound_rebinds(run)
        fw = scenario(g)
        g.command("finish")
        rc = g.wait_exit()
        log("qemu exited with %d" % rc)
        with tarfile.open(os.path.join(run, "out", "results.tar")) as t:
            t.extractall(os.path.join(run, "results"))
        meta = {
            "agents": {"a": "/hp/a/agent", "b": "/hp/b/agent"},
            "firmware_loader": {"a": [FW_SERVED], "b": []},
            # usb-device-path: A 2.6's /proc/bus/usb (--usb-device-path=proc), B the default /dev/bus/usb.
            "usbfs": {"a": "/proc/bus/usb", "b": "/dev/bus/usb"},
            # B's --hotplug-dir=/hp/hotplug (tests/vm/init usb_dispatch_setup); control socket /run/hp-b.sock.
            "usb_dispatch": {"daemon": "b", "remover_dir": "/run/remover/usb"},
            "firmware": {"served": FW_SERVED, "missing": FW_MISSING, "replies": fw},
            "seconds": round(time.monotonic() - T0, 1),
        }
        with open(os.path.join(run, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        log("checking")
        check = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), run])
        ok = check.returncode == 0
    except Failure as e:
        print("FAIL: %s" % e)
    except (OSError, subprocess.CalledProcessError, tarfile.TarError) as e:
        print("FAIL: %s: %s" % (type(e).__name__, e))
    finally:
        if g:
            g.kill()
    finish_run(run, ok, ("serial.log", "results/res/hotplugd-a.log", "results/res/hotplugd-b.log"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
