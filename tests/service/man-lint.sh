#!/bin/bash
# mandoc -Tlint -Wstyle on every manual page: any message fails, style notes
# included, and so does a template variable (@NAME@) the build left in a page,
# or text that shows a macro rendered as words, or quotes nested by mistake.
# References between the project's own pages are checked against a manual
# database of just these pages (so "hotplugd(8)" must exist); a reference to
# a page outside the project is not checked, since the test machine need not
# have it installed.
# Arguments: the generated pages.
set -u

if ! command -v mandoc >/dev/null || ! command -v makewhatis >/dev/null; then
        echo "SKIP: mandoc is not installed (apt-get install mandoc)"
        exit 77
fi

db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
ours=()
for page in "$@"; do
        base=${page##*/}
        sec=${base##*.}
        mkdir -p "$db/man$sec"
        cp "$page" "$db/man$sec/"
        ours+=("${base%.*}")
done
makewhatis "$db" || { echo "FAIL: makewhatis $db" >&2; exit 1; }

# "referenced manual not found: Xr NAME SEC" is fine only for a page not ours.
foreign_refs() {
        local line name
        while IFS= read -r line; do
                if [[ $line =~ referenced\ manual\ not\ found:\ Xr\ ([^ ]+)\ [0-9] ]]; then
                        name=${BASH_REMATCH[1]}
                        if [[ " ${ours[*]} " != *" $name "* ]]; then
                                continue
                        fi
                fi
                printf '%s\n' "$line"
        done
}

rc=0
for page in "$@"; do
        out=$(MANPATH=$db mandoc -Tlint -Wstyle "$page" 2>&1 | foreign_refs)
        if [ -z "$out" ]; then
                out=$(grep -n '@[A-Z_]*@' "$page")
        fi
        # What lint cannot see: macros that render into the text as words
        # ({"first, "last ...} from Qq inside Brq; -monitor after a Fl; a
        # word after a Fl and a colon, "(with -r: -gone)").
        if [ -z "$out" ]; then
                out=$(mandoc -Tascii "$page" | col -b |
                        grep -nE '\{"[a-z]|[a-z]"""|, -[a-z]+, -[a-z]+,|-[a-z]+[:;] -[a-z]+\)')
        fi
        # Quotes nested where they should follow each other: an Sq, Ql or
        # Dq on the line of the one before it encloses all that follows
        # ("text: `#, `x, `>'''", "no `/, not starting with `.''").  The
        # UTF-8 rendering tells the macros' quotes from quotes in the text.
        if [ -z "$out" ]; then
                out=$(mandoc -Tutf8 "$page" | col -b | grep -nE '‘‘|’’|““|””')
        fi
        if [ -n "$out" ]; then
                printf '%s\n' "$out" >&2
                echo "FAIL: $page" >&2
                rc=1
        else
                echo "ok: $page"
        fi
done
exit $rc
