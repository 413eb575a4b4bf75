/* test_arch.c: the architectures of model/arch.h compute what llama.cpp computes for them.
 *  1. llama.cpp's own greedy decoding of decbench's small synthetic models (tests/data/
 *     greedy_llama_cpp.tsv: Llama 3.1's rope_freqs, a Mistral-Nemo-style head size, DeepSeek-
 *     Coder's linear RoPE scaling, Qwen2's biases and NEOX RoPE, Qwen3's per-head norms; tied and
 *     separate classifiers): decbench writes the same files (synth, seed 1, tok512.bin's
 *     vocabulary) and reproduces every id, and the logits within 1e-4;
 *  2. the loader binds what each row lists (biases, per-head norms, rope_freqs, head size from
 *     key_length, RoPE style and scaling) and refuses, naming it, what is missing or unknown;
 *  3. llama-quantize's mixes of each shape compute bit for bit what the f32 model of their
 *     dequantized weights computes;
 *  4. every decoder emits exactly greedy's tokens on each architecture (target and draft of the
 *     same shape, separate classifiers), over TinyStories prompts;
 *  5. drafts: vocabularies compared as llama.cpp compares them (tok_compatible) on the real
 *     vocabulary GGUFs of ../shared/tokenizer-vectors, padded as llama.cpp's converter pads them
 *     (Qwen2.5-0.5B's 151936 rows against Qwen2.5-7B's 152064); a draft with 128 rows fewer or
 *     more than its target writes logits of the target's width, and every decoder still emits
 *     greedy's tokens.
 * Under the sanitizers (testutil.h test_keep) each decoder of 4. and 5. runs on one of the two
 * prompts (rotating) instead of both; greedy still runs on both. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/convert/convert.h"
#include "model/loader/model_file.h"
#include "model/forward.h"
#include "model/convert/synth.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

/* A path in the scratch folder that stays valid (test_tmp's buffers rotate). */
static const char *keep_tmp(const char *name) {
    static char paths[32][4096];
    static int next;
    return strcpy(paths[next++ % 32], test_tmp(name));
}

/* Writes preset (with `untie`: a separate classifier) as GGUF in type (or mix) `type`, with
 * tok512.bin's vocabulary. */
static const char *write_preset(const char *preset, const char *type, uint64_t seed, int untie,
                                const char *out) {
    char err[ERR_LEN];
    synth_shape s;
    convert_opts o = {.name = preset};
    convert_vocab *v = NULL;
    const char *path = keep_tmp(out);
    int rc = synth_shape_parse(preset, &s, err) || convert_scheme_parse(type, &o) ||
             convert_vocab_load(&v, test_shared("models/tok512.bin"), err);
    if (!rc && untie) s.cfg.shared_classifier = 0;
    rc = rc || synth_write_gguf(path, &s, &o, v, seed, err);
    CHECK_MSG(rc == 0, "%s as %s: %s", preset, type, err);
    convert_vocab_free(v);
    return path;
}

static model *open_model(const char *path) {
    char err[ERR_LEN];
    model *m = NULL;
    CHECK_MSG(model_open(&m, path, err) == 0, "%s", err);
    return m;
}

/* ---- 1. llama.cpp's greedy decoding ------------------------------------------------------- */

enum { REF_STEPS = 40, REF_PROMPT = 40 };

typedef struct {
    char preset[32];
    int id[REF_STEPS];
    float logit[REF_STEPS][4]; /* top, ids 7, 100, 300 */
    int n;
} ref_run;

