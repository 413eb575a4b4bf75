/* cmd_paper.c: `decbench paper`: a paper's experiment in one command, our figures beside its.
 *
 *   decbench paper list
 *   decbench paper NAME --model FILE [--draft FILE] [--set NAME:head=DIR] [--db FILE]
 *                  [--settings PAIR|SIZE] [--chat] [--limit N] [--max-new N] [--repeats N]
 *                  [--warmup N] [--threads N] [--project-cost FILE[:RUN]]
 *                  [--format md|csv|json|latex] [--plot DIR] [--fresh] [--dry-run]
 *
 * Decisions (also in --help and README, "Reproducing the papers"):
 *   - A recipe (harness/paper_recipes.c) is a list of parts; each part is ONE `decbench run`,
 *     written as its argument vector and parsed by run's own option table (runner_options), so
 *     a part measures exactly what the printed `decbench run ...` command measures, and that
 *     command is what the run records (--dry-run prints them without measuring).
 *   - Settings: the model pair (Ouroboros Table 7) or size (lookahead, Spec-Bench) closest to
 *     the target (paper_match.c), or --settings; the output says which and why.
 *   - Parts already measured are reused: a part whose recorded command is this one's and whose
 *     run is complete (and whose model files are the same) is not measured again; an
 *     interrupted one is resumed. So repeating the command after Ctrl-C continues, and after a
 *     complete run prints the table again at once. --fresh measures every part anew.
 *   - Learned drafters (Spec-Bench's EAGLE, EAGLE2, Medusa) draft with heads trained for the
 *     target, which only the user can name: --set eagle:head=DIR --set medusa:head=DIR (tune's
 *     option, parsed by the same code), appended to every spec of that decoder. --set may not
 *     change a setting the recipe takes from the reference (refused: the row would no longer
 *     be the paper's method). Without a head those rows are not run and one note names them;
 *     the table keeps them, with the paper's figures alone.
 *   - --limit and --max-new reduce the work (the tests, a first look); the output then says
 *     REDUCED: the figures are not the paper's workload.
 *   - What carries across hardware and what does not is printed above every table: tokens per
 *     step, mean accepted tokens, tau, acceptance and rows per step compare with the paper's
 *     directly; tok/s and speed-up are this machine's, and --project-cost prices our passes
 *     with the cost curve of a model of the paper's size (labelled projected).
 *   - What differs from the paper is printed with every table, one note per difference: the
 *     hardware, the models, the data drawn, and each reference implementation's settings or
 *     details decbench does not copy (paper_recipes.c, differences[]); in LaTeX, whose notes are
 *     comments, the caption carries them, so a pasted table says it is not the paper's.
 *   - Exit status: 0, 1 (a run failed, or outputs differ from greedy), 2 usage, 130 interrupted
 *     (repeat the command to resume). stdout: the table (or --dry-run's commands); progress on
 *     stderr. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "harness/commands.h"
#include "harness/paper.h"
#include "harness/runner.h"
#include "results/plot/plot.h"
#include "results/report/cost.h"
#include "results/report/report.h"
#include "util/err.h"

enum {
    P_MODEL,
    P_DRAFT,
    P_SET,
    P_TOKENIZER,
    P_DB,
    P_SETTINGS,
    P_CHAT,
    P_LIMIT,
    P_MAX_NEW,
    P_CUT_LONG,
    P_REPEATS,
    P_WARMUP,
    P_THREADS,
    P_KERNELS,
    P_KV,
    P_CTX,
    P_DATA_DIR,
    P_PROJECT,
    P_FORMAT,
    P_PLOT,
    P_FRESH,
    P_DRY,
    P_HELP,
    P_COUNT
};

#define MAX_ARGS 160

/* One part of the recipe as it will run. */
typedef struct {
    const paper_part *part;
    const paper_setting *setting;       /* Table 7 row (PAPER_BY_PAIR), or NULL */
    const paper_lade_config *config;    /* the size's configuration (PAPER_BY_SIZE), or NULL */
    const char *key;                    /* the pair or size the paper's figures are looked up by */
    char why[320];                      /* which settings and why */
    int n_dec, dec[PAPER_MAX_DECODERS]; /* the decoders run (indexes into part->dec) */
    char *spec[PAPER_MAX_DECODERS];     /* their specs as built (paper_spec) */
    char *canon[PAPER_MAX_DECODERS];    /* their canonical specs (after runner_specs) */
    char *argv[MAX_ARGS];               /* `decbench run ...` (malloc'd strings) */
    int argc;
    char *command;                       /* the recorded, shell-quoted command line */
    char *datasets[RUNNER_MAX_DATASETS]; /* the datasets' canonical names, after the run */
    int n_datasets;
    int64_t run_id;
    int skipped_draft; /* decoders left out for want of --draft */
    /* decoders left out for want of a head (--set NAME:head=DIR): their rows show the paper's
     * figures alone */
    unsigned char no_head[PAPER_MAX_DECODERS];
} part_plan;

typedef struct {
    const paper_recipe *rc;
    const args_opt *o;
    paper_model_info model;
    part_plan parts[PAPER_MAX_PARTS];
    int n_parts;
    int reduced, fresh, chat_missing;
    long mismatches;
} paper_ctx;

