-- schema.sql: the decbench results database, the ONLY place its schema is written down.
--
-- The file is an ordered list of migration steps. A line "-- @version N" starts step N; step N
-- turns a version N-1 database into a version N one. A new database is built by running every
-- step from 1 (so creating and migrating are the same code path); an older database runs the
-- steps above its PRAGMA user_version. All pending steps run in ONE transaction together with
-- the user_version update, so a database is never left half-migrated. Never edit a released
-- step: append a new one. The build embeds this file into the binary (results/db/embed_schema.cmake).
--
-- Identification: PRAGMA application_id = 0x44454342 ("DECB") and meta('application') =
-- 'decbench'. A file without the meta marker is not ours and is never written to.
-- Times are seconds (REAL); timestamps are ISO 8601 UTC text.

-- @version 1
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('application', 'decbench');
INSERT INTO meta (key, value) VALUES ('created', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));

-- Machine and build. Identical environments share one row (fingerprint = hash of all fields).
CREATE TABLE environments (
    id               INTEGER PRIMARY KEY,
    fingerprint      TEXT NOT NULL UNIQUE,
    git_commit       TEXT,              -- full hash, NULL when git or the source dir is absent
    git_dirty        INTEGER,           -- 1 uncommitted changes to tracked files, 0 clean, NULL unknown
    compiler         TEXT,
    cflags           TEXT,
    cpu_model        TEXT,
    cpu_cores        INTEGER,           -- physical cores (distinct physical id/core id pairs)
    cpu_threads      INTEGER,           -- logical CPUs online
    openblas_config  TEXT,              -- openblas_get_config()
    openblas_core    TEXT,              -- openblas_get_corename()
    openblas_threads INTEGER,           -- openblas_get_num_threads()
    hostname         TEXT,
    os               TEXT               -- uname: sysname release machine
);

-- A sweep: one greedy baseline run plus one run per parameter point (runs.sweep_id).
CREATE TABLE sweeps (
    id      INTEGER PRIMARY KEY,
    spec    TEXT NOT NULL,              -- the sweep grid as given on the command line
    dataset TEXT,
    created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    started         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    finished        TEXT,
    -- 'running' while going (also what a crashed run is left as), 'incomplete' interrupted
    -- (resumable), 'complete', 'failed'.
    status          TEXT NOT NULL DEFAULT 'running'
                    CHECK (status IN ('running', 'complete', 'incomplete', 'failed')),
    command         TEXT,
    label           TEXT,
    model_path      TEXT,
    model_bytes     INTEGER,
    model_hash      TEXT,               -- FNV-1a 64 of first MiB, last MiB and size (16 hex)
    draft_path      TEXT,
    draft_bytes     INTEGER,
    draft_hash      TEXT,
    tokenizer       TEXT,
    datasets        TEXT,
    template        TEXT,
    max_new         INTEGER,
    repeats         INTEGER,
    warmup          INTEGER,
    threads         INTEGER,            -- decbench thread-pool size
    kernels         TEXT,               -- the mode that ran: 'exact' / 'exact-int8' / 'blas' (never 'auto')
    seed            INTEGER,            -- the uint64 seed's bit pattern as a signed 64-bit value
    env_id          INTEGER REFERENCES environments(id),
    sweep_id        INTEGER REFERENCES sweeps(id),
    baseline_run_id INTEGER REFERENCES runs(id)   -- where greedy's samples live, if not here
);
CREATE INDEX runs_sweep ON runs(sweep_id);

