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
     bytes are compared afterwards) and one for a missing file;
  f. removal of everything: USB surprise removal, pciehp removal, the SCSI
     disk.
Then the guest stops both daemons and sends its results back over 9p, and
tests/vm/check.py compares the agents' runs with the raw netlink capture.

Environment (tests/vm/meson.build sets it): HOTPLUGD, HOTPLUGCTL,
AGENT_DUMP, VM_CAPTURE, VM_SNAPSHOT, VM_SYSFS_WRITE, SRCDIR, B_SANITIZE.
HOTPLUGD_VM_CACHE: the kernel cache (default /var/cache/hotplugd-vm).
HOTPLUGD_VM_KEEP=1 keeps the run directory even when the test passes (it
is always kept, and its path printed, when the test fails).
Exit status: 0 passed, 1 failed, 77 skipped (not root, no QEMU; with
HOTPLUGD_TEST_REQUIRE_ROOT=1 a missing QEMU or kernel is a failure).

Every wait is progress-based: it gives up only when neither the guest's
console nor its command channel produced anything for IDLE seconds.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

IDLE = 180  # seconds without any sign of life from the guest
SRCDIR = os.environ.get("SRCDIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HERE = os.path.join(SRCDIR, "tests", "vm")
REQUIRE = os.environ.get("HOTPLUGD_TEST_REQUIRE_ROOT") == "1"
T0 = time.monotonic()

MODULES_HARNESS = ["virtio_pci", "9pnet_virtio", "9p"]
MODULES_SCENARIO = ["xhci_pci", "usbhid", "hid_generic", "evdev", "usb_storage", "sd_mod", "sg",
                    "cdc_ether", "virtio_net", "e1000e", "virtio_scsi"]
MODULES_LATER = ["test_firmware"]
FW_SERVED = "hotplugd-test.bin"
FW_MISSING = "hotplugd-missing.bin"


def log(msg):
    print("[%6.1fs] %s" % (time.monotonic() - T0, msg), flush=True)


def skip(msg):
    if REQUIRE:
        print("FAIL: %s (HOTPLUGD_TEST_REQUIRE_ROOT=1)" % msg)
        sys.exit(1)
    print("SKIP: %s" % msg)
    sys.exit(77)


class Failure(Exception):
    pass


class Guest:
    """QEMU, its QMP socket and the guest's command channel (ttyS1)."""

    def __init__(self, run, argv):
        self.run = run
        self.serial = os.path.join(run, "serial.log")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=open(os.path.join(run, "qemu.log"), "wb"),
                                     stderr=subprocess.STDOUT)
        self.qmp = self._connect(os.path.join(run, "qmp.sock"))
        self.cmd = self._connect(os.path.join(run, "cmd.sock"))
        self.qbuf = b""
        self.cbuf = b""
        self.events = []
        self.next_id = 1
        self.last_progress = time.monotonic()
        self.last_size = 0
        self.transcript = open(os.path.join(run, "commands.log"), "w")
        greeting = self._qmp_line()
        if "QMP" not in greeting:
            raise Failure("no QMP greeting: %r" % greeting)
        self.qmp_call("qmp_capabilities")

    def _connect(self, path):
        while True:
            if self.proc.poll() is not None:
                raise Failure("qemu exited (%d) before %s existed; see qemu.log" % (self.proc.returncode, path))
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                s.settimeout(0.5)
                return s
            except OSError:
                s.close()
                if time.monotonic() - T0 > IDLE:
                    raise Failure("qemu never opened %s" % path)
                time.sleep(0.05)

    def progress(self):
        """Raise when the guest has shown no sign of life for IDLE s."""
        if self.proc.poll() is not None:
            raise Failure("qemu exited with %d; see serial.log" % self.proc.returncode)
        try:
            size = os.path.getsize(self.serial)
        except OSError:
            size = 0
        if size != self.last_size:
            self.last_size = size
            self.last_progress = time.monotonic()
        if time.monotonic() - self.last_progress > IDLE:
            raise Failure("no progress for %d s (console and command channel silent); see serial.log" % IDLE)

    def _qmp_line(self):
        while b"\n" not in self.qbuf:
            self.progress()
            try:
                data = self.qmp.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise Failure("QMP connection closed")
            self.qbuf += data
        line, self.qbuf = self.qbuf.split(b"\n", 1)
        return json.loads(line)

    def qmp_call(self, command, **args):
        msg = {"execute": command}
        if args:
            msg["arguments"] = args
        self.qmp.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self._qmp_line()
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise Failure("QMP %s %s: %s" % (command, args, reply["error"]))
            return reply.get("return")

    def device_add(self, driver, **props):
        log("device_add %s %s" % (driver, props))
        self.qmp_call("device_add", driver=driver, **props)

    def device_del(self, dev_id):
        log("device_del %s" % dev_id)
        self.qmp_call("device_del", id=dev_id)

    def wait_deleted(self, ids):
        """Until QEMU reported DEVICE_DELETED for every id (pciehp takes ~5 s)."""
        want = set(ids)
        while True:
            want -= {e["data"].get("device") for e in self.events if e.get("event") == "DEVICE_DELETED"}
            if not want:
                return
            self.qmp.sendall(b'{"execute": "query-status"}\n')
            while True:
                reply = self._qmp_line()
                if "event" in reply:
                    self.events.append(reply)
                    self.last_progress = time.monotonic()
                elif "return" in reply or "error" in reply:
                    break
            time.sleep(0.2)

    def _cmd_line(self):
        while b"\n" not in self.cbuf:
            self.progress()
            try:
                data = self.cmd.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise Failure("command channel closed")
            self.last_progress = time.monotonic()
            self.cbuf += data
        line, self.cbuf = self.cbuf.split(b"\n", 1)
        line = line.decode(errors="replace").strip("\r")
        self.transcript.write("< %s\n" % line)
        self.transcript.flush()
        return line

    def expect_ready(self):
        while True:
            line = self._cmd_line()
            if line.startswith("0 ready"):
                return line[len("0 ready"):].strip()
            if line.startswith("0 fatal"):
                raise Failure("guest: %s" % line)

    def command(self, *words):
        """Send one command; return its reply's text after "ID ok"."""
        cid = str(self.next_id)
        self.next_id += 1
        text = " ".join(words)
        self.transcript.write("> %s %s\n" % (cid, text))
        self.cmd.sendall(("%s %s\n" % (cid, text)).encode())
        t = time.monotonic()
        while True:
            line = self._cmd_line()
            if line.startswith("#") or not line:
                continue
            rid, _, rest = line.partition(" ")
            if rid == "0" and rest.startswith("fatal"):
                raise Failure("guest: %s" % rest)
            if rid != cid:
                continue
            status, _, detail = rest.partition(" ")
            if status != "ok":
                raise Failure("guest command %r failed: %s" % (text, detail))
            log("%s: ok %s(%.1f s)" % (text[:60], detail + " " if detail else "", time.monotonic() - t))
            return detail

    def wait_exit(self):
        while self.proc.poll() is None:
            self.progress()
            time.sleep(0.2)
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def mbr_image(path, mib):
    """A raw disk image with an MBR partition table of two Linux partitions."""
    sectors = mib * 2048
    mbr = bytearray(512)
    mbr[440:444] = struct.pack("<I", 0x48504456)
    parts = [(2048, 8192), (10240, sectors - 10240)]
    for i, (start, count) in enumerate(parts):
        mbr[446 + 16 * i:462 + 16 * i] = struct.pack("<B3sB3sII", 0, b"\xfe\xff\xff", 0x83, b"\xfe\xff\xff",
                                                     start, count)
    mbr[510:512] = b"\x55\xaa"
    with open(path, "wb") as f:
        f.write(mbr)
        f.truncate(sectors * 512)