static int load_reference(ref_run *runs, int max, int *prompt) {
    FILE *f = fopen(DECBENCH_SOURCE_DIR "/tests/data/greedy_llama_cpp.tsv", "r");
    CHECK_MSG(f != NULL, "tests/data/greedy_llama_cpp.tsv is missing");
    if (!f) return 0;
    char line[1024];
    int n_runs = 0, n_prompt = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "# prompt: ", 10) == 0) {
            char *p = line + 10, *end;
            while (n_prompt < REF_PROMPT && (prompt[n_prompt] = (int)strtol(p, &end, 10), end != p))
                n_prompt++, p = end;
        }
        if (line[0] == '#') continue;
        char name[32];
        int step, id;
        float l[4];
        if (sscanf(line, "%31s %d %d %g %g %g %g", name, &step, &id, &l[0], &l[1], &l[2], &l[3]) !=
            7)
            continue;
        if (n_runs == 0 || strcmp(runs[n_runs - 1].preset, name) != 0) {
            if (n_runs == max) break;
            memset(&runs[n_runs], 0, sizeof runs[n_runs]);
            snprintf(runs[n_runs].preset, sizeof runs[n_runs].preset, "%s", name);
            n_runs++;
        }
        ref_run *r = &runs[n_runs - 1];
        if (step != r->n || r->n == REF_STEPS) continue;
        r->id[r->n] = id;
        memcpy(r->logit[r->n], l, sizeof l);
        r->n++;
    }
    fclose(f);
    CHECK_MSG(n_prompt == REF_PROMPT, "the reference's prompt has %d ids", n_prompt);
    return n_runs;
}

static void test_llama_cpp_reference(void) {
    static ref_run runs[8];
    int prompt[REF_PROMPT];
    int n_runs = load_reference(runs, 8, prompt);
    CHECK_MSG(n_runs == 5, "%d reference runs", n_runs);
    for (int k = 0; k < n_runs; k++) {
        const ref_run *r = &runs[k];
        char name[64], err[ERR_LEN];
        snprintf(name, sizeof name, "ref_%.31s.gguf", r->preset);
        model *m = open_model(write_preset(r->preset, "f32", 1, 0, name));
        fwd_ctx *f = NULL;
        if (!m || fwd_new(&f, m, NULL, 64, KERN_EXACT, err)) {
            CHECK_MSG(0, "%s: %s", r->preset, err);
            model_close(m);
            continue;
        }
        int V = m->cfg.vocab_size, tok, ids_ok = 0, zero = 0;
        float *l = malloc(sizeof(float) * (size_t)V), worst = 0.0f;
        CHECK(fwd_prefill(f, prompt, REF_PROMPT, l, err) == 0);
        for (int s = 0; s < r->n; s++) {
            tok = fwd_argmax(l, V);
            ids_ok += tok == r->id[s];
            const float got[4] = {l[tok], l[7], l[100], l[300]};
            for (int j = 0; j < 4; j++) worst = fmaxf(worst, fabsf(got[j] - r->logit[s][j]));
            tok = r->id[s]; /* follow llama.cpp's path, so one flip does not cascade */
            CHECK(fwd_eval(f, 1, &tok, NULL, NULL, &zero, 1, l, err) == 0 &&
                  fwd_commit(f, &zero, 1, err) == 0);
        }
        CHECK_MSG(ids_ok == r->n && r->n == REF_STEPS, "%s: %d of %d ids as llama.cpp's", r->preset,
                  ids_ok, r->n);
        CHECK_MSG(worst <= 1e-4f, "%s: logits differ from llama.cpp's by up to %g", r->preset,
                  (double)worst);
        fprintf(stderr, "%s (%s): %d of %d greedy ids as llama.cpp's, logits within %.2g\n",
                r->preset, m->arch->name, ids_ok, r->n, (double)worst);
        free(l);
        fwd_free(f);
        model_close(m);
    }
}

/* ---- 2. what the loader binds --------------------------------------------------------------- */

