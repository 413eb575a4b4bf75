/* measure.h: machine measurements the benchmarks print next to their results. */
#ifndef HARNESS_MEASURE_H
#define HARNESS_MEASURE_H

#include <stddef.h>

#include "model/forward.h"

/* Streaming-read bandwidth in GB/s (1e9 bytes/s): every thread of pool sums its share of a
 * `bytes` buffer, best of `reps` passes. This is the bound a T=1 forward pass cannot beat:
 * it reads every weight once. Returns < 0 if the buffer cannot be allocated. */
double measure_read_bandwidth(tpool *pool, size_t bytes, int reps);

/* Multiply-add count of the matrix products one row of a forward pass costs (classifier
 * included): 2 x this = FLOPs per row. */
double measure_row_macs(const model_config *c);

typedef struct {
    int rows;
    double seconds; /* median seconds per pass */
    int repeats;
    double gflops, weight_gbps;
} measure_point;

/* Median latency of a forward pass of `rows` rows (a chain whose logits are all requested)
 * after a committed context of `context` tokens, repeated for at least min_seconds (and at
 * least 3 passes). */
int measure_forward(fwd_ctx *f, int rows, int context, double min_seconds, measure_point *out,
                    char *err);

/* measure_forward with the logits of the last `n_logits` rows only (1: what a prompt pass
 * needs, as llama-bench's pp measures it; rows: every row, as verification needs). */
int measure_forward_logits(fwd_ctx *f, int rows, int n_logits, int context, double min_seconds,
                           measure_point *out, char *err);

#endif
