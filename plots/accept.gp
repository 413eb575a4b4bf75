# accept.gp: (c) accepted-length histograms: the share of verification steps that accepted
# k drafted tokens (the target's own bonus token not counted), one colour per decoder.
# Data: accept.tsv (k, then one column of percentages per decoder).
f = "accept.tsv"

set title "Accepted length per verification step"
set xlabel "drafted tokens accepted in a step (k)"
set ylabel "share of verification steps (%)"
set yrange [0:*]
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border rgb "#303030"
set boxwidth 0.9
set key below horizontal Left reverse maxcols 2
set xtics scale 0

# Columns counted first: an open-ended "for [i=2:*]" adds an empty series that shifts the
# clusters off their tics.
stats f using 2 nooutput
ns = STATS_columns - 1
# Room below the axis for the x label and a two-column key.
set bmargin 5 + int((ns + 1) / 2)

eval png_terminal
set output "accept.png"
plot for [i=2:ns+1] f using i:xtic(1) title columnheader(i)
eval svg_terminal
set output "accept.svg"
replot
unset output
