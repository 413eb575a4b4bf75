#!/usr/bin/env bash
# cli_install.sh: `cmake --install`: the binary, the gnuplot scripts, the cluster
# scripts, the man page and bash completion land under the prefix; the installed tree still
# works after being moved elsewhere (the binary finds ../share/decbench beside itself, before
# the source tree it was built from); the completion completes commands, options and values.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} S=${DECBENCH_SHARED:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_install}
BUILD=${DECBENCH_BUILD:?}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1

cmake --install "$BUILD" --prefix "$T/prefix" >install.log 2>&1 || { bad "cmake --install"; cat install.log; }
for f in bin/decbench share/decbench/plots/common.gp share/decbench/plots/speedup.gp \
    share/decbench/cluster/parallel.sh share/decbench/cluster/slurm.sbatch \
    share/bash-completion/completions/decbench share/doc/decbench/README.md; do
    [ -e "prefix/$f" ] && ok || bad "not installed: $f"
done
# the man page (not made by the sanitizer builds)
if [ -z "${DECBENCH_SANITIZED:-}" ]; then
    [ -s prefix/share/man/man1/decbench.1 ] && ok || bad "no man page"
    man -l prefix/share/man/man1/decbench.1 2>/dev/null >man.txt
    expect_grep man_commands "decbench sweep" man.txt
    expect_grep man_options "--shard I/N" man.txt
fi

# moved away from its prefix: the installed scripts are found beside the binary (a mark put
# into the installed copy proves they, not the source tree's, were used)
mv prefix moved
sed -i 's/^set title "Speed-up over greedy decoding/set title "INSTALLED COPY: speed-up over greedy decoding/' moved/share/decbench/plots/speedup.gp
M=$S/models/stories260K.bin
moved/bin/decbench run --model "$M" --dataset tinystories --limit 1 -n 8 --threads 1 --warmup 0 --decoder pld --db r.db >/dev/null 2>&1 || bad "installed run"
moved/bin/decbench plot --db r.db --kind speedup --out plots >/dev/null 2>plot.err || bad "installed plot: $(cat plot.err)"
expect_grep relocated_scripts "INSTALLED COPY" plots/speedup.svg

# bash completion: commands, a command's options, decoder names, fixed lists
comp() { # WORDS...: the completions for the last word
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _decbench; echo "${COMPREPLY[*]}"' _ \
        moved/share/bash-completion/completions/decbench "$@"
}
PATH=$T/moved/bin:$PATH
expect_eq comp_command "sweep" "$(comp decbench swe)"
expect_eq comp_option "--shard --skip-long" "$(comp decbench run --s | tr ' ' '\n' | grep -E '^--(shard|skip-long)$' | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq comp_decoder "lookahead" "$(comp decbench run --decoder look)"
expect_eq comp_kernels "exact exact-int8 exact-int8b" "$(comp decbench run --kernels ex)"
expect_eq comp_format "latex" "$(comp decbench report --format la)"
expect_eq comp_dataset "mt_bench" "$(comp decbench run --dataset mt_)"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
