/* runner_opts.c: the options `run` and `sweep` share, the recorded command line, and the
 * database folder. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/runner.h"
#include "util/err.h"
#include "util/num.h"

/* Designated fields: the parse results (count, values) start zeroed. OPTV: an option with a
 * value shown as META in --help; OPT: as before (a flag, or a value shown by its name). */
#define OPT(n, a, v, h)                                                                            \
    { .name = n, .alias = a, .takes_value = v, .help = h }
#define OPTV(n, a, meta, h)                                                                        \
    { .name = n, .alias = a, .takes_value = 1, .help = h, .metavar = meta }

static const args_opt common[RUNNER_N_OPTS - SAMPLING_N_OPTS] = {
    OPTV("--model", "-m", "FILE", "target model (llama2.c .bin or GGUF), required"),
    OPTV("--draft", NULL, "FILE",
         "draft model for spec / tree / ouroboros (same vocabulary), or self:TYPE: the target "
         "requantized in memory (self:q8_0, self:q4_0, self:Q4_K_M, ...)"),
    OPTV("--tokenizer", "-z", "FILE",
         "tokenizer (default: the GGUF's own, or tok<vocab>.bin in the models folder)"),
    OPTV("--dataset", NULL, "NAME",
         "NAME[,NAME...] (repeatable); see `decbench run --help` for the names"),
    OPTV("--template", NULL, "NAME",
         "prompt template for every dataset (default: each dataset's own)"),
    OPTV("--chat-template", NULL, "NAME",
         "chat format for the chat templates: llama2-sys, llama3, chatml, deepseek, vicuna, ... "
         "(default: the GGUF's tokenizer.chat_template when recognised, else each template's "
         "own)"),
    OPTV("--limit", NULL, "N", "at most N prompts per dataset (default 0 = all)"),
    OPTV("--offset", NULL, "N", "skip the first N prompts of each dataset (after --shuffle)"),
    OPTV("--shuffle", NULL, "SEED",
         "shuffle each dataset with this seed (uint64, recorded) before --offset/--limit"),
    OPTV("--max-new", "-n", "N",
         "new tokens per prompt (default: each dataset's paper value; recorded as 0 if they "
         "differ)"),
    OPTV("--repeats", "-r", "N",
         "measured passes over the prompts (default 1; 3+ for a standard deviation)"),
    OPTV("--warmup", NULL, "N",
         "unstored warm-up generations per decoder on the first prompt (default 1)"),
    OPTV("--threads", "-t", "N", "threads (default: one per CPU of the affinity mask)"),
    OPTV("--kernels", NULL, KERNELS_METAVAR, KERNELS_HELP),
    OPTV("--kv-type", NULL, KV_TYPE_METAVAR, KV_TYPE_HELP),
    OPTV("--db", NULL, "FILE",
         "results database (default results/decbench.db; folders are created)"),
    OPTV("--data-dir", NULL, "DIR",
         "datasets folder (default $DECBENCH_DATASETS or <shared>/datasets)"),
    OPT("--trace", NULL, 0,
        "store a per-step trace (rows, drafted, accepted, emitted, seconds) and every forward "
        "pass (model, rows, logit rows, context, seconds: what report --project-cost prices)"),
    OPT("--allow-mismatch", NULL, 0,
        "a decoder differing from greedy is reported but the run succeeds"),
    OPTV("--label", NULL, "TEXT", "free text stored with the run"),
    OPT("--skip-long", NULL, 0,
        "leave out prompts longer than the model's context (default: error)"),
    OPT("--cut-long", NULL, 0,
        "cut prompts that leave less than max-new tokens of context to half the context (BOS "
        "and their end: for models with a short context, e.g. the papers' prompts on the "
        "TinyStories stand-ins); recorded"),
    OPTV("--turns", NULL, "N",
         "turns of multi-turn records (MT-bench, Spec-Bench's mt_bench: 2) to measure, each after "
         "greedy's answer to the one before, in the model's chat format (default 1: the first)"),
    OPTV("--order", NULL, "ORDER",
         "grouped (default: dataset after dataset), interleave[:C] (C consecutive prompts of each "
         "dataset in turn; C = 1) or shuffle[:SEED] (a seeded random order over all datasets)"),
    OPTV("--shard", NULL, "I/N",
         "measure only share I of N of the work (units: decoder x repeat x prompt; each shard "
         "with the greedy baselines it needs); `decbench merge` puts the shards together"),
    OPTV("--ctx", NULL, "N",
         "context in tokens (default: the model's, at most 4096; the KV cache is allocated for "
         "all of it)"),
    OPT("--allow-nonfinite", NULL, 0,
        "decode NaN/infinite logits (argmax of garbage) instead of stopping the run with an "
        "error naming the position"),
    OPTV("--batch", NULL, "B",
         "decode B prompts at once, their forward passes shared (default 1); each output is "
         "still checked against greedy's; recorded"),
    OPT("--continuous", NULL, 0,
        "with --batch: a finished sequence is replaced by the next prompt at once (default: "
        "static batches of B prompts, each ending when all of its sequences end)"),
};

