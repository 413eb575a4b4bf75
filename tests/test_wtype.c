/* test_wtype.c: the weight types' dequantization is llama.cpp's, bit for bit, and quantized
 * models compute exactly what the f32 models of their dequantized weights compute.
 *  1. every tensor of every file in ../shared/models/quantized (llama.cpp's own quantizer: the
 *     real llama2xs in Q4_0/Q5_1/Q8_0/Q4_K_M, a random model in every type) dequantized with its
 *     row's to_float hashes (SHA-256 of the little-endian floats) to the value in
 *     dequant_reference.json, which is llama.cpp's own dequantization; the first 8 values match;
 *  2. each of those files loads as a model, and its logits over a chain of tokens equal, bit for
 *     bit (memcmp), those of the f32 GGUF holding its dequantized weights (written by
 *     convert_gguf through the same to_float);
 *  3. every decoder emits exactly greedy's tokens on xs_Q4_K_M.gguf (the real llama2xs in
 *     llama.cpp's Q4_K_M mixture: q5_0 and q8_0 here) and kq_Q4_0.gguf, with xs_Q4_0.gguf as the
 *     draft, over TinyStories prompts;
 *  4. q4_0 and q5_0 from f32 are llama-quantize's: llama2xs converted by decbench gives the same
 *     bytes as the blocks of xs_Q4_0.gguf and xs_Q4_K_M.gguf's q5_0 ones; the quantizers' blocks
 *     dequantize within their step of the input.
 * SHA-256 is nettle's (Debian nettle-dev). */
#include <jansson.h>
#include <math.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>

#include "model/convert/convert.h"
#include "model/loader/model_file.h"
#include "model/forward.h"
#include "model/formats/gguf.h"
#include "model/kernels/kernels.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

#define QDIR "models/quantized/"

static void sha256_hex(const void *data, size_t n, char out[65]) {
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, n, data);
    sha256_digest(&ctx, sizeof digest, digest);
    for (int i = 0; i < SHA256_DIGEST_SIZE; i++) sprintf(out + 2 * i, "%02x", digest[i]);
}

/* Every tensor of one file against its entry in the reference. Returns the tensors checked. */
static int check_file(const char *file, json_t *ref, int *per_type) {
    char err[ERR_LEN];
    gguf *g;
    if (gguf_open(&g, test_shared(file), err)) {
        CHECK_MSG(0, "%s", err);
        return 0;
    }
    const char *base = strrchr(file, '/') + 1;
    json_t *tensors = json_object_get(ref, base);
    CHECK_MSG(json_is_object(tensors), "%s: not in dequant_reference.json", base);
    CHECK_MSG(json_object_size(tensors) == (size_t)gguf_tensor_count(g),
              "%s: %d tensors, the reference lists %zu", base, gguf_tensor_count(g),
              json_object_size(tensors));
    int checked = 0;
    for (int i = 0; tensors && i < gguf_tensor_count(g); i++) {
        const gguf_tensor *t = gguf_tensor_at(g, i);
        json_t *e = json_object_get(tensors, t->name);
        CHECK_MSG(e, "%s: %s missing from the reference", base, t->name);
        if (!e) continue;
        wtype wt;
        const char *tn = gguf_type_name(t->type);
        CHECK_MSG(strcmp(json_string_value(json_object_get(e, "type")), tn) == 0, "%s %s: type %s",
                  base, t->name, tn);
        if (wtype_from_ggml(t->type, &wt)) {
            CHECK_MSG(0, "%s %s: type %s does not load", base, t->name, tn);
            continue;
        }
        float *v = malloc(sizeof(float) * (size_t)t->n_elements);
        wtype_get(wt)->to_float(t->data, v, (int)t->n_elements);
        char hex[65];
        sha256_hex(v, sizeof(float) * (size_t)t->n_elements, hex);
        const char *want = json_string_value(json_object_get(e, "sha256_f32"));
        CHECK_MSG(want && strcmp(hex, want) == 0,
                  "%s %s (%s): dequantized SHA-256 %s, llama.cpp's %s", base, t->name, tn, hex,
                  want ? want : "?");
        json_t *first8 = json_object_get(e, "first8");
        for (size_t k = 0; k < json_array_size(first8) && k < 8; k++)
            CHECK_MSG((float)json_number_value(json_array_get(first8, k)) == v[k],
                      "%s %s: value %zu is %.9g, llama.cpp's %.9g", base, t->name, k, (double)v[k],
                      json_number_value(json_array_get(first8, k)));
        free(v);
        per_type[wt]++;
        checked++;
    }
    gguf_close(g);
    return checked;
}

