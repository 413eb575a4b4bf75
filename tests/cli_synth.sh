#!/usr/bin/env bash
# cli_synth.sh: `decbench synth` never writes a runaway file and never leaves a partial model
# at its output path:
#   - a configuration over the 512 GB limit (a 916 TB one) is refused with the size,
#     before anything is created; so is one larger than the free space of the target;
#   - killed while writing (the file size limit sends SIGXFSZ, as kill -9 would end it), the old
#     file at the path is intact; a write error removes the .tmp and says why;
#   - wrapped or saturated numbers in --config/--seed are refused, naming the field and range;
#   - a directory or FIFO as the output is refused without blocking.
# Every synth here runs under `ulimit -f`, so that a broken build fails the test instead of
# filling the disk.
set -u
. "$(dirname "$0")/lib_cli.sh"
B=${DECBENCH:?} T=${DECBENCH_TEST_TMP:-/tmp/decbench_cli_synth}
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1

# expect_fail NAME PATTERN CMD...: exits 1..127 (no signal) with PATTERN on stderr
expect_fail() {
    local name=$1 pat=$2; shift 2
    local out rc
    out=$("$@" 2>&1 >/dev/null); rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qE -- "$pat" <<<"$out"; then passes=$((passes + 1))
    else echo "FAIL $name: rc=$rc stderr=$out"; fails=$((fails + 1)); fi
}
absent() { # NAME PATH...: none of the paths exists
    local name=$1; shift
    for p in "$@"; do
        if [ -e "$p" ]; then echo "FAIL $name: $p exists"; fails=$((fails + 1)); return; fi
    done
    passes=$((passes + 1))
}
# limited KB CMD...: CMD with files capped at KB kilobytes
limited() { local kb=$1; shift; (ulimit -f "$kb"; exec "$@"); }

# 1. a runaway configuration: 915.9 TB, refused before anything is written
expect_fail runaway "big\.bin: this configuration makes a 915\.9 TB file \(915893991505948 bytes\), over the 512\.0 GB limit" \
    limited 1024 $B synth --config 65536,1048576,1024,1024,1024,4194304,1048576 -o big.bin
absent runaway_nothing_written big.bin big.bin.tmp

# 2. larger than the free space here (and under the limit): refused with both numbers. Layers of
# dim 8192, hidden 28672, 8 kv heads of 128 are 3.42 GB each; pick enough to pass the free space.
avail=$(df --output=avail -B1 "$T" | tail -1)
layers=$(( avail / 3422552064 + 2 ))
if [ "$layers" -le 140 ]; then # 140 layers = 479 GB: still under the 512 GB limit
    expect_fail no_space "nospace\.bin: needs [0-9.]+ GB \([0-9]+ bytes\) but its file system has [0-9.]+ [kMGT]B available" \
        limited 1024 $B synth --config "8192,28672,$layers,64,8,32000,4096" -o nospace.bin
    absent no_space_nothing_written nospace.bin nospace.bin.tmp
else
    echo "skip no_space: $avail bytes free, more than the 512 GB limit covers"
fi

# 3. killed while writing: the old file stays as it was (only the .tmp holds the partial write)
echo "old model" > m.bin
limited 200 $B synth --config 15M -o m.bin 2>/dev/null
rc=$?
expect_eq killed_by_signal 153 "$rc" # 128 + SIGXFSZ
first() { head -c 40 "$1" 2>/dev/null | tr -dc '[:print:]'; } # printable start of a file
expect_eq killed_keeps_old "old model" "$(first m.bin)"
# ... and the next synth replaces the stale .tmp and writes the whole file
$B synth --config 260K -o m.bin 2>/dev/null
expect_eq after_kill_size 1056540 "$(stat -c %s m.bin)"
absent after_kill_no_tmp m.bin.tmp

# 4. a write error (SIGXFSZ ignored: write() fails with EFBIG): message, .tmp removed, old file kept
echo "old model" > m.bin
expect_fail write_error "m\.bin: write failed: File too large" \
    bash -c "trap '' XFSZ; ulimit -f 200; exec $B synth --config 15M -o m.bin"
expect_eq write_error_keeps_old "old model" "$(first m.bin)"
absent write_error_no_tmp m.bin.tmp

# 5. numbers: wrapped or saturated values are refused as typed, with the field and its range
expect_fail wrapped_dim "--config: dim: 4294967360 is out of range 1\.\.65536" \
    limited 1024 $B synth --config 4294967360,172,5,8,4,512,512 -o w.bin
expect_fail seed_overflow "--seed: 99999999999999999999 is out of range 0\.\.2147483647" \
    limited 1024 $B synth --config 260K --seed 99999999999999999999 -o w.bin
expect_fail vocab_overflow "--vocab: -99999999999999999999 is out of range 0\.\.4194304" \
    limited 1024 $B synth --config 260K --vocab -99999999999999999999 -o w.bin
absent numbers_nothing_written w.bin w.bin.tmp

# 6. outputs that are not regular files
mkdir -p outdir && mkfifo out.fifo
expect_fail out_dir "outdir: is a directory, expected a model file" timeout 20 $B synth --config 260K -o outdir
expect_fail out_fifo "out\.fifo: is not a regular file \(a FIFO\), expected a model file" \
    timeout 20 $B synth --config 260K -o out.fifo
expect_fail out_no_dir "nodir/x\.bin\.tmp: cannot create: No such file or directory" \
    $B synth --config 260K -o nodir/x.bin

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
