#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""hotplugctl prints what a control socket sends it escaped.

The socket is whatever --socket names, so the server may be anyone: a fake
one here (SOCK_SEQPACKET, one canned reply per request) answers each verb
that prints text from the daemon with terminal escape sequences and other
control bytes in every text field, both as the protocol escapes them
("\\x1b") and raw in the record.  hotplugctl's stdout and stderr must hold
none of them (no C0 byte but the newline, no DEL, no C1 byte), only the
escaped form ("\\x1b"; JSON lines that parse):
 - an "error" record's message (every verb: status, pause, settle, monitor);
 - status: the concurrency, a gap's class, an agent's DEVPATH and program;
 - monitor, text and --property: the record's word, its time, each field,
   each KEY=value entry; and --json;
 - blame: a row's name.

Environment: HOTPLUGCTL (the built binary).
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading

HOTPLUGCTL = os.environ["HOTPLUGCTL"]

# As the protocol escapes a value, and raw: ESC [ (CSI), BEL, CR, backspace,
# an OSC title, C1 CSI (0x9b) alone and as UTF-8.
ESCAPED = rb"\x1b[31m\x07\x0d\x08\x9b2J\xc2\x9b"
RAW = b"\x1b]0;owned\x07\x1b[2J\r\x08\x9b\xc2\x9b"
HOSTILE = ESCAPED + RAW


def rec(word, **fields):
    """A record: the word, then " key=value" (values given as bytes or int)."""
    out = word
    for k, v in fields.items():
        out += b" " + k.encode() + b"=" + (v if isinstance(v, bytes) else str(v).encode())
    return out


ERROR = rec(b"error", errno=5, message=b"bad" + HOSTILE)
STATUS = [
    rec(b"status", processed=1, limit=2, limit_max=4, concurrency=b"c" + HOSTILE, ordering=b"o" + HOSTILE),
    rec(b"gap", first=1, last=3, count=3, **{"class": b"k" + HOSTILE}),
    rec(b"agent", seqnum=7, pid=99, age_ms=5, devpath=b"/devices/" + HOSTILE, program=b"/sbin/" + HOSTILE),
    b"end",
]
EVENTS = [
    b"ok",
    rec(b"\x1b[2J\x1b[H", seqnum=1),
    rec(b"received", seqnum=2, time=b"1.\x1b[31m", action=b"a" + HOSTILE, devpath=b"/devices/" + HOSTILE,
        subsystem=b"s" + HOSTILE, verdict=b"v" + HOSTILE, uuid=b"u" + HOSTILE),
    rec(b"env", seqnum=2, set=b"kernel", more=0, var=b"ACTION=" + HOSTILE),
    rec(b"started", seqnum=2, pid=10, program=b"p" + HOSTILE, name=b"n" + HOSTILE, devpath=b"d" + HOSTILE),
    rec(b"finished", seqnum=2, status=b"st" + HOSTILE, duration_us=1000, program=b"p" + HOSTILE,
        name=b"n" + HOSTILE, devpath=b"d" + HOSTILE),
    rec(b"gap", time=b"2.\x9b", first=b"1" + HOSTILE, last=3, count=3, **{"class": b"k" + HOSTILE}),
    rec(b"queued", seqnum=3, devpath=b"d" + HOSTILE),
]
# Without --property the daemon sends no "env" record (one would end the monitor).
EVENTS_PLAIN = [r for r in EVENTS if not r.startswith(b"env ")]
BLAME = [
    rec(b"blame", events=1, runs=1, run_usec=10, order_wait_usec=0, slot_wait_usec=0),
    rec(b"row", group=b"subsystem", name=b"s" + HOSTILE, count=1, total_usec=10, slowest_usec=10,
        slowest_seqnum=1, order_wait_usec=0, slot_wait_usec=0),
    b"end",
]

# (arguments, the records sent after the request, the escaped form expected:
# None for JSON, where text that is not UTF-8 is an array of its bytes and
# each line must parse)
CASES = [
    (["status"], [ERROR], rb"\x1b[31m"),
    (["pause"], [ERROR], rb"\x1b[31m"),
    (["settle", "--timeout=1"], [ERROR], rb"\x1b[31m"),
    (["monitor"], [ERROR], rb"\x1b[31m"),
    (["status"], STATUS, rb"\x1b[31m"),
    (["status", "--json"], STATUS, None),
    (["monitor"], EVENTS_PLAIN, rb"\x1b[31m"),
    (["monitor", "--property", "--processed"], EVENTS, rb"\x1b[31m"),
    (["monitor", "--json"], EVENTS_PLAIN, None),
    (["blame"], BLAME, rb"\x1b[31m"),
]


def serve(listener, replies):
    """Answer one connection: read the request, send @replies, close."""
    try:
        conn, _ = listener.accept()
    except OSError:
        return
    with conn:
        conn.settimeout(10)
        try:
            conn.recv(65536)
            for r in replies:
                conn.send(r)
        except OSError:
            pass


def raw_controls(data):
    """The offsets of bytes a terminal takes as control: C0 but newline, DEL, C1."""
    return [i for i, b in enumerate(data) if (b < 0x20 and b != 0x0A) or 0x7F <= b <= 0x9F]


def main():
    failed = 0
    with tempfile.TemporaryDirectory(prefix="hotplugd-ctl-server.") as tmp:
        path = os.path.join(tmp, "control")
        for args, replies, want in CASES:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            listener.bind(path)
            listener.listen(1)
            listener.settimeout(10)
            t = threading.Thread(target=serve, args=(listener, replies))
            t.start()
            p = subprocess.run([HOTPLUGCTL, "--socket", path] + args, capture_output=True, timeout=20,
                               env=dict(os.environ, TZ="UTC"))
            t.join()
            listener.close()
            os.unlink(path)
            for name, data in (("stdout", p.stdout), ("stderr", p.stderr)):
                bad = raw_controls(data)
                if bad:
                    print(f"FAIL: hotplugctl {' '.join(args)}: {name} holds {len(bad)} raw control byte(s), "
                          f"first at {bad[0]}: {data!r}", file=sys.stderr)
                    failed += 1
            if want is None:
                try:
                    for line in p.stdout.splitlines():
                        json.loads(line)
                except ValueError as e:
                    print(f"FAIL: hotplugctl {' '.join(args)}: not JSON ({e}): {p.stdout!r}", file=sys.stderr)
                    failed += 1
            elif want not in p.stdout + p.stderr:
                print(f"FAIL: hotplugctl {' '.join(args)}: no {want!r} in the output: "
                      f"stdout {p.stdout!r}, stderr {p.stderr!r}", file=sys.stderr)
                failed += 1
    if failed:
        return 1
    print(f"ok: {len(CASES)} replies of a hostile server printed escaped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
