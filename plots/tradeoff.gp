# tradeoff.gp: what a decoder gains (tokens per target step) against what it spends (rows per
# decode pass), one point per decoder spec, one colour per decoder. On a CPU a pass of R rows
# costs nearly R passes once R is large: a point far right must climb high to pay off. The
# dashed diagonal is the ideal, every row an accepted token.
# Data: tradeoff.tsv, one block per decoder (header "rows_per_step <decoder> label").
f = "tradeoff.tsv"

stats f using 1 nooutput
nb = STATS_blocks
stats f using 1:2 nooutput
xmax = STATS_max_x > 1 ? STATS_max_x : 2
ymax = STATS_max_y > 1 ? STATS_max_y : 1

set title "Tokens per target step against rows per decode pass"
set xlabel "rows per decode pass (log scale)"
set ylabel "tokens per target step"
set logscale x 2
set xrange [0.8:xmax * 1.6]
set yrange [0:ymax * 1.25]
set key outside right top vertical
set offsets 0, 0, graph 0.05, 0

eval png_terminal
set output "tradeoff.png"
plot x with lines dt 2 lc rgb "#a0a0a0" title "ideal: every row accepted", \
     for [b=0:nb-1] f index b using 1:2 with points ps 1.6 title columnheader(2), \
     for [b=0:nb-1] f index b using 1:2:3 with labels left offset 1, 0.4 font ",8" notitle
eval svg_terminal
set output "tradeoff.svg"
replot
unset output
