/* runner.h: the measurement loop shared by `decbench run` and `decbench sweep`.
 *
 * A runner holds one workload: the selected samples of every dataset, rendered, encoded and
 * checked against the context length, plus the session (models, tokenizer, thread pool). It
 * is built completely (runner_open, runner_specs) before anything is measured or written,
 * so every bad input fails before any model work and before any database row exists.
 *
 * runner_measure() then measures a list of decoder specs into one run:
 *   for each repeat, for each prompt, greedy (when listed) then every other decoder.
 *   - Prompt-major order: every decoder measures a prompt right after greedy measured it,
 *     under the same machine state (thermal drift, background load), so speed-ups are
 *     paired. All decoders of the run are alive at once (their KV caches are touched only
 *     up to prompt + max_new positions).
 *   - Decoders are created afresh for every repeat: state a decoder keeps across prompts
 *     (Ouroboros' warm pool) carries over within a repeat, as in its reference benchmark,
 *     but not into the next repeat, so repeats measure the same work and their deterministic
 *     figures are equal. With --state-load every repeat starts from the same file.
 *   - Warm-up: before its first measured sample, each spec runs `warmup` unstored passes on
 *     the run's first prompt with a throw-away instance (page-faults the weights, wakes the
 *     thread pool, grows malloc arenas) that cannot warm the measured instance's state.
 *   - Exactness: every output is compared token by token with greedy's output for the same
 *     prompt (the reference: greedy's first output in this process, or an unstored greedy
 *     pass when greedy is not measured in this run, e.g. sweep points and resumed runs). On a
 *     difference the first diverging position, both tokens and greedy's top-1 minus top-2
 *     logit there (re-computed by a fresh forward pass over prompt + greedy prefix) are
 *     printed loudly and stored.
 *   - Each sample is stored with its statistics, histograms, the decoder's own counters and
 *     the optional trace in one transaction (db_insert_sample); tuples already stored
 * (db_sample_done) are skipped, which is how --resume continues a run. A decoder that keeps
 *     state across prompts (Ouroboros warm=1, suffix) first has its state rebuilt: the
 *     samples of the repeat stored before are generated again in order, unstored
 *     (rebuild_state, runner.c), so what it measures next, and what --state-save writes, equal
 *     an uninterrupted run's.
 *   - SIGINT/SIGTERM (runner_catch_signals): the sample being generated stops before its
 *     next forward pass (dec_env.cancel) and is not stored; runner_measure returns
 *     RUNNER_INTERRUPTED. On a 7B model a sample of 1024 tokens takes minutes: waiting for it
 *     to finish would make Ctrl-C look broken. A second signal exits at once
 *     (status 130); the database stays consistent since no transaction is open while a
 *     decoder runs, and the run stays 'running', which --resume accepts too.
 *   - --batch B > 1: B prompts at a time per decoder, their passes shared (runner_batch.c has
 *     the order, the figures and what it refuses); each output is checked as above. */
#ifndef HARNESS_RUNNER_H
#define HARNESS_RUNNER_H

#include <stdint.h>

#include "datasets/dataset.h"
#include "harness/args.h"
#include "harness/progress.h"
#include "harness/sampling_opts.h"
#include "harness/session.h"
#include "results/db/db.h"
#include "util/file.h"

#define RUNNER_MAX_DATASETS 32
#define RUNNER_MAX_SPECS 64

/* The options `run` and `sweep` share. Strings point into argv. */
typedef struct {
    const char *model, *draft, *tokenizer, *kernels, *data_dir, *template_name, *label, *db_path;
    const char *kv_type;       /* --kv-type (model/model.h's kv_types[]) */
    const char *chat_template; /* --chat-template NAME; NULL: the model's own, if recognised */
    const char *datasets[RUNNER_MAX_DATASETS];
    int n_datasets;
    int limit, offset, shuffle;
    uint64_t seed; /* --shuffle SEED; 0 without --shuffle */
    int max_new;   /* 0: each dataset's own default */
    int repeats, warmup, threads;
    int trace, allow_mismatch, skip_long;
    int cut_long; /* --cut-long: prompts cut to half the context (cut_prompt, runner.c) */
    int shard_i, shard_n; /* --shard I/N; shard_n = 0: the whole work */
    int ctx; /* --ctx; 0: the model's default (MODEL_DEFAULT_CTX) */
    int turns;            /* --turns N: the turns of multi-turn records to measure (1: first) */
    /* --order: how the prompts of several datasets follow each other (runner_order). */
    int order, order_n;
    uint64_t order_seed;
    int allow_nonfinite; /* NaN/Inf logits decoded instead of stopping the run */
    dec_sampling sampling; /* --temperature, --top-k, --top-p, --seed, --sampling */
    int batch;             /* --batch B: sequences decoded at once (1: one at a time) */
    int continuous;        /* --continuous: a finished sequence replaced at once */
} runner_opts;