static const args_opt options[P_COUNT] = {
    [P_MODEL] = {"--model", "-m", 1, "target model (llama2.c .bin or GGUF), required", "FILE"},
    [P_DRAFT] = {"--draft", NULL, 1,
                 "draft model (speculative, Ouroboros; required by recipes that only draft)",
                 "FILE"},
    [P_SET] = {"--set", NULL, 1,
               "parameters for every spec of decoder NAME: the target's heads, --set "
               "eagle:head=DIR --set medusa:head=DIR (repeatable, one per decoder; without a "
               "head, those rows are not run)",
               "NAME:KEY=V,..."},
    [P_TOKENIZER] = {"--tokenizer", "-z", 1, "tokenizer (default: the model's own)", "FILE"},
    [P_DB] = {"--db", NULL, 1, "results database (default results/decbench.db)", "FILE"},
    [P_SETTINGS] = {"--settings", NULL, 1,
                    "the paper's pair or size whose settings and figures to use: yi, deepseek, "
                    "codellama, llama2 (Ouroboros Table 7) or 7b, 13b, 33b (lookahead, "
                    "Spec-Bench); default: the closest to --model",
                    "KEY"},
    [P_CHAT] = {"--chat", NULL, 0,
                "use the papers' chat-model prompts where they had one (ouroboros-chat)", NULL},
    [P_LIMIT] = {"--limit", NULL, 1,
                 "at most N entries per dataset (reduced run: not the paper's workload)", "N"},
    [P_MAX_NEW] = {"--max-new", "-n", 1,
                   "N new tokens per prompt instead of the paper's limits (reduced run)", "N"},
    [P_CUT_LONG] = {"--cut-long", NULL, 0,
                    "cut prompts longer than the model's context allows, as `run --cut-long` "
                    "(models with a short context, such as the TinyStories stand-ins; reduced "
                    "run)",
                    NULL},
    [P_REPEATS] = {"--repeats", "-r", 1, "measured passes (default: the paper's, else 1)", "N"},
    [P_WARMUP] = {"--warmup", NULL, 1,
                  "warm-up generations per decoder (default: the paper's, "
                  "else 1)",
                  "N"},
    [P_THREADS] = {"--threads", "-t", 1, "threads (default: one per CPU of the affinity mask)",
                   "N"},
    [P_KERNELS] = {"--kernels", NULL, 1, "as `run`: " KERNELS_HELP, KERNELS_METAVAR},
    [P_KV] = {"--kv-type", NULL, 1, "as `run`: " KV_TYPE_HELP, KV_TYPE_METAVAR},
    [P_CTX] = {"--ctx", NULL, 1, "context in tokens, as `run`", "N"},
    [P_DATA_DIR] = {"--data-dir", NULL, 1, "datasets folder, as `run`", "DIR"},
    [P_PROJECT] = {"--project-cost", NULL, 1,
                   "projected tok/s and speed-up with this cost curve (a CSV or a database of "
                   "`decbench cost` on a model of the paper's size)",
                   "FILE[:RUN]"},
    [P_FORMAT] = {"--format", "-f", 1, "md (default), csv, json or latex", "FORMAT"},
    [P_PLOT] = {"--plot", NULL, 1,
                "also draw the table as a figure into DIR (paper.tsv, .png, .svg): its rows as "
                "bars grouped as the table groups them, in its speed-up (else per-step) figure",
                "DIR"},
    [P_FRESH] = {"--fresh", NULL, 0,
                 "measure every part again (default: reuse the runs of the same command)", NULL},
    [P_DRY] = {"--dry-run", NULL, 0, "print the `decbench run` commands of the recipe and stop",
               NULL},
    [P_HELP] = {"--help", "-h", 0, "this help", NULL},
};

static void list_recipes(FILE *f) {
    for (int i = 0; i < paper_recipe_count(); i++) {
        const paper_recipe *r = paper_recipe_at(i);
        fprintf(f, "  %-14s %s\n  %-14s   (%s%s)\n", r->name, r->title, "", r->source,
                r->needs_draft ? "; needs --draft" : "");
    }
}

static void usage(const args_opt *o) {
    args_usage("decbench paper list | decbench paper NAME --model FILE [--draft FILE] [options]", o,
               P_COUNT);
    printf("\nrecipes:\n");
    list_recipes(stdout);
    printf("\nEach part of a recipe is one `decbench run` (--dry-run prints them); parts already\n"
           "in the database with the same command are reused, interrupted ones resumed.\n"
           "--plot DIR draws the table too: its rows as bars, grouped as its groups.\n"
           "Tokens/step, mean accepted tokens, tau, accept %% and rows/step compare with the "
           "paper's\ndirectly; tok/s and speed-up are this machine's (--project-cost: projected "
           "onto a model\nof the paper's size). Every table lists what differs from the paper "
           "(hardware, models,\ndata, the reference implementations' settings); LaTeX puts it "
           "in the caption.\nREADME.md, \"Reproducing the papers\", has the commands for the "
           "papers' models.\n");
}

/* ---- the plan ----------------------------------------------------------------------------- */

static int needs_draft(paper_alg a) {
    return a == PAPER_SPEC || a == PAPER_OUROBOROS;
}

static int add_arg(part_plan *p, const char *s, char *err) {
    if (p->argc + 1 >= MAX_ARGS) return err_set(err, "too many arguments");
    if (!(p->argv[p->argc] = strdup(s))) return err_set(err, "out of memory");
    p->argc++;
    return 0;
}

static int add_opt(part_plan *p, const char *name, const char *value, char *err) {
    return value ? add_arg(p, name, err) || add_arg(p, value, err) : 0;
}

static int add_num(part_plan *p, const char *name, long v, char *err) {
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    return add_opt(p, name, b, err);
}

/* The --settings key as a pair or a size: its canonical key, or NULL. */
static const char *settings_key(const char *s, int sizes) {
    int n;
    const paper_model *m = sizes ? paper_sizes(&n) : paper_pairs(&n);
    for (int i = 0; s && i < n; i++)
        if (!strcasecmp(s, m[i].key) || !strcasecmp(s, m[i].title)) return m[i].key;
    return NULL;
}

