#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Root-free integration tests: the whole hotplugd loop, fed through a socketpair.

    driver.py CASE...     run these cases (names: see CASES at the end)
    driver.py --all       run every case, one after another

Each case starts hotplugd-test (hotplugd's main built with HOTPLUGD_TEST_TRUST:
it adopts one end of a socketpair as its uevent source, --listen-fd) with the
fixture sysfs, a private control socket and configuration file in a temporary
directory of its own, and a recording agent (tests/kernel/agent-dump.c: one
file RUNS/SEQNUM.NAME per run with its times and environment, and a line
"SEQNUM NAME" in runs.log).  It writes kernel-format datagrams into the other
end and checks what the agents saw, the daemon's log and hotplugctl.

Nothing needs root: the daemon runs as the caller, its control socket lives
in the case's directory (a daemon that is not root serves its own user),
agents are single-agent mode, and SEQNUMs are small, so that hotplugctl
settle (which reads the real /sys/kernel/uevent_seqnum) waits for them all.

Waits follow progress: one gives up only when its condition has not come
true while nothing moved (the daemon's CPU time, the files in the case's
directory) for T_IDLE seconds (default 30).  Everything started is stopped by
PID and the directory removed, also on failure.

Environment: HOTPLUGD_TEST, HOTPLUGD, HOTPLUGCTL, AGENT_DUMP (programs),
FIXTURE_SYSFS (tests/fixtures/sysfs); T_KEEP=DIR keeps a copy of each case's
directory there.  Exit: 0 all passed, 1 a case failed.
"""

import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

IDLE = float(os.environ.get("T_IDLE", "30"))
POLL = 0.05

# Devices of the fixture sysfs: a PCI network card, its interface and queues.
PCI = "/devices/pci0000:00/0000:00:1f.6"
NET = PCI + "/net/enp0s31f6"
RX = NET + "/queues/rx-0"
TX = NET + "/queues/tx-0"


class Fail(Exception):
    pass


class Skip(Exception):
    """The case cannot run here (said why); exit 77 when it is the only one run."""


def env(name):
    v = os.environ.get(name)
    if not v:
        raise Fail(f"{name} is not set (run through meson test)")
    return v


def uevent(seqnum, action, devpath, subsystem, *extra):
    """A datagram in the kernel's format; SEQNUM last, as the kernel sends it."""
    keys = [f"ACTION={action}", f"DEVPATH={devpath}", f"SUBSYSTEM={subsystem}"]
    keys += list(extra) + [f"SEQNUM={seqnum}"]
    return f"{action}@{devpath}\0".encode() + b"".join(k.encode() + b"\0" for k in keys)


def cpu_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


class Case:
    """One test case: its directory, daemons, helpers; cleanup() undoes everything."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"hotplugd-{name}.")
        self.daemons = []
        self.socket = os.path.join(self.dir, "ctl", "control")
        os.mkdir(os.path.join(self.dir, "handlers"))  # no external handlers
        self.conf = os.path.join(self.dir, "hotplugd.conf")
        self.write(self.conf, "")

    # ---- files and agents ----------------------------------------------------

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)

    def agent_dump(self):
        """The case's own copy of agent-dump, DIR/bin/agent-dump (made on first use); returns its path.

        hotplugd runs an agent only if the file and every directory above it, the link's target's too, are
        the daemon user's and writable by no one else: a link into the build tree would make every case
        depend on the modes of the tree's directories (0775 in a release tarball unpacked by root)."""
        path = self.path("bin", "agent-dump")
        if not os.path.exists(path):
            os.makedirs(self.path("bin"), mode=0o755, exist_ok=True)
            shutil.copyfile(env("AGENT_DUMP"), path)
            os.chmod(path, 0o755)
        return path

    def agent(self, sub="", name="agent", sleep_ms=0):
        """The recording agent at DIR/SUB/NAME (a link to agent_dump()); returns its path."""
        base = self.path(sub)
        os.makedirs(os.path.join(base, "runs"), exist_ok=True)
        os.symlink(self.agent_dump(), os.path.join(base, name))
        self.write(os.path.join(base, "sleep_ms"), f"{sleep_ms}\n")
        return os.path.join(base, name)

    def runs(self, sub=""):
        """{SEQNUM: run} of the finished runs under DIR/SUB (run: fields and env list)."""
        d = os.path.join(self.path(sub), "runs")
        out = {}
        for n in os.listdir(d) if os.path.isdir(d) else []:
            if n.endswith(".tmp"):
                continue
            run = {"env": []}
            with open(os.path.join(d, n)) as f:
                for line in f.read().splitlines():
                    if line.startswith("env:"):
                        run["env"].append(line[4:])
                    elif "=" in line:
                        k, v = line.split("=", 1)
                        run[k] = v
            run["start"] = int(run["start"])
            run["end"] = int(run["end"])
            run["vars"] = dict(e.split("=", 1) for e in run["env"])
            out[int(n.split(".")[0])] = run
        return out

    def run_log(self, sub=""):
        """SEQNUMs in runs.log (one line per run, so a repeated run shows twice)."""
        p = os.path.join(self.path(sub), "runs.log")
        if not os.path.exists(p):
            return []
        with open(p) as f:
            return [int(line.split()[0]) for line in f if line.strip()]

    # ---- progress and waiting -------------------------------------------------

    def progress(self):
        """Changes as long as anything moves: daemons' CPU time, files here."""
        sig = [cpu_of(d.proc.pid) for d in self.daemons if d.proc and d.proc.poll() is None]
        n = size = 0
        for root, dirs, files in os.walk(self.dir):
            for f in files:
                try:
                    size += os.lstat(os.path.join(root, f)).st_size
                    n += 1
                except OSError:
                    pass
        return (tuple(sig), n, size)

    def wait(self, cond, what, idle=IDLE, extra_progress=None):
        """Wait until cond() is true; fail after `idle` seconds without progress."""
        last = (self.progress(), extra_progress() if extra_progress else None)
        since = time.monotonic()
        while True:
            r = cond()
            if r:
                return r
            time.sleep(POLL)
            now = (self.progress(), extra_progress() if extra_progress else None)
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= idle:
                raise Fail(f"{what}: nothing moved for {idle:g} s")

    def tool(self, *args, check=True):
        """Run hotplugctl against this case's daemon; returns (exit status, output)."""
        e = dict(os.environ, HOTPLUGCTL_SOCKET=self.socket)
        with tempfile.TemporaryFile("w+") as f:
            p = subprocess.Popen([env("HOTPLUGCTL"), *args], env=e, stdin=subprocess.DEVNULL, stdout=f,
                                 stderr=subprocess.STDOUT)
            try:
                self.wait(lambda: p.poll() is not None, f"hotplugctl {' '.join(args)}",
                          extra_progress=lambda: cpu_of(p.pid))
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            f.seek(0)
            out = f.read()
        if check and p.returncode != 0:
            raise Fail(f"hotplugctl {' '.join(args)}: exit {p.returncode}: {out.strip()}")
        return p.returncode, out

    def status(self):
        """hotplugctl status as {"received": N, "started": N, "queued": N, ...}."""
        out = self.tool("status")[1]
        words = r"(\d+) (processed|received|started|finished|failed|queued|running)\b"
        # Only the event, agent and queue lines: others ("Modules:") count failures of their own.
        counts = "\n".join(l for l in out.splitlines() if l.startswith(("Events:", "Agents:", "Queue:")))
        st = {k: int(v) for v, k in re.findall(words, counts)}
        st["paused"] = "PAUSED" in out
        return st

    def settle(self):
        """hotplugctl settle until it succeeds (each try short; no fixed total)."""
        self.wait(lambda: self.tool("settle", "--timeout", "2", check=False)[0] == 0, "hotplugctl settle")

    # ---- daemons ----------------------------------------------------------------

    def daemon(self, *args, **kw):
        d = Daemon(self, *args, **kw)
        self.daemons.append(d)
        d.start()
        return d

    def cleanup(self, failed):
        try:
            for d in self.daemons:
                d.kill()
            # Agents the daemons left (none should be): found by their program path, killed by PID.
            for pid in pids_running_from(self.dir):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if failed:
                for d in self.daemons:
                    print(f"---- {os.path.basename(d.log)} (last 40 lines) ----", file=sys.stderr)
                    print("".join(d.log_text().splitlines(True)[-40:]), file=sys.stderr, end="")
            keep = os.environ.get("T_KEEP")
            if keep:
                try:
                    shutil.copytree(self.dir, os.path.join(keep, os.path.basename(self.dir)), symlinks=True)
                except shutil.Error:
                    pass  # a control socket left by a crashed daemon is not copied
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def pids_running_from(prefix):
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == os.getpid():
            continue
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                argv0 = f.read().split(b"\0", 1)[0].decode(errors="replace")
        except OSError:
            continue
        if argv0.startswith(prefix + "/"):
            out.append(int(p))
    return out


class Daemon:
    """hotplugd-test (or `binary`) on a socketpair, or with `source=False` none (replay)."""

    def __init__(self, case, *args, binary=None, source=True, log="daemon.log", ready=True):
        self.case = case
        self.args = list(args)
        self.binary = binary or env("HOTPLUGD_TEST")
        self.log = case.path(log)
        self.sock = self.peer = self.proc = None
        self.ready = ready
        if source:
            self.sock, self.peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.sock.settimeout(POLL)

    def start(self):
        c = self.case
        argv = [self.binary, "--log-target=stderr", f"--sysfs={env('FIXTURE_SYSFS')}",
                f"--handler-dir={c.path('handlers')}", f"--config={c.conf}", "--all"]
        if not any(a.startswith("--control-socket") for a in self.args):
            argv.append(f"--control-socket={c.socket}")
        fds = []
        if self.peer:
            argv.append(f"--listen-fd={self.peer.fileno()}")
            fds.append(self.peer.fileno())
        rfd = wfd = -1
        if self.ready:
            rfd, wfd = os.pipe()
            argv.append(f"--ready-fd={wfd}")
            fds.append(wfd)
        with open(self.log, "ab") as logf:
            self.proc = subprocess.Popen(argv + self.args, stdin=subprocess.DEVNULL, stdout=logf,
                                         stderr=subprocess.STDOUT, pass_fds=fds)
        if self.peer:
            self.peer.close()
            self.peer = None
        if self.ready:
            os.close(wfd)
            try:
                os.set_blocking(rfd, False)
                got = []

                def readable():
                    try:
                        b = os.read(rfd, 1)
                    except BlockingIOError:
                        return False
                    got.append(b)
                    return True

                c.wait(readable, "hotplugd readiness")
                if got[-1] != b"\n":
                    raise Fail(f"hotplugd exited before it was ready (status {self.proc.wait()})")
            finally:
                os.close(rfd)

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def send(self, *datagrams):
        """Write datagrams into the daemon's socket (waits while its buffer is full)."""
        for dg in datagrams:
            def sent():
                try:
                    self.sock.send(dg)
                    return True
                except socket.timeout:
                    return False
            self.case.wait(sent, "writing a datagram")

    def wait_log(self, pattern, what=None, count=1):
        rx = re.compile(pattern)
        self.case.wait(lambda: len(rx.findall(self.log_text())) >= count, what or f"log line /{pattern}/")

    def exited(self):
        return self.proc.poll() is not None

    def wait_exit(self):
        self.case.wait(self.exited, "hotplugd exit")
        return self.proc.returncode

    def stop(self):
        """SIGTERM; an orderly stop exits 0 (a sanitizer report or crash fails)."""
        if not self.exited():
            self.proc.send_signal(signal.SIGTERM)
        rc = self.wait_exit()
        if rc != 0:
            raise Fail(f"hotplugd exited with status {rc} after SIGTERM")

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.case.wait(self.exited, "hotplugd exit at cleanup", idle=min(IDLE, 10))
            except Fail:
                self.proc.kill()
            self.proc.wait()
        for s in (self.sock, self.peer):
            if s:
                s.close()


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def started_after(runs, a, b):
    """Run b started after run a ended."""
    return runs[b]["start"] >= runs[a]["end"]


