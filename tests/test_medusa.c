/* test_medusa.c: Medusa decoding (decoders/medusa.c) emits exactly greedy's tokens, and its
 * head loader (decoders/medusa_head.h) refuses bad heads with one line naming file and tensor.
 *  1. the spec: the canonical form with every parameter; no head= refused, naming the form.
 *  2. real model: stories260K with a head written here (tests/dec_check.c: its classifier plus
 *     noise) and, when present, the head trained for it (tests/data/heads/stories260K-medusa),
 *     on TinyStories prompts x 128 new tokens (3 with the written head, 6 with the trained):
 *     the default tree (mc_sim_7b_63), a prefix of it, topk=1 (the chain of first choices),
 *     vicuna_7b_stage2, with 1 and 2 threads; rows per pass match the tree; some steps accept
 *     more than one token.
 *  3. full acceptance: a synthetic tied model, whose greedy output repeats its last token,
 *     with heads that propose the target's next token (noise 0): every step accepts the whole
 *     depth (acceptance by position 1 at every head), exact; a head file with 2 heads cuts the
 *     tree at depth 2; a tree deeper than the tokens left or the context is cut (max_new 1, 2,
 *     3, a prompt at the context's end).
 *  4. the loader: a missing folder or config.json, bad JSON, a bad field, a missing tensor, a
 *     wrong shape, a truncated file, an unreadable dtype, NaN and infinite weights, a .pt only,
 *     a head for another model (hidden size, vocabulary): each refused, naming the file and the
 *     tensor or field.
 *  5. the head's forward against PyTorch (tests/data/heads/stories260K-medusa/reference.tsv,
 *     when present): every head's top-5 ids equal, logits within 1e-4 relative.
 *  6. generate() allocates nothing.
 * Under the sanitizers fewer prompts and tokens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/convert/synth.h"
#include "model/formats/safetensors.h"
#include "model/loader/model_file.h"
#include "decoders/medusa_head.h"
#include "model/weights/wtype.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 6
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];
#define TRAINED DECBENCH_SOURCE_DIR "/tests/data/heads/stories260K-medusa"

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- 1. spec ---------------------------------------------------------------------------- */

static void test_spec(const model *m, const char *head) {
    char err[ERR_LEN], spec[600];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "medusa", &env, err) != 0);
    CHECK_MSG(strstr(err, "medusa:head=DIR"), "%s", err);
    snprintf(spec, sizeof spec, "medusa:head=%s", head);
    CHECK_MSG(dec_create(&d, spec, &env, err) == 0, "%s", err);
    if (!d) return;
    char want[700];
    snprintf(want, sizeof want, "medusa:head=%s,tree=mc_sim_7b_63,nodes=63,topk=10", head);
    CHECK_MSG(strcmp(dec_spec(d), want) == 0, "%s", dec_spec(d));
    dec_free(d);
    snprintf(spec, sizeof spec, "medusa:head=%s,nodes=64", head);
    CHECK(dec_create(&d, spec, &env, err) != 0 && strstr(err, "nodes"));
}

/* ---- 2. real model ---------------------------------------------------------------------- */

static void test_real(const model *m, const char *head, const char *what, int n_prompts) {
    char err[ERR_LEN], spec[600];
    tpool *pool2;
    CHECK(tpool_new(&pool2, 2, err) == 0);
    const char *forms[] = {"", ",nodes=15", ",topk=1", ",tree=vicuna_7b_stage2,nodes=30"};
    static int got[DEC_CHECK_MAX_OUT];
    const int max_new = test_sanitized() ? 48 : 128;
    for (int f = 0; f < 4; f++) {
        snprintf(spec, sizeof spec, "medusa:head=%s%s", head, forms[f]);
        long steps = 0, tokens = 0, multi = 0;
        for (int i = 0; i < n_prompts; i++) {
            dec_env env = {.target = m, .kernels = KERN_EXACT, .pool = (i & 1) ? pool2 : NULL};
            dec_stats st;
            dec_check_trace tr;
            CHECK(dec_check_exact(&env, spec, ids[i], lens[i], max_new, got, &st, &tr, what));
            steps += tr.steps, tokens += tr.emitted, multi += tr.multi;
            int want_rows = f == 0 ? 64 : f == 1 ? 16 : f == 2 ? 5 : 31;
            CHECK_MSG(tr.max_rows == want_rows, "%s %s: widest pass %d rows, the tree has %d",
                      what, forms[f], tr.max_rows, want_rows);
        }
        fprintf(stderr, "%s, medusa%s: %.2f tokens per step (%ld steps)\n", what, forms[f],
                steps ? (double)tokens / steps : 0, steps);
        CHECK_MSG(multi > 0, "%s %s: no step accepted a proposal", what, forms[f]);
    }
    (void)err;
    tpool_free(pool2);
}

