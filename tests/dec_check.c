/* dec_check.c: see dec_check.h. */
#include "tests/dec_check.h"

#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "model/convert/synth.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/testutil.h"
#include "util/token_store.h"
#include "util/rng.h"
#include "model/kernels/kernels.h"
#include <sys/stat.h>
#include "util/err.h"

static void on_step(void *user, const dec_step *s) {
    dec_check_trace *t = user;
    t->steps++;
    t->rows += s->rows;
    t->emitted += s->emitted;
    if (s->rows > t->max_rows) t->max_rows = s->rows;
    if (s->emitted > 1) t->multi++;
    t->last = *s;
}

int dec_check_greedy(const dec_env *env, const int *prompt, int n_prompt, int max_new, int *out) {
    char err[ERR_LEN];
    dec_env genv = {.target = env->target,
                    .pool = env->pool,
                    .kernels = env->kernels,
                    .sampling = env->sampling}; /* plain sampling at T > 0 */
    dec *g;
    dec_stats st;
    int n = -1;
    CHECK_MSG(max_new <= DEC_CHECK_MAX_OUT, "max_new %d > %d", max_new, DEC_CHECK_MAX_OUT);
    if (max_new > DEC_CHECK_MAX_OUT || dec_create(&g, "greedy", &genv, err)) return -1;
    int rc = dec_generate(g, prompt, n_prompt, max_new, out, &n, &st, err);
    CHECK_MSG(rc == 0, "greedy: %s", err);
    dec_free(g);
    return rc ? -1 : n;
}

static void check_stats(const dec_stats *st, const dec_check_trace *tr, int n_got, const char *what,
                        const char *spec) {
    long hist = 0, hist_acc = 0;
    for (int k = 0; k <= DEC_HIST_MAX; k++)
        hist += st->accept_hist[k], hist_acc += k * st->accept_hist[k];
    CHECK_MSG(st->new_tokens == n_got, "%s %s: new_tokens %d, output %d", what, spec,
              st->new_tokens, n_got);
    CHECK_MSG(st->verify_steps == hist, "%s %s: verify_steps %ld, accept histogram total %ld", what,
              spec, st->verify_steps, hist);
    CHECK_MSG(n_got == 0 ? st->target_steps == 0 : hist == st->target_steps - 1,
              "%s %s: %ld histogram entries for %ld target steps", what, spec, hist,
              st->target_steps);
    CHECK_MSG(hist == tr->steps && tr->rows == st->target_rows &&
                  (n_got == 0 || tr->emitted == n_got - 1),
              "%s %s: trace of %ld steps, %ld rows, %ld emitted vs %ld steps, %ld rows, %d tokens",
              what, spec, tr->steps, tr->rows, tr->emitted, hist, st->target_rows, n_got);
    CHECK_MSG(hist_acc == st->accepted && st->accepted <= st->drafted,
              "%s %s: accepted %ld (histogram %ld), drafted %ld", what, spec, st->accepted,
              hist_acc, st->drafted);
    CHECK_MSG(n_got == 0 || (st->target_steps <= n_got && n_got <= st->accepted + st->target_steps),
              "%s %s: %d tokens from %ld steps and %ld accepted", what, spec, n_got,
              st->target_steps, st->accepted);
    for (int i = 0; i < DEC_HIST_MAX; i++)
        CHECK_MSG(st->pos_accepted[i] <= st->pos_tried[i] &&
                      (i == 0 || st->pos_tried[i] <= st->pos_tried[i - 1]),
                  "%s %s: position %d tried %ld, accepted %ld", what, spec, i, st->pos_tried[i],
                  st->pos_accepted[i]);
}