def blank_image(path, mib):
    with open(path, "wb") as f:
        f.truncate(mib * 1024 * 1024)


def firmware_bytes():
    """3000 bytes, every byte value, not a text file: compared byte for byte."""
    x, out = 0x2545F491, bytearray()
    while len(out) < 3000:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        out.append((x >> 16) & 0xFF)
    return bytes(out)


def kernel():
    """(root, version) of the unpacked kernel; fetched if needed."""
    try:
        out = subprocess.run([os.path.join(HERE, "fetch-kernel")], capture_output=True, text=True)
    except OSError as e:
        skip("cannot run fetch-kernel: %s" % e)
    if out.returncode != 0:
        skip("no kernel for the VM (tests/vm/fetch-kernel failed: %s)" % out.stderr.strip().splitlines()[-1:])
    root = out.stdout.strip().splitlines()[-1]
    version = os.path.basename(root)[len("linux-image-"):]
    if not os.path.exists(os.path.join(root, "boot", "vmlinuz-" + version)):
        skip("fetch-kernel gave %s without boot/vmlinuz-%s" % (root, version))
    return root, version


def build_initramfs(run, root, version):
    env = os.environ
    fw = os.path.join(run, "fw")
    os.makedirs(fw)
    with open(os.path.join(fw, FW_SERVED), "wb") as f:
        f.write(firmware_bytes())
    out = os.path.join(run, "initramfs.cpio")
    argv = [sys.executable, os.path.join(HERE, "mkinitramfs"), "--kernel-root", root, "--version", version,
            "--out", out, "--init", os.path.join(HERE, "init")]
    for m in MODULES_HARNESS + MODULES_SCENARIO + MODULES_LATER:
        argv += ["--module", m]
    for b in ("HOTPLUGD", "HOTPLUGCTL", "AGENT_DUMP", "VM_CAPTURE", "VM_SNAPSHOT", "VM_SYSFS_WRITE"):
        src = env[b]
        name = {"AGENT_DUMP": "agent-dump"}.get(b, os.path.basename(src))
        argv += ["--bin", "%s:/usr/bin/%s" % (src, name)]
    argv += ["--file", "%s:/hp/fw/%s" % (os.path.join(fw, FW_SERVED), FW_SERVED)]
    subprocess.run(argv, check=True)
    return out