/* ---- 3. full acceptance, cut trees ------------------------------------------------------- */

static void test_full_acceptance(void) {
    char err[ERR_LEN], spec[600];
    model_config c;
    model *m = NULL;
    CHECK(synth_config("64,128,2,4,4,512,256", &c, err) == 0);
    CHECK_MSG(synth_model(&m, &c, 3, err) == 0, "%s", err);
    if (!m) return;
    const char *dir = test_tmp("echo_head"), *dir2 = test_tmp("echo_head2");
    CHECK(dec_check_medusa_head(dir, m, 5, 1, 0.0f, 1) == 0);
    CHECK(dec_check_medusa_head(dir2, m, 2, 1, 0.0f, 1) == 0);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int got[DEC_CHECK_MAX_OUT];
    dec_stats st;
    dec_check_trace tr;
    snprintf(spec, sizeof spec, "medusa:head=%s", dir);
    CHECK(dec_check_exact(&env, spec, prompt, 20, 100, got, &st, &tr, "echo model"));
    /* the first token comes from the prompt pass; then 4 proposals + the bonus per step */
    CHECK_MSG(st.accepted == st.drafted && st.drafted > 0 && tr.steps <= (99 + 4) / 5,
              "echo model: %ld of %ld drafted accepted in %ld steps", (long)st.accepted,
              (long)st.drafted, tr.steps);
    for (int i = 0; i < 4; i++) CHECK(st.pos_tried[i] > 0 && st.pos_accepted[i] == st.pos_tried[i]);
    /* 2 heads: the tree's entries of depth <= 2 (mc_sim_7b_63 has 10 + 28 of them) */
    snprintf(spec, sizeof spec, "medusa:head=%s", dir2);
    CHECK(dec_check_exact(&env, spec, prompt, 20, 100, got, &st, &tr, "echo model, 2 heads"));
    CHECK_MSG(tr.max_rows == 39 && st.accepted == st.drafted,
              "2 heads: widest pass %d rows, %ld of %ld accepted", tr.max_rows, (long)st.accepted,
              (long)st.drafted);
    /* trees cut by what may still be emitted, and by the context */
    snprintf(spec, sizeof spec, "medusa:head=%s", dir);
    for (int max_new = 0; max_new <= 3; max_new++)
        CHECK(dec_check_exact(&env, spec, prompt, 20, max_new, got, &st, &tr, "short max_new"));
    int at_end = m->cfg.seq_len - 3;
    CHECK(dec_check_exact(&env, spec, prompt, at_end, 50, got, &st, &tr, "context end"));
    CHECK_MSG(st.new_tokens == 3, "context end: %d tokens", st.new_tokens);
    model_close(m);
}

/* ---- 4. loader errors -------------------------------------------------------------------- */

