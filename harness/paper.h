/* paper.h: the papers' experiments as recipes (`decbench paper`): what each ran (datasets,
 * entries, seed, new-token limits, order, turns), which decoders with which settings per model
 * pair or size, and the figures the paper printed, each with the table or figure it comes from.
 *
 * The recipes, the settings tables (Ouroboros Table 7, lookahead's A100 configurations) and the
 * papers' figures are ONE table each in harness/paper_recipes.c; paper_match.c decides which
 * pair or size of a paper is closest to a given model; cmd_paper.c turns a recipe into
 * `decbench run` argument vectors, measures them and prints ours beside the paper's.
 *
 * Parameters are stored as the PAPERS print them. paper_spec() is the one place they become
 * decbench specs, and where names differ it says so:
 *   - Ouroboros' beta: the reference's scripts run every Table 7 row with lookahead_level =
 *     the printed beta - 1 (thunlp/Ouroboros@7dac65b benchmark/test_*.py, their defaults and
 *     usage lines, all twelve rows; README: gamma 12, W 20, level 7 for Table 7's 12/20/8), and
 *     a phrase holds lookahead_level - 1 tokens after its key (cache_engine.py,
 *     add_extra_ngram): decbench beta (tokens after the key) = printed beta - 2. Every
 *     Ouroboros spec also gets trim=1: the reference cuts each draft to gamma
 *     (kv_cache_model.py:28, max_new_tokens = gamma; modeling_llama.py:2121-2124);
 *   - Table 7's lookahead "beta (n-gram level)" is LADE's LEVEL = decbench lookahead N (the
 *     n-gram size, key token included), and Ouroboros runs LADE with GUESS_SET_SIZE = W, so G = W;
 *     every lookahead of a recipe is LADE's (Ouroboros and Spec-Bench ran LADE's code), so it
 *     gets preset=lade (decoders/lookahead.c);
 *   - Spec-Bench's PLD (draft_matching_window_size 3, draft_num_candidate_tokens 10) is
 *     pld:ngram=3,k=10 with its candidate rule, match=first,miss=100; its SpS (Hugging Face
 *     4.37.1 assisted generation, 5 assistant tokens, +2 after a draft accepted whole, else -1)
 *     is spec:gamma=5,adapt=1 (the recipe's rows say so in `extra`);
 *   - Spec-Bench's EAGLE (EAGLE-1's tree choices mc_sim_7b_63) is eagle:mode=static; its EAGLE2
 *     (total_token 60, depth 5, top_k 10: the reference's total_token counts the current token,
 *     its depth the expansions after the first level, as decbench's) is
 *     eagle:mode=dynamic,total_tokens=60,depth=5,top_k=10; its Medusa (medusa_choices
 *     mc_sim_7b_63, 4 heads, greedy posterior at T = 0) is medusa:tree=mc_sim_7b_63. The head
 *     is the user's (paper_head_decoder).
 *
 * What the reference implementations run, in decbench's parameters, is one more table
 * (references[], paper_reference); what a recipe runs differently from it, and from the paper's
 * hardware, models and data, is another (differences[], paper_difference). tests/test_paper.c
 * fails when a recipe's spec differs from its reference's settings without a listed difference,
 * and `decbench paper` prints every difference with the table (markdown notes; the LaTeX
 * caption). */
#ifndef HARNESS_PAPER_H
#define HARNESS_PAPER_H

#include <stddef.h>

#define PAPER_MAX_PARTS 6
#define PAPER_MAX_DECODERS 32
#define PAPER_COLS 3

/* The seed of the papers' "sampled entries" (Ouroboros samples 100 entries of GSM8K, CNN/DM and
 * WMT16 and 20 of each dataset for Table 4 without publishing which; its scripts load a
 * prepared subset from disk). Any seed reproduces itself; this one is recorded with every run. */
#define PAPER_SEED 13720

/* PAPER_END (0) ends a part's decoder list. */
typedef enum {
    PAPER_END = 0,
    PAPER_GREEDY,
    PAPER_SPEC,
    PAPER_LOOKAHEAD,
    PAPER_OUROBOROS,
    PAPER_PLD,
    PAPER_EAGLE,  /* EAGLE-1: the static tree */
    PAPER_EAGLE2, /* EAGLE-2: the dynamic tree */
    PAPER_MEDUSA,
    PAPER_N_ALGS
} paper_alg;

/* How a recipe picks its settings and the paper's figures for the model it is given. */
typedef enum {
    PAPER_BY_PAIR, /* Ouroboros Table 7: the model pair closest to the target (paper_match.c) */
    PAPER_BY_SIZE, /* the paper's model size nearest the target's parameter count (7B/13B/33B) */
    PAPER_FIXED    /* one pair only: the paper ran this experiment on it (recipe.fixed_key) */
} paper_match_kind;

