/* stats.h: the statistics of one generate call, as plain data: decoders fill them, results/
 * stores, reports and compares them. This layer sits below both (it includes nothing of ours),
 * so that results/ needs no decoder header to know what a sample holds.
 *
 * Two kinds of counters, each described by a stat_def (name, kind, how samples aggregate,
 * whether it is deterministic, a one-line definition):
 *  - framework counters: ONE list, STAT_COUNTERS below, one line each. Every decoder has them,
 *    the framework fills them (decoders/registry.c), each is a column of the samples table.
 *    The dec_stats fields, the samples INSERT, the report's sums, compare's exact set,
 *    `generate --stats` and `decbench counters` are generated from the list;
 *    tests/cli_counters.sh checks results/README.md and the schema against it.
 *  - decoder counters: a decoder's own (dec_vtable.counters, decoders/dec_impl.h), filled by
 *    the decoder into dec_stats.counters[], stored as rows (sample, name, value) of the
 *    counters table and shown by `report --layout counters`.
 * How to add either: ARCHITECTURE.md, "A counter". */
#ifndef STATS_STATS_H
#define STATS_STATS_H

#define DEC_HIST_MAX 64      /* histograms count accepted lengths / positions 0..DEC_HIST_MAX */
#define STAT_MAX_COUNTERS 32 /* decoder counters per decoder at most */

typedef enum { STAT_INT = 0, STAT_REAL = 1 } stat_kind;
/* How a report aggregates a counter over the samples of a dataset x decoder. */
typedef enum { STAT_SUM = 0, STAT_MEAN = 1, STAT_MAX = 2 } stat_agg;
/* STAT_DET: depends only on the model, prompt and decoder (with the exact kernels: not on
 * timing or threads), so `compare` and the CI gate require it EQUAL. STAT_VARIES: measured
 * (times), compared within a tolerance or not at all. */
typedef enum { STAT_DET = 0, STAT_VARIES = 1 } stat_det;

typedef struct {
    const char *name; /* column / counter name: [a-z0-9_]+ */
    stat_kind kind;
    stat_agg agg;
    stat_det det;
    const char *definition; /* one line, no '|' */
} stat_def;

/* The framework counters: X(name, C type, aggregation, determinism, definition), with C type
 * int, long or double, aggregation SUM, MEAN or MAX, determinism DET or VARIES. */
#define STAT_COUNTERS(X)                                                                           \
    X(prompt_tokens, int, SUM, DET, "tokens of the prompt, BOS included")                          \
    X(new_tokens, int, SUM, DET, "tokens generated, the end token included when reached")          \
    X(target_steps, long, SUM, DET,                                                                \
      "target forward passes, the prompt pass counted once (greedy: new_tokens)")                  \
    X(target_rows, long, SUM, DET,                                                                 \
      "rows fed to the target in its decode passes (prompt excluded)")                             \
    X(draft_steps, long, SUM, DET, "draft-model forward passes, its prompt pass counted once")     \
    X(draft_rows, long, SUM, DET,                                                                  \
      "rows fed to the draft model in its decode passes (prompt excluded)")                        \
    X(drafted, long, SUM, DET,                                                                     \
      "tokens offered to the target for verification, on each step's longest path")                \
    X(accepted, long, SUM, DET,                                                                    \
      "drafted tokens the target confirmed (its own bonus token excluded)")                        \
    X(verify_steps, long, SUM, DET,                                                                \
      "verification steps: target decode passes, each closing one step (the accept histogram's "   \
      "total)")                                                                                    \
    X(t_target, double, SUM, VARIES, "seconds in target forward passes, its prompt pass included") \
    X(t_draft, double, SUM, VARIES,                                                                \
      "seconds in draft-model forward passes, its prompt pass included")                           \
    X(t_book, double, SUM, VARIES,                                                                 \
      "seconds of the decoder's own work: t_total - t_target - t_draft")                           \
    X(t_prefill, double, SUM, VARIES,                                                              \
      "seconds of the prompt passes, the target's and the draft model's")                          \
    X(t_total, double, SUM, VARIES, "seconds of the whole generate call")                          \
    X(samp_tests, long, SUM, DET,                                                                  \
      "standard sampling: rejection tests of drafted or guessed tokens (0 at temperature 0 and "   \
      "in coupled mode)")                                                                          \
    X(samp_accepts, long, SUM, DET, "of samp_tests, those that accepted their token")              \
    X(samp_expected, double, SUM, DET,                                                             \
      "expected samp_accepts: the sum over tests of the acceptance probability before the "        \
      "proposal was drawn (sum of min(p, q) over the vocabulary; p(x) for a fixed guess x)")       \
    X(samp_variance, double, SUM, DET,                                                             \
      "variance of samp_accepts around samp_expected: the sum over tests of alpha (1 - alpha)")    \
    X(drafting_steps, long, SUM, DET,                                                              \
      "verification steps that offered at least one drafted token (vLLM's num_drafts; "            \
      "pos_tried at position 1)")                                                                  \
    STAT_TEST_COUNTERS(X)