/* --batch's cap: every sequence is a thread with its own instance of each decoder (and its KV
 * caches). */
#define RUNNER_MAX_BATCH 64

/* --order grouped (default: every prompt of the first dataset, then the next dataset's),
 * interleave[:C] (C consecutive prompts of each dataset in turn, C = 1 by default: the
 * Ouroboros paper's context-locality experiment, Table 4, measures C = 20, 10, 4, 1) or
 * shuffle[:SEED] (all prompts in a seeded random order, Fisher-Yates with util/rng.h, seed 0 by
 * default). A multi-turn record's turns stay together, in order: they are one entry. The order
 * is part of the workload (a decoder that keeps state across prompts sees another sequence):
 * it is recorded after the datasets (";order=interleave:4") and --resume requires it. */
enum { RUNNER_ORDER_GROUPED = 0, RUNNER_ORDER_INTERLEAVE = 1, RUNNER_ORDER_SHUFFLE = 2 };

/* Turn t of the record at position i is stored as sample_index i + (t - 1) x this. */
#define RUNNER_TURN_STRIDE 1000000

/* Number of shared options and the table entries (copied into o[0..RUNNER_N_OPTS)): 29 of
 * runner_opts.c's table, then the sampling options (harness/sampling_opts.h). */
#define RUNNER_N_OPTS (29 + SAMPLING_N_OPTS)
void runner_options(args_opt *o);
/* Reads and range-checks the shared options (after args_parse). */
int runner_opts_get(const args_opt *o, int n, runner_opts *ro, char *err);
/* Shared --help text: the measurement decisions above in a few lines. */
void runner_help(void);

/* One prompt: a record's turn. Turn t > 1 of a multi-turn record (--turns) is built from greedy's
 * answers to the turns before it (ds_turn_prompt), so it is encoded only when first measured
 * (runner_prepare); its samples are stored with sample_index = record index + (t - 1) x 10^6
 * and turn = t (results/db/schema.sql, step 6). */
typedef struct {
    const ds_sample *sample;
    const ds_set *set;
    int turn, first; /* turn (1-based); first: index of the record's turn-1 prompt */
    int key_index;   /* samples.sample_index */
    int *ids, n_ids; /* encoded prompt, BOS included; NULL until prepared (later turns) */
    int skip;        /* a later turn longer than the context, left out (--skip-long) */
    int max_new;
    int *ref, n_ref; /* greedy's output (the reference), NULL until computed */
} runner_prompt;

/* --shard I/N: the share of the work this process measures (runner_shard_plan).
 *
 * The work is cut into units, enumerated the same way in every shard:
 *   for each prompt (run order), for each repeat, for each non-greedy spec (the run's
 *   decoders, or the sweep's points): the unit (spec, repeat, prompt) of one sample;
 *   then for each repeat, for each spec whose decoder keeps state across prompts (Ouroboros
 *   warm=1: its pool carries from prompt to prompt): the unit (spec, repeat, every prompt),
 *   which must stay whole or the shard would measure something else; it weighs n_prompts.
 * With W the total weight, shard I takes the units starting in [W (I-1) / N, W I / N): a
 * contiguous, balanced share, so a shard covers a few whole prompts (all decoders and repeats
 * of each) and the prompts at its two ends. Greedy is not a unit (except in a run of greedy
 * alone): each shard measures greedy on every (prompt, repeat) its units touch, so every
 * speed-up pairs a decoder with greedy on the same machine and each shard's database reports
 * on its own; `decbench merge` keeps one copy of the greedy samples two shards share (their
 * deterministic figures must agree). Repeats are units too: --repeats 3 --shard I/3 on three
 * machines is not three repeats per machine. */
