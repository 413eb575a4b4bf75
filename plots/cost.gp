# cost.gp: (d) forward-pass latency versus rows per pass T, with the bandwidth bound (weight
# bytes / memory bandwidth: the time just to stream the weights once) and T x t(1) (the cost
# of T separate one-row passes). Between the two lies what batching a step buys.
# With `plot --llama-csv FILE`, llama.cpp's speeds on the same file (llama-bench's pp T as one
# pass of T rows, tg as passes of one row) as a second curve.
# Data: cost.tsv (rows, ms_per_pass, gflops, gbps, bandwidth_bound_ms, linear_ms, llama_ms).
f = "cost.tsv"

set title "Target forward-pass latency versus rows per pass"
set xlabel "rows per forward pass T (log scale)"
set ylabel "latency per forward pass (ms, log scale)"
set logscale x 2
set logscale y 10
set xtics 2
set key inside left top vertical

# 1 when the llama_ms column holds a value (an expression valid on every row counts them)
stats f using (valid(7) ? 1 : 0) nooutput
llama = STATS_sum > 0 ? 1 : 0

eval png_terminal
set output "cost.png"
if (llama) {
    plot f using 1:2 with linespoints lt 1 title "measured t(T)", \
         f using 1:5 with lines dt 2 lt 6 title "bandwidth bound (weight bytes / memory bandwidth)", \
         f using 1:6 with lines dt 3 lt 8 title "T one-row passes (T x t(1))", \
         f using 1:7 with linespoints lt 2 pt 6 title "llama.cpp llama-bench (same file)"
} else {
    plot f using 1:2 with linespoints lt 1 title "measured t(T)", \
         f using 1:5 with lines dt 2 lt 6 title "bandwidth bound (weight bytes / memory bandwidth)", \
         f using 1:6 with lines dt 3 lt 8 title "T one-row passes (T x t(1))"
}
eval svg_terminal
set output "cost.svg"
replot
unset output
