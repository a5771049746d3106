#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Integration cases about what events waited for, and hotplugctl blame.

    waits.py CASE...      run these cases (names: see CASES at the end)

The harness is driver.py's (a daemon on a socketpair, the recording agent,
waits on progress); these cases live in their own file only to keep
driver.py's table short.
"""

import json
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


CASES = {
    "wait-reasons": case_wait_reasons,
}


if __name__ == "__main__":
    driver.CASES = CASES
    sys.exit(driver.main(sys.argv[1:]))
