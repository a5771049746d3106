#!/usr/bin/env python3
"""Coldplug time against udev on the same VM (issue 37, item 5).

    bench/boot.py [-r RUNS] BUILDDIR

Run as root.  Builds one disk image and boots it under QEMU (TCG) 2*RUNS
times (default 3 each), interleaved udev, hotplugd, udev, hotplugd... so
that the host's noise falls on both:

  image. tests/vm/systemd-boot's root file system, built by its own
     build_root() with --udev's choices (Debian bookworm, systemd as PID 1,
     Debian's udev package with its rules, this build installed and
     hotplugd.service, its sockets and hotplugd-coldplug.service enabled,
     no modalias script; udev's hardware database compiled, as its
     postinst does), then without the test's parts (its recording
     agents, its udev rule, its report units) and with load-modules = yes
     in hotplugd.conf: neither device manager runs an agent or a RUN
     program of the test's; each loads the modules in-process (udevd's kmod
     builtin, hotplugd's libkmod loader).  Plus this bench's unit
     (hotplugd-bootbench.service, bench/boot-guest.sh).  Each boot gets a
     fresh copy of the image.
  udev. The kernel's command line masks hotplugd's units
     (systemd.mask=): systemd-udevd, systemd-udev-trigger.service and
     Debian's rules bring the machine up.
  hotplugd. The command line masks udev's units: hotplugd.service and
     hotplugd-coldplug.service (trigger --settle, settle) bring it up.
  machine. systemd-boot's: q35, 2 CPUs, 1 GiB; an initramfs that loads
     only virtio_pci, virtio_blk and ext4; xHCI with a USB keyboard and a
     USB disk, virtio-net, e1000e, virtio-scsi with a disk.

Measured in the guest, on the kernel's clock (/proc/uptime at the moment a
settle returned, so the host's time does not count), with /proc/stat's
count of processes created since the kernel's start (kernel threads and
the initramfs's included: the same for both):
  settle   the coldplug settled: `udevadm settle` returned after
           systemd-udev-trigger.service finished, or
           hotplugd-coldplug.service finished and `hotplugctl settle`
           returned;
  all      every driver of the machine's devices loaded (xhci_pci, usbhid,
           usb_storage, sd_mod, virtio_net, e1000e, virtio_scsi: the USB
           and SCSI ones come once the controllers have scanned their
           ports, after the coldplug) and the queue settled again.
and, of those, the ones the device manager created: every fork is traced
(trace_event=sched:sched_process_fork on the kernel's command line; the
guest prints the trace) and counted when its parent is systemd-udevd's or
hotplugd's MainPID or one of its descendants (processes and threads alike,
as /proc/stat counts them; not the coldplug unit's own processes, udevadm
trigger or hotplugctl trigger and settle, two each).
Printed: each boot and the medians side by side, the modules loaded at
each mark, the host's load average before each boot and at the end.

Environment: HOTPLUGD_SDBOOT_IDLE (seconds of silence on both serial ports
before a boot counts as hung, default 120), KEEP=1 (keep the run
directory, /tmp/hotplugd-bootbench.*), HOTPLUGD_VM_CACHE (the kernel cache
of tests/vm/fetch-kernel).
"""
import getopt
import importlib.machinery
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VM = os.path.join(os.path.dirname(HERE), "tests", "vm")
sys.dont_write_bytecode = True
_loader = importlib.machinery.SourceFileLoader("sdboot", os.path.join(VM, "systemd-boot"))
_spec = importlib.util.spec_from_loader("sdboot", _loader)
sd = importlib.util.module_from_spec(_spec)
_loader.exec_module(sd)
log, run, Failure, Skip = sd.log, sd.run, sd.Failure, sd.Skip

HOTPLUGD_UNITS = ["hotplugd.service", "hotplugd.socket", "hotplugd-control.socket", "hotplugd-coldplug.service"]
MODES = {"udev": HOTPLUGD_UNITS, "hotplugd": sd.UDEV_UNITS}   # what each boot masks
FORK = re.compile(r"\s(\d+\.\d+): sched_process_fork: comm=.* pid=(\d+) child_comm=.* child_pid=(\d+)")
UNIT = """\
# bench/boot.py: the marks of the boot, once its coldplug is over.
[Unit]
Description=hotplugd boot bench: time and processes to the settled coldplug
DefaultDependencies=no
After=systemd-udev-trigger.service hotplugd-coldplug.service

[Service]
Type=simple
EnvironmentFile=/etc/default/hotplugd-bootbench
ExecStart=/usr/local/sbin/hotplugd-bootbench

[Install]
WantedBy=sysinit.target
"""


