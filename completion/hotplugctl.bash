# bash completion for hotplugctl(8)                        -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# The verbs, each verb's options, which options take an argument and which
# verbs take devices or files all come from the help of the hotplugctl being
# completed (`hotplugctl --help`, `hotplugctl VERB --help`), read once per
# shell and verb: a verb or option added to hotplugctl completes without a
# change here.  What an argument is comes from its name in the help:
#   DEVICE      a device below /sys (or /devices/..., or /dev/... where the
#               verb's help names /dev)
#   FILE, PATH, RECORDING, OUT.svg    a file;  DIR, DIRS    a directory
#   SUBSYSTEM   a bus or class name from /sys;  ACTION    a kernel action
#   TYPE        devices, subsystems or all (trigger --type)

# _hotplugctl_help PROG [VERB]: PROG's help (of VERB), cached in
# _hotplugctl_cache.
_hotplugctl_help()
{
        local key="$1 ${2-}"
        [[ -v _hotplugctl_cache[$key] ]] ||
                _hotplugctl_cache[$key]=$("$1" ${2:+"$2"} --help 2>/dev/null)
        printf '%s\n' "${_hotplugctl_cache[$key]}"
}
declare -gA _hotplugctl_cache 2>/dev/null || true

# _hotplugctl_verbs PROG: the verbs of the "Verbs:" list.
_hotplugctl_verbs()
{
        _hotplugctl_help "$1" | sed -n '/^Verbs:/,/^$/s/^  *\([a-z][a-z-]*\)  .*/\1/p'
}

# _hotplugctl_options PROG [VERB]: one line per option of the help's
# option lines, "NAME ARG" (ARG empty for a flag): "-t SEC", "--timeout SEC",
# "--all", "--no-all" (from --[no-]all); a line may name two short forms
# ("-a, -c, --action=ACTION").
_hotplugctl_options()
{
        _hotplugctl_help "$@" | sed -n -E '
                /^ {1,8}(-[[:alnum:]], +){0,2}--/!d
                s/^ +//
                s/^(-[[:alnum:]]), +(-[[:alnum:]]), +(--)([[:alnum:]-]+)([= ]([A-Za-z][[:alnum:].]*))?.*/\1 \6\n\2 \6\n\3\4 \6/
                s/^(-[[:alnum:]]), +(--\[no-\]|--)([[:alnum:]-]+)([= ]([A-Za-z][[:alnum:].]*))?.*/\1 \5\n\2\3 \5/
                s/^(--\[no-\]|--)([[:alnum:]-]+)([= ]([A-Za-z][[:alnum:].]*))?.*/\1\2 \4/
                s/^--\[no-\]([^\n]*)/--\1\n--no-\1/
                s/\n--\[no-\]([^\n]*)/\n--\1\n--no-\1/
                p'
}

# _hotplugctl_value ARG: complete the value of an option argument or operand
# named ARG in the help.
_hotplugctl_value()
{
        case $1 in
        DEVICE*)
                _hotplugctl_devices ;;
        FILE* | PATH | RECORDING* | OUT* | *.svg)
                _filedir ;;
        DIR | DIRS)
                _filedir -d ;;
        SUBSYSTEM)
                local s
                s=$(for s in /sys/bus/* /sys/class/*; do [[ -e $s ]] && printf '%s\n' "${s##*/}"; done | sort -u)
                COMPREPLY=($(compgen -W "$s" -- "$cur")) ;;
        ACTION)
                COMPREPLY=($(compgen -W 'add remove change move online offline bind unbind' -- "$cur")) ;;
        KEY)
                COMPREPLY=($(compgen -W 'device subsystem' -- "$cur")) ;;
        TYPE)
                COMPREPLY=($(compgen -W 'devices subsystems all' -- "$cur")) ;;
        esac
}

# _hotplugctl_devices: directories below /sys; "/devices/..." (a DEVPATH)
# below /sys/devices; files below /dev/ where the verb's help names /dev.
# A name is one candidate as it is (mapfile, one a line): not split at a
# blank, not expanded as a pattern ("*").
_hotplugctl_devices()
{
        local d
        compopt -o filenames -o nospace 2>/dev/null
        if [[ $cur == /devices* ]]; then
                mapfile -t COMPREPLY < <(compgen -d -- "/sys$cur")
                COMPREPLY=("${COMPREPLY[@]#/sys}")
        elif [[ $cur == /dev/* && $help == */dev/* ]]; then
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        else
                [[ -z $cur || $cur == / || $cur == /s || $cur == /sy ]] && cur=/sys/
                mapfile -t COMPREPLY < <(compgen -d -- "$cur")
        fi
        # A directory goes on: append its slash here, as -o filenames does
        # not for names it did not take from the file system (a DEVPATH).
        for d in "${!COMPREPLY[@]}"; do
                [[ -d ${COMPREPLY[d]} || -d /sys${COMPREPLY[d]} ]] && COMPREPLY[d]+=/
        done
        compopt +o filenames 2>/dev/null
}

_hotplugctl()
{
        local cur prev words cword split
        _init_completion -s || return

        local prog=${words[0]} verb= i opts arg help usage
        # Complete for the program on the command line when it runs, else
        # for the one in PATH.
        [[ $prog == */* && -x $prog ]] || prog=hotplugctl

        # The verb: the first word that is not an option (nor --socket's value).
        for ((i = 1; i < cword; i++)); do
                case ${words[i]} in
                --socket) ((i++)) ;;
                -*) ;;
                *) verb=${words[i]}; break ;;
                esac
        done

        # "hotplugctl help VERB" is "hotplugctl VERB --help".
        if [[ $verb == help ]]; then
                [[ $prev == help ]] && COMPREPLY=($(compgen -W "$(_hotplugctl_verbs "$prog")" -- "$cur"))
                return
        fi

        help=$(_hotplugctl_help "$prog" "$verb")
        opts=$(_hotplugctl_options "$prog" "$verb")

        # An option's argument: --opt=VALUE, or the word after an option
        # that takes one.
        if [[ $split == true || $prev == -* ]]; then
                arg=$(awk -v o="$prev" '$1 == o { print $2; exit }' <<<"$opts")
                if [[ -n $arg ]]; then
                        _hotplugctl_value "$arg"
                        return
                fi
                [[ $split == true ]] && return
        fi

        if [[ $cur == -* ]]; then
                local o
                COMPREPLY=($(compgen -W "$(awk '{ print $1 }' <<<"$opts")" -- "$cur"))
                # --opt= for an option that takes an argument.
                for i in "${!COMPREPLY[@]}"; do
                        o=${COMPREPLY[i]}
                        if [[ $o == --* ]] && awk -v o="$o" '$1 == o && $2 != "" { f = 1 } END { exit !f }' <<<"$opts"; then
                                COMPREPLY[i]=$o=
                                compopt -o nospace 2>/dev/null
                        fi
                done
                return
        fi

        if [[ -z $verb ]]; then
                COMPREPLY=($(compgen -W "$(_hotplugctl_verbs "$prog")" -- "$cur"))
                return
        fi

        # Operands: what the verb's usage line names after its options.
        usage=$(sed -n 's/^Usage: [^ ]* [^ ]* *//p' <<<"$help" | sed -E 's/\[(-|OPTIONS)[^]]*\]//g')
        case $usage in
        *DEVICE*) _hotplugctl_value DEVICE ;;
        *FILE* | *RECORDING*) _hotplugctl_value FILE ;;
        esac
} &&
        complete -F _hotplugctl hotplugctl

# ex: filetype=sh
