/* test_requant.c: model/requant (a model's weights requantized in memory, `--draft self:TYPE`).
 *  1. as convert does: for every type convert writes and llama-quantize's mixes (Q4_0,
 *     Q4_K_M, Q6_K, Q8_0: a type per tensor), on stories260K, llama2xs and a synthetic
 *     model whose widths every block divides (tied classifier), each matrix of the requantized
 *     model has the type and the very bytes of the GGUF file `convert --type` writes from the
 *     same model, and the same fallbacks (stories260K's rows of 64 and 172 values); the tied
 *     classifier stays tied; a matrix already of the type is referenced, not copied; the two
 *     models' logits are bit-identical;
 *  2. exact drafts: spec, tree and Ouroboros with self:q8_0 / self:q4_0 drafts emit greedy's
 *     tokens on TinyStories prompts, self:f32 of an f32 model is accepted in full, and a
 *     4-bit draft is accepted less often than an 8-bit one;
 *  3. errors: rows the type cannot hold without a fallback, a non-finite weight (named by
 *     tensor and row); nothing leaks (ASan). (A type without a quantizer cannot be asked
 *     for: convert_scheme_parse refuses it, see tests/cli_self_draft.sh.) */
#include <math.h>
#include <string.h>

#include "model/loader/model_file.h"
#include "model/forward.h"
#include "model/convert/requant.h"
#include "model/convert/synth.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

#define N_PROMPTS 6
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* every type convert writes, and llama-quantize's mixes */
static const char *const schemes[] = {"f32",  "f16",  "bf16",   "q8_0", "q4_0", "q4_k",
                                      "q6_k", "Q4_0", "Q4_K_M", "Q6_K", "Q8_0"};
#define N_SCHEMES (int)(sizeof schemes / sizeof schemes[0])

/* model_requantize with scheme (a type or a mix) and fallback fb. */
static int requant(model **q, const model *src, const char *scheme, convert_fallback fb,
                   convert_report *rep, char *err) {
    convert_opts o = {.fallback = fb};
    CHECK_MSG(convert_scheme_parse(scheme, &o) == 0, "%s", scheme);
    return model_requantize(q, src, &o, rep, err);
}

/* Every matrix of a and b: same type, same bytes. Returns the number compared. */
static int same_matrices(const model *a, const model *b, const char *what) {
    int n = 0;
    const wmat *wa[3] = {&a->tok_embd, &a->wcls, NULL}, *wb[3] = {&b->tok_embd, &b->wcls, NULL};
    for (int i = 0; i < 2; i++, n++)
        CHECK_MSG(wa[i]->type == wb[i]->type &&
                      !memcmp(wa[i]->data, wb[i]->data,
                              wtype_row_bytes(wa[i]->type, wa[i]->cols) * (size_t)wa[i]->rows),
                  "%s: %s differs (types %s, %s)", what, i ? "classifier" : "embedding",
                  wtype_name(wa[i]->type), wtype_name(wb[i]->type));
    for (int l = 0; l < a->cfg.n_layers; l++) {
        const model_layer *la = &a->layers[l], *lb = &b->layers[l];
        const wmat *ma[7] = {&la->wq, &la->wk, &la->wv, &la->wo, &la->w1, &la->w2, &la->w3};
        const wmat *mb[7] = {&lb->wq, &lb->wk, &lb->wv, &lb->wo, &lb->w1, &lb->w2, &lb->w3};
        for (int i = 0; i < 7; i++, n++)
            CHECK_MSG(ma[i]->type == mb[i]->type &&
                          !memcmp(ma[i]->data, mb[i]->data,
                                  wtype_row_bytes(ma[i]->type, ma[i]->cols) * (size_t)ma[i]->rows),
                      "%s: layer %d matrix %d differs (types %s, %s)", what, l, i,
                      wtype_name(ma[i]->type), wtype_name(mb[i]->type));
        CHECK(!memcmp(la->rms_att, lb->rms_att, sizeof(float) * (size_t)a->cfg.dim));
    }
    return n;
}

/* Logits of a few prompt tokens: bit-identical. */
static void same_logits(const model *a, const model *b, const char *what) {
    char err[ERR_LEN];
    fwd_ctx *fa = NULL, *fb = NULL;
    static float la[1 << 16], lb[1 << 16];
    if (fwd_new(&fa, a, NULL, 8, KERN_EXACT, err) != 0 ||
        fwd_new(&fb, b, NULL, 8, KERN_EXACT, err) != 0) {
        CHECK_MSG(0, "%s: %s", what, err);
        fwd_free(fa);
        return;
    }
    CHECK(fwd_prefill(fa, ids[0], lens[0], la, err) == 0 &&
          fwd_prefill(fb, ids[0], lens[0], lb, err) == 0);
    CHECK_MSG(!memcmp(la, lb, sizeof(float) * (size_t)a->cfg.vocab_size), "%s: logits differ",
              what);
    fwd_free(fa), fwd_free(fb);
}

