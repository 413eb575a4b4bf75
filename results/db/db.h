/* db.h: the results database (SQLite, one file, schema in results/db/schema.sql).
 *
 * A run (runs table) holds the command, model, datasets, options and the environment (machine
 * and build) it ran in; each prompt x decoder x repeat it measures is one sample row with the
 * decoder's dec_stats counters and times, its output hash and whether it matched greedy, plus
 * the non-zero histogram entries and an optional per-step trace. Tables and columns are
 * documented in results/README.md.
 *
 * Safety: db_open() never writes to a file that is not already a decbench database: it reads
 * the SQLite header itself (magic, application_id) before SQLite touches the file, then checks
 * the meta marker read-only. Databases are opened in WAL mode with foreign keys on and a busy
 * timeout, so several processes may write the same file. Each sample is inserted in one
 * transaction (sample, histograms and trace together or not at all), so an interrupted run
 * leaves only whole samples behind and can be resumed. A database is input: db_open refuses
 * one whose schema is not exactly decbench's (a view, trigger or extra object, other columns)
 * and, for reading, one whose samples hold values no run stores (results/db/db_check.c).
 *
 * Errors: functions return 0 or -1 and write one line starting with "db_" into err
 * (ERR_LEN bytes), as everywhere in decbench. */
#ifndef RESULTS_DB_H
#define RESULTS_DB_H

#include <stdint.h>

#include "stats/stats.h"
#include "util/err.h" /* ERR_LEN: every err buffer below */

/* The SQLite header's application_id of a decbench database: "DECB". */
#define DB_APPLICATION_ID 0x44454342

/* The most tokens one sample holds (prompt or output): `run --max-new` stops there, and no
 * prompt decbench runs is longer. Reading a database, a count above it (or a count above
 * DB_MAX_COUNT, exact in a double) is refused as damage rather than looped over. */
#define DB_MAX_TOKENS (1 << 24)
#define DB_MAX_COUNT (1LL << 53)

typedef struct db db;

/* DB_READ_ANY: read-only like DB_READ, but a database at an older schema version is read
 * through a copy migrated in memory (the file is never written; DB_WRITE migrates the file
 * itself). Reports, plots and compare open with it, so results of an older decbench read. */
typedef enum { DB_READ = 0, DB_WRITE = 1, DB_READ_ANY = 2 } db_mode;

/* Run status, stored as text ('running', 'complete', 'incomplete', 'failed'). A run that died
 * without db_finish_run() stays 'running'; both it and 'incomplete' can be resumed. */
typedef enum { DB_RUNNING = 0, DB_COMPLETE = 1, DB_INCOMPLETE = 2, DB_FAILED = 3 } db_status;
#define DB_STATUS_MASK(s) (1u << (s))
const char *db_status_name(db_status s);

/* The schema version this build writes (the last "-- @version" step of schema.sql). */
int db_schema_version(void);

/* Opens path. DB_READ: the file must be a decbench database at exactly this build's version
 * (an older one must first be opened once for writing, which migrates it); DB_READ_ANY also
 * reads an older one (above). DB_WRITE: creates
 * the file if absent (its directory must exist and be writable) or accepts a zero-length file;
 * an existing decbench database at an older version is migrated in one transaction. Refused,
 * untouched: a non-SQLite file, an SQLite file without the decbench marker, a NEWER schema
 * version (the message names both versions), a read-only file in DB_WRITE mode.
 * *out is owned by the caller: db_close() it. */
int db_open(db **out, const char *path, db_mode mode, char *err);
void db_close(db *d);

/* The path d was opened with. */
const char *db_path(const db *d);

/* Creates a NEW database at an older schema version (1 <= version <= db_schema_version()),
 * running only the first `version` steps: fixtures for migration tests. */
int db_create_version(const char *path, int version, char *err);

/* ---- environment ------------------------------------------------------------------------ */

