#compdef hotplugctl
# zsh completion for hotplugctl(8)
# SPDX-License-Identifier: MIT
#
# As the bash completion (hotplugctl.bash), everything comes from the help
# of the hotplugctl being completed: the verbs from 'hotplugctl --help', a
# verb's options from 'hotplugctl VERB --help' (each option line: its short
# and long names, its argument, its description), and what an argument or
# operand is from its name there: DEVICE a device below /sys (or a DEVPATH,
# /devices/...), FILE, PATH, RECORDING, OUT.svg a file, DIR a directory,
# SUBSYSTEM a bus or class from /sys, ACTION a kernel action, TYPE devices,
# subsystems or all (trigger --type).

# _hotplugctl_action NAME: the _arguments action for an argument named NAME.
_hotplugctl_action() {
        case $1 in
        DEVICE*) print -r -- '_hotplugctl_devices' ;;
        FILE*|PATH|RECORDING*|OUT*|*.svg) print -r -- '_files' ;;
        DIR|DIRS) print -r -- '_files -/' ;;
        SUBSYSTEM) print -r -- '_hotplugctl_subsystems' ;;
        ACTION) print -r -- '(add remove change move online offline bind unbind)' ;;
        KEY) print -r -- '(device subsystem)' ;;
        TYPE) print -r -- '(devices subsystems all)' ;;
        *) print -r -- ' ' ;;
        esac
}

_hotplugctl_devices() {
        if [[ $PREFIX == /devices* ]]; then
                _files -W /sys -/
        else
                _files -/
        fi
}

_hotplugctl_subsystems() {
        local -a s
        s=(/sys/bus/*(N:t) /sys/class/*(N:t))
        compadd -a s
}

# _hotplugctl_specs HELP: an _arguments spec per option line of HELP
# ("  -t, --timeout=SEC   what it does", "  -a, -c, --action=ACTION ...",
# "      --[no-]all ...").
_hotplugctl_specs() {
        local line names desc arg long n excl
        local -a shorts out
        for line in ${(f)"$(print -r -- $1 | sed -n -E 's/^ {1,8}((-[[:alnum:]], +){0,2}--[^ ]+( [A-Z][^ ]*)?)( {2,}(.*))?$/\1|\5/p')"}; do
                names=${line%%\|*} desc=${${line#*\|}//[\[\]:]/}
                shorts=(${(M)${(s:, :)names}:#-[[:alnum:]]})
                long=${names##*, }
                arg=
                [[ $long == *[=\ ]* ]] && arg=${long#*[= ]}
                long=${long%%[= ]*}
                if [[ $long == --\[no-\]* ]]; then
                        out+=("--${long#--\[no-\]}[$desc]" "--no-${long#--\[no-\]}[$desc]")
                        continue
                fi
                excl="(${(j: :)shorts} $long)"
                for n in $shorts; do
                        out+=("$excl$n${arg:++}[$desc]${arg:+:$arg:$(_hotplugctl_action $arg)}")
                done
                out+=("$excl$long${arg:+=}[$desc]${arg:+:$arg:$(_hotplugctl_action $arg)}")
        done
        print -rl -- $out
}

# The words are as typed, quotes and all.  _call_program evals its
# arguments as one string, so what it gets of them is unquoted here (Q: the
# typed quotes go, nothing is expanded) and quoted again where it is called
# (q): a word like $(cmd) reaches hotplugctl as that text and never runs.
_hotplugctl() {
        setopt localoptions extendedglob
        local prog=${(Q)words[1]} verb= help usage i
        local -a verbs specs
        [[ $prog == */* && -x $prog ]] || prog=hotplugctl

        # The verb: the first word that is not an option (nor --socket's value).
        for ((i = 2; i < CURRENT; i++)); do
                case $words[i] in
                --socket) ((i++)) ;;
                -*) ;;
                *) verb=${(Q)words[i]}; break ;;
                esac
        done
        verbs=(${(f)"$(_call_program verbs ${(q)prog} --help 2>/dev/null |
                sed -n '/^Verbs:/,/^$/s/^  *\([a-z][a-z-]*\)  *\(.*\)/\1:\2/p')"})
        if [[ -z $verb ]]; then
                if [[ $PREFIX == -* ]]; then
                        _arguments ${(f)"$(_hotplugctl_specs "$(_call_program options ${(q)prog} --help 2>/dev/null)")"}
                else
                        _describe -t verbs 'hotplugctl verb' verbs
                fi
                return
        fi
        if [[ $verb == help ]]; then
                ((CURRENT == i + 1)) && _describe -t verbs 'hotplugctl verb' verbs
                return
        fi

        # From here on the verb's own words, as if it were the command.
        help=$(_call_program options ${(q)prog} ${(q)verb} --help 2>/dev/null)
        specs=(${(f)"$(_hotplugctl_specs "$help")"})
        usage=${${(M)${(f)help}:#Usage: *}#Usage: * * }
        usage=${usage//\[-[^\]]#\]/}
        case $usage in
        *DEVICE*) specs+=('*:device:_hotplugctl_devices') ;;
        *FILE*|*RECORDING*) specs+=('*:file:_files') ;;
        esac
        shift $((i - 1)) words
        ((CURRENT -= i - 1))
        _arguments -s -S $specs
}

_hotplugctl "$@"
