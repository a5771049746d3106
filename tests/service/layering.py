#!/usr/bin/env python3
# The layering of src/ (src/README.md): every #include "folder/name.h" in a
# source file must name a folder its own folder may use, and private headers
# stay inside their module.  Reports every violation with file and line.
#
#   layering.py SRCDIR          check SRCDIR/src
#   layering.py --self-test     prove the checker catches each kind of violation
import os
import re
import sys
import tempfile

# Folder -> the folders it may include from (its own is always allowed).
# Lower layers first; nothing includes a folder above it.
ALLOWED = {
    "shared": set(),
    "uevent": {"shared"},
    "pipeline": {"shared", "uevent"},
    "handlers": {"shared", "uevent", "pipeline"},
    "recovery": {"shared", "uevent", "pipeline"},
    "control": {"shared", "uevent", "pipeline"},
    "loop": {"shared", "uevent", "pipeline", "recovery", "control"},
    "config": {"shared", "uevent", "pipeline", "loop"},
    "daemon": {"shared", "uevent", "pipeline", "recovery", "control", "loop", "config"},
    "ctl": {"shared", "uevent", "pipeline", "recovery", "control", "loop", "config"},
}

# Private headers: only these folders may include them.
PRIVATE = {
    "loop/manager-internal.h": {"loop"},
    "loop/manager-observe.h": {"loop"},
    "loop/observe-builtin.h": {"loop"},
    "loop/manager-resync.h": {"loop"},
    "loop/job-spawner.h": {"loop"},
    "loop/job.h": {"loop"},
    "loop/source.h": {"loop"},
    "loop/blame-tally.h": {"loop"},
    "loop/udev-wait.h": {"loop"},
    "control/control-internal.h": {"control"},
    "pipeline/handler-internal.h": {"pipeline", "handlers"},
    "uevent/record-internal.h": {"uevent"},
    "pipeline/usermap-internal.h": {"pipeline"},
}

# The daemon's main and hotplugctl may use loop/manager.h (the embedding
# API), nothing else of the loop.
LOOP_PUBLIC = {"loop/manager.h", "loop/observer.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def check(src):
    errors = []
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        if folder not in ALLOWED:
            errors.append(f"src/{folder}/: a folder the layering does not know (add it to {sys.argv[0]})")
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".c", ".h")):
                continue
            rel = f"src/{folder}/{name}"
            with open(os.path.join(path, name), encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = f"{rel}:{lineno}"
                    if inc == "config.h":  # generated build configuration
                        continue
                    if "/" not in inc:
                        errors.append(f'{where}: #include "{inc}" is not folder-qualified')
                        continue
                    target = inc.split("/")[0]
                    if target != folder and target not in ALLOWED[folder]:
                        errors.append(f'{where}: {folder}/ may not include "{inc}" ({target}/ is not below it)')
                    elif inc in PRIVATE and folder not in PRIVATE[inc]:
                        errors.append(f'{where}: "{inc}" is private to {", ".join(sorted(PRIVATE[inc]))}/')
                    elif target == "loop" and folder in ("daemon", "ctl", "config") and inc not in LOOP_PUBLIC:
                        errors.append(f'{where}: {folder}/ may use only the loop\'s public headers, not "{inc}"')
    return errors


def self_test():
    cases = [
        ("shared/a.c", '#include "uevent/uevent.h"', "may not include"),
        ("uevent/a.c", '#include "pipeline/ledger.h"', "may not include"),
        ("handlers/a.c", '#include "loop/manager.h"', "may not include"),
        ("handlers/a.c", '#include "control/control.h"', "may not include"),
        ("control/a.c", '#include "loop/manager-internal.h"', "may not include"),
        ("recovery/a.c", '#include "control/uuid-set.h"', "may not include"),
        ("ctl/a.c", '#include "control/control-internal.h"', "private"),
        ("ctl/a.c", '#include "loop/manager-internal.h"', "private"),
        ("daemon/a.c", '#include "loop/manager-job.h"', "public headers"),
        ("pipeline/a.c", '#include "ledger.h"', "not folder-qualified"),
        ("newfolder/a.c", "", "does not know"),
    ]
    good = [
        ("handlers/a.c", '#include "pipeline/handler-internal.h"'),
        ("loop/a.c", '#include "control/control.h"'),
        ("ctl/a.c", '#include "loop/manager.h"'),
        ("shared/a.c", '#include "config.h"'),
    ]
    failed = 0
    for rel, text, expect in cases:
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, os.path.dirname(rel)))
            with open(os.path.join(d, rel), "w") as f:
                f.write(text + "\n")
            errors = check(d)
            if not any(expect in e for e in errors):
                print(f"self-test: {rel} with {text!r} not reported as {expect!r}: {errors}")
                failed += 1
    for rel, text in good:
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, os.path.dirname(rel)))
            with open(os.path.join(d, rel), "w") as f:
                f.write(text + "\n")
            errors = check(d)
            if errors:
                print(f"self-test: {rel} with {text!r} wrongly reported: {errors}")
                failed += 1
    return failed


def main():
    if len(sys.argv) != 2:
        print("usage: layering.py SRCDIR | --self-test", file=sys.stderr)
        return 64
    if sys.argv[1] == "--self-test":
        failed = self_test()
        print("self-test: %s" % ("ok" if not failed else f"{failed} failed"))
        return 1 if failed else 0
    errors = check(os.path.join(sys.argv[1], "src"))
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} layering violation(s); the layers are described in src/README.md")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
