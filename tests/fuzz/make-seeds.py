#!/usr/bin/env python3
# Writes the seed corpora of the record, config, control and timeline fuzz
# targets (corpus-*/seed-*).  Run from tests/fuzz after changing a format;
# the files are checked in, so the suite does not run this.
import os
import struct
import zlib

HEADER = b"\x89HPDREC\n" + struct.pack("<HHI", 1, 16, 0)


def frame(rtype, payload, flags=0):
    head = struct.pack("<HHI", rtype, flags, len(payload))
    crc = zlib.crc32(head + payload) & 0xFFFFFFFF
    return b"HPR\x1e" + head + struct.pack("<I", crc) + payload


def datagram(action, devpath, subsystem, seqnum, extra=()):
    keys = [f"ACTION={action}", f"DEVPATH={devpath}", f"SUBSYSTEM={subsystem}", f"SEQNUM={seqnum}", *extra]
    return (f"{action}@{devpath}\0" + "\0".join(keys) + "\0").encode()


def rec_datagram(real, mono, d):
    return frame(1, struct.pack("<QQ", real, mono) + d)


def rec_start(seq, mono, pid, program):
    return frame(2, struct.pack("<QQI", seq, mono, pid) + program)


def rec_end(seq, mono, pid, status, value):
    return frame(3, struct.pack("<QQIHHi", seq, mono, pid, status, 0, value))


def rec_wait(seq, blocker, mono, reason):
    return frame(4, struct.pack("<QQQ", seq, blocker, mono) + reason)


def rec_gap(mono, first, last, cls):
    return frame(5, struct.pack("<QQQI", mono, first, last, cls))


def rec_overflow(real, mono):
    return frame(6, struct.pack("<QQ", real, mono))


def write(corpus, name, data):
    os.makedirs(corpus, exist_ok=True)
    with open(os.path.join(corpus, "seed-" + name), "wb") as f:
        f.write(data)


def records():
    lo = "/devices/virtual/net/lo"
    usb = "/devices/pci0000:00/0000:00:1d.0/usb2"
    session = [
        rec_datagram(1700000000000000, 1000, datagram("add", usb, "usb", 10, ["DEVTYPE=usb_device", "PRODUCT=46d/c52b/1201"])),
        rec_start(10, 1100, 4242, b"/sbin/hotplug"),
        rec_datagram(1700000000000500, 1500, datagram("add", usb + "/2-1:1.0", "usb", 11)),
        rec_wait(11, 10, 1500, b"parent " + usb.encode()),
        rec_end(10, 3100, 4242, 0, 0),
        rec_start(11, 3200, 4243, b"/sbin/hotplug"),
        rec_end(11, 9200, 4243, 2, 9),
        rec_gap(9300, 12, 14, 0),
        rec_overflow(1700000000010000, 10000),
        rec_gap(10100, 15, 20, 1),
        rec_datagram(1700000000011000, 11000, datagram("change", lo, "net", 21, ["INTERFACE=lo", "IFINDEX=1"])),
        rec_end(21, 11000, 0, 3, 2),
        frame(9, b"a later record type"),
    ]
    body = b"".join(session)
    write("corpus-record", "session", HEADER + body)
    write("corpus-record", "empty", HEADER)
    write("corpus-record", "torn-tail", HEADER + body[:-7])
    damaged = bytearray(HEADER + body)
    damaged[40] ^= 0x55
    write("corpus-record", "damaged-middle", bytes(damaged))
    write("corpus-record", "bad-magic", b"\x89HPDREX\n" + HEADER[8:] + body[:64])
    write("corpus-record", "version-2", b"\x89HPDREC\n" + struct.pack("<HHI", 2, 16, 0))
    write("corpus-record", "big-header", b"\x89HPDREC\n" + struct.pack("<HHI", 1, 24, 0) + b"\0" * 8 + body[:200])
    write("corpus-record", "bad-layout", HEADER + frame(3, b"short") + frame(1, struct.pack("<QQ", 1, 2)))
    write("corpus-record", "sync-in-payload", HEADER + rec_start(1, 2, 3, b"HPR\x1eHPR\x1e") + session[0])
    write("corpus-record", "max-times", HEADER + rec_start(1, 2**64 - 1, 1, b"/a") + rec_end(1, 2**64 - 1, 1, 1, -1))


def configs():
    full = """# every key
agent = /sbin/hotplug
ordering = strict
max-children = 8
max-queue = 65536
timeout = 180
kill-grace = 5
all = yes
handler-dir = /usr/lib/hotplugd/handlers
filter-policy = none, usb=keep *=drop
firmware-loader = no
firmware-path = /lib/firmware/updates:/lib/firmware
handler-cache = 1024
input-strip-quotes = yes
sysfs = /sys
rcvbuf = 16M
log-level = debug
record = /var/log/hotplugd.rec
rebroadcast = 3
resync = no
"""
    write("corpus-config", "full", full.encode())
    write("corpus-config", "hotplug-d", b"hotplug-d = /etc/hotplug.d\n  # indented comment\n\nordering=none\n")
    write("corpus-config", "crlf", b"agent = /bin/true\r\ntimeout = 1\r\n")
    write("corpus-config", "bad-key", b"agnet = /sbin/hotplug\n")
    write("corpus-config", "bad-number", b"max-children = 99999999999999999999999\n")
    write("corpus-config", "relative-path", b"agent = sbin/hotplug\n")
    write("corpus-config", "duplicate", b"timeout = 1\ntimeout = 2\n")
    write("corpus-config", "no-newline", b"resync = off")
    write("corpus-config", "nul", b"agent = /sbin/\0hotplug\n")
    write("corpus-config", "long-line", b"agent = /" + b"a" * 5000 + b"\n")
    write("corpus-config", "filter-bad", b"filter-policy = usb\n")
    write("corpus-config", "rcvbuf-suffix", b"rcvbuf = 4G\nrebroadcast = 33\n")


