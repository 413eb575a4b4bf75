# speedup.gp: (a) speed-up over greedy, bars per dataset (clusters) and decoder (colours).
# Data: speedup.tsv (dataset, then one column per non-greedy decoder).
f = "speedup.tsv"

set title "Speed-up over greedy decoding (decode-only time, ratio of totals)"
set xlabel "dataset"
set ylabel "speed-up over greedy (x)"
set yrange [0:*]
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border rgb "#303030"
set boxwidth 0.9
set key below horizontal Left reverse maxcols 2
set xtics scale 0
set offsets 0, 0, graph 0.08, 0
# Greedy's own speed: the line a decoder must clear to be worth running.
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "#303030" front
set label 1 "greedy = 1x" at graph 0.01, first 1 offset 0, 0.6 front textcolor rgb "#303030"

# The columns are counted first: an open-ended "for [i=2:*]" would add an empty last series
# that shifts every cluster off its tic. Each bar gets its value printed on top (up to 8
# decoders; beyond that the labels collide). Bar k (0-based) of a cluster sits at
# x = row + (k - (ns - 1) / 2) / (ns + gap), gap = 1.
stats f using 2 nooutput
ns = STATS_columns - 1
# Room below the axis for the x label and a two-column key.
set bmargin 5 + int((ns + 1) / 2)
barx(i) = $0 + (i - 2 - (ns - 1) / 2.0) / (ns + 1.0)
val(i) = ns <= 8 ? sprintf("%.2f", column(i)) : ""

eval png_terminal
set output "speedup.png"
plot for [i=2:ns+1] f using i:xtic(1) title columnheader(i), \
     for [i=2:ns+1] f skip 2 using (barx(i)):i:(val(i)) with labels offset 0, 0.6 font ",9" notitle
eval svg_terminal
set output "speedup.svg"
replot
unset output
