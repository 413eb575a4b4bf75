/* test_convert.c: model/convert (llama2.c or GGUF models to GGUF files).
 *  1. quantizers: f16/bf16/q8_0 round to nearest with ties to even; q8_0 blocks map max|x| to
 *     127 and dequantize within about half a step;
 *  2. stories260K -> f32 GGUF: bit-identical logits (memcmp) and the same greedy tokens, end
 *     token included; the file has llama.cpp's keys, tensor names, token types and pieces;
 *  3. q8_0 (stories260K, whose ffn_down rows of 172 values fall back to f16, and an untied
 *     synthetic model of 32-multiple widths) and f16: every decoder emits exactly greedy's
 *     tokens ON THAT SAME model, over TinyStories prompts;
 *  4. a q8_0 model computes bit for bit what the f32 model holding its dequantized weights
 *     computes (q8_0 -> f32 conversion, logits memcmp); q8_0 -> f32 -> q8_0 gives the same bytes;
 *     the same for q4_0, q4_k and q6_k written by convert from a synthetic model;
 *  5. the vocabulary: the GGUF's encodes and decodes as tok512.bin does; tok32000.bin converts
 *     to exactly the pieces, scores and types of llama.cpp's own Llama vocabulary GGUF;
 *  6. llama-quantize's mixes: converting its own files (kq_*, xs_*) with --type Q4_0, Q4_K_M,
 *     Q6_K, Q8_0 stores every tensor in the type llama-quantize chose;
 *  7. errors: q8_0 without fallback names the tensor, vocabulary mismatch, non-finite and
 *     out-of-range weights, unwritable outputs; nothing is left behind. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/convert/convert.h"
#include "model/loader/model_file.h"
#include "model/kernels/kernels.h"
#include "model/convert/synth.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

#define N_PROMPTS 3
#define MAX_NEW 96
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* A path in the scratch folder that stays valid (test_tmp's buffers rotate). */
static const char *keep_tmp(const char *name) {
    static char paths[32][4096];
    static int next;
    return strcpy(paths[next++ % 32], test_tmp(name));
}

/* Converts the model file src (with vocabulary tok, NULL: src's own) to tmp/<out>. */
static const char *convert(const char *src, const char *tok, wtype t, const char *out,
                           convert_report *rep) {
    char err[ERR_LEN];
    model *m = NULL;
    convert_vocab *v = NULL;
    convert_opts o = {.type = t, .name = out};
    const char *path = keep_tmp(out);
    int rc = model_open(&m, src, err) || convert_vocab_load(&v, tok ? tok : src, err) ||
             convert_gguf(m, v, &o, path, rep, err);
    CHECK_MSG(rc == 0, "%s -> %s: %s", src, out, err);
    convert_vocab_free(v);
    model_close(m);
    return path;
}

/* Converts src (a GGUF of llama-quantize's) with the mix `name`: the output holds every tensor
 * in the type the input has, tensor by tensor. */
static void test_mix_layout(const char *src, const char *mix) {
    char err[ERR_LEN];
    model *m = NULL;
    convert_vocab *v = NULL;
    convert_opts o = {.name = "mix"};
    CHECK(convert_scheme_parse(mix, &o) == 0 && o.mix != NULL);
    const char *path = keep_tmp("mix.gguf");
    gguf *a = NULL, *b = NULL;
    int rc = model_open(&m, test_shared(src), err) ||
             convert_vocab_load(&v, test_shared(src), err) ||
             convert_gguf(m, v, &o, path, NULL, err) || gguf_open(&a, test_shared(src), err) ||
             gguf_open(&b, path, err);
    CHECK_MSG(rc == 0, "%s as %s: %s", src, mix, err);
    int same = 0, n = a ? gguf_tensor_count(a) : 0;
    for (int i = 0; b && i < n; i++) {
        const gguf_tensor *t = gguf_tensor_at(a, i), *u = gguf_find_tensor(b, t->name);
        CHECK_MSG(u && u->type == t->type, "%s as %s: %s is %s, llama-quantize's %s", src, mix,
                  t->name, u ? gguf_type_name(u->type) : "missing", gguf_type_name(t->type));
        same += u && u->type == t->type;
    }
    CHECK(b && gguf_tensor_count(b) == n && n > 0);
    fprintf(stderr, "%s: %d of %d tensor types as llama-quantize's %s\n", src, same, n, mix);
    gguf_close(a), gguf_close(b);
    convert_vocab_free(v);
    model_close(m);
}