static void test_binding(void) {
    model *q2 = open_model(write_preset("tiny-qwen2", "f32", 1, 0, "b_qwen2.gguf"));
    model *q3 = open_model(write_preset("tiny-qwen3", "f32", 1, 0, "b_qwen3.gguf"));
    model *l3 = open_model(write_preset("tiny-llama3", "f32", 1, 0, "b_llama3.gguf"));
    model *mi = open_model(write_preset("tiny-mistral", "f32", 1, 0, "b_mistral.gguf"));
    model *ds = open_model(write_preset("tiny-dscoder", "f32", 1, 0, "b_dscoder.gguf"));
    if (!q2 || !q3 || !l3 || !mi || !ds) goto done;
    CHECK(q2->arch == arch_find("qwen2") && q2->cfg.rope == ROPE_NEOX);
    CHECK(q2->layers[1].bq && q2->layers[1].bk && q2->layers[1].bv && !q2->layers[1].q_norm);
    CHECK(q2->wcls.data == q2->tok_embd.data && q2->cfg.rope_theta == 1e6f);
    CHECK(q3->arch == arch_find("qwen3") && q3->cfg.rope == ROPE_NEOX && q3->cfg.head_size == 64);
    CHECK(q3->layers[0].wq.rows == 512 && q3->layers[0].wo.cols == 512 && q3->cfg.kv_dim == 256);
    CHECK(q3->layers[1].q_norm && q3->layers[1].k_norm && !q3->layers[1].bq);
    CHECK(q3->wcls.data != q3->tok_embd.data);
    CHECK(l3->arch == arch_find("llama") && l3->cfg.rope == ROPE_NORM && l3->rope_freqs);
    CHECK(l3->cfg.rope_theta == 5e5f && l3->cfg.rope_dim == 32 && !l3->layers[0].bq);
    /* rope_freqs: 1 for short waves, 8 for long ones, smoothed between (llama3 scaling) */
    CHECK(l3->rope_freqs[0] == 1.0f && l3->rope_freqs[15] == 8.0f);
    CHECK(mi->cfg.head_size == 48 && mi->layers[0].wq.rows == 384 && mi->cfg.rope_dim == 48);
    CHECK(ds->cfg.rope_factor == 4.0f && ds->cfg.rope_theta == 1e5f && ds->cfg.norm_eps == 1e-6f);
    /* every tensor of the file is bound once: the weight bytes are the file's tensor bytes */
    const model *all[] = {q2, q3, l3, mi, ds};
    for (int i = 0; i < 5; i++) {
        char err[ERR_LEN];
        gguf *g = NULL;
        uint64_t bytes = 0;
        CHECK_MSG(gguf_open(&g, all[i]->path, err) == 0, "%s", err);
        for (int t = 0; g && t < gguf_tensor_count(g); t++) bytes += gguf_tensor_at(g, t)->nbytes;
        CHECK_MSG(bytes == model_weight_bytes(all[i]), "%s: %llu tensor bytes, %zu bound",
                  all[i]->path, (unsigned long long)bytes, model_weight_bytes(all[i]));
        gguf_close(g);
    }
done:
    model_close(q2), model_close(q3), model_close(l3), model_close(mi), model_close(ds);
}

/* A copy of `src` with a GGUF edited: one tensor dropped, or one key's value replaced (u32 or
 * string), or general.architecture changed. */
typedef struct {
    const char *drop_tensor, *key, *str;
    uint32_t u32;
} edit;

static const char *edited(const char *src, edit e) {
    char err[ERR_LEN];
    gguf *g = NULL;
    const char *out = keep_tmp("edited.gguf");
    CHECK_MSG(gguf_open(&g, src, err) == 0, "%s", err);
    if (!g) return out;
    gguf_writer *w = gguf_writer_new(0);
    for (int i = 0; i < gguf_kv_count(g); i++) {
        const char *k = gguf_kv_key(g, i);
        if (!e.key || strcmp(k, e.key) != 0) gguf_writer_copy_kv(w, g, i);
    }
    if (e.key && e.str) gguf_writer_add_str(w, e.key, e.str);
    if (e.key && !e.str) gguf_writer_add_u32(w, e.key, e.u32);
    for (int i = 0; i < gguf_tensor_count(g); i++) {
        const gguf_tensor *t = gguf_tensor_at(g, i);
        if (e.drop_tensor && strcmp(t->name, e.drop_tensor) == 0) continue;
        gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes);
    }
    CHECK_MSG(gguf_writer_write(w, out, err) == 0, "%s", err);
    gguf_writer_free(w);
    gguf_close(g);
    return out;
}

