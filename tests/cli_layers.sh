#!/usr/bin/env bash
# cli_layers.sh: the layer rules of ARCHITECTURE.md hold. The table "## Layers" says, per source
# folder, what it may include (folders, single headers like `decoders/decoder.h`, and
# `<sqlite3.h>`, reserved to the folders that list it). Every `#include "x/..."` and every
# `#include <sqlite3.h>` of every .c/.h file is checked against it; a source folder missing from
# the table fails too (tests/ may include anything). The checker is first run on a copy of the
# tree with one planted violation of each kind, so a checker that passes everything fails here.
set -u
. "$(dirname "$0")/lib_cli.sh"
SRC=${DECBENCH_SOURCE:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_layers}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1

check() { # ROOT: prints "ok" or one line per violation
    python3 - "$1" <<'PY'
import os, re, sys
root = sys.argv[1]
table, rows = {}, False
for line in open(os.path.join(root, "ARCHITECTURE.md")):
    if line.startswith("## "):
        rows = line.strip() == "## Layers"
        continue
    m = re.match(r"\| `([\w/]+)/` \|.*\| ([^|]*) \|\s*$", line) if rows else None
    if m:
        allowed = m.group(2).strip()
        table[m.group(1)] = set() if allowed == "nothing of ours" else \
            {a.strip().strip("`") for a in allowed.split(",")}
bad = [] if table else ["no layer table found in ARCHITECTURE.md"]

def allows(room, inc):
    """An include is allowed from a file of `room` (its folder) when it is in the same folder, a
    listed single header, or under a listed folder (a folder entry covers its subfolders)."""
    d = os.path.dirname(inc)
    if d == room or inc in table[room]:
        return True
    return any(d == a or d.startswith(a + "/") for a in table[room])

for dirpath, dirnames, filenames in sorted(os.walk(root)):
    dirnames.sort()
    room = os.path.relpath(dirpath, root)
    top = room.split("/")[0]
    if room == "." or top in ("tests", "build") or top.startswith(("build", ".")):
        dirnames[:] = [] if room != "." else [n for n in dirnames
                                               if n not in ("tests", "build") and not n.startswith(("build", "."))]
        continue
    files = [f for f in sorted(filenames) if f.endswith((".c", ".h"))]
    if not files:
        continue
    if room not in table:
        bad.append(f"{room}/: a source folder missing from the layer table")
        continue
    for f in files:
        for n, line in enumerate(open(os.path.join(dirpath, f), errors="replace"), 1):
            m = re.match(r'\s*#\s*include\s*(["<])([^">]+)[">]', line)
            if not m:
                continue
            inc = m.group(2)
            if m.group(1) == "<":
                if inc == "sqlite3.h" and "<sqlite3.h>" not in table[room]:
                    bad.append(f"{room}/{f}:{n}: <sqlite3.h> (SQL lives in results/)")
                continue
            if "/" in inc and not allows(room, inc):
                bad.append(f"{room}/{f}:{n}: includes {inc}; {room}/ may include: "
                           + (", ".join(sorted(table[room])) or "nothing of ours"))
print("\n".join(bad) if bad else "ok")
PY
}

# 1. the checker bites: a copy with one violation of each kind
cp -r "$SRC/ARCHITECTURE.md" "$SRC/util" "$SRC/results" "$SRC/harness" "$SRC/stats" "$SRC/model" "$T/"
mkdir -p "$T/newfolder" && echo '#include "util/err.h"' >"$T/newfolder/x.c"
echo '#include "decoders/decoder.h"' >>"$T/results/db/db.h"
echo '#include "decoders/ouroboros.h"' >>"$T/harness/runner.c"
echo '#include <sqlite3.h>' >>"$T/harness/cmd_run.c"
echo '#include "model/model.h"' >>"$T/stats/stats.c"
echo '#include "model/kernels/kernels.h"' >>"$T/model/weights/wtype.c"
echo '#include "model/formats/gguf.h"' >>"$T/model/forward.c"
mkdir -p "$T/model/newroom" && echo '#include "util/err.h"' >"$T/model/newroom/y.c"
check "$T" >planted.txt
expect_grep bites_results_decoders '^results/db/db.h:[0-9]+: includes decoders/decoder.h' planted.txt
expect_grep bites_harness_decoder_header '^harness/runner.c:[0-9]+: includes decoders/ouroboros.h' planted.txt
expect_grep bites_sqlite '^harness/cmd_run.c:[0-9]+: <sqlite3.h>' planted.txt
expect_grep bites_stats '^stats/stats.c:[0-9]+: includes model/model.h; stats/ may include: nothing of ours' planted.txt
expect_grep bites_new_folder '^newfolder/: a source folder missing' planted.txt
expect_grep bites_subfolder_down '^model/weights/wtype.c:[0-9]+: includes model/kernels/kernels.h; model/weights/ may include: util' planted.txt
expect_grep bites_root_up '^model/forward.c:[0-9]+: includes model/formats/gguf.h' planted.txt
expect_grep bites_new_subfolder '^model/newroom/: a source folder missing' planted.txt
expect_eq bites_nothing_else 8 "$(wc -l <planted.txt)"

# 2. the real tree
check "$SRC" >real.txt
expect_eq layers_hold ok "$(cat real.txt)"
[ "$(cat real.txt)" = ok ] || cat real.txt

echo "cli_layers: $passes passed, $fails failed"
[ $fails -eq 0 ]
