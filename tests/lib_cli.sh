# tests/lib_cli.sh: helpers the CLI tests (tests/cli_*.sh) share; sourced, not a test itself.
# Each test counts `passes` and `fails` and exits non-zero when fails > 0.
passes=0 fails=0

# python3: Debian's interpreter (deps.sh installs it), then the first on the PATH; DECBENCH_PYTHON
# chooses another. A python3 found first on the PATH may be a version manager's shim: pyenv's
# took 0.7 s a call on the 2-core CI VM against 0.06 s for /usr/bin/python3, and the CLI tests make
# hundreds of calls. Exported, so `bash -c` and `timeout ... bash -c` cases get it too.
DECBENCH_PYTHON=${DECBENCH_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
python3() { "$DECBENCH_PYTHON" "$@"; }
export -f python3

# q DB SQL: the rows as "a|b|c" lines (NULL as empty). Read-only, so a query never creates a
# database that a test then finds; waits up to 10 s for a writer (a run still going).
q() {
    python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
for r in c.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$@" 2>/dev/null
}

wait_samples() { # DB N: until DB holds at least N samples (a run going in the background), 60 s at most
    for _ in $(seq 600); do
        [ "$(q "$1" "SELECT COUNT(*) FROM samples")" -ge "$2" ] 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# ok / bad: count a check the test makes itself (bad prints its message).
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# expect_rc NAME WANT_EXIT PATTERN CMD...: CMD's exit status, and an extended regular expression
# found in its stderr
expect_rc() {
    local name=$1 want=$2 pat=$3; shift 3
    local out rc
    out=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -eq "$want" ] && grep -qE -- "$pat" <<<"$out"; then ok; else bad "$name: rc=$rc (want $want) stderr=$out"; fi
}

expect_eq() { # NAME WANT GOT
    if [ "$2" = "$3" ]; then passes=$((passes + 1)); else echo "FAIL $1: got '$3' want '$2'"; fails=$((fails + 1)); fi
}

expect_grep() { # NAME PATTERN FILE: an extended regular expression found in FILE
    if grep -qE -- "$2" "$3"; then passes=$((passes + 1)); else echo "FAIL $1: /$2/ not in $3:"; head -30 "$3"; fails=$((fails + 1)); fi
}