/* The machine and build a run ran in. Text fields are "" and numbers -1 when unknown. */
typedef struct {
    char git_commit[41]; /* HEAD of DECBENCH_SOURCE_DIR */
    int git_dirty;       /* 1: tracked files modified, 0 clean, -1 unknown */
    char compiler[128];
    char cflags[512];
    char cpu_model[256];
    int cpu_cores;   /* physical cores */
    int cpu_threads; /* logical CPUs online */
    char openblas_config[256];
    char openblas_core[64];
    int openblas_threads;
    char hostname[256];
    char os[256];
} db_env;

/* Fills e from the build's compile definitions, /proc/cpuinfo, OpenBLAS, uname and
 * `git rev-parse HEAD` in the source dir. Never fails: what cannot be read is left unknown. */
void db_env_capture(db_env *e);

/* ---- runs -------------------------------------------------------------------------------- */

/* What a run was asked to do. Strings may be NULL (stored as NULL); ids 0 mean none. */
typedef struct {
    const char *command; /* the command line, for the record */
    const char *label;   /* free-form */
    const char *model_path;
    int64_t model_bytes;    /* 0: taken from the file with the hash */
    const char *model_hash; /* NULL: computed here by db_file_fingerprint() if readable */
    const char *draft_path;
    int64_t draft_bytes;
    const char *draft_hash; /* as model_hash */
    const char *tokenizer;
    const char *datasets; /* e.g. "mtbench,gsm8k" */
    const char *prompt_template;
    int max_new, repeats, warmup, threads;
    const char *kernels; /* kern_mode_name() */
    const char *kv_type; /* how the KV cache stored keys and values (kv_type_name()); NULL: f32 */
    uint64_t seed;
    const db_env *env; /* NULL: no environment row */
    /* How tokens were chosen (decoders/decoder.h, dec_sampling): "greedy" (or NULL),
     * "standard" or "coupled", with the temperature, top-k (0: none), top-p (1: none) and
     * seed of the sampling. */
    const char *sampling;
    double temperature, top_p;
    int top_k;
    uint64_t sampling_seed;
    int64_t sweep_id;
    int64_t baseline_run_id; /* the run holding greedy's samples when this one has none */
    /* SHA-256 of the model files (64 hex); NULL: computed here by db_file_sha256 */
    const char *model_sha256, *draft_sha256;
    const char *shard;    /* "I/N" for run/sweep --shard, NULL for the whole work */
    const char *decoders; /* the canonical specs asked for, one per line; may be NULL */
    int batch;            /* run --batch: sequences decoded at once (0 means 1) */
    int continuous;       /* run --continuous: a finished sequence replaced at once */
} db_run;

/* Inserts a run with status 'running' and the current time as started, claimed by d (below). */
int db_begin_run(db *d, const db_run *r, int64_t *run_id, char *err);

/* Sets the final status (not DB_RUNNING) and the finished time. */
int db_finish_run(db *d, int64_t run_id, db_status status, char *err);
/* The same with the reason a run stopped short (runs.reason; NULL for none, ignored for
 * DB_COMPLETE): the error or signal that left it DB_INCOMPLETE, what made it DB_FAILED. */
int db_stop_run(db *d, int64_t run_id, db_status status, const char *reason, char *err);

/* Starts a sweep; its runs pass the id in db_run.sweep_id. dataset may be NULL. */
int db_begin_sweep(db *d, const char *spec, const char *dataset, int64_t *sweep_id, char *err);

/* The newest run (highest id) whose status is in mask (DB_STATUS_MASK bits) and that stored at
 * least one sample (need_samples) or cost row (need_cost); -1 with a message if none. */
int db_latest_run(db *d, unsigned mask, int need_samples, int need_cost, int64_t *run_id,
                  char *err);

/* --resume: puts an 'incomplete' or 'running' run back to 'running' (error otherwise) and
 * clears its reason.
 *
 * Claims: a run being measured is claimed by the db handle that began or resumed it (a lock
 * the kernel holds for the process, dropped when it ends, even by kill -9), so db_resume_run
 * of a run another live process measures fails ("run N of PATH is being measured by another
 * process") before anything changes, and two `--resume` of one run cannot both measure it.
 * A dead process's 'running' run is resumable at once. */
int db_resume_run(db *d, int64_t run_id, char *err);