static model *open_model(const char *path) {
    char err[ERR_LEN];
    model *m = NULL;
    CHECK_MSG(model_open(&m, path, err) == 0, "%s", err);
    return m;
}

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

static void same_logits(const model *a, const model *b, const char *what) {
    float *la = logits_of(a), *lb = logits_of(b);
    CHECK_MSG(memcmp(la, lb, sizeof(float) * 24 * (size_t)a->cfg.vocab_size) == 0,
              "%s: logits differ", what);
    free(la);
    free(lb);
}

static void test_quantizers(void) {
    float x[32];
    uint16_t h[4];
    float ties[4] = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f};
    convert_row_f16(ties, h, 4); /* halfway between f16 neighbours: to the even one */
    CHECK(h[0] == 0x3c00 && h[1] == 0x3c02);
    convert_row_bf16(ties + 2, h, 2);
    CHECK(h[0] == 0x3f80 && h[1] == 0x3f82);
    /* max|x| = 127: d = 1, so x * (1/d) = x and the .5 values are exact ties. */
    float in[8] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -3.5f, 127.0f, -126.4f};
    signed char want[8] = {0, 2, 2, 0, -2, -4, 127, -126};
    for (int j = 0; j < 32; j++) x[j] = j < 8 ? in[j] : 0.0f;
    unsigned char blk[34];
    convert_row_q8_0(x, blk, 32);
    uint16_t d;
    memcpy(&d, blk, 2);
    CHECK(d == 0x3c00);
    for (int j = 0; j < 8; j++) CHECK_MSG((signed char)blk[2 + j] == want[j], "q[%d]", j);
    for (int j = 0; j < 32; j++) x[j] = 0.0f;
    convert_row_q8_0(x, blk, 32);
    CHECK(blk[0] == 0 && blk[1] == 0 && blk[2] == 0 && blk[33] == 0);
    /* Pseudo-random values: the largest maps to +-127, all dequantize within ~half a step. */
    float worst = 0;
    for (int j = 0; j < 32; j++) x[j] = sinf(j * 1.7f + 0.3f) * (j == 9 ? 3.0f : 0.01f);
    convert_row_q8_0(x, blk, 32);
    memcpy(&d, blk, 2);
    float step = wtype_f16_to_f32(d);
    CHECK((signed char)blk[2 + 9] == 127 || (signed char)blk[2 + 9] == -127);
    for (int j = 0; j < 32; j++) worst = fmaxf(worst, fabsf(x[j] - step * (signed char)blk[2 + j]));
    CHECK_MSG(worst <= 0.55f * step, "worst error %g of a step %g", worst, step);
}

/* The file's metadata and tensors are laid out as llama.cpp's. */
static void check_layout(const char *path, const char *type_of_q, const char *type_of_down) {
    char err[ERR_LEN];
    gguf *g;
    CHECK_MSG(gguf_open(&g, path, err) == 0, "%s", err);
    if (!g) return;
    const char *s;
    uint32_t u;
    gguf_str piece;
    CHECK(gguf_get_str(g, "general.architecture", &s, err) == 0 && strcmp(s, "llama") == 0);
    CHECK(gguf_get_str(g, "tokenizer.ggml.model", &s, err) == 0 && strcmp(s, "llama") == 0);
    CHECK(gguf_get_u32(g, "llama.feed_forward_length", &u, err) == 0 && u == 172);
    CHECK(gguf_get_u32(g, "tokenizer.ggml.eos_token_id", &u, err) == 0 && u == 1);
    int32_t types[512];
    CHECK(gguf_get_arr_i32(g, "tokenizer.ggml.token_type", types, 512, err) == 0);
    CHECK(types[0] == 2 && types[1] == 3 && types[2] == 3 && types[3] == 6 && types[300] == 1);
    CHECK(gguf_get_arr_str(g, "tokenizer.ggml.tokens", 1, &piece, err) == 0 && piece.len == 3 &&
          memcmp(piece.ptr, "<s>", 3) == 0);
    CHECK(gguf_get_arr_str(g, "tokenizer.ggml.tokens", 259, &piece, err) == 0 && piece.len == 4 &&
          memcmp(piece.ptr, "\xe2\x96\x81t", 4) == 0);   /* " t" */
    CHECK(gguf_find_tensor(g, "output.weight") == NULL); /* tied, as in the checkpoint */
    CHECK(gguf_tensor_count(g) == 1 + 5 * 9 + 1);
    const gguf_tensor *q = gguf_find_tensor(g, "blk.4.attn_q.weight"),
                      *down = gguf_find_tensor(g, "blk.0.ffn_down.weight"),
                      *norm = gguf_find_tensor(g, "blk.2.ffn_norm.weight");
    CHECK(q && strcmp(gguf_type_name(q->type), type_of_q) == 0);
    CHECK(down && strcmp(gguf_type_name(down->type), type_of_down) == 0 && down->ne[0] == 172);
    CHECK(norm && norm->type == GGUF_TENSOR_F32 && norm->n_dims == 1);
    gguf_close(g);
}

