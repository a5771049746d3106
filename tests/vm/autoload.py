#!/usr/bin/env python3
"""The VM suite's module autoload test (test vm-autoload, issue 23 part 3).

hotplugd as the device manager of a machine without udev: Debian's kernel
(tests/vm/fetch-kernel) boots under QEMU (TCG) with an initramfs of
busybox (tests/vm/mkinitramfs, guest side tests/vm/init-autoload) in which
no module is loaded and the init loads none: its console and command
channel are the serial ports (8250, built in) and the results come back
over the command channel, so even virtio_pci is hotplugd's to load.  The
initramfs holds the modules below (and what they depend on) with their
lines of modules.dep and modules.alias (busybox depmod); /sbin/modprobe is
busybox's.  The hardware is there from the start: qemu-xhci with a usb-kbd
and a usb-storage (an MBR disk, two partitions), a virtio-net-pci and an
e1000e on PCIe root ports, a virtio-scsi-pci with a scsi-hd.

The guest starts one hotplugd with --hotplug-d, whose default/ holds the
build's config/modalias.hotplug (10-modalias.hotplug) and
tests/vm/record.hotplug (20-record.hotplug: one line per event), then
runs `hotplugctl trigger --settle` and `hotplugctl settle`.  Asserted:
  - no module loaded at boot;
  - after the coldplug: the PCI devices' drivers (MODULES_COLDPLUG);
  - once the devices behind the controllers are present and the event
    stream went quiet: every module of MODULES_QUIET, the keyboard's
    input device (and its event device), the USB disk and its two
    partitions, the SCSI disk, both NICs;
  - a usb-storage and a usb-net hot-plugged over QMP: their devices come
    and cdc_ether is loaded;
  - every agent run exited 0 (hotplugd's log: status=exit 0), and hotplugd
    exited 0 after SIGTERM;
  - the wall clock set an hour back and two forward mid-burst under a
    second hotplugd (check_clock(), issue 40 item 3): no timeout, every
    event's agent ran once, each run about its 1 s in the agent's clock
    and the recording's, the timeline spans seconds.
  - then the machine brought up again from no module loaded, first by
    the modalias script, then by the built-in loader (load-modules=yes,
    no script) (run_phases(), compare_phases(), issue 37 item 1): every
    module the script loaded is loaded by the built-in loader too, with
    no modprobe process of hotplugd's and no load failed or timed out,
    and each add's agent ran after its modules were tried; printed for
    each: modules loaded, modprobe processes, aliases seen against loads
    issued, and the times to the settled coldplug and to every device.
Printed: the times from hotplugd's start (guest CLOCK_MONOTONIC) to its
socket answering, to the settled coldplug, to the devices behind the
controllers, and from the first device_add to the hot-plugged devices;
the modprobe runs (adds with MODALIAS: the modalias script runs modprobe
for each, and hotplugd logs each run's duration); for each module loaded,
the first run whose MODALIAS matches one of its aliases (or of a module
that needs it) and when that event's record ran; the kernel's own module
requests (/proc/sys/kernel/modprobe is tests/vm/modprobe-log).

Environment (tests/vm/meson.build): HOTPLUGD, HOTPLUGCTL, VM_CLOCK,
MODALIAS_HOTPLUG, SRCDIR, B_SANITIZE; HOTPLUGD_VM_CACHE, HOTPLUGD_VM_KEEP
as for run-vm.py.  Exit status: 0 passed, 1 failed, 77 skipped.
"""
import base64
import fnmatch
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for vmlib
from vmlib import (  # noqa: E402
                   CONTROLLERS, HERE, RP1, RP2, USB, VSCSI, Failure, Guest, blank_image, finish_run, log, mbr_image,
                   preflight, qemu_base)

