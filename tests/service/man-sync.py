#!/usr/bin/env python3
# The manual pages say what the code does: every hotplugd long option,
# every hotplugd.conf key, every hotplugctl verb and exit code, and every
# bound in src/shared/bounds.h (with its value) is documented, and nothing
# documented is missing from the code.
#
# Usage: man-sync.py SRCDIR
import glob
import os
import re
import sys

src = sys.argv[1]
errors = []


def read(path):
    with open(f"{src}/{path}", encoding="utf-8") as f:
        return f.read()


def compare(what, in_code, in_man, page):
    for name in sorted(in_code - in_man):
        errors.append(f"{page}: {what} '{name}' is not documented")
    for name in sorted(in_man - in_code):
        errors.append(f"{page}: documents {what} '{name}', which the code does not have")


# hotplugd options and hotplugd.conf keys (and every boolean's --no-NAME
# form, and every variable the daemon's code reads): the option table in
# src/config/options.c (one "{ .name = ... }" row per option) vs "Fl -NAME"
# in hotplugd.8 and ".It Cm KEY" in hotplugd.conf.5.
options_c = read("src/config/options.c")
table = options_c[options_c.index("const struct option_info option_table[]"):]
table = table[:table.index("\n};")]
rows = [r for r in re.split(r"\n        \{", table)[1:] if ".name = " in r]


def field(row, name, pattern):
    m = re.search(r"\." + name + r" = " + pattern, row)
    return m.group(1) if m else None


code_opts = {field(r, "name", r'"([a-z0-9-]+)"') for r in rows}
short = {field(r, "short_name", r"'(.)'") for r in rows} - {None}
code_keys = set(re.findall(r'KEY\("([a-z0-9-]+)"', table))
if len(rows) != len(code_opts):
    errors.append(f"options.c: {len(rows)} rows but {len(code_opts)} distinct long names")

hotplugd8 = read("man/hotplugd.8")
options_sec = hotplugd8[hotplugd8.index(".Sh DESCRIPTION"):hotplugd8.index(".Sh ORDERING")]
man_opts = set(re.findall(r"^\.It .*?Fl -([a-z0-9-]+)", options_sec, re.M))
man_opts |= set(re.findall(r"^\.It Fl [a-zA-Z] .*?Fl -([a-z0-9-]+)", options_sec, re.M))
compare("option", code_opts, man_opts, "hotplugd.8")
# Every boolean row also has --no-NAME (cmdline.c makes it), on its .It line.
for r in rows:
    name = field(r, "name", r'"([a-z0-9-]+)"')
    if ".type = OPTION_BOOL" in r and not re.search(
            r"^\.It .*Fl -" + re.escape(name) + r" , .*Fl -no-" + re.escape(name) + r"\b", options_sec, re.M):
        errors.append(f"hotplugd.8: boolean option '--{name}' lacks '.It ... Fl -{name} , Fl -no-{name}'")
synopsis = hotplugd8[hotplugd8.index(".Sh SYNOPSIS"):hotplugd8.index(".Sh DESCRIPTION")]
syn_short = set("".join(re.findall(r"^\.Op Fl ([a-zA-Z]+)\b", synopsis, re.M)))
syn_short |= set(re.findall(r"Fl ([a-zA-Z]) Ar", synopsis))
compare("short option", short, syn_short, "hotplugd.8 SYNOPSIS")

conf5 = read("man/hotplugd.conf.5")
man_keys = set(re.findall(r"^\.It Cm ([a-z0-9-]+) No =", conf5, re.M))
compare("key", code_keys, man_keys, "hotplugd.conf.5")

main_c = read("src/daemon/main.c")
# hotplugctl verbs: the verb table vs ".It Cm VERB" in hotplugctl.8.
ctl_c = read("src/ctl/hotplugctl.c")
code_verbs = set(re.findall(r'\{\s*"([a-z-]+)",\s*verb_', ctl_c))
ctl8 = read("man/hotplugctl.8")
verbs_sec = ctl8[ctl8.index(".Sh DESCRIPTION"):ctl8.index(".Sh FILES")]
man_verbs = set(re.findall(r"^\.It Cm ([a-z-]+)", verbs_sec, re.M))
compare("verb", code_verbs, man_verbs, "hotplugctl.8")

