/* measure.h: machine measurements the benchmarks print next to their results. */
#ifndef HARNESS_MEASURE_H
#define HARNESS_MEASURE_H

#include <stddef.h>

#include "model/forward.h"
#include "results/db/db.h"

/* Streaming-read bandwidth in GB/s (1e9 bytes/s): every thread of pool sums its share of a
 * `bytes` buffer (in 2 MB pages where the kernel gives them, as the weights' copies are), best
 * of `reps` passes. This is the bound a T=1 forward pass cannot beat: it reads every weight
 * once. Returns < 0 if the buffer cannot be allocated. */
double measure_read_bandwidth(tpool *pool, size_t bytes, int reps);

/* A one-row pass's share of the read bandwidth, measured interleaved: `rounds` rounds, each one
 * read of a `bytes` buffer by every thread of pool and then one-row passes (the last row's
 * logits, after `context` committed tokens) until they took as long as the read; a round's share
 * is (weight bytes / mean pass) / (buffer bytes / read time), and the figure is the median of
 * the rounds' shares (a warm-up round first). Why: measure_read_bandwidth is the best of 5 reads
 * taken before the passes, which `cost` then times for seconds, while this machine's bandwidth
 * moves by a third within a minute (model/GGUF.md: single pairs of probe and passes ranged
 * 72-115% at the 8B shape); a read and the passes beside it, a tenth of a second apart, see the
 * same machine, and the read is timed the way the passes are (once, not the best of several).
 * The same rounds also give the pass's ratio to its whole bound, the weights and the keys and
 * values it reads (fwd_kv_bytes at context + 1: what attention reads of the cache) over the read
 * bandwidth: per round, the mean pass over (weight bytes + kv_bytes) / that round's read rate;
 * 1 is the bound, more is slower (a long context's share of a pass is attention's).
 * f is left with n_past = context. */
typedef struct {
    double share, share_lo, share_hi; /* the median, lowest and highest of the rounds */
    double probe_gbps, pass_gbps;     /* the rounds' medians (weight bytes / pass for the pass) */
    double kv_bytes;                  /* the keys and values one pass reads */
    double pass_s, bound_s;           /* the rounds' medians: a pass, its bound (weights + KV) */
    double ratio, ratio_lo, ratio_hi; /* pass / bound: the rounds' median, lowest and highest */
    int rounds;
} measure_share;
int measure_bandwidth_share(fwd_ctx *f, tpool *pool, size_t bytes, int rounds, int context,
                            measure_share *out, char *err);

/* The machine's peak arithmetic for `threads` threads: the active ISA's ops per cycle and core
 * (kern_peak_per_cycle: the tiles' widest instruction at the rate the core issues it, the
 * number of 512-bit units measured), times the cores (threads, at most the CPUs online), times
 * the clock measured on the calling thread (a dependent chain of integer additions, one a cycle;
 * best of 30 short runs). What a pass's GFLOP/s are compared with: the share says how far a tile
 * is from the machine. ghz is 0 where the clock cannot be measured (not x86-64), and so are the
 * peaks. */
typedef struct {
    double ghz;
    int cores;
    double int8_per_cycle, f32_per_cycle; /* ops per cycle and core */
    double int8_gops, f32_gflops;         /* the peaks */
    const char *what;                     /* kern_peak_per_cycle's name of the ISA */
} measure_peak;
void measure_peak_of(int threads, measure_peak *out);

/* One point of a cost curve. seconds is the MEAN of the measured passes, not the median: a
 * projection prices a run's total time, a sum, whose expectation is the mean; the median leaves
 * out the passes a loaded machine stretches (measured on stories260K with other jobs running:
 * each pass's median ratio to the curve was 0.94-1.05 for greedy, PLD, Jacobi and lookahead,
 * yet their sums 2.5-4.8x the projection, multi-row passes stretched most, because their
 * worker threads wait on each other). */
typedef struct {
    int rows, context, logit_rows; /* batched: each sequence's */
    double seconds, median; /* per pass: the mean and the median */
    int repeats;
    double gflops, weight_gbps; /* from the mean */
    int batch;                  /* sequences a pass (measure_cost_grid_batch), else 1 */
} measure_point;

/* The cost table's row for a point of a model of weight_bytes bytes (mem_gbps: the measured
 * read bandwidth, < 0 unknown). */