static const char *size_title(const char *key) {
    int n;
    const paper_model *m = paper_sizes(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(m[i].key, key)) return m[i].title;
    return key;
}

/* Which settings each part takes (paper.h, paper_match.c). */
static int choose_settings(paper_ctx *c, part_plan *p, const char *settings, char *err) {
    const paper_recipe *rc = c->rc;
    const paper_part *pt = p->part;
    if (rc->match == PAPER_FIXED) {
        if (settings)
            return err_set(err, "--settings: %s runs the paper's own settings whatever the model",
                           rc->name);
        p->key = rc->fixed_key;
        snprintf(p->why, sizeof p->why, "the paper's own settings for this experiment");
        return 0;
    }
    if (rc->match == PAPER_BY_SIZE) {
        const char *size = settings ? settings_key(settings, 1) : NULL;
        if (settings && !size)
            return err_set(err, "--settings %s: %s takes a size: 7b, 13b or 33b", settings,
                           rc->name);
        if (size)
            snprintf(p->why, sizeof p->why, "%s (--settings)", size_title(size));
        else
            snprintf(p->why, sizeof p->why, "%s (the size nearest the model's %.3g parameters)",
                     size_title(size = paper_size_for(c->model.params)), c->model.params);
        p->key = size;
        p->config = paper_lade_config_find(size);
        return 0;
    }
    const char *pair = settings ? settings_key(settings, 0) : NULL;
    if (settings && !pair)
        return err_set(err,
                       "--settings %s: %s takes a model pair: yi, deepseek, codellama or llama2",
                       settings, rc->name);
    p->setting = paper_pair_for(pt->task, pair ? pair : c->model.family, p->why, sizeof p->why);
    if (!p->setting) return err_set(err, "%s: no Table 7 row for task %s", rc->name, pt->task);
    if (pair && strcmp(p->setting->pair, pair) == 0) {
        size_t len = strlen(p->why);
        snprintf(p->why + len, sizeof p->why - len, " (--settings)");
    }
    p->key = p->setting->pair;
    return 0;
}

/* Appends the --set parameters of decoder `head` to spec. They may not change what the recipe
 * takes from the reference implementation: a usage error names the setting. */
static int add_set(const paper_recipe *rc, const paper_decoder *d, char *spec, size_t n,
                   const char *head, const char *extra, char *err) {
    size_t len = strlen(spec);
    int w = snprintf(spec + len, n - len, "%c%s", strchr(spec, ':') ? ',' : ':', extra);
    if (w < 0 || (size_t)w >= n - len) return err_set(err, "--set %s: too long", head);
    char dep[256], why[ERR_LEN];
    if (paper_spec_departures(rc, d, spec, dep, sizeof dep, why))
        return err_set(err, "--set %s:%s: %s", head, extra, why);
    if (dep[0])
        return err_set(err,
                       "--set %s:%s changes %s, which %s runs as the paper's reference does (%s); "
                       "--set gives what the recipe leaves to the user, such as head=DIR",
                       head, extra, dep, rc->name, paper_reference_of(rc, d->alg)->settings);
    return 0;
}

/* The `decbench run` argument vector of one part. */
static int plan_part(paper_ctx *c, part_plan *p, char *err) {
    const args_opt *o = c->o;
    const paper_part *pt = p->part;
    const char *draft = args_str(o, P_COUNT, "--draft", NULL);
    for (int i = 0; i < PAPER_MAX_DECODERS && pt->dec[i].alg != PAPER_END; i++) {
        if (needs_draft(pt->dec[i].alg) && !draft) {
            p->skipped_draft++;
            continue;
        }
        char spec[1024];
        if (paper_spec(&pt->dec[i], p->setting, p->config, spec, sizeof spec, err)) return -1;
        const char *head = paper_head_decoder(pt->dec[i].alg);
        if (head) {
            const args_opt *sets = args_get(o, P_COUNT, "--set");
            const char *extra = cmd_set_of(sets->values, sets->count, head);
            if (!extra) {
                p->no_head[i] = 1;
                continue;
            }
            if (add_set(c->rc, &pt->dec[i], spec, sizeof spec, head, extra, err)) return -1;
        }
        if (!(p->spec[p->n_dec] = strdup(spec))) return err_set(err, "out of memory");
        p->dec[p->n_dec++] = i;
    }
    long limit, max_new, repeats, warmup;
    if (args_int(o, P_COUNT, "--limit", 0, 1, 1 << 30, &limit, err) ||
        args_int(o, P_COUNT, "--max-new", 0, 1, 1 << 24, &max_new, err) ||
        args_int(o, P_COUNT, "--repeats", c->rc->repeats, 1, 10000, &repeats, err) ||
        args_int(o, P_COUNT, "--warmup", c->rc->warmup, 0, 1000, &warmup, err))
        return -1;
    long entries = pt->entries;
    if (limit && (!entries || limit < entries)) entries = limit, c->reduced = 1;
    int cut_long = args_flag(o, P_COUNT, "--cut-long");
    if (max_new || cut_long) c->reduced = 1;
    const char *tmpl = pt->tmpl;
    if (args_flag(o, P_COUNT, "--chat")) {
        if (pt->chat)
            tmpl = pt->chat;
        else
            c->chat_missing = 1;
    }
    char label[128];
    snprintf(label, sizeof label, "paper %s/%s", c->rc->name, pt->name);
    if (add_arg(p, "decbench", err) || add_arg(p, "run", err) ||
        add_opt(p, "--model", args_str(o, P_COUNT, "--model", NULL), err) ||
        add_opt(p, "--draft", draft, err) ||
        add_opt(p, "--tokenizer", args_str(o, P_COUNT, "--tokenizer", NULL), err) ||
        add_opt(p, "--dataset", pt->datasets, err) || add_opt(p, "--template", tmpl, err) ||
        (entries && add_num(p, "--limit", entries, err)) ||
        (pt->seeded && add_num(p, "--shuffle", PAPER_SEED, err)) ||
        /* a part of max_new 0 keeps each dataset's own limit */
        ((max_new || pt->max_new) &&
         add_num(p, "--max-new", max_new ? max_new : pt->max_new, err)) ||
        add_opt(p, "--order", pt->order, err) || (cut_long && add_arg(p, "--cut-long", err)) ||
        (pt->turns > 1 && add_num(p, "--turns", pt->turns, err)) ||
        (repeats > 1 && add_num(p, "--repeats", repeats, err)) ||
        /* --warmup only when the paper or the user set one: run's default otherwise */
        ((args_get(o, P_COUNT, "--warmup")->count || c->rc->warmup) &&
         add_num(p, "--warmup", warmup, err)) ||
        add_opt(p, "--threads", args_str(o, P_COUNT, "--threads", NULL), err) ||
        add_opt(p, "--kernels", args_str(o, P_COUNT, "--kernels", NULL), err) ||
        add_opt(p, "--kv-type", args_str(o, P_COUNT, "--kv-type", NULL), err) ||
        add_opt(p, "--ctx", args_str(o, P_COUNT, "--ctx", NULL), err) ||
        add_opt(p, "--data-dir", args_str(o, P_COUNT, "--data-dir", NULL), err) ||
        add_opt(p, "--db", args_str(o, P_COUNT, "--db", "results/decbench.db"), err) ||
        add_opt(p, "--label", label, err))
        return -1;
    for (int i = 0; i < p->n_dec; i++)
        if (add_opt(p, "--decoder", p->spec[i], err)) return -1;
    p->argv[p->argc] = NULL;
    if (!(p->command = runner_command_line(p->argc, p->argv))) return err_set(err, "out of memory");
    return 0;
}