# Exit codes: ctl.h and main.c vs the EXIT STATUS sections.
def exit_codes(page):
    sec = page[page.index(".Sh EXIT STATUS"):]
    sec = sec[:sec.index(".Sh ", 1)]
    return set(re.findall(r"^\.It (\d+)$", sec, re.M))

ctl_h = read("src/ctl/ctl.h")
compare("exit status", set(re.findall(r"#define CTL_EXIT_\w+ (\d+)", ctl_h)), exit_codes(ctl8), "hotplugctl.8")
daemon_codes = {"0", "1"} | set(re.findall(r"#define EXIT_\w+ (\d+)", main_c))
compare("exit status", daemon_codes, exit_codes(hotplugd8), "hotplugd.8")

# Environment: every variable the daemon's code reads (getenv() outside
# hotplugctl's src/ctl/) is an ".It Ev NAME" in hotplugd.8's ENVIRONMENT.
daemon_env = set()
for path in glob.glob(f"{src}/src/**/*.c", recursive=True):
    if os.sep + "ctl" + os.sep in path:
        continue
    with open(path, encoding="utf-8") as f:
        daemon_env |= set(re.findall(r'getenv\("([A-Z0-9_]+)"\)', f.read()))
env_sec = hotplugd8[hotplugd8.index(".Sh ENVIRONMENT"):]
env_sec = env_sec[:env_sec.index("\n.Pp")]
man_env = set(re.findall(r"[A-Z][A-Z0-9_]+", " ".join(re.findall(r"^\.It Ev (.*)$", env_sec, re.M))))
for name in sorted(daemon_env - man_env):
    errors.append(f"hotplugd.8 ENVIRONMENT: variable '{name}' is read by the daemon but not documented")

# Bounds: every HP_* in bounds.h is in the LIMITS section with its value.
bounds = read("src/shared/bounds.h")
limits = hotplugd8[hotplugd8.index(".Sh LIMITS"):hotplugd8.index(".Sh ENVIRONMENT")]
documented = dict(re.findall(r"^\.It Dv (HP_[A-Z0-9_]+) No (\d+)", limits, re.M))
defined = {}
for name, expr in re.findall(r"^#define (HP_[A-Z0-9_]+)\s+(.+?)\s*$", bounds, re.M):
    expr = re.sub(r"(\d+)(?:ULL|UL|LL|U|L)\b", r"\1", expr)
    if not re.fullmatch(r"[\d\s()*+/-]+", expr):
        errors.append(f"bounds.h: cannot evaluate {name} = {expr}")
        continue
    defined[name] = str(int(eval(expr)))
compare("bound", set(defined), set(documented), "hotplugd.8 LIMITS")
for name in sorted(set(defined) & set(documented)):
    if defined[name] != documented[name]:
        errors.append(f"hotplugd.8 LIMITS: {name} is {defined[name]} in bounds.h, {documented[name]} in the page")

# Bounds in the text: every HP_* a page names anywhere (LIMITS included)
# comes with its value, after it ("HP_NAME (VALUE UNIT)", "HP_NAME = VALUE",
# "HP_NAME VALUE UNIT") or right before it ("VALUE UNIT (HP_NAME)"), equal
# to bounds.h's in its unit: the name's own (microseconds for *_USEC,
# seconds for *_SEC, else bytes or a count) or one written after the value.
TIME = {"us": 1, "microseconds": 1, "ms": 10**3, "milliseconds": 10**3, "s": 10**6, "second": 10**6,
        "seconds": 10**6, "min": 60 * 10**6, "minutes": 60 * 10**6, "h": 3600 * 10**6, "hours": 3600 * 10**6,
        "day": 86400 * 10**6, "days": 86400 * 10**6}  # in microseconds
SIZE = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}
MACRO = re.compile(r"[A-Z][a-z][a-z]?")  # Dv, Pq, No, Ns, ... (a word of the text is lower case or longer)


def flatten(page):
    """The words of an mdoc page, macro names and escapes left out."""
    out = []
    for line in page.splitlines():
        if line.startswith('.\\"'):
            continue
        if line.startswith("."):
            line = " ".join(w for w in line[1:].split() if not MACRO.fullmatch(w))
        out.append(line.replace("\\&", "").replace("\\~", " ").replace("\\-", "-"))
    return " ".join(" ".join(out).split())


