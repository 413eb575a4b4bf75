# bench/report_csv.awk: the columns `cols` (comma-separated names) of a `decbench report --format
# csv` table, one tab-separated line per data row. The report quotes a field that holds a comma
# (a decoder's spec), so fields are split on the commas outside quotes.
#   decbench report ... --format csv | awk -v cols=spec,projected_speedup -f bench/report_csv.awk
function split_csv(line, f,   n, i, c, q, cur) {
    n = 0; cur = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "\"") { q = !q; continue }
        if (c == "," && !q) { f[++n] = cur; cur = ""; continue }
        cur = cur c
    }
    f[++n] = cur
    return n
}
BEGIN { n_want = split(cols, want, ",") }
{ n = split_csv($0, f) }
NR == 1 { for (i = 1; i <= n; i++) col[f[i]] = i; next }
{
    out = ""
    for (i = 1; i <= n_want; i++) out = out (i > 1 ? "\t" : "") f[col[want[i]]]
    print out
}