BINARIES = ("HOTPLUGD", "HOTPLUGCTL", "VM_CLOCK", "MODALIAS_HOTPLUG")
# compare_phases(): the modalias script, then the built-in loader.
PHASES = ("script", "builtin")
# Loaded once the coldplug settled: the drivers of the PCI devices.
MODULES_COLDPLUG = ["xhci_pci", "xhci_hcd", "virtio_pci", "virtio_net", "e1000e", "virtio_scsi"]
# ... and once the devices behind the controllers came and all went quiet.
MODULES_QUIET = MODULES_COLDPLUG + ["usbhid", "hid_generic", "evdev", "usb_storage", "sd_mod"]
# ... and after the hot-plug of a usb-net.
MODULES_PLUG = MODULES_QUIET + ["cdc_ether"]
# What the initramfs holds (with their dependencies): the modules asked
# for; any other MODALIAS of the machine (q35's LPC, SMBus, AHCI...) finds
# no module, which the modalias script does not count as an error.
MODULES_AVAILABLE = MODULES_PLUG

# xHCI port N is device B-N (B: the USB 2 or 3 root hub, as the device's speed says).
DEVICES_COLD = [
    USB + "/*-1:1.0/0003:*/input/input*/event*",          # keyboard (usbhid, hid_generic, evdev)
    USB + "/*-2:1.0/host*/target*/*/block/sd*/sd*1",     # USB disk, partition 1
    USB + "/*-2:1.0/host*/target*/*/block/sd*/sd*2",     # ... and 2
    VSCSI + "/virtio*/host*/target*/*/block/sd*",        # SCSI disk
    RP1 + "/0000:*:00.0/virtio*/net/*",                  # virtio NIC
    RP2 + "/0000:*:00.0/net/*",                          # e1000e
]
DEVICES_PLUG = [
    USB + "/*-3:1.0/host*/target*/*/block/sd*/sd*2",     # second USB disk
    USB + "/*-4:*/net/*",                                # usb-net (cdc_ether)
]


def build_initramfs(run, root, version):
    env = os.environ
    out = os.path.join(run, "initramfs.cpio")
    argv = [sys.executable, os.path.join(HERE, "mkinitramfs"), "--kernel-root", root, "--version", version,
            "--out", out, "--init", os.path.join(HERE, "init-autoload")]
    for m in MODULES_AVAILABLE:
        argv += ["--module", m]
    argv += ["--kmod-indexes"]  # libkmod's, for the built-in loader (compare_phases())
    for b in ("HOTPLUGD", "HOTPLUGCTL", "VM_CLOCK"):
        argv += ["--bin", "%s:/usr/bin/%s" % (env[b], os.path.basename(env[b]))]
    # The scripts go in as --bin, mode 0755: the build's modalias.hotplug is
    # not executable before `meson install` (hotplugd skips such a script).
    argv += ["--file", "%s:/lib/vm-init.sh" % os.path.join(HERE, "init-lib.sh"),
             "--bin", "%s:/usr/lib/hotplugd/modalias.hotplug" % env["MODALIAS_HOTPLUG"],
             "--bin", "%s:/usr/lib/hotplugd/record.hotplug" % os.path.join(HERE, "record.hotplug"),
             "--bin", "%s:/usr/lib/hotplugd/modprobe-log" % os.path.join(HERE, "modprobe-log")]
    subprocess.run(argv, check=True)
    return out


def qemu_argv(run, root, version, initrd):
    return qemu_base(run, root, version, initrd) + CONTROLLERS + [
        "-drive", "if=none,id=stick,format=raw,file=%s" % os.path.join(run, "stick.img"),
        "-drive", "if=none,id=stick2,format=raw,file=%s" % os.path.join(run, "stick2.img"),
        "-drive", "if=none,id=disk,format=raw,file=%s" % os.path.join(run, "disk.img"),
        "-netdev", "user,id=n1,restrict=on", "-netdev", "user,id=n2,restrict=on",
        "-netdev", "user,id=n3,restrict=on",
        "-device", "usb-kbd,id=kbd,bus=xhci.0,port=1",
        "-device", "usb-storage,id=stick,bus=xhci.0,port=2,drive=stick",
        "-device", "virtio-net-pci,id=nic1,bus=rp1,netdev=n1,romfile=",
        "-device", "e1000e,id=nic2,bus=rp2,netdev=n2,romfile=",
        "-device", "scsi-hd,id=sdisk,bus=scsi0.0,drive=disk",
    ]