static void expect_refused(const char *path, const char *needle) {
    char err[ERR_LEN] = "";
    model *m = NULL;
    CHECK_MSG(model_open(&m, path, err) == -1 && m == NULL, "opened (expected '%s')", needle);
    CHECK_MSG(strstr(err, needle) && !strchr(err, '\n'), "message '%s' lacks '%s'", err, needle);
    model_close(m);
}

static void test_refusals(void) {
    const char *q2 = write_preset("tiny-qwen2", "f32", 1, 0, "r_qwen2.gguf");
    const char *q3 = write_preset("tiny-qwen3", "f32", 1, 0, "r_qwen3.gguf");
    expect_refused(edited(q2, (edit){.drop_tensor = "blk.1.attn_k.bias"}),
                   "tensor 'blk.1.attn_k.bias' is missing");
    expect_refused(edited(q3, (edit){.drop_tensor = "blk.0.attn_q_norm.weight"}),
                   "tensor 'blk.0.attn_q_norm.weight' is missing");
    /* a Qwen3 file labelled qwen2: its keys are qwen3.* */
    expect_refused(edited(q3, (edit){.key = "general.architecture", .str = "qwen2"}),
                   "key 'qwen2.context_length' is missing");
    expect_refused(edited(q2, (edit){.key = "general.architecture", .str = "gemma2"}),
                   "architecture 'gemma2' is not supported (only 'llama', 'qwen2', 'qwen3')");
    expect_refused(edited(q3, (edit){.key = "qwen3.attention.value_length", .u32 = 32}),
                   "qwen3.attention.value_length = 32 differs from the key head size 64");
    expect_refused(edited(q2, (edit){.key = "qwen2.rope.scaling.type", .str = "longrope"}),
                   "qwen2.rope.scaling.type = 'longrope' is not supported");
    expect_refused(edited(q2, (edit){.key = "qwen2.attention.key_length", .u32 = 33}),
                   "head size 33 is odd");
    expect_refused(edited(q2, (edit){.key = "qwen2.attention.key_length", .u32 = 4096}),
                   "head size 4096 x 4 heads, expected 1..1024");
}

/* ---- 3. quantized mixes are exact --------------------------------------------------------- */

/* Logits of every row of a fixed 24-token chain. */
static float *logits_of(const model *m) {
    char err[ERR_LEN];
    enum { T = 24 };
    int tokens[T];
    for (int i = 0; i < T; i++) tokens[i] = i == 0 ? 1 : (i * 37 + 11) % m->cfg.vocab_size;
    fwd_ctx *f;
    float *out = malloc(sizeof(float) * T * (size_t)m->cfg.vocab_size);
    CHECK_MSG(fwd_new(&f, m, NULL, T, KERN_EXACT, err) == 0, "%s", err);
    CHECK_MSG(fwd_eval(f, T, tokens, NULL, NULL, NULL, T, out, err) == 0, "%s", err);
    fwd_free(f);
    return out;
}

static void test_mix_exact(const char *preset, const char *mix) {
    char err[ERR_LEN], name[64];
    snprintf(name, sizeof name, "x_%s_%s.gguf", preset, mix);
    const char *qp = write_preset(preset, mix, 3, 0, name);
    model *q = open_model(qp), *f = NULL;
    convert_vocab *v = NULL;
    convert_opts o = {.type = WTYPE_F32};
    const char *fp = keep_tmp("x_deq.gguf");
    if (q && convert_vocab_load(&v, qp, err) == 0 && convert_gguf(q, v, &o, fp, NULL, err) == 0)
        f = open_model(fp);
    CHECK_MSG(f != NULL, "%s %s: %s", preset, mix, err);
    if (q && f) {
        float *a = logits_of(q), *b = logits_of(f);
        CHECK_MSG(memcmp(a, b, sizeof(float) * 24 * (size_t)q->cfg.vocab_size) == 0,
                  "%s %s: logits differ from its dequantized f32 model's", preset, mix);
        free(a), free(b);
    }
    convert_vocab_free(v);
    model_close(q), model_close(f);
}

