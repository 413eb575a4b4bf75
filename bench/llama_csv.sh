# bench/llama_csv.sh: reading llama-bench's CSV output (sourced by the bench scripts, not run).
# llama-bench -o csv writes an unquoted header line, then one quoted line per test.

# csv_col FILE NAME: the column NAME of a llama-bench CSV, one value per data row.
csv_col() {
    awk -v name="$2" 'NR == 1 { n = split($0, h, ","); for (i = 1; i <= n; i++) if (h[i] == name) c = i; next }
        { sub(/^"/, ""); sub(/"$/, ""); split($0, f, "\",\""); print f[c] }' "$1"
}
# llama_ts FILE N_PROMPT N_GEN: avg_ts (tokens/s) of the test with those sizes.
llama_ts() {
    paste -d' ' <(csv_col "$1" n_prompt) <(csv_col "$1" n_gen) <(csv_col "$1" avg_ts) |
        awk -v p="$2" -v g="$3" '$1 == p && $2 == g { print $3 }'
}
