#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What hotplugctl trigger's match options select, found independently.

  sysfs-select.py [-t TYPE] [-s|-S|-y|-a|-A|-p|-b VALUE]... [--name-match=NODE]...
      prints the syspaths udevadm trigger's matches select, one a line
      (unordered): a device is a directory below /sys/devices with a
      "uevent" file and a "subsystem" link (links not followed); with
      -t subsystems / all also /sys/module/*, /sys/bus/*, /sys/bus/*/drivers/*
      holding "uevent" (subsystems "module", "subsystem", "drivers").
  sysfs-select.py --check-prioritized SUB[,SUB...] < LIST
      checks the order of trigger --prioritized-subsystem's LIST: each
      subsystem's devices after the earlier subsystems', every one after its
      ancestors in the list, and nothing else before them but those ancestors.
"""
import fnmatch
import os
import stat
import sys


def devices(root="/sys"):
    for top, dirs, files in os.walk(root + "/devices", followlinks=False):
        if "uevent" in files and os.path.islink(top + "/subsystem"):
            yield top, os.path.basename(os.readlink(top + "/subsystem"))


def subsystems(root="/sys"):
    def each(d, sub):
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return
        for n in names:
            p = f"{d}/{n}"
            if not os.path.islink(p) and os.path.isdir(p) and os.path.isfile(p + "/uevent"):
                yield p, sub
    yield from each(root + "/module", "module")
    yield from each(root + "/bus", "subsystem")
    for bus, _ in list(each(root + "/bus", "subsystem")):
        yield from each(bus + "/drivers", "drivers")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("latin-1")
    except OSError:
        return None


def attr_holds(dev, match):
    name, eq, glob = match.partition("=")
    value = read(f"{dev}/{name}")
    if value is None:
        return False
    return not eq or fnmatch.fnmatchcase(value.rstrip(" \t\n"), glob)


def properties(dev, sub):
    props = [("SUBSYSTEM", sub), ("DEVPATH", dev[len("/sys"):])]
    for line in (read(dev + "/uevent") or "").splitlines():
        k, eq, v = line.partition("=")
        if eq:
            props.append((k, v))
    return props


def node_syspath(node):
    st = os.stat(node)
    kind = "block" if stat.S_ISBLK(st.st_mode) else "char"
    return os.path.realpath(f"/sys/dev/{kind}/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")


def device_syspath(arg):
    if arg.startswith("/sys/"):
        return os.path.realpath(arg)
    return node_syspath(arg)


def passes(m, dev, sub):
    if m["s"] and not any(fnmatch.fnmatchcase(sub, g) for g in m["s"]):
        return False
    if any(fnmatch.fnmatchcase(sub, g) for g in m["S"]):
        return False
    name = os.path.basename(dev).replace("!", "/")
    if m["y"] and not any(fnmatch.fnmatchcase(name, g) for g in m["y"]):
        return False
    if m["b"] and not any(dev == p or dev.startswith(p + "/") for p in m["b"]):
        return False
    if not all(attr_holds(dev, a) for a in m["a"]) or any(attr_holds(dev, a) for a in m["A"]):
        return False
    if m["p"]:
        props = properties(dev, sub)
        if not any(fnmatch.fnmatchcase(k, kp) and fnmatch.fnmatchcase(v, vp)
                   for kp, _, vp in (p.partition("=") for p in m["p"]) for k, v in props):
            return False
    return True


def select(args):
    m = {k: [] for k in "sSyaApb"}
    kind = "devices"
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--name-match="):
            n = a.split("=", 1)[1]
            m["b"].append(node_syspath(n if n.startswith("/") else "/dev/" + n))
            i += 1
            continue
        opt, val = a[1], args[i + 1]
        i += 2
        if opt == "t":
            kind = val
        elif opt == "b":
            m["b"].append(device_syspath(val))
        else:
            m[opt].append(val)
    found = []
    if kind in ("devices", "all"):
        found += list(devices())
    if kind in ("subsystems", "all"):
        found += list(subsystems())
    for dev, sub in found:
        if passes(m, dev, sub):
            print(dev)


def check_prioritized(prio):
    order = prio.split(",")
    paths = [line.rstrip("\n") for line in sys.stdin if line.strip()]
    subs = [os.path.basename(os.readlink(p + "/subsystem")) for p in paths]
    is_prio = [s in order for s in subs]
    last = max((i for i, p in enumerate(is_prio) if p), default=-1)
    ok = True
    for i in range(last + 1):
        if not is_prio[i] and not any(is_prio[k] and paths[k].startswith(paths[i] + "/") for k in range(i + 1, last + 1)):
            print(f"{paths[i]} ({subs[i]}) comes before the prioritized devices end, and is no ancestor of one")
            ok = False
    rank = [order.index(s) if s in order else len(order) for s in subs]
    for i in range(last + 1):
        for k in range(i + 1, last + 1):
            if is_prio[i] and is_prio[k] and rank[k] < rank[i]:
                print(f"{paths[k]} ({subs[k]}) comes after {paths[i]} ({subs[i]})")
                ok = False
                break
    for i, p in enumerate(paths):
        for k in range(i + 1, len(paths)):
            if p.startswith(paths[k] + "/") and is_prio[i]:
                print(f"{p} comes before its ancestor {paths[k]}")
                ok = False
    if last < 0:
        print("no device of the prioritized subsystems")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "--check-prioritized":
        sys.exit(check_prioritized(sys.argv[2]))
    select(sys.argv[1:])
