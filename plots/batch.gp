# batch.gp: what batching does to each decoder (`run --batch B`): on the left the throughput
# (new tokens per second of wall time, all sequences together) against the batch size, on the
# right the per-token latency a sequence sees (p50 solid, p99 dashed, ms per token after the
# first) against it. A decoder that pays at batch 1 can stop paying once the batch's rows fill
# the machine: its line then falls below greedy's on the left.
# Data: batch.tsv, one block per decoder (header "batch <decoder> p50_ms p90_ms p99_ms"): batch
# size, throughput, p50, p90, p99.
f = "batch.tsv"

stats f using 1 nooutput
nb = STATS_blocks
bmax = STATS_max > 1 ? STATS_max : 2

eval png_terminal
set output "batch.png"
set multiplot layout 1, 2 title "Throughput and per-token latency against the batch size"
set xlabel "sequences decoded at once (batch, log scale)"
set logscale x 2
set xrange [0.8:bmax * 1.25]
# room above the highest point for the key
set offsets 0, 0, graph 0.4, 0
set key top left
set ylabel "tokens per second (all sequences)"
set yrange [0:*]
plot for [b=0:nb-1] f index b using 1:2 with linespoints lt b+1 title columnheader(2)
set key top left
set ylabel "ms per token (p50 solid, p99 dashed)"
plot for [b=0:nb-1] f index b using 1:3 with linespoints lt b+1 title columnheader(2), \
     for [b=0:nb-1] f index b using 1:5 with lines lt b+1 dt 2 notitle
unset multiplot
eval svg_terminal
set output "batch.svg"
set multiplot layout 1, 2 title "Throughput and per-token latency against the batch size"
set key top left
set ylabel "tokens per second (all sequences)"
plot for [b=0:nb-1] f index b using 1:2 with linespoints lt b+1 title columnheader(2)
set key top left
set ylabel "ms per token (p50 solid, p99 dashed)"
plot for [b=0:nb-1] f index b using 1:3 with linespoints lt b+1 title columnheader(2), \
     for [b=0:nb-1] f index b using 1:5 with lines lt b+1 dt 2 notitle
unset multiplot
unset output