class Check:
    def __init__(self):
        self.failures = []

    def that(self, cond, msg):
        if not cond:
            self.failures.append(msg)
            print("FAIL: %s" % msg)

    def modules(self, have, want, when):
        missing = [m for m in want if m not in have]
        self.that(not missing, "%s: not loaded: %s (loaded: %s)" % (when, " ".join(missing), " ".join(sorted(have))))


def scenario(g, c, times):
    # After the coldplug (the ready line).
    c.modules(times["modules"], MODULES_COLDPLUG, "after trigger --settle and settle")
    later = [m for m in MODULES_QUIET if m not in times["modules"]]
    log("loaded after the coldplug: %s; still to come: %s" % (" ".join(times["modules"]), " ".join(later)))

    # The devices behind the controllers: USB ports and SCSI targets are
    # scanned in the background, after the settle.
    times["devices"] = float(g.command("wait", *DEVICES_COLD).split()[-1])
    g.command("settle")
    c.modules(g.command("modules").split(), MODULES_QUIET, "event stream quiet")
    g.command("wait", *DEVICES_COLD)  # still there
    # hotplugctl info of the usb-storage disk (the usb one of /sys/block/sd*),
    # into res/info-stick.txt: results() prints it and checks its add.
    g.command("sh", "for b in /sys/block/sd*; do case $(readlink -f $b) in */usb*) "
              "hotplugctl info --socket=/run/hp.sock $b >>/hp/res/info-stick.txt 2>&1 || "
              "echo \"hotplugctl info $b: exit $?\" >>/hp/res/info-stick.txt ;; esac; done")
    times["input"] = g.command("sh", "ls /sys/class/input").split()

    # Hot-plug: hotplugd's add events load what they need.
    times["plug_start"] = float(g.command("sh", "vm-clock"))
    g.device_add("usb-storage", id="stick2", bus="xhci.0", port="3", drive="stick2")
    g.device_add("usb-net", id="unet", bus="xhci.0", port="4", netdev="n3")
    times["plug_devices"] = float(g.command("wait", *DEVICES_PLUG).split()[-1])
    g.command("settle")
    c.modules(g.command("modules").split(), MODULES_PLUG, "after the hot-plug")
    times["block"] = g.command("sh", "ls /sys/block").split()
    times["net"] = g.command("sh", "ls /sys/class/net").split()

    # The wall clock moved mid-burst (tests/vm/init-autoload cmd_clock_jump).
    times["clock"] = g.command("clock-jump").split()


def parse_ready(line):
    words = line.split()
    times = {"kernel": words[0]}
    for w in words[1:]:
        k, _, v = w.partition("=")
        times[k] = v.split(",") if k == "modules" else float(v)
    if times["modules"] == [""]:
        times["modules"] = []
    return times