/* Whether run_id already holds (dataset, sample_index, spec, repeat): *done = 1 or 0. */
int db_sample_done(db *d, int64_t run_id, const char *dataset, int sample_index, const char *spec,
                   int repeat, int *done, char *err);

/* ---- reading runs and sweeps back (results/db/db_read.c) ------------------------------------ */

/* What a stored run was made with, for --resume's checks. Text fields missing in the database
 * are "". Strings are malloc'd: db_run_info_free(). */
typedef struct {
    char *model_hash, *draft_hash, *datasets, *prompt_template, *kernels;
    char *shard;   /* "I/N" or "" */
    char *kv_type; /* "f32", "f16" */
    int64_t max_new, repeats;
    uint64_t seed;
    db_status status;
    char *sampling; /* "greedy", "standard", "coupled" */
    double temperature, top_p;
    int64_t top_k;
    uint64_t sampling_seed;
    int64_t batch, continuous; /* run --batch (1 without), --continuous (0 or 1) */
} db_run_info;

/* -1 with "db_get_run: no run N in PATH" when it does not exist. */
int db_get_run(db *d, int64_t run_id, db_run_info *out, char *err);
void db_run_info_free(db_run_info *r);

/* The distinct decoder specs run_id holds samples of, in the order first stored. *specs is a
 * malloc'd array of malloc'd strings (NULL when *n = 0): db_strings_free(). */
int db_run_specs(db *d, int64_t run_id, char ***specs, int *n, char *err);
void db_strings_free(char **s, int n);

/* The sums over run_id's samples of decoder spec (samples.spec, as stored) of names[0..n) into
 * sums[]: a decoder counter's name ("accept_rank0"; 0 when no sample has it), or "samples." and
 * a column of the samples table ("samples.drafting_steps"; lower-case letters and '_' only, a
 * name from the caller's code, not from the user). *samples receives the samples of that spec
 * (0: the run has none). */
int db_counter_sums(db *d, int64_t run_id, const char *spec, const char *const *names, int n,
                    double *sums, long *samples, char *err);

/* The newest run (highest id) recorded with exactly this command line (runs.command) whose
 * status is in mask (DB_STATUS_MASK bits): `decbench paper` finds the runs of a recipe it made
 * before, to reuse or resume them. Returns 1 and sets *run_id and *status when found, 0 when
 * there is none, -1 with a message on error. */
int db_find_run(db *d, const char *command, unsigned mask, int64_t *run_id, db_status *status,
                char *err);

/* A sweep's grid spec as given on the command line (*spec malloc'd); -1 with "db_get_sweep: no
 * sweep N in PATH" when it does not exist. */
int db_get_sweep(db *d, int64_t sweep_id, char **spec, char *err);

/* The runs of a sweep, in id order (*runs malloc'd, NULL when *n = 0): its greedy baseline
 * run (is_baseline: no baseline_run_id) and one run per point. */
typedef struct {
    int64_t id;
    db_status status;
    int is_baseline;
} db_sweep_run;
int db_sweep_runs(db *d, int64_t sweep_id, db_sweep_run **runs, int *n, char *err);

/* ---- samples ----------------------------------------------------------------------------- */

/* One prompt x decoder x repeat. Counters and times come from the dec_stats. */
typedef struct {
    const char *dataset;
    int sample_index;       /* position in the dataset file */
    const char *sample_key; /* the dataset's own id, may be NULL */
    const char *category;   /* may be NULL */
    const char *decoder;    /* dec_name() */
    const char *spec;       /* dec_spec() */
    int repeat;             /* 0-based */
    uint64_t output_hash;   /* db_output_hash() of the output tokens */
    int match;              /* 1 equal to greedy, 0 not, -1 not checked */
    /* When match == 0: first differing position, the two tokens there (-1 where one output
     * had already ended) and greedy's top-1 minus top-2 logit at that position. */
    int diverge_pos, greedy_token, decoder_token;
    double greedy_margin;
    int turn; /* turn of the conversation, 1-based (0 means 1); see schema.sql step 6 */
    /* The optional pass trace (run --trace): every forward pass of the sample, in order
     * (stored in the passes table with the sample, in its transaction). NULL: none. */
    const dec_pass *passes;
    int n_passes;
    /* A sample of a batched run (run --batch B > 1), stored in batch_samples with it; NULL: an
     * unbatched sample. */
    const struct db_batch *batch;
} db_sample;