/* ---- 4. every decoder equals greedy ------------------------------------------------------- */

#define N_PROMPTS 2
#define MAX_NEW 64
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

static const char *all_specs[] = {
    "greedy", "jacobi:window=8", "lookahead:W=5,N=3,G=5",       "lookahead",
    "pld",    "spec:gamma=4",    "ouroboros:gamma=4,W=4,beta=4",
    "skip:attn=0,mlp=1"};

static void test_decoders(const char *preset, const char *type, int salt) {
    char tn[64], dn[64];
    snprintf(tn, sizeof tn, "d_%s_t.gguf", preset);
    snprintf(dn, sizeof dn, "d_%s_d.gguf", preset);
    model *t = open_model(write_preset(preset, type, 11, 1, tn));
    model *d = open_model(write_preset(preset, type, 12, 1, dn));
    if (!t || !d) goto done;
    dec_env env = {.target = t, .draft = d, .kernels = KERN_EXACT};
    static int want[DEC_CHECK_MAX_OUT];
    int runs = 0, distinct = 0, seen[512] = {0};
    for (int i = 0; i < N_PROMPTS; i++) {
        int n = dec_check_greedy(&env, ids[i], lens[i], MAX_NEW, want);
        for (int k = 0; k < n; k++) distinct += want[k] < 512 && !seen[want[k]]++;
        for (size_t s = 0; s < sizeof all_specs / sizeof all_specs[0]; s++) {
            if (!test_keep(((long)salt * 16 + (long)s) * N_PROMPTS + i, N_PROMPTS)) continue;
            char label[128];
            snprintf(label, sizeof label, "%s %s prompt %d", preset, type, i);
            runs += dec_check_vs(&env, all_specs[s], ids[i], lens[i], MAX_NEW, want, n, NULL, NULL,
                                 NULL, label);
        }
    }
    CHECK_MSG(distinct >= 8, "%s: greedy used only %d distinct tokens", preset, distinct);
    fprintf(stderr, "%s %s: %d decoder runs equal greedy (%d distinct tokens)\n", preset, type,
            runs, distinct);
done:
    model_close(t), model_close(d);
}

/* ---- 5. drafts ----------------------------------------------------------------------------- */

/* A vocabulary-only GGUF: `src`'s vocabulary padded to n tokens, with token `poke` (if >= 0)
 * renamed. */
static const char *vocab_file(const char *src, int n, int poke, const char *out) {
    char err[ERR_LEN];
    gguf *g = NULL;
    const char *path = keep_tmp(out);
    convert_vocab *v = NULL;
    CHECK_MSG(convert_vocab_load(&v, src, err) == 0, "%s", err);
    if (!v) return path;
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "general.architecture", "llama");
    CHECK(convert_vocab_write(v, w, convert_vocab_eos(v), n) == 0);
    CHECK_MSG(gguf_writer_write(w, path, err) == 0, "%s", err);
    gguf_writer_free(w);
    convert_vocab_free(v);
    if (poke < 0) return path;
    /* rename token poke to "<poked>": rewrite the tokens array */
    CHECK_MSG(gguf_open(&g, path, err) == 0, "%s", err);
    uint64_t count = 0;
    gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &count, err);
    const char **tok = malloc(sizeof *tok * count);
    uint64_t *len = malloc(sizeof *len * count);
    for (uint64_t i = 0; i < count; i++) {
        gguf_str str;
        gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &str, err);
        tok[i] = (uint64_t)poke == i ? "<poked>" : str.ptr;
        len[i] = (uint64_t)poke == i ? 7 : str.len;
    }
    w = gguf_writer_new(0);
    for (int i = 0; i < gguf_kv_count(g); i++) {
        const char *k = gguf_kv_key(g, i);
        if (strcmp(k, "tokenizer.ggml.tokens") == 0)
            gguf_writer_add_array(w, k, GGUF_STRING, tok, len, count);
        else
            gguf_writer_copy_kv(w, g, i);
    }
    const char *poked = keep_tmp("poked.gguf");
    CHECK_MSG(gguf_writer_write(w, poked, err) == 0, "%s", err);
    gguf_writer_free(w);
    gguf_close(g);
    free(tok), free(len);
    return poked;
}

