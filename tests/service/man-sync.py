#!/usr/bin/env python3
# The manual pages say what the code does: every hotplugd long option,
# every hotplugd.conf key, every hotplugctl verb and exit code, and every
# bound in src/shared/bounds.h (with its value) is documented, and nothing
# documented is missing from the code.
#
# Usage: man-sync.py SRCDIR
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


# hotplugd options: struct option table in main.c vs "Fl -NAME" in hotplugd.8.
main_c = read("src/daemon/main.c")
table = main_c[main_c.index("struct option options[]"):]
table = table[:table.index("};")]
code_opts = set(re.findall(r'\{\s*"([a-z0-9-]+)"', table))
hotplugd8 = read("man/hotplugd.8")
options_sec = hotplugd8[hotplugd8.index(".Sh DESCRIPTION"):hotplugd8.index(".Sh ORDERING")]
man_opts = set(re.findall(r"^\.It .*?Fl -([a-z0-9-]+)", options_sec, re.M))
man_opts |= set(re.findall(r"^\.It Fl [a-zA-Z] .*?Fl -([a-z0-9-]+)", options_sec, re.M))
compare("option", code_opts, man_opts, "hotplugd.8")
synopsis = hotplugd8[hotplugd8.index(".Sh SYNOPSIS"):hotplugd8.index(".Sh DESCRIPTION")]
short = set(re.findall(r'"([a-zA-Z:]+)"', main_c[main_c.index("getopt_long("):])[0].replace(":", ""))
syn_short = set("".join(re.findall(r"^\.Op Fl ([a-zA-Z]+)\b", synopsis, re.M)))
syn_short |= set(re.findall(r"Fl ([a-zA-Z]) Ar", synopsis))
compare("short option", short, syn_short, "hotplugd.8 SYNOPSIS")

# hotplugd.conf keys: the key table in conffile.c vs ".It Cm KEY" in hotplugd.conf.5.
conf_c = read("src/config/conffile.c")
code_keys = set(re.findall(r'KEY\(CONF_[A-Z_]+, "([a-z0-9-]+)"', conf_c))
conf5 = read("man/hotplugd.conf.5")
man_keys = set(re.findall(r"^\.It Cm ([a-z0-9-]+) No =", conf5, re.M))
compare("key", code_keys, man_keys, "hotplugd.conf.5")

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

for e in errors:
    print("FAIL:", e, file=sys.stderr)
print(f"checked {len(code_opts)} options, {len(code_keys)} keys, {len(code_verbs)} verbs, {len(defined)} bounds")
sys.exit(1 if errors else 0)
