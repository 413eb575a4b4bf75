# scaling.gp: (b) the lookahead scaling law: target steps needed per prompt versus window W
# (log-scaled), one line per N (and other fixed parameters), greedy as the dashed reference.
# Data: scaling.tsv, one block per series (header "W <label>"), greedy last.
f = "scaling.tsv"

stats f using 1 nooutput
nb = STATS_blocks

set title "Lookahead decoding: target forward passes per prompt versus window size W"
set xlabel "window size W (log scale)"
set ylabel "target forward passes per prompt"
set logscale x 2
set xtics 2
set yrange [0:*]
set key outside right top vertical

eval png_terminal
set output "scaling.png"
plot for [b=0:nb-2] f index b using 1:2 with linespoints title columnheader(2), \
     f index (nb-1) using 1:2 with lines dt 2 lw 2 lc rgb "#303030" title columnheader(2)
eval svg_terminal
set output "scaling.svg"
replot
unset output
