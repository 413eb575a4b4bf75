# history.gp: (e) decode-only tok/s per decoder across runs in run order; x labels are the
# commits the runs were built from ("+" = uncommitted changes).
# Data: history.tsv (run, commit, then one tok/s column per decoder).
f = "history.tsv"

set title "Decode-only tokens per second across commits"
set xlabel "commit (in run order)"
set ylabel "tokens per second (decode-only)"
set yrange [0:*]
set xtics rotate by -35 left
set offsets 0.3, 0.3, 0, 0
set key outside right top vertical

stats f using 1 nooutput
ns = STATS_columns - 2

eval png_terminal
set output "history.png"
plot for [i=3:ns+2] f using 0:i:xtic(2) with linespoints title columnheader(i)
eval svg_terminal
set output "history.svg"
replot
unset output