static void test_f32_identical(const char *f32_path) {
    model *a = open_model(test_shared("models/stories260K.bin")), *b = open_model(f32_path);
    if (!a || !b) goto done;
    check_layout(f32_path, "F32", "F32");
    CHECK(b->wcls.data == b->tok_embd.data && b->cfg.end_id == a->cfg.end_id);
    same_logits(a, b, "stories260K f32 GGUF");
    int ended = 0;
    for (int i = 0; i < N_PROMPTS; i++) {
        static int ga[DEC_CHECK_MAX_OUT], gb[DEC_CHECK_MAX_OUT];
        dec_env ea = {.target = a}, eb = {.target = b};
        int na = dec_check_greedy(&ea, ids[i], lens[i], 400, ga);
        int nb = dec_check_greedy(&eb, ids[i], lens[i], 400, gb);
        CHECK_MSG(na == nb && na > 0 && memcmp(ga, gb, sizeof(int) * (size_t)na) == 0,
                  "prompt %d: greedy differs (%d vs %d tokens)", i, na, nb);
        ended += na > 0 && na < 400 && ga[na - 1] == a->cfg.end_id;
    }
    CHECK_MSG(ended > 0, "no story ended: the end token was not exercised");
done:
    model_close(a);
    model_close(b);
}

/* Every decoder equals greedy on target (draft for spec and ouroboros). */
static void test_decoders(const char *target, const char *draft, const char **specs, int n_specs,
                          kern_mode mode, const char *what) {
    model *t = open_model(target), *d = open_model(draft);
    if (!t || !d) goto done;
    dec_env env = {.target = t, .draft = d, .kernels = mode};
    static int want[DEC_CHECK_MAX_OUT];
    int distinct = 0, seen[512] = {0};
    for (int i = 0; i < N_PROMPTS; i++) {
        int n = dec_check_greedy(&env, ids[i], lens[i], MAX_NEW, want);
        for (int k = 0; k < n; k++) distinct += want[k] < 512 && !seen[want[k]]++;
        for (int s = 0; s < n_specs; s++) {
            char label[128];
            snprintf(label, sizeof label, "%s prompt %d", what, i);
            dec_check_vs(&env, specs[s], ids[i], lens[i], MAX_NEW, want, n, NULL, NULL, NULL,
                         label);
        }
    }
    CHECK_MSG(distinct >= 20, "%s: greedy used only %d distinct tokens", what, distinct);
done:
    model_close(t);
    model_close(d);
}

static const char *all_specs[] = {
    "greedy", "jacobi:window=8", "lookahead:W=5,N=3,G=5",       "lookahead",
    "pld",    "spec:gamma=4",    "ouroboros:gamma=4,W=4,beta=4"};

/* q8_0 (or f16, bf16) -> f32 holds the dequantized weights: same logits; and converted back to
 * type t: the same bytes. */
static void test_dequantized(const char *q8_path, wtype t, const char *label) {
    char name[64], back[64];
    snprintf(name, sizeof name, "%s_deq_f32.gguf", label);
    snprintf(back, sizeof back, "%s_requant.gguf", label);
    const char *f32_path = convert(q8_path, NULL, WTYPE_F32, name, NULL);
    const char *again = convert(f32_path, NULL, t, back, NULL);
    model *q = open_model(q8_path), *f = open_model(f32_path);
    if (q && f) {
        CHECK(f->main_type == WTYPE_F32 && q->main_type == t);
        same_logits(q, f, label);
    }
    model_close(q);
    model_close(f);
    char err[ERR_LEN];
    gguf *a = NULL, *b = NULL;
    CHECK_MSG(gguf_open(&a, q8_path, err) == 0 && gguf_open(&b, again, err) == 0, "%s", err);
    for (int i = 0; a && b && i < gguf_tensor_count(a); i++) {
        const gguf_tensor *ta = gguf_tensor_at(a, i), *tb = gguf_find_tensor(b, ta->name);
        CHECK_MSG(tb && tb->type == ta->type && tb->nbytes == ta->nbytes &&
                      memcmp(ta->data, tb->data, (size_t)ta->nbytes) == 0,
                  "%s: re-quantized %s differs", label, ta->name);
    }
    gguf_close(a);
    gguf_close(b);
}