/* What a batched sample adds (schema.sql, batch_samples). */
typedef struct db_batch {
    int batch_index;      /* the batch it decoded in, in run order */
    double batch_wall;    /* seconds from the batch's first sequence's start to its last's end */
    double rows_per_pass; /* mean rows of the target passes it took part in; NAN: none */
    double t_per_token;   /* t_decode / decode tokens; NAN: no decode token */
} db_batch;

/* Inserts the sample, its non-zero histogram entries, trace[0..n_trace) (trace may be NULL) and
 * its passes (s->passes) in ONE transaction: on failure nothing of it is stored. *sample_id may
 * be NULL. */
int db_insert_sample(db *d, int64_t run_id, const db_sample *s, const dec_stats *st,
                     const dec_step *trace, int n_trace, int64_t *sample_id, char *err);

/* FNV-1a 64 over the token ids as stored in memory (int32, little-endian on x86). */
uint64_t db_output_hash(const int *tokens, int n);

/* h as 16 lower-case hex digits plus NUL. */
void db_hash_hex(uint64_t h, char out[17]);

/* A cheap content hash of a (large) file: FNV-1a 64 of its first MiB, its last MiB and its
 * size (the whole file if smaller than 2 MiB), as 16 hex digits; *bytes gets the size. */
int db_file_fingerprint(const char *path, int64_t *bytes, char hex[17], char *err);

/* SHA-256 of the whole file (results/db/db_files.c): taken from the file_sha256 cache when the
 * file's size, mtime, inode and device are unchanged, else computed (and, on a writable
 * handle, cached). hex gets 64 hex digits. */
int db_file_sha256(db *d, const char *path, char hex[65], char *err);

/* ---- merging (results/db/db_merge.c, `decbench merge`) --------------------------------------- */

typedef struct {
    int runs_added;      /* runs new in the output */
    int shards_added;    /* shards added to a run already there */
    long samples_added;  /* samples copied */
    long samples_same;   /* samples already there with equal deterministic figures */
    long samples_filled; /* of those, samples that got rows they lacked (a trace, the passes) */
    char note[512];      /* a warning worth printing (shards on different machines), or "" */
} db_merge_result;

/* Adds every run and sweep of the database in_path to d (opened DB_WRITE) in one transaction;
 * shards of one work (run/sweep --shard) join OUT's run of that work. Refused (d unchanged):
 * shards of one work from another commit or other models, a sample already in d with other
 * deterministic figures, a shard still running or interrupted, a table of the schema that
 * hangs off neither a run nor a sample. Merging a file twice changes nothing. res is added to
 * (zero it first). The rules are db_merge.c's header comment. */
int db_merge(db *d, const char *in_path, db_merge_result *res, char *err);

/* ---- cost -------------------------------------------------------------------------------- */

/* One point of the forward-latency curve measured by `decbench cost` (model in the run):
 * t(rows, context, logit rows). */
typedef struct {
    int rows;             /* rows per forward pass, T */
    double seconds;       /* per pass */
    int repeats;          /* passes measured */
    double gflops;        /* achieved GFLOP/s (<0: unknown) */
    double gbps;          /* weight bytes / seconds, GB/s (<0: unknown) */
    int64_t weight_bytes; /* bytes of weights a pass reads (0: unknown) */
    double mem_gbps;      /* measured memory bandwidth, GB/s (<0: unknown) */
    int context;          /* committed tokens before the pass; < 0: not recorded (NULL) */
    int logit_rows;       /* rows whose logits the pass computed (0..rows) */
} db_cost;

int db_insert_cost(db *d, int64_t run_id, const db_cost *c, char *err);

/* A database source on the command line: "FILE" or "FILE:RUN_ID" (the suffix is taken as a run
 * id only when it is all digits, FILE is non-empty and no file is named ARG itself). *run_id = 0
 * when absent. */
int db_split_source(const char *arg, char *path, size_t n, int64_t *run_id, char *err);

#endif