def overlap(x, y):
    return x["start"] < y["end"] and y["start"] < x["end"]


# ---- the cases -----------------------------------------------------------------


def case_trust_switch(c):
    """The production daemon refuses a socketpair; the test build takes it."""
    agent = c.agent()
    d = Daemon(c, f"--agent={agent}", binary=env("HOTPLUGD"), log="production.log", ready=False)
    c.daemons.append(d)
    d.send(uevent(1, "add", "/devices/virtual/net/hpt0", "net"))  # waits in the socket
    d.start()
    c.wait(lambda: d.exited() or c.run_log() or "listening" in d.log_text(), "production hotplugd's answer")
    check(d.exited(), "production hotplugd took a socketpair as its uevent source")
    rc = d.proc.returncode
    check(rc == 1, f"production hotplugd with a socketpair exited {rc}, expected 1")
    check("is not a netlink socket; refused" in d.log_text(),
          "production hotplugd did not say why it refused the socketpair")
    check(not c.runs() and not c.run_log(), "production hotplugd ran an agent for a socketpair datagram")
    print("ok: production hotplugd refuses a socketpair (exit 1) and runs nothing")

    t = c.daemon(f"--agent={agent}", log="test.log")
    t.send(uevent(1, "add", "/devices/virtual/net/hpt0", "net"))
    c.wait(lambda: 1 in c.runs(), "the test build running the agent")
    check("test build: trusting every sender" in t.log_text(), "the test build did not say it trusts the socket")
    t.stop()
    print("ok: hotplugd-test adopts the socketpair and runs the agent")


def case_parent_child(c):
    """A child's add waits for its parent's; a parent's remove for its children's."""
    agent = c.agent(sleep_ms=200)
    d = c.daemon(f"--agent={agent}")
    d.send(uevent(1, "add", PCI, "pci", "PCI_SLOT_NAME=0000:00:1f.6"),
           uevent(2, "add", NET, "net", "INTERFACE=enp0s31f6", "IFINDEX=2"),
           uevent(3, "add", RX, "queues"),
           uevent(4, "add", TX, "queues"),
           uevent(5, "remove", RX, "queues"),
           uevent(6, "remove", TX, "queues"),
           uevent(7, "remove", NET, "net", "INTERFACE=enp0s31f6", "IFINDEX=2"),
           uevent(8, "remove", PCI, "pci", "PCI_SLOT_NAME=0000:00:1f.6"))
    c.wait(lambda: len(c.runs()) == 8, "8 agent runs")
    r = c.runs()
    for parent, child in [(1, 2), (2, 3), (2, 4), (3, 5), (4, 6), (5, 7), (6, 7), (7, 8)]:
        check(started_after(r, parent, child),
              f"SEQNUM {child} ({r[child]['vars']['ACTION']} {r[child]['vars']['DEVPATH']}) started before "
              f"SEQNUM {parent} ({r[parent]['vars']['ACTION']} {r[parent]['vars']['DEVPATH']}) finished")
    check(r[2]["vars"].get("PHYSDEVPATH") == PCI, f"net add lacks PHYSDEVPATH={PCI} from the fixture sysfs")
    check(sorted(c.run_log()) == list(range(1, 9)), f"runs.log: {c.run_log()}, expected each of 1..8 once")
    d.stop()
    print("ok: children's adds after their parent's, the parent's remove after its children's")


# A HID device absent from the fixture sysfs (as gone when a late reader gets to it), and its input device.
HID_LATE = "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0009"
INPUT_LATE = HID_LATE + "/input/input9"


def case_probe_late(c):
    """A keyboard plugged and unplugged while hotplugd is stopped (issue 39 item 6b): the input device, made
    by the HID device's probe and read before the bind that names hid-generic, when neither directory
    exists any more, gets PHYSDEVDRIVER=hid-generic from the bind (30 unrelated events between the child
    and the bind: as many as the socketpair takes besides, with its default send buffer).  Then a child
    whose parent's bind never comes: it waits for nothing long (the socket read to the end releases it)
    and gets no PHYSDEVDRIVER."""
    agent = c.agent()
    d = c.daemon(f"--agent={agent}")
    fill = [uevent(3 + i, "change", f"/devices/virtual/misc/fill{i}", "misc") for i in range(30)]
    d.proc.send_signal(signal.SIGSTOP)
    try:
        d.send(uevent(1, "add", HID_LATE, "hid", "HID_ID=0003:0000046D:0000C31C"),
               uevent(2, "add", INPUT_LATE, "input", 'NAME="K"'), *fill,
               uevent(33, "bind", HID_LATE, "hid", "DRIVER=hid-generic", "HID_ID=0003:0000046D:0000C31C"),
               uevent(34, "remove", INPUT_LATE, "input", 'NAME="K"'),
               uevent(35, "unbind", HID_LATE, "hid", "HID_ID=0003:0000046D:0000C31C"),
               uevent(36, "remove", HID_LATE, "hid", "HID_ID=0003:0000046D:0000C31C"))
    finally:
        d.proc.send_signal(signal.SIGCONT)
    c.wait(lambda: len(c.runs()) == 36, "36 agent runs")
    r = c.runs()
    child = r[2]["vars"]
    check(child.get("PHYSDEVPATH") == HID_LATE, f"input add: PHYSDEVPATH {child.get('PHYSDEVPATH')}")
    check(child.get("PHYSDEVDRIVER") == "hid-generic",
          f"input add read before the bind: PHYSDEVDRIVER {child.get('PHYSDEVDRIVER')}, expected hid-generic")
    check(r[34]["vars"].get("PHYSDEVDRIVER") == "hid-generic", "input remove: no PHYSDEVDRIVER=hid-generic")
    check("PHYSDEVDRIVER" not in r[1]["vars"], "the HID device's add (before its probe) has a PHYSDEVDRIVER")
    check(r[33]["vars"].get("PHYSDEVDRIVER") == "hid-generic", "the bind has no PHYSDEVDRIVER=hid-generic")

    t0 = time.monotonic()
    d.send(uevent(37, "add", HID_LATE, "hid", "HID_ID=0003:0000046D:0000C31C"),
           uevent(38, "add", INPUT_LATE, "input", 'NAME="K"'))
    c.wait(lambda: len(c.runs()) == 38, "38 agent runs")
    took = time.monotonic() - t0
    r = c.runs()
    check("PHYSDEVDRIVER" not in r[38]["vars"], f"input add without a bind: PHYSDEVDRIVER {r[38]['vars']}")
    check(took < 2, f"the input add without a bind ran {took:.1f} s after it was sent")
    d.stop()
    print(f"ok: the child read before its parent's bind got the bind's driver; without a bind it ran "
          f"{took * 1000:.0f} ms after it was sent, without PHYSDEVDRIVER")


def case_parallel(c):
    """Unrelated devices run at once: each agent waits until all three have started."""
    agent = c.agent(sleep_ms=100)
    os.mkdir(c.path("started"))
    c.write(c.path("barrier"), "3\n")
    d = c.daemon(f"--agent={agent}")
    d.send(*[uevent(i + 1, "add", f"/devices/virtual/net/hpp{i}", "net", f"INTERFACE=hpp{i}") for i in range(3)])
    # Agents run one at a time would wait at the barrier with nothing moving: the wait fails.
    c.wait(lambda: len(c.runs()) == 3, "3 agent runs meeting at the barrier")
    r = c.runs()
    check(all(overlap(r[a], r[b]) for a, b in [(1, 2), (1, 3), (2, 3)]), "runs of unrelated devices did not overlap")
    d.stop()
    print("ok: 3 unrelated devices ran at once (each agent saw the others start)")


def max_overlap(runs):
    """Most runs in progress at one moment."""
    edges = sorted([(r["start"], 1) for r in runs.values()] + [(r["end"], -1) for r in runs.values()],
                   key=lambda e: (e[0], e[1]))
    now = most = 0
    for _, d in edges:
        now += d
        most = max(most, now)
    return most


def limit_line(c):
    out = c.tool("status")[1]
    m = re.search(r"^Limit: +(\d+) agent\(s\) at once \((\S+)", out, re.M)
    check(m, f"status has no Limit line:\n{out}")
    return int(m.group(1)), m.group(2)


def case_concurrency(c):
    """concurrency=auto: awake agents learnt (1 to the CPUs and one), plus a slot for each agent seen asleep;
    a number pins it."""
    agent = c.agent(sleep_ms=100)
    d = c.daemon(f"--agent={agent}", "--max-children=12")
    limit, how = limit_line(c)
    awake = min((os.cpu_count() or 1) + 1, 12)
    check((limit, how) == (1, "adaptive"),
          f"a fresh daemon's limit is {limit} ({how}), expected 1 (adaptive: one awake agent until more pay)")
    n = 120
    d.send(*[uevent(i + 1, "add", f"/devices/virtual/net/hpc{i}", "net", f"INTERFACE=hpc{i}") for i in range(n)])
    c.wait(lambda: len(c.runs()) == n, f"{n} agent runs")
    most = max_overlap(c.runs())
    limit, how = limit_line(c)
    # Agents that sleep do not hold a CPU: each one seen asleep lets one more start, up to the bound.
    check(most >= 8, f"at most {most} agents ran at once; sleeping agents should have climbed towards 12")
    check(most <= 12, f"{most} agents ran at once, above --max-children=12")
    check(how == "adaptive", f"limit {limit} ({how}) after {n} sleeping agents")
    d.stop()
    print(f"ok: adaptive: up to {most} sleeping agents at once (limit {limit}, {how})")

    shutil.rmtree(c.path("runs"))
    os.mkdir(c.path("runs"))
    d = c.daemon(f"--agent={agent}", "--max-children=12", "--concurrency=3")
    d.send(*[uevent(i + 1, "add", f"/devices/virtual/net/hpc{i}", "net", f"INTERFACE=hpc{i}") for i in range(30)])
    c.wait(lambda: len(c.runs()) == 30, "30 agent runs")
    most = max_overlap(c.runs())
    check(most == 3, f"--concurrency=3: {most} agents ran at once")
    limit, how = limit_line(c)
    check((limit, how) == (3, "fixed"), f"--concurrency=3: status says {limit} ({how})")
    d.stop()
    print("ok: --concurrency=3 pins it: exactly 3 at once, status says fixed")

    # Agents that compute never count as asleep, also while one waits in a run
    # queue for a CPU (its schedstat counters stand still then): the limit stays
    # at the CPUs and one.  One misjudged look is tolerated; taking queued
    # agents for sleeping ones climbs towards max-children.
    shutil.rmtree(c.path("runs"))
    os.mkdir(c.path("runs"))
    c.write(c.path("sleep_ms"), "0\n")
    c.write(c.path("spin_ms"), "150\n")
    d = c.daemon(f"--agent={agent}", "--max-children=12")
    n = 4 * awake
    d.send(*[uevent(i + 1, "add", f"/devices/virtual/net/hpc{i}", "net", f"INTERFACE=hpc{i}") for i in range(n)])
    c.wait(lambda: len(c.runs()) == n, f"{n} agent runs")
    most = max_overlap(c.runs())
    check(most <= awake + 1, f"{most} CPU-bound agents ran at once; auto allows {awake} at most (the CPUs and one)")
    d.stop()
    os.unlink(c.path("spin_ms"))
    print(f"ok: adaptive: CPU-bound agents at most {most} at once (the CPUs and one: {awake})")