static void test_vocab(const char *gguf_path) {
    char err[ERR_LEN];
    tok *a = NULL, *b = NULL;
    CHECK_MSG(tok_load(&a, test_shared("models/tok512.bin"), err) == 0, "%s", err);
    CHECK_MSG(tok_load(&b, gguf_path, err) == 0, "%s", err);
    if (!a || !b) goto done;
    CHECK(tok_vocab_size(b) == 512 && tok_bos(b) == 1 && tok_add_bos(b) == 1);
    const char *texts[] = {"Once upon a time",      "Tom and Sue: h\xc3\xa9llo \xf0\x9f\x99\x82",
                           "  two leading spaces",  "a\nb\tc",
                           "<s> is text, not BOS",  "",
                           "\xff\xfe invalid UTF-8"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        int ia[128], ib[128], na = 0, nb = 0;
        CHECK(tok_encode(a, texts[i], 1, ia, &na, err) == 0);
        CHECK(tok_encode(b, texts[i], 1, ib, &nb, err) == 0);
        CHECK_MSG(na == nb && memcmp(ia, ib, sizeof(int) * (size_t)na) == 0, "'%s'", texts[i]);
    }
    for (int id = 0; id < 512; id++)
        for (int prev = -1; prev <= 1; prev += 2) {
            char pa[TOK_PIECE_MAX], pb[TOK_PIECE_MAX];
            int la = tok_decode(a, prev, id, pa, sizeof pa),
                lb = tok_decode(b, prev, id, pb, sizeof pb);
            CHECK_MSG(la == lb && memcmp(pa, pb, (size_t)la) == 0, "decode %d after %d", id, prev);
        }
done:
    tok_free(a);
    tok_free(b);
}

/* tok32000.bin (llama2.c's export of Llama 2's vocabulary) converts to exactly the arrays of
 * llama.cpp's ggml-vocab-llama-spm.gguf (written by its own converter from tokenizer.model). */
static void test_vocab_32000(void) {
    char err[ERR_LEN];
    model_config c;
    model *m = NULL;
    convert_vocab *v = NULL;
    gguf *ours = NULL, *ref = NULL;
    const char *path = test_tmp("vocab32000.gguf");
    convert_opts o = {.type = WTYPE_F16};
    CHECK(synth_config("32,64,1,2,2,32000,32", &c, err) == 0);
    CHECK_MSG(
        synth_model(&m, &c, 1, err) == 0 &&
            convert_vocab_load(&v, test_shared("models/tok32000.bin"), err) == 0 &&
            convert_gguf(m, v, &o, path, NULL, err) == 0 && gguf_open(&ours, path, err) == 0 &&
            gguf_open(&ref, test_shared("tokenizer-vectors/ggml-vocab-llama-spm.gguf"), err) == 0,
        "%s", err);
    if (!ref) goto done;
    static float sa[32000], sb[32000];
    static int32_t ta[32000], tb[32000];
    CHECK(gguf_get_arr_f32(ours, "tokenizer.ggml.scores", sa, 32000, err) == 0 &&
          gguf_get_arr_f32(ref, "tokenizer.ggml.scores", sb, 32000, err) == 0 &&
          memcmp(sa, sb, sizeof sa) == 0);
    CHECK(gguf_get_arr_i32(ours, "tokenizer.ggml.token_type", ta, 32000, err) == 0 &&
          gguf_get_arr_i32(ref, "tokenizer.ggml.token_type", tb, 32000, err) == 0 &&
          memcmp(ta, tb, sizeof ta) == 0);
    int differ = 0;
    for (uint64_t i = 0; i < 32000; i++) {
        gguf_str x, y;
        gguf_get_arr_str(ours, "tokenizer.ggml.tokens", i, &x, err);
        gguf_get_arr_str(ref, "tokenizer.ggml.tokens", i, &y, err);
        differ += x.len != y.len || memcmp(x.ptr, y.ptr, (size_t)x.len) != 0;
    }
    CHECK_MSG(differ == 0, "%d pieces differ from llama.cpp's", differ);
done:
    gguf_close(ours);
    gguf_close(ref);
    convert_vocab_free(v);
    model_close(m);
}

