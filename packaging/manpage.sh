#!/usr/bin/env bash
# packaging/manpage.sh DECBENCH OUT.1: the decbench(1) man page, made by help2man (Debian
# package help2man) from `decbench --help` and `--version`, with one section per command
# holding that command's own --help, so `man decbench` documents every option the binary has.
set -euo pipefail
B=$1 OUT=$2
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
# roff: a backslash is \e; a line starting with . or ' would be a request: \& guards it.
roff() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
{
    echo "[COMMANDS]"
    for c in $("$B" --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p' | grep -v '^help$'); do
        echo ".SS \"decbench $c\""
        echo ".nf"
        "$B" "$c" --help | roff
        echo ".fi"
    done
    cat <<'TXT'
[FILES]
.TP
.B results/decbench.db
the default results database (SQLite; schema in results/db/schema.sql of the source).
.TP
.B share/decbench/plots/
the gnuplot scripts `decbench plot` runs, found beside the binary (\fI../share/decbench\fR),
under $DECBENCH_HOME, or in the source tree.
[ENVIRONMENT]
.TP
.B DECBENCH_SHARED
the folder holding models/ and datasets/ (default ../shared).
.TP
.B DECBENCH_MODELS, DECBENCH_DATASETS
the two sub-folders separately; a model given by bare name (stories260K.bin) is looked up in
the models folder.
.TP
.B DECBENCH_HOME
where the installed data (plots/) is, when the binary was moved away from its prefix.
[EXIT STATUS]
0 success, 1 error (or a decoder differing from greedy), 2 usage error, 130 interrupted;
compare: 0 pass, 1 regression, 2 error.
TXT
} >"$inc"
help2man --no-info --no-discard-stderr --section 1 \
    --name "compare exact LLM decoding algorithms on the CPU" \
    --include "$inc" --output "$OUT.tmp" "$B"
mv "$OUT.tmp" "$OUT"