int dec_check_vs(const dec_env *env, const char *spec, const int *prompt, int n_prompt, int max_new,
                 const int *want, int n_want, int *got, dec_stats *st, dec_check_trace *tr,
                 const char *what) {
    char err[ERR_LEN];
    static int buf[DEC_CHECK_MAX_OUT];
    dec_stats st_local;
    dec_check_trace tr_local;
    if (!got) got = buf;
    if (!st) st = &st_local;
    if (!tr) tr = &tr_local;
    memset(tr, 0, sizeof *tr);
    dec_env e = *env;
    e.on_step = on_step, e.user = tr;
    dec *d;
    if (dec_create(&d, spec, &e, err)) {
        CHECK_MSG(0, "%s %s: %s", what, spec, err);
        return 0;
    }
    int n_got = -1;
    int rc = dec_generate(d, prompt, n_prompt, max_new, got, &n_got, st, err);
    dec_free(d);
    CHECK_MSG(rc == 0, "%s %s: %s", what, spec, err);
    if (rc) return 0;
    int first = 0;
    while (first < n_got && first < n_want && got[first] == want[first]) first++;
    int same = n_got == n_want && first == n_want;
    CHECK_MSG(same, "%s %s: %d tokens vs greedy's %d, first difference at %d (%d vs %d)", what,
              spec, n_got, n_want, first, first < n_got ? got[first] : -1,
              first < n_want ? want[first] : -1);
    check_stats(st, tr, n_got, what, spec);
    return same;
}

int dec_check_exact(const dec_env *env, const char *spec, const int *prompt, int n_prompt,
                    int max_new, int *got, dec_stats *st, dec_check_trace *tr, const char *what) {
    static int want[DEC_CHECK_MAX_OUT];
    int n_want = dec_check_greedy(env, prompt, n_prompt, max_new, want);
    if (n_want < 0) return 0;
    return dec_check_vs(env, spec, prompt, n_prompt, max_new, want, n_want, got, st, tr, what);
}

int dec_check_tinystories(int n, int (*ids)[DEC_CHECK_MAX_PROMPT], int *lens) {
    char err[ERR_LEN];
    tok *t = NULL;
    ds_set *ds = NULL;
    int rc = -1;
    CHECK_MSG(n >= 0 && n <= 64, "%d prompts", n);
    if (n < 0 || n > 64) return -1;
    if (tok_load(&t, test_shared("models/tok512.bin"), err) ||
        ds_open(&ds, "tinystories", "raw", test_shared("datasets"), err)) {
        CHECK_MSG(0, "%s", err);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const char *text = ds_get(ds, i)->prompt;
        if (strlen(text) + 3 > DEC_CHECK_MAX_PROMPT ||
            tok_encode(t, text, 1, ids[i], &lens[i], err)) {
            CHECK_MSG(0, "prompt %d does not encode in %d tokens", i, DEC_CHECK_MAX_PROMPT);
            goto done;
        }
    }
    rc = 0;
done:
    ds_free(ds);
    tok_free(t);
    return rc;
}

model *dec_check_synth_untied(const char *config, uint64_t seed, model **donor) {
    char err[ERR_LEN];
    model_config c;
    model *m = NULL;
    *donor = NULL;
    CHECK_MSG(synth_config(config, &c, err) == 0, "%s", err);
    CHECK_MSG(synth_model(&m, &c, seed, err) == 0, "%s", err);
    CHECK_MSG(synth_model(donor, &c, seed + 1000, err) == 0, "%s", err);
    if (m && *donor) m->wcls = (*donor)->tok_embd;
    return m;
}

void dec_check_synth_prompt(int prompt[DEC_CHECK_SYNTH_PROMPT]) {
    for (int i = 0; i < DEC_CHECK_SYNTH_PROMPT; i++) prompt[i] = i == 0 ? 1 : 3 + (i * 37) % 500;
}

model *dec_check_synth_positional(const char *config, uint64_t seed, model **donor) {
    model *m = dec_check_synth_untied(config, seed, donor);
    if (!m || !*donor) return m;
    CHECK(m->tok_embd.type == WTYPE_F32);
    float *e = (float *)m->tok_embd.data; /* the synthetic model's own heap: writable */
    size_t dim = (size_t)m->cfg.dim;
    for (int t = 1; t < m->cfg.vocab_size; t++) memcpy(e + t * dim, e, sizeof(float) * dim);
    return m;
}

