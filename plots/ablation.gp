# ablation.gp: the variants of one decoder (an ablation, e.g. the Ouroboros paper's Table 3):
# end-to-end speed-up over greedy with error bars (left) and tokens per target step (right).
# Data: ablation.tsv (variant, speedup_e2e, error, tokens_per_step).
f = "ablation.tsv"
# The first line names the columns: with it read as a header, $0 counts the variants from 0.
set datafile columnheaders

stats f using 2 nooutput
nv = STATS_records
stats f using 3 nooutput
errmax = STATS_max

set style fill solid 0.85 border rgb "#303030"
set boxwidth 0.7
set yrange [0:*]
set offsets 0, 0, graph 0.06, 0
set xrange [-0.6:nv - 0.4]
set xtics rotate by -30 left scale 0 noenhanced
set grid ytics
set bmargin 8
unset key

do for [t in "png svg"] {
    if (t eq "png") { eval png_terminal; set output "ablation.png" } else { eval svg_terminal; set output "ablation.svg" }
    set multiplot layout 1, 2 title "Ablation: the variants of one decoder"
    set title "speed-up over greedy (end-to-end)"
    set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb "#303030" front
    if (errmax > 0) {
        plot f using 0:2:xtic(1) with boxes lt 1, f using 0:2:3 with yerrorbars lc rgb "#303030" pt -1
    } else {
        plot f using 0:2:xtic(1) with boxes lt 1
    }
    unset arrow 1
    set title "tokens per target step"
    plot f using 0:4:xtic(1) with boxes lt 3
    unset multiplot
    unset output
}
