# tune_predicted.gp: `decbench tune`: each setting's projected end-to-end speed-up (its probe's
# forward passes priced on the cost curves) against the measured one: the probes' own timings
# on the probe prompts (small points) and the final run on held-out prompts (large points,
# labelled). On the diagonal the projection is exact; the dotted lines are +-10%.
# Data: tune_predicted.tsv, block 0 the probes, block 1 (if any) the final run (predicted,
# measured, spec).
f = "tune_predicted.tsv"

stats f using 1 nooutput
nb = STATS_blocks
stats f index 0 using 1:2 nooutput
lo = STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y
hi = STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y
if (nb > 1) {
    stats f index 1 using 1:2 nooutput
    lo = STATS_min_x < lo ? STATS_min_x : lo
    lo = STATS_min_y < lo ? STATS_min_y : lo
    hi = STATS_max_x > hi ? STATS_max_x : hi
    hi = STATS_max_y > hi ? STATS_max_y : hi
}
lo = lo / 1.5
hi = hi * 1.5 > 1.2 ? hi * 1.5 : 1.2

set title "decbench tune: projected versus measured speed-up over greedy (end-to-end)"
set xlabel "projected speed-up (probe passes priced on the cost curves, log scale)"
set ylabel "measured speed-up (log scale)"
set logscale xy
set xrange [lo:hi]
set yrange [lo:hi]
set key inside left top vertical
set arrow from lo, 1 to hi, 1 nohead dt 2 lc rgb "#909090"
set arrow from 1, lo to 1, hi nohead dt 2 lc rgb "#909090"
set label "greedy" at lo * 1.05, 1.07 font ",9" tc rgb "#606060"

eval png_terminal
set output "tune_predicted.png"
if (nb > 1) {
    plot x with lines lt 8 lw 1 title "measured = projected", \
         1.1 * x with lines dt 3 lc rgb "#909090" title "+-10%", \
         x / 1.1 with lines dt 3 lc rgb "#909090" notitle, \
         f index 0 using 1:2 with points lt 1 pt 7 ps 0.8 title columnheader(2), \
         f index 1 using 1:2 with points lt 6 pt 5 ps 1.6 title columnheader(2), \
         f index 1 using 1:2:3 with labels offset char 0.8, char -0.6 left font ",8" notitle
} else {
    plot x with lines lt 8 lw 1 title "measured = projected", \
         1.1 * x with lines dt 3 lc rgb "#909090" title "+-10%", \
         x / 1.1 with lines dt 3 lc rgb "#909090" notitle, \
         f index 0 using 1:2 with points lt 1 pt 7 ps 0.8 title columnheader(2)
}
eval svg_terminal
set output "tune_predicted.svg"
replot
unset output