int dec_check_rest_store(const char *path, int first, int n) {
    char err[ERR_LEN];
    tok *t = NULL;
    ds_set *ds = NULL;
    uint32_t *all = NULL;
    int *ids = NULL, rc = -1, total = 0, docs = 0;
    if (tok_load(&t, test_shared("models/tok512.bin"), err) ||
        ds_open(&ds, "tinystories", "raw", test_shared("datasets"), err) ||
        ds_select(ds, first, n, 0, 0, err)) {
        CHECK_MSG(0, "%s", err);
        goto done;
    }
    size_t cap = 0;
    for (int i = 0; i < ds_count(ds); i++) cap += strlen(ds_get(ds, i)->reference) + 3;
    all = malloc(sizeof(uint32_t) * cap), ids = malloc(sizeof(int) * cap);
    if (!all || !ids) goto done;
    for (int i = 0; i < ds_count(ds); i++, docs++) {
        int k;
        if (tok_encode(t, ds_get(ds, i)->reference, 1, ids, &k, err)) {
            CHECK_MSG(0, "%s", err);
            goto done;
        }
        for (int j = 0; j < k; j++) all[total++] = (uint32_t)ids[j];
    }
    CHECK_MSG((rc = tstore_write(path, all, total, docs, tok_vocab_size(t), tok_fingerprint(t),
                                 err)) == 0,
              "%s", err);
done:
    free(all), free(ids);
    ds_free(ds);
    tok_free(t);
    return rc;
}

int dec_check_medusa_head(const char *dir, const model *m, int n_heads, int n_layers, float noise,
                          uint64_t seed) {
    mkdir(dir, 0755);
    const int D = m->cfg.dim, V = m->cfg.vocab_size, n = n_heads * (2 * n_layers + 1);
    char path[1100];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return -1;
    fprintf(f,
            "{\"medusa_num_heads\": %d, \"medusa_num_layers\": %d, \"hidden_size\": %d, "
            "\"vocab_size\": %d, \"base_model_name_or_path\": \"%s\"}\n",
            n_heads, n_layers, D, V, m->path[0] ? m->path : "synthetic");
    fclose(f);
    test_st_tensor *t = calloc((size_t)n, sizeof *t);
    char (*names)[48] = calloc((size_t)n, sizeof *names);
    float **data = calloc((size_t)n, sizeof *data);
    rng_state r;
    rng_seed(&r, seed);
    int k = 0;
    for (int h = 0; h < n_heads; h++) {
        for (int l = 0; l <= n_layers; l++) {
            for (int b = 0; b < (l < n_layers ? 2 : 1); b++) {
                int rows = l < n_layers ? (b ? 1 : D) : V;
                float *x = data[k] = malloc(sizeof(float) * (size_t)rows * (size_t)D);
                for (int i = 0; i < rows; i++) {
                    if (l == n_layers) kern_row_to_f32(&m->wcls, i, x + (size_t)i * D);
                    for (int j = 0; j < D; j++)
                        x[(size_t)i * D + j] = (l == n_layers ? x[(size_t)i * D + j] : 0) +
                                               (rng_unit(&r) - 0.5f) * noise;
                }
                if (l < n_layers)
                    snprintf(names[k], sizeof names[k], "%d.%d.linear.%s", h, l,
                             b ? "bias" : "weight");
                else
                    snprintf(names[k], sizeof names[k], "%d.%d.weight", h, l);
                t[k] = (test_st_tensor){names[k], "F32", b ? 1 : 2,
                                        {(unsigned long long)(b ? D : rows), (unsigned long long)D},
                                        x, sizeof(float) * (size_t)rows * (size_t)D};
                k++;
            }
        }
    }
    snprintf(path, sizeof path, "%s/medusa_lm_head.safetensors", dir);
    int rc = test_write_safetensors(path, t, n);
    CHECK(rc == 0);
    for (int i = 0; i < n; i++) free(data[i]);
    free(t), free(names), free(data);
    return rc;
}