/* Logits of every row of a fixed 13-token chain (4x4 tiles and a one-token remainder). */
enum { T_CHAIN = 13 };
static float *logits_of(const model *m) {
    char err[ERR_LEN];
    enum { T = T_CHAIN };
    int tokens[T];
    for (int i = 0; i < T; i++) tokens[i] = i == 0 ? 1 : (i * 37 + 11) % m->cfg.vocab_size;
    fwd_ctx *f;
    float *out = malloc(sizeof(float) * T * (size_t)m->cfg.vocab_size);
    CHECK_MSG(fwd_new(&f, m, NULL, T, KERN_EXACT, err) == 0, "%s", err);
    CHECK_MSG(fwd_eval(f, T, tokens, NULL, NULL, NULL, T, out, err) == 0, "%s", err);
    fwd_free(f);
    return out;
}

/* The quantized file's model against the f32 GGUF of its dequantized weights. */
static void check_model(const char *file) {
    char err[ERR_LEN], out[4096];
    const char *base = strrchr(file, '/') + 1;
    snprintf(out, sizeof out, "%s", test_tmp(base));
    strcpy(out + strlen(out) - 5, "_f32.gguf");
    model *q = NULL, *f = NULL;
    convert_vocab *v = NULL;
    convert_opts o = {.type = WTYPE_F32};
    int rc = model_open(&q, test_shared(file), err) ||
             convert_vocab_load(&v, test_shared(file), err) ||
             convert_gguf(q, v, &o, out, NULL, err) || model_open(&f, out, err);
    CHECK_MSG(rc == 0, "%s: %s", base, err);
    if (rc == 0) {
        CHECK(f->main_type == WTYPE_F32 && q->cfg.vocab_size == f->cfg.vocab_size);
        float *lq = logits_of(q), *lf = logits_of(f);
        int same = memcmp(lq, lf, sizeof(float) * T_CHAIN * (size_t)q->cfg.vocab_size) == 0;
        CHECK_MSG(same, "%s: logits differ from the f32 model of its dequantized weights", base);
        if (same)
            fprintf(stderr,
                    "%s (%s matrices): %d rows of logits equal the dequantized f32 model's\n", base,
                    wtype_name(q->main_type), T_CHAIN);
        free(lq), free(lf);
    }
    convert_vocab_free(v);
    model_close(q);
    model_close(f);
    remove(out);
}

/* Every decoder equals greedy on target, with draft for spec and ouroboros. */
static void test_decoders(const char *target, const char *draft) {
    enum { N_PROMPTS = 3, MAX_NEW = 96 };
    static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS], want[DEC_CHECK_MAX_OUT];
    static const char *specs[] = {
        "jacobi:window=8", "lookahead:W=5,N=3,G=5",        "lookahead", "pld",
        "spec:gamma=4",    "ouroboros:gamma=4,W=4,beta=4", "greedy",
        "skip:attn=0,mlp=1"};
    char err[ERR_LEN];
    model *t = NULL, *d = NULL;
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return;
    if (model_open(&t, test_shared(target), err) || model_open(&d, test_shared(draft), err)) {
        CHECK_MSG(0, "%s", err);
        goto done;
    }
    dec_env env = {.target = t, .draft = d, .kernels = KERN_EXACT};
    int runs = 0;
    for (int i = 0; i < N_PROMPTS; i++) {
        int n = dec_check_greedy(&env, ids[i], lens[i], MAX_NEW, want);
        for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
            char label[160];
            snprintf(label, sizeof label, "%s prompt %d", target, i);
            runs += dec_check_vs(&env, specs[s], ids[i], lens[i], MAX_NEW, want, n, NULL, NULL,
                                 NULL, label);
        }
    }
    fprintf(stderr, "%s: %d decoder runs equal greedy\n", target, runs);
done:
    model_close(t);
    model_close(d);
}

/* decbench's q4_0 and q5_0 of llama2xs equal llama-quantize's: xs_Q4_0.gguf stores the
 * embedding as q8_0 and every other matrix as q4_0; xs_Q4_K_M.gguf, whose rows are not whole
 * 256-value super-blocks, falls back to q5_0 (q8_0 for attn_v / ffn_down of layers 2 and 4). */
