#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration cases about what events waited for, and hotplugctl blame.

    waits.py CASE...      run these cases (names: see CASES at the end)

The harness is driver.py's (a daemon on a socketpair, the recording agent,
waits on progress); these cases live in their own file only to keep
driver.py's table short.
"""

import json
import os
import re
import sys

import driver
from driver import NET, PCI, Daemon, Fail, check, env, uevent

HPW = "/devices/virtual/net/hpw0"


def waited_lines(text):
    """{SEQNUM: [what it waited for, ...]} from the log's "waited for" lines."""
    out = {}
    for s, what in re.findall(r"SEQNUM=(\d+) .*?waited for (SEQNUM=\d+|a free slot \(limit \d+\))", text):
        out.setdefault(int(s), []).append(what)
    return out


def timeline_waits(text):
    """{SEQNUM: [what it waited for, ...]} from the text timeline's ^ lines."""
    out = {}
    for s, what in re.findall(r"\^ SEQNUM=(\d+) waited for (SEQNUM=\d+|a free slot \(limit \d+\))", text):
        out.setdefault(int(s), []).append(what)
    return out


def check_monitor_waits(records, human, prev):
    """monitor --processed: a "waited" record for each wait, before the event's first "started"; @prev: the chain."""
    waited, first_start = {}, {}
    for i, x in enumerate(records):
        if x["kind"] == "waited":
            check(x["seqnum"] not in first_start, f"waited after its agent started: {x}")
            waited.setdefault(x["seqnum"], []).append(x)
        elif x["kind"] == "started":
            first_start.setdefault(x["seqnum"], i)
    print(f"monitor waited records: {waited}")
    for s, p in prev.items():
        w = [x for x in waited.get(s, []) if x["blocker"] != 0]
        check(len(w) == 1 and w[0]["blocker"] == p and w[0]["reason"].startswith("same device ")
              and w[0]["devpath"] == NET and w[0]["waited_us"] > 0, f"SEQNUM={s}: waited records {waited.get(s)}")
        check(f" for SEQNUM {p} (same device {NET}), " in human, f"human: no wait of {s} for {p}:\n{human}")
    slot = [x for v in waited.values() for x in v if x["blocker"] == 0]
    check(slot and all(x["reason"] == "a free slot (limit 2)" for x in slot), f"slot waits: {slot}")
    check("for a free slot (limit 2), " in human and "\nWAITED   " in human, f"human: no slot wait:\n{human}")