static void expect_compat(const char *target, const char *draft, const char *needle) {
    char err[ERR_LEN] = "";
    tok *a = NULL, *b = NULL;
    CHECK_MSG(tok_load(&a, target, err) == 0 && tok_load(&b, draft, err) == 0, "%s", err);
    int rc = a && b ? tok_compatible(a, b, draft, err) : -1;
    if (!needle)
        CHECK_MSG(rc == 0, "%s as a draft for %s: %s", draft, target, err);
    else
        CHECK_MSG(rc == -1 && strstr(err, needle) && strstr(err, draft) && !strchr(err, '\n'),
                  "%s as a draft for %s: '%s' lacks '%s'", draft, target, err, needle);
    tok_free(a), tok_free(b);
}

static void test_vocab_compat(void) {
    char qwen2[4096], bpe[4096], spm[4096], gpt2[4096], dsc[4096], dsl[4096];
    strcpy(qwen2, test_shared("tokenizer-vectors/ggml-vocab-qwen2.gguf"));
    strcpy(bpe, test_shared("tokenizer-vectors/ggml-vocab-llama-bpe.gguf"));
    strcpy(spm, test_shared("tokenizer-vectors/ggml-vocab-llama-spm.gguf"));
    strcpy(gpt2, test_shared("tokenizer-vectors/ggml-vocab-gpt-2.gguf"));
    strcpy(dsc, test_shared("tokenizer-vectors/ggml-vocab-deepseek-coder.gguf"));
    strcpy(dsl, test_shared("tokenizer-vectors/ggml-vocab-deepseek-llm.gguf"));
    /* Qwen2.5-0.5B's and -7B's vocabularies: the same 151669 tokens padded to their rows */
    const char *q05 = vocab_file(qwen2, 151936, -1, "v_q05.gguf");
    const char *q7 = vocab_file(qwen2, 152064, -1, "v_q7.gguf");
    expect_compat(q7, q05, NULL);
    expect_compat(q05, q7, NULL);
    expect_compat(qwen2, q7, "against the target's 151669: they differ by 395");
    expect_compat(q7, vocab_file(qwen2, 151935, -1, "v_q05m.gguf"), "differ by 129");
    /* an added token (no merge makes it) renamed */
    expect_compat(q7, vocab_file(qwen2, 151936, 151650, "v_poke.gguf"),
                  "token 151650 is '<poked>' in the draft");
    expect_compat(q05, bpe, "special tokens differ"); /* Llama-3 drafting for Qwen */
    expect_compat(spm, gpt2, "byte-level BPE");
    expect_compat(dsc, dsl, "special tokens differ");
    expect_compat(dsc, dsc, NULL);
    /* the TinyStories vocabulary: stories260K and llama2xs converted with it share it */
    const char *s260 = keep_tmp("c_s260.gguf"), *xs = keep_tmp("c_xs.gguf");
    char err[ERR_LEN];
    model *a = NULL, *b = NULL;
    convert_vocab *v = NULL;
    convert_opts o = {.type = WTYPE_F32};
    CHECK_MSG(model_open(&a, test_shared("models/stories260K.bin"), err) == 0 &&
                  model_open(&b, test_shared("models/llama2xs.bin"), err) == 0 &&
                  convert_vocab_load(&v, test_shared("models/tok512.bin"), err) == 0 &&
                  convert_gguf(a, v, &o, s260, NULL, err) == 0 &&
                  convert_gguf(b, v, &o, xs, NULL, err) == 0,
              "%s", err);
    convert_vocab_free(v);
    model_close(a), model_close(b);
    expect_compat(s260, xs, NULL);
    expect_compat(s260, vocab_file(s260, 512, 300, "v_s260_poke.gguf"), "token 300");
    expect_compat(spm, s260, "special tokens differ"); /* decbench writes EOS 1 for them */
}

