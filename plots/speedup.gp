# speedup.gp: (a) speed-up over greedy, bars per dataset (clusters) and decoder (colours), with
# error bars (the sd over repeats or over prompts, plot --errors) when the data has them.
# Data: speedup.tsv (dataset, then per decoder two columns: speed-up and its error).
f = "speedup.tsv"

set title "Speed-up over greedy decoding (decode-only time, ratio of totals)"
set xlabel "dataset"
set ylabel "speed-up over greedy (x)"
# The axis always reaches greedy's 1x: bars that all stay below it (a small model, whose passes
# cost in proportion to their rows) must show how far below.
stats f using 2 nooutput
set yrange [0:*]
set style fill solid 0.85 border rgb "#303030"
set boxwidth 0.9
set key below horizontal maxcols 2
set xtics scale 0
set offsets 0, 0, graph 0.08, 0
# Greedy's own speed: the line a decoder must clear to be worth running.
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "#303030" front
set label 1 "greedy = 1x" at graph 0.01, first 1 offset 0, 0.6 front textcolor rgb "#303030"

# The columns are counted first: an open-ended "for [i=2:*]" would add an empty last series
# that shifts every cluster off its tic. Error bars are drawn when any error is above zero.
ns = int((STATS_columns - 1) / 2)
errmax = 0
ymax = 0
do for [j=0:ns-1] {
    stats f using (column(3 + 2 * j)) nooutput; errmax = STATS_max > errmax ? STATS_max : errmax
    stats f using (column(2 + 2 * j) + column(3 + 2 * j)) nooutput; ymax = STATS_max > ymax ? STATS_max : ymax
}
if (ymax < 1.05) { set yrange [0:1.15] }
# bars 1-8 solid in the palette's colours, 9 on hatched in the same colours again
n1 = ns < 8 ? ns : 8
if (errmax > 0) { set style histogram errorbars gap 1 lw 1.2 } else { set style histogram cluster gap 1 }
set style data histogram
# Room below the axis for the x label and a two-column key.
set bmargin 5 + int((ns + 1) / 2)
# Each bar gets its value printed above it (and above its error bar; up to 8 decoders, beyond
# that the labels collide). Bar j (0-based) of a cluster sits at x = row + (j - (ns - 1) / 2) /
# (ns + gap), gap = 1.
barx(j) = $0 + (j - (ns - 1) / 2.0) / (ns + 1.0)
top(j) = column(2 + 2 * j) + (errmax > 0 ? column(3 + 2 * j) : 0)
val(j) = ns <= 8 ? sprintf("%.2f", column(2 + 2 * j)) : ""

# A plot command is built from parts, so that the hatched part exists only with 9 or more
# decoders (an empty iteration in histogram style is an error).
bars_e = "for [j=0:n1-1] f using (column(2 + 2 * j)):(column(3 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1)"
more_e = ", for [j=8:ns-1] f using (column(2 + 2 * j)):(column(3 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1) fs pattern 4 border"
bars = "for [j=0:n1-1] f using (column(2 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1)"
more = ", for [j=8:ns-1] f using (column(2 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1) fs pattern 4 border"
values = ", for [j=0:ns-1] f skip 2 using (barx(j)):(top(j)):(val(j)) with labels offset 0, 0.6 font \",9\" notitle"
cmd = "plot " . (errmax > 0 ? bars_e . (ns > 8 ? more_e : "") : bars . (ns > 8 ? more : "")) . values

eval png_terminal
set output "speedup.png"
eval cmd
eval svg_terminal
set output "speedup.svg"
replot
unset output
