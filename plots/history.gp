# history.gp: (e) decode-only tok/s per decoder across runs in run order: x is the run id, the
# top axis names the commit each run was built from where it changes ("+" = uncommitted
# changes; the runs of one commit, e.g. a sweep's, share one label).
# Data: history.tsv (run, commit or empty, then one tok/s column per decoder).
f = "history.tsv"

set title "Decode-only tokens per second across runs (top: the commit, where it changes)"
set xlabel "run"
set ylabel "tokens per second (decode-only)"
set yrange [0:*]
set xtics nomirror
set x2tics rotate by 35 left scale 0 font ",9"
set link x2
set offsets 0.3, 0.3, 0, 0
set key outside right top vertical

stats f using 1 nooutput
ns = STATS_columns - 2
# whole run ids: one tic per run up to 20 runs
if (STATS_max - STATS_min <= 20) { set xtics 1 } else { set xtics format "%.0f" }
set tmargin 5

eval png_terminal
set output "history.png"
plot for [i=3:ns+2] f using 1:i:x2tic(2) with linespoints title columnheader(i)
eval svg_terminal
set output "history.svg"
replot
unset output