/* src (named what, vocabulary tok) requantized to each type against convert's file. */
static void test_as_convert(const model *src, const char *tok, const char *what) {
    char err[ERR_LEN], label[160];
    convert_vocab *v;
    CHECK_MSG(convert_vocab_load(&v, tok, err) == 0, "%s", err);
    for (int i = 0; i < N_SCHEMES; i++) {
        snprintf(label, sizeof label, "%s self:%s", what, schemes[i]);
        convert_report rq, rc;
        model *q = NULL, *file = NULL;
        convert_opts o = {.fallback = CONVERT_FALLBACK_F16};
        CHECK(convert_scheme_parse(schemes[i], &o) == 0);
        const char *path = test_tmp("requant.gguf");
        CHECK_MSG(model_requantize(&q, src, &o, &rq, err) == 0, "%s: %s", label, err);
        CHECK_MSG(convert_gguf(src, v, &o, path, &rc, err) == 0 &&
                      model_open(&file, path, err) == 0,
                  "%s: %s", label, err);
        if (!q || !file) continue;
        int n = same_matrices(q, file, label);
        same_logits(q, file, label);
        CHECK_MSG(rq.n_matrices == rc.n_matrices && rq.n_fallback == rc.n_fallback &&
                      (!rq.n_fallback || (rq.fallback_type == rc.fallback_type &&
                                          !strcmp(rq.first_fallback, rc.first_fallback))),
                  "%s: report %d matrices, %d fell back (%s); convert's %d, %d (%s)", label,
                  rq.n_matrices, rq.n_fallback, rq.first_fallback, rc.n_matrices, rc.n_fallback,
                  rc.first_fallback);
        CHECK((src->wcls.data == src->tok_embd.data) == (q->wcls.data == q->tok_embd.data));
        if (q->tok_embd.type == src->tok_embd.type) CHECK(q->tok_embd.data == src->tok_embd.data);
        CHECK(strstr(q->path, src->path) && !strcmp(q->format, "requantized"));
        fprintf(stderr, "%s: %d matrices equal to convert's, %d stored as %s, %.0f KB\n", label, n,
                rq.n_fallback, rq.n_fallback ? wtype_name(rq.fallback_type) : "-",
                rq.weight_bytes / 1e3);
        model_close(q), model_close(file);
    }
    convert_vocab_free(v);
}

/* Draft-model decoders with a self draft: exact, and how often its tokens are accepted. */
static double accept_rate(const model *target, const char *scheme, const char *spec) {
    char err[ERR_LEN];
    model *q = NULL;
    CHECK_MSG(requant(&q, target, scheme, CONVERT_FALLBACK_F16, NULL, err) == 0, "%s", err);
    if (!q) return 0;
    dec_env env = {.target = target, .draft = q, .kernels = KERN_EXACT};
    long drafted = 0, accepted = 0, steps = 0, tokens = 0;
    char label[96];
    snprintf(label, sizeof label, "self:%s", scheme);
    for (int i = 0; i < N_PROMPTS; i++) {
        dec_stats st;
        CHECK(dec_check_exact(&env, spec, ids[i], lens[i], 128, NULL, &st, NULL, label));
        drafted += st.drafted, accepted += st.accepted;
        steps += st.target_steps, tokens += st.new_tokens;
    }
    double rate = (double)accepted / (drafted ? drafted : 1);
    fprintf(stderr, "%s draft self:%s: %.1f%% of drafted tokens accepted, %.2f tokens per step\n",
            spec, scheme, 100 * rate, (double)tokens / steps);
    model_close(q);
    return rate;
}

static void test_drafts(const model *m) {
    const char *specs[] = {"spec:gamma=4", "tree:shape=2-2-1", "ouroboros:W=4,beta=4,K=2"};
    for (int s = 0; s < 3; s++) {
        double q8 = accept_rate(m, "q8_0", specs[s]), q4 = accept_rate(m, "q4_0", specs[s]);
        CHECK_MSG(q4 < q8, "%s: self:q4_0 accepted %.3f, self:q8_0 %.3f", specs[s], q4, q8);
    }
    CHECK(accept_rate(m, "f32", "spec:gamma=4") == 1.0); /* the target itself */
    accept_rate(m, "Q4_K_M", "spec:gamma=4");
}

static void test_errors(const model *m) {
    char err[ERR_LEN];
    model *q = (model *)1;
    /* stories260K's ffn_down rows hold 172 values: q8_0 without a fallback refuses them */
    CHECK(requant(&q, m, "q8_0", CONVERT_FALLBACK_NONE, NULL, err) == -1 && !q);
    CHECK_MSG(strstr(err, "tensor 'blk.0.ffn_down.weight' has rows of 172 values, not a multiple "
                          "of 32: q8_0 cannot store it") != NULL,
              "%s", err);
    /* a non-finite weight: the synthetic model's heap is writable */
    model_config c;
    model *s = NULL;
    CHECK(synth_config("64,128,2,4,2,512,64", &c, err) == 0 && synth_model(&s, &c, 3, err) == 0);
    ((float *)s->layers[1].wv.data)[2 * 64 + 5] = NAN;
    CHECK(requant(&q, s, "q4_0", CONVERT_FALLBACK_F16, NULL, err) == -1 && !q);
    CHECK_MSG(strstr(err, "tensor 'blk.1.attn_v.weight' row 2 column 5 is nan") != NULL, "%s", err);
    model_close(s);
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs, *syn = NULL;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_requant");
    const char *tok = test_shared("models/tok512.bin");
    test_as_convert(s260, tok, "stories260K");
    test_as_convert(xs, tok, "llama2xs");
    model_config c; /* every block divides 256 and 512: no fallback; tied classifier */
    CHECK(synth_config("256,512,2,4,2,512,128", &c, err) == 0 &&
          synth_model(&syn, &c, 5, err) == 0);
    if (syn) test_as_convert(syn, tok, "synthetic 256-wide");
    model_close(syn);
    test_drafts(s260);
    test_errors(s260);
    model_close(s260), model_close(xs);
    return test_finish("test_requant");
}