/* conversion of m fails with an error containing needle, and leaves no file behind. */
static void expect_fail(const model *m, const char *tok_path, wtype t, convert_fallback fb,
                        const char *out, const char *needle) {
    char err[ERR_LEN] = "", tmp[4200];
    convert_vocab *v = NULL;
    convert_opts o = {.type = t, .fallback = fb};
    CHECK_MSG(convert_vocab_load(&v, tok_path, err) == 0, "%s", err);
    CHECK_MSG(v && convert_gguf(m, v, &o, out, NULL, err) == -1, "%s: converted", needle);
    CHECK_MSG(strstr(err, needle) && !strchr(err, '\n'), "error '%s' lacks '%s'", err, needle);
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    CHECK_MSG(access(tmp, F_OK) != 0, "%s left behind", tmp);
    convert_vocab_free(v);
}

static void test_errors(void) {
    char err[ERR_LEN];
    char tok512[4096];
    const char *out = keep_tmp("fail.gguf");
    strcpy(tok512, test_shared("models/tok512.bin"));
    unlink(out);
    model *m = open_model(test_shared("models/stories260K.bin"));
    if (!m) return;
    expect_fail(m, tok512, WTYPE_Q8_0, CONVERT_FALLBACK_NONE, out,
                "tensor 'blk.0.ffn_down.weight' has rows of 172 values, not a multiple of 32");
    expect_fail(m, test_shared("models/tok32000.bin"), WTYPE_F16, 0, out,
                "tok32000.bin has 32000 tokens but");
    expect_fail(m, tok512, WTYPE_F16, 0, test_tmp("no/such/dir/x.gguf"), "cannot create");
    expect_fail(m, tok512, WTYPE_F16, 0, test_tmpdir(), "is a directory, expected a GGUF file");
    CHECK(access(out, F_OK) != 0);
    model_close(m);
    model_config c;
    CHECK(synth_config("32,64,1,2,2,512,32", &c, err) == 0);
    CHECK(synth_model(&m, &c, 1, err) == 0);
    float *w = (float *)m->layers[0].w3.data;
    w[5 * 32 + 7] = 70000.0f; /* fine in bf16 and f32, too large for f16 */
    expect_fail(m, tok512, WTYPE_F16, 0, out,
                "tensor 'blk.0.ffn_up.weight' row 5 column 7 = 70000 is beyond f16's range");
    w[5 * 32 + 7] = 1e7f; /* q8_0's scale 1e7 / 127 is beyond f16 too */
    expect_fail(m, tok512, WTYPE_Q8_0, 0, out, "'blk.0.ffn_up.weight' row 5, block 0: max|x|");
    w[5 * 32 + 7] = 65519.0f; /* rounds to 65504: fine in f16 */
    convert_opts o = {.type = WTYPE_F16};
    convert_vocab *v = NULL;
    CHECK_MSG(convert_vocab_load(&v, tok512, err) == 0 &&
                  convert_gguf(m, v, &o, out, NULL, err) == 0,
              "%s", err);
    convert_vocab_free(v);
    unlink(out);
    w[5 * 32 + 7] = NAN;
    expect_fail(m, tok512, WTYPE_Q8_0, 0, out, "'blk.0.ffn_up.weight' row 5 column 7 is nan");
    model_close(m);
}

