# position.gp: acceptance rate by draft position, one line per decoder spec (a gamma sweep of
# spec gives one line per gamma): how fast the target stops agreeing with deeper drafts.
# Data: position.tsv (position, then one column of percentages per decoder spec).
f = "position.tsv"

set title "Acceptance rate by draft position"
set xlabel "draft position (1 = the first drafted token of a step)"
set ylabel "drafted tokens accepted at that position (%)"
set yrange [0:100]
set xtics 1
set key outside right top vertical

stats f using 1 nooutput
ns = STATS_columns - 1

eval png_terminal
set output "position.png"
plot for [i=2:ns+1] f using 1:i with linespoints title columnheader(i)
eval svg_terminal
set output "position.svg"
replot
unset output
