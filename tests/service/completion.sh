#!/bin/bash
# SPDX-License-Identifier: MIT
# hotplugctl's bash completion (completion/hotplugctl.bash), loaded as
# bash-completion loads it, completing for the built hotplugctl:
#  - the verbs: every verb of 'hotplugctl --help', and a prefix completes to
#    its verb;
#  - each verb's options: every option of 'hotplugctl VERB --help' (long and
#    short, --no- forms), "--opt=" for one that takes a value; nothing else;
#  - option values: actions, subsystems from /sys, timeline's lanes, trigger's
#    types, the verb found after --socket PATH;
#  - devices for the verbs whose usage names DEVICE: directories below
#    /sys, and /devices/... DEVPATHs; no operand for a verb without one;
#  - a directory's name is one candidate, as it is: neither split at a
#    blank nor taken as a pattern ("*" offered every name beside it);
#  - the typed words are never evaluated nor expanded: a verb, option value
#    or operand holding "$(touch FILE)" or `touch FILE` creates no FILE,
#    and a verb "st*" is not "status" where a file of that name lies.
#
# Environment: HOTPLUGCTL (the built binary), SRCDIR.
set -u

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}
if [ ! -r "$BASH_COMPLETION" ]; then
        echo "SKIP: bash-completion is not installed ($BASH_COMPLETION)"
        exit 77
fi
# bash_completion returns early in a shell that is not interactive unless
# told otherwise; it only needs its functions here.
BASH_COMPLETION_VERSINFO=() 
# shellcheck disable=SC1090
. "$BASH_COMPLETION" || fail "cannot load $BASH_COMPLETION"
# shellcheck disable=SC1091
. "$SRCDIR/completion/hotplugctl.bash" || fail "cannot load completion/hotplugctl.bash"
complete -p hotplugctl >/dev/null 2>&1 || fail "completion/hotplugctl.bash registers no completion for hotplugctl"

# comp WORD...: complete the last WORD (give "" for a new word) of
# "hotplugctl WORD...", as bash splits a line (an "=" is a word of its own);
# the candidates in $out, one per line, sorted.
comp() {
        COMP_WORDS=("$HOTPLUGCTL" "$@")
        COMP_CWORD=$#
        # The line as typed: no blanks around an "=".
        local w prev=
        COMP_LINE=$HOTPLUGCTL
        for w in "$@"; do
                if [ "$w" = = ] || [ "$prev" = = ]; then
                        COMP_LINE+=$w
                else
                        COMP_LINE+=" $w"
                fi
                prev=$w
        done
        COMP_POINT=${#COMP_LINE}
        COMPREPLY=()
        _hotplugctl "$HOTPLUGCTL" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        out=$(printf '%s\n' "${COMPREPLY[@]}" | sort)
}

# has LINE...: each LINE is a candidate of the last comp.
has() {
        local l
        for l in "$@"; do
                grep -qxF -- "$l" <<<"$out" || fail "completing '${COMP_LINE#"$HOTPLUGCTL"}' does not offer '$l': $(echo $out)"
        done
}
# is LINE...: exactly these candidates.
is() {
        local want
        want=$(printf '%s\n' "$@" | sort)
        [ "$out" = "$want" ] || fail "completing '${COMP_LINE#"$HOTPLUGCTL"}' offers '$(echo $out)', expected '$*'"
}

# ---- verbs ---------------------------------------------------------------------------------
verbs=$("$HOTPLUGCTL" --help | sed -n '/^Verbs:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$verbs" ] || fail "hotplugctl --help lists no verbs"
comp ""
# shellcheck disable=SC2086
is $verbs
has status settle trigger monitor test record timeline
comp tr
is trigger
comp se
is settle
comp --socket /tmp/nowhere st
is status
comp --
has --socket= --help --version
comp help ti
is timeline

# ---- each verb's options, against its --help ------------------------------------------------
for v in $verbs; do
        help=$("$HOTPLUGCTL" "$v" --help) || fail "hotplugctl $v --help failed"
        comp "$v" --
        [ -n "$out" ] || fail "no options completed for $v"
        # Every long option of the help (--[no-]x as --x and --no-x), with
        # "=" where it takes a value; and nothing that is not there.
        want=$(sed -n -E 's/^ {1,8}(-[[:alnum:]], +){0,2}(--[^ =,]+)(=| [A-Z])?.*/\2|\3/p' <<<"$help" |
                sed -E 's/^--\[no-\](.*)\|$/--\1\n--no-\1/; s/\|$//; s/\|.+$/=/' | sort -u)
        [ "$out" = "$want" ] || fail "hotplugctl $v --: completed '$(echo $out)', its --help has '$(echo $want)'"
        comp "$v" -
        for o in $(sed -n -E 's/^ {1,8}(-[[:alnum:]]), .*/\1/p' <<<"$help"); do
                has "$o"
        done
done
comp trigger --
has --subsystem-match= --sysname-match= --action= --settle --dry-run --jobs= --socket= --help
comp trigger --se
is --settle
comp test --
has --all --no-all --config= --sysfs=
comp trigger -
has -s -S -y -a -n -w -h

# ---- option values -------------------------------------------------------------------------
comp trigger --action ""
is add remove change move online offline bind unbind
comp trigger --action = ch
is change
comp test -a re
is remove
comp trigger -c ch
is change
comp trigger --type ""
is devices subsystems all
comp trigger -t s
is subsystems
comp timeline rec --lanes ""
is device subsystem
comp trigger -s ne
has net
comp trigger --subsystem-nomatch = bloc
has block

# ---- devices -------------------------------------------------------------------------------
[ -d /sys/class/net/lo ] || fail "no /sys/class/net/lo to complete"
for v in $verbs; do
        usage=$("$HOTPLUGCTL" "$v" --help | sed -n 's/^Usage: //p' | sed -E 's/\[(-|OPTIONS)[^]]*\]//g')
        case $usage in
        *DEVICE*)
                comp "$v" /sys/class/net/l
                is /sys/class/net/lo/
                comp "$v" /devices/virtual/net/l
                is /devices/virtual/net/lo/
                comp "$v" ""
                has /sys/class/ /sys/devices/
                comp "$v" --action add /sys/class/ne
                is /sys/class/net/
                devverbs+=" $v"
                ;;
        *FILE* | *RECORDING*) ;;
        *)
                comp "$v" ""
                is
                ;;
        esac
done
for v in test trigger; do
        [[ " ${devverbs-} " == *" $v "* ]] || fail "$v's usage names no DEVICE: no device completion"
done

# ---- names and words as they are ------------------------------------------------------------
T=$(mktemp -d /tmp/hotplugd-completion.XXXXXX) || fail "no temporary directory"
trap 'rm -rf "$T"' EXIT
mkdir "$T/a b" "$T/*" && touch "$T/status" || fail "cannot make directories in $T"
comp trigger "$T/"
is "$T/*/" "$T/a b/"
# A verb is the word typed, not a pattern matched against the directory.
cd "$T" || fail "cannot enter $T"
comp 'st*' --
is
cd - >/dev/null || fail "cannot go back"
for w in "\$(touch $T/pwned)" "\`touch $T/pwned\`"; do
        comp "$w" --
        comp "$w" ""
        comp trigger --action "$w"
        comp trigger -s "$w"
        comp trigger "$w"
        comp wait "/dev/$w"
        comp record "$w"
        [ -e "$T/pwned" ] && fail "completing '${COMP_LINE#"$HOTPLUGCTL"}' ran the command in a word"
done

echo "ok: verbs${devverbs:+, devices for$devverbs}, options of $(echo $verbs | wc -w) verbs"
