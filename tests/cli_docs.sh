#!/usr/bin/env bash
# cli_docs.sh: the documentation stays a user's guide and the project's text says what is and
# why, not how or when it was made:
#   1. README.md is at most 650 lines: a guide a researcher reads in minutes; measurement logs
#      belong in docs/measurements/;
#   2. no tracked text file cites an issue number ("issue 12", "issues 14.1", "#37") or narrates
#      its own making (the sittings that built it: which one, their numbers, their order, the
#      round before): the reason belongs where the citation was. docs/measurements/ is left out
#      (its files are dated logs by design), and so is tests/data/ (fixtures, some third-party);
#   3. every docs/measurements/YYYY-MM-DD-topic.md names, in its header, the commit, the machine
#      and the command that produced its figures, its name carries the date, and the index
#      (docs/measurements/README.md) has a row that links to it;
#   4. every docs/measurements/FILE a tracked markdown file links to exists;
#   5. every decoder `decbench decoders` lists appears in README.md's decoder table.
set -u
. "$(dirname "$0")/lib_cli.sh"
SRC=${DECBENCH_SOURCE:?} B=${DECBENCH:?}
T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_docs}
rm -rf "$T" && mkdir -p "$T" || exit 1

# the tracked files (git), else every file of the source tree but build folders and .git
if git -C "$SRC" ls-files >"$T/files" 2>/dev/null && [ -s "$T/files" ]; then :; else
    (cd "$SRC" && find . -path ./.git -prune -o -path './build*' -prune -o -type f -print |
        sed 's|^\./||') >"$T/files"
fi

# 1. README's size
n=$(wc -l <"$SRC/README.md")
if [ "$n" -le 650 ]; then passes=$((passes + 1)); else
    echo "FAIL readme_size: README.md has $n lines, more than 650: move logs to docs/measurements/"
    fails=$((fails + 1))
fi

# 2. narration: one extended regular expression per kind, case-insensitive
narration='\bissues? ?#?[0-9]|\bthe issue('"'"'s)?\b|(^|[[:space:](])#[0-9]{1,5}([^0-9a-fA-F]|$)'
narration+='|\bthis[[:space:]]+session\b|\b(next|last|previous|earlier|same|that)[[:space:]]+(session|sitting)\b'
narration+='|\bsessions? (of |[0-9])|\b(sitting|wave)s? #?[0-9]'
narration+='|\b(last|previous) round\b'
grep -vE '^(docs/measurements/|tests/data/|tests/cli_docs\.sh$)' "$T/files" >"$T/scan"
: >"$T/narration"
while IFS= read -r f; do
    [ -f "$SRC/$f" ] || continue
    grep -HnIiE -- "$narration" "$SRC/$f" 2>/dev/null | sed "s|^$SRC/||" >>"$T/narration"
done <"$T/scan"
# `session` is also a struct of the harness (harness/session.h): lines naming its functions
# (session_...) may speak of that object with the words above
grep -vE 'harness/[a-z_]+\.[ch]:[0-9]+:.*session_' "$T/narration" \
    >"$T/narration.found"
if [ ! -s "$T/narration.found" ]; then passes=$((passes + 1)); else
    echo "FAIL narration: issue citations or self-narration (state the reason instead):"
    head -40 "$T/narration.found"
    fails=$((fails + 1))
fi

# 3. the logs' headers
logs=0
for f in "$SRC"/docs/measurements/*.md; do
    [ -f "$f" ] || continue
    name=$(basename "$f")
    [ "$name" = README.md ] && continue
    logs=$((logs + 1))
    if [[ "$name" =~ ^20[0-9]{2}-[01][0-9]-[0-3][0-9]-[a-z0-9-]+\.md$ ]]; then
        passes=$((passes + 1))
    else
        echo "FAIL log_name: docs/measurements/$name is not YYYY-MM-DD-topic.md"
        fails=$((fails + 1))
    fi
    if grep -qF "]($name)" "$SRC/docs/measurements/README.md" 2>/dev/null; then
        passes=$((passes + 1))
    else
        echo "FAIL log_indexed: docs/measurements/$name has no row in docs/measurements/README.md"
        fails=$((fails + 1))
    fi
    for field in Commit Machine Command; do
        if head -40 "$f" | grep -qE "^- \*\*$field:\*\* [^[:space:]]"; then passes=$((passes + 1)); else
            echo "FAIL log_header: docs/measurements/$name has no '- **$field:** ...' line in its header"
            fails=$((fails + 1))
        fi
    done
done
expect_eq logs_present 1 "$([ "$logs" -gt 0 ] && echo 1 || echo 0)"
expect_eq logs_index 1 "$([ -f "$SRC/docs/measurements/README.md" ] && echo 1 || echo 0)"

# 4. links into docs/measurements/
grep -E '\.md$' "$T/files" | while IFS= read -r f; do
    [ -f "$SRC/$f" ] || continue
    grep -oE '(docs/measurements/|\]\()[0-9]{4}-[0-9]{2}-[0-9]{2}-[a-z0-9-]+\.md' "$SRC/$f" |
        sed -E 's|^(docs/measurements/\|\]\()||' | sed "s|^|$f |"
done | sort -u >"$T/links"
missing=0
while read -r from target; do
    if [ ! -f "$SRC/docs/measurements/$target" ]; then
        echo "FAIL log_link: $from links to docs/measurements/$target, which does not exist"
        missing=$((missing + 1))
    fi
done <"$T/links"
expect_eq log_links 0 "$missing"

# 5. the decoders README documents are the registry's
"$B" decoders >"$T/decoders.txt" 2>&1
expect_eq decoders_rc 0 $?
undocumented=""
for d in $(awk '/^  [a-z_]+  / {print $1}' "$T/decoders.txt" | sort -u); do
    grep -qE "^\| \`$d[:\`]" "$SRC/README.md" || undocumented+=" $d"
done
expect_eq readme_decoders "" "$undocumented"

echo "cli_docs: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
