# position.gp: acceptance by draft position, one line per decoder spec (a gamma sweep of spec
# gives one line per gamma): how fast the target stops agreeing with deeper drafts. Top: the
# rate at each position (accepted / drafted there); bottom: the conditional rate (accepted at k
# / accepted at k-1), the figures ik_llama.cpp's llama-spec-bench reports.
# Data: position.tsv, block 0 (position, then one column of percentages per decoder spec) and
# block 1 (the same from position 2, conditional rates).
f = "position.tsv"

stats f index 0 using 1 nooutput
ns = STATS_columns - 1

set yrange [0:100]
set xtics 1
set key outside right top vertical

do for [out = 1:2] {
    if (out == 1) { eval png_terminal; set output "position.png" }
    if (out == 2) { eval svg_terminal; set output "position.svg" }
    set multiplot layout 2, 1 title "Acceptance by draft position"
    set title "rate: drafted tokens accepted at that position"
    set xlabel ""
    set ylabel "accepted / drafted (%)"
    plot for [i=2:ns+1] f index 0 using 1:i with linespoints title columnheader(i)
    set title "conditional rate: accepted at k / accepted at k-1"
    set xlabel "draft position (1 = the first drafted token of a step)"
    set ylabel "accepted k / accepted k-1 (%)"
    plot for [i=2:ns+1] f index 1 using 1:i with linespoints title columnheader(i)
    unset multiplot
    unset output
}