db_cost measure_cost_row(const measure_point *p, int64_t weight_bytes, double mem_gbps);

/* The grid of a cost curve t(rows, context, logit rows) (results/report/cost.h says how it is
 * interpolated): for every context, every rows value with the logits of one row (the body of
 * the pass); at the first context also every rows value with the logits of all its rows (the
 * classifier's share is the difference). (r, c0, 1) and (r, c0, r) are measured back to back,
 * so that their difference sees the same machine load. */
#define MEASURE_MAX_ROWS 64
#define MEASURE_MAX_CONTEXTS 16
/* Which logits a grid's passes compute: both (the grid above), only the last row's (what a
 * prompt pass needs, as llama-bench's pp measures it), or every row's (as verification needs). */
typedef enum {
    MEASURE_LOGITS_BOTH = 0,
    MEASURE_LOGITS_LAST = 1,
    MEASURE_LOGITS_ALL = 2
} measure_logits;

typedef struct {
    measure_logits logits;
    int rows[MEASURE_MAX_ROWS], n_rows;             /* ascending */
    int contexts[MEASURE_MAX_CONTEXTS], n_contexts; /* ascending */
    double min_seconds;                             /* per point */
    double deadline; /* clock_now() after which no new round starts (0: none; see below) */
} measure_grid;

/* The default rows (dense where decoders work: 1..16 step by step in powers of 2 and their
 * midpoints, up to 128) and contexts (32 and 512). */
#define MEASURE_DEFAULT_ROWS "1,2,3,4,6,8,12,16,24,32,48,64,96,128"
#define MEASURE_DEFAULT_CONTEXTS "32,512"

/* Parses a comma list of counts lo..hi into out[0..*n) (at most max), sorted ascending,
 * duplicates dropped. what names the option in messages. */
int measure_parse_list(const char *s, const char *what, int lo, int hi, int *out, int max, int *n,
                       char *err);

/* Fits g to a model whose context length is seq_len: a context that leaves no room for the
 * largest rows value is lowered to seq_len - max rows (dropped when that is not above the
 * context before it). Writes what it changed into note (may be empty). -1 if nothing fits. */
int measure_grid_fit(measure_grid *g, int seq_len, char *note, size_t n_note, char *err);

/* Number of points measure_cost_grid measures for g. */
int measure_grid_points(const measure_grid *g);

/* Measures every point of g in rounds (measure.c says why), then calls fn for each point; fn
 * returning non-zero stops (its err is returned). Each context is reached by a prefill of its
 * first 64 positions, the rest their keys and values repeated (fwd_repeat_prefix). */
typedef int (*measure_point_fn)(void *user, const measure_point *p, char *err);
int measure_cost_grid(fwd_ctx *f, const measure_grid *g, measure_point_fn fn, void *user,
                      char *err);

/* The same for passes of `batch` sequences (1..MEASURE_MAX_BATCH; 1 is measure_cost_grid): a
 * point (rows, context, logit rows) is one fwd_group pass in which each of `batch` contexts of
 * f's model, kernels and pool (f and batch - 1 made for the measurement) evaluates `rows` rows
 * after `context` committed positions of its own, computing `logit_rows` rows' logits; seconds
 * are the whole pass's, gflops count every sequence's products, weight_gbps the weights read
 * once. */
#define MEASURE_MAX_BATCH 256
#define MEASURE_MAX_BATCH_S "256"
int measure_cost_grid_batch(fwd_ctx *f, int batch, const measure_grid *g, measure_point_fn fn,
                            void *user, char *err);

/* The same a round at a time, so that rounds can be spread between other measurements (tune
 * measures a round between its probes, so that the curve sees the machine as they did): new;
 * round (the first is the warm-up; once every point has min_seconds of passes and 3 measured
 * rounds a round does nothing); finish (at least the warm-up round must have run); free. f must
 * outlive the measure_run. */
typedef struct measure_run measure_run;
int measure_run_new(measure_run **out, fwd_ctx *f, const measure_grid *g, char *err);
/* The same for passes of `batch` sequences (measure_cost_grid_batch's points). */
int measure_run_new_batch(measure_run **out, fwd_ctx *f, int batch, const measure_grid *g,
                          char *err);
int measure_run_round(measure_run *m, char *err);
int measure_run_finish(measure_run *m, measure_point_fn fn, void *user, char *err);
void measure_run_free(measure_run *m);

#endif
