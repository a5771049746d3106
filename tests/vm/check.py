#!/usr/bin/env python3
"""Check a VM suite run (tests/vm/run-vm.py) against the raw capture.

    tests/vm/check.py RUNDIR

RUNDIR is a run directory run-vm.py kept: meta.json, fw/ (the firmware
files served), results/res/ (capture.bin, snapshot-start.txt,
snapshot-end.txt, start-seqnum, end-seqnum, exit-*, firmware.txt,
fw-read-*, runs-a.log, runs-b.log, the daemons' logs) and results/a/runs,
results/b/runs (one agent-dump file per run).

The ground truth is the capture: every datagram the kernel sent on
NETLINK_KOBJECT_UEVENT group 1 while the daemons ran (tests/vm/capture.c).
For each daemon this checks:
  runs      every captured event its filter policy keeps ran the agent
            exactly once (runs.log), none that it drops ran, and no run is
            for an event that was not captured; kept = not SUBSYSTEM queues
            or drivers (the default policy queues=drop,drivers=drop), not a
            scsi_host or scsi_target (the scsi handler), not a firmware
            request the daemon's --firmware-loader answered;
  contract  argv = {AGENT, SUBSYSTEM}, cwd /, environment HOME=/,
            PATH=/sbin:/bin:/usr/sbin:/usr/bin, ACTION, DEVPATH, SUBSYSTEM,
            SEQNUM as captured, then every other key the kernel sent, in its
            order, once, with its value; then additions, which may only be
            PHYSDEVPATH, PHYSDEVBUS, PHYSDEVDRIVER, DEVICE and, for usb,
            PRODUCT, TYPE, INTERFACE the kernel did not send;
  order     for events i < j (SEQNUM) on related devices (same DEVPATH, one
            an ancestor of the other, or a DEVPATH_OLD of one related so),
            run j started after run i ended (agent-dump's own clock);
  legacy    PHYSDEVPATH, PHYSDEVBUS, PHYSDEVDRIVER and DEVICE, event by
            event, by the rule of issue 23, computed from the capture and
            the start snapshot alone (Model.expected_legacy(): a bus device
            gets PHYSDEVBUS and its event's DRIVER; a class or block device
            PHYSDEVPATH, PHYSDEVBUS and PHYSDEVDRIVER of its nearest
            ancestor on a bus, the driver as Model.driver_at() says; a usb
            device or interface DEVICE=/proc/bus/usb/BBB/DDD for daemon A
            (--usb-device-path=proc), /dev/bus/usb/BBB/DDD for B (the
            default), every action);
and once: both daemons and the capture exited 0, the capture lost nothing,
the served firmware arrived byte for byte, the request for the missing
file failed cleanly (daemon A's loader failed it once its agent was done:
its log says so) and its fallback device went away.

The usb dispatch of the daemon with --hotplug-dir (meta usb_dispatch; the
init's usermap is results/res/usb.usermap, the runs results/res/usb/):
every captured usb add a line of the map acts on ran that line's script
once, from that daemon, after its agent, without arguments, with the
event's ACTION, DEVPATH, PRODUCT and INTERFACE, TYPE=usb, DEVICE the
/dev/bus/usb/BBB/DDD of the capture (a character device as it ran, unless
the device's removal had begun by then) and a REMOVER under the daemon's
remover directory; no script ran for another event (a remove, a bind) nor
from another daemon; the remover vmrecord left ran once, on its device's
remove, and was gone at the end.

Legacy mismatches are labelled:
  1  class/block device without PHYSDEV* on a later action (change, remove...)
  2  wrong PHYSDEVPATH (or one on a bus device), and the PHYSDEVBUS and
     PHYSDEVDRIVER that come with it
  3  usb device or interface without DEVICE
  4  change ignoring the DRIVER= the kernel sent with it
  5  PHYSDEVDRIVER wrong otherwise (read at the wrong time)
  other
Prints the events per subsystem and action, the failures per daemon and
category, and every failure as one line; exits 1 on any failure.
"""
import collections
import json
import os
import struct
import sys

