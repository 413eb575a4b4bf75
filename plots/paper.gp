# paper.gp: a paper recipe's own figure (`decbench paper NAME ... --plot DIR`): our figure for
# each row of the paper's table (bars, one colour per row: the algorithms), clustered as the
# table groups them (its tasks or settings), in the table's own figure, named at the top of the
# key; greedy is the dashed line at 1. Error bars: the sd over repeats, when the figure has one.
# Data: paper.tsv (group, then per row two columns: value and error).
f = "paper.tsv"

set title "Ours beside the paper: its table's rows and groups (this machine)"
set ylabel "the table's figure (first line of the key); greedy = 1"
set yrange [0:*]
set style fill solid 0.85 border rgb "#303030"
set boxwidth 0.9
set key below horizontal maxcols 3
set xtics scale 0
set offsets 0, 0, graph 0.08, 0
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "#303030" front
set label 1 "greedy = 1" at graph 0.01, first 1 offset 0, 0.6 front textcolor rgb "#303030"

# Columns counted first (see speedup.gp), error bars only when some error is above zero, the
# axis always up to greedy's 1.
stats f using 2 nooutput
ns = int((STATS_columns - 1) / 2)
errmax = 0
ymax = 0
do for [j=0:ns-1] {
    stats f using (column(3 + 2 * j)) nooutput; errmax = STATS_max > errmax ? STATS_max : errmax
    stats f using (column(2 + 2 * j) + column(3 + 2 * j)) nooutput; ymax = STATS_max > ymax ? STATS_max : ymax
}
if (ymax < 1.05) { set yrange [0:1.15] }
if (errmax > 0) { set style histogram errorbars gap 1 lw 1.2 } else { set style histogram cluster gap 1 }
set style data histogram
set bmargin 5 + int((ns + 3) / 3)
barx(j) = $0 + (j - (ns - 1) / 2.0) / (ns + 1.0)
top(j) = column(2 + 2 * j) + (errmax > 0 ? column(3 + 2 * j) : 0)
val(j) = ns <= 8 ? sprintf("%.2f", column(2 + 2 * j)) : ""
n1 = ns < 8 ? ns : 8

# The figure's name is the first header cell: a key entry with no sample shows it. The plot
# command is built from constant parts only (see speedup.gp).
name = "f using (NaN) title columnheader(1) with points pt -1 lc rgb '#ffffff', "
bars_e = "for [j=0:n1-1] f using (column(2 + 2 * j)):(column(3 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1)"
more_e = ", for [j=8:ns-1] f using (column(2 + 2 * j)):(column(3 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1) fs pattern 4 border"
bars = "for [j=0:n1-1] f using (column(2 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1)"
more = ", for [j=8:ns-1] f using (column(2 + 2 * j)):xtic(1) title columnheader(2 + 2 * j) lt (j + 1) fs pattern 4 border"
values = ", for [j=0:ns-1] f skip 2 using (barx(j)):(top(j)):(val(j)) with labels offset 0, 0.6 font \",9\" notitle"
cmd = "plot " . name . (errmax > 0 ? bars_e . (ns > 8 ? more_e : "") : bars . (ns > 8 ? more : "")) . values

eval png_terminal
set output "paper.png"
eval cmd
eval svg_terminal
set output "paper.svg"
replot
unset output