static void free_plan(paper_ctx *c) {
    for (int k = 0; k < c->n_parts; k++) {
        part_plan *p = &c->parts[k];
        for (int i = 0; i < p->n_dec; i++) free(p->spec[i]), free(p->canon[i]);
        for (int i = 0; i < p->argc; i++) free(p->argv[i]);
        for (int i = 0; i < p->n_datasets; i++) free(p->datasets[i]);
        free(p->command);
    }
}

/* ---- measuring ---------------------------------------------------------------------------- */

/* Canonical specs of the part's decoders, one by one (runner_specs drops duplicates). */
static int canonical_specs(runner *r, part_plan *p, char *err) {
    for (int i = 0; i < p->n_dec; i++) {
        char **canon, **shown;
        int n;
        const char *one[1] = {p->spec[i]};
        if (runner_specs(r, one, 1, 0, &canon, &shown, &n, err)) return -1;
        p->canon[i] = strdup(canon[0]);
        runner_free_specs(canon, shown, n);
        if (!p->canon[i]) return err_set(err, "out of memory");
    }
    return 0;
}

/* The part's `decbench run` options, parsed by run's own table into o (RUNNER_N_OPTS + 1
 * entries: the last is --decoder) and ro. */
static int part_options(part_plan *p, args_opt *o, runner_opts *ro, char *err) {
    runner_options(o);
    o[RUNNER_N_OPTS] = (args_opt){.name = "--decoder", .takes_value = 1, .help = ""};
    const char *pos[1];
    int n_pos;
    return args_parse(p->argc, p->argv, 2, o, RUNNER_N_OPTS + 1, pos, 0, &n_pos, err) ||
                   runner_opts_get(o, RUNNER_N_OPTS + 1, ro, err)
               ? -1
               : 0;
}

/* Measures (or reuses, or resumes) one part. RUNNER_DONE, RUNNER_INTERRUPTED or -1. */
static int run_part(paper_ctx *c, part_plan *p, char *err) {
    args_opt o[RUNNER_N_OPTS + 1];
    runner_opts ro;
    if (part_options(p, o, &ro, err)) return -1;
    runner r;
    db *d = NULL;
    char **canon = NULL, **shown = NULL;
    int n = 0, rc = -1;
    const args_opt *dopt = &o[RUNNER_N_OPTS];
    if (runner_open(&r, &ro, err)) return -1;
    /* --project-cost may be a cost run of the database the parts are stored in */
    char cost_path[4096];
    int64_t cost_run;
    const char *cost = args_str(c->o, P_COUNT, "--project-cost", NULL);
    file_io extra[1] = {{"--project-cost", NULL, FILE_IO_IN_DB, NULL}};
    if (cost && db_split_source(cost, cost_path, sizeof cost_path, &cost_run, err) == 0)
        extra[0].path = cost_path;
    if (runner_check_files(&r, extra, 1, err) ||
        runner_specs(&r, dopt->values, dopt->count, 1, &canon, &shown, &n, err) ||
        canonical_specs(&r, p, err) || runner_make_parent(ro.db_path, err) ||
        db_open(&d, ro.db_path, DB_WRITE, err))
        goto out;
    for (int i = 0; i < r.n_sets; i++)
        if (!(p->datasets[p->n_datasets++] = strdup(ds_name(r.sets[i])))) {
            err_set(err, "out of memory");
            goto out;
        }
    db_status st = DB_RUNNING;
    int found = 0;
    if (!c->fresh) {
        unsigned mask = DB_STATUS_MASK(DB_COMPLETE) | DB_STATUS_MASK(DB_INCOMPLETE) |
                        DB_STATUS_MASK(DB_RUNNING);
        if ((found = db_find_run(d, p->command, mask, &p->run_id, &st, err)) < 0) goto out;
    }
    if (found && st == DB_COMPLETE) {
        char why[ERR_LEN];
        if (runner_check_run(&r, d, p->run_id, canon, n, why) == 0) {
            fprintf(stderr,
                    "decbench paper: %s: reusing run %" PRId64 " (complete, same command; "
                    "--fresh measures again)\n",
                    p->part->name, p->run_id);
            rc = RUNNER_DONE;
            goto out;
        }
        fprintf(stderr,
                "decbench paper: %s: run %" PRId64 " is not reusable (%s): measuring anew\n",
                p->part->name, p->run_id, why);
        found = 0;
    }
    if (found) {
        fprintf(stderr, "decbench paper: %s: resuming run %" PRId64 "\n", p->part->name, p->run_id);
        if (runner_resume(&r, d, p->run_id, canon, n, err)) goto out;
    } else {
        db_run run;
        db_env env;
        runner_fill_run(&r, &run, &env, p->command);
        char *decoders = runner_join_specs(canon, n);
        run.decoders = decoders;
        int b = decoders ? db_begin_run(d, &run, &p->run_id, err) : err_set(err, "out of memory");
        free(decoders);
        if (b) goto out;
        fprintf(stderr,
                "decbench paper: %s: run %" PRId64 ": %d prompt(s) x %d decoder(s) x %d "
                "repeat(s)\n",
                p->part->name, p->run_id, r.n_prompts, n, ro.repeats);
    }
    char title[96];
    snprintf(title, sizeof title, "%s/%s", c->rc->name, p->part->name);
    runner_result res;
    int m = runner_measure(&r, d, p->run_id, canon, shown, n, title, &res, err);
    char e2[ERR_LEN];
    db_status fin;
    if (runner_finish(d, p->run_id, m, &res, 0, err, &fin, e2)) {
        if (m >= 0) snprintf(err, ERR_LEN, "%s", e2);
        goto out;
    }
    c->mismatches += res.mismatches;
    rc = m;
out:
    runner_free_specs(canon, shown, n);
    db_close(d);
    runner_close(&r);
    return rc;
}