LEGACY = ("PHYSDEVPATH", "PHYSDEVBUS", "PHYSDEVDRIVER", "DEVICE")
PHYS = ("PHYSDEVPATH", "PHYSDEVBUS", "PHYSDEVDRIVER")
USB_FILLS = ("PRODUCT", "TYPE", "INTERFACE")
FIXED = ("ACTION", "DEVPATH", "SUBSYSTEM", "SEQNUM")
CATEGORIES = {
    "1": "class/block device lost PHYSDEV* on change/remove",
    "2": "wrong PHYSDEVPATH (or one on a bus device)",
    "3": "usb DEVICE missing",
    "4": "change ignoring the event's DRIVER",
    "5": "PHYSDEVDRIVER wrong (timing)",
    "other": "other legacy mismatch",
}


class Event:
    def __init__(self, header, keys, ns):
        self.header = header
        self.keys = keys  # [(KEY, VALUE)] in the kernel's order
        self.env = dict(keys)
        self.ns = ns
        self.seq = int(self.env.get("SEQNUM", "-1"))
        self.action = self.env.get("ACTION", "")
        self.devpath = self.env.get("DEVPATH", "")
        self.subsystem = self.env.get("SUBSYSTEM", "")

    def paths(self):
        p = [self.devpath]
        if "DEVPATH_OLD" in self.env:
            p.append(self.env["DEVPATH_OLD"])
        return p

    def __str__(self):
        return "%d %s %s" % (self.seq, self.action, self.devpath)


def read_capture(path):
    """(events by SEQNUM order, number of overflow records)."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"HPCAP1\n\0"):
        raise SystemExit("check: %s is not a capture" % path)
    off, events, lost = 8, [], 0
    while off + 16 <= len(data):
        length, port, ns = struct.unpack_from("<IIq", data, off)
        off += 16
        body = data[off:off + length]
        off += length
        if port == 0xFFFFFFFF:
            lost += 1
            continue
        parts = body.decode(errors="surrogateescape").split("\0")
        if parts and parts[-1] == "":
            parts.pop()
        if not parts or "@" not in parts[0]:
            continue
        keys = [tuple(p.split("=", 1)) for p in parts[1:] if "=" in p]
        events.append(Event(parts[0], keys, ns))
    events.sort(key=lambda e: e.seq)
    return events, lost


def read_snapshot(path):
    """(set of bus names, {devpath: dict}) from vm-snapshot's output."""
    buses, devices = set(), {}
    if not os.path.exists(path):
        return buses, devices
    with open(path) as f:
        for line in f:
            w = line.rstrip("\n").split("\t")
            if w[0] == "bus" and len(w) == 2:
                buses.add(w[1])
            elif w[0] == "dev" and len(w) == 8:
                v = [None if x == "-" else x for x in w[1:]]
                devices[v[0]] = dict(subsystem=v[1], kind=v[2], driver=v[3], devtype=v[4],
                                     busnum=v[5], devnum=v[6])
    return buses, devices


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append("\n" if s[i + 1] == "n" else s[i + 1])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def read_runs(runs_dir):
    """{SEQNUM: run} from agent-dump's files."""
    runs = {}
    if not os.path.isdir(runs_dir):
        return runs
    for name in os.listdir(runs_dir):
        seq, _, base = name.partition(".")
        if not seq.isdigit() or base.endswith(".tmp"):
            continue
        run = {"argv": {}, "env": []}
        with open(os.path.join(runs_dir, name), errors="surrogateescape") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("env:"):
                    k, _, v = unescape(line[4:]).partition("=")
                    run["env"].append((k, v))
                elif line.startswith("argv"):
                    k, _, v = line.partition("=")
                    run["argv"][int(k[4:])] = v
                else:
                    k, _, v = line.partition("=")
                    run[k] = v
        runs[int(seq)] = run
    return runs


def read_runlog(path):
    counts = collections.Counter()
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                w = line.split()
                if w and w[0].isdigit():
                    counts[int(w[0])] += 1
    return counts