def case_strict(c):
    """--ordering strict: one agent at a time, in SEQNUM order, even for unrelated devices."""
    agent = c.agent(sleep_ms=50)
    d = c.daemon(f"--agent={agent}", "--ordering=strict")
    seq = 0
    for action in ("add", "change"):
        for i in range(3):
            seq += 1
            d.send(uevent(seq, action, f"/devices/virtual/net/hps{i}", "net", f"INTERFACE=hps{i}"))
    c.wait(lambda: len(c.runs()) == 6, "6 agent runs")
    r = c.runs()
    for s in range(2, 7):
        check(started_after(r, s - 1, s), f"strict: SEQNUM {s} started before SEQNUM {s - 1} finished")
    check(c.run_log() == list(range(1, 7)), f"strict: runs finished in the order {c.run_log()}")
    d.stop()
    print("ok: strict ran 6 events of 3 devices one at a time in SEQNUM order")


def case_timeout(c):
    """--timeout: SIGTERM to a hanging agent; --kill-grace: SIGKILL when it ignores SIGTERM."""
    agent = c.agent()
    c.write(c.path("hang"), "")
    d = c.daemon(f"--agent={agent}", "--timeout=1", "--kill-grace=1")
    d.send(uevent(1, "change", "/devices/virtual/net/hph0", "net"))
    d.wait_log(r"SEQNUM=1 .*timed out after 1s, sending SIGTERM", "SIGTERM at the timeout")
    d.wait_log(r"SEQNUM=1 .*status=signal 15", "the hanging agent ending by SIGTERM")
    print("ok: hanging agent terminated at the timeout")

    os.unlink(c.path("hang"))
    c.write(c.path("hang_hard"), "")
    d.send(uevent(2, "change", "/devices/virtual/net/hph0", "net"))
    d.wait_log(r"SEQNUM=2 .*still running, sending SIGKILL", "SIGKILL after the grace")
    d.wait_log(r"SEQNUM=2 .*status=signal 9", "the agent ignoring SIGTERM ending by SIGKILL")
    check(not pids_running_from(c.dir), "agent process left behind after SIGKILL")
    print("ok: agent ignoring SIGTERM killed after the grace, nothing left behind")

    os.unlink(c.path("hang_hard"))
    d.send(uevent(3, "change", "/devices/virtual/net/hph0", "net"))
    c.wait(lambda: 3 in c.runs(), "the next event running")
    st = c.status()
    check(st["failed"] == 2, f"status: {st['failed']} failed, expected 2")
    d.stop()
    print("ok: the daemon went on with the next event")


def case_crash(c):
    """An agent killed by a signal is logged with it; the daemon goes on."""
    agent = c.agent()
    c.write(c.path("crash"), "")
    d = c.daemon(f"--agent={agent}")
    d.send(uevent(1, "add", "/devices/virtual/net/hpc0", "net"))
    d.wait_log(r"SEQNUM=1 .*status=signal 6", "the crashing agent logged with its signal")
    os.unlink(c.path("crash"))
    d.send(uevent(2, "change", "/devices/virtual/net/hpc0", "net"))
    c.wait(lambda: 2 in c.runs(), "the next event running after a crash")
    check(1 not in c.runs(), "the crashing agent recorded a run")
    d.stop()
    print("ok: crashing agent logged with signal 6, the next event ran")


def case_missing_agent(c):
    """A missing agent: one clear line for many events; the daemon survives and resumes."""
    agent = c.path("agent")
    os.makedirs(c.path("runs"))
    d = c.daemon(f"--agent={agent}")
    d.send(*[uevent(i, "change", f"/devices/virtual/net/hpm{i}", "net") for i in range(1, 6)])
    d.wait_log(r"cannot execute agent .*reported once", "the missing agent reported")
    c.settle()
    n = d.log_text().count("cannot execute agent")
    check(n == 1, f"missing agent reported {n} times, expected once")
    st = c.status()
    check(st["received"] == 5 and st["queued"] == 0 and st["running"] == 0,
          f"status after 5 events with a missing agent: {st}")
    os.symlink(c.agent_dump(), agent)
    d.send(uevent(6, "change", "/devices/virtual/net/hpm6", "net"))
    c.wait(lambda: 6 in c.runs(), "an event running once the agent exists")
    d.wait_log(r"agent .* can be executed again", "the agent's return logged")
    d.stop()
    print("ok: missing agent reported once; the daemon survived and ran the next event")


def case_agent_trust(c):
    """An agent missing at start is checked by the trust rule before every spawn until it passes: planted in
    a directory others can write, it never runs; once that directory is trusted, it runs."""
    late = c.path("late")
    agent = os.path.join(late, "agent")
    os.makedirs(c.path("runs"))
    d = c.daemon(f"--agent={agent}")
    d.send(uevent(1, "change", "/devices/virtual/net/hpt1", "net"))
    d.wait_log(r"cannot execute agent .*reported once", "the missing agent reported")
    os.mkdir(late)
    os.chmod(late, 0o777)
    os.symlink(c.agent_dump(), agent)
    d.send(*[uevent(i, "change", f"/devices/virtual/net/hpt{i}", "net") for i in range(2, 5)])
    d.wait_log(rf"agent {re.escape(agent)}: in a directory others can write \(mode 0777.*refusing to run it",
               "the agent in a directory others can write refused")
    c.settle()
    check(not c.runs(), f"an agent in a directory others can write ran: {sorted(c.runs())}")
    n = d.log_text().count("refusing to run it")
    check(n == 1, f"the refused agent reported {n} times, expected once")
    os.chmod(late, 0o755)
    d.send(uevent(5, "change", "/devices/virtual/net/hpt5", "net"))
    c.wait(lambda: 5 in c.runs(), "the agent running once its directory is trusted")
    check(sorted(c.runs()) == [5], f"runs: {sorted(c.runs())}, expected only event 5")
    # Once it passed it is not checked per event, but an exec that finds it gone makes it checked again:
    # what comes in its place in a directory others can write (by root's mistake here) does not run.
    os.unlink(agent)
    os.chmod(late, 0o777)
    d.send(uevent(6, "change", "/devices/virtual/net/hpt6", "net"))
    d.wait_log(r"SEQNUM=6 .*cannot execute agent", "the vanished agent reported")
    os.symlink(c.agent_dump(), agent)
    d.send(uevent(7, "change", "/devices/virtual/net/hpt7", "net"))
    d.wait_log(r"refusing to run it", "the agent put back where others can write refused", count=2)
    c.settle()
    check(sorted(c.runs()) == [5], f"runs: {sorted(c.runs())}, expected only event 5")
    d.stop()
    print("ok: an agent missing at start was refused while others could write its directory, then ran; "
          "gone and put back there, it was refused again")


def case_reload(c):
    """Reload (hotplugctl reload, then SIGHUP) during a burst: every event runs exactly once."""
    a = c.agent("a", sleep_ms=30)
    b = c.agent("b", name="agent-b", sleep_ms=30)
    c.write(c.conf, f"agent = {a}\nordering = strict\n")
    d = c.daemon()
    dev = "/devices/virtual/net/hpr{}".format
    d.send(*[uevent(s, "change", dev(s % 4), "net") for s in range(1, 21)])
    c.write(c.conf, f"agent = {b}\nordering = strict\n")
    c.tool("reload")
    held = re.search(rf"configuration reloaded: agent {re.escape(b)}, .* (\d+) events held", d.log_text())
    check(held, "hotplugctl reload not logged")
    held = int(held.group(1))
    d.send(*[uevent(s, "change", dev(s % 4), "net") for s in range(21, 41)])
    c.wait(lambda: c.run_log("b"), "agent B running after the reload")
    c.write(c.conf, f"agent = {a}\nordering = strict\n")
    d.proc.send_signal(signal.SIGHUP)
    d.wait_log(r"configuration reloaded: agent " + re.escape(a) + r",", "the SIGHUP reload")
    # An agent others could have written is refused; the running configuration (A) stays.
    bad = c.path("bad")
    os.makedirs(bad)
    c.write(os.path.join(bad, "agent"), "#!/bin/sh\n")
    os.chmod(os.path.join(bad, "agent"), 0o775)
    c.write(c.conf, f"agent = {bad}/agent\nordering = strict\n")
    rc, out = c.tool("reload", check=False)
    check(rc != 0 and f"agent {bad}/agent: writable by group or others" in out,
          f"reload to a group-writable agent: exit {rc}: {out}")
    c.write(c.conf, f"agent = {a}\nordering = strict\n")
    d.send(*[uevent(s, "change", dev(s % 4), "net") for s in range(41, 61)])
    c.settle()
    ran_a, ran_b = c.run_log("a"), c.run_log("b")
    both = sorted(ran_a + ran_b)
    check(both == list(range(1, 61)),
          f"across two reloads: {len(both)} runs for 60 events; missing "
          f"{sorted(set(range(1, 61)) - set(both))}, repeated {sorted({s for s in both if both.count(s) > 1})}")
    # One of the events held at the reload was running; the others were queued and must run with B.
    check(held < 2 or any(s <= 20 for s in ran_b), f"{held} events held at the reload, none ran with the new agent")
    check(all(s <= 40 for s in ran_b), f"agent B ran after the SIGHUP reload back to A: {ran_b}")
    check(any(s > 40 for s in ran_a), "agent A not used after the SIGHUP reload")
    d.stop()
    print(f"ok: 60 events ran exactly once across two reloads ({held} held at the first; "
          f"{len(ran_a)} by A, {len(ran_b)} by B)")


def case_pause_resume(c):
    """hotplugctl pause: events queue and nothing starts; resume: they all run."""
    agent = c.agent()
    d = c.daemon(f"--agent={agent}")
    c.tool("pause")
    d.send(uevent(1, "add", PCI, "pci"), uevent(2, "add", NET, "net", "INTERFACE=enp0s31f6"),
           *[uevent(s, "add", f"/devices/virtual/net/hpq{s}", "net") for s in range(3, 6)])
    c.wait(lambda: c.status()["received"] == 5, "the daemon receiving 5 events while paused")
    st = c.status()
    check(st["paused"] and st["started"] == 0 and st["queued"] == 5, f"paused with 5 events: {st}")
    check(not c.runs() and not c.run_log(), "an agent ran while paused")
    c.tool("resume")
    c.settle()
    check(sorted(c.run_log()) == [1, 2, 3, 4, 5], f"after resume: runs {c.run_log()}, expected 1..5 once each")
    r = c.runs()
    check(started_after(r, 1, 2), "after resume the child started before its parent finished")
    check(not c.status()["paused"], "still paused after resume")
    d.stop()
    print("ok: 5 events queued while paused, none started; all ran after resume")


