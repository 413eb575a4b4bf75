# bash completion for decbench (installed as share/bash-completion/completions/decbench).
# Commands, each command's options (read from `decbench CMD --help`, so it never falls behind
# the binary), and the values of the options that take a name from a fixed list: decoders,
# datasets, plot kinds, report formats and layouts, kernels; FILE and DIR values complete paths.
_decbench() {
    local cur prev cmd words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    cmd=${COMP_WORDS[1]}
    local b=${COMP_WORDS[0]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        words=$("$b" --help 2>/dev/null | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
        COMPREPLY=($(compgen -W "$words --help --version" -- "$cur"))
        return
    fi
    [ "$cmd" = help ] && { COMPREPLY=($(compgen -W "$("$b" --help 2>/dev/null | sed -n 's/^  \([a-z]\+\)  .*/\1/p')" -- "$cur")); return; }
    # The option before the cursor takes a value: its placeholder in --help says which kind.
    local meta
    meta=$("$b" "$cmd" --help 2>/dev/null | sed -n "s/^ *\(-[a-zA-Z], \)\?$prev \([^ ]\+\) .*/\2/p" | head -1)
    if [ -n "$meta" ] && [[ "$prev" == -* ]]; then
        case "$prev:$meta" in
        --decoder:*|-d:*|--grid:*|-g:*)
            words=$("$b" decoders 2>/dev/null | sed -n 's/^  \([a-z]\+\) .*/\1/p')
            COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
        --dataset:*)
            words=$("$b" run --help 2>/dev/null | sed -n 's/^  \([a-z_][a-z_-]*\)\( ([a-z]*)\)\? \{2,\}[A-Z].*/\1/p')
            COMPREPLY=($(compgen -W "$words jsonl:" -- "$cur")) ;;
        --kind:*|-k:*) COMPREPLY=($(compgen -W "$("$b" plot --help 2>/dev/null | sed -n 's/.*kinds: \(.*\)/\1/p' | tr -d ',')" -- "$cur")) ;;
        --format:*|-f:*) COMPREPLY=($(compgen -W "md csv json latex jsonl" -- "$cur")) ;;
        --layout:*|-l:*) COMPREPLY=($(compgen -W "$("$b" report --help 2>/dev/null | sed -n 's/.*layouts: \(.*\)/\1/p' | tr -d ',')" -- "$cur")) ;;
        *:*\|*) COMPREPLY=($(compgen -W "${meta//|/ }" -- "$cur")) ;;
        *:DIR) COMPREPLY=($(compgen -d -- "$cur")) ;;
        *:FILE|*:OUT*) COMPREPLY=($(compgen -f -- "$cur")) ;;
        *) COMPREPLY=() ;;
        esac
        return
    fi
    if [[ "$cur" == -* ]]; then
        words=$("$b" "$cmd" --help 2>/dev/null | sed -n 's/^ *\(-[a-zA-Z], \)\?\(--[a-z][a-z0-9-]*\).*/\2/p')
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _decbench decbench