/* --batch and --continuous, and what they cannot be combined with (each refused in one line,
 * saying why). */
static int runner_batch_opts(const args_opt *o, int n, runner_opts *ro, char *err) {
    const char *b = args_str(o, n, "--batch", NULL);
    long long v = 1;
    if (b && num_parse(b, LLONG_MIN, LLONG_MAX, &v, "--batch", err)) return -1;
    if (b && (v < 1 || v > RUNNER_MAX_BATCH))
        return err_set(err, "--batch %lld: expected 1..%d sequences at once", v, RUNNER_MAX_BATCH);
    ro->batch = (int)v;
    ro->continuous = args_flag(o, n, "--continuous");
    if (ro->continuous && ro->batch < 2)
        return err_set(err, "--continuous replaces finished sequences of a batch: give --batch B "
                            "with B >= 2");
    if (ro->batch < 2) return 0;
    if (ro->trace)
        return err_set(err, "--batch cannot be combined with --trace: a batched sequence's steps "
                            "and passes are shared with the others, so their times are not its "
                            "own");
    return 0;
}

void runner_options(args_opt *o) {
    memcpy(o, common, sizeof common);
    sampling_options(o + RUNNER_N_OPTS - SAMPLING_N_OPTS);
}

#define DEFAULT_DB "results/decbench.db"