-- One row per prompt x decoder x repeat.
CREATE TABLE samples (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    dataset       TEXT NOT NULL,
    sample_index  INTEGER NOT NULL,     -- position in the dataset file (0-based)
    sample_key    TEXT,                 -- the dataset's own id for the prompt, if any
    category      TEXT,
    decoder       TEXT NOT NULL,        -- dec_name(): 'greedy', 'lookahead', ...
    spec          TEXT NOT NULL,        -- dec_spec(): canonical, every parameter
    repeat        INTEGER NOT NULL CHECK (repeat >= 0),
    prompt_tokens INTEGER NOT NULL CHECK (prompt_tokens >= 0),
    new_tokens    INTEGER NOT NULL CHECK (new_tokens >= 0),
    output_hash   TEXT NOT NULL CHECK (length(output_hash) = 16),
    target_steps  INTEGER NOT NULL,
    target_rows   INTEGER NOT NULL,
    draft_steps   INTEGER NOT NULL,
    draft_rows    INTEGER NOT NULL,
    drafted       INTEGER NOT NULL,
    accepted      INTEGER NOT NULL,
    t_target      REAL NOT NULL,
    t_draft       REAL NOT NULL,
    t_book        REAL NOT NULL,
    t_prefill     REAL NOT NULL,
    t_total       REAL NOT NULL,
    tps_decode    REAL,                 -- new_tokens / (t_total - t_prefill); NULL if no time
    tps_e2e       REAL,                 -- new_tokens / t_total
    matched       INTEGER CHECK (matched IN (0, 1)), -- vs greedy; NULL = not checked
    diverge_pos   INTEGER,              -- on mismatch: first differing output position
    greedy_token  INTEGER,              --   greedy's token there (-1: greedy had ended)
    decoder_token INTEGER,              --   the decoder's token there (-1: decoder had ended)
    greedy_margin REAL,                 --   greedy's top-1 minus top-2 logit there
    UNIQUE (run_id, dataset, sample_index, spec, repeat)
);

-- Non-zero entries of the dec_stats histograms.
CREATE TABLE histograms (
    sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind IN ('accept', 'pos_tried', 'pos_accepted')),
    k         INTEGER NOT NULL CHECK (k >= 0),
    count     INTEGER NOT NULL CHECK (count > 0),
    PRIMARY KEY (sample_id, kind, k)
) WITHOUT ROWID;

-- Optional per-target-step trace (step 0 = prefill).
CREATE TABLE trace (
    sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    step      INTEGER NOT NULL CHECK (step >= 0),
    rows      INTEGER NOT NULL CHECK (rows >= 0),
    drafted   INTEGER NOT NULL CHECK (drafted >= 0),
    accepted  INTEGER NOT NULL CHECK (accepted >= 0),
    emitted   INTEGER NOT NULL CHECK (emitted >= 0),
    seconds   REAL NOT NULL,
    PRIMARY KEY (sample_id, step)
) WITHOUT ROWID;

-- Forward latency versus rows per pass (decbench cost); model and machine are in the run.
CREATE TABLE cost (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rows         INTEGER NOT NULL CHECK (rows > 0),
    seconds      REAL NOT NULL CHECK (seconds > 0),  -- per forward pass (median of repeats)
    repeats      INTEGER NOT NULL,
    gflops       REAL,                               -- achieved GFLOP/s
    gbps         REAL,                               -- weight bytes read / seconds, GB/s
    weight_bytes INTEGER,                            -- bytes of weights one pass reads
    mem_gbps     REAL,                               -- measured memory bandwidth, GB/s
    PRIMARY KEY (run_id, rows)
);

-- @version 2
-- Verification steps per sample (the sum of the accept histogram), denormalised so reports can
-- compute mean accepted length = sum(accepted) / sum(verify_steps) without a join. Back-filled
-- from the histograms of samples stored by version 1.
ALTER TABLE samples ADD COLUMN verify_steps INTEGER NOT NULL DEFAULT 0;
UPDATE samples SET verify_steps = (
    SELECT COALESCE(SUM(h.count), 0) FROM histograms h
    WHERE h.sample_id = samples.id AND h.kind = 'accept');

-- @version 3
-- A decoder's own counters (its vtable's counter table, stats/stats.h): one row per counter per
-- sample, zeros included, so a missing row means "not measured" rather than 0.
CREATE TABLE counters (
    sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    name      TEXT NOT NULL,
    value     NOT NULL,                 -- INTEGER or REAL, as counter_defs.kind says
    PRIMARY KEY (sample_id, name)
) WITHOUT ROWID;

-- What each decoder counter means, per decoder name: written with the samples that use it (the
-- newest definition wins), so reports and compare need no decoder code to read a database.
CREATE TABLE counter_defs (
    decoder       TEXT NOT NULL,        -- samples.decoder
    name          TEXT NOT NULL,
    position      INTEGER NOT NULL,     -- row of the decoder's counter table (display order)
    kind          TEXT NOT NULL CHECK (kind IN ('int', 'real')),
    aggregation   TEXT NOT NULL CHECK (aggregation IN ('sum', 'mean', 'max')),
    deterministic INTEGER NOT NULL CHECK (deterministic IN (0, 1)), -- 1: compare requires equality
    definition    TEXT NOT NULL,
    PRIMARY KEY (decoder, name)
) WITHOUT ROWID;