def qemu_argv(run, root, version, initrd):
    append = "console=ttyS0,115200 panic=-1 quiet mitigations=off"
    sanitize = os.environ.get("B_SANITIZE", "none")
    if sanitize not in ("", "none"):
        # The guest's hotplugd is the sanitized build: its reports end the
        # daemon (non-zero exit, which check.py fails on).
        append += " hp.asan=detect_leaks=1:halt_on_error=1:abort_on_error=0:log_path=/hp/res/asan"
        append += " hp.ubsan=halt_on_error=1:print_stacktrace=1:log_path=/hp/res/ubsan"
    return [
        "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", "1G", "-smp", "2",
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-kernel", os.path.join(root, "boot", "vmlinuz-" + version), "-initrd", initrd, "-append", append,
        "-chardev", "file,id=con,path=%s" % os.path.join(run, "serial.log"), "-serial", "chardev:con",
        "-chardev", "socket,id=cmd,path=%s,server=on,wait=off" % os.path.join(run, "cmd.sock"),
        "-serial", "chardev:cmd",
        "-qmp", "unix:%s,server=on,wait=off" % os.path.join(run, "qmp.sock"),
        "-device", "qemu-xhci,id=xhci,p2=8,p3=8,bus=pcie.0,addr=0x5",
        "-device", "pcie-root-port,id=rp1,chassis=1,slot=1,bus=pcie.0,addr=0x6",
        "-device", "pcie-root-port,id=rp2,chassis=2,slot=2,bus=pcie.0,addr=0x7",
        "-device", "virtio-scsi-pci,id=scsi0,bus=pcie.0,addr=0x8",
        "-fsdev", "local,id=out,path=%s,security_model=none" % os.path.join(run, "out"),
        "-device", "virtio-9p-pci,fsdev=out,mount_tag=out,bus=pcie.0,addr=0x9",
        "-drive", "if=none,id=stick,format=raw,file=%s" % os.path.join(run, "stick.img"),
        "-drive", "if=none,id=disk,format=raw,file=%s" % os.path.join(run, "disk.img"),
        "-netdev", "user,id=n1,restrict=on", "-netdev", "user,id=n2,restrict=on",
        "-netdev", "user,id=n3,restrict=on",
    ]


USB = "/sys/bus/usb/devices"
RP1 = "/sys/devices/pci0000:00/0000:00:06.0"
RP2 = "/sys/devices/pci0000:00/0000:00:07.0"
VSCSI = "/sys/devices/pci0000:00/0000:00:08.0"


def scenario(g):
    # a. drivers, loaded while the daemons listen
    g.command("modprobe", *MODULES_SCENARIO)
    g.command("wait", USB + "/usb1", USB + "/usb2")
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
    if os.geteuid() != 0:
        skip("not root (the VM suite needs the kernel cache and, in CI, apt)")
    if not shutil.which("qemu-system-x86_64"):
        skip("qemu-system-x86_64 not found (Debian package qemu-system-x86)")
    if not os.path.exists("/bin/busybox"):
        skip("/bin/busybox not found (Debian package busybox-static)")
    for var in ("HOTPLUGD", "HOTPLUGCTL", "AGENT_DUMP", "VM_CAPTURE", "VM_SNAPSHOT", "VM_SYSFS_WRITE"):
        if not os.environ.get(var):
            print("FAIL: %s not set (run through meson test)" % var)
            return 1
    root, version = kernel()
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
        fw = scenario(g)
        g.command("finish")
        rc = g.wait_exit()
        log("qemu exited with %d" % rc)
        with tarfile.open(os.path.join(run, "out", "results.tar")) as t:
            t.extractall(os.path.join(run, "results"))
        meta = {
            "agents": {"a": "/hp/a/agent", "b": "/hp/b/agent"},
            "firmware_loader": {"a": [FW_SERVED], "b": []},
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
    log("%s in %.0f s" % ("passed" if ok else "failed", time.monotonic() - T0))
    if ok and os.environ.get("HOTPLUGD_VM_KEEP") != "1":
        shutil.rmtree(run)
    else:
        print("run directory kept: %s" % run)
        for name in ("serial.log", "results/res/hotplugd-a.log", "results/res/hotplugd-b.log"):
            p = os.path.join(run, name)
            if not ok and os.path.exists(p):
                with open(p, errors="replace") as f:
                    tail = f.readlines()[-15:]
                print("---- last lines of %s" % name)
                sys.stdout.write("".join(tail))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
