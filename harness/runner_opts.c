/* runner_opts.c: the options `run` and `sweep` share, the recorded command line, and the
 * database folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/runner.h"
#include "util/err.h"

/* Designated fields: the parse results (count, values) start zeroed. */
#define OPT(n, a, v, h)                                                                            \
    { .name = n, .alias = a, .takes_value = v, .help = h }

static const args_opt common[RUNNER_N_OPTS - SAMPLING_N_OPTS] = {
    OPT("--model", "-m", 1, "target model (llama2.c .bin or GGUF), required"),
    OPT("--draft", NULL, 1, "draft model for spec / ouroboros (same vocabulary)"),
    OPT("--tokenizer", "-z", 1,
        "tokenizer (default: the GGUF's own, or tok<vocab>.bin in the models folder)"),
    OPT("--dataset", NULL, 1,
        "NAME[,NAME...] (repeatable); see `decbench run --help` for the names"),
    OPT("--template", NULL, 1, "prompt template for every dataset (default: each dataset's own)"),
    OPT("--chat-template", NULL, 1,
        "chat format for the chat templates: llama2-sys, llama3, chatml, deepseek, vicuna, ... "
        "(default: the GGUF's tokenizer.chat_template when recognised, else each template's "
        "own)"),
    OPT("--limit", NULL, 1, "at most N prompts per dataset (default 0 = all)"),
    OPT("--offset", NULL, 1, "skip the first N prompts of each dataset (after --shuffle)"),
    OPT("--shuffle", NULL, 1,
        "shuffle each dataset with this seed (uint64, recorded) before --offset/--limit"),
    OPT("--max-new", "-n", 1,
        "new tokens per prompt (default: each dataset's paper value; recorded as 0 if they "
        "differ)"),
    OPT("--repeats", "-r", 1,
        "measured passes over the prompts (default 1; 3+ for a standard deviation)"),
    OPT("--warmup", NULL, 1,
        "unstored warm-up generations per decoder on the first prompt (default 1)"),
    OPT("--threads", "-t", 1, "threads (default: one per core)"),
    OPT("--kernels", NULL, 1,
        "exact (default, batch-invariant) or blas (not invariant: mismatches likely)"),
    OPT("--db", NULL, 1, "results database (default results/decbench.db; folders are created)"),
    OPT("--data-dir", NULL, 1, "datasets folder (default $DECBENCH_DATASETS or <shared>/datasets)"),
    OPT("--trace", NULL, 0, "store a per-step trace (rows, drafted, accepted, emitted, seconds)"),
    OPT("--allow-mismatch", NULL, 0,
        "a decoder differing from greedy is reported but the run succeeds"),
    OPT("--label", NULL, 1, "free text stored with the run"),
    OPT("--skip-long", NULL, 0,
        "leave out prompts longer than the model's context (default: error)"),
};

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
    ro->kernels = args_str(o, n, "--kernels", "exact");
    ro->data_dir = args_str(o, n, "--data-dir", NULL);
    ro->template_name = args_str(o, n, "--template", NULL);
    ro->chat_template = args_str(o, n, "--chat-template", NULL);
    ro->label = args_str(o, n, "--label", NULL);
    ro->db_path = args_str(o, n, "--db", DEFAULT_DB);
    ro->trace = args_flag(o, n, "--trace");
    ro->allow_mismatch = args_flag(o, n, "--allow-mismatch");
    ro->skip_long = args_flag(o, n, "--skip-long");
    if (!ro->model) return err_set(err, "--model FILE is required");
    if (sampling_opts_get(o, n, &ro->sampling, err)) return -1;
    if (!*ro->db_path) return err_set(err, "--db: empty path");
    long v[7];
    if (args_int(o, n, "--limit", 0, 0, 1 << 30, &v[0], err) ||
        args_int(o, n, "--offset", 0, 0, 1 << 30, &v[1], err) ||
        args_int(o, n, "--max-new", 0, 1, 1 << 24, &v[2], err) ||
        args_int(o, n, "--repeats", 1, 1, 10000, &v[3], err) ||
        args_int(o, n, "--warmup", 1, 0, 1000, &v[4], err) ||
        args_int(o, n, "--threads", 0, 0, 1024, &v[5], err))
        return -1;
    ro->limit = (int)v[0], ro->offset = (int)v[1], ro->max_new = (int)v[2];
    ro->repeats = (int)v[3], ro->warmup = (int)v[4], ro->threads = (int)v[5];
    const char *seed = args_str(o, n, "--shuffle", NULL);
    if (seed) {
        char *end;
        errno = 0;
        ro->seed = strtoull(seed, &end, 10);
        if (!*seed || *end || errno || seed[0] == '-')
            return err_set(err, "--shuffle: '%s' is not a seed (an unsigned integer)", seed);
        ro->shuffle = 1;
    }
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
    return 0;
}

void runner_help(void) {
    fprintf(
        stderr,
        "how it measures (details: harness/runner.h):\n"
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
        "    with state across prompts (ouroboros warm=1) restart cold at the resume point.\n"
        "  - tok/s, speed-up, tokens/step etc. are defined in results/README.md; reports:\n"
        "    `decbench report`, CI gate: `decbench compare`\n");
    fputs(sampling_help, stderr);
    char buf[8192];
    ds_help(buf, sizeof buf);
    fprintf(stderr, "datasets:\n%s", buf);
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
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (stat(dir, &st) != 0) {
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                return err_set(err, "cannot create folder %s for the database %s: %s", dir, path,
                               strerror(errno));
        } else if (!S_ISDIR(st.st_mode)) {
            return err_set(err, "cannot create the database %s: %s is not a folder", path, dir);
        }
        *p = c;
        if (!c) break;
    }
    return 0;
}