typedef struct {
    int i, n;     /* shard i of n (1-based); n = 0: the whole work */
    char **specs; /* the work's non-greedy canonical specs (owned) */
    int n_specs, repeats, prompts;
    unsigned char *mine;   /* [spec][repeat][prompt]: measured by this shard */
    unsigned char *greedy; /* [repeat][prompt]: greedy measured by this shard */
    long samples;          /* samples this shard measures, greedy included */
} runner_shard;

typedef struct {
    runner_opts o;
    session s;
    runner_shard shard;
    ds_set *sets[RUNNER_MAX_DATASETS];
    int n_sets;
    runner_prompt *prompts;
    int n_prompts;
    int max_out;          /* largest max_new of any prompt: output buffer size */
    int run_max_new;      /* what the run records: the common max_new, 0 if they differ */
    char datasets[1024];  /* canonical names, comma-separated */
    char templates[1024]; /* template per dataset, comma-separated */
    /* per-sample working memory, allocated once */
    int *out;
    dec_step *trace;
    int n_trace, cap_trace, trace_on;
    dec_pass *passes; /* the sample's pass trace (--trace), grown as needed */
    int n_passes, cap_passes, passes_lost;
    fwd_ctx *margin_ctx; /* for the mismatch margin, created on first use */
    float *logits;
    progress prog;
    dec *ref_dec; /* greedy instance for unstored reference passes, created on first use */
    /* Decoder state files (`run --state-load/--state-save`; NULL: none): every instance of a
     * decoder that keeps state (dec_state_name) starts each repeat from state_load; the state
     * of the run's one such decoder after its last sample is written to state_save when the
     * run completes. state_only restricts both to decoders whose state has that name (NULL:
     * any), which is how --pool-load/--pool-save mean Ouroboros' pool; load_opt / save_opt are the option
     * names messages use. */
    const char *state_load, *state_save, *state_only, *load_opt, *save_opt;
    int test_flip; /* $DECBENCH_TEST_FLIP_TOKEN (tests only): corrupt output token N, else -1 */
    char self_hash[17]; /* --draft self:TYPE: the draft's fingerprint (runner.c) */
    int64_t self_bytes;
    dec_stats last; /* the statistics of the last sample measured */
} runner;

typedef struct {
    long measured, skipped, mismatches;
    long samp_suspect; /* standard sampling: decoders whose acceptances failed the check */
} runner_result;

enum { RUNNER_DONE = 0, RUNNER_INTERRUPTED = 1 };
/* Internal to runner.c: a sample stopped by Ctrl-C (dec_env.cancel), not stored. */
enum { RUNNER_CANCELLED = 2 };

/* Loads the datasets (any bad record fails here), then the models, then encodes every prompt.
 * Progress and notes go to stderr. */
int runner_open(runner *r, const runner_opts *o, char *err);
void runner_close(runner *r);
/* What runner_open does with the datasets of o alone (every record read and rendered, the
 * selection made), without a model: for a command that runs several workloads (paper's parts)
 * to refuse a bad one before measuring the first. */
int runner_check_datasets(const runner_opts *o, char *err);

/* Creates (and frees) each spec's decoder to validate it and get its canonical spec; with
 * add_greedy, greedy is put first (added if absent). Duplicates (same canonical spec) are
 * dropped. canon[i] and shown[i] (the spec as the user wrote it, for progress lines) are
 * malloc'd: runner_free_specs(). */
int runner_specs(runner *r, const char *const *specs, int n, int add_greedy, char ***canon,
                 char ***shown, int *n_out, char *err);
void runner_free_specs(char **canon, char **shown, int n);
/* With --batch B > 1, refuses a spec whose decoder keeps state across prompts (their order is
 * its workload); runner_specs calls it for every spec. */
int runner_batch_spec(const runner_opts *o, const char *spec, char *err);

/* With --shard I/N, decides which units of the work (the canonical specs of the run, greedy
 * included, or of the sweep's points) this process measures; runner_measure then skips the
 * others. No-op without --shard. */
int runner_shard_plan(runner *r, char *const *canon, int n, char *err);
/* "I/N", or NULL without --shard (for the run record). */
const char *runner_shard_text(const runner *r);