/* ---- the table ---------------------------------------------------------------------------- */

static double paper_number(const char *s) {
    return s ? strtod(s, NULL) : NAN;
}

/* One row (group, row) of the table for the part's decoder j, run with canonical spec `spec`
 * ("" when it was not run: the paper's figures alone), over dataset ds (NULL: all). */
static void fill_row(const paper_ctx *c, const part_plan *p, int j, const char *spec,
                     const char *group, const char *ds, report_beside_row *out) {
    const paper_decoder *d = &p->part->dec[j];
    memset(out, 0, sizeof *out);
    out->group = group;
    out->row = d->row ? d->row : p->part->title;
    out->run_id = p->run_id;
    out->dataset = ds;
    out->spec = spec;
    const paper_value *v = paper_value_find(c->rc->name, p->key, out->group, out->row);
    for (int k = 0; k < REPORT_BESIDE_COLS; k++) out->paper[k] = paper_number(v ? v->v[k] : NULL);
    out->paper_text = v ? v->text : NULL;
    out->cite = v ? v->cite : NULL;
}

/* The rows in the paper's order: grouped by group, groups in order of first appearance. The
 * decoders left out for want of a head keep their rows (the paper's figures alone). */
static int build_rows(const paper_ctx *c, report_beside_row **rows, int *n, char *err) {
    int cap = 0;
    for (int k = 0; k < c->n_parts; k++)
        cap +=
            PAPER_MAX_DECODERS * (c->parts[k].part->per_dataset ? c->parts[k].n_datasets + 1 : 1);
    report_beside_row *all = calloc((size_t)cap + 1, sizeof *all);
    *rows = calloc((size_t)cap + 1, sizeof **rows);
    if (!all || !*rows) {
        free(all);
        free(*rows);
        return err_set(err, "out of memory");
    }
    int m = 0;
    for (int k = 0; k < c->n_parts; k++) {
        const part_plan *p = &c->parts[k];
        for (int j = 0; j < PAPER_MAX_DECODERS && p->part->dec[j].alg != PAPER_END; j++) {
            const char *spec = p->no_head[j] ? "" : NULL;
            for (int i = 0; i < p->n_dec && !spec; i++)
                if (p->dec[i] == j) spec = p->canon[i];
            if (!spec) continue; /* left out for want of --draft */
            const paper_decoder *d = &p->part->dec[j];
            if (!p->part->per_dataset) {
                fill_row(c, p, j, spec, d->group ? d->group : p->part->title, NULL, &all[m++]);
                continue;
            }
            for (int s = 0; s <= p->n_datasets; s++) {
                const char *ds = s < p->n_datasets ? p->datasets[s] : NULL;
                fill_row(c, p, j, spec, ds ? paper_dataset_title(ds) : p->part->title, ds,
                         &all[m++]);
            }
        }
    }
    /* stable grouping */
    *n = 0;
    for (int i = 0; i < m; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++) first = strcmp(all[j].group, all[i].group) != 0;
        if (!first) continue;
        for (int j = i; j < m; j++)
            if (!strcmp(all[j].group, all[i].group)) (*rows)[(*n)++] = all[j];
    }
    free(all);
    return 0;
}

static void settings_note(const paper_ctx *c, char *out, size_t n) {
    const paper_recipe *rc = c->rc;
    size_t len = (size_t)snprintf(out, n, "Settings: ");
    if (rc->match == PAPER_BY_PAIR)
        for (int k = 0; k < c->n_parts && len < n; k++)
            len += (size_t)snprintf(out + len, n - len, "%s%s: Table 7's %s", k ? "; " : "",
                                    c->parts[k].part->title, c->parts[k].why);
    else if (c->n_parts > 0)
        len += (size_t)snprintf(out + len, n - len, "%s", c->parts[0].why);
    if (len < n && rc->match != PAPER_FIXED)
        snprintf(out + len, n - len, ". The model: %s.", c->model.why);
    else if (len < n)
        snprintf(out + len, n - len, ".");
}