def results(run, c, times, modinfo, phases):
    res = os.path.join(run, "results", "res")

    def read(name):
        with open(os.path.join(res, name), errors="replace") as f:
            return f.read()

    # The lines of the main run (before the first phase of compare_phases()).
    events_main = read("events.log").splitlines()[:phases["script"]["events"]]
    kernel_main = read("modprobe.log").splitlines()[:phases["script"]["kernel"]]

    t0 = times["start"]
    c.that(read("modules-boot.txt").split() == [], "modules loaded at boot: %s" % read("modules-boot.txt").split())
    # hotplugctl info of the usb-storage disk after the coldplug: its add, done.
    info = read("info-stick.txt") if os.path.exists(os.path.join(res, "info-stick.txt")) else ""
    log("hotplugctl info of the usb-storage disk:\n" + info.rstrip())
    c.that(re.search(r"^Device: +/devices/\S+/usb\S+/block/sd[a-z]+$", info, re.M) is not None,
           "hotplugctl info names no usb-storage disk")
    c.that(re.search(r"^  SEQNUM \d+ add at .*: done$", info, re.M) is not None,
           "hotplugctl info of the usb-storage disk does not name its add")
    rc = read("exit-hotplugd").strip()
    c.that(rc == "0", "hotplugd exited with %s after SIGTERM, not 0" % rc)
    rcs = read("exit-phases").split()
    c.that(rcs == ["0", "0"], "hotplugd exited with %s after SIGTERM before the phases, not 0" % rcs)
    # load-modules = auto is off beside the modalias script.
    c.that("load-modules: auto: off, the modalias script is installed" in read("hotplugd.log"),
           "hotplugd with 10-modalias.hotplug did not leave load-modules off")
    for san in ("asan", "ubsan"):
        for name in os.listdir(res):
            if name.startswith(san + "."):
                c.that(False, "%s report %s: %s" % (san, name, read(name)[:2000]))

    # Every agent run exited 0.
    runs = {}
    modalias_ms = {}
    for line in read("hotplugd.log").splitlines():
        if " finished status=" not in line:  # agent runs, not "the last window finished N events"
            continue
        m = re.search(r" status=(.*?)(?: duration=([0-9.]+)ms)?$", line)
        status = m.group(1) if m else "?"
        prog = "modalias" if "10-modalias" in line else "record" if "20-record" in line else "other"
        runs[(prog, status)] = runs.get((prog, status), 0) + 1
        c.that(status == "exit 0", "agent run not exit 0: %s" % line)
        seq = re.search(r"SEQNUM=(\d+)", line)
        if prog == "modalias" and m and m.group(2) and seq:
            modalias_ms[int(seq.group(1))] = float(m.group(2))
    log("agent runs: %s" % ", ".join("%s %s: %d" % (p, s, n) for (p, s), n in sorted(runs.items())))
    c.that(runs.get(("modalias", "exit 0"), 0) > 0, "no run of 10-modalias.hotplug in hotplugd's log")
    c.that(runs.get(("modalias", "exit 0"), 0) == runs.get(("record", "exit 0"), 0),
           "10-modalias.hotplug and 20-record.hotplug ran for different numbers of events")

    # The events and the modprobe runs: the modalias script runs modprobe
    # once for each add with MODALIAS, as 10-modalias.hotplug, whose
    # duration hotplugd logs.
    events = []
    for line in events_main:
        w = line.split()
        c.that(len(w) == 7, "events.log: not 7 fields: %r" % line)
        if len(w) == 7:
            events.append({"t": float(w[0]) - t0, "seq": int(w[1]), "action": w[2], "subsystem": w[3],
                           "devpath": w[4], "modalias": w[5], "driver": w[6]})
    c.that(len({e["seq"] for e in events}) == len(events), "an event recorded twice")
    probes = sorted((e for e in events if e["action"] == "add" and e["modalias"] != "-"), key=lambda e: e["t"])
    for e in probes:
        e["ms"] = modalias_ms.get(e["seq"], 0.0)
    cold, quiet = times["coldplug"] - t0, times["quiet_t"]
    log("events recorded: %d; modprobe runs (adds with MODALIAS): %d (%d by the settled coldplug, "
        "%d by the quiet stream, %d for the hot-plug), %.1f s in all" % (
            len(events), len(probes), sum(1 for e in probes if e["t"] <= cold),
            sum(1 for e in probes if e["t"] <= quiet), sum(1 for e in probes if e["t"] > quiet),
            sum(e["ms"] for e in probes) / 1000))

    # Module load times: a module is loaded, with what it depends on, by
    # the first modprobe run whose MODALIAS matches one of its aliases (the
    # kernel root's modules.alias, as busybox modprobe matches them), by
    # the time that event's record ran.
    kernel_asks = []
    for line in kernel_main:
        w = line.split()
        kernel_asks.append({"t1": float(w[0]) - t0, "t2": float(w[1]) - t0, "rc": int(w[2]), "what": w[-1]})
    loaded = [e["devpath"][len("/module/"):] for e in events if e["action"] == "add" and e["subsystem"] == "module"]
    loads = []
    for name in loaded:
        by = [e for e in probes if any(fnmatch.fnmatchcase(e["modalias"].replace("-", "_"), a)
                                       for m in modinfo.users(name) for a in modinfo.aliases.get(m, ()))]
        if by:
            loads.append((by[0]["t"], name, "modprobe %s (%.0f ms)" % (by[0]["modalias"][:60], by[0]["ms"])))
        else:
            loads.append((None, name, "not by an alias (a kernel request?)"))
    log("modules loaded (by then, s after hotplugd's start; the modprobe run):\n    %s" % "\n    ".join(
        ("%6.2f" % t if t is not None else "     ?") + " %-22s %s" % (n, how) for t, n, how in
        sorted(loads, key=lambda x: (x[0] is None, x[0] or 0))))
    log("the kernel's own module requests: %s" % (", ".join(
        "%.2f %s (%s)" % (k["t1"], k["what"], "loaded" if k["rc"] == 0 else "none") for k in kernel_asks) or "none"))