def in_own_unit(name, number, unit):
    """NUMBER UNIT in the unit of bound NAME (a word after the number that is no unit is just a word)."""
    if name.endswith(("_USEC", "_SEC")):
        own = 1 if name.endswith("_USEC") else 10**6
        return number * TIME.get(unit, own) / own
    return number * SIZE.get(unit, 1)


for page in sorted(glob.glob(f"{src}/man/*.[0-9]")):
    text = flatten(read(os.path.relpath(page, src)))
    for m in re.finditer(r"\b(HP_[A-Z0-9_]+)\b(?:\s*\(?\s*(?:=\s*)?(\d+(?:\.\d+)?)(?:\s+(\w+))?)?", text):
        name, number, unit = m.groups()
        where = f"{os.path.basename(page)}: {m.group(0)!r}"
        before = re.search(r"(\d+(?:\.\d+)?)(?:\s+(\w+))?\s*\(?\s*$", text[max(0, m.start() - 40):m.start()])
        if number is None and before:
            number, unit = before.groups()
        if name not in defined:
            errors.append(f"{where}: {name} is not a bound of bounds.h")
        elif number is None:
            errors.append(f"{where}: {name} without its value ({defined[name]})")
        elif in_own_unit(name, float(number), unit) != int(defined[name]):
            errors.append(f"{where}: {name} is {defined[name]} in bounds.h")

# Ranges: every numeric key's "MIN to MAX" (from the table, bounds.h
# names evaluated) is in its hotplugd.conf.5 entry.
def value_of(expr):
    expr = expr.strip()
    if expr in defined:
        return defined[expr]
    if expr == "INT32_MAX":
        return str(2**31 - 1)
    return str(int(expr)) if re.fullmatch(r"\d+", expr) else None


entries = dict(re.findall(r"^\.It Cm ([a-z0-9-]+) No =[^\n]*\n(.*?)(?=^\.It |^\.El)", conf5, re.M | re.S))
for r in rows:
    key = re.search(r'KEY\("([a-z0-9-]+)"', r)
    lo, hi = field(r, "min", r"([A-Z0-9_]+)"), field(r, "max", r"([A-Z0-9_]+)")
    if not key or lo is None or hi is None:
        continue
    lo, hi, key = value_of(lo), value_of(hi), key.group(1)
    text = " ".join(entries.get(key, "").split())
    if lo is None or hi is None:
        errors.append(f"options.c: cannot evaluate the range of '{key}'")
    elif f"{lo} to {hi}" not in text:
        errors.append(f"hotplugd.conf.5: '{key}' does not give its range {lo} to {hi}")

# README's list of the settings the command line alone takes: every row
# without a file key, less those that say what to do (help, version, the
# configuration file and its check).
readme = read("README.md")
m = re.search(r"Every setting except (.*?) can also be set in", readme, re.S)
if not m:
    errors.append("README.md: no 'Every setting except ... can also be set in' sentence")
else:
    listed = set(re.findall(r"`--([a-z0-9-]+)`", m.group(1)))
    cli_only = {field(r, "name", r'"([a-z0-9-]+)"') for r in rows
                if "KEY(" not in r and ".type = OPTION_HELP" not in r and ".type = OPTION_VERSION" not in r}
    compare("command-line-only option", cli_only, listed, "README.md")

# README's quick start installs the build's dependencies, the list .ci/deps
# names as such (.ci/deps installs the tests' besides).
m = re.search(r"^ *sudo apt-get install ([a-z0-9 .+-]+?) &&", readme, re.M)
ci = re.search(r"^build=\(([^)]*)\)", read(".ci/deps"), re.M)
if not m or not ci:
    errors.append("README.md's quick start 'sudo apt-get install ... &&' or .ci/deps's 'build=(...)' not found")
elif sorted(m.group(1).split()) != sorted(ci.group(1).split()):
    errors.append(f"README.md's quick start installs {m.group(1)}, .ci/deps's build list is {ci.group(1)}")

for e in errors:
    print("FAIL:", e, file=sys.stderr)
print(f"checked {len(code_opts)} options, {len(code_keys)} keys, {len(code_verbs)} verbs, {len(defined)} bounds")
sys.exit(1 if errors else 0)