/* Whether a decoder standing for reference `ref` ran in some part. */
static int ref_ran(const paper_ctx *c, const char *ref) {
    for (int k = 0; k < c->n_parts; k++)
        for (int i = 0; i < c->parts[k].n_dec; i++) {
            const char *r = c->rc->refs[c->parts[k].part->dec[c->parts[k].dec[i]].alg];
            if (r && !strcmp(r, ref)) return 1;
        }
    return 0;
}

#define MAX_DIFFS 24

/* What this run does differently from the paper (paper.h): its hardware, its models, then every
 * listed difference of the recipe and of the references its decoders ran, one line each into
 * lines; returns how many. */
static int difference_lines(const paper_ctx *c, char (*lines)[768], int max) {
    const paper_recipe *rc = c->rc;
    const args_opt *o = c->o;
    const char *draft = args_str(o, P_COUNT, "--draft", NULL);
    int n = 0;
    snprintf(lines[n++], 768,
             "hardware: the paper measured on %s; ours ran on this machine (its CPU in the run "
             "notes)",
             rc->hardware);
    snprintf(lines[n++], 768, "models: the paper's %s; ours: target %s%s%s", rc->models,
             args_str(o, P_COUNT, "--model", "?"), draft ? ", draft " : "", draft ? draft : "");
    int n_diffs;
    const paper_difference *d = paper_differences(&n_diffs);
    for (int i = 0; i < n_diffs && n < max; i++) {
        if (!paper_difference_applies(&d[i], rc) || (d[i].ref && !ref_ran(c, d[i].ref))) continue;
        const paper_reference *ref = paper_reference_find(d[i].ref);
        snprintf(lines[n++], 768, "%s%s%s: %s", ref ? ref->title : "data", d[i].key ? ", " : "",
                 d[i].key ? d[i].key : "", d[i].text);
    }
    return n;
}

/* The one line naming the rows left out for want of a head (0 when none). */
static int no_head_line(const paper_ctx *c, char *out, size_t n) {
    size_t len = 0;
    const char *named[8] = {0};
    int n_named = 0;
    for (int k = 0; k < c->n_parts; k++) {
        const paper_part *pt = c->parts[k].part;
        for (int j = 0; j < PAPER_MAX_DECODERS && pt->dec[j].alg != PAPER_END; j++) {
            if (!c->parts[k].no_head[j]) continue;
            int seen = 0;
            for (int i = 0; i < n_named && !seen; i++) seen = !strcmp(named[i], pt->dec[j].row);
            if (seen || n_named == 8) continue;
            named[n_named++] = pt->dec[j].row;
            len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s (no --set %s:head=DIR)",
                                    len ? ", " : "Not run: ", pt->dec[j].row,
                                    paper_head_decoder(pt->dec[j].alg));
        }
    }
    if (len && len < n)
        snprintf(out + len, n - len,
                 ": heads are trained per target, so the user names them; "
                 "the rows show the paper's figures alone.");
    return len > 0;
}

