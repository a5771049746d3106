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
code_verbs = set(re.findall(r'\{\s*"([a-z]+)",\s*verb_', ctl_c))
ctl8 = read("man/hotplugctl.8")
verbs_sec = ctl8[ctl8.index(".Sh DESCRIPTION"):ctl8.index(".Sh FILES")]
man_verbs = set(re.findall(r"^\.It Cm ([a-z]+)", verbs_sec, re.M))
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

for e in errors:
    print("FAIL:", e, file=sys.stderr)
print(f"checked {len(code_opts)} options, {len(code_keys)} keys, {len(code_verbs)} verbs, {len(defined)} bounds")
sys.exit(1 if errors else 0)