static void test_same_as_llama_quantize(const char *file, wtype type) {
    char err[ERR_LEN];
    model *m = NULL;
    gguf *g = NULL;
    if (model_open(&m, test_shared("models/llama2xs.bin"), err) ||
        gguf_open(&g, test_shared(file), err)) {
        CHECK_MSG(0, "%s", err);
        model_close(m);
        return;
    }
    int same = 0, total = 0;
    for (int l = 0; l < m->cfg.n_layers; l++) {
        const model_layer *y = &m->layers[l];
        const wmat *mats[] = {&y->wq, &y->wk, &y->wv, &y->wo, &y->w1, &y->w2, &y->w3};
        const char *names[] = {"attn_q",   "attn_k",   "attn_v", "attn_output",
                               "ffn_gate", "ffn_down", "ffn_up"};
        for (int i = 0; i < 7; i++) {
            char name[64];
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, names[i]);
            const gguf_tensor *t = gguf_find_tensor(g, name);
            CHECK_MSG(t != NULL, "%s: no %s", file, name);
            if (!t || t->type != wtype_get(type)->ggml_type) continue;
            size_t row = wtype_row_bytes(type, mats[i]->cols);
            unsigned char *buf = malloc(row * (size_t)mats[i]->rows);
            for (int r = 0; r < mats[i]->rows; r++)
                wtype_get(type)->from_float((const float *)mats[i]->data +
                                                (size_t)r * mats[i]->cols,
                                            buf + row * r, mats[i]->cols);
            total++;
            same +=
                t->nbytes == row * (size_t)mats[i]->rows && memcmp(buf, t->data, t->nbytes) == 0;
            free(buf);
        }
    }
    CHECK_MSG(total >= 20 && same == total, "%s: %d of %d %s tensors equal llama-quantize's", file,
              same, total, wtype_name(type));
    fprintf(stderr, "%s from f32: %d of %d llama2xs tensors byte-identical to %s\n",
            wtype_name(type), same, total, file);
    gguf_close(g);
    model_close(m);
}

/* The quantizers decbench writes with: every value within its step (the scale) of the input,
 * on blocks of random values of random magnitudes, zeros and constant blocks included. */
static void test_quantizers(void) {
    rng_state r;
    rng_seed(&r, 11);
    const wtype types[] = {WTYPE_Q8_0, WTYPE_Q4_0, WTYPE_Q5_0, WTYPE_Q4_K, WTYPE_Q6_K};
    const float levels[] = {127, 8, 16, 15, 32}; /* quantization steps across the range */
    enum { N = 4096 };
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    unsigned char *q = malloc(N * 2);
    for (int ti = 0; ti < 5; ti++) {
        const wtype_traits *tt = wtype_get(types[ti]);
        double worst = 0;
        for (int trial = 0; trial < 20; trial++) {
            /* magnitudes whose scales are normal f16 numbers (a subnormal scale has fewer bits,
             * in ggml as here) */
            float mag = powf(10.0f, (float)rng_below(&r, 5) - 1.0f);
            for (int i = 0; i < N; i++)
                x[i] = trial == 0 ? 0.0f : trial == 1 ? 0.25f : mag * (2 * rng_unit(&r) - 1);
            tt->from_float(x, q, N);
            tt->to_float(q, y, N);
            for (int b = 0; b < N / tt->block; b++) {
                float amax = 0;
                for (int i = 0; i < tt->block; i++) amax = fmaxf(amax, fabsf(x[b * tt->block + i]));
                for (int i = 0; i < tt->block; i++) {
                    float e = fabsf(x[b * tt->block + i] - y[b * tt->block + i]);
                    double rel = amax > 0 ? e / (amax / levels[ti]) : e;
                    worst = rel > worst ? rel : worst;
                }
            }
        }
        /* q4_0, q5_0 and q6_k lose one level at the end opposite the largest magnitude (as ggml's);
         * k-quant sub-block scales are stored rounded up to 6 or 8 bits, and q4_k's range
         * (max - min) can span two of max|x| / 15 */
        CHECK_MSG(worst <= (tt->block == 256 ? 1.5 : 1.01), "%s: error %.3f steps", tt->name,
                  worst);
        fprintf(stderr, "%s quantizer: worst error %.2f of a step (max|x| / %g)\n", tt->name, worst,
                (double)levels[ti]);
    }
    free(x), free(y), free(q);
}

/* wtype_find_nonfinite finds the first block whose scale (each of the type's: the offsets of
 * wtype_traits.scale, which the loader refuses as llama.cpp's --check-tensors does) is NaN or
 * infinite, or the first float value that is, in any chunk of its scan; and the offsets are the
 * dequantizers' (to_float of that block is not finite). */