int runner_opts_get(const args_opt *o, int n, runner_opts *ro, char *err) {
    static char names[8192]; /* --dataset values split at ',' (the process runs one command) */
    memset(ro, 0, sizeof *ro);
    ro->model = args_str(o, n, "--model", NULL);
    ro->draft = args_str(o, n, "--draft", NULL);
    ro->tokenizer = args_str(o, n, "--tokenizer", NULL);
    ro->kernels = args_str(o, n, "--kernels", "auto");
    ro->kv_type = args_str(o, n, "--kv-type", "f32");
    ro->data_dir = args_str(o, n, "--data-dir", NULL);
    ro->template_name = args_str(o, n, "--template", NULL);
    ro->chat_template = args_str(o, n, "--chat-template", NULL);
    ro->label = args_str(o, n, "--label", NULL);
    ro->db_path = args_str(o, n, "--db", DEFAULT_DB);
    ro->trace = args_flag(o, n, "--trace");
    ro->allow_mismatch = args_flag(o, n, "--allow-mismatch");
    ro->skip_long = args_flag(o, n, "--skip-long");
    ro->allow_nonfinite = args_flag(o, n, "--allow-nonfinite");
    ro->cut_long = args_flag(o, n, "--cut-long");
    if (!ro->model) return err_set(err, "--model FILE is required");
    kern_mode km;
    if (session_kernels(ro->kernels, &km, err)) return -1;
    kv_type kv;
    if (session_kv_type(ro->kv_type, &kv, err)) return -1;
    if (sampling_opts_get(o, n, &ro->sampling, err)) return -1;
    if (!*ro->db_path) return err_set(err, "--db: empty path");
    long v[8];
    if (args_int(o, n, "--limit", 0, 0, 1 << 30, &v[0], err) ||
        args_int(o, n, "--offset", 0, 0, 1 << 30, &v[1], err) ||
        args_int(o, n, "--max-new", 0, 1, 1 << 24, &v[2], err) ||
        args_int(o, n, "--repeats", 1, 1, 10000, &v[3], err) ||
        args_int(o, n, "--warmup", 1, 0, 1000, &v[4], err) ||
        args_int(o, n, "--threads", 0, 0, 1024, &v[5], err) ||
        args_int(o, n, "--ctx", 0, 1, 1 << 20, &v[6], err))
        return -1;
    ro->ctx = (int)v[6];
    if (runner_batch_opts(o, n, ro, err)) return -1;
    ro->limit = (int)v[0], ro->offset = (int)v[1], ro->max_new = (int)v[2];
    ro->repeats = (int)v[3], ro->warmup = (int)v[4], ro->threads = (int)v[5];
    long turns;
    if (args_int(o, n, "--turns", 1, 1, 16, &turns, err)) return -1;
    ro->turns = (int)turns;
    const char *order = args_str(o, n, "--order", "grouped");
    const char *colon = strchr(order, ':');
    size_t len = colon ? (size_t)(colon - order) : strlen(order);
    if (len == 7 && !strncmp(order, "grouped", len) && !colon) {
        ro->order = RUNNER_ORDER_GROUPED;
    } else if (len == 10 && !strncmp(order, "interleave", len)) {
        long long c = 1;
        if (colon && num_parse(colon + 1, 1, 1 << 30, &c, "--order interleave:C", err)) return -1;
        ro->order = RUNNER_ORDER_INTERLEAVE, ro->order_n = (int)c;
    } else if (len == 7 && !strncmp(order, "shuffle", len)) {
        long long sd = 0;
        if (colon && num_parse(colon + 1, 0, INT64_MAX, &sd, "--order shuffle:SEED", err))
            return -1;
        ro->order = RUNNER_ORDER_SHUFFLE, ro->order_seed = (uint64_t)sd;
    } else {
        return err_set(err, "--order %.40s: expected grouped, interleave[:C] or shuffle[:SEED]",
                       order);
    }
    const char *shard = args_str(o, n, "--shard", NULL);
    if (shard) {
        long long si, sn;
        const char *slash = strchr(shard, '/');
        char first[32];
        if (!slash || (size_t)(slash - shard) >= sizeof first)
            return err_set(err, "--shard: '%.40s' is not I/N (e.g. 2/8)", shard);
        snprintf(first, sizeof first, "%.*s", (int)(slash - shard), shard);
        if (num_parse(slash + 1, 1, 100000, &sn, "--shard N", err) ||
            num_parse(first, 1, sn, &si, "--shard I", err))
            return -1;
        ro->shard_i = (int)si, ro->shard_n = (int)sn;
    }
    unsigned long long shuffle;
    if (args_seed(o, n, "--shuffle", 0, &shuffle, err)) return -1;
    ro->seed = shuffle;
    ro->shuffle = args_str(o, n, "--shuffle", NULL) != NULL;
    /* --dataset a,b --dataset c: the names, in order. */
    const args_opt *ds = args_get(o, n, "--dataset");
    size_t used = 0;
    for (int i = 0; ds && i < ds->count; i++) {
        size_t len = strlen(ds->values[i]);
        if (used + len + 1 > sizeof names) return err_set(err, "--dataset: too many names");
        char *copy = memcpy(names + used, ds->values[i], len + 1), *save = NULL;
        used += len + 1;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (ro->n_datasets >= RUNNER_MAX_DATASETS)
                return err_set(err, "--dataset: more than %d datasets", RUNNER_MAX_DATASETS);
            ro->datasets[ro->n_datasets++] = t;
        }
    }
    if (ro->n_datasets == 0) return err_set(err, "--dataset NAME is required (names: see --help)");
    if (ro->batch > 1 && ro->shard_n)
        return err_set(err, "--batch cannot be combined with --shard: a shard's units are single "
                            "samples, a batch decodes B prompts together");
    return 0;
}