/* The counter-list test build (tests/CMakeLists.txt: decbench_testcounter, compiled with
 * DECBENCH_TEST_COUNTER) adds one line here and one schema step (tests/data/test_counter.sql),
 * and tests/cli_counters.sh sees the counter arrive in the database, the reports, compare and
 * `generate --stats`: proof that a new line is all a framework counter needs. */
#ifdef DECBENCH_TEST_COUNTER
#define STAT_TEST_COUNTERS(X)                                                                      \
    X(test_emits, long, SUM, DET, "dec_emit calls that appended tokens (test build only)")
#else
#define STAT_TEST_COUNTERS(X)
#endif

/* Per-sample quantities derived from the counters, each defined here once, as a C expression
 * over a dec_stats *s and as the same SQL expression over the samples columns (reports,
 * compare and the tps_decode column use the SQL form, `generate --stats` the C form):
 * X(name, C expression, SQL expression, definition). The prompt pass yields exactly one token
 * (greedy's first), so "decode" counts the tokens, passes and seconds after it. */
#define STAT_DERIVED(X)                                                                            \
    X(decode_tokens, (s->new_tokens > 0 ? s->new_tokens - 1.0 : 0.0), "MAX(new_tokens - 1, 0)",    \
      "tokens produced after the prompt pass (new_tokens minus the prompt pass's one)")            \
    X(decode_steps, (s->target_steps > 0 ? s->target_steps - 1.0 : 0.0),                           \
      "MAX(target_steps - 1, 0)", "target decode passes (target_steps minus the prompt pass)")     \
    X(t_decode, (s->t_total - s->t_prefill), "(t_total - t_prefill)",                              \
      "seconds after the prompt passes: t_total - t_prefill")

enum {
#define STAT_DENUM_(name, c, sql, def) STAT_D_##name,
    STAT_DERIVED(STAT_DENUM_)
#undef STAT_DENUM_
        STAT_N_DERIVED
};

typedef struct {
    const char *name, *sql, *definition;
} stat_derived_def;

/* STAT_<name>: the index of each framework counter in stat_counters[]. */
enum {
#define STAT_ENUM_(name, type, agg, det, def) STAT_##name,
    STAT_COUNTERS(STAT_ENUM_)
#undef STAT_ENUM_
        STAT_N_COUNTERS
};

/* Everything one dec_generate() call measured. Zeroed by the framework at its start. */
typedef struct {
#define STAT_FIELD_(name, type, agg, det, def) type name;
    STAT_COUNTERS(STAT_FIELD_)
#undef STAT_FIELD_
    /* accept_hist[k]: verification steps that accepted k drafted tokens (k >= DEC_HIST_MAX
     * counted at DEC_HIST_MAX); pos_tried[i] / pos_accepted[i]: how often draft position i
     * (0-based) was verified / accepted. */
    long accept_hist[DEC_HIST_MAX + 1];
    long pos_tried[DEC_HIST_MAX], pos_accepted[DEC_HIST_MAX];
    /* The decoder's own counters (filled by decoders that declare some): counter_defs[i]
     * describes counters[i] (i < n_counters); NULL / 0 when the decoder has none. */
    const stat_def *counter_defs;
    int n_counters;
    double counters[STAT_MAX_COUNTERS];
} dec_stats;

/* One target step, for the optional per-step trace. */
typedef struct {
    int step;       /* 0 = prefill */
    int rows;       /* rows in this target pass */
    int drafted;    /* tokens offered for verification on the chosen path */
    int accepted;   /* of those, accepted */
    int emitted;    /* tokens appended to the output by this step */
    double seconds; /* wall time of this step, bookkeeping included */
} dec_step;

/* One forward pass of the target or the draft model, for the optional pass trace: what its cost
 * depends on (rows evaluated, rows whose logits were computed, committed tokens it attends to),
 * so that a projection can price every pass a decoder made on another model's cost curve
 * (results/report/report_cost.c). */
typedef struct {
    int draft;      /* 0: the target model, 1: the draft model */
    int prefill;    /* 1: a chunk of the prompt pass */
    int rows;       /* rows evaluated */
    int logit_rows; /* rows whose logits (the classifier) were computed */
    int context;    /* committed tokens before the pass (each row attends to them) */
    double seconds; /* wall time of the pass */
} dec_pass;

/* The framework counters' descriptions, in list order (index STAT_<name>). */
extern const stat_def stat_counters[STAT_N_COUNTERS];

/* Framework counter i of s as a double (exact for every integer counter below 2^53). */
double stat_value(const dec_stats *s, int i);

/* The derived quantities (STAT_DERIVED, index STAT_D_<name>) and their value for s. */
extern const stat_derived_def stat_derived[STAT_N_DERIVED];
double stat_derived_value(const dec_stats *s, int i);

/* "sum", "mean", "max"; "det", "varies"; the SQL aggregate "SUM", "AVG", "MAX". */
const char *stat_agg_name(stat_agg a);
const char *stat_agg_sql(stat_agg a);
const char *stat_det_name(stat_det d);
/* Index of the framework counter named name, or -1. */
int stat_find(const char *name);

#endif