def check_clock(c, res, reply):
    """The clock-jump phase (issue 40 item 3): the wall clock went an hour
    back and two forward while a second hotplugd (--timeout=10) ran a 1 s
    agent for a burst of mem "change" events.  Its timers and its
    recording are CLOCK_MONOTONIC: no timeout, every event's agent ran
    once, each run about a second in the agent's own clock and in the
    recording's, the timeline spans the burst and not an hour.  A
    CLOCK_REALTIME timer armed before the forward jump would fire at once
    (the net jump, an hour, is past any timeout): the runs in flight then
    would time out.  The bound on a run, under the 10 s timeout, leaves a
    loaded TCG guest room; an hour in a duration would show."""
    def read(name):
        with open(os.path.join(res, name), errors="replace") as f:
            return f.read()

    s0, s1, writes = (int(x) for x in reply)
    wall = [int(x) for x in read("clock-wall.txt").split()]
    log("clock-jump: wall clock (date +%%s) %s; SEQNUM %d-%d, %d writes" % (
        " -> ".join(str(w) for w in wall), s0 + 1, s1, writes))
    c.that(len(wall) == 4 and wall[1] - wall[0] < -3000 and wall[2] - wall[1] > 6000 and
           abs(wall[3] - wall[0]) < 600, "clock-jump: the wall clock did not move as asked: %s" % wall)
    rc = read("clock-exit").strip()
    c.that(rc == "0", "clock-jump: hotplugd exited with %s after SIGTERM, not 0" % rc)
    daemon_log = read("clock-hotplugd.log").splitlines()
    said = [line for line in daemon_log if not re.search(r"\bstarted\b| finished ", line)]
    log("clock-jump: hotplugd said (besides its runs):\n    %s" % "\n    ".join(said or ["nothing"]))

    status = json.loads(read("clock-status.txt"))
    log("clock-jump: status: started %s finished %s failed %s timeouts %s gaps %s missing %s" % tuple(
        status.get(k) for k in ("started", "finished", "failed", "timeouts", "gaps", "missing")))
    c.that(status.get("timeouts") == 0, "clock-jump: %s timeout(s)" % status.get("timeouts"))
    c.that(status.get("failed") == 0, "clock-jump: %s failed run(s)" % status.get("failed"))
    c.that(status.get("gaps") == 0 and status.get("missing") == 0, "clock-jump: lost events: %s gaps, %s missing" % (
        status.get("gaps"), status.get("missing")))

    # The agent's own lines: one start and one end for each event.
    runs = {}
    for line in read("clock-runs.log").splitlines():
        w = line.split()
        runs.setdefault(int(w[1]), []).append((w[0], w[2], float(w[4])))
    mine = {q: r for q, r in runs.items() if r[0][1] == "change"}
    c.that(len(mine) == writes, "clock-jump: %d events ran the agent, %d written" % (len(mine), writes))
    for q, r in sorted(runs.items()):
        c.that(s0 < q <= s1, "clock-jump: a run for SEQNUM %d, outside %d-%d" % (q, s0 + 1, s1))
        c.that([x[0] for x in r] == ["start", "end"], "clock-jump: SEQNUM %d ran %s" % (q, [x[0] for x in r]))
        if len(r) == 2:
            c.that(0.9 <= r[1][2] - r[0][2] < 10, "clock-jump: SEQNUM %d's agent took %.3f s" % (
                q, r[1][2] - r[0][2]))

    # The recording: one run per event, each about the sleep, and a span of
    # the burst (CLOCK_MONOTONIC; an hour in it would show).
    text = read("clock-timeline.txt").splitlines()
    head = re.match(r"(\d+) agent run\(s\), (\d+) event\(s\), .* span ([0-9.]+) ms", text[0] if text else "")
    c.that(head is not None, "clock-jump: timeline did not render: %s" % text[:3])
    if not head:
        return
    n_runs, n_events, span = int(head.group(1)), int(head.group(2)), float(head.group(3))
    durations = []
    for line in text:
        # START ms, END ms, SEQNUM, wall-clock start, ACTION, STATUS, ...
        m = re.match(r"\s*([0-9.]+)\s+([0-9.]+)\s+\d+\s+\S+\s+(\S+)\s+(\S+ \S+)", line)
        if m and m.group(3) == "change":
            start, end = float(m.group(1)), float(m.group(2))
            c.that(0 <= start <= end <= span, "clock-jump: timeline run out of order: %s" % line)
            c.that(m.group(4) == "exit 0", "clock-jump: recorded run not exit 0: %s" % line)
            durations.append(end - start)
            c.that(900 <= end - start < 10000, "clock-jump: recorded run of %.3f ms: %s" % (end - start, line))
    log("clock-jump: recording: %d runs, %d events, span %.1f s; runs %.0f-%.0f ms" % (
        n_runs, n_events, span / 1000, min(durations or [0]), max(durations or [0])))
    c.that(n_runs == n_events == len(durations) == writes,
           "clock-jump: the recording has %d runs, %d events, %d change runs listed; %d written" % (
               n_runs, n_events, len(durations), writes))
    c.that(span < 600000, "clock-jump: the timeline spans %.0f s" % (span / 1000))