def controls():
    write("corpus-control", "status", b"status")
    write("corpus-control", "settle", b"settle 123 5000")
    write("corpus-control", "ok-fields", b"ok received=10 queued=3 pending=0 lowest_held=42 age_ms=7")
    write("corpus-control", "escaped", b"event devpath=/devices/a\\x20b program=/sbin/caf\\xc3\\xa9 message=a\\x5cb")
    write("corpus-control", "bad-escape", b"error errno=22 message=bad\\x2")
    write("corpus-control", "bad-escape-nul", b"error message=a\\x00b")
    write("corpus-control", "repeat-key", b"ok seqnum=1 seqnum=2")
    write("corpus-control", "no-value", b"ok key= =value key2")
    write("corpus-control", "spaces", b"ok  a=1   b=2 ")
    write("corpus-control", "u64-overflow", b"ok seqnum=18446744073709551616 total=007")
    write("corpus-control", "upper-key", b"ok KEY=1 a-b=2")


def timelines():
    # Programs for fuzz-timeline.c: a mode byte, then records, each a type
    # byte (1 + b % 6) and fields; numbers are a selector byte (< 128: one
    # byte follows, < 224: two, else eight) and their bytes.
    def n1(v):
        return bytes([0, v])

    def n8(v):
        return bytes([255]) + struct.pack(">Q", v)

    def dgram(mono, action, dev, subsys, sub, seq):
        return bytes([0]) + n1(0) + n8(mono) + bytes([action, dev, subsys, sub]) + n1(seq)

    def start(seq, mono, pid, text):
        return bytes([1]) + n1(seq) + n8(mono) + n1(pid) + bytes([len(text) - 1]) + text

    def end(seq, mono, pid, status, value):
        return bytes([2]) + n1(seq) + n8(mono) + n1(pid) + bytes([status]) + n1(value)

    def wait(seq, blocker, mono, text):
        return bytes([3]) + n1(seq) + n1(blocker) + n8(mono) + bytes([len(text) - 1]) + text

    def gap(mono, first, last, cls):
        return bytes([4]) + n8(mono) + n1(first) + n1(last) + bytes([cls])

    def overflow(mono):
        return bytes([5]) + n8(0) + n8(mono)

    run = (dgram(1000, 0, 2, 2, 0, 10) + start(10, 1100, 7, b"/sbin/hotplug") +
           dgram(1500, 0, 2, 2, 1, 11) + wait(11, 10, 1500, b"parent") + end(10, 3000, 7, 0, 0) +
           start(11, 3100, 8, b"/sbin/hotplug") + end(11, 9000, 8, 2, 9) + gap(9100, 12, 14, 0) +
           overflow(9200) + end(30, 9300, 0, 3, 2))
    write("corpus-timeline", "session", bytes([0]) + run)
    write("corpus-timeline", "session-subsystem", bytes([1]) + run)
    write("corpus-timeline", "empty", b"")
    write("corpus-timeline", "only-marks", bytes([0]) + gap(5, 1, 2, 1) + overflow(2**64 - 1))
    write("corpus-timeline", "max-times", bytes([0]) + start(1, 2**64 - 1, 1, b"/a") + end(1, 0, 1, 0, 0) +
          dgram(2**64 - 1, 1, 0, 0, 0, 1))
    write("corpus-timeline", "overlap", bytes([1]) + start(1, 0, 1, b"/a") + start(2, 10, 2, b"/b") +
          dgram(0, 0, 3, 1, 1, 1) + dgram(5, 0, 3, 1, 2, 2) + end(2, 20, 2, 1, 15) + end(1, 30, 1, 0, 1))
    # Found by fuzz-timeline: an unfinished run at UINT64_MAX, nothing else.
    write("corpus-timeline", "found-last-instant", bytes([0]) + start(1, 2**64 - 1, 1, b"/a"))
    # after-udev: a wait for udevd is a WAIT whose blocker is the event itself (after a slot's wait, at
    # once, out of order, at UINT64_MAX, and for an event that has no run).
    write("corpus-timeline", "udev-wait", bytes([0]) + dgram(1000, 0, 2, 2, 0, 10) + wait(10, 0, 1200, b"slot") +
          wait(10, 10, 1500, b"udevd") + start(10, 1500, 7, b"/sbin/hotplug") + end(10, 2000, 7, 0, 0) +
          dgram(1100, 0, 1, 2, 0, 11) + wait(11, 11, 2**64 - 1, b"udevd, not broadcast in time") +
          start(11, 1300, 8, b"/a") + wait(11, 11, 0, b"udevd") + wait(12, 12, 1400, b"udevd"))
    write("corpus-timeline", "raw-datagram", bytes([0, 0]) + n1(0) + n1(0) + bytes([255, 5]) + b"junk\0")


if __name__ == "__main__":
    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    records()
    configs()
    controls()
    timelines()
