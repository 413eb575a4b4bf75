/* test_paper.c: the spec of harness/paper.h: how a model is matched to a paper's pair or size,
 * how the papers' parameter names become decbench specs (Ouroboros' printed beta runs as
 * level beta - 1, phrases of beta - 2 tokens, drafts cut to gamma; every lookahead is LADE's
 * preset), and the recipe table's consistency: every spec of every recipe, with every pair's
 * and size's settings, is a decoder decbench creates on the real models, every figure of the
 * papers' table belongs to a row some recipe prints, and every spec runs its reference
 * implementation's settings (references[]) except where a difference is listed
 * (differences[]), which in turn all apply somewhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/paper.h"
#include "model/loader/model_file.h"
#include "model/model.h"
#include "tests/testutil.h"
#include "util/err.h"

static void family(const char *name, const char *arch, const char *want) {
    const char *got = paper_family_of(name, arch);
    CHECK_MSG(want ? got && !strcmp(got, want) : got == NULL, "'%s' (%s): got %s, want %s", name,
              arch, got ? got : "none", want ? want : "none");
}

static void pair(const char *task, const char *fam, const char *want) {
    char why[256];
    const paper_setting *s = paper_pair_for(task, fam, why, sizeof why);
    CHECK_MSG(s && !strcmp(s->pair, want), "%s / %s: got %s, want %s", task, fam ? fam : "none",
              s ? s->pair : "none", want);
    CHECK(why[0] != '\0');
}

static void spec_of(const paper_decoder *d, const paper_setting *s, const paper_lade_config *c,
                    const char *want) {
    char out[256], err[ERR_LEN] = "";
    CHECK_MSG(paper_spec(d, s, c, out, sizeof out, err) == 0, "%s", err);
    CHECK_MSG(!strcmp(out, want), "got %s, want %s", out, want);
}

/* The (group, row) pairs a recipe prints (cmd_paper.c's build_rows), each checked against
 * the figures table. */
static int recipe_has_row(const paper_recipe *rc, const char *group, const char *row) {
    for (int k = 0; k < PAPER_MAX_PARTS && rc->parts[k].name; k++) {
        const paper_part *p = &rc->parts[k];
        for (int i = 0; i < PAPER_MAX_DECODERS && p->dec[i].alg != PAPER_END; i++) {
            const paper_decoder *d = &p->dec[i];
            const char *r = d->row ? d->row : p->title;
            if (row && strcmp(r, row)) continue;
            if (!group) return 1;
            if (!p->per_dataset) {
                if (!strcmp(d->group ? d->group : p->title, group)) return 1;
                continue;
            }
            if (!strcmp(p->title, group)) return 1;
            char ds[512];
            snprintf(ds, sizeof ds, "%s", p->datasets);
            for (char *save = NULL, *t = strtok_r(ds, ",", &save); t;
                 t = strtok_r(NULL, ",", &save))
                if (!strcmp(paper_dataset_title(t), group)) return 1;
        }
    }
    return 0;
}

/* A recipe's spec as `decbench paper` runs it on stories260K: a head decoder's spec with the
 * head trained for that model (--set NAME:head=DIR). */
static void with_head(const paper_decoder *d, char *spec, size_t n) {
    const char *head = paper_head_decoder(d->alg);
    size_t len = strlen(spec);
    if (head)
        snprintf(spec + len, n - len, ",head=%s/tests/data/heads/stories260K-%s",
                 DECBENCH_SOURCE_DIR, head);
}