/* medusa_head_open of dir must fail naming `file` (a path suffix) and `needle`. */
static void refused(const char *dir, const char *file, const char *needle, const char *what) {
    char err[ERR_LEN] = "";
    medusa_head *h = NULL;
    CHECK_MSG(medusa_head_open(&h, dir, err) != 0 && h == NULL, "%s: opened", what);
    CHECK_MSG(strstr(err, file) && strstr(err, needle), "%s: \"%s\", \"%s\" not in: %s", what,
              file, needle, err);
    CHECK_MSG(!strchr(err, '\n'), "%s: not one line: %s", what, err);
    medusa_head_free(h);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

/* The medusa_lm_head.safetensors of a 1-head, 1-layer head (dim 4, vocab 6) with tensors
 * t[0..3), after `edit` changed one of them. */
static void small_head(const char *dir, const char *config, const test_st_tensor *t, int n) {
    mkdir(dir, 0755);
    char path[1100];
    snprintf(path, sizeof path, "%s/config.json", dir);
    write_text(path, config);
    snprintf(path, sizeof path, "%s/medusa_lm_head.safetensors", dir);
    CHECK(test_write_safetensors(path, t, n) == 0);
}

static void test_loader(const model *m) {
    char err[ERR_LEN], path[1100];
    static float w[16], b[4], cls[24];
    for (int i = 0; i < 16; i++) w[i] = 0.01f * (float)i;
    for (int i = 0; i < 24; i++) cls[i] = 0.1f * (float)(i % 5);
    const char *cfg = "{\"medusa_num_heads\": 1, \"medusa_num_layers\": 1}";
    test_st_tensor good[3] = {{"0.0.linear.weight", "F32", 2, {4, 4}, w, sizeof w},
                              {"0.0.linear.bias", "F32", 1, {4}, b, sizeof b},
                              {"0.1.weight", "F32", 2, {6, 4}, cls, sizeof cls}};
    const char *dir = test_tmp("h_good");
    small_head(dir, cfg, good, 3);
    medusa_head *h = NULL;
    CHECK_MSG(medusa_head_open(&h, dir, err) == 0, "%s", err);
    if (h) {
        CHECK(h->n_heads == 1 && h->n_layers == 1 && h->dim == 4 && h->vocab == 6);
        /* the forward pass against a direct computation */
        float x[4] = {1, -2, 0.5f, 3}, lg[6], scratch[8], r[4];
        medusa_head_logits(h, 0, x, lg, scratch, NULL);
        for (int i = 0; i < 4; i++) {
            float v = 0;
            for (int j = 0; j < 4; j++) v += w[i * 4 + j] * x[j];
            r[i] = x[i] + v / (1.0f + expf(-v));
        }
        for (int o = 0; o < 6; o++) {
            float v = 0;
            for (int j = 0; j < 4; j++) v += cls[o * 4 + j] * r[j];
            CHECK_MSG(fabsf(v - lg[o]) <= 1e-5f * (1 + fabsf(v)), "logit %d: %g vs %g", o, lg[o],
                      v);
        }
        /* the same head with its matrices in F16 and BF16: the kernels' widening of each */
        static uint16_t w16[16], c16[24];
        for (int ty = 0; ty < 2; ty++) {
            for (int i = 0; i < 16; i++)
                w16[i] = ty ? wtype_f32_to_bf16(w[i]) : wtype_f32_to_f16(w[i]);
            for (int i = 0; i < 24; i++)
                c16[i] = ty ? wtype_f32_to_bf16(cls[i]) : wtype_f32_to_f16(cls[i]);
            const char *dt = ty ? "BF16" : "F16";
            test_st_tensor half[3] = {{"0.0.linear.weight", dt, 2, {4, 4}, w16, sizeof w16},
                                      {"0.0.linear.bias", "F32", 1, {4}, b, sizeof b},
                                      {"0.1.weight", dt, 2, {6, 4}, c16, sizeof c16}};
            const char *dh = test_tmp(ty ? "h_bf16" : "h_f16");
            small_head(dh, cfg, half, 3);
            medusa_head *g = NULL;
            CHECK_MSG(medusa_head_open(&g, dh, err) == 0, "%s", err);
            if (!g) continue;
            CHECK(g->cls[0].type == (ty ? WTYPE_BF16 : WTYPE_F16));
            float l2[6];
            medusa_head_logits(g, 0, x, l2, scratch, NULL);
            for (int i = 0; i < 4; i++) {
                float v = 0;
                for (int j = 0; j < 4; j++)
                    v += (ty ? wtype_bf16_to_f32(w16[i * 4 + j]) : wtype_f16_to_f32(w16[i * 4 + j])) * x[j];
                r[i] = x[i] + v / (1.0f + expf(-v));
            }
            for (int o = 0; o < 6; o++) {
                float v = 0;
                for (int j = 0; j < 4; j++)
                    v += (ty ? wtype_bf16_to_f32(c16[o * 4 + j]) : wtype_f16_to_f32(c16[o * 4 + j])) * r[j];
                CHECK_MSG(fabsf(v - l2[o]) <= 1e-5f * (1 + fabsf(v)), "%s logit %d: %g vs %g", dt,
                          o, l2[o], v);
            }
            medusa_head_free(g);
        }
        /* a head for another model */
        CHECK(medusa_head_check(h, m, err) != 0);
        CHECK_MSG(strstr(err, dir) && strstr(err, "hidden size 4") && strstr(err, "vocabulary 6"),
                  "%s", err);
        medusa_head_free(h);
    }
    refused(test_tmp("h_none"), "h_none/config.json", "", "no folder");
    /* config.json */
    const char *d2 = test_tmp("h_cfg");
    small_head(d2, "{\"medusa_num_heads\": 1,", good, 3);
    refused(d2, "h_cfg/config.json", "", "bad JSON");
    small_head(d2, "{\"medusa_num_heads\": \"five\"}", good, 3);
    refused(d2, "h_cfg/config.json", "\"medusa_num_heads\"", "heads not an integer");
    small_head(d2, "{\"medusa_num_heads\": 1, \"medusa_num_layers\": 1, \"hidden_size\": 8}",
               good, 3);
    refused(d2, "medusa_lm_head.safetensors", "\"0.0.linear.weight\" has shape [4, 4], expected [8, 8]",
            "hidden size vs config");
    /* tensors */
    small_head(d2, "{\"medusa_num_heads\": 2, \"medusa_num_layers\": 1}", good, 3);
    refused(d2, "medusa_lm_head.safetensors", "\"1.0.linear.weight\" is missing", "2 heads");
    small_head(d2, cfg, good, 2);
    refused(d2, "medusa_lm_head.safetensors", "\"0.1.weight\" is missing", "no classifier");
    test_st_tensor bad[3];
    memcpy(bad, good, sizeof bad);
    bad[1] = (test_st_tensor){"0.0.linear.bias", "F32", 1, {3}, b, 12};
    small_head(d2, cfg, bad, 3);
    refused(d2, "medusa_lm_head.safetensors", "\"0.0.linear.bias\" has shape [3], expected [4]",
            "bias shape");
    memcpy(bad, good, sizeof bad);
    static int64_t i64[16];
    bad[0] = (test_st_tensor){"0.0.linear.weight", "I64", 2, {4, 4}, i64, sizeof i64};
    small_head(d2, cfg, bad, 3);
    refused(d2, "medusa_lm_head.safetensors", "\"0.0.linear.weight\" is I64", "dtype");
    static float nan_w[16], inf_b[4];
    memcpy(nan_w, w, sizeof w);
    nan_w[5] = NAN;
    memcpy(bad, good, sizeof bad);
    bad[0].data = nan_w;
    small_head(d2, cfg, bad, 3);
    refused(d2, "medusa_lm_head.safetensors", "\"0.0.linear.weight\"", "NaN weight");
    inf_b[2] = INFINITY;
    memcpy(bad, good, sizeof bad);
    bad[1].data = inf_b;
    small_head(d2, cfg, bad, 3);
    refused(d2, "medusa_lm_head.safetensors", "\"0.0.linear.bias\": value 2 is inf", "inf bias");
    /* truncated */
    size_t size;
    unsigned char *bytes = test_safetensors_bytes(good, 3, &size);
    snprintf(path, sizeof path, "%s/medusa_lm_head.safetensors", d2);
    small_head(d2, cfg, good, 3);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(bytes, 1, size - 10, f) == size - 10);
    if (f) fclose(f);
    free(bytes);
    refused(d2, "medusa_lm_head.safetensors", "\"0.1.weight\"", "truncated");
    /* the PyTorch pickle alone */
    remove(path);
    snprintf(path, sizeof path, "%s/medusa_lm_head.pt", d2);
    write_text(path, "not really a pickle");
    refused(d2, "h_cfg", "medusa_lm_head.pt: convert it", "pt only");
    remove(path);
    /* the decoder refuses a head for another target, naming both */
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    char spec[600];
    snprintf(spec, sizeof spec, "medusa:head=%s", dir);
    dec *d;
    CHECK(dec_create(&d, spec, &env, err) != 0);
    CHECK_MSG(strstr(err, dir) && strstr(err, "stories260K.bin"), "%s", err);
}

