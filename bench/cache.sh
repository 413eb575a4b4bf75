# bench/cache.sh: the synthetic models the benchmark scripts share (sourced, not run).
#
# Files live in $CACHE = ${DECBENCH_BENCH_CACHE:-~/.cache/decbench} and carry the synthetic
# format version in their names (`decbench synth --version`, model/convert/synth.h), so a cache made by
# an older decbench is never mistaken for the current shape: a new version writes new files
# (delete the old ones by hand: synth_*_v<old>*). Needs $B, the decbench binary.
CACHE=${DECBENCH_BENCH_CACHE:-$HOME/.cache/decbench}
mkdir -p "$CACHE"

# synth_cached PRESET: path of the preset's checkpoint (seed 1), written on first use.
synth_cached() {
    local f
    f=$CACHE/synth_${1}_v$("$B" synth --version).bin
    [ -f "$f" ] || "$B" synth --config "$1" --seed 1 -o "$f" >&2
    echo "$f"
}

# gguf_name PRESET TYPE: path of the preset converted to a GGUF of TYPE (not created here).
gguf_name() {
    echo "$CACHE/synth_${1}_v$("$B" synth --version)_$2.gguf"
}