-- @version 4
-- Decode-only tok/s counts the tokens produced after the prompt pass (its one token is no longer
-- in the numerator: stats/stats.h, STAT_DERIVED decode_tokens), and from this version on
-- t_prefill holds the draft model's prompt pass too. tps_decode of older samples is recomputed
-- with the new numerator; their t_prefill cannot be corrected (for draft-model decoders their
-- decode time still includes the draft's prompt pass).
UPDATE samples SET tps_decode =
    CASE WHEN t_total > t_prefill THEN MAX(new_tokens - 1, 0) / (t_total - t_prefill) END;

-- @version 5
-- Why a run stopped short: the error or signal that left it 'incomplete' (resumable: every stored
-- sample is whole) or what made it 'failed' (outputs that differ from greedy's). NULL while it
-- runs and once complete; a --resume clears it.
ALTER TABLE runs ADD COLUMN reason TEXT;

-- @version 6
-- Model fingerprints checkable against published checksums: SHA-256 of the whole file (64 hex,
-- as sha256sum prints), beside the cheap model_hash. file_sha256 caches each file's digest by
-- its identity (size, modification time, inode, device), so a 13 GB model is read once, not at
-- every run; a file replaced or modified gets a new row.
ALTER TABLE runs ADD COLUMN model_sha256 TEXT;
ALTER TABLE runs ADD COLUMN draft_sha256 TEXT;
CREATE TABLE file_sha256 (
    path     TEXT PRIMARY KEY,          -- absolute path (realpath)
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode    INTEGER NOT NULL,
    device   INTEGER NOT NULL,
    sha256   TEXT NOT NULL CHECK (length(sha256) = 64)
) WITHOUT ROWID;
-- Sharded work (run/sweep --shard I/N on several machines, put together by `decbench merge`):
-- the share this run measured ('I/N'; after a merge the shards it holds, e.g. '1,2,3,4/4'), and
-- the canonical decoder specs the command asked for, one per line (how merge knows two shards
-- ran the same work).
ALTER TABLE runs ADD COLUMN shard TEXT;
ALTER TABLE runs ADD COLUMN decoders TEXT;
-- Multi-turn datasets (run --turns 2): the turn of the conversation a sample answers (1 = the
-- first question). Turn t > 1 of the record at position i is stored with sample_index
-- i + (t - 1) * 1000000 (samples are keyed by sample_index; datasets hold fewer than 10^6
-- records), so both turns of one question sit in the same dataset.
ALTER TABLE samples ADD COLUMN turn INTEGER NOT NULL DEFAULT 1 CHECK (turn >= 1);

-- @version 7
-- The pass trace (run --trace): every forward pass of the target and of the draft model, the
-- prompt's chunks included, with what its cost depends on, so that a projection prices each
-- pass on a cost curve (report --layout projected, decbench tune). seq orders a sample's passes.
CREATE TABLE passes (
    sample_id  INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    model      TEXT NOT NULL CHECK (model IN ('target', 'draft')),
    prefill    INTEGER NOT NULL CHECK (prefill IN (0, 1)),   -- 1: a chunk of the prompt pass
    rows       INTEGER NOT NULL CHECK (rows > 0),
    logit_rows INTEGER NOT NULL CHECK (logit_rows >= 0 AND logit_rows <= rows),
    context    INTEGER NOT NULL CHECK (context >= 0),        -- committed tokens before the pass
    seconds    REAL NOT NULL,
    PRIMARY KEY (sample_id, seq)
) WITHOUT ROWID;

-- Cost curves over a grid t(rows, context, logit rows) (decbench cost from this version on). The
-- key grows, so the table is rebuilt; points stored before keep rows and seconds, with their
-- context not recorded (NULL: the run's one --context, 128 unless given) and every row's logits
-- computed, as the older `cost` measured them.
CREATE TABLE cost_v7 (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rows         INTEGER NOT NULL CHECK (rows > 0),
    context      INTEGER CHECK (context >= 0),    -- committed tokens before the pass; NULL: unknown
    logit_rows   INTEGER NOT NULL CHECK (logit_rows >= 0 AND logit_rows <= rows),
    seconds      REAL NOT NULL CHECK (seconds > 0),  -- per forward pass: mean of repeats (median before v7)
    repeats      INTEGER NOT NULL,
    gflops       REAL,                               -- achieved GFLOP/s
    gbps         REAL,                               -- weight bytes read / seconds, GB/s
    weight_bytes INTEGER,                            -- bytes of weights one pass reads
    mem_gbps     REAL,                               -- measured memory bandwidth, GB/s
    UNIQUE (run_id, rows, context, logit_rows)
);
INSERT INTO cost_v7 (run_id, rows, context, logit_rows, seconds, repeats, gflops, gbps,
                     weight_bytes, mem_gbps)
    SELECT run_id, rows, NULL, rows, seconds, repeats, gflops, gbps, weight_bytes, mem_gbps
    FROM cost;
DROP TABLE cost;
ALTER TABLE cost_v7 RENAME TO cost;

-- @version 8
-- Sampling at temperature > 0 (decoders/decoder.h, dec_sampling): how the run chose tokens, and
-- per sample the rejection tests of standard sampling with their expected number of acceptances
-- and its variance (stats/stats.h), from which `run` checks acceptance against its theoretical
-- rate. Runs before this version were greedy: sampling = 'greedy', temperature 0.
ALTER TABLE runs ADD COLUMN sampling TEXT NOT NULL DEFAULT 'greedy'
    CHECK (sampling IN ('greedy', 'standard', 'coupled'));
ALTER TABLE runs ADD COLUMN temperature REAL NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN top_k INTEGER NOT NULL DEFAULT 0;   -- 0: no top-k cut
ALTER TABLE runs ADD COLUMN top_p REAL NOT NULL DEFAULT 1;     -- 1: no top-p cut
ALTER TABLE runs ADD COLUMN sampling_seed INTEGER NOT NULL DEFAULT 0; -- the uint64 as signed
ALTER TABLE samples ADD COLUMN samp_tests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN samp_accepts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN samp_expected REAL NOT NULL DEFAULT 0;
ALTER TABLE samples ADD COLUMN samp_variance REAL NOT NULL DEFAULT 0;

-- @version 9
-- drafting_steps (stats/stats.h): the verification steps that offered at least one drafted
-- token, vLLM's num_drafts, the denominator of its mean acceptance length. A step drafted at
-- position 1 exactly when it offered a token, so the samples stored before this version get
-- it from their pos_tried histogram, exactly.
ALTER TABLE samples ADD COLUMN drafting_steps INTEGER NOT NULL DEFAULT 0;
UPDATE samples SET drafting_steps = COALESCE(
    (SELECT h.count FROM histograms h WHERE h.sample_id = samples.id AND h.kind = 'pos_tried'
     AND h.k = 0), 0);

-- @version 10
-- How the KV cache stored keys and values (--kv-type, model/model.h's kv_types[]: 'f32', or
-- 'f16' rounded to nearest even, as llama.cpp's default cache). f16 changes the logits, so
-- compare warns when two runs differ in it and merge treats it as part of the work. Runs before
-- this version stored them as float32.
ALTER TABLE runs ADD COLUMN kv_type TEXT NOT NULL DEFAULT 'f32';

-- @version 11
-- Batched runs (`run --batch B`: B sequences decoded at once, their forward passes shared;
-- --continuous: a finished sequence replaced by the next prompt at once). Runs before this
-- version, and every run without --batch, decoded one sequence at a time: batch 1, continuous 0.
-- A batched sample's own figures hang off it in batch_samples; an unbatched sample has no row.
ALTER TABLE runs ADD COLUMN batch INTEGER NOT NULL DEFAULT 1 CHECK (batch >= 1);
ALTER TABLE runs ADD COLUMN continuous INTEGER NOT NULL DEFAULT 0 CHECK (continuous IN (0, 1));
CREATE TABLE batch_samples (
    sample_id     INTEGER PRIMARY KEY REFERENCES samples(id) ON DELETE CASCADE,
    batch_index   INTEGER NOT NULL CHECK (batch_index >= 0), -- the batch it decoded in (run order;
                                                             -- --continuous: one per decoder and repeat)
    batch_wall    REAL NOT NULL CHECK (batch_wall >= 0),     -- seconds from that batch's first
                                                             -- sequence's start to its last one's end
    rows_per_pass REAL,                  -- mean rows (every sequence's) of the target passes it took
                                         -- part in, its prompt passes left out; NULL: none
    t_per_token   REAL                   -- seconds per token after the first: t_decode / decode tokens
);