def case_monitor_waits(c):
    """monitor --processed says what each event waited for (another event, a free slot) before its agent started."""
    agent = c.agent(sleep_ms=120)
    d = c.daemon(f"--agent={agent}", "--max-children=2")
    mons, n = driver.start_monitors(c, d, {"json": ("--processed", "--json"), "human": ("--processed",)})
    c.settle()
    # n+1..n+3: a chain on one device; n+4..n+6: other devices, runnable at once but for the two slots.
    c.tool("pause")
    d.send(uevent(n + 1, "add", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(n + 2, "change", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(n + 3, "change", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(n + 4, "add", "/devices/virtual/net/hpw1", "net"),
           uevent(n + 5, "add", "/devices/virtual/net/hpw2", "net"),
           uevent(n + 6, "add", "/devices/virtual/net/hpw3", "net"))
    c.wait(lambda: c.status()["received"] == n + 6, f"the daemon receiving {n + 6} events")
    c.tool("resume")
    c.settle()
    c.wait(lambda: sum(1 for x in mons["json"].json() if x["kind"] == "finished" and x["seqnum"] > n) == 6,
           "the monitor seeing 6 agents finish")
    for m in mons.values():
        m.stop()
    d.stop()
    check_monitor_waits([x for x in mons["json"].json() if x.get("seqnum", 0) > n], mons["human"].data().decode(),
                        {n + 2: n + 1, n + 3: n + 2})
    print("ok: WAITED lines for the chain and for the slots, before each event's first start")


def case_wait_reasons(c):
    """A chain of events of one device waits each for the one before; a full slot is named."""
    agent = c.agent(sleep_ms=120)
    rec = c.path("live.rec")
    d = c.daemon(f"--agent={agent}", f"--record={rec}", "--log-level=debug", "--max-children=2")
    # 1..4 and 9: one device, a chain; 5..8: other devices, runnable at
    # once but for the two slots.  Paused while they arrive, so that all
    # are queued before the first starts.
    c.tool("pause")
    d.send(uevent(1, "add", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(2, "change", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(3, "change", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(4, "change", NET, "net", "INTERFACE=enp0s31f6"),
           uevent(5, "add", HPW, "net"),
           uevent(6, "add", "/devices/virtual/net/hpw1", "net"),
           uevent(7, "add", "/devices/virtual/net/hpw2", "net"),
           uevent(8, "add", "/devices/virtual/net/hpw3", "net"),
           uevent(9, "change", NET, "net", "INTERFACE=enp0s31f6"))
    c.wait(lambda: c.status()["received"] == 9, "the daemon receiving 9 events")
    c.tool("resume")
    c.settle()
    d.stop()
    runs = c.runs()
    check(sorted(runs) == list(range(1, 10)), f"runs {sorted(runs)}")
    log = waited_lines(d.log_text())
    # Each event of the chain waited for the one before it on the device, never for SEQNUM=1.
    prev = {2: 1, 3: 2, 4: 3, 9: 4}
    for s, p in prev.items():
        check(f"SEQNUM={p}" in log.get(s, []), f"SEQNUM={s}: logged waits {log.get(s)}, want SEQNUM={p}")
        check(runs[s]["start"] >= runs[p]["end"], f"SEQNUM={s} started before {p} ended")
    # Two slots and a queue of runnable events: at least one waited for a free slot.
    slot = [s for s, w in log.items() if "a free slot (limit 2)" in w]
    check(slot, f"no event logged a wait for a free slot: {log}")
    check(1 not in log, f"SEQNUM=1 waited for nothing, logged {log.get(1)}")
    # The recording says the same: text timeline.
    _, tl = c.tool("timeline", "--text", rec)
    got = timeline_waits(tl)
    for s, p in prev.items():
        check(f"SEQNUM={p}" in got.get(s, []), f"timeline: SEQNUM={s} waited for {got.get(s)}, want SEQNUM={p}:\n{tl}")
    check(any("a free slot (limit 2)" in got.get(s, []) for s in slot), f"timeline: no slot wait:\n{tl}")
    check("(null)" not in tl, "timeline prints (null)")
    # And a dry-run replay of it lists the same waits for the chain.
    r = Daemon(c, f"--replay={rec}", "--speed=1", "--dry-run", f"--agent={agent}", "--control-socket=",
               binary=env("HOTPLUGD"), source=False, log="replay.log", ready=False)
    c.daemons.append(r)
    r.start()
    check(r.wait_exit() == 0, "the dry-run replay failed")
    rlog = waited_lines(r.log_text())
    for s, p in prev.items():
        check(f"SEQNUM={p}" in rlog.get(s, []), f"replay -n: SEQNUM={s} waited for {rlog.get(s)}, want SEQNUM={p}")
    print(f"ok: 2, 3, 4, 9 waited for 1, 2, 3, 4 (log, timeline, replay -n); slot waits: {slot}")


def hotplug_d_script(c, name, script, sleep_ms):
    """DIR/hotplug.d/NAME/SCRIPT, the recording agent sleeping sleep_ms, with its own runs/."""
    d = c.path("hotplug.d", name)
    os.makedirs(os.path.join(d, "runs"), exist_ok=True)
    os.symlink(c.agent_dump(), os.path.join(d, script))
    c.write(os.path.join(d, "sleep_ms"), f"{sleep_ms}\n")
    return os.path.join(d, script)


def check_blame(b, slow, every, quick, hpw1, hpb0, what):
    """The blame (--json) of case_blame's events, from a recording or the daemon (@what)."""
    check(b["events"] == 4 and b["runs"] == 8, f"{what}: events {b['events']}, runs {b['runs']}: want 4 and 8")
    ms = 1000

    def rows(group):
        return [(r["name"], r) for r in b[group]]

    # Programs, longest first: 3 x 200, 4 x 40, 1 x 60 ms.
    progs = rows("programs")
    check([n for n, _ in progs] == [slow, every, quick], f"{what}: programs in the wrong order: {[n for n, _ in progs]}")
    for (name, r), runs, sleep in zip(progs, (3, 4, 1), (200, 40, 60)):
        check(r["count"] == runs, f"{what}: {name}: {r['count']} runs, want {runs}")
        check(r["total_usec"] >= runs * sleep * ms, f"{what}: {name}: total {r['total_usec']} us < {runs} x {sleep} ms")
        check(sleep * ms <= r["slowest_usec"] <= r["total_usec"], f"{what}: {name}: slowest {r['slowest_usec']} us")
    # Subsystems: net 3 events of 240 ms, hpb one of 100 ms.
    subs = rows("subsystems")
    check([n for n, _ in subs] == ["net", "hpb"], f"{what}: subsystems: {[n for n, _ in subs]}")
    check(subs[0][1]["count"] == 3 and subs[0][1]["total_usec"] >= 3 * 240 * ms, f"{what}: net: {subs[0][1]}")
    check(subs[1][1]["count"] == 1 and subs[1][1]["total_usec"] >= 100 * ms, f"{what}: hpb: {subs[1][1]}")
    # Devices: hpw0 two events, and the one wait for order, 2 for 1.
    devs = dict(rows("devices"))
    check([n for n, _ in rows("devices")] == [HPW, hpw1, hpb0], f"{what}: devices: {list(devs)}")
    check(devs[HPW]["count"] == 2 and devs[HPW]["total_usec"] >= 2 * 240 * ms, f"{what}: {HPW}: {devs[HPW]}")
    check(devs[HPW]["slowest_seqnum"] in (1, 2), f"{what}: {HPW}: slowest SEQNUM {devs[HPW]['slowest_seqnum']}")
    check(100 * ms <= devs[HPW]["order_wait_usec"] <= devs[HPW]["total_usec"],
          f"{what}: {HPW}: waited {devs[HPW]['order_wait_usec']} us for order, want about 240 ms")
    check(devs[hpw1]["order_wait_usec"] == 0 and devs[hpb0]["order_wait_usec"] == 0, f"{what}: an unrelated device waited")
    check(b["order_wait_usec"] == devs[HPW]["order_wait_usec"], f"{what}: the total order wait is not the device's")
    # (Slot waits depend on the machine: the limit follows the agents awake against the CPUs.)
    check(b["slot_wait_usec"] == sum(r["slot_wait_usec"] for _, r in subs), f"{what}: slot waits do not add up")


def check_blame_text(c, slow, every, quick, *where):
    """blame's text of case_blame's events (@where: a recording, or nothing for the daemon)."""
    rc, txt = c.tool("blame", *where)
    print(txt)
    check("4 events, 8 agent runs" in txt, f"text heading:\n{txt}")
    lines = [ln for ln in txt.splitlines() if ln.rstrip().endswith((slow, every, quick))]
    check([ln.split()[-1] for ln in lines] == [slow, every, quick], f"text program order:\n{txt}")
    rc, top = c.tool("blame", *where, "--top", "1")
    check(quick not in top and "(2 more)" in top, f"--top 1:\n{top}")


def case_blame(c):
    """hotplugctl blame of a recording and of the running daemon: per subsystem, program and device, with the known sleeps."""
    slow = hotplug_d_script(c, "net", "10-slow.hotplug", 200)
    every = hotplug_d_script(c, "default", "50-every.hotplug", 40)
    quick = hotplug_d_script(c, "hpb", "10-quick.hotplug", 60)
    rec = c.path("live.rec")
    d = c.daemon(f"--hotplug-d={c.path('hotplug.d')}", f"--record={rec}")
    hpw1, hpb0 = "/devices/virtual/net/hpw1", "/devices/virtual/hpb/hpb0"
    # Nothing ran yet: the daemon says so.
    rc, out = c.tool("blame", "--json")
    check(json.loads(out) == {"events": 0, "runs": 0, "failed_events": 0, "failed_runs": 0, "run_usec": 0,
                              "order_wait_usec": 0, "slot_wait_usec": 0, "udev_wait_usec": 0, "subsystems": [],
                              "programs": [], "devices": []},
          f"blame of an idle daemon: {out}")
    # 2 arrives while 1 runs (240 ms): it waits for it, about that long.
    d.send(uevent(1, "add", HPW, "net"), uevent(2, "change", HPW, "net"), uevent(3, "add", hpw1, "net"),
           uevent(4, "add", hpb0, "hpb"))
    c.settle()
    # The running daemon's sums, since it started.
    rc, out = c.tool("blame", "--json")
    print(f"blame --json (daemon): {out.strip()}")
    live = json.loads(out)
    check_blame(live, slow, every, quick, hpw1, hpb0, "daemon")
    check_blame_text(c, slow, every, quick)
    d.stop()
    check(sorted(c.runs("hotplug.d/net")) == [1, 2, 3], f"net script runs {sorted(c.runs('hotplug.d/net'))}")

    rc, out = c.tool("blame", rec, "--json")
    b = json.loads(out)
    print(f"blame --json: {out.strip()}")
    check_blame(b, slow, every, quick, hpw1, hpb0, "recording")
    # The daemon and its recording agree on what was counted, and on the times within 50 ms.
    for group in ("subsystems", "programs", "devices"):
        for x, y in zip(live[group], b[group]):
            check((x["name"], x["count"]) == (y["name"], y["count"]), f"{group}: daemon {x}, recording {y}")
            check(abs(x["total_usec"] - y["total_usec"]) <= 50000, f"{group}: daemon {x}, recording {y}")

    # Text: the same tables, the longest first; --top cuts them.
    check_blame_text(c, slow, every, quick, rec)
    # Errors: clear, no crash.
    c.write(c.path("not.rec"), "hello\n")
    rc, err = c.tool("blame", c.path("not.rec"), check=False)
    check(rc == 1 and "hotplugctl: blame:" in err and "not a hotplugd recording" in err, f"not a recording: {rc} {err}")
    rc, err = c.tool("blame", check=False)
    check(rc == 3 and "hotplugctl: blame:" in err, f"no recording and no daemon: exit {rc}: {err}")
    rc, err = c.tool("blame", rec, "other", check=False)
    check(rc == 64, f"two arguments: exit {rc}: {err}")
    print("ok: blame's programs, subsystems and devices in order, with their sleeps and the one wait, "
          "from the daemon and from its recording")


def chain_of(c, *where):
    """blame --critical-chain --json (of a recording, or of the daemon): the object, and its SEQNUMs in order."""
    rc, out = c.tool("blame", *where, "--critical-chain", "--json")
    print(f"blame --critical-chain --json {' '.join(where)}: {out.strip()}")
    ch = json.loads(out)
    return ch, [link["seqnum"] for link in ch["chain"]]


def case_blame_chain(c):
    """blame --critical-chain: the chain of waits that ended the last busy period, failed runs marked."""
    hotplug_d_script(c, "net", "10-slow.hotplug", 150)
    crash = hotplug_d_script(c, "hpb", "10-crash.hotplug", 0)
    c.write(c.path("hotplug.d", "hpb", "crash"), "1\n")
    rec = c.path("live.rec")
    d = c.daemon(f"--hotplug-d={c.path('hotplug.d')}", f"--record={rec}")
    rc, out = c.tool("blame", "--critical-chain")
    check(out == "no agent ran\n", f"chain of an idle daemon: {out!r}")
    # 2 waits for 1 and 3 for 2 (one device, 150 ms each); 4, another device, fails at once.
    d.send(uevent(1, "add", HPW, "net"), uevent(2, "change", HPW, "net"), uevent(3, "change", HPW, "net"),
           uevent(4, "add", "/devices/virtual/hpb/hpb0", "hpb"))
    c.settle()
    ch, seqs = chain_of(c)
    check(seqs == [3, 2, 1], f"daemon: chain {seqs}, want 3, 2, 1")
    check(ch["settled"] and ch["events"] == 4 and ch["cut_seqnum"] == 0, f"daemon: {ch}")
    check(ch["span_usec"] >= 450000, f"daemon: settled in {ch['span_usec']} us, less than 3 x 150 ms")
    links = ch["chain"]
    check([x["blocker"] for x in links] == [2, 1, 0], f"daemon: blockers {[x['blocker'] for x in links]}")
    check(all(x["order_wait_usec"] >= 100000 for x in links[:2]) and links[2]["order_wait_usec"] == 0,
          f"daemon: order waits {[x['order_wait_usec'] for x in links]}")
    check(links[0]["at_usec"] >= 300000 and links[0]["run_usec"] >= 150000, f"daemon: link 3 {links[0]}")
    check(all(x["devpath"] == HPW and not x["failed_runs"] for x in links), f"daemon: links {links}")
    rc, txt = c.tool("blame", "--critical-chain")
    print(txt)
    check(txt.startswith("settled in ") and ": 4 events," in txt.splitlines()[0], f"text heading:\n{txt}")
    check(f"\n3 change net {HPW} @" in txt and f"\n└─2 change net {HPW} @" in txt and f"\n  └─1 add net {HPW} @" in txt,
          f"text chain:\n{txt}")
    # The tables mark the failed run.
    rc, out = c.tool("blame", "--json")
    b = json.loads(out)
    check(b["failed_runs"] == 1 and b["failed_events"] == 1, f"failed: {b}")
    check({r["name"]: r["failed"] for r in b["programs"]} == {crash: 1, c.path("hotplug.d", "net", "10-slow.hotplug"): 0},
          f"failed per program: {b['programs']}")
    rc, txt = c.tool("blame")
    check("(1 failed)" in txt.splitlines()[0], f"text heading: {txt}")

    # A later busy period, one event that fails: the chain is its own.
    d.send(uevent(5, "add", "/devices/virtual/hpb/hpb1", "hpb"))
    c.settle()
    ch, seqs = chain_of(c)
    check(seqs == [5] and ch["settled"] and ch["events"] == 1, f"daemon, second period: {ch}")
    check(ch["chain"][0]["failed_program"] == crash and ch["chain"][0]["failed_status"].startswith("signal 6"),
          f"daemon: failed run {ch['chain'][0]}")
    rc, txt = c.tool("blame", "--critical-chain")
    check(f"FAILED {crash} (signal 6" in txt, f"text: {txt}")
    d.stop()

    # The recording: the same last period.
    ch, seqs = chain_of(c, rec)
    check(seqs == [5] and ch["settled"] and ch["events"] == 1, f"recording: {ch}")
    check(ch["chain"][0]["failed_program"] == crash and ch["chain"][0]["failed_status"] == "signal 6",
          f"recording: failed run {ch['chain'][0]}")
    print("ok: the chain 3, 2, 1 then 5 (failed, marked), from the daemon and from its recording")


CASES = {
    "wait-reasons": case_wait_reasons,
    "blame": case_blame,
    "blame-chain": case_blame_chain,
    "monitor-waits": case_monitor_waits,
}


if __name__ == "__main__":
    driver.CASES = CASES
    sys.exit(driver.main(sys.argv[1:]))