def build_root(tmp, kroot, version, builddir):
    """systemd-boot's --udev rootfs without the test's parts, with the bench's."""
    sd.UDEV = True
    root = sd.build_root(tmp, kroot, version, builddir)
    paths = sd.install_paths(builddir)
    # What udev's postinst (not run by unpack_deb()) does that its rules
    # use: the compiled hardware database.
    run(["chroot", root, "systemd-hwdb", "--usr", "update"], "systemd-hwdb --usr update in the rootfs")
    run(["systemctl", "--root=" + root, "disable", "hotplugd-vmtest.service", "hotplugd-vmtest-stop.service"],
        "systemctl --root disable the test's units")
    for f in ("etc/systemd/system/hotplugd-vmtest.service", "etc/systemd/system/hotplugd-vmtest-stop.service",
              "etc/udev/rules.d/99-hotplugd-vmtest.rules", "usr/local/sbin/hotplugd-vmtest",
              "usr/local/sbin/hotplugd-vmtest-stop", "usr/local/sbin/hotplugd-vmtest-udev",
              "usr/local/lib/hotplugd-test/vmtest.env"):
        os.unlink(os.path.join(root, f))
    hd = root + paths["hotplug_d"]
    for sub, f in (("default", "90-record.hotplug"), ("block", "50-block-record.hotplug")):
        os.unlink(os.path.join(hd, sub, f))
    agents = sorted(os.path.join(d, n) for d, _, names in os.walk(hd) for n in names)
    if agents:
        raise Failure("the image's hotplug.d still holds agents: %s" % agents)
    with open(root + paths["conf"], "a") as f:
        f.write("\n# bench/boot.py: the built-in loader, as on a machine without udev.\nload-modules = yes\n")
    sbin = os.path.join(root, "usr/local/sbin/hotplugd-bootbench")
    shutil.copy(os.path.join(HERE, "boot-guest.sh"), sbin)
    os.chmod(sbin, 0o755)
    with open(os.path.join(root, "etc/default/hotplugd-bootbench"), "w") as f:
        f.write("MODULES=\"%s\"\n" % " ".join(sd.MODULES_EXPECTED))
    with open(os.path.join(root, "etc/systemd/system/hotplugd-bootbench.service"), "w") as f:
        f.write(UNIT)
    run(["systemctl", "--root=" + root, "enable", "hotplugd-bootbench.service"], "systemctl --root enable")
    return root


def boot(tmp, n, mode, kroot, version, initrd, img):
    """One boot of a fresh copy of @img; the guest's "KEY VALUE" lines as a dict."""
    d = os.path.join(tmp, "%d-%s" % (n, mode))
    os.makedirs(d)
    copy = os.path.join(d, "root.img")
    run(["cp", "--sparse=always", img, copy], "copying the image")
    sd.mbr_image(os.path.join(d, "stick.img"), 16)
    sd.mbr_image(os.path.join(d, "stick2.img"), 16)
    sd.blank_image(os.path.join(d, "disk.img"), 8)
    append = " ".join(["bootbench=" + mode, "trace_event=sched:sched_process_fork"] +
                      ["systemd.mask=" + u for u in MODES[mode]])
    load = os.getloadavg()
    machine = sd.Machine(d, kroot, version, initrd, copy, append_extra=append)
    try:
        machine.wait_report("BENCH END")
        took = time.monotonic() - machine.started
    finally:
        machine.kill()
        machine.qmp.close()
    os.unlink(copy)
    res = {"load": load, "host": took, "units": {}, "status": [], "running": [], "fork": []}
    inside = False
    for line in machine.report_text().splitlines():
        if line.startswith("BENCH BEGIN"):
            inside = True
        elif line.startswith("BENCH END"):
            break
        elif inside:
            k, _, v = line.partition(" ")
            v = v.strip()
            if k == "unit":
                unit, _, kv = v.partition(" ")
                key, _, val = kv.partition("=")
                res["units"].setdefault(unit, {})[key] = val
            elif k in ("status", "running", "fork"):
                res[k].append(v)
            else:
                res[k] = v
    if res.get("mode") != mode:
        raise Failure("boot %d (%s): the guest says mode %r; report in %s" % (n, mode, res.get("mode"), d))
    for k in ("settle-status", "all-status"):
        if res.get(k) != "0":
            raise Failure("boot %d (%s): %s %s (the settle failed); report in %s" % (n, mode, k, res.get(k), d))
    if res.get("all-missing", "-") != "-":
        raise Failure("boot %d (%s): never loaded:%s" % (n, mode, res["all-missing"]))
    other = "hotplugd" if mode == "udev" else "systemd-udevd"
    if other in res["running"]:
        raise Failure("boot %d (%s): %s runs (it is masked)" % (n, mode, other))
    manager_forks(res, mode)
    return res