def run_phases(g):
    """The machine brought up once more from no module loaded, by the
    modalias script and then by the built-in loader (tests/vm/init-autoload
    cmd_phase): each time until every device of DEVICES_COLD and
    DEVICES_PLUG is there and the stream is quiet; the modules loaded then
    and hotplugd's status."""
    phases = {}
    for mode in PHASES:
        p = {k: float(v) for k, v in (w.split("=", 1) for w in g.command("phase", mode).split())}
        p["events"], p["kernel"] = int(p["events"]), int(p["kernel"])
        p["devices"] = float(g.command("wait", *(DEVICES_COLD + DEVICES_PLUG)).split()[-1])
        g.command("settle")
        p["modules"] = g.command("modules").split()
        p["status"] = json.loads(g.command("status"))
        p["blame"] = json.loads(g.command("blame"))
        phases[mode] = p
    return phases


def find_key(obj, key):
    """The value of @key anywhere in a JSON document, or None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            r = find_key(v, key)
            if r is not None:
                return r
    return None


def compare_phases(run, c, phases):
    """The script against load-modules=yes on the same machine (issue 37
    item 1): every module the script loaded is loaded by the built-in
    loader too, with no modalias script run (no modprobe process of
    hotplugd's) and no load failed or timed out; each add with a MODALIAS
    had its modules tried, and its agent ran after that.  Printed: modules
    loaded, modprobe processes (the script's, and the kernel's own
    requests), aliases seen against lookups and loads issued, and the times
    from hotplugd's start to the settled coldplug and to every device."""
    res = os.path.join(run, "results", "res")

    def read(name):
        with open(os.path.join(res, name), errors="replace") as f:
            return f.read()

    events = read("events.log").splitlines()
    kernel = read("modprobe.log").splitlines() if os.path.exists(os.path.join(res, "modprobe.log")) else []
    bounds = {"script": ("script", "builtin"), "builtin": ("builtin", None)}
    rows = {}
    for mode in PHASES:
        p = phases[mode]
        lo, hi = bounds[mode]
        hi_e = phases[hi]["events"] if hi else len(events)
        hi_k = phases[hi]["kernel"] if hi else len(kernel)
        adds = [w for w in (line.split() for line in events[phases[lo]["events"]:hi_e])
                if len(w) == 7 and w[2] == "add" and w[5] != "-"]
        log_lines = read("hotplugd-%s.log" % mode).splitlines()
        # The script runs modprobe for an add with MODALIAS, and for nothing else.
        probed = {w[1] for w in adds}
        script_runs = sum(1 for line in log_lines if " finished status=" in line and "10-modalias" in line and
                          re.search(r"SEQNUM=(\d+)", line) and re.search(r"SEQNUM=(\d+)", line).group(1) in probed)
        rows[mode] = {"adds": adds, "log": log_lines, "script_runs": script_runs,
                      "kernel": len(kernel[phases[lo]["kernel"]:hi_k])}
        for k in ("kmod_aliases", "kmod_lookups", "kmod_not_found", "kmod_loads", "kmod_saved", "kmod_loaded",
                  "kmod_failed", "kmod_timeouts", "kmod_invalid", "kmod_skipped"):
            rows[mode][k] = find_key(p["status"], k) or 0
    script, builtin = phases["script"], phases["builtin"]
    rs, rb = rows["script"], rows["builtin"]
    c.that(rs["script_runs"] == len(rs["adds"]) > 0,
           "phase script: %d modalias runs for %d adds with MODALIAS" % (rs["script_runs"], len(rs["adds"])))
    missing = sorted(set(script["modules"]) - set(builtin["modules"]))
    c.that(not missing, "load-modules=yes did not load what the script loaded: %s" % " ".join(missing))
    c.that(rb["script_runs"] == 0, "phase builtin: %d modalias script runs" % rb["script_runs"])
    c.that(rb["kmod_aliases"] == len(rb["adds"]),
           "phase builtin: %d aliases seen, %d adds with MODALIAS" % (rb["kmod_aliases"], len(rb["adds"])))
    c.that(rb["kmod_loads"] > 0 and rb["kmod_failed"] == 0 and rb["kmod_timeouts"] == 0 and rb["kmod_invalid"] == 0,
           "phase builtin: status says %s" % {k: v for k, v in rb.items() if k.startswith("kmod_")})
    # Each add's modules were tried before its agent (20-record.hotplug) ran.
    tried, ran = {}, {}
    for i, line in enumerate(rb["log"]):
        seq = re.search(r"SEQNUM=(\d+)", line)
        if not seq:
            continue
        if " tried" in line and "modules of MODALIAS=" in line:
            tried.setdefault(int(seq.group(1)), i)
        elif " finished status=" in line and "20-record" in line:
            ran.setdefault(int(seq.group(1)), i)
    for w in rb["adds"]:
        q = int(w[1])
        c.that(q in tried and q in ran and tried[q] < ran[q],
               "phase builtin: SEQNUM %d (%s): modules tried at log line %s, agent done at %s" % (
                   q, w[4], tried.get(q), ran.get(q)))
    # blame's MODULE table: a row for each module the loader inserted, with its time.
    rows = builtin["blame"].get("modules", [])
    names = {r["name"] for r in rows}
    # (a load that found its module loaded meanwhile counts as loaded, with no time of its own)
    c.that(0 < len(rows) <= rb["kmod_loaded"] and "xhci_pci" in names,
           "phase builtin: blame's modules %s, %d loaded" % (sorted(names), rb["kmod_loaded"]))
    c.that(all(0 < r["total_usec"] < 3600 * 1000000 for r in rows), "phase builtin: blame's module times: %s" % rows)
    c.that("modules" not in script["blame"], "phase script: blame has a module table: %s" % script["blame"].get("modules"))
    log("blame, per module (load-modules=yes): %s" % ", ".join(
        "%s %.0f ms" % (r["name"], r["total_usec"] / 1000) for r in rows))
    log("script against load-modules=yes, the same machine from no module loaded:")
    for mode, p, r in (("script", script, rs), ("builtin", builtin, rb)):
        issued = r["script_runs"] if mode == "script" else r["kmod_loads"]
        log("  %-8s %2d modules loaded; %3d adds with MODALIAS; modprobe processes: %3d (hotplugd's) + %d "
            "(the kernel's requests); loads issued %d (%s); coldplug settled %.2f s, every device %.2f s "
            "after hotplugd's start" % (
                mode, len(p["modules"]), len(r["adds"]), r["script_runs"], r["kernel"], issued,
                "one modprobe per alias" if mode == "script" else
                "%d lookups, %d naming none, %d saved, %d loaded" % (
                    r["kmod_lookups"], r["kmod_not_found"], r["kmod_saved"], r["kmod_loaded"]),
                p["coldplug"] - p["start"], p["devices"] - p["start"]))


class ModInfo:
    """The kernel root's modules.alias and modules.dep, names with "_", for
    the modules the initramfs holds (MODULES_AVAILABLE and what they need)."""

    def __init__(self, root, version):
        moddir = os.path.join(root, "lib", "modules", version)
        self.aliases, deps = {}, {}
        with open(os.path.join(moddir, "modules.dep")) as f:
            for line in f:
                path, _, need = line.partition(":")
                deps[self.name(path)] = [self.name(d) for d in need.split()]
        self.deps = {m: deps[m] for m in MODULES_AVAILABLE}
        for m in MODULES_AVAILABLE:
            for d in deps[m]:
                self.deps.setdefault(d, deps[d])
        with open(os.path.join(moddir, "modules.alias")) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == "alias" and w[2].replace("-", "_") in self.deps:
                    self.aliases.setdefault(w[2].replace("-", "_"), []).append(w[1].replace("-", "_"))

    @staticmethod
    def name(path):
        return os.path.basename(path)[:-3].replace("-", "_")

    def users(self, name):
        """@name and every module that needs it."""
        return [name] + [m for m, d in self.deps.items() if name in d]


def main():
    root, version = preflight(BINARIES)
    run = tempfile.mkdtemp(prefix="hotplugd-vm-autoload.")
    log("run directory %s, kernel %s" % (run, version))
    c = Check()
    ok = False
    g = None
    try:
        mbr_image(os.path.join(run, "stick.img"), 16)
        mbr_image(os.path.join(run, "stick2.img"), 16)
        blank_image(os.path.join(run, "disk.img"), 8)
        initrd = build_initramfs(run, root, version)
        g = Guest(run, qemu_argv(run, root, version, initrd))
        times = parse_ready(g.expect_ready())
        t0 = times["start"]
        log("guest ready: kernel %s; no module loaded by the harness (console and command channel on the "
            "8250 serial ports, results over the command channel)" % times["kernel"])
        scenario(g, c, times)
        times["quiet_t"] = times["plug_start"] - t0
        phases = run_phases(g)
        blob = g.command("finish")
        g.wait_exit()
        with tarfile.open(fileobj=io.BytesIO(base64.b64decode(blob)), mode="r:gz") as t:
            t.extractall(os.path.join(run, "results"))
        log("hotplugd up %.2f s after its start; coldplug: trigger --settle %.2f s, settled %.2f s; "
            "devices behind the controllers present %.2f s" % (
                times["up"] - t0, times["trigger"] - t0, times["coldplug"] - t0, times["devices"] - t0))
        log("hot-plug: usb-storage and usb-net present %.2f s after the first device_add" % (
            times["plug_devices"] - times["plug_start"]))
        log("input: %s; block: %s; net: %s" % (" ".join(times["input"]), " ".join(times["block"]),
                                               " ".join(times["net"])))
        results(run, c, times, ModInfo(root, version), phases)
        compare_phases(run, c, phases)
        check_clock(c, os.path.join(run, "results", "res"), times["clock"])
        ok = not c.failures
    except Failure as e:
        print("FAIL: %s" % e)
    except (OSError, ValueError, subprocess.CalledProcessError, tarfile.TarError) as e:
        print("FAIL: %s: %s" % (type(e).__name__, e))
    finally:
        if g:
            g.kill()
    finish_run(run, ok, ("serial.log", "results/res/hotplugd.log"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