def read_text(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def related(p, q):
    return p == q or q.startswith(p + "/") or p.startswith(q + "/")


class Model:
    """The devices as the capture and the start snapshot describe them."""

    def __init__(self, events, buses, snap):
        self.snap = snap
        self.buses = set(buses)
        self.by_dev = collections.defaultdict(list)
        self.subsys = {}
        for e in events:
            self.by_dev[e.devpath].append(e)
            if e.subsystem:
                self.subsys.setdefault(e.devpath, e.subsystem)
            if e.subsystem == "bus" and e.devpath.startswith("/bus/"):
                self.buses.add(e.devpath.rsplit("/", 1)[1])

    def known(self, devpath):
        return devpath in self.by_dev or devpath in self.snap

    def subsystem(self, devpath):
        if devpath in self.subsys:
            return self.subsys[devpath]
        return (self.snap.get(devpath) or {}).get("subsystem")

    def is_bus(self, devpath):
        return self.subsystem(devpath) in self.buses

    def bus_ancestor(self, devpath):
        p = devpath
        while True:
            p = p.rsplit("/", 1)[0]
            if not p:
                return None
            if self.known(p) and self.is_bus(p):
                return p

    def driver_at(self, a, seq):
        """(driver, also_accepted): A's driver when the kernel sent event @seq.

        A's latest event before @seq that says something about its driver
        decides: a bind, or any event with DRIVER=D, says D; an unbind, or
        an add without DRIVER, says none.  Without such an event, the start
        snapshot decides (A existed before the capture).  If that gives
        none, and A's next event after @seq that says something about the
        driver is a bind with DRIVER=D (before an unbind, add or remove of
        A), the event came during A's probe and the driver was already set:
        the kernel sets a device's driver before calling probe() and
        announces the bind after it.
        When that next event is not the bind but another event carrying
        DRIVER=D (sd probes asynchronously and sends a "change" with
        SDEV_UA and DRIVER=sd long before its bind), the probe ran beside
        the code that sent @seq (the SCSI midlayer adds the scsi_device and
        scsi_generic children while sd's probe runs in a worker): the
        driver may or may not have been set, so none is accepted as well
        as D (also_accepted); the summary counts these.
        """
        evs = self.by_dev.get(a, [])
        if not evs:
            return (self.snap.get(a) or {}).get("driver"), set()
        state, decided = None, False
        for x in reversed([x for x in evs if x.seq < seq]):
            if x.action == "bind" or "DRIVER" in x.env:
                state, decided = x.env.get("DRIVER"), True
                break
            if x.action in ("unbind", "add"):
                state, decided = None, True
                break
        if not decided:
            state = (self.snap.get(a) or {}).get("driver")
        if state is None:
            for x in (x for x in evs if x.seq > seq):
                if x.action == "bind" and x.env.get("DRIVER"):
                    return x.env["DRIVER"], set()
                if "DRIVER" in x.env:
                    return x.env["DRIVER"], {None}
                if x.action in ("unbind", "add", "remove"):
                    break
        return state, set()

    def usb_numbers(self, devpath, seq):
        """(BUSNUM, DEVNUM) of usb_device @devpath around event @seq."""
        evs = [x for x in self.by_dev.get(devpath, []) if "BUSNUM" in x.env and "DEVNUM" in x.env]
        before = [x for x in evs if x.seq <= seq]
        pick = before[-1] if before else (evs[0] if evs else None)
        if pick:
            return pick.env["BUSNUM"], pick.env["DEVNUM"]
        s = self.snap.get(devpath) or {}
        if s.get("busnum") and s.get("devnum"):
            return s["busnum"], s["devnum"]
        return None

    def expected_legacy(self, e, usbfs):
        """({KEY: VALUE} wanted, {KEY: other values accepted}); DEVICE in the directory @usbfs."""
        want, accept = {}, {}
        if e.subsystem in self.buses:
            want["PHYSDEVBUS"] = e.subsystem
            if e.env.get("DRIVER"):
                want["PHYSDEVDRIVER"] = e.env["DRIVER"]
        else:
            a = self.bus_ancestor(e.devpath)
            if a:
                want["PHYSDEVPATH"] = a
                want["PHYSDEVBUS"] = self.subsystem(a)
                d, also = self.driver_at(a, e.seq)
                if d:
                    want["PHYSDEVDRIVER"] = d
                if also:
                    accept["PHYSDEVDRIVER"] = also
        devtype = e.env.get("DEVTYPE")
        if e.subsystem == "usb" and devtype in ("usb_device", "usb_interface"):
            usbdev = e.devpath if devtype == "usb_device" else e.devpath.rsplit("/", 1)[0]
            n = self.usb_numbers(usbdev, e.seq)
            if n:
                want["DEVICE"] = "%s/%03d/%03d" % (usbfs, int(n[0]), int(n[1]))
        return want, accept


def category(e, model, key, want, got, path_wrong):
    if (e.subsystem not in model.buses and e.action != "add" and "PHYSDEVPATH" in want
            and not any(k in got for k in PHYS) and key in PHYS):
        return "1"
    if key == "PHYSDEVPATH" or (key in PHYS and path_wrong):
        return "2"
    if key == "DEVICE" and key in want and key not in got:
        return "3"
    if key == "PHYSDEVDRIVER" and e.action == "change" and "DRIVER" in e.env:
        return "4"
    if key == "PHYSDEVDRIVER":
        return "5"
    return "other"


class Report:
    def __init__(self):
        self.lines = collections.defaultdict(list)  # (daemon, class) -> [line]

    def fail(self, daemon, cls, line):
        self.lines[(daemon, cls)].append(line)

    def count(self):
        return sum(len(v) for v in self.lines.values())


def check_contract(r, d, e, run, agent, loader):
    """The agent's argv and environment; returns the additions {KEY: VALUE}.  @loader: the daemon's
    --firmware-loader serves files, and tells the agent of a request it has no file for."""
    argv = run["argv"]
    if run.get("argc") != "2" or argv.get(0) != agent or argv.get(1) != e.subsystem:
        r.fail(d, "contract", "%s: argv %s, want [%s, %s]" % (e, [argv[i] for i in sorted(argv)], agent, e.subsystem))
    if run.get("cwd") != "/":
        r.fail(d, "contract", "%s: cwd %s" % (e, run.get("cwd")))
    env = run["env"]
    want_head = [("HOME", "/"), ("PATH", "/sbin:/bin:/usr/sbin:/usr/bin")] + [(k, e.env.get(k, "")) for k in FIXED]
    kernel_rest = [(k, v) for k, v in e.keys if k not in FIXED and k not in ("HOME", "PATH")]
    head = env[:6]
    if head != want_head:
        r.fail(d, "contract", "%s: environment starts %s, want %s" % (e, head, want_head))
    rest = env[6:6 + len(kernel_rest)]
    if rest != kernel_rest:
        r.fail(d, "contract", "%s: kernel keys %s, want %s" % (e, rest, kernel_rest))
    added = env[6 + len(kernel_rest):]
    keys = [k for k, _ in env]
    dups = sorted({k for k in keys if keys.count(k) > 1})
    if dups:
        r.fail(d, "contract", "%s: keys more than once: %s" % (e, " ".join(dups)))
    additions = {}
    for k, v in added:
        allowed = k in LEGACY or (e.subsystem == "usb" and k in USB_FILLS and k not in e.env)
        allowed = allowed or (k == "HOTPLUGD_FIRMWARE_MISSING" and v == "1" and loader and
                              e.subsystem == "firmware" and e.action == "add")
        if not allowed:
            r.fail(d, "contract", "%s: addition %s=%s is not a legacy variable" % (e, k, v))
        additions[k] = v
    return additions


def check_legacy(r, d, e, model, additions, tally, usbfs):
    want, accept = model.expected_legacy(e, usbfs)
    got = {k: v for k, v in additions.items() if k in LEGACY}
    path_wrong = want.get("PHYSDEVPATH") != got.get("PHYSDEVPATH")
    for key in LEGACY:
        if want.get(key) != got.get(key) and got.get(key) in accept.get(key, ()):
            tally["ambiguous"].add(e.seq)
        elif want.get(key) != got.get(key):
            cat = category(e, model, key, want, got, path_wrong)
            tally[cat].add(e.seq)
            tally[cat + " keys"].add((e.seq, key))
            r.fail(d, "legacy-" + cat, "%s %s: want %s got %s" % (e, key, want.get(key, "(none)"),
                                                                   got.get(key, "(none)")))


def check_order(r, d, done):
    """@done: [(event, run)] in SEQNUM order."""
    for j, (ej, rj) in enumerate(done):
        start_j = int(rj.get("start", 0))
        pj = ej.paths()
        for ei, ri in done[:j]:
            if not any(related(p, q) for p in ei.paths() for q in pj):
                continue
            end_i = int(ri.get("end", 0))
            if start_j < end_i:
                r.fail(d, "order", "%s started %.3f ms before %s ended" % (ej, (end_i - start_j) / 1e6, ei))


def dropped(e, loader_files):
    if e.subsystem in ("queues", "drivers"):
        return True
    if e.subsystem == "scsi" and e.env.get("DEVTYPE") in ("scsi_host", "scsi_target"):
        return True
    return e.subsystem == "firmware" and e.action == "add" and e.env.get("FIRMWARE") in loader_files


def check_daemon(r, d, res, results, meta, events, model, window):
    agent = meta["agents"][d]
    loader = set(meta.get("firmware_loader", {}).get(d, []))
    runs = read_runs(os.path.join(results, d, "runs"))
    counts = read_runlog(os.path.join(res, "runs-%s.log" % d))
    captured = {e.seq for e in events}
    for seq in sorted(set(counts) | set(runs)):
        if seq not in captured:
            r.fail(d, "runs", "run for SEQNUM %d, which the kernel did not send" % seq)
    done, tally, kept = [], collections.defaultdict(set), 0
    lo, hi = window
    for e in events:
        if not lo < e.seq <= hi:
            continue
        n = counts.get(e.seq, 0)
        if dropped(e, loader):
            if n:
                r.fail(d, "runs", "%s: ran %d times, but the filter policy drops it" % (e, n))
            continue
        kept += 1
        if n != 1:
            r.fail(d, "runs", "%s (%s): ran %d times, want once" % (e, e.subsystem, n))
        run = runs.get(e.seq)
        if run is None:
            continue
        additions = check_contract(r, d, e, run, agent, bool(loader))
        check_legacy(r, d, e, model, additions, tally, meta.get("usbfs", {}).get(d, "/proc/bus/usb"))
        done.append((e, run))
    check_order(r, d, done)
    exit_status = read_text(os.path.join(res, "exit-" + d))
    if exit_status != "0":
        r.fail(d, "exit", "hotplugd %s exited with %s, want 0" % (d.upper(), exit_status))
    return kept, len(done), tally


def usermap_number(s):
    """A usermap number as hotplugd reads it: hex with 0x, octal with a leading 0, or decimal."""
    if s.lower().startswith("0x"):
        return int(s[2:], 16)
    return int(s, 8) if len(s) > 1 and s.startswith("0") else int(s)


def read_usermap(path):
    """[(module, [match_flags, idVendor, ..., driver_info])] of a usermap."""
    lines = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and not w[0].startswith("#"):
                lines.append((w[0], [usermap_number(x) for x in w[1:]]))
    return lines


def usermap_matches(line, e):
    """Whether usermap @line acts on usb event @e (hotplugd(8) USB USERMAPS)."""
    flags, vendor, product, bcd_lo, bcd_hi = line[:5]
    dev_ids, if_ids = line[5:8], line[8:11]
    try:
        v, p, bcd = (int(x, 16) for x in e.env["PRODUCT"].split("/"))
        dev = [int(x) for x in e.env.get("TYPE", "0/0/0").split("/")]
        iface = [int(x) for x in e.env["INTERFACE"].split("/")] if "INTERFACE" in e.env else None
    except (KeyError, ValueError):
        return False
    if bool(flags & 0x380) != (e.env.get("DEVTYPE") == "usb_interface") or (flags & 0x380 and iface is None):
        return False
    checks = [(0x1, v == vendor), (0x2, p == product), (0x4, bcd >= bcd_lo), (0x8, bcd <= bcd_hi)]
    checks += [(0x10 << i, dev[i] == dev_ids[i]) for i in range(3)]
    checks += [(0x80 << i, iface is not None and iface[i] == if_ids[i]) for i in range(3)]
    return all(ok for bit, ok in checks if flags & bit)


def read_usb_records(path):
    """{(SEQNUM, name): [record]} of the usermap scripts' and removers' runs (tests/vm/init)."""
    recs = collections.defaultdict(list)
    for fname in sorted(os.listdir(path)) if os.path.isdir(path) else []:
        w = fname.split(".")
        if len(w) != 3 or not w[0].isdigit():
            continue
        with open(os.path.join(path, fname)) as f:
            recs[(int(w[0]), w[1])].append(dict(x.split("=", 1) for x in f.read().splitlines() if "=" in x))
    return recs


def check_usb_run(r, d, e, module, rec, ctx):
    """One script run @rec for add @e; returns (the device's /dev/bus/usb path, whether it was going)."""
    model, events, rdir = ctx
    usbdev = e.devpath if e.env.get("DEVTYPE") == "usb_device" else e.devpath.rsplit("/", 1)[0]
    n = model.usb_numbers(usbdev, e.seq)
    device = "/dev/bus/usb/%03d/%03d" % (int(n[0]), int(n[1])) if n else "(no BUSNUM/DEVNUM)"
    expect = [("argc", "0"), ("ACTION", "add"), ("DEVPATH", e.devpath), ("SUBSYSTEM", "usb"),
              ("PRODUCT", e.env.get("PRODUCT")), ("TYPE", "usb"), ("INTERFACE", e.env.get("INTERFACE", "")),
              ("DEVICE", device), ("agent_done", "1")]
    # The node goes after the removes of the device's interfaces were sent, and the script read the seqnum
    # after testing the node: with no such remove up to seqnum_after, the node was there.  (kbd3, unplugged
    # at once, may be going when B gets to it.)
    seen = int(rec.get("seqnum_after") or 0)
    going = any(x.action == "remove" and x.seq <= seen and related(usbdev, x.devpath) for x in events)
    if not going:
        expect.append(("device_char", "1"))
    for k, v in expect:
        if rec.get(k) != v:
            r.fail(d, "usb", "%s: %s got %s=%s, want %s" % (e, module, k, rec.get(k), v))
    if not rec.get("REMOVER", "").startswith(rdir + "/"):
        r.fail(d, "usb", "%s: %s got REMOVER=%s, want one under %s" % (e, module, rec.get("REMOVER"), rdir))
    return device, going


def check_removers(r, d, recs, plugs, events, hi):
    """The removers vmrecord left: each ran once, on its device's remove, and no other; returns their runs."""
    by_seq = {e.seq: e for e in events}
    removers = 0
    for devpath, (add, remover) in sorted(plugs.items()):
        gone = [x for x in events if x.devpath == devpath and x.seq > add.seq and x.action == "remove"]
        if not gone or gone[0].seq > hi:
            r.fail(d, "usb", "%s: no remove of the device in the window to run its remover" % add)
            continue
        runs = recs.get((gone[0].seq, "remover"), [])
        removers += len(runs)
        if len(runs) != 1:
            r.fail(d, "usb", "%s: the remover ran %d times, want once" % (gone[0], len(runs)))
        for rec in runs:
            for k, v in (("argc", "0"), ("ACTION", "remove"), ("DEVPATH", devpath), ("self", remover)):
                if rec.get(k) != v:
                    r.fail(d, "usb", "%s: the remover got %s=%s, want %s" % (gone[0], k, rec.get(k), v))
    for (seq, name), runs in sorted(recs.items()):
        e = by_seq.get(seq)
        if name == "remover" and not (e and e.action == "remove" and e.devpath in plugs):
            r.fail(d, "usb", "%s: a remover ran %d times, not on the remove of a device a script ran for" %
                   (e or seq, len(runs)))
    return removers


def check_usb_dispatch(r, res, meta, events, model, window):
    """Daemon B's --hotplug-dir (issue 39 item 4): the usermap's scripts and their removers."""
    conf = meta.get("usb_dispatch")
    if not conf:
        return
    d, rdir = conf["daemon"], conf["remover_dir"]
    pids = {x: read_text(os.path.join(res, "pid-" + x)) for x in meta["agents"]}
    umap = read_usermap(os.path.join(res, "usb.usermap"))
    recs = read_usb_records(os.path.join(res, "usb"))
    want = {}  # (SEQNUM, module) -> the add a line of the map acts on
    for e in events:
        if window[0] < e.seq <= window[1] and e.subsystem == "usb" and e.action == "add":
            for module in {m for m, line in umap if usermap_matches(line, e)}:
                want[(e.seq, module)] = e
    others = 0
    for (seq, name), runs in sorted(recs.items()):
        for rec in runs:
            if rec.get("ppid") != pids[d]:
                others += 1
                who = [x.upper() for x, p in pids.items() if p == rec.get("ppid")] or ["pid " + str(rec.get("ppid"))]
                r.fail(d, "usb", "%d %s ran from %s, want hotplugd %s" % (seq, name, who[0], d.upper()))
        if name != "remover" and (seq, name) not in want:
            r.fail(d, "usb", "%d %s ran %d times, for an event no usermap line acts on" % (seq, name, len(runs)))
    plugs, devices, late = {}, [], 0  # plugs: device DEVPATH -> (add, the REMOVER vmrecord got)
    for (seq, module), e in sorted(want.items()):
        runs = recs.get((seq, module), [])
        if len(runs) != 1:
            r.fail(d, "usb", "%s: %s ran %d times, want once" % (e, module, len(runs)))
            continue
        device, going = check_usb_run(r, d, e, module, runs[0], (model, events, rdir))
        late += going
        if e.env.get("DEVTYPE") == "usb_device":
            plugs[e.devpath] = (e, runs[0].get("REMOVER"))
            devices.append("%s %s" % (e.devpath.rsplit("/", 1)[1], device))
    removers = check_removers(r, d, recs, plugs, events, window[1])
    left = read_text(os.path.join(res, "usb-removers-left.txt"), "")
    if left:
        r.fail(d, "usb", "removers left in %s after every device went: %s" % (rdir, left.split()))
    ifaces = sum(1 for e in want.values() if e.env.get("DEVTYPE") == "usb_interface")
    print("usb dispatch (daemon %s, %s): %d plugs, %d interface runs, %d removers, %d runs from another "
          "process, %d runs while the device went; DEVICE %s" %
          (d.upper(), ", ".join(sorted({m for _, m in want})), len(plugs), ifaces, removers, others, late,
           ", ".join(devices) or "none"))


def check_firmware(r, run, res, meta, events):
    fw = meta.get("firmware", {})
    lines = (read_text(os.path.join(res, "firmware.txt"), "") or "").splitlines()
    result, took = {}, {}
    for line in lines:
        w = line.split()
        if len(w) >= 3:
            result[(w[0], w[1])] = w[2]
        if len(w) == 5:
            took[(w[0], w[1])] = float(w[4]) - float(w[3])
    served, missing = fw.get("served"), fw.get("missing")
    if served:
        rc = result.get(("serve", served))
        if rc != "rc=0":
            r.fail("-", "firmware", "request for %s: %s, want rc=0" % (served, rc))
        want = open(os.path.join(run, "fw", served), "rb").read()
        try:
            got = open(os.path.join(res, "fw-read-" + served), "rb").read()
        except OSError:
            got = None
        if got != want:
            r.fail("-", "firmware", "%s: test_firmware holds %s bytes, want the %d bytes served" %
                   (served, "no" if got is None else len(got), len(want)))
    if missing:
        rc = result.get(("missing", missing))
        if rc is None or rc == "rc=0":
            r.fail("-", "firmware", "request for missing %s: %s, want an error" % (missing, rc))
        # Daemon A's loader found no file: it failed the request once its agent was done, not the kernel's
        # fallback timeout.
        log = read_text(os.path.join(res, "hotplugd-a.log"), "") or ""
        if "firmware %s: not in --firmware-path and no agent loaded it; request failed" % missing not in log:
            r.fail("-", "firmware", "daemon A did not fail the request for missing %s" % missing)
        if ("missing", missing) in took:
            print("firmware: the request for missing %s ended after %.3f s" % (missing, took[("missing", missing)]))
    for name in (served, missing):
        if not name:
            continue
        acts = [e.action for e in events if e.subsystem == "firmware" and e.devpath.endswith("/" + name)]
        if acts != ["add", "remove"]:
            r.fail("-", "firmware", "%s: fallback device events %s, want add, remove" % (name, acts))


def main():
    if len(sys.argv) != 2:
        print("usage: check.py RUNDIR", file=sys.stderr)
        return 64
    run = sys.argv[1]
    results = os.path.join(run, "results")
    res = os.path.join(results, "res")
    with open(os.path.join(run, "meta.json")) as f:
        meta = json.load(f)
    events, lost = read_capture(os.path.join(res, "capture.bin"))
    buses, snap = read_snapshot(os.path.join(res, "snapshot-start.txt"))
    end_buses, _ = read_snapshot(os.path.join(res, "snapshot-end.txt"))
    model = Model(events, buses | end_buses, snap)
    window = (int(read_text(os.path.join(res, "start-seqnum"), "0")),
              int(read_text(os.path.join(res, "end-seqnum"), "0")))
    r = Report()
    if lost:
        r.fail("-", "capture", "the capture lost datagrams %d times (receive buffer overflow)" % lost)
    if read_text(os.path.join(res, "exit-capture")) != "0":
        r.fail("-", "capture", "vm-capture exited with %s" % read_text(os.path.join(res, "exit-capture")))
    seqs = [e.seq for e in events if window[0] < e.seq <= window[1]]
    if seqs != list(range(window[0] + 1, window[1] + 1)):
        missing = sorted(set(range(window[0] + 1, window[1] + 1)) - set(seqs))
        r.fail("-", "capture", "the capture misses %d SEQNUMs of %d..%d: %s" %
               (len(missing), window[0] + 1, window[1], missing[:20]))
    for name in sorted(os.listdir(res)):
        if name.startswith(("asan", "ubsan")):
            r.fail("-", "sanitizer", "%s: %s" % (name, read_text(os.path.join(res, name), "")[:300]))
    check_firmware(r, run, res, meta, events)

    # Events per subsystem and action.
    per = collections.Counter((e.subsystem, e.action) for e in events if window[0] < e.seq <= window[1])
    subs = collections.Counter()
    for (s, _), n in per.items():
        subs[s] += n
    print("capture: %d events, SEQNUM %d..%d; buses %s" % (sum(per.values()), window[0] + 1, window[1],
                                                           " ".join(sorted(model.buses))))
    for s in sorted(subs, key=lambda s: (-subs[s], s)):
        acts = ", ".join("%s %d" % (a, n) for (ss, a), n in sorted(per.items()) if ss == s)
        print("  %-14s %4d  (%s)" % (s, subs[s], acts))

    tallies = {}
    for d in sorted(meta["agents"]):
        kept, ran, tally = check_daemon(r, d, res, results, meta, events, model, window)
        tallies[d] = tally
        print("daemon %s: %d events kept by its filter policy, %d runs checked" % (d.upper(), kept, ran))
    check_usb_dispatch(r, res, meta, events, model, window)

    classes = sorted({c for _, c in r.lines})
    print("failures per daemon and class:")
    for d in ["-"] + sorted(meta["agents"]):
        row = ["%s %d" % (c, len(r.lines[(d, c)])) for c in classes if r.lines.get((d, c))]
        if row:
            print("  %s: %s" % ("all" if d == "-" else d.upper(), ", ".join(row)))
    print("legacy mismatches per category (events, variables):")
    for cat, text in CATEGORIES.items():
        print("  (%s) %-50s %s" % (cat, text, "  ".join("%s %d/%d" % (d.upper(), len(tallies[d][cat]),
                                                                        len(tallies[d][cat + " keys"]))
                                                         for d in sorted(tallies))))
    print("  accepted as ambiguous (driver set during an asynchronous probe): %s" %
          "  ".join("%s %d" % (d.upper(), len(tallies[d]["ambiguous"])) for d in sorted(tallies)))
    for (d, c), lines in sorted(r.lines.items()):
        for line in lines:
            print("%s %s: %s" % ("all" if d == "-" else d.upper(), c, line))
    total = r.count()
    print("check: %s (%d failures)" % ("ok" if total == 0 else "FAILED", total))
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