/* Checks r->state_load / r->state_save against the run's decoders before anything is stored:
 * the run has a decoder with state (exactly one to save), whose parameters keep it across
 * prompts (dec_state_check), the file to load loads into every one of them, the file to save
 * can be created. */
int runner_check_states(runner *r, char *const *canon, int n, char *err);

/* The files of the run (util/file.h, file_check_io): the target, draft and tokenizer files
 * and every dataset's file as inputs, r->state_load as input and r->state_save as output
 * (under r->load_opt / r->save_opt), the database (--db) appended to, plus extra[0..n_extra)
 * (a command's own: tune's figures, paper's --project-cost). Refuses an output that is an
 * input or another output; checks the kinds of the extra entries that give `what`. Call after
 * runner_open (the paths are resolved then) and before anything is written. */
int runner_check_files(const runner *r, const file_io *extra, int n_extra, char *err);

/* Fills the run record (strings owned by r or by the static environment copy). */
void runner_fill_run(const runner *r, db_run *run, db_env *env, const char *command);
/* canon[0..n) one per line (runs.decoders), malloc'd; NULL when out of memory. */
char *runner_join_specs(char *const *canon, int n);

/* Checks that run_id exists and was made with this runner's model, draft, datasets,
 * templates, max_new, repeats, kernels and shuffle seed, and that every spec it holds samples
 * of is in canon (so its stored samples belong to this workload). */
int runner_check_run(runner *r, db *d, int64_t run_id, char *const *canon, int n, char *err);
/* --resume: runner_check_run, then puts the 'incomplete' or 'running' run back to 'running'. */
int runner_resume(runner *r, db *d, int64_t run_id, char *const *canon, int n, char *err);

/* Measures canon[0..n) into run_id (see the header comment). title prefixes progress lines.
 * Returns RUNNER_DONE, RUNNER_INTERRUPTED, or -1 with a message (sample named). */
int runner_measure(runner *r, db *d, int64_t run_id, char *const *canon, char *const *shown, int n,
                   const char *title, runner_result *res, char *err);

/* Stores how a run measured by runner_measure ended (m: its return value; error: its message
 * when m < 0) and sets *status to what it chose:
 *   - an error (a full disk, a failed --state-save, a file that changed, another process's
 *     sample in the way) or a signal: 'incomplete', the message as the run's reason. Every
 *     stored sample is whole (one transaction each), so --resume continues it;
 *   - outputs that differ from greedy's (without --allow-mismatch): 'failed', the count as
 *     reason: its numbers must not become "the latest complete run";
 *   - otherwise 'complete'.
 * Returns -1 (err) when the status could not be stored (the disk that failed the run may
 * refuse this write too): the run then stays 'running', which --resume accepts as well. */
int runner_finish(db *d, int64_t run_id, int m, const runner_result *res, int allow_mismatch,
                  const char *error, db_status *status, char *err);

/* Encodes prompt i when it is a later turn (runner_prompt), computing greedy's answers to the
 * turns before it if this process has not; no-op otherwise. 0, -1 with a message, or
 * RUNNER_CANCELLED (Ctrl-C during a greedy pass). */
int runner_prepare(runner *r, int i, char *err);

/* Signals (runner_signals.c): SIGINT/SIGTERM stop runner_measure between forward passes
 * (RUNNER_INTERRUPTED); a SIGBUS in the mapping of a model runner_open watches (the file shrank
 * while in use) stops it too, and runner_measure then fails naming the file
 * (runner_changed_file()). runner_stopped() says whether either came; runner_cancel_flag() is
 * what dec_env.cancel points to. */
void runner_catch_signals(void);
int runner_stopped(void);
const volatile sig_atomic_t *runner_cancel_flag(void);
void runner_watch_model(const model *m); /* NULL or a heap model: ignored */
void runner_unwatch_models(void);
const char *runner_changed_file(void); /* the path, or NULL */

/* The command line, shell-quoted, for the run record and the resume hint (malloc'd). */
char *runner_command_line(int argc, char **argv);

/* Creates the parent folders of a database path (mkdir -p), so --db out/x.db works. */
int runner_make_parent(const char *path, char *err);
/* mkdir -p path; what names it in messages ("the plots folder results/plots"). */
int runner_make_dir(const char *path, const char *what, char *err);

#endif