void runner_help(void) {
    printf("how it measures (details: harness/runner.h):\n"
           "  - greedy is always measured first for each prompt and is the reference: every\n"
           "    output is compared token by token with greedy's; a difference prints the first\n"
           "    diverging position, both tokens and greedy's top-1 minus top-2 logit there, is\n"
           "    stored (samples.matched = 0), marks the run 'failed' and exits 1 (unless\n"
           "    --allow-mismatch)\n"
           "  - order: for each repeat, for each prompt, greedy then every decoder, so each\n"
           "    speed-up is paired under the same machine state; decoders are created afresh per\n"
           "    repeat (warm pools carry across prompts, not across repeats)\n"
           "  - warm-up: --warmup unstored generations per decoder on the first prompt, with a\n"
           "    throw-away instance, before its first measured sample\n"
           "  - every sample (statistics, histograms, --trace) is one transaction; Ctrl-C stops\n"
           "    the current sample within one forward pass (it is not stored: --resume measures\n"
           "    it again), marks the run 'incomplete' and exits 130; a second Ctrl-C\n"
           "    exits at once (the run stays 'running'). Both are continued by repeating the\n"
           "    command with --resume RUN_ID (the same model, datasets, templates, max-new,\n"
           "    repeats, kernels and seed are required; stored samples are skipped). Decoders\n"
           "    with state across prompts (ouroboros warm=1, suffix) first rebuild it: the\n"
           "    repeat's stored samples are generated again, unstored, so the rest of the run\n"
           "    and --state-save see the state an uninterrupted run would have.\n"
           "  - any other fault (a full disk, a failed --state-save, a model file changed while\n"
           "    in use, non-finite logits) also leaves the run 'incomplete', the error stored as\n"
           "    runs.reason and printed with the --resume command; exit 1. One process measures\n"
           "    a run at a time: a --resume of a run another process is measuring is refused\n"
           "  - --batch B: B prompts at a time per decoder (greedy first on each batch), each\n"
           "    sequence in its own thread, their forward passes gathered into shared passes;\n"
           "    outputs are checked as above; --continuous replaces an ended sequence at once\n"
           "  - tok/s, speed-up, tokens/step etc. are defined in results/README.md; reports:\n"
           "    `decbench report`, CI gate: `decbench compare`\n");
    fputs(sampling_help, stdout);
    char buf[8192];
    ds_help(buf, sizeof buf);
    printf("datasets:\n%s", buf);
}

/* Single-quotes an argument unless it is made of characters no shell treats specially. */
static void quote(FILE *m, const char *a) {
    int plain = *a != '\0';
    for (const char *p = a; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%",
                       *p) != NULL;
    if (plain) {
        fputs(a, m);
        return;
    }
    fputc('\'', m);
    for (const char *p = a; *p; p++)
        if (*p == '\'')
            fputs("'\\''", m);
        else
            fputc(*p, m);
    fputc('\'', m);
}

char *runner_command_line(int argc, char **argv) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return NULL;
    fputs("decbench", m); /* argv[0] may be a build path: the command is what matters */
    for (int i = 1; i < argc; i++) {
        /* the resume hint appends its own --resume */
        if (!strcmp(argv[i], "--resume") && i + 1 < argc) {
            i++;
            continue;
        }
        if (!strncmp(argv[i], "--resume=", 9)) continue;
        fputc(' ', m);
        quote(m, argv[i]);
    }
    fclose(m);
    return buf;
}

int runner_make_parent(const char *path, char *err) {
    char dir[4096];
    if (strlen(path) >= sizeof dir) return err_set(err, "--db: path too long");
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0; /* the current folder or / */
    *slash = '\0';
    char what[4200];
    snprintf(what, sizeof what, "the database %s", path);
    return runner_make_dir(dir, what, err);
}

int runner_make_dir(const char *path, const char *what, char *err) {
    char dir[4096];
    if (strlen(path) >= sizeof dir) return err_set(err, "%s: path too long", path);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (stat(dir, &st) != 0) {
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                return err_set(err, "cannot create folder %s for %s: %s", dir, what,
                               strerror(errno));
        } else if (!S_ISDIR(st.st_mode)) {
            return err_set(err, "cannot create %s: %s is not a folder", what, dir);
        }
        *p = c;
        if (!c) break;
    }
    return 0;
}
