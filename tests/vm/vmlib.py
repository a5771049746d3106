"""Host-side helpers of the VM suite (tests/vm/run-vm.py, tests/vm/autoload.py).

The guest's command channel and QMP (Guest), the disk images, the kernel
(tests/vm/fetch-kernel), QEMU's common arguments and the run directory's
fate.  Every wait is progress-based: it gives up only when neither the
guest's console nor its command channel produced anything for IDLE
seconds.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import time

IDLE = 180  # seconds without any sign of life from the guest
SRCDIR = os.environ.get("SRCDIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HERE = os.path.join(SRCDIR, "tests", "vm")
REQUIRE = os.environ.get("HOTPLUGD_TEST_REQUIRE_ROOT") == "1"
T0 = time.monotonic()



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
            shown = detail if len(detail) <= 100 else "(%d bytes) " % len(detail)
            log("%s: ok %s(%.1f s)" % (text[:60], shown + " " if shown else "", time.monotonic() - t))
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




def preflight(binaries):
    """Skip without root, QEMU or busybox; fail without the build's @binaries
    (environment variables naming them). Returns (root, version) of the kernel."""
    if os.geteuid() != 0:
        skip("not root (the VM suite needs the kernel cache and, in CI, apt)")
    if not shutil.which("qemu-system-x86_64"):
        skip("qemu-system-x86_64 not found (Debian package qemu-system-x86)")
    if not os.path.exists("/bin/busybox"):
        skip("/bin/busybox not found (Debian package busybox-static)")
    for var in binaries:
        if not os.environ.get(var):
            print("FAIL: %s not set (run through meson test)" % var)
            sys.exit(1)
    return kernel()


def qemu_base(run, root, version, initrd):
    """QEMU's arguments every VM test shares: q35 under TCG, 1 GiB, 2 CPUs,
    nothing but what the test adds; the console (ttyS0) into serial.log,
    the command channel (ttyS1) on cmd.sock, QMP on qmp.sock.  With a
    sanitized build, the guest's hotplugd gets ASAN_OPTIONS/UBSAN_OPTIONS
    from the kernel command line (hp.asan=, hp.ubsan=): its reports end the
    daemon with a non-zero exit, logs in /hp/res.  no_timer_check: the
    kernel's check of the emulated IO-APIC timer fails now and then when
    the emulated CPU is slow (a loaded host, no KVM) and panics the guest
    ("IO-APIC + timer doesn't work!", 5 of 50 boots under load, 0 of 64
    with it)."""
    append = "console=ttyS0,115200 panic=-1 quiet mitigations=off no_timer_check"
    sanitize = os.environ.get("B_SANITIZE", "none")
    if sanitize not in ("", "none"):
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
    ]


# The controllers both VM tests have, at fixed PCI addresses: xHCI (ports
# 1-8 of each speed; port N is device B-N, B the USB 2 or 3 root hub),
# two PCIe root ports (native hot-plug), virtio-scsi; and their sysfs paths.
CONTROLLERS = [
        "-device", "qemu-xhci,id=xhci,p2=8,p3=8,bus=pcie.0,addr=0x5",
        "-device", "pcie-root-port,id=rp1,chassis=1,slot=1,bus=pcie.0,addr=0x6",
        "-device", "pcie-root-port,id=rp2,chassis=2,slot=2,bus=pcie.0,addr=0x7",
        "-device", "virtio-scsi-pci,id=scsi0,bus=pcie.0,addr=0x8",
]
USB = "/sys/bus/usb/devices"
RP1 = "/sys/devices/pci0000:00/0000:00:06.0"
RP2 = "/sys/devices/pci0000:00/0000:00:07.0"
VSCSI = "/sys/devices/pci0000:00/0000:00:08.0"
HDA = "/sys/devices/pci0000:00/0000:00:0a.0"  # vm-drivers' sound card (run-vm.py)


def finish_run(run, ok, logs):
    """Remove the run directory of a passed test (unless HOTPLUGD_VM_KEEP=1);
    otherwise keep it, say where, and show the tails of @logs (paths in it)."""
    log("%s in %.0f s" % ("passed" if ok else "failed", time.monotonic() - T0))
    if ok and os.environ.get("HOTPLUGD_VM_KEEP") != "1":
        shutil.rmtree(run)
        return
    print("run directory kept: %s" % run)
    for name in logs:
        p = os.path.join(run, name)
        if not ok and os.path.exists(p):
            with open(p, errors="replace") as f:
                tail = f.readlines()[-15:]
            print("---- last lines of %s" % name)
            sys.stdout.write("".join(tail))