def manager_forks(res, mode):
    """The processes (and threads) the device manager and its children
    created, to each mark: from the guest's trace of every fork, the tree
    under the daemon's MainPID."""
    unit = "systemd-udevd.service" if mode == "udev" else "hotplugd.service"
    main = res["units"].get(unit, {}).get("MainPID", "0")
    tree, times = {main}, []
    for line in res["fork"]:
        m = FORK.search(line)
        if m and m.group(2) in tree:
            tree.add(m.group(3))
            times.append(float(m.group(1)))
    for mark in ("settle", "all"):
        res[mark + "-manager"] = (str(sum(1 for t in times if t <= num(res, mark + "-uptime")))
                                  if res["fork"] and main != "0" else "nan")


def num(res, key):
    return float(res[key])


def unit_s(res, unit, key):
    v = res["units"].get(unit, {}).get(key, "0")
    return int(v) / 1e6 if v.isdigit() and int(v) else None


def summary(results, runs):
    rows = [("settle-uptime", "settled coldplug (s)", "%.2f"),
            ("settle-processes", "processes created to it", "%d"),
            ("settle-manager", "  of them by the device manager", "%.0f"),
            ("settle-modules", "modules loaded then", "%d"),
            ("all-uptime", "every driver loaded, settled (s)", "%.2f"),
            ("all-processes", "processes created to it", "%d"),
            ("all-manager", "  of them by the device manager", "%.0f"),
            ("all-modules", "modules loaded then", "%d")]
    print("---- per boot (guest /proc/uptime from the kernel's start; /proc/stat processes)")
    head = "%-34s" % "" + "".join("%11s" % ("%s %d" % (m, i + 1)) for i in range(runs) for m in MODES)
    print(head + "   median udev  median hotplugd")
    med = {}
    for key, name, fmt in rows:
        line = "%-34s" % name
        for i in range(runs):
            for m in MODES:
                line += "%11s" % (fmt % num(results[m][i], key))
        for m in MODES:
            med[(m, key)] = statistics.median(num(r, key) for r in results[m])
            line += "%14s" % (fmt % med[(m, key)])
        print(line)
    # The device manager's start and its coldplug's end, systemd's clock.
    extra = [("device manager started (s)", {"udev": ("systemd-udevd.service", "ExecMainStartTimestampMonotonic"),
                                             "hotplugd": ("hotplugd.service", "ExecMainStartTimestampMonotonic")}),
             ("coldplug unit done (s)", {"udev": ("systemd-udev-trigger.service", "ActiveEnterTimestampMonotonic"),
                                         "hotplugd": ("hotplugd-coldplug.service", "ActiveEnterTimestampMonotonic")})]
    for name, which in extra:
        line = "%-34s" % name
        vals = {m: [] for m in MODES}
        for i in range(runs):
            for m in MODES:
                v = unit_s(results[m][i], *which[m])
                vals[m].append(v)
                line += "%11s" % ("-" if v is None else "%.2f" % v)
        for m in MODES:
            have = [v for v in vals[m] if v is not None]
            line += "%14s" % ("%.2f" % statistics.median(have) if have else "-")
        print(line)
    line = "%-34s" % "host load before the boot (1 min)"
    for i in range(runs):
        for m in MODES:
            line += "%11.2f" % results[m][i]["load"][0]
    print(line)
    line = "%-34s" % "host: qemu start to the report (s)"
    for i in range(runs):
        for m in MODES:
            line += "%11.1f" % results[m][i]["host"]
    print(line)
    print("---- medians: hotplugd / udev")
    for key, name in (("settle-uptime", "settled coldplug"), ("settle-processes", "processes to it"),
                      ("settle-manager", "  by the device manager"),
                      ("all-uptime", "every driver loaded, settled"), ("all-processes", "processes to it"),
                      ("all-manager", "  by the device manager")):
        u, h = med[("udev", key)], med[("hotplugd", key)]
        print("  %-32s udev %9.2f  hotplugd %9.2f  ratio %.2f" % (name, u, h, h / u if u else float("nan")))
    mods = {m: set(results[m][-1].get("loaded", "").split()) for m in MODES}
    print("---- modules loaded at the end of the last boot: udev %d, hotplugd %d"
          % (len(mods["udev"]), len(mods["hotplugd"])))
    print("  only with udev:     %s" % (" ".join(sorted(mods["udev"] - mods["hotplugd"])) or "-"))
    print("  only with hotplugd: %s" % (" ".join(sorted(mods["hotplugd"] - mods["udev"])) or "-"))
    st = [line for line in results["hotplugd"][-1]["status"] if "odule" in line or "oad" in line]
    if st:
        print("---- hotplugctl status, last hotplugd boot (module lines)")
        for line in st:
            print("  " + line)