static int print_table(paper_ctx *c, report_format fmt, char *err) {
    const paper_recipe *rc = c->rc;
    const args_opt *o = c->o;
    const char *notes[64];
    int n_notes = 0;
    char head[1024], settings[2048], carry[1536], reduced[512], skipped[512], chat[256];
    char no_head[512];
    char extra[16][1024], diffs[MAX_DIFFS][768], diff_notes[MAX_DIFFS][800];
    static char caption[8192];
    const char *draft = args_str(o, P_COUNT, "--draft", NULL);
    snprintf(head, sizeof head,
             "Paper: %s, measured on %s. Ours: this machine, target %s%s%s; the paper's figures "
             "are cited row by row (paper source).",
             rc->source, rc->hardware, args_str(o, P_COUNT, "--model", ""), draft ? ", draft " : "",
             draft ? draft : "");
    notes[n_notes++] = head;
    settings_note(c, settings, sizeof settings);
    notes[n_notes++] = settings;
    const char *cost = args_str(o, P_COUNT, "--project-cost", NULL);
    snprintf(carry, sizeof carry,
             "Across hardware: tokens/step, mean accepted tokens, tau, accept %% and rows/step "
             "count tokens and rows per target step: they carry across hardware and compare "
             "with the paper's directly. tok/s and speed-up do not: ours are this machine's "
             "(CPU, these models); the paper's were measured on %s. %s",
             rc->hardware,
             cost ? "Projected tok/s and speed-up price our passes with the cost curve given "
                    "(--project-cost: a model of the paper's size measured by `decbench cost`): "
                    "PROJECTED, not measured."
                  : "No projection: --project-cost FILE prices our passes with the cost curve "
                    "of a model of the paper's size (`decbench synth` its shape, `decbench "
                    "cost` it; README, \"Reproducing the papers\").");
    notes[n_notes++] = carry;
    if (c->reduced) {
        snprintf(reduced, sizeof reduced,
                 "REDUCED run (--limit %s, --max-new %s%s): fewer entries or tokens than the "
                 "paper: not its workload.",
                 args_str(o, P_COUNT, "--limit", "as the paper"),
                 args_str(o, P_COUNT, "--max-new", "as the paper"),
                 args_flag(o, P_COUNT, "--cut-long") ? ", prompts cut to the context" : "");
        notes[n_notes++] = reduced;
    }
    int skipped_n = 0;
    for (int k = 0; k < c->n_parts; k++) skipped_n += c->parts[k].skipped_draft;
    if (skipped_n) {
        snprintf(skipped, sizeof skipped,
                 "Not run: the decoders that draft with a second model (speculative, SpS, "
                 "Ouroboros): give --draft.");
        notes[n_notes++] = skipped;
    }
    if (no_head_line(c, no_head, sizeof no_head)) notes[n_notes++] = no_head;
    if (c->chat_missing) {
        snprintf(chat, sizeof chat,
                 "--chat: a task without a chat-model prompt in the paper's scripts keeps its "
                 "base prompt.");
        notes[n_notes++] = chat;
    }
    /* What differs from the paper: hardware, models, data, the references' settings. In
     * LaTeX the notes are comments, so the caption carries them too: a table pasted into a
     * paper says itself that it is not the paper's. */
    int n_diffs = difference_lines(c, diffs, MAX_DIFFS);
    size_t cap = (size_t)snprintf(caption, sizeof caption,
                                  "%s. Measured with decbench, not the paper's setup: ", rc->title);
    for (int k = 0; k < n_diffs; k++) {
        snprintf(diff_notes[k], sizeof diff_notes[k], "Differs from the paper (%s).", diffs[k]);
        notes[n_notes++] = diff_notes[k];
        if (cap < sizeof caption)
            cap += (size_t)snprintf(caption + cap, sizeof caption - cap, "%s%s", k ? "; " : "",
                                    diffs[k]);
    }
    if (cap < sizeof caption) snprintf(caption + cap, sizeof caption - cap, ".");
    /* The recipe's own notes, one per line. */
    const char *s = rc->notes;
    for (int k = 0; s && *s && k < 16; k++) {
        size_t len = strcspn(s, "\n");
        snprintf(extra[k], sizeof extra[k], "%.*s", (int)len, s);
        notes[n_notes++] = extra[k];
        s += len + (s[len] == '\n');
    }

    const char *figures[16];
    char figbuf[256];
    int n_fig = 0;
    snprintf(figbuf, sizeof figbuf, "%s", rc->figures);
    for (char *save = NULL, *t = strtok_r(figbuf, ",", &save); t && n_fig < 16;
         t = strtok_r(NULL, ",", &save))
        figures[n_fig++] = t;
    report_beside_opts bo = {.title = fmt == REPORT_LATEX ? caption : rc->title,
                             .group_header = rc->group_header,
                             .row_header = rc->row_header,
                             .figures = figures,
                             .n_figures = n_fig,
                             .cost_source = cost,
                             .notes = notes,
                             .n_notes = n_notes};
    for (int k = 0; k < PAPER_COLS && k < REPORT_BESIDE_COLS; k++) {
        bo.paper_header[k] = rc->cols[k].header;
        bo.paper_key[k] = rc->cols[k].key;
        bo.paper_fmt[k] = rc->cols[k].fmt;
    }
    report_beside_row *rows = NULL;
    int n_rows = 0;
    if (build_rows(c, &rows, &n_rows, err)) return -1;
    /* the figure draws our measurements: the rows not run (no head) have none */
    report_beside_row *ran = calloc((size_t)n_rows + 1, sizeof *ran);
    int n_ran = 0;
    for (int i = 0; ran && i < n_rows; i++)
        if (rows[i].spec[0]) ran[n_ran++] = rows[i];
    db *d;
    int rc2 = ran ? db_open(&d, args_str(o, P_COUNT, "--db", "results/decbench.db"), DB_READ, err)
                  : err_set(err, "out of memory");
    if (rc2 == 0) rc2 = report_beside(d, &bo, rows, n_rows, fmt, stdout, err);
    const char *plot = args_str(o, P_COUNT, "--plot", NULL);
    char what[FILE_PATH_MAX + 32];
    snprintf(what, sizeof what, "the figure folder %s", plot ? plot : "");
    if (rc2 == 0 && plot &&
        (runner_make_dir(plot, what, err) || report_plot_beside(d, &bo, ran, n_ran, plot, err) ||
         report_plot_render_named("paper", NULL, plot, plot, err)))
        rc2 = -1;
    else if (rc2 == 0 && plot)
        fprintf(stderr, "decbench paper: figure: %s/paper.png (+ .svg, .tsv)\n", plot);
    if (ran) db_close(d);
    free(rows);
    free(ran);
    if (rc2 == 0 && (fflush(stdout) != 0 || ferror(stdout)))
        rc2 = err_set(err, "cannot write the table to stdout");
    return rc2;
}

/* ---- the command -------------------------------------------------------------------------- */