/* A decoder as the paper names it. Numbers in the paper's meaning; 0: the value of the settings
 * row chosen for the model (Table 7's row of the part's task, or the size's configuration). */
typedef struct {
    const char *row;   /* the paper's row label ("Ouroboros †"); NULL: the part's title */
    const char *group; /* the output group; NULL: the part's title */
    paper_alg alg;
    int gamma, W, N, G, beta, K;    /* beta: Ouroboros' (counts the key token); N: lookahead's */
    int ngram, k;                   /* PLD */
    int total_tokens, depth, top_k; /* EAGLE-2's tree (the reference's names) */
    const char *extra; /* decbench parameters appended as they are ("warm=0", "suffix=0") */
    /* parameters the experiment varies on purpose (Table 3's switches: "suffix,inspire,refine"),
     * not held to the reference's settings; NULL: none */
    const char *varies;
} paper_decoder;

/* One `decbench run` of a recipe. */
typedef struct {
    const char *name;     /* the part's name in run labels ("gsm8k"); NULL ends the list */
    const char *title;    /* as the paper prints it ("GSM8K", "CN=4") */
    const char *task;     /* the Table 7 task of its settings; NULL: none */
    const char *datasets; /* the --dataset value */
    const char *tmpl;     /* --template; NULL: each dataset's own (the paper's, datasets/) */
    const char *chat;     /* --template with `paper --chat` (the paper's chat-model prompt) */
    int entries;          /* --limit per dataset (0: all) */
    int seeded;           /* 1: --shuffle PAPER_SEED before taking the entries */
    int max_new;          /* --max-new (0: each dataset's own, the paper's) */
    const char *order;    /* --order (NULL: grouped) */
    int turns;            /* --turns (0: the first turn) */
    int per_dataset;      /* rows per dataset of the part (and an "Overall" group), not one */
    paper_decoder dec[PAPER_MAX_DECODERS];
} paper_part;

typedef struct {
    const char *header, *key, *fmt; /* "paper tok/s", "paper_tps", "%.2f"; NULL header: none */
} paper_col;

typedef struct {
    const char *name, *title;
    const char *source; /* paper and table: "Ouroboros (Zhao et al., arXiv 2402.13720), Table 2" */
    const char *hardware; /* where the paper measured: "A100 GPUs, fp16" */
    paper_match_kind match;
    const char *fixed_key; /* PAPER_FIXED: the pair */
    int needs_draft;       /* 1: every decoder but greedy drafts (refused without --draft) */
    int repeats, warmup;   /* as the paper ran it (0: run's defaults) */
    const char *group_header, *row_header;
    const char *figures; /* our figures shown (keys of `decbench counters`), comma-separated */
    paper_col cols[PAPER_COLS];
    const char *notes; /* deviations and readings, one per line */
    paper_part parts[PAPER_MAX_PARTS];
    const char *models; /* the paper's models for this experiment ("Yi-34b/6b, Llama-2 70b/7b") */
    /* the reference implementation each algorithm of the recipe stands for (a name in
     * references[]); NULL for greedy */
    const char *refs[PAPER_N_ALGS];
} paper_recipe;

/* A reference implementation's configuration in decbench's parameters: what a spec must say
 * to run it ("refill=lade,full_bonus=0,..."), each setting cited to the file and line it
 * follows. */
typedef struct {
    const char *name;     /* "lade" */
    const char *title;    /* "LADE (hao-ai-lab/LookaheadDecoding@eed010d)" */
    paper_alg alg;        /* which decbench decoder stands for it */
    const char *settings; /* key=value,... in the decoder's parameters */
    const char *cite;     /* where each setting comes from */
} paper_reference;

/* Something a recipe runs differently from the paper: a setting (key: the decbench parameter
 * whose value differs from the reference's), or what has no parameter (key NULL: an
 * algorithmic detail of the reference decbench does not copy, the data drawn). recipe NULL:
 * every recipe that runs `ref`; ref NULL: not about an implementation (data, prompts). */
typedef struct {
    const char *recipe, *ref, *key;
    const char *text; /* ours against theirs, and why */
} paper_difference;

/* Ouroboros Table 7: the hyperparameters per task and model pair, as printed. */
typedef struct {
    const char *task, *pair;
    int spec_gamma, la_W, la_beta, ou_gamma, ou_W, ou_beta, ou_K;
} paper_setting;

/* A model pair or size of a paper: key ("llama2", "7b"), title ("Llama-2 70b/7b"). */
typedef struct {
    const char *key, *title;
    double params; /* PAPER_BY_SIZE: the target's parameter count */
} paper_model;

