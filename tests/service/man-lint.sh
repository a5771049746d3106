#!/bin/bash
# mandoc -Tlint -Wwarning on every manual page: any warning or error fails,
# and so does a template variable (@NAME@) the build left in a page.
# Arguments: the generated pages.
set -u

if ! command -v mandoc >/dev/null; then
        echo "SKIP: mandoc is not installed (apt-get install mandoc)"
        exit 77
fi

rc=0
for page in "$@"; do
        if ! out=$(mandoc -Tlint -Wwarning "$page" 2>&1) || [ -n "$out" ] ||
                out=$(grep -n '@[A-Z_]*@' "$page"); then
                printf '%s\n' "$out" >&2
                echo "FAIL: $page" >&2
                rc=1
        else
                echo "ok: $page"
        fi
done
exit $rc
