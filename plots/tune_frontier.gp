# tune_frontier.gp: `decbench tune`: projected end-to-end speed-up versus the target rows a
# decoder spends per decode step (log scale), one colour per decoder; the black steps are the
# frontier from greedy (1 row, 1x) through the settings no other beats with fewer rows (its
# points black dots; greedy's alone when nothing beats it); open circles are the final run's
# measured speed-ups; the dashed line is greedy (1x).
# Data: tune_frontier.tsv, one block per decoder (rows_per_step, predicted, measured, spec),
# the frontier last.
f = "tune_frontier.tsv"

stats f using 1 nooutput
nb = STATS_blocks
stats f using 2 nooutput
top = STATS_max > 1 ? STATS_max * 1.1 : 1.1

set title "decbench tune: projected speed-up versus rows per step"
set xlabel "target rows per decode step (log scale)"
set ylabel "speed-up over greedy (end-to-end)"
set logscale x 2
set xrange [1:*]
set yrange [0:top]
set key outside right top vertical
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#606060"
set label "greedy" at graph 0.01, first 1.03 font ",9" tc rgb "#606060"

# The legend lists only what is drawn: the frontier's points are drawn too (when nothing beats
# greedy the frontier is greedy's point alone, which "with steps" does not draw), and the entry
# for the final run's circles only when some setting was measured there.
undefine STATS_records
stats f using 3 nooutput
measured = exists("STATS_records") ? STATS_records : 0
steps = "f index (nb-1) using 1:2 with steps lw 2 lc rgb '#000000' notitle, f index (nb-1) using 1:2 with points pt 7 ps 1.0 lc rgb '#000000' title 'frontier'"
circles = ", for [b=0:nb-2] f index b using 1:3 with points lt (b + 1) pt 6 ps 2.2 lw 2 notitle, NaN with points pt 6 ps 2.2 lw 2 lc rgb '#000000' title 'measured (final run)'"
cmd = "plot for [b=0:nb-2] f index b using 1:2 with points lt (b + 1) pt 7 ps 1.1 title columnheader(2), " . steps . (measured > 0 ? circles : "")

eval png_terminal
set output "tune_frontier.png"
eval cmd
eval svg_terminal
set output "tune_frontier.svg"
replot
unset output