def case_settle(c):
    """hotplugctl settle returns only after every event sent has its agent finished."""
    agent = c.agent(sleep_ms=150)
    d = c.daemon(f"--agent={agent}")
    d.send(*[uevent(s, "change", NET, "net", "INTERFACE=enp0s31f6") for s in range(1, 5)],
           uevent(5, "add", "/devices/virtual/net/hpx0", "net"), uevent(6, "add", "/devices/virtual/net/hpx1", "net"))
    unfinished = 6 - len(c.runs())
    c.settle()
    r = c.runs()
    check(sorted(r) == [1, 2, 3, 4, 5, 6], f"settle returned with runs {sorted(r)} finished, expected 1..6")
    st = c.status()
    check(st["queued"] == 0 and st["running"] == 0 and st["finished"] == 6, f"status after settle: {st}")
    d.stop()
    print(f"ok: settle returned after all 6 agents finished ({unfinished} unfinished when it was called)")


def case_dry_run(c):
    """--dry-run: nothing is executed; what would run is logged, with the waits."""
    agent = c.agent()
    d = c.daemon(f"--agent={agent}", "--dry-run")
    # Paused while they arrive, so that the parent is still held when the
    # child is queued: a dry run finishes each event at once.
    c.tool("pause")
    d.send(uevent(1, "add", PCI, "pci"), uevent(2, "add", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(3, "add", "/devices/virtual/net/hpd0", "net"))
    c.wait(lambda: c.status()["received"] == 3, "the daemon receiving 3 events")
    c.tool("resume")
    d.wait_log(r"would run: " + re.escape(agent), "3 'would run' lines", count=3)
    log = d.log_text()
    for s, name in [(1, "pci"), (2, "net"), (3, "net")]:
        check(re.search(rf"SEQNUM={s} .*would run: {re.escape(agent)} {name} \[", log),
              f"no 'would run' line for SEQNUM {s} ({name})")
    check(re.search(r"SEQNUM=2 .*waited for SEQNUM=1 ", log), "the child's wait for its parent not logged")
    c.settle()
    st = c.status()
    check(st["started"] == 0, f"dry run started {st['started']} agents")
    check(not c.runs() and not c.run_log(), "the agent ran in a dry run")
    d.stop()
    print("ok: dry run logged 3 'would run' lines and the child's wait, executed nothing")


def case_dry_run_firmware(c):
    """--dry-run and a dry-run replay with the firmware loader on: the file is named, nothing is written."""
    agent = c.agent()
    sysfs = c.path("sysfs")
    shutil.copytree(env("FIXTURE_SYSFS"), sysfs, symlinks=True)
    fwroot = os.path.join(os.path.dirname(env("FIXTURE_SYSFS")), "firmware")
    fwdev = "/devices/pci0000:00/0000:00:1f.6/firmware/0000:00:1f.6"
    size = os.path.getsize(os.path.join(fwroot, "e1000e", "test.bin"))

    def device():
        with open(sysfs + fwdev + "/loading") as f, open(sysfs + fwdev + "/data", "rb") as g:
            return f.read(), g.read()
    before = device()
    want = (f"firmware e1000e/test.bin: would load {fwroot}/e1000e/test.bin ({size} bytes); "
            f"dry run, nothing written")
    opts = [f"--sysfs={sysfs}", "--firmware-loader", f"--firmware-path={fwroot}", f"--agent={agent}"]
    rec = c.path("fw.rec")
    d = c.daemon(*opts, "--dry-run", f"--record={rec}")
    d.send(uevent(1, "add", fwdev, "firmware", "FIRMWARE=e1000e/test.bin", "TIMEOUT=60"))
    c.settle()
    d.stop()
    time.sleep(0.2)  # a copier process, had one been started, has had its time
    check(device() == before, f"--dry-run wrote to the device: loading, data = {device()}")
    check(want in d.log_text(), f"the dry run does not name the firmware:\n{d.log_text()}")
    r = Daemon(c, f"--replay={rec}", "--speed=0", "--dry-run", "--control-socket=", *opts,
               binary=env("HOTPLUGD"), source=False, log="replay.log", ready=False)
    c.daemons.append(r)
    r.start()
    check(r.wait_exit() == 0, "the dry-run replay failed")
    check(want in r.log_text(), f"the dry-run replay does not name the firmware:\n{r.log_text()}")
    time.sleep(0.2)
    check(device() == before, f"the dry-run replay wrote to the device: loading, data = {device()}")
    check(not c.runs() and not c.run_log(), "an agent ran in a dry run")
    print(f"ok: --dry-run and a dry-run replay named the firmware ({size} bytes) and wrote nothing")


def case_firmware_fail_fast(c):
    """--firmware-loader and a name no directory has: once the agent is done, a request still open gets
    "loading" -1 (the driver's error at once, not after the fallback timeout); one an agent is loading is left
    alone; hotplugctl status counts the requests and lists the name once."""
    sysfs = c.path("sysfs")
    shutil.copytree(env("FIXTURE_SYSFS"), sysfs, symlinks=True)
    fwdev = "/devices/pci0000:00/0000:00:1f.6/firmware/0000:00:1f.6"
    loading = sysfs + fwdev + "/loading"
    os.makedirs(c.path("fw"))
    os.makedirs(c.path("seen"))
    agent = c.path("fwagent")
    # What the agent saw of "loading", and whether it was told the loader found nothing; busy.bin it starts
    # to load itself and leaves loading (as an agent that is still copying would).
    c.write(agent, "#!/bin/sh\n"
            f"{{ cat {sysfs}$DEVPATH/loading; echo \"missing=$HOTPLUGD_FIRMWARE_MISSING\"; }} "
            f">{c.path('seen')}/$SEQNUM.tmp && mv {c.path('seen')}/$SEQNUM.tmp {c.path('seen')}/$SEQNUM\n"
            f"[ \"$FIRMWARE\" != busy.bin ] || echo 1 >{sysfs}$DEVPATH/loading\n")
    os.chmod(agent, 0o755)

    def request(seqnum, name):
        c.write(loading, "0\n")
        d.send(uevent(seqnum, "add", fwdev, "firmware", f"FIRMWARE={name}", "TIMEOUT=60"))
        c.settle()
        with open(loading) as f, open(c.path("seen", str(seqnum))) as g:
            return f.read(), g.read().split()

    d = c.daemon(f"--sysfs={sysfs}", "--firmware-loader", f"--firmware-path={c.path('fw')}", f"--agent={agent}")
    now, seen = request(1, "missing.bin")
    check(seen == ["0", "missing=1"], f"the agent saw {seen}, expected loading 0 and HOTPLUGD_FIRMWARE_MISSING=1")
    check(now == "-1", f"loading is {now!r} after the agent, expected -1 (the request failed at once)")
    d.wait_log(r"SEQNUM=1 .*firmware missing\.bin: not in --firmware-path and no agent loaded it; request failed",
               "the failed request logged")
    now, seen = request(2, "busy.bin")
    check(now == "1\n", f"loading is {now!r} after an agent began loading, expected it left alone")
    now, seen = request(3, "missing.bin")
    check(now == "-1", f"loading is {now!r} after the second request, expected -1")
    st = json.loads(c.tool("status", "--json")[1])
    check(st["firmware_failed"] == 2 and st["firmware_missing"] == 1 and st["firmware_untracked"] == 0,
          f"status counts {st['firmware_failed']} failed, {st['firmware_missing']} names, expected 2 and 1")
    check(st["missing_firmware"] == [{"name": "missing.bin", "requests": 2}],
          f"status lists {st['missing_firmware']}")
    text = c.tool("status")[1]
    check("Firmware: 2 requests failed at once" in text and "  missing.bin (2 requests)" in text,
          f"hotplugctl status text:\n{text}")
    d.stop()
    print("ok: a missing firmware's request failed once its agent was done (twice, one name in status); "
          "one an agent was loading left alone")


def case_record_trust(c):
    """--record refuses a file others could write; --replay to agents refuses one, a dry run reads it."""
    agent = c.agent()
    rec = c.path("new.rec")
    d = c.daemon(f"--agent={agent}", f"--record={rec}")
    d.send(uevent(1, "add", NET, "net", "INTERFACE=enp0s31f6"), uevent(2, "change", NET, "net"))
    c.settle()
    d.stop()
    mode = os.stat(rec).st_mode & 0o7777
    check(mode == 0o600, f"--record created its file with mode {mode:04o}, not 0600")

    def refused(*args, log, want):
        r = Daemon(c, *args, "--control-socket=", binary=env("HOTPLUGD"), source=False, log=log, ready=False)
        c.daemons.append(r)
        r.start()
        rc = r.wait_exit()
        check(rc != 0 and want in r.log_text(), f"hotplugd {' '.join(args)}: exit {rc}, log:\n{r.log_text()}")
        return r

    # Appending to a recording others can write: refused, and the file is left as it was.
    os.chmod(rec, 0o666)
    size = os.path.getsize(rec)
    r = Daemon(c, f"--agent={agent}", f"--record={rec}", "--control-socket=", log="record-0666.log", ready=False)
    c.daemons.append(r)
    r.start()
    rc = r.wait_exit()
    check(rc != 0 and f"cannot open the recording {rec}: owned by another user or writable by group or others; "
          "refused" in r.log_text(), f"--record of a 0666 file: exit {rc}, log:\n{r.log_text()}")
    check(os.path.getsize(rec) == size, "the refused recording was written to")

    # Replaying it to agents: refused; a dry run reads it, with a warning.
    ragent = c.agent("replay")
    refused(f"--replay={rec}", "--speed=0", f"--agent={ragent}", log="replay-0666.log",
            want=f"refusing to replay {rec} to agents: writable by group or others (mode 0666")
    check(not c.runs("replay"), "a refused replay ran agents")
    r = Daemon(c, f"--replay={rec}", "--speed=0", "--dry-run", f"--agent={ragent}", "--control-socket=",
               binary=env("HOTPLUGD"), source=False, log="replay-dry.log", ready=False)
    c.daemons.append(r)
    r.start()
    check(r.wait_exit() == 0, f"dry-run replay of a 0666 recording failed:\n{r.log_text()}")
    check("read for a dry run only" in r.log_text() and "would run:" in r.log_text(),
          f"dry-run replay of a 0666 recording: no warning or nothing read:\n{r.log_text()}")
    # A trusted file in a directory others can write (not sticky): refused as well.
    open_dir = c.path("open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    os.chmod(rec, 0o600)
    moved = os.path.join(open_dir, "moved.rec")
    os.rename(rec, moved)
    refused(f"--replay={moved}", "--speed=0", f"--agent={ragent}", log="replay-open-dir.log",
            want=f"refusing to replay {moved} to agents: in a directory others can write")
    check(not c.runs("replay"), "a refused replay ran agents")
    # The path as given: a link others can repoint, though it leads to a trusted recording today.
    safe = c.path("safe")
    os.mkdir(safe, 0o755)
    kept = os.path.join(safe, "kept.rec")
    shutil.copyfile(moved, kept)
    os.chmod(kept, 0o600)
    link = os.path.join(open_dir, "link.rec")
    os.symlink(kept, link)
    refused(f"--replay={link}", "--speed=0", f"--agent={ragent}", log="replay-link.log",
            want=f"refusing to replay {link} to agents: in a directory others can write")
    check(not c.runs("replay"), "a replay through a link others can repoint ran agents")
    # A FIFO is refused at once, in a dry run too: never a daemon held in open() until SIGKILL.
    fifo = c.path("fifo.rec")
    os.mkfifo(fifo, 0o600)
    for extra in ([], ["--dry-run"]):
        refused(f"--replay={fifo}", "--speed=0", f"--agent={ragent}", *extra, log="replay-fifo.log",
                want=f"cannot replay {fifo}: not a regular file")
    if os.geteuid() == 0:
        os.chown(moved, 65534, 65534)
        os.chmod(open_dir, 0o755)
        refused(f"--record={moved}", f"--agent={agent}", log="record-other.log",
                want=f"cannot open the recording {moved}: owned by another user")
    print("ok: --record made a 0600 file and refused a 0666 one; --replay refused untrusted files, a dry run read one")


def case_replay(c):
    """--record, then --replay of the recording: the agent sees the same events."""
    agent = c.agent(sleep_ms=20)
    rec = c.path("live.rec")
    d = c.daemon(f"--agent={agent}", f"--record={rec}")
    d.send(uevent(1, "add", PCI, "pci", "PCI_SLOT_NAME=0000:00:1f.6", "MODALIAS=pci:v00008086d000015BCsv"),
           uevent(2, "add", NET, "net", "INTERFACE=enp0s31f6", "IFINDEX=2"),
           uevent(3, "add", RX, "queues"),
           uevent(4, "change", "/devices/virtual/net/hpy0", "net", "SYNTH_UUID=7b4c3c9e-6d7a-4e55-9a61-3f0c2d1e8a90",
                  "SYNTH_ARG_NOTE=two words"),
           uevent(5, "remove", RX, "queues"),
           uevent(7, "remove", NET, "net", "INTERFACE=enp0s31f6", "IFINDEX=2"))  # 6: a gap
    c.settle()
    d.stop()
    live = c.runs()
    check(sorted(live) == [1, 2, 3, 4, 5, 7], f"live run: runs {sorted(live)}")

    ragent = c.agent("replay")
    r = Daemon(c, f"--replay={rec}", "--speed=0", f"--agent={ragent}", "--control-socket=",
               binary=env("HOTPLUGD"), source=False, log="replay.log", ready=False)
    c.daemons.append(r)
    r.start()
    rc = r.wait_exit()
    check(rc == 0, f"replay exited {rc}")
    check("read to the end" in r.log_text(), "replay did not reach the end of the recording")
    for log in (d, r):
        check("SEQNUM gap: 6 missing" in log.log_text(), f"{os.path.basename(log.log)}: the gap at 6 not logged")
    again = c.runs("replay")
    check(sorted(again) == sorted(live), f"replay ran {sorted(again)}, live {sorted(live)}")
    for s in live:
        check(again[s]["argv1"] == live[s]["argv1"], f"SEQNUM {s}: argv[1] {again[s]['argv1']} != {live[s]['argv1']}")
        check(again[s]["env"] == live[s]["env"],
              f"SEQNUM {s}: replayed environment differs:\n  live   {live[s]['env']}\n  replay {again[s]['env']}")
    for parent, child in [(1, 2), (2, 3), (3, 5), (5, 7)]:
        check(again[child]["start"] >= again[parent]["end"], f"replay: SEQNUM {child} started before {parent} ended")
    print(f"ok: replay ran the {len(live)} recorded events with the same argv and environment, in order")


def case_replay_record(c):
    """--record during --replay: the new recording holds the datagrams beside the runs; timeline shows both."""
    agent = c.agent()
    rec = c.path("live.rec")
    d = c.daemon(f"--agent={agent}", f"--record={rec}")
    d.send(uevent(1, "add", PCI, "pci", "PCI_SLOT_NAME=0000:00:1f.6"),
           uevent(2, "add", NET, "net", "INTERFACE=enp0s31f6", "IFINDEX=2"),
           uevent(3, "add", RX, "queues"))
    c.settle()
    d.stop()
    again = c.path("again.rec")
    # A dry run records what it read, and no agent runs.
    for name, runs, extra in (("agents", 3, [f"--agent={c.agent('replay')}"]),
                              ("dry", 0, ["--dry-run", f"--agent={agent}"])):
        if os.path.exists(again):
            os.unlink(again)
        r = Daemon(c, f"--replay={rec}", "--speed=0", f"--record={again}", "--control-socket=", *extra,
                   binary=env("HOTPLUGD"), source=False, log=f"replay-{name}.log", ready=False)
        c.daemons.append(r)
        r.start()
        check(r.wait_exit() == 0, f"replay ({name}) with --record failed:\n{r.log_text()}")
        out = subprocess.run([env("HOTPLUGCTL"), "timeline", again, "--text"], capture_output=True, text=True)
        check(out.returncode == 0, f"timeline of the replay's recording: exit {out.returncode}: {out.stderr}")
        text = out.stdout
        check("(null)" not in text, f"timeline prints (null):\n{text}")
        check("event not in recording" not in text, f"the replay's recording lacks its datagrams:\n{text}")
        check(re.search(rf"^{runs} agent run\(s\), 3 event\(s\)", text, re.M),
              f"the replay's recording ({name}): not {runs} runs of 3 events:\n{text}")
        for lane in (PCI, NET, RX):
            check(lane[-24:] in text, f"the replay's recording ({name}): no lane for {lane}:\n{text}")
    print("ok: a recording made during a replay holds the datagrams and the runs; timeline shows no (null)")


def datagram(seqnum, action, devpath, subsystem, *extra):
    """uevent() with bytes values: each extra is (KEY, bytes)."""
    keys = [(b"ACTION", action.encode()), (b"DEVPATH", devpath.encode()), (b"SUBSYSTEM", subsystem.encode())]
    keys += [(k.encode(), v) for k, v in extra] + [(b"SEQNUM", str(seqnum).encode())]
    return keys, f"{action}@{devpath}\0".encode() + b"".join(k + b"=" + v + b"\0" for k, v in keys)


class Monitor:
    """hotplugctl monitor ARGS... in the background, its stdout in a file of the case."""

    def __init__(self, case, name, *args):
        self.case, self.args = case, args
        self.out = case.path(f"monitor-{name}.out")
        e = dict(os.environ, HOTPLUGCTL_SOCKET=case.socket)
        with open(self.out, "wb") as f:
            self.proc = subprocess.Popen([env("HOTPLUGCTL"), "monitor", *args], env=e, stdin=subprocess.DEVNULL,
                                         stdout=f, stderr=subprocess.STDOUT)

    def data(self):
        with open(self.out, "rb") as f:
            return f.read()

    def json(self):
        """Every line parsed by the json module (the whole output must be JSON lines)."""
        import json
        text = self.data().decode("utf-8")  # strict: the output is UTF-8
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line, object_pairs_hook=unique_keys))
            except ValueError as e:
                raise Fail(f"monitor {' '.join(self.args)}: not JSON ({e}): {line!r}")
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()


