#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hotplugctl's options, every verb at once, as its help lists them.

For every verb of 'hotplugctl --help', reads 'hotplugctl VERB --help' and
checks each option line ("  -t, --timeout=SEC", "      --[no-]all"):
 - every form listed (each short letter, the long name, --no-NAME) is
   accepted: "hotplugctl VERB OPTION [x] --help" may fail on the value x,
   but getopt must not refuse the option itself ("unknown option", "needs
   a value", "takes no value", "ambiguous option");
 - a short letter means one thing: a verb lists it once, and across all
   verbs it stands for one long option, as in udevadm, except EXCEPTIONS
   below.
Prints each problem and the count; exit 1 if there is any.  No root, no
daemon: --help ends every invocation before the verb does anything.

Environment: HOTPLUGCTL (the built binary).
"""
import os
import re
import subprocess
import sys

# (verb, letter, long option): where udevadm itself gives the letter a
# meaning of its own in that verb, hotplugctl follows udevadm.
EXCEPTIONS = {
    # udevadm test -a is --action; udevadm trigger -a is --attr-match.
    ("test", "a", "action"),
    # udevadm trigger -t is --type; udevadm settle -t is --timeout.
    ("trigger", "t", "type"),
    # udevadm monitor -p is --property; udevadm trigger -p is --property-match.
    ("monitor", "p", "property"),
    # udevadm info -a is --attribute-walk.
    ("info", "a", "attribute-walk"),
}

REFUSAL = re.compile(r"unknown option|option '[^']*' needs a value|option '[^']*' takes no value|ambiguous option")
# "  -a, -c, --action=ACTION", "  -o, --output FILE", "      --[no-]all"
LINE = re.compile(r"^ {1,8}((?:-[A-Za-z0-9], +)*)--(\[no-\])?([a-z0-9][a-z0-9-]*)(\[?=| (?=[A-Z]))?")

PROG = os.environ.get("HOTPLUGCTL", "hotplugctl")


def run(args):
    p = subprocess.run([PROG] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, HOTPLUGCTL_SOCKET="/nonexistent/hotplugctl-options-test"))
    return p.returncode, p.stdout, p.stderr


def verbs():
    _, out, _ = run(["--help"])
    sect = out.split("\nVerbs:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in sect.splitlines() if line.strip()]


def options(verb):
    """[(shorts, long, takes_value, negatable)] of the verb's help."""
    rc, out, err = run([verb, "--help"])
    if rc != 0:
        raise SystemExit(f"FAIL: hotplugctl {verb} --help: exit {rc}: {err.strip()}")
    found = []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        shorts = re.findall(r"-([A-Za-z0-9])", m.group(1))
        found.append((shorts, m.group(3), m.group(4) is not None, m.group(2) is not None))
    return found


def refused(verb, args):
    """The refusal message, or None if getopt took args."""
    _, _, err = run([verb] + args + ["--help"])
    m = REFUSAL.search(err)
    return err.strip().splitlines()[0] if m else None


def main():
    problems = []
    meanings = {}  # letter -> {long: [verbs]}
    for verb in verbs():
        listed = {}  # letter -> its long options in this verb
        for shorts, long, value, negatable in options(verb):
            for s in shorts:
                listed.setdefault(s, []).append(long)
            forms = [["-" + s] + (["x"] if value else []) for s in shorts]
            forms.append(["--" + long + ("=x" if value else "")])
            if negatable:
                forms.append(["--no-" + long])
            for f in forms:
                why = refused(verb, f)
                if why:
                    problems.append(f"refused: hotplugctl {verb} {' '.join(f)}, listed in its --help: {why}")
            for s in shorts:
                if (verb, s, long) not in EXCEPTIONS:
                    meanings.setdefault(s, {}).setdefault(long, []).append(verb)
        for s, longs in sorted(listed.items()):
            if len(longs) > 1:
                problems.append(f"clash: hotplugctl {verb} --help lists -{s} {len(longs)} times: "
                                + ", ".join("--" + lo for lo in longs))
    for s, longs in sorted(meanings.items()):
        if len(longs) > 1:
            said = "; ".join(f"--{lo} ({', '.join(v)})" for lo, v in sorted(longs.items()))
            problems.append(f"clash: -{s} means {len(longs)} things: {said}")
    for p in problems:
        print(p)
    clashes = sum(p.startswith("clash") for p in problems)
    print(f"{clashes} clash(es), {len(problems) - clashes} refused option(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