/* ---- 5. against PyTorch ------------------------------------------------------------------ */

/* reference.tsv (written by train/reference.py with the PyTorch forward): a comment line
 * "# tokens (N; ...): t0 t1 ...", then rows "pos<TAB>head<TAB>id1<TAB>logit1 ... id5<TAB>logit5":
 * head k's top-5 on the target's hidden state after the final norm at position pos of one
 * causal pass over the tokens. The hidden states are decbench's (fwd_set_hidden_out on the same
 * pass), so this checks the target's forward and the heads' together. Tolerance: 1e-4 of
 * max(1, |logit|); top-1 equal unless the two logits are that close. */
static void test_reference(const model *m) {
    char path[1100], err[ERR_LEN];
    snprintf(path, sizeof path, "%s/reference.tsv", TRAINED);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test_medusa: %s absent: the PyTorch comparison is skipped\n", path);
        return;
    }
    medusa_head *h = NULL;
    CHECK_MSG(medusa_head_open(&h, TRAINED, err) == 0 && medusa_head_check(h, m, err) == 0, "%s",
              err);
    static char line[1 << 16];
    int tok[512], n = 0, compared = 0, bad = 0, rows = 0;
    float *hid = NULL, *lg = NULL, *scratch = NULL, *logits = NULL;
    fwd_ctx *fc = NULL;
    while (h && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# tokens", 8)) {
            char *p = strchr(line, ':');
            for (n = 0; p && n < 512;) {
                char *q;
                long v = strtol(p + 1, &q, 10);
                if (q == p + 1) break;
                tok[n++] = (int)v, p = q;
            }
            CHECK(n > 0 && n <= 512 && fwd_new(&fc, m, NULL, n, KERN_EXACT, err) == 0);
            if (!fc) break;
            hid = malloc(sizeof(float) * (size_t)n * (size_t)h->dim);
            logits = malloc(sizeof(float) * (size_t)n * (size_t)h->vocab);
            lg = malloc(sizeof(float) * (size_t)h->vocab);
            scratch = malloc(sizeof(float) * 2 * (size_t)h->dim);
            fwd_set_hidden_out(fc, hid, NULL);
            CHECK_MSG(fwd_eval(fc, n, tok, NULL, NULL, NULL, n, logits, err) == 0, "%s", err);
            continue;
        }
        if (line[0] == '#' || !hid) continue;
        char *p = line;
        int pos = (int)strtol(p, &p, 10), k = (int)strtol(p, &p, 10);
        if (pos < 0 || pos >= n || k < 0 || k >= h->n_heads) continue;
        rows++;
        medusa_head_logits(h, k, hid + (size_t)pos * h->dim, lg, scratch, NULL);
        int best = 0;
        for (int v = 1; v < h->vocab; v++)
            if (lg[v] > lg[best]) best = v;
        for (int j = 0; j < 5; j++) {
            int id = (int)strtol(p, &p, 10);
            float want = strtof(p, &p);
            if (id < 0 || id >= h->vocab) break;
            float tol = 1e-4f * fmaxf(1, fabsf(want));
            compared++;
            int off = fabsf(lg[id] - want) > tol;
            if (j == 0 && best != id && lg[best] - lg[id] > tol) off = 1;
            if (off && bad < 5)
                fprintf(stderr, "reference pos %d head %d: id %d logit %.7g, PyTorch %.7g (top-1 %d)\n",
                        pos, k, id, (double)lg[id], (double)want, best);
            bad += off;
        }
    }
    fclose(f);
    CHECK_MSG(compared > 0, "%s: nothing compared (another layout?)", path);
    CHECK_MSG(bad == 0, "%s: %d of %d logits differ from PyTorch's", path, bad, compared);
    fprintf(stderr, "test_medusa: %d head rows, %d logits against PyTorch's, %d off\n", rows,
            compared, bad);
    free(hid), free(lg), free(scratch), free(logits);
    fwd_free(fc);
    medusa_head_free(h);
}