def unique_keys(pairs):
    """An object of the json module that refuses a repeated member name."""
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"repeated member names in {keys}")
    return dict(pairs)


def json_bytes(v):
    """A value of hotplugctl's JSON: a string (UTF-8) or an array of byte values."""
    if isinstance(v, list):
        check(all(isinstance(b, int) and 0 <= b <= 255 for b in v), f"byte array holds {v}")
        check(not is_utf8(bytes(v)), f"valid UTF-8 {bytes(v)!r} written as a byte array")
        return bytes(v)
    check(isinstance(v, str), f"{v!r} is neither a string nor a byte array")
    return v.encode("utf-8")


def is_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def agent_env(c, seqnum):
    """The environment the recording agent got, as [(KEY, bytes)] in its order."""
    with open(c.path("runs", f"{seqnum}.agent"), "rb") as f:
        lines = f.read().split(b"\n")
    out = []
    for line in lines:
        if line.startswith(b"env:"):
            raw = re.sub(rb"\\(.)", lambda m: b"\n" if m.group(1) == b"n" else m.group(1), line[4:])
            k, v = raw.split(b"=", 1)
            out.append((k.decode(), v))
    return out


# Values that JSON and the terminal must carry exactly: non-ASCII, control
# characters, quotes, digits-only text, bytes that are not UTF-8, and one
# value long enough to be cut across several control records.
AWKWARD = [("NOTE", "café".encode()), ("WHERE", "日本".encode()), ("NL", b"one\ntwo"), ("TAB", b"a\tb"),
           ("QUOTE", b'say "hi"'), ("BSLASH", b"back\\slash"), ("ZEROS", b"007"), ("ONEDOT", b"1."),
           ("NUM", b"42"), ("BAD", b"ok\xff\xfe\xc3"), ("EMPTY", b""), ("ESC", b"\x1b[31m\x7f"),
           ("LONG", "é".encode() * 1500)]


def start_monitors(c, d, views):
    """Start one monitor per view and wait until each shows an event (warm-up events, SEQNUM 1, 2, ...)."""
    mons = {name: Monitor(c, name, *args) for name, args in views.items()}
    seq = [0]

    def all_listening():
        for m in mons.values():
            if m.proc.poll() is not None:
                raise Fail(f"monitor {' '.join(m.args)} exited {m.proc.returncode}: {m.data()!r}")
        if all(m.data() for m in mons.values()):
            return True
        seq[0] += 1
        d.send(uevent(seq[0], "change", "/devices/virtual/net/hpw0", "net"))
        return False

    c.wait(all_listening, "every monitor showing an event")
    return mons, seq[0]


