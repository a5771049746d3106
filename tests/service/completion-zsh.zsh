#!/bin/zsh -f
# SPDX-License-Identifier: MIT
# hotplugctl's zsh completion (completion/hotplugctl.zsh, installed as
# _hotplugctl), in an interactive zsh on a pseudo-terminal (zsh/zpty) with
# compinit, completing for the built hotplugctl: each candidate the
# completion adds is written to a file by a compadd wrapper.
#  - the verbs of 'hotplugctl --help', a prefix completes to its verb,
#    "help VERB";
#  - every verb's options: each long option of 'hotplugctl VERB --help';
#  - option values: actions, subsystems from /sys;
#  - devices below /sys for a verb whose usage names DEVICE;
#  - the typed words are never evaluated: a verb or a program path holding
#    "$(touch FILE)" creates no FILE (completion used to pass them to
#    _call_program, which evals its arguments), and a quoted verb
#    ('status') still completes its options.
# Each completion is waited for by a marker the shell prints after it, not
# by a fixed time.
#
# Environment: HOTPLUGCTL (the built binary), SRCDIR.
zmodload zsh/zpty || { print "SKIP: no zsh/zpty"; exit 77 }

fail() { print -r -- "FAIL: $*" >&2; exit 1 }

T=$(mktemp -d /tmp/hotplugd-zsh.XXXXXX) || fail "no temporary directory"
trap 'zpty -d z 2>/dev/null; rm -rf $T' EXIT
cp $SRCDIR/completion/hotplugctl.zsh $T/_hotplugctl || fail "no completion/hotplugctl.zsh"
mkdir $T/bin && ln -s $HOTPLUGCTL $T/bin/hotplugctl
OUT=$T/out

# comp LINE: complete LINE (as typed, then Tab); the candidates in $out, one a line, sorted.
comp() {
        local l
        : >$OUT
        zpty z zsh -f -i || fail "cannot start zsh on a pseudo-terminal"
        zpty -w z "PS1=; cd $T; fpath=($T \$fpath); autoload -U compinit; compinit -u -d $T/zcd; path=($T/bin \$path)"
        zpty -w z "compadd() { local -a h; builtin compadd -O h \"\$@\"; print -rl -- \"\${h[@]}\" >>$OUT; builtin compadd \"\$@\" }"
        # Tab completes, then says so (a message the typed line does not hold).
        zpty -w z 'complete-then-say() { zle complete-word; zle -M "completion-${(U):-over}" }; zle -N complete-then-say; bindkey "^I" complete-then-say'
        zpty -w -n z "$1"$'\t'
        zpty -r -m z l "*completion-OVER*" || fail "completing '$1': the shell did not come back"
        zpty -d z
        out=$(sort -u $OUT)
}

# has WORD...: each WORD is a candidate of the last comp.
has() {
        local w
        for w; do
                [[ ${${(f)out}[(Ie)$w]} -gt 0 ]] || fail "completing '$line' does not offer '$w': ${(f)out}"
        done
}

verbs=(${(f)"$($HOTPLUGCTL --help | sed -n '/^Verbs:/,/^$/s/^  *\([a-z][a-z-]*\)  .*/\1/p')"})
(( $#verbs > 5 )) || fail "hotplugctl --help lists no verbs"
line="hotplugctl "; comp $line
[[ $out == ${(F)${(o)verbs}} ]] || fail "verbs: completed '${(f)out}', --help has '$verbs'"
line="hotplugctl bl"; comp $line; [[ $out == blame ]] || fail "'$line' completed '$out'"
line="hotplugctl help wa"; comp $line; [[ $out == wait ]] || fail "'$line' completed '$out'"
for v in $verbs; do
        [[ $v == help ]] && continue
        want=(${(f)"$($HOTPLUGCTL $v --help | sed -n -E 's/^ {1,8}(-[[:alnum:]], +){0,2}--(\[no-\])?([[:alnum:]-]+).*/--\3/p')"})
        line="hotplugctl $v --"; comp $line
        has $want
done
line="hotplugctl blame --"; comp $line; has --json --top --socket --help
line="hotplugctl trigger --action "; comp $line; has add remove change bind
line="hotplugctl test -a re"; comp $line; [[ $out == remove ]] || fail "'$line' completed '$out'"
line="hotplugctl trigger -t "; comp $line; has devices subsystems all
if [[ -d /sys/class/net ]]; then
        line="hotplugctl trigger -s ne"; comp $line; has net
        line="hotplugctl wait /sys/class/ne"; comp $line; has net
fi
# A program path or verb as typed is a word, not a command: nothing runs.
mkdir "$T/\$(touch pwned-prog)" && ln -s $HOTPLUGCTL "$T/\$(touch pwned-prog)/hotplugctl" ||
        fail "cannot make a directory named \$(touch pwned-prog)"
line="$T/\$(touch pwned-prog)/hotplugctl --"; comp $line
[[ -e $T/pwned-prog ]] && fail "completing '$line' ran the command in the program's path"
has --socket --help
line="hotplugctl \$(touch $T/pwned-verb) --"; comp $line
[[ -e $T/pwned-verb ]] && fail "completing '$line' ran the command in the verb"
line="hotplugctl 'status' --"; comp $line; has --json --socket
print "ok: zsh completes $#verbs verbs, their options, actions, subsystems and devices"
