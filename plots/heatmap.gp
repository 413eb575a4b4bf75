# heatmap.gp: a lookahead sweep's W x N grid: tokens per target step (left) and end-to-end
# speed-up over greedy (right), one cell per grid point, its value printed in it.
# Data: heatmap.tsv, block 0 tokens/step, block 1 speed-up (W index, N index, value, W, N).
f = "heatmap.tsv"

stats f index 0 using 1:2 nooutput
nx = STATS_max_x + 1
ny = STATS_max_y + 1
# The value ranges, before any axis range is set (stats obeys them); a constant grid gets a
# range of its own so the palette still has one.
stats f index 0 using 3 nooutput
lo0 = STATS_min; hi0 = STATS_max > STATS_min ? STATS_max : STATS_min + 1
stats f index 1 using 3 nooutput
lo1 = STATS_min; hi1 = STATS_max > STATS_min ? STATS_max : STATS_min + 1

set xlabel "window size W"
set ylabel "n-gram size N"
set xrange [-0.5:nx - 0.5]
set yrange [-0.5:ny - 0.5]
set tics scale 0
set style fill solid 1.0 noborder
set palette defined (0 "#f7fbff", 0.5 "#6baed6", 1 "#08306b")
set key noautotitle
unset key
# dark cells get white text
tc(v, lo, hi) = (hi > lo && (v - lo) / (hi - lo) > 0.6) ? 0xffffff : 0x000000

do for [t in "png svg"] {
    if (t eq "png") { eval png_terminal; set output "heatmap.png" } else { eval svg_terminal; set output "heatmap.svg" }
    set multiplot layout 1, 2 title "Lookahead decoding: W x N"
    set title "tokens per target step"
    set cbrange [lo0:hi0]
    plot f index 0 using 1:2:(0.5):(0.5):3:xtic(4):ytic(5) with boxxy fc palette, \
         f index 0 using 1:2:(sprintf("%.2f", $3)):(tc($3, lo0, hi0)) with labels tc rgb variable
    set title "speed-up over greedy (end-to-end)"
    set cbrange [lo1:hi1]
    plot f index 1 using 1:2:(0.5):(0.5):3:xtic(4):ytic(5) with boxxy fc palette, \
         f index 1 using 1:2:(sprintf("%.2fx", $3)):(tc($3, lo1, hi1)) with labels tc rgb variable
    unset multiplot
    unset output
}