static void test_find_nonfinite(void) {
    const int n = 9000; /* blocks: past two of the scan's chunks of 4096 */
    const long long at[] = {0, 4095, 4096, 8999};
    const uint16_t h16[3] = {0x7e00, 0x7c00, 0xfc00}, b16[3] = {0x7fc0, 0x7f80, 0xff80};
    const float f32[3] = {NAN, INFINITY, -INFINITY};
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        size_t bb = (size_t)tt->block_bytes;
        unsigned char *w = calloc((size_t)n, bb);
        float *vals = malloc(sizeof(float) * (size_t)tt->block);
        int which = -1, bad = 0;
        float v;
        CHECK(wtype_find_nonfinite((wtype)t, w, (size_t)n, &which, &v) == -1);
        for (int s = 0; s < 2 && (s == 0 || tt->scale[s].name); s++)
            for (int i = 0; i < 4; i++)
                for (int k = 0; k < 3; k++) {
                    unsigned char *p =
                        w + (size_t)at[i] * bb + (tt->block == 1 ? 0 : tt->scale[s].at);
                    if (t == WTYPE_F32)
                        memcpy(p, &f32[k], 4);
                    else
                        memcpy(p, t == WTYPE_BF16 ? &b16[k] : &h16[k], 2);
                    long long got = wtype_find_nonfinite((wtype)t, w, (size_t)n, &which, &v);
                    bad += got != at[i] || which != s || (k == 0 ? !isnan(v) : v != f32[k]);
                    tt->to_float(w + (size_t)at[i] * bb, vals, tt->block);
                    int finite = 1;
                    for (int j = 0; j < tt->block; j++) finite &= isfinite(vals[j]) != 0;
                    bad += finite;
                    /* a later one too: the first is found */
                    memcpy(w + (size_t)(n - 1) * bb, w + (size_t)at[i] * bb, bb);
                    bad += wtype_find_nonfinite((wtype)t, w, (size_t)n, &which, &v) != at[i];
                    memset(w + (size_t)(n - 1) * bb, 0, bb);
                    memset(w + (size_t)at[i] * bb, 0, bb);
                }
        CHECK_MSG(bad == 0, "%s: %d misses of a NaN or infinite scale", tt->name, bad);
        free(w), free(vals);
    }
    char out[160];
    wtype_describe_nonfinite(WTYPE_Q4_K, 512, 3, 1, NAN, out, sizeof out);
    CHECK_MSG(strcmp(out, "block 3 (row 1, columns 256..511) has scale dmin = NaN") == 0, "%s",
              out);
    wtype_describe_nonfinite(WTYPE_BF16, 10, 25, 0, -INFINITY, out, sizeof out);
    CHECK_MSG(strcmp(out, "row 2, column 5 is -inf") == 0, "%s", out);
}

int main(void) {
    static const char *files[] = {
        QDIR "kq_Q4_0.gguf",   QDIR "kq_Q4_1.gguf",   QDIR "kq_Q5_0.gguf",   QDIR "kq_Q5_1.gguf",
        QDIR "kq_Q8_0.gguf",   QDIR "kq_Q2_K.gguf",   QDIR "kq_Q3_K_M.gguf", QDIR "kq_Q4_K_S.gguf",
        QDIR "kq_Q4_K_M.gguf", QDIR "kq_Q5_K_M.gguf", QDIR "kq_Q6_K.gguf",   QDIR "xs_Q4_0.gguf",
        QDIR "xs_Q5_1.gguf",   QDIR "xs_Q8_0.gguf",   QDIR "xs_Q4_K_M.gguf",
    };
    json_error_t je;
    json_t *ref = json_load_file(test_shared(QDIR "dequant_reference.json"), 0, &je);
    CHECK_MSG(ref, "dequant_reference.json: %s", je.text);
    int per_type[WTYPE_COUNT] = {0}, total = 0;
    for (size_t i = 0; ref && i < sizeof files / sizeof files[0]; i++)
        total += check_file(files[i], ref, per_type);
    size_t listed = 0;
    const char *key;
    json_t *val;
    json_object_foreach(ref, key, val) listed += json_object_size(val);
    CHECK_MSG(total > 0 && (size_t)total == listed, "%d tensors checked, the reference lists %zu",
              total, listed);
    fprintf(stderr, "%d tensors reproduce llama.cpp's dequantization:", total);
    for (int t = 0; t < WTYPE_COUNT; t++)
        if (per_type[t]) fprintf(stderr, " %s %d", wtype_name((wtype)t), per_type[t]);
    fprintf(stderr, "\n");
    for (int t = 0; t < WTYPE_COUNT; t++) /* the block types; f16 and bf16 are plain widening */
        CHECK_MSG(per_type[t] > 0 || wtype_get((wtype)t)->block == 1, "no file holds a %s tensor",
                  wtype_name((wtype)t));
    json_decref(ref);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) check_model(files[i]);
    test_decoders(QDIR "xs_Q4_K_M.gguf", QDIR "xs_Q4_0.gguf");
    test_decoders(QDIR "kq_Q4_0.gguf", QDIR "xs_Q4_0.gguf");
    test_same_as_llama_quantize(QDIR "xs_Q4_0.gguf", WTYPE_Q4_0);
    test_same_as_llama_quantize(QDIR "xs_Q4_K_M.gguf", WTYPE_Q5_0);
    test_quantizers();
    test_find_nonfinite();
    return test_finish("test_wtype");
}