/* ---- 6. no allocation -------------------------------------------------------------------- */

static void test_no_malloc(const model *m, const char *head) {
    char err[ERR_LEN], spec[600];
    snprintf(spec, sizeof spec, "medusa:head=%s", head);
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    dec *d;
    int n;
    dec_stats st;
    CHECK_MSG(dec_create(&d, spec, &env, err) == 0, "%s", err);
    if (!d) return;
    long before = dec_check_mallocs;
    CHECK(dec_generate(d, ids[0], lens[0], 100, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
              dec_check_mallocs - before);
    dec_free(d);
}

int main(void) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!m || dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_medusa");
    const char *head = test_tmp("head260K");
    CHECK(dec_check_medusa_head(head, m, 4, 1, 0.1f, 7) == 0);
    test_spec(m, head);
    test_loader(m);
    test_no_malloc(m, head);
    test_full_acceptance();
    const int n = test_sanitized() ? 2 : N_PROMPTS;
    test_real(m, head, "stories260K, noisy head", test_sanitized() ? 1 : 3);
    if (exists(TRAINED "/medusa_lm_head.safetensors"))
        test_real(m, TRAINED, "stories260K, trained head", n);
    else
        fprintf(stderr, "test_medusa: no trained head at %s\n", TRAINED);
    test_reference(m);
    model_close(m);
    return test_finish("test_medusa");
}