int cmd_paper(int argc, char **argv) {
    args_opt o[P_COUNT];
    memcpy(o, options, sizeof o);
    char err[ERR_LEN];
    const char *pos[1];
    int n_pos;
    if (args_parse(argc, argv, 2, o, P_COUNT, pos, 1, &n_pos, err)) return cmd_usage("paper", err);
    if (args_flag(o, P_COUNT, "--help")) {
        usage(o);
        return 0;
    }
    if (n_pos == 0) return cmd_usage("paper", "name a recipe, or `list` (decbench paper --help)");
    if (!strcmp(pos[0], "list") || !strcmp(pos[0], "LIST")) {
        list_recipes(stdout);
        return 0;
    }
    static paper_ctx c; /* large (argument vectors); one command per process */
    memset(&c, 0, sizeof c);
    c.o = o;
    c.rc = paper_recipe_find(pos[0]);
    if (!c.rc) {
        char names[512] = "";
        for (int i = 0; i < paper_recipe_count(); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     paper_recipe_at(i)->name);
        snprintf(err, sizeof err, "no recipe '%.64s' (recipes: %s)", pos[0], names);
        return cmd_usage("paper", err);
    }
    const char *model = args_str(o, P_COUNT, "--model", NULL);
    if (!model) return cmd_usage("paper", "--model FILE is required");
    if (c.rc->needs_draft && !args_str(o, P_COUNT, "--draft", NULL)) {
        snprintf(err, sizeof err,
                 "%s measures decoders that draft with a second model: give "
                 "--draft FILE",
                 c.rc->name);
        return cmd_usage("paper", err);
    }
    const args_opt *sets = args_get(o, P_COUNT, "--set");
    if (cmd_sets_check(sets->values, sets->count, err)) return cmd_usage("paper", err);
    for (int i = 0; i < sets->count; i++) {
        int used = 0; /* the decoder is one the recipe drafts heads with */
        size_t len = strcspn(sets->values[i], ":");
        for (int k = 0; k < PAPER_MAX_PARTS && c.rc->parts[k].name; k++)
            for (int j = 0; j < PAPER_MAX_DECODERS && c.rc->parts[k].dec[j].alg != PAPER_END; j++) {
                const char *h = paper_head_decoder(c.rc->parts[k].dec[j].alg);
                used |= h && strlen(h) == len && !strncmp(h, sets->values[i], len);
            }
        if (!used) {
            snprintf(err, sizeof err,
                     "--set %.*s: %s runs no decoder with a head of that name (--set gives "
                     "eagle's and medusa's heads)",
                     (int)len, sets->values[i], c.rc->name);
            return cmd_usage("paper", err);
        }
    }
    report_format fmt = REPORT_MARKDOWN;
    const char *f = args_str(o, P_COUNT, "--format", NULL);
    if (f && (report_format_parse(f, &fmt) || fmt == REPORT_JSONL))
        return cmd_usage("paper", "--format: expected md, csv, json or latex");
    c.fresh = args_flag(o, P_COUNT, "--fresh");
    char path[4096];
    if (paper_model_read(session_find_model(model, path, sizeof path), &c.model, err))
        return cmd_fail("paper", err);
    const char *settings = args_str(o, P_COUNT, "--settings", NULL);
    int rc = 0;
    for (int k = 0; k < PAPER_MAX_PARTS && c.rc->parts[k].name; k++) {
        part_plan *p = &c.parts[c.n_parts++];
        p->part = &c.rc->parts[k];
        if (choose_settings(&c, p, settings, err)) {
            rc = cmd_usage("paper", err);
            goto done;
        }
        if (plan_part(&c, p, err)) {
            rc = strstr(err, "--") == err ? cmd_usage("paper", err) : cmd_fail("paper", err);
            goto done;
        }
    }
    char no_head[512];
    if (no_head_line(&c, no_head, sizeof no_head)) fprintf(stderr, "decbench paper: %s\n", no_head);
    if (args_flag(o, P_COUNT, "--dry-run")) {
        for (int k = 0; k < c.n_parts; k++) printf("%s\n", c.parts[k].command);
        goto done;
    }
    /* Every part's datasets are read now, and the cost curve the table is priced with:
     * a file missing for the last part, or a malformed curve, is refused before the first
     * part measures, not after hours of runs. */
    for (int k = 0; k < c.n_parts; k++) {
        args_opt po[RUNNER_N_OPTS + 1];
        runner_opts pro;
        if (part_options(&c.parts[k], po, &pro, err) || runner_check_datasets(&pro, err)) {
            rc = cmd_fail("paper", err);
            goto done;
        }
    }
    /* the figure's files may not replace an input, and are checked before hours of runs */
    const char *plot_dir = args_str(o, P_COUNT, "--plot", NULL);
    if (plot_dir) {
        char files[3][FILE_PATH_MAX + 16];
        file_io io[4] = {{"--plot", plot_dir, FILE_IO_OUT_DIR, "figure"}};
        static const char *const ext[3] = {"tsv", "png", "svg"};
        for (int k = 0; k < 3; k++) {
            snprintf(files[k], sizeof files[k], "%s/paper.%s", plot_dir, ext[k]);
            io[1 + k] = (file_io){"--plot", files[k], FILE_IO_OUT, NULL};
        }
        if (file_check_io(io, 4, err)) {
            rc = cmd_fail("paper", err);
            goto done;
        }
    }
    const char *cost = args_str(o, P_COUNT, "--project-cost", NULL);
    if (cost) {
        cost_curve *curve;
        if (cost_curve_load(&curve, cost, "--project-cost", err)) {
            rc = cmd_fail("paper", err);
            goto done;
        }
        cost_curve_free(curve);
    }
    fprintf(stderr, "decbench paper: %s: %d run(s); the model: %s\n", c.rc->name, c.n_parts,
            c.model.why);
    runner_catch_signals();
    for (int k = 0; k < c.n_parts; k++) {
        part_plan *p = &c.parts[k];
        fprintf(stderr, "decbench paper: %s: %s\n", p->part->name, p->command);
        int m = run_part(&c, p, err);
        if (m < 0) {
            cmd_fail("paper", err);
            if (p->run_id)
                fprintf(stderr,
                        "decbench paper: run %" PRId64 " is incomplete; repeat the same "
                        "command to resume it\n",
                        p->run_id);
            rc = 1;
            goto done;
        }
        if (m == RUNNER_INTERRUPTED) {
            fprintf(stderr,
                    "decbench paper: interrupted: run %" PRId64 " is incomplete; repeat "
                    "the same command to resume\n",
                    p->run_id);
            rc = 130;
            goto done;
        }
    }
    if (print_table(&c, fmt, err)) {
        rc = cmd_fail("paper", err);
        goto done;
    }
    if (c.mismatches) {
        fprintf(stderr,
                "decbench paper: %ld sample(s) DIFFER from greedy (see MISMATCH above): "
                "the runs are marked failed\n",
                c.mismatches);
        rc = 1;
    }
done:
    free_plan(&c);
    return rc;
}