/* Every spec of every recipe under every pair's and size's settings creates a decoder. */
static void all_specs_valid(void) {
    char err[ERR_LEN];
    model *t = NULL, *d = NULL;
    CHECK_MSG(model_open(&t, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&d, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (!t || !d) return;
    dec_env env = {.target = t, .draft = d, .kernels = KERN_EXACT};
    int n_pairs, n_sizes, checked = 0;
    const paper_model *pairs = paper_pairs(&n_pairs), *sizes = paper_sizes(&n_sizes);
    for (int r = 0; r < paper_recipe_count(); r++) {
        const paper_recipe *rc = paper_recipe_at(r);
        CHECK(paper_recipe_find(rc->name) == rc);
        for (int k = 0; k < PAPER_MAX_PARTS && rc->parts[k].name; k++) {
            const paper_part *p = &rc->parts[k];
            int n_keys = rc->match == PAPER_BY_PAIR   ? n_pairs
                         : rc->match == PAPER_BY_SIZE ? n_sizes
                                                      : 1;
            for (int key = 0; key < n_keys; key++) {
                const paper_setting *s = NULL;
                const paper_lade_config *c = NULL;
                char why[256];
                if (rc->match == PAPER_BY_PAIR) {
                    s = paper_pair_for(p->task, pairs[key].key, why, sizeof why);
                    CHECK_MSG(s != NULL, "%s/%s: no settings for %s", rc->name, p->name,
                              pairs[key].key);
                } else if (rc->match == PAPER_BY_SIZE) {
                    c = paper_lade_config_find(sizes[key].key);
                    CHECK(c != NULL);
                }
                for (int i = 0; i < PAPER_MAX_DECODERS && p->dec[i].alg != PAPER_END; i++) {
                    char spec[512];
                    CHECK_MSG(paper_spec(&p->dec[i], s, c, spec, sizeof spec, err) == 0,
                              "%s/%s: %s", rc->name, p->name, err);
                    with_head(&p->dec[i], spec, sizeof spec);
                    dec *x = NULL;
                    CHECK_MSG(dec_create(&x, spec, &env, err) == 0, "%s/%s %s: %s", rc->name,
                              p->name, spec, err);
                    dec_free(x);
                    checked++;
                }
            }
        }
    }
    CHECK_MSG(checked > 100, "only %d specs checked", checked);
    model_close(t);
    model_close(d);
}

/* Every spec of every recipe runs its reference's settings, or the difference is listed; every
 * listed difference applies somewhere. */
static void references_followed(void) {
    char err[ERR_LEN];
    int n_refs, n_diffs, n_pairs, n_sizes, checked = 0;
    const paper_reference *refs = paper_references(&n_refs);
    const paper_difference *diffs = paper_differences(&n_diffs);
    const paper_model *pairs = paper_pairs(&n_pairs), *sizes = paper_sizes(&n_sizes);
    int *key_used = calloc((size_t)n_diffs, sizeof *key_used);
    /* each reference's settings are parameters of its decoder */
    for (int i = 0; i < n_refs; i++) {
        static const char *const names[PAPER_N_ALGS] = {
            [PAPER_SPEC] = "spec",           [PAPER_LOOKAHEAD] = "lookahead",
            [PAPER_OUROBOROS] = "ouroboros", [PAPER_PLD] = "pld",
            [PAPER_EAGLE] = "eagle",         [PAPER_EAGLE2] = "eagle",
            [PAPER_MEDUSA] = "medusa"};
        char spec[512];
        snprintf(spec, sizeof spec, "%s:%s", names[refs[i].alg], refs[i].settings);
        dec_info info;
        CHECK_MSG(dec_describe(spec, &info, err) == 0, "reference %s: %s", refs[i].name, err);
        CHECK(paper_reference_find(refs[i].name) == &refs[i] && refs[i].cite && refs[i].title);
    }
    for (int r = 0; r < paper_recipe_count(); r++) {
        const paper_recipe *rc = paper_recipe_at(r);
        CHECK_MSG(rc->models && rc->models[0], "%s: the paper's models are not named", rc->name);
        for (int a = PAPER_SPEC; a < PAPER_N_ALGS; a++) {
            const paper_reference *ref = paper_reference_of(rc, (paper_alg)a);
            CHECK_MSG(!rc->refs[a] || (ref && (int)ref->alg == a), "%s: reference %s", rc->name,
                      rc->refs[a]);
        }
        for (int k = 0; k < PAPER_MAX_PARTS && rc->parts[k].name; k++) {
            const paper_part *p = &rc->parts[k];
            int n_keys = rc->match == PAPER_BY_PAIR   ? n_pairs
                         : rc->match == PAPER_BY_SIZE ? n_sizes
                                                      : 1;
            for (int key = 0; key < n_keys; key++) {
                const paper_setting *s = NULL;
                const paper_lade_config *c = NULL;
                char why[256];
                if (rc->match == PAPER_BY_PAIR)
                    s = paper_pair_for(p->task, pairs[key].key, why, sizeof why);
                else if (rc->match == PAPER_BY_SIZE)
                    c = paper_lade_config_find(sizes[key].key);
                for (int i = 0; i < PAPER_MAX_DECODERS && p->dec[i].alg != PAPER_END; i++) {
                    const paper_decoder *d = &p->dec[i];
                    CHECK_MSG(d->alg == PAPER_GREEDY || paper_reference_of(rc, d->alg),
                              "%s/%s %s: no reference implementation named", rc->name, p->name,
                              d->row ? d->row : p->title);
                    char spec[512], dep[256];
                    if (paper_spec(d, s, c, spec, sizeof spec, err)) continue;
                    with_head(d, spec, sizeof spec);
                    CHECK_MSG(paper_spec_departures(rc, d, spec, dep, sizeof dep, err) == 0,
                              "%s: %s", spec, err);
                    checked++;
                    /* each departure is a listed difference of this recipe or its reference */
                    for (char *save = NULL, *t = strtok_r(dep, ",", &save); t;
                         t = strtok_r(NULL, ",", &save)) {
                        int found = 0;
                        for (int x = 0; x < n_diffs; x++) {
                            const paper_difference *f = &diffs[x];
                            if (!f->key || strcmp(f->key, t) || !paper_difference_applies(f, rc))
                                continue;
                            if (f->ref && strcmp(f->ref, rc->refs[d->alg])) continue;
                            found = key_used[x] = 1;
                        }
                        CHECK_MSG(found,
                                  "%s/%s %s: %s differs from %s's setting and no difference is "
                                  "listed",
                                  rc->name, p->name, spec, t, rc->refs[d->alg]);
                    }
                }
            }
        }
    }
    CHECK_MSG(checked > 100, "only %d specs checked", checked);
    for (int x = 0; x < n_diffs; x++) {
        const paper_difference *f = &diffs[x];
        int applies = 0;
        for (int r = 0; r < paper_recipe_count() && !applies; r++)
            applies = paper_difference_applies(f, paper_recipe_at(r));
        CHECK_MSG(applies && f->text, "difference %d (%s, %s): no recipe it applies to", x,
                  f->recipe ? f->recipe : "*", f->ref ? f->ref : "*");
        CHECK_MSG(!f->key || key_used[x], "difference %d (%s): listed, but no spec differs", x,
                  f->key);
    }
    free(key_used);
    /* the check bites: a recipe's spec without the reference's settings */
    const paper_recipe *t2 = paper_recipe_find("ouro-table2");
    const paper_decoder ou = {.row = "x", .alg = PAPER_OUROBOROS},
                        la = {.row = "x", .alg = PAPER_LOOKAHEAD};
    char dep[256];
    CHECK(paper_spec_departures(t2, &ou, "ouroboros:gamma=6,W=17,beta=5,K=3", dep, sizeof dep,
                                err) == 0 &&
          !strcmp(dep, "trim"));
    CHECK(paper_spec_departures(t2, &ou, "ouroboros:gamma=6,W=17,beta=5,K=3,trim=1", dep,
                                sizeof dep, err) == 0 &&
          !strcmp(dep, ""));
    CHECK_MSG(paper_spec_departures(t2, &la, "lookahead:W=15,N=6,G=15", dep, sizeof dep, err) ==
                      0 &&
                  !strcmp(dep, "refill,full_bonus,init,fill_prefill,fill_verify,share"),
              "%s", dep);
    CHECK(paper_spec_departures(t2, &la, "lookahead:W=15,N=6,G=15,preset=lade,init=prompt", dep,
                                sizeof dep, err) == -1 &&
          strstr(err, "contradicts"));
    CHECK(paper_setting_differs("pld:ngram=3,k=10", "match", "first", err) == 1);
    CHECK(paper_setting_differs("pld:ngram=3,k=10,match=first", "match", "first", err) == 0);
    CHECK(paper_setting_differs("pld:ngram=3,k=10", "match", "recent", err) == 0); /* default */
}

int main(void) {
    /* families from GGUF general.name / general.architecture (paper_match.c) */
    family("Yi 34B Chat", "llama", "yi");
    family("01-ai_Yi-6B", "llama", "yi");
    family("CodeLlama 7B Instruct", "llama", "codellama");
    family("codellama-34b", "llama", "codellama");
    family("Code Llama 34B", "llama", "codellama");
    family("deepseek-coder-6.7b-instruct", "llama", "deepseek");
    family("vicuna-7b-v1.3", "llama", "vicuna");
    family("Llama-2-7b-chat-hf", "llama", "llama2");
    family("Meta Llama 3.1 8B Instruct", "llama", "llama2");
    family("TinyLlama 1.1B", "llama", "llama2");
    family("Mistral 7B Instruct", "llama", "llama2"); /* a Llama-shaped model */
    family("Yield 7B", "llama", "llama2");            /* "yi" only as a word */
    family("Qwen2.5 7B Instruct", "qwen2", NULL);
    family("", "qwen3", NULL);
    family("", "llama", "llama2"); /* a llama2.c checkpoint: the stated default */

    /* the closest Table 7 pair per task */
    pair("gsm8k", "llama2", "llama2");
    pair("gsm8k", "codellama", "llama2");
    pair("humaneval", "llama2", "codellama");
    pair("mbpp", "vicuna", "codellama");
    pair("gsm8k", "vicuna", "llama2");
    pair("humaneval", "deepseek", "deepseek");
    pair("wmt", "deepseek", "llama2");
    pair("cnn_dm", "yi", "yi");
    pair("humaneval", NULL, "yi"); /* no family: the paper's first pair */
    pair("gsm8k", NULL, "yi");
    char why[256];
    CHECK(paper_pair_for("no-such-task", "yi", why, sizeof why) == NULL);

    /* the nearest size on a log scale */
    CHECK(!strcmp(paper_size_for(2.6e5), "7b"));
    CHECK(!strcmp(paper_size_for(6.7e9), "7b"));
    CHECK(!strcmp(paper_size_for(10e9), "13b"));
    CHECK(!strcmp(paper_size_for(13e9), "13b"));
    CHECK(!strcmp(paper_size_for(34e9), "33b"));
    CHECK(!strcmp(paper_size_for(70e9), "33b"));

    /* the papers' names -> decbench's: Ouroboros' printed beta is the reference's
     * lookahead_level + 1, its phrases level - 1 tokens: beta - 2, drafts cut to gamma
     * (trim=1); Table 7's lookahead beta is N with G = W, run as LADE's preset; LADE's
     * configurations give W, N, G */
    const paper_setting *gsm_llama = paper_setting_find("gsm8k", "llama2");
    CHECK(gsm_llama && gsm_llama->ou_beta == 7 && gsm_llama->la_beta == 6);
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_OUROBOROS, .extra = "warm=0"}, gsm_llama,
            NULL, "ouroboros:gamma=6,W=17,beta=5,K=3,trim=1,warm=0");
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_LOOKAHEAD}, gsm_llama, NULL,
            "lookahead:W=15,N=6,G=15,preset=lade");
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_SPEC}, gsm_llama, NULL, "spec:gamma=7");
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_LOOKAHEAD}, NULL,
            paper_lade_config_find("13b"), "lookahead:W=10,N=5,G=10,preset=lade");
    spec_of(&(paper_decoder){.row = "x",
                             .alg = PAPER_OUROBOROS,
                             .gamma = 12,
                             .W = 20,
                             .beta = 8,
                             .K = 3,
                             .extra = "warm=0,suffix=0"},
            NULL, NULL, "ouroboros:gamma=12,W=20,beta=6,K=3,trim=1,warm=0,suffix=0");
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_PLD, .ngram = 3, .k = 10}, NULL, NULL,
            "pld:ngram=3,k=10");
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_GREEDY}, gsm_llama, NULL, "greedy");
    /* Spec-Bench's EAGLE is EAGLE-1's static tree; its EAGLE2 counts the current token in
     * total_token and the expansions after the root's top_k in depth, as decbench's eagle */
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_EAGLE}, NULL, NULL, "eagle:mode=static");
    spec_of(
        &(paper_decoder){
            .row = "x", .alg = PAPER_EAGLE2, .total_tokens = 60, .depth = 5, .top_k = 10},
        NULL, NULL, "eagle:mode=dynamic,total_tokens=60,depth=5,top_k=10");
    spec_of(&(paper_decoder){.row = "x", .alg = PAPER_MEDUSA, .extra = "tree=mc_sim_7b_63"}, NULL,
            NULL, "medusa:tree=mc_sim_7b_63");
    CHECK(!strcmp(paper_head_decoder(PAPER_EAGLE2), "eagle") &&
          !strcmp(paper_head_decoder(PAPER_MEDUSA), "medusa") && !paper_head_decoder(PAPER_SPEC));
    char out[64], err[ERR_LEN] = "";
    CHECK(paper_spec(&(paper_decoder){.row = "x", .alg = PAPER_SPEC}, NULL, NULL, out, sizeof out,
                     err) == -1 &&
          strstr(err, "no gamma"));
    CHECK(paper_spec(&(paper_decoder){.row = "x", .alg = PAPER_OUROBOROS}, gsm_llama, NULL, out, 8,
                     err) == -1 &&
          strstr(err, "too long"));

    /* the papers' figures: each one's recipe exists and prints its row; the table lookups */
    CHECK(paper_recipe_find("no-such") == NULL);
    const paper_value *v = paper_value_find("ouro-table2", "llama2", "GSM8K", "Ouroboros †");
    CHECK(v && !strcmp(v->v[0], "24.03") && !strcmp(v->v[1], "2.68") &&
          !strcmp(v->cite, "Table 2"));
    v = paper_value_find("specbench", "7b", "Overall", "Lookahead");
    CHECK(v && !strcmp(v->v[0], "1.34") && !strcmp(v->v[1], "1.64"));
    v = paper_value_find("specbench", "7b", "Overall", "EAGLE2");
    CHECK(v && !strcmp(v->v[0], "2.36") && !strcmp(v->v[1], "4.34"));
    v = paper_value_find("specbench", "13b", "Translation", "Medusa");
    CHECK(v && !strcmp(v->v[0], "1.71") && v->v[1] == NULL);
    v = paper_value_find("specbench", "33b", "Overall", "EAGLE");
    CHECK(v && !strcmp(v->v[0], "2.43") && !strcmp(v->v[1], "3.39"));
    v = paper_value_find("ouro-table4", "yi", "warm start on", "CN=4");
    CHECK(v && !strcmp(v->v[0], "34.83"));
    v = paper_value_find("ouro-fig4", "yi", "MBPP", "lookahead");
    CHECK(v && v->v[0] == NULL && v->text && strstr(v->cite, "Figure 4"));
    CHECK(paper_value_find("ouro-table3", "yi", "HumanEval", "greedy") == NULL);
    int n_values;
    const paper_value *values = paper_values(&n_values);
    CHECK(n_values > 90);
    for (int i = 0; i < n_values; i++) {
        const paper_value *x = &values[i];
        const paper_recipe *rc = paper_recipe_find(x->recipe);
        CHECK_MSG(rc != NULL, "figure %d: no recipe %s", i, x->recipe);
        if (!rc) continue;
        CHECK_MSG(recipe_has_row(rc, x->group, x->row), "%s: no row (%s, %s)", x->recipe,
                  x->group ? x->group : "*", x->row ? x->row : "*");
        for (int k = 0; k < PAPER_COLS; k++) {
            if (!x->v[k]) continue;
            char *end;
            double d = strtod(x->v[k], &end);
            CHECK_MSG(rc->cols[k].header && *end == '\0' && d > 0,
                      "%s (%s, %s): value %s in "
                      "column %d",
                      x->recipe, x->group ? x->group : "*", x->row ? x->row : "*", x->v[k], k);
            CHECK_MSG(x->cite != NULL, "%s: a figure without its source", x->recipe);
        }
        if (x->text) CHECK_MSG(x->cite != NULL, "%s: words without their source", x->recipe);
    }
    all_specs_valid();
    references_followed();
    return test_finish("test_paper");
}