/* lookahead decoding's good configurations on A100 (blog Table 1), per model size. */
typedef struct {
    const char *size;
    int W, N, G;
    int flops; /* the blog's extra FLOPs per step, in multiples of one token's */
} paper_lade_config;

/* A figure the paper printed, for the row (recipe, key, group, row). Values are the paper's
 * digits as text (NULL: it prints none), one per recipe column; text stands for a value the
 * paper gives only in words or in a figure; cite names the table or figure. */
typedef struct {
    const char *recipe, *key, *group, *row;
    const char *v[PAPER_COLS];
    const char *text, *cite;
} paper_value;

/* ---- the tables (paper_recipes.c) ---------------------------------------------------------- */

int paper_recipe_count(void);
const paper_recipe *paper_recipe_at(int i);
const paper_recipe *paper_recipe_find(const char *name); /* NULL if none */

const paper_model *paper_pairs(int *n); /* Ouroboros' model pairs */
const paper_model *paper_sizes(int *n); /* lookahead's and Spec-Bench's model sizes */
/* Table 7's row for (task, pair); NULL if the paper has none. */
const paper_setting *paper_setting_find(const char *task, const char *pair);
const paper_lade_config *paper_lade_config_find(const char *size);
/* The paper's figure for a row; NULL if it gives none. key NULL in the table matches any. */
const paper_value *paper_value_find(const char *recipe, const char *key, const char *group,
                                    const char *row);
/* The whole figures table (for its consistency test). */
const paper_value *paper_values(int *n);
/* The display title of a dataset of a per_dataset part ("Translation"), or the name itself. */
const char *paper_dataset_title(const char *dataset);

/* The decoder whose head a decoder of algorithm a drafts with ("eagle", "medusa"), or NULL.
 * Heads are per target model, so the user names them (`paper --set eagle:head=DIR`, the same
 * parameters appended to every spec of that decoder); without one its rows are not run. */
const char *paper_head_decoder(paper_alg a);

/* The reference implementations and the listed differences (paper_recipes.c). */
const paper_reference *paper_references(int *n);
const paper_reference *paper_reference_find(const char *name); /* NULL if none */
/* The reference recipe rc's decoder of algorithm alg stands for; NULL: none (greedy). */
const paper_reference *paper_reference_of(const paper_recipe *rc, paper_alg alg);
const paper_difference *paper_differences(int *n);
/* Whether the difference applies to recipe rc: its own, or its reference's when rc runs it. */
int paper_difference_applies(const paper_difference *x, const paper_recipe *rc);
/* Whether the decbench spec runs setting key=value: 1 when it does not (another value, or the
 * value would contradict a preset of the spec), 0 when it does, -1 with a message when the spec
 * itself does not parse. */
int paper_setting_differs(const char *spec, const char *key, const char *value, char *err);
/* The reference settings spec does not run, for decoder d of recipe rc: "key" names joined by
 * ',' into out (empty: none), those d varies on purpose left out. -1 with a message when the
 * spec does not parse. */
int paper_spec_departures(const paper_recipe *rc, const paper_decoder *d, const char *spec,
                          char *out, size_t n, char *err);

/* The decbench spec of d with the settings s (Table 7 row; may be NULL) or c (lookahead
 * configuration; may be NULL): the name mapping of the header comment. -1 with a message when a
 * parameter it needs is neither in d nor in the settings. */
int paper_spec(const paper_decoder *d, const paper_setting *s, const paper_lade_config *c,
               char *out, size_t n, char *err);

/* ---- which pair or size (paper_match.c) ----------------------------------------------------- */

/* What a model is, as far as choosing a paper's settings goes. */
typedef struct {
    char name[256];     /* GGUF general.name (or basename), "" for a llama2.c checkpoint */
    char arch[64];      /* general.architecture; "llama" for llama2.c checkpoints */
    double params;      /* parameter count */
    const char *family; /* "yi", "deepseek", "codellama", "llama2", "vicuna" or NULL (unknown) */
    char why[512];      /* how the family was decided, for the output */
} paper_model_info;

/* Reads the model's metadata (GGUF general.name, general.basename, general.architecture; the
 * configuration's size) and decides its family: paper_match.c says how. */
int paper_model_read(const char *path, paper_model_info *m, char *err);
/* The family of a model by its name and architecture (NULL: none). */
const char *paper_family_of(const char *name, const char *arch);

/* The Table 7 pair for task closest to the family (its chain of stand-ins, else the paper's
 * first pair for the task); *why says which and why. NULL when the task has no row at all. */
const paper_setting *paper_pair_for(const char *task, const char *family, char *why, size_t n);
/* The size ("7b", "13b", "33b") nearest params on a log scale. */
const char *paper_size_for(double params);

#endif