def main():
    try:
        opts, args = getopt.getopt(sys.argv[1:], "r:")
    except getopt.GetoptError as e:
        print("%s\n%s" % (e, __doc__.split("\n\n")[1]))
        return 2
    runs = 3
    for o, v in opts:
        if o == "-r":
            runs = int(v)
    if len(args) != 1 or runs < 1:
        print(__doc__.split("\n\n")[1])
        return 2
    builddir = os.path.abspath(args[0])
    keep = os.environ.get("KEEP") == "1"
    tmp = None
    ok = False
    try:
        if os.geteuid() != 0:
            raise Skip("not root")
        for tool in ("qemu-system-x86_64", "mkfs.ext4", "meson", "systemctl", "chroot", "ldconfig", "dpkg-deb"):
            if not shutil.which(tool):
                raise Skip("%s not found" % tool)
        if not os.path.exists(os.path.join(builddir, "build.ninja")):
            raise Failure("%s is not a meson build directory" % builddir)
        tmp = tempfile.mkdtemp(prefix="hotplugd-bootbench.")
        log("run directory %s" % tmp)
        fk = subprocess.run([os.path.join(VM, "fetch-kernel")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
        if fk.returncode != 0:
            raise Skip("tests/vm/fetch-kernel failed: %s" % fk.stderr.strip()[-300:])
        kroot = fk.stdout.strip().splitlines()[-1]
        version = os.path.basename(kroot)[len("linux-image-"):]
        root = build_root(tmp, kroot, version, builddir)
        img, size = sd.make_image(tmp, root)
        shutil.rmtree(root)
        initrd = sd.initramfs(tmp, kroot, version)
        cpu = "?"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        print("host: %d CPUs (%s), %d MiB, kernel %s; guest: kernel %s, q35 TCG, 2 vCPUs, 1 GiB, image %d MiB"
              % (os.cpu_count(), cpu, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20,
                 os.uname().release, version, size), flush=True)
        results = {m: [] for m in MODES}
        n = 0
        for i in range(runs):
            for m in MODES:
                n += 1
                r = boot(tmp, n, m, kroot, version, initrd, img)
                results[m].append(r)
                log("boot %d %-8s settled %6.2f s, %5s processes (%s by the manager); every driver %6.2f s, "
                    "%5s processes (%s); host load %.2f"
                    % (n, m, num(r, "settle-uptime"), r["settle-processes"], r["settle-manager"],
                       num(r, "all-uptime"), r["all-processes"], r["all-manager"], r["load"][0]))
        summary(results, runs)
        print("host load at the end: %.2f %.2f %.2f" % os.getloadavg())
        ok = True
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except Failure as e:
        print("FAIL: %s" % e)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as e:
        print("FAIL: %s: %s" % (type(e).__name__, e))
    if tmp:
        if ok and not keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("run directory kept: %s" % tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