def case_monitor_json(c):
    """monitor --json/-p/--processed and status --json: exact bytes, kernel order, typed numbers."""
    agent = c.agent()
    d = c.daemon(f"--agent={agent}")
    mons, warm = start_monitors(c, d, {
        "json": ["--json"], "prop-json": ["-p", "--json"], "proc-json": ["--processed", "-p", "--json"],
        "prop": ["-p"], "proc": ["--processed", "--property"]})
    s = warm + 1
    keys, dg = datagram(s, "add", NET, "net", *AWKWARD)
    d.send(dg, uevent(s + 2, "change", "/devices/virtual/net/hpw0", "net"))  # s + 1: a gap
    c.wait(lambda: os.path.exists(c.path("runs", f"{s + 2}.agent")), "the agent runs for the events")
    for m in mons.values():
        c.wait(lambda m=m: b'"kind":"finished","seqnum":%d' % (s + 2) in m.data() or
               re.search(rb"^FINISHED .* %d " % (s + 2), m.data(), re.M) or
               (not m.args.count("--processed") and str(s + 2).encode() in m.data()),
               f"monitor {' '.join(m.args)} showing SEQNUM {s + 2}")
    for m in mons.values():
        m.stop()

    # --json: one object per line, typed by the protocol.
    got = {(o["kind"], o.get("seqnum")): o for o in mons["json"].json()}
    r = got[("received", s)]
    check(isinstance(r["seqnum"], int) and isinstance(r["time"], float), f"received: numbers are not numbers: {r}")
    check((r["action"], r["devpath"], r["subsystem"], r["verdict"]) == ("add", NET, "net", "next"), f"received: {r}")
    check("event" not in r, "monitor --json without -p carries the event's properties")
    check(got[("gap", None)]["first"] == s + 1 and got[("gap", None)]["count"] == 1, f"gap: {got[('gap', None)]}")
    print("ok: monitor --json: typed fields, the gap as numbers")

    # -p --json: the event's keys in the kernel's order, each value exactly the bytes sent.
    r = {(o["kind"], o.get("seqnum")): o for o in mons["prop-json"].json()}[("received", s)]
    ev = r["event"]
    check(list(ev) == [k.decode() for k, _ in keys], f"-p --json: keys {list(ev)}, sent {[k for k, _ in keys]}")
    for k, v in keys:
        check(json_bytes(ev[k.decode()]) == v, f"-p --json: {k.decode()} came back as {ev[k.decode()]!r}, sent {v!r}")
    for k in ("ZEROS", "ONEDOT", "NUM", "SEQNUM"):
        check(isinstance(ev[k], str), f"-p --json: {k}={ev[k]!r} is not a string")
    check(isinstance(ev["BAD"], list) and isinstance(ev["NOTE"], str), "-p --json: BAD not bytes or NOTE not text")
    print(f"ok: monitor -p --json: {len(keys)} keys in kernel order, every value the bytes sent "
          f"(a {len(AWKWARD[-1][1])}-byte value across records)")

    # --processed -p --json: handler additions, and the agent's argv and environment as it got them.
    objs = {(o["kind"], o.get("seqnum")): o for o in mons["proc-json"].json()}
    check(list(objs[("received", s)]["event"]) == [k.decode() for k, _ in keys], "--processed -p: event keys")
    added = objs[("queued", s)]["handlers"]
    check(added.get("INTERFACE") == "enp0s31f6" and added.get("PHYSDEVPATH") == PCI,
          f"--processed -p: handler additions {added}")
    check(not set(added) & {"NOTE", "ACTION", "SEQNUM"}, f"--processed -p: unchanged kernel keys as additions: {added}")
    st = objs[("started", s)]
    check(st["argv"] == [agent, "net"], f"--processed -p: argv {st['argv']}")
    got_env = [(k, json_bytes(v)) for k, v in st["env"].items()]
    check(got_env == agent_env(c, s),
          f"--processed -p: env differs from the agent's:\n  monitor {got_env}\n  agent   {agent_env(c, s)}")
    check(isinstance(st["pid"], int) and isinstance(objs[("finished", s)]["duration_us"], int), "pid/duration types")
    print(f"ok: monitor --processed -p --json: {len(added)} handler additions, argv and the "
          f"{len(got_env)} variables the agent got")

    # -p as text: the event's line, every KEY=value in kernel order, a blank line.
    text = mons["prop"].data().decode("utf-8")
    m = re.search(rf"^RECEIVED .* {s} +add {re.escape(NET)} \(net\)\n((?:.+\n)+)\n", text, re.M)
    check(m, f"monitor -p: no block for SEQNUM {s}:\n{text}")
    lines = m.group(1).splitlines()
    check([ln.split("=", 1)[0] for ln in lines] == [k.decode() for k, _ in keys],
          f"monitor -p: keys {[ln.split('=', 1)[0] for ln in lines]}")
    shown = dict(ln.split("=", 1) for ln in lines)
    want = {"NOTE": "café", "WHERE": "日本", "NL": "one\\x0atwo", "TAB": "a\\x09b", "QUOTE": 'say "hi"',
            "BSLASH": "back\\x5cslash", "ZEROS": "007", "BAD": "ok\\xff\\xfe\\xc3", "EMPTY": "",
            "ESC": "\\x1b[31m\\x7f"}
    for k, v in want.items():
        check(shown[k] == v, f"monitor -p: {k}={shown[k]!r}, expected {v!r}")
    print("ok: monitor -p: every key in kernel order, text as sent, control and invalid bytes as \\xNN")

    text = mons["proc"].data().decode("utf-8")
    m = re.search(rf"^QUEUED .* {s} +{re.escape(NET)}\n((?:.+\n)*)\n", text, re.M)
    check(m and f"PHYSDEVPATH={PCI}" in m.group(1).splitlines(), f"monitor --processed -p: handler block:\n{text}")
    m = re.search(rf"^STARTED .* {s} +pid \d+: .*\n((?:.+\n)+)\n", text, re.M)
    check(m, f"monitor --processed -p: no STARTED block for {s}:\n{text}")
    block = m.group(1).splitlines()
    check(block[:4] == [f"argv[0]={agent}", "argv[1]=net", "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin"],
          f"monitor --processed -p: agent block starts {block[:4]}")
    check(f"PHYSDEVPATH={PCI}" in block and "NOTE=café" in block, "monitor --processed -p: agent env incomplete")
    print("ok: monitor --processed -p: handler additions and the agent's argv and environment")

    # status --json: one object, the same counters as the text.
    import json
    out = c.tool("status", "--json")[1]
    check(out.count("\n") == 1, f"status --json is not one line:\n{out}")
    try:
        sj = json.loads(out, object_pairs_hook=unique_keys)
    except ValueError as e:
        raise Fail(f"status --json: {e}: {out}")
    st = c.status()
    for k in ("processed", "received", "started", "finished", "failed", "queued", "running"):
        check(sj[k] == st[k], f"status --json {k}={sj[k]}, text says {st[k]}")
    check(sj["paused"] is False and isinstance(sj["resync"], bool), f"status --json flags: {sj}")
    check(isinstance(sj["ordering"], str) and sj["agents"] == [], f"status --json: {sj}")
    # Every counter is typed (control.h: all status fields but ordering=, concurrency= and after_udev=),
    # so a counter the daemon gains without an entry in ctlmsg_field_type() fails here.
    untyped = [k for k, v in sj.items()
               if k not in ("ordering", "concurrency", "after_udev", "load_modules", "recent_gaps", "agents",
                            "missing_firmware", "daemon")
               and not isinstance(v, (int, bool))]
    # Who answers: numbers typed, the start a time (float), names as text.
    dm = sj.get("daemon", {})
    check(isinstance(dm.get("pid"), int) and dm["pid"] > 0 and isinstance(dm.get("uptime_usec"), int)
          and isinstance(dm.get("since"), float) and isinstance(dm.get("version"), str)
          and dm.get("log_level") in ("err", "warning", "notice", "info", "debug"), f"status --json: daemon {dm}")
    # The test build's socket takes any sender: its events are not udevd's, nothing waits for udevd.
    check(sj.get("after_udev") == "off", f"status --json: after_udev {sj.get('after_udev')!r}, expected 'off'")
    # ... nor are its events looked at by load-modules (the kmod_* counters stay 0).
    check(str(sj.get("load_modules", "")).startswith("off") and sj.get("kmod_aliases") == 0,
          f"status --json: load_modules {sj.get('load_modules')!r}, kmod_aliases {sj.get('kmod_aliases')!r}")
    check(not untyped, f"status --json: counters written as text: {untyped}")
    check(sj["gaps"] == 1 and [(g["first"], g["count"], g["class"]) for g in sj["recent_gaps"]] ==
          [(s + 1, 1, "unexplained")], f"status --json gaps: {sj['gaps']}, {sj['recent_gaps']}")
    check(re.search(rf"^  {s + 1} \(unexplained\)$", c.tool("status")[1], re.M), "text status lacks the gap")
    print("ok: status --json: one object; counters, flags and gaps agree with the text")
    d.stop()


