#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check an SVG of hotplugctl timeline: well-formed XML (xml.etree), and
nothing drawn in the plot hides anything else: no two run bars or wait
segments (for the agent, for udevd) of one row overlap.  With a second argument, also the number of
run bars.  Called by test-timeline-view; exit 0 when good, 1 with the
reason on stderr."""

import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
SLACK = 0.11  # coordinates are written with one decimal


def main():
    path = sys.argv[1]
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        sys.exit(f"{path}: not well-formed XML: {e}")
    if root.tag != NS + "svg":
        sys.exit(f"{path}: root element is {root.tag}, not svg")
    rows = {}
    bars = 0
    for rect in root.iter(NS + "rect"):
        cls = rect.get("class", "").split()
        if "legend" in cls or not {"bar", "queued", "udev"} & set(cls):
            continue
        bars += "bar" in cls
        x, w = float(rect.get("x")), float(rect.get("width"))
        # A wait segment is inset by a pixel in its row: key rows by the bar's centre.
        centre = round(float(rect.get("y")) + float(rect.get("height")) / 2)
        title = rect.find(NS + "title")
        rows.setdefault(centre, []).append((x, x + w, title.text if title is not None else "?"))
    for centre, items in rows.items():
        items.sort()
        for a, b in zip(items, items[1:]):
            if b[0] < a[1] - SLACK:
                sys.exit(f"{path}: in the row at y={centre} [{a[0]}, {a[1]}) and [{b[0]}, {b[1]}) overlap:\n"
                         f"  {a[2]!r}\n  {b[2]!r}")
    if len(sys.argv) > 2 and bars != int(sys.argv[2]):
        sys.exit(f"{path}: {bars} run bars, expected {sys.argv[2]}")


if __name__ == "__main__":
    main()