int main(void) {
    test_quantizers();
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_convert");
    char s260[4096], xs[4096], tok512[4096];
    strcpy(s260, test_shared("models/stories260K.bin"));
    strcpy(xs, test_shared("models/llama2xs.bin"));
    strcpy(tok512, test_shared("models/tok512.bin"));
    convert_report rep;

    const char *f32 = convert(s260, tok512, WTYPE_F32, "s260_f32.gguf", &rep);
    CHECK(rep.n_fallback == 0 && rep.n_matrices == 36);
    test_f32_identical(f32);
    test_vocab(f32);
    test_vocab_32000();

    const char *q8 = convert(s260, tok512, WTYPE_Q8_0, "s260_q8_0.gguf", &rep);
    CHECK(rep.n_fallback == 5 && rep.fallback_type == WTYPE_F16 &&
          strcmp(rep.first_fallback, "blk.0.ffn_down.weight") == 0 &&
          rep.first_fallback_cols == 172);
    check_layout(q8, "Q8_0", "F16");
    const char *xs_q8 = convert(xs, tok512, WTYPE_Q8_0, "xs_q8_0.gguf", &rep);
    CHECK(rep.n_fallback == 0); /* hidden 192: every row is whole blocks */
    test_decoders(q8, xs_q8, all_specs, 7, KERN_EXACT, "stories260K q8_0");
    test_dequantized(q8, WTYPE_Q8_0, "s260");

    /* A synthetic model of 32-multiple widths with a separate classifier (output.weight). */
    char err[ERR_LEN];
    model_config c;
    CHECK(synth_config("64,128,2,4,2,512,256", &c, err) == 0);
    c.shared_classifier = 0;
    const char *syn = keep_tmp("synth.bin"), *syn_d = keep_tmp("synth_draft.bin");
    CHECK_MSG(synth_write(syn, &c, 7, err) == 0 && synth_write(syn_d, &c, 8, err) == 0, "%s", err);
    const char *syn_q8 = convert(syn, tok512, WTYPE_Q8_0, "synth_q8_0.gguf", &rep);
    const char *syn_d_q8 = convert(syn_d, tok512, WTYPE_Q8_0, "synth_draft_q8_0.gguf", &rep);
    CHECK(rep.n_fallback == 0 && rep.n_matrices == 2 + 2 * 7);
    test_decoders(syn_q8, syn_d_q8, all_specs, 7, KERN_EXACT, "synthetic q8_0");
    test_decoders(syn_q8, syn_d_q8, all_specs, 7, KERN_EXACT_INT8, "synthetic q8_0, exact-int8");
    test_dequantized(syn_q8, WTYPE_Q8_0, "synth");

    /* q4_0, q4_k, q6_k from a synthetic model of 256-multiple widths: each computes what the
     * f32 model of its dequantized weights computes; q4_0 (ggml's algorithm) re-quantizes to the
     * same bytes */
    CHECK(synth_config("256,512,2,4,2,512,64", &c, err) == 0);
    c.shared_classifier = 0;
    const char *syn256 = keep_tmp("synth256.bin");
    CHECK_MSG(synth_write(syn256, &c, 9, err) == 0, "%s", err);
    const wtype lowbit[] = {WTYPE_Q4_0, WTYPE_Q4_K, WTYPE_Q6_K};
    char lowbit_path[3][4096];
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "synth256_%s.gguf", wtype_name(lowbit[i]));
        const char *qp = convert(syn256, tok512, lowbit[i], name, &rep);
        snprintf(lowbit_path[i], sizeof lowbit_path[i], "%s", qp);
        CHECK(rep.n_fallback == 0 && rep.n_matrices == 2 + 2 * 7);
        test_dequantized(qp, lowbit[i], name);
    }
    /* the int8 mode's k-quant kernels under every decoder: a q4_k target, a q6_k draft */
    test_decoders(lowbit_path[1], lowbit_path[2], all_specs, 7, KERN_EXACT_INT8,
                  "synthetic q4_k (q6_k draft), exact-int8");
    test_decoders(lowbit_path[1], lowbit_path[2], all_specs, 7, KERN_EXACT_INT8B,
                  "synthetic q4_k (q6_k draft), exact-int8b");
    test_decoders(syn_q8, syn_d_q8, all_specs, 7, KERN_EXACT_INT8B, "synthetic q8_0, exact-int8b");
    const char *specs_f16[] = {"lookahead:W=5,N=3,G=5", "spec:gamma=4"};
    const char *f16 = convert(s260, tok512, WTYPE_F16, "s260_f16.gguf", &rep);
    const char *xs_f16 = convert(xs, tok512, WTYPE_F16, "xs_f16.gguf", &rep);
    test_decoders(f16, xs_f16, specs_f16, 2, KERN_EXACT, "stories260K f16");
    const char *bf16 = convert(s260, tok512, WTYPE_BF16, "s260_bf16.gguf", &rep);
    test_dequantized(bf16, WTYPE_BF16, "s260_bf16"); /* bf16 -> f32 -> bf16 is exact too */

    const char *mixed[][2] = {
        {"models/quantized/kq_Q4_0.gguf", "Q4_0"}, {"models/quantized/kq_Q4_K_M.gguf", "Q4_K_M"},
        {"models/quantized/kq_Q6_K.gguf", "Q6_K"}, {"models/quantized/kq_Q8_0.gguf", "Q8_0"},
        {"models/quantized/xs_Q4_0.gguf", "Q4_0"}, {"models/quantized/xs_Q4_K_M.gguf", "Q4_K_M"},
        {"models/quantized/xs_Q8_0.gguf", "Q8_0"}};
    for (int i = 0; i < 7; i++) test_mix_layout(mixed[i][0], mixed[i][1]);

    test_errors();
    return test_finish("test_convert");
}