class FdStore:
    """The service manager's side of sd_notify and its fd store, for restarts of hotplugd-test.

    The uevent socket is a socketpair whose daemon end this side keeps across instances
    (what a socket unit does), so unread datagrams survive a crash; the handover journal
    comes back through FDSTORE=1 and is passed to the next instance as LISTEN_FDS=1
    with LISTEN_FDNAMES=queue."""

    def __init__(self, case):
        self.case = case
        self.path = case.path("notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.path)
        self.notify.setblocking(False)
        self.sock, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.settimeout(POLL)
        self.peer = os.dup2(peer.fileno(), 20)  # the daemon's end, at a fixed number
        peer.close()
        self.queue = None   # the stored journal memfd
        self.actions = []   # what was done to "queue" in the store, in order: "remove", "store"
        self.status = []    # STATUS= lines, oldest first
        self.ready = 0
        self.procs = []     # every instance started

    def poll(self):
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(self.notify, 4096, 4)
            except BlockingIOError:
                return
            text = msg.decode(errors="replace")
            lines = text.splitlines()
            if "FDSTOREREMOVE=1" in lines and "FDNAME=queue" in lines:
                self.actions.append("remove")
                if self.queue is not None:
                    os.close(self.queue)
                self.queue = None
            if "FDSTORE=1" in lines and "FDNAME=queue" in lines and fds:
                check(self.queue is None, "the journal was put into the fd store twice")
                self.actions.append("store")
                fd = fds.pop(0)
                self.queue = os.dup2(fd, 9)  # dash redirects single digits only
                os.close(fd)
            for fd in fds:
                os.close(fd)
            self.ready += text.count("READY=1")
            self.status += [line[7:] for line in text.splitlines() if line.startswith("STATUS=")]

    def start(self, log, *args):
        """One instance; returns its Popen once it said READY=1."""
        c = self.case
        argv = [env("HOTPLUGD_TEST"), "--log-target=stderr", f"--sysfs={env('FIXTURE_SYSFS')}",
                f"--handler-dir={c.path('handlers')}", f"--config={c.conf}", "--all",
                f"--control-socket={c.socket}", f"--listen-fd={self.peer}", *args]
        fds, pre = [self.peer], ""
        if self.queue is not None:
            fds.append(self.queue)
            pre = "exec 3<&9 9<&-; export LISTEN_PID=$$ LISTEN_FDS=1 LISTEN_FDNAMES=queue; "
        ready = self.ready
        with open(log, "ab") as logf:
            p = subprocess.Popen(["/bin/sh", "-c", pre + 'exec "$@"', "sh", *argv], stdin=subprocess.DEVNULL,
                                 stdout=logf, stderr=subprocess.STDOUT, pass_fds=fds,
                                 env=dict(os.environ, NOTIFY_SOCKET=self.path))
        self.procs.append(p)

        def up():
            dead = p.poll() is not None  # before reading: READY=1 may come just before a crash
            self.poll()
            if self.ready > ready:
                return True
            if dead:
                raise Fail(f"hotplugd exited with status {p.returncode} before READY=1")
            return False
        c.wait(up, "READY=1 on the notify socket")
        return p

    def send(self, *datagrams):
        for dg in datagrams:
            self.sock.send(dg)

    def stop(self, p):
        """SIGTERM to instance p, which must exit 0."""
        p.send_signal(signal.SIGTERM)
        self.case.wait(lambda: p.poll() is not None, "hotplugd exit")
        check(p.returncode == 0, f"hotplugd exited {p.returncode} after SIGTERM")

    def close(self):
        """Kill every instance still running (also after a failure)."""
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def case_poison(c):
    """A datagram that kills hotplugd: run once more at most after a restart, then set aside."""
    agent = c.agent()
    so = c.path("handlers", "abort.so")
    shutil.copy(env("HANDLER_ABORT"), so)
    os.chmod(so, 0o644)
    store = FdStore(c)
    try:
        p = store.start(c.path("1.log"), f"--agent={agent}")
        check(store.queue is not None, "hotplugd put no handover journal into the fd store")
        net = "/devices/virtual/net/{}".format
        store.send(uevent(1, "add", net("hpa"), "net"), uevent(2, "add", net("hppoison"), "net"),
                   *[uevent(s, "add", net(f"hpb{s}"), "net") for s in range(3, 7)])
        for n in (1, 2):
            c.wait(lambda: p.poll() is not None, f"instance {n} dying on SEQNUM=2")
            check(p.returncode in (-signal.SIGABRT, 128 + signal.SIGABRT),
                  f"instance {n} exited with {p.returncode}, not by SIGABRT")
            check(not (set(c.runs()) - {1}), f"instance {n} ran {sorted(c.runs())} before dying on 2")
            p = store.start(c.path(f"{n + 1}.log"), f"--agent={agent}", f"--record={c.path('rec')}")
        log = c.path("3.log")
        c.wait(lambda: set(c.runs()) == {1, 3, 4, 5, 6} or p.poll() is not None,
               "the third instance running the events after SEQNUM=2")
        check(p.poll() is None, f"the third instance died too (status {p.returncode}): the poison event "
              f"was not set aside")
        text = open(log, errors="replace").read()
        check(re.search(r"SEQNUM=2 .*DEVPATH=/devices/virtual/net/hppoison.*set aside", text) or
              re.search(r"set aside.*SEQNUM=2", text), f"no error line setting SEQNUM=2 aside:\n{text}")
        check("previous instance died processing SEQNUM=2 (try 1 of 2)" in open(c.path("2.log")).read(),
              "instance 2 did not say which datagram instance 1 died on")
        check(re.search(r"^Handover: .*, 1 set aside", c.tool("status")[1], re.M), "status lacks 1 set aside")
        c.wait(lambda: (store.poll(), any("1 set aside" in x for x in store.status))[1], "STATUS= with 1 set aside")
        store.send(uevent(7, "change", net("hpa"), "net"))
        c.wait(lambda: 7 in c.runs(), "an event after the set-aside one")
        check(2 not in c.runs(), "the poison event ran an agent")
        store.stop(p)
        rc, out = c.tool("timeline", "--text", c.path("rec"), check=False)
        check("set aside" in out, f"the recording lacks the set-aside event: {out}")
    finally:
        store.close()
    print("ok: a datagram killing hotplugd twice was set aside by the third instance; every later event ran")


def unreadable_journal():
    """A memfd with a journal header this version checks but cannot take over (its start is past any end)."""
    fd = os.memfd_create("hotplugd-queue", os.MFD_CLOEXEC)
    os.write(fd, b"HPDQUEUE" + struct.pack("=IIQQ", 3, 64, 2**64 - 1, 0) + bytes(32))
    return fd


def case_journal_unreadable(c):
    """A handed-back journal hotplugd cannot read is replaced in the fd store (removed, then the new one
    stored under the same name), so an event queued when hotplugd is killed still runs after the restart."""
    agent = c.agent(sleep_ms=3000)  # long enough to see SEQNUM=2 wait behind it on a busy machine
    store = FdStore(c)
    fd = unreadable_journal()
    store.queue = os.dup2(fd, 9)
    os.close(fd)
    try:
        p = store.start(c.path("1.log"), f"--agent={agent}")
        check("cannot read the handover journal; starting a new one" in open(c.path("1.log")).read(),
              "the unreadable journal was read")
        dev = "/devices/virtual/net/hpj"
        store.send(uevent(1, "add", dev, "net"), uevent(2, "change", dev, "net"))
        c.wait(lambda: (lambda st: st.get("running") == 1 and st.get("queued") == 1)(c.status()),
               "SEQNUM=1 running, SEQNUM=2 queued behind it")
        p.kill()
        p.wait()
        store.poll()
        p = store.start(c.path("2.log"), f"--agent={agent}")
        log = open(c.path("2.log"), errors="replace").read()
        check("took over 2 event(s)" in log, f"the instance after the crash took over nothing (the fd store "
              f"held {store.actions}):\n{log}")
        check(store.actions == ["remove", "store"], f"fd store: {store.actions}, expected the unreadable journal "
              f"removed, then the new one stored, once")
        c.wait(lambda: 2 in c.runs(), "the queued event running after the restart")
        store.stop(p)
    finally:
        store.close()
    print("ok: an unreadable journal was replaced in the fd store; a queued event survived SIGKILL")


USB = "/devices/pci0000:00/0000:00:14.0/usb1/1-9"
USB_IF = USB + "/1-9:1.0"

# A usb setup script of the era's kind: records its argv count and environment, and (on add) leaves a remover.
USB_SCRIPT = """#!/bin/sh
out={out}/$SEQNUM.{name}
{{ echo "argc=$#"; [ -e {runs}/$SEQNUM.agent ] && echo agent_done=1; env; }} >"$out.tmp" && mv "$out.tmp" "$out"
if [ "$ACTION" = add ] && [ -n "$REMOVER" ]; then
        printf '#!/bin/sh\\necho "$SEQNUM $ACTION" >{out}/remover.$SEQNUM\\n' >"$REMOVER"
        chmod 755 "$REMOVER"
fi
"""


def usb_runs(c):
    """{(SEQNUM, script): {VAR: value, "argc": n}} of the usb scripts' runs."""
    out = {}
    for n in os.listdir(c.path("usbruns")):
        if n.endswith(".tmp") or n.startswith("remover."):
            continue
        seq, name = n.split(".", 1)
        with open(c.path("usbruns", n)) as f:
            out[(int(seq), name)] = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
    return out


def case_usb_dispatch(c):
    """hotplug-dir: usb events run the matching usermap lines' scripts after the agent, once per device and
    module, never a blacklisted or untrusted one; a script's REMOVER runs on the device's remove."""
    hp = c.path("hotplug")
    os.makedirs(os.path.join(hp, "usb"))
    os.makedirs(c.path("usbruns"))
    for name in ("hpscript", "hpiface", "hpblack", "hpopen"):
        path = os.path.join(hp, "usb", name)
        c.write(path, USB_SCRIPT.format(out=c.path("usbruns"), runs=c.path("runs"), name=name))
        os.chmod(path, 0o755)
    os.chmod(os.path.join(hp, "usb", "hpopen"), 0o777)  # others could have written it: refused
    ids = "0x1234 0x5678 0x0000 0x0000 0x00 0x00 0x00"
    c.write(os.path.join(hp, "usb", "test.usermap"),
            "# module match_flags idVendor idProduct bcdLo bcdHi class sub proto iclass isub iproto info\n"
            f"hpscript 0x0003 {ids} 0x00 0x00 0x00 0x0\n"
            f"hpscript 0x0001 {ids} 0x00 0x00 0x00 0x0\n"  # the same module again: it runs once
            f"hpiface 0x0083 {ids} 0xff 0x00 0x00 0x0\n"   # interfaces of class 255
            f"hpblack 0x0003 {ids} 0x00 0x00 0x00 0x0\n"
            f"hpopen 0x0003 {ids} 0x00 0x00 0x00 0x0\n"
            "hpbad 0x0003 0x1234\n"
            f"hpnomatch 0x0003 0x1234 0x9999 0 0 0 0 0 0 0 0 0\n")
    c.write(os.path.join(hp, "blacklist"), "# not these\nhpblack\n")
    agent = c.agent()
    c.write(c.conf, f"agent = {agent}\nhotplug-dir = {hp}\n")
    d = c.daemon()
    d.wait_log(r"usb/test\.usermap:7: ", "the malformed usermap line reported")
    common = ("PRODUCT=1234/5678/100", "TYPE=0/0/0")
    d.send(uevent(1, "add", USB, "usb", "DEVTYPE=usb_device", *common, "BUSNUM=001", "DEVNUM=009"),
           uevent(2, "add", USB_IF, "usb", "DEVTYPE=usb_interface", *common, "INTERFACE=255/0/0"),
           uevent(3, "add", USB_IF.replace("1.0", "1.1"), "usb", "DEVTYPE=usb_interface", *common,
                  "INTERFACE=3/1/1"))
    c.settle()
    runs = usb_runs(c)
    check(sorted(runs) == [(1, "hpscript"), (2, "hpiface")],
          f"usb scripts run: {sorted(runs)}, expected hpscript for the device, hpiface for its class-255 interface")
    dev = runs[(1, "hpscript")]
    check(dev["argc"] == "0", f"a usb script got arguments: {dev['argc']}")
    # TYPE=usb: the agent's type, as linux-hotplug ran its scripts (the device's class is in the map's match).
    for k, v in (("ACTION", "add"), ("DEVPATH", USB), ("PRODUCT", "1234/5678/100"), ("TYPE", "usb"),
                 ("SUBSYSTEM", "usb")):
        check(dev.get(k) == v, f"the usb script's {k} is {dev.get(k)!r}, expected {v!r}")
    check(dev.get("DEVICE", "").endswith("/001/009"), f"the usb script's DEVICE: {dev.get('DEVICE')!r}")
    remover = dev.get("REMOVER", "")
    check(remover.startswith(c.path("ctl", "remover", "usb") + "/%devices%pci0000:00"),
          f"the usb script's REMOVER: {remover!r}")
    check(os.access(remover, os.X_OK), "the script's remover was not left")
    check(runs[(2, "hpiface")].get("INTERFACE") == "255/0/0", "hpiface ran without its INTERFACE")
    agent_runs = c.runs()
    check(sorted(agent_runs) == [1, 2, 3], f"the agent ran for {sorted(agent_runs)}, expected 1 2 3")
    check(dev.get("agent_done") == "1", "the usb script ran before the event's agent had finished")
    log = d.log_text()
    check("usb/hpopen" in log and "writable by group or others" in log, "the untrusted usb script not refused")
    # The device goes: its remover runs once, and is removed.
    d.send(uevent(4, "remove", USB_IF, "usb", "DEVTYPE=usb_interface", *common, "INTERFACE=255/0/0"),
           uevent(5, "remove", USB, "usb", "DEVTYPE=usb_device", *common, "BUSNUM=001", "DEVNUM=009"))
    c.wait(lambda: os.path.exists(c.path("usbruns", "remover.5")), "the remover running on the remove")
    c.settle()
    with open(c.path("usbruns", "remover.5")) as f:
        check(f.read().split() == ["5", "remove"], "the remover did not get the remove's environment")
    check(not os.path.exists(remover), "the remover was not removed after it ran")
    check(sorted(usb_runs(c)) == [(1, "hpscript"), (2, "hpiface")], "a usb script ran on a remove")
    # hotplugctl test shows the lines that match and what runs.
    fixture = "/devices/pci0000:00/0000:00:14.0/usb1/1-3"  # 05e3:0610, a hub
    rc, out = c.tool("test", f"--sysfs={env('FIXTURE_SYSFS')}", f"--hotplug-dir={hp}", "--agent", agent,
                     "--action=add", fixture, check=False)
    check("hotplug-dir " in out and "nothing runs" in out, f"hotplugctl test of an unmapped device: {out}")
    with open(os.path.join(hp, "usb", "test.usermap"), "a") as f:
        f.write("hpscript 0x0003 0x05e3 0x0610 0 0 0 0 0 0 0 0 0\nhpmissing 0x0001 0x05e3 0 0 0 0 0 0 0 0 0 0\n")
    rc, out = c.tool("test", f"--sysfs={env('FIXTURE_SYSFS')}", f"--hotplug-dir={hp}", "--agent", agent,
                     "--action=add", fixture, check=False)
    check(f"  usb/test.usermap:9 hpscript: runs {hp}/usb/hpscript" in out.splitlines()
          and f"  argv: {hp}/usb/hpscript" in out.splitlines(),
          f"hotplugctl test does not show the matching line and its script: {out}")
    # No script: the module of that name is loaded, if the machine has a modprobe.
    modprobe = next((p for p in ("/sbin/modprobe", "/usr/sbin/modprobe", "/bin/modprobe", "/usr/bin/modprobe")
                     if os.access(p, os.X_OK)), None)
    want = (f"  usb/test.usermap:10 hpmissing: no executable {hp}/usb/hpmissing: loads module hpmissing"
            if modprobe else f"  usb/test.usermap:10 hpmissing: no script {hp}/usb/hpmissing and no modprobe")
    check(any(line.startswith(want) for line in out.splitlines()), f"hotplugctl test: no line {want!r}: {out}")
    check(not modprobe or f"  argv: {modprobe} -b -q -- hpmissing" in out.splitlines(),
          f"hotplugctl test does not show modprobe's argv: {out}")
    d.stop()
    print("ok: hpscript ran once after the agent (ids on the device's event, no arguments, REMOVER), hpiface "
          "on its interface; blacklisted, untrusted, repeated and malformed lines did not act; the remover ran "
          "once on the remove and was removed")


# The real scripts of that era (tests/data/hotplug-era/fetch lays them out from Debian's archive).
ERA = os.path.join(os.environ.get("HOTPLUGD_TEST_DATA", "/var/cache/hotplugd-test-data"), "hotplug-era")

# The daemon in a mount namespace of its own, where /dev is a tmpfs holding the usb node an event names,
# and /etc/group has a scanner group: real scripts chown and chmod it there, nowhere else.
NS_WRAPPER = """#!/bin/sh
exec unshare -m sh -c '
        mount -t tmpfs -o mode=0755 tmpfs /dev && mknod -m 666 /dev/null c 1 3 &&
        mkdir -p /dev/bus/usb/001 && : >/dev/bus/usb/001/009 && : >/dev/bus/usb/001/010 &&
        chmod 0600 /dev/bus/usb/001/009 /dev/bus/usb/001/010 &&
        mount --bind {group} /etc/group && exec "$0" "$@"' {daemon} "$@"
"""

# Records, after the era's script of the same event (a later map line), what became of the node.
NODE_RECORDER = """#!/bin/sh
stat -c '%U:%G %a' "$DEVICE" >{out}/$SEQNUM.node.tmp && mv {out}/$SEQNUM.node.tmp {out}/$SEQNUM.node
"""


def case_usb_era_scripts(c):
    """Real scripts of the usermap era, unchanged (sane-backends' libusbscanner, dahdi's xpp_fxloader), run
    through hotplug-dir for the devices a usermap names: the scanner's node ends root:scanner 0660."""
    if os.geteuid() != 0:
        raise Skip("needs root (a mount namespace, a node chown'd to root:scanner)")
    if not os.path.isfile(os.path.join(ERA, "usb", "libusbscanner")):
        if os.environ.get("HOTPLUGD_TEST_REQUIRE_ROOT") == "1":
            raise Fail(f"{ERA} is missing: .ci/deps runs tests/data/hotplug-era/fetch")
        raise Skip(f"{ERA} is missing: run tests/data/hotplug-era/fetch")
    hp = c.path("hotplug")
    os.makedirs(os.path.join(hp, "usb"))
    os.makedirs(c.path("nodes"))
    for name in ("libusbscanner", "xpp_fxloader"):
        shutil.copyfile(os.path.join(ERA, "usb", name), os.path.join(hp, "usb", name))
        os.chmod(os.path.join(hp, "usb", name), 0o755)
        with open(os.path.join(ERA, "usb", name), "rb") as a, open(os.path.join(hp, "usb", name), "rb") as b:
            check(a.read() == b.read(), f"{name} is not the fetched file")
    c.write(os.path.join(hp, "usb", "zz-record"), NODE_RECORDER.format(out=c.path("nodes")))
    os.chmod(os.path.join(hp, "usb", "zz-record"), 0o755)
    # xpp_fxloader calls dahdi's astribank_is_starting and fxload, which it finds beside itself (it puts its
    # own directory first in PATH): stand-ins there, fxload recording what it was asked to load where.
    # Its firmware comes from FIRMWARE_DIR (the event's): a stand-in image with the version line it reads.
    c.write(os.path.join(hp, "usb", "astribank_is_starting"), "#!/bin/sh\nexit 0\n")
    c.write(os.path.join(hp, "usb", "fxload"),
            f"#!/bin/sh\necho \"$@\" >{c.path('nodes')}/fxload.tmp && mv {c.path('nodes')}/fxload.tmp "
            f"{c.path('nodes')}/fxload.args\n")
    for name in ("astribank_is_starting", "fxload"):
        os.chmod(os.path.join(hp, "usb", name), 0o755)
    os.makedirs(c.path("firmware"))
    c.write(c.path("firmware", "USB_FW.hex"), "# $Id: USB_FW.hex 9999 2026-12-07 $\n:00000001FF\n")
    # The maps: a scanner for libusbscanner (a Canon CanoScan), an Astribank for xpp_fxloader; the
    # recorder last, for both (usb/ *.usermap are read in name order).
    c.write(os.path.join(hp, "usb", "era.usermap"),
            "libusbscanner 0x0003 0x04a9 0x2220 0x0000 0x0000 0x00 0x00 0x00 0x00 0x00 0x00 0x00000000\n"
            "xpp_fxloader 0x0003 0xe4e4 0x1130 0x0000 0x0000 0x00 0x00 0x00 0x00 0x00 0x00 0x0\n")
    c.write(os.path.join(hp, "usb", "zz.usermap"),
            "zz-record 0x0001 0x04a9 0 0 0 0 0 0 0 0 0 0\nzz-record 0x0001 0xe4e4 0 0 0 0 0 0 0 0 0 0\n")
    group = c.path("group")
    with open("/etc/group") as f:
        text = f.read()
    c.write(group, text + ("" if text.endswith("\n") else "\n") + "scanner:x:4242:\n")
    wrapper = c.path("ns-daemon")
    c.write(wrapper, NS_WRAPPER.format(group=group, daemon=env("HOTPLUGD_TEST")))
    os.chmod(wrapper, 0o755)
    agent = c.agent()
    c.write(c.conf, f"agent = {agent}\nhotplug-dir = {hp}\n")
    d = c.daemon(binary=wrapper)
    scanner = "/devices/pci0000:00/0000:00:14.0/usb1/1-9"
    xpp = "/devices/pci0000:00/0000:00:14.0/usb1/1-10"
    d.send(uevent(1, "add", scanner, "usb", "DEVTYPE=usb_device", "PRODUCT=4a9/2220/100", "TYPE=0/0/0",
                  "BUSNUM=001", "DEVNUM=009"),
           uevent(2, "add", xpp, "usb", "DEVTYPE=usb_device", "PRODUCT=e4e4/1130/101", "TYPE=255/255/255",
                  "BUSNUM=001", "DEVNUM=010", f"FIRMWARE_DIR={c.path('firmware')}"))
    c.wait(lambda: os.path.exists(c.path("nodes", "1.node")) and os.path.exists(c.path("nodes", "2.node")),
           "the recorder after the era's scripts")
    c.settle()
    with open(c.path("nodes", "1.node")) as f:
        node = f.read().split()
    check(node == ["root:scanner", "660"], f"libusbscanner left /dev/bus/usb/001/009 {node}, want root:scanner 660")
    with open(c.path("nodes", "2.node")) as f:
        node = f.read().split()
    check(node == ["root:root", "600"], f"the Astribank's node was changed: {node}")
    log = d.log_text()
    for name in ("libusbscanner", "xpp_fxloader"):
        check(re.search(rf"SEQNUM=\d+ .*{name}.*(failed|exit [1-9]|signal)", log) is None,
              f"{name} failed: {log}")
    # xpp_fxloader loads the firmware in the background, a fifth of a second after its start.
    c.wait(lambda: os.path.exists(c.path("nodes", "fxload.args")), "xpp_fxloader calling fxload")
    with open(c.path("nodes", "fxload.args")) as f:
        args = f.read().split()
    want = ["-t", "fx2", "-D", "/dev/bus/usb/001/010", "-I", c.path("firmware", "USB_FW.hex")]
    check(args == want, f"xpp_fxloader ran fxload {args}, want {want}")
    d.stop()
    print("ok: libusbscanner (sane-backends 1.2.1, unchanged) made the scanner's node root:scanner 0660; "
          "xpp_fxloader (dahdi 3.1.0, unchanged) loaded the Astribank's firmware into /dev/bus/usb/001/010 "
          "with fxload")


CASES = {
    "trust-switch": case_trust_switch,
    "parent-child": case_parent_child,
    "probe-late": case_probe_late,
    "parallel": case_parallel,
    "concurrency": case_concurrency,
    "strict": case_strict,
    "timeout": case_timeout,
    "crash": case_crash,
    "missing-agent": case_missing_agent,
    "agent-trust": case_agent_trust,
    "reload": case_reload,
    "pause-resume": case_pause_resume,
    "settle": case_settle,
    "dry-run": case_dry_run,
    "dry-run-firmware": case_dry_run_firmware,
    "firmware-fail-fast": case_firmware_fail_fast,
    "replay": case_replay,
    "record-trust": case_record_trust,
    "monitor-json": case_monitor_json,
    "poison": case_poison,
    "journal-unreadable": case_journal_unreadable,
    "replay-record": case_replay_record,
    "usb-dispatch": case_usb_dispatch,
    "usb-era-scripts": case_usb_era_scripts,
}


def run_case(name):
    c = Case(name)
    failed = True
    t0 = time.monotonic()
    try:
        CASES[name](c)
        failed = False
    except Skip as e:
        failed = False
        print(f"SKIP {name}: {e}")
        return None
    except Fail as e:
        print(f"FAIL: {name}: {e}", file=sys.stderr)
    except Exception:
        print(f"FAIL: {name}: the driver broke:\n{traceback.format_exc()}", file=sys.stderr)
    finally:
        c.cleanup(failed)
    print(f"{'FAIL' if failed else 'PASS'} {name} ({time.monotonic() - t0:.1f} s)")
    return not failed


def on_sigterm(signo, frame):
    # meson's timeout, or the wrapper giving up: clean up on the way out.
    raise Fail("terminated by SIGTERM")


def main(argv):
    signal.signal(signal.SIGTERM, on_sigterm)
    names = list(CASES) if argv == ["--all"] else argv
    unknown = [n for n in names if n not in CASES]
    if not names or unknown:
        print(f"usage: driver.py --all | CASE...  (cases: {' '.join(CASES)})", file=sys.stderr)
        return 64
    print(f"running as uid {os.geteuid()}")
    # What a case makes (its directories above the agents) is the caller's alone, whatever umask it came with.
    os.umask(0o022)
    results = [run_case(n) for n in names]
    print(f"{results.count(True)} passed, {results.count(False)} failed, {results.count(None)} skipped")
    if results and all(r is None for r in results):
        return 77
    return 0 if False not in results else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