/* Synthetic target and draft whose vocabularies differ by padding rows: target_v rows for the
 * target (rows past 512 get zero classifier rows: padding, never predicted, as in trained
 * models), draft_v for the draft (padded to the target's width, or cut to it). */
static void test_padded_draft(int target_v, int draft_v, int salt) {
    char err[ERR_LEN], cfg[64];
    model *td = NULL, *dd = NULL;
    snprintf(cfg, sizeof cfg, "64,128,2,4,2,%d,256", target_v);
    model *t = dec_check_synth_untied(cfg, 21, &td);
    snprintf(cfg, sizeof cfg, "64,128,2,4,2,%d,256", draft_v);
    model *d = dec_check_synth_untied(cfg, 22, &dd);
    if (!t || !d) goto done;
    float *cls = (float *)t->wcls.data; /* the donor's heap embedding: writable */
    memset(cls + (size_t)512 * 64, 0, sizeof(float) * 64 * (size_t)(target_v - 512));
    model_pad_logits(d, target_v);
    fwd_ctx *f = NULL;
    float *l = malloc(sizeof(float) * (size_t)target_v);
    int one = 1;
    CHECK_MSG(fwd_new(&f, d, NULL, 4, KERN_EXACT, err) == 0 &&
                  fwd_eval(f, 1, &one, NULL, NULL, NULL, 1, l, err) == 0,
              "%s", err);
    for (int i = draft_v; i < target_v; i++) CHECK(l[i] == -FLT_MAX);
    fwd_free(f), free(l);
    dec_env env = {.target = t, .draft = d, .kernels = KERN_EXACT};
    static int want[DEC_CHECK_MAX_OUT];
    int runs = 0;
    for (int i = 0; i < N_PROMPTS; i++) {
        int n = dec_check_greedy(&env, ids[i], lens[i], MAX_NEW, want);
        for (size_t s = 0; s < sizeof all_specs / sizeof all_specs[0]; s++) {
            if (!test_keep(((long)salt * 16 + (long)s) * N_PROMPTS + i, N_PROMPTS)) continue;
            char label[128];
            snprintf(label, sizeof label, "target %d, draft %d rows, prompt %d", target_v, draft_v,
                     i);
            runs += dec_check_vs(&env, all_specs[s], ids[i], lens[i], MAX_NEW, want, n, NULL, NULL,
                                 NULL, label);
        }
    }
    fprintf(stderr, "draft of %d rows for a target of %d: %d decoder runs equal greedy\n", draft_v,
            target_v, runs);
done:
    model_close(t), model_close(td), model_close(d), model_close(dd);
}

int main(void) {
    test_llama_cpp_reference();
    test_binding();
    test_refusals();
    const char *presets[] = {"tiny-qwen2", "tiny-qwen3", "tiny-llama3", "tiny-mistral",
                             "tiny-dscoder"};
    test_mix_exact("tiny-qwen2", "Q4_K_M");
    test_mix_exact("tiny-qwen3", "Q4_0");
    test_mix_exact("tiny-llama3", "Q6_K");
    test_mix_exact("tiny-mistral", "Q4_K_M"); /* 384-wide rows: q5_0 and q8_0 fallbacks */
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_arch");
    for (int i = 0; i < 5; i++) test_decoders(presets[i], i == 1 ? "Q4_K_M" : "f32", i);
    test_vocab_compat();
    test_padded_draft(640, 512, 5);
    test_padded_draft(512, 640, 6);
    return test_finish("test_arch");
}
