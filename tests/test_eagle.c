/* test_eagle.c: EAGLE's draft head (decoders/eagle_head.h) and the eagle decoder
 * (decoders/eagle.c).
 *  1. exact: on the stories260K target, eagle emits greedy's tokens with a head whose weights
 *     are random (written here in the published format: exactness cannot depend on the head)
 *     and with the trained head in tests/data/heads/stories260K-eagle when present, in both
 *     modes (EAGLE-1's static tree, EAGLE-2's dynamic tree at the reference's defaults and
 *     smaller), over TinyStories prompts, max_new 0/1/2 and a prompt of one token; statistics
 *     add up (tests/dec_check.c), the counters agree with them, generate() allocates nothing;
 *  2. the head's tree attention: a path evaluated as tree rows (each row attending to its
 *     ancestors only, siblings beside it) gives its rows the outputs and logits of the same path
 *     appended as text, bit for bit; a sibling does not change them;
 *  3. the head's forward against the PyTorch reference (reference.tsv of the trained head, from
 *     train/: cnets1.Model's forward fed with the target's features): the same top-1 token and
 *     logits within 1e-4 relative, when the head is present;
 *  4. the loader's refusals, one line each naming the file and the field or tensor: a missing
 *     config or tensor, a shape, a dtype, a truncated file, a NaN or infinite weight, a head of
 *     another width, vocabulary or head count than the target's, an EAGLE-3 config, no head=.
 * Under the sanitizers (testutil.h test_keep) 1. runs one prompt in three, the trained head's to
 * 64 tokens instead of 128. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoders/eagle_head.h"
#include "model/forward.h"
#include "model/loader/model_file.h"
#include "model/weights/wtype.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/rng.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 6
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* The trained head of the shipped model (train/, committed as test data). */
#define TRAINED_HEAD DECBENCH_SOURCE_DIR "/tests/data/heads/stories260K-eagle"

/* ---- a head in the published format ---------------------------------------------------------- */

enum { DT_F32, DT_F16, DT_BF16 };

/* How write_head spoils a head (all zero: a good one). */
typedef struct {
    int dtype;
    const char *drop;                /* a tensor left out */
    const char *reshape;             /* a tensor with one more row */
    const char *nan_in;              /* a tensor with a NaN */
    const char *inf_in;              /* a tensor with an infinity */
    const char *int_dtype;           /* a tensor stored as I32 */
    long truncate;                   /* bytes cut off the end */
    int dim, vocab, heads, kv_heads; /* the config's, when non-zero */
    const char *config_extra;        /* more JSON fields, ", \"x\": 1" */
    int no_embed;                    /* leave embed_tokens.weight out (the target's is used) */
    double scale;                    /* weights uniform in +-scale / sqrt(cols); 0: 1 */
} head_opts;

typedef struct {
    char name[64];
    int rows, cols; /* cols 0: a vector */
} tdef;

static void put_value(unsigned char *p, int dtype, float v) {
    if (dtype == DT_F32)
        memcpy(p, &v, 4);
    else {
        uint16_t h = dtype == DT_F16 ? wtype_f32_to_f16(v) : wtype_f32_to_bf16(v);
        memcpy(p, &h, 2);
    }
}

/* Writes dir/config.json and dir/model.safetensors for target m, weights from seed. */
static void write_head(const char *dir, const model *m, uint64_t seed, const head_opts *o) {
    mkdir(dir, 0755);
    const model_config *c = &m->cfg;
    int D = o->dim ? o->dim : c->dim, V = o->vocab ? o->vocab : c->vocab_size;
    int nh = o->heads ? o->heads : c->n_heads, nkv = o->kv_heads ? o->kv_heads : c->n_kv_heads;
    int hs = D / nh, H = 3 * D;
    char path[512];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        CHECK_MSG(0, "cannot write %s", path);
        return;
    }
    fprintf(f,
            "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_act\": \"silu\", "
            "\"hidden_size\": %d, \"intermediate_size\": %d, \"num_attention_heads\": %d, "
            "\"num_key_value_heads\": %d, \"num_hidden_layers\": 1, \"vocab_size\": %d, "
            "\"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, \"max_position_embeddings\": 2048, "
            "\"bias\": true, \"torch_dtype\": \"float32\"%s}\n",
            D, H, nh, nkv, V, o->config_extra ? o->config_extra : "");
    fclose(f);
    tdef t[12];
    int n = 0;
    tdef list[] = {{"fc.weight", D, 2 * D},
                   {"fc.bias", D, 0},
                   {"layers.0.self_attn.q_proj.weight", nh * hs, D},
                   {"layers.0.self_attn.k_proj.weight", nkv * hs, D},
                   {"layers.0.self_attn.v_proj.weight", nkv * hs, D},
                   {"layers.0.self_attn.o_proj.weight", D, nh * hs},
                   {"layers.0.mlp.gate_proj.weight", H, D},
                   {"layers.0.mlp.up_proj.weight", H, D},
                   {"layers.0.mlp.down_proj.weight", D, H},
                   {"layers.0.post_attention_layernorm.weight", D, 0},
                   {"embed_tokens.weight", V, D}};
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
        if (o->drop && !strcmp(o->drop, list[i].name)) continue;
        if (o->no_embed && !strcmp(list[i].name, "embed_tokens.weight")) continue;
        t[n] = list[i];
        if (o->reshape && !strcmp(o->reshape, list[i].name)) t[n].rows++;
        n++;
    }
    /* the tensors' bytes, then the file (tests/testutil.h's writer), cut short if asked */
    test_st_tensor st[12];
    unsigned char *data[12];
    rng_state r;
    rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        int dt = o->dtype;
        const char *dname = dt == DT_F32 ? "F32" : dt == DT_F16 ? "F16" : "BF16";
        if (o->int_dtype && !strcmp(o->int_dtype, t[i].name)) dname = "I32", dt = DT_F32;
        size_t cnt = (size_t)t[i].rows * (size_t)(t[i].cols ? t[i].cols : 1);
        size_t es = dt == DT_F32 ? 4 : 2;
        data[i] = malloc(cnt * es);
        double sc = (o->scale ? o->scale : 1) / sqrt(t[i].cols ? t[i].cols : 1);
        for (size_t j = 0; j < cnt; j++) {
            float v = t[i].cols ? (float)((rng_unit(&r) * 2 - 1) * sc)
                                : (float)(1 + 0.1 * (rng_unit(&r) - 0.5));
            put_value(data[i] + j * es, dt, v);
        }
        if (o->nan_in && !strcmp(o->nan_in, t[i].name)) put_value(data[i] + 3 * es, dt, NAN);
        if (o->inf_in && !strcmp(o->inf_in, t[i].name)) put_value(data[i] + 5 * es, dt, -INFINITY);
        st[i] = (test_st_tensor){
            .name = t[i].name,
            .dtype = dname,
            .n_dims = t[i].cols ? 2 : 1,
            .shape = {(unsigned long long)t[i].rows, (unsigned long long)t[i].cols},
            .data = data[i],
            .bytes = cnt * es};
    }
    size_t size;
    unsigned char *file = test_safetensors_bytes(st, n, &size);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    f = fopen(path, "wb");
    size_t keep = file ? size - (size_t)o->truncate : 0;
    CHECK(file && f && fwrite(file, 1, keep, f) == keep);
    if (f) fclose(f);
    free(file);
    for (int i = 0; i < n; i++) free(data[i]);
}

/* ---- 1. exact ----------------------------------------------------------------------------------
 */

static int counter(const dec_stats *st, const char *name) {
    for (int i = 0; i < st->n_counters; i++)
        if (!strcmp(st->counter_defs[i].name, name)) return i;
    CHECK_MSG(0, "no counter %s", name);
    return 0;
}

static void check_counters(const dec_stats *st, const char *what) {
    double ranks =
        st->counters[counter(st, "accept_rank0")] + st->counters[counter(st, "accept_rank1up")];
    CHECK_MSG(ranks == st->accepted, "%s: ranks add up to %.0f, accepted %ld", what, ranks,
              st->accepted);
    double nodes = st->counters[counter(st, "tree_nodes")];
    CHECK_MSG(nodes >= st->drafted && nodes == st->target_rows - (st->target_steps - 1),
              "%s: %.0f tree nodes, %ld drafted, %ld rows in %ld steps", what, nodes, st->drafted,
              st->target_rows, st->target_steps);
    CHECK_MSG(st->draft_rows == st->counters[counter(st, "head_rows")],
              "%s: draft rows %ld, head rows %.0f", what, st->draft_rows,
              st->counters[counter(st, "head_rows")]);
}

static void test_exact(const model *tm, const char *head, const char *label, int n_prompts,
                       int max_new, double *tokens_per_step) {
    char specs[4][600];
    snprintf(specs[0], sizeof specs[0], "eagle:head=%s", head);
    snprintf(specs[1], sizeof specs[1], "eagle:head=%s,mode=static", head);
    snprintf(specs[2], sizeof specs[2], "eagle:head=%s,total_tokens=16,depth=4,top_k=4", head);
    snprintf(specs[3], sizeof specs[3], "eagle:head=%s,total_tokens=2,depth=1,top_k=1", head);
    dec_env env = {.target = tm, .kernels = KERN_EXACT};
    long steps = 0, tokens = 0;
    for (int i = 0; i < n_prompts; i++) {
        if (!test_keep(i, 3)) continue;
        for (int s = 0; s < 4; s++) {
            char what[160];
            snprintf(what, sizeof what, "%s prompt %d", label, i);
            dec_stats st;
            int got[DEC_CHECK_MAX_OUT];
            dec_check_exact(&env, specs[s], ids[i], lens[i], max_new, got, &st, NULL, what);
            check_counters(&st, what);
            steps += st.target_steps - 1, tokens += st.new_tokens - 1;
        }
    }
    /* edges: nothing to generate, one and two tokens, a prompt of BOS alone */
    int bos = tm->cfg.bos_id;
    for (int s = 0; s < 4; s++)
        for (int m = 0; m <= 2; m++) {
            dec_check_exact(&env, specs[s], ids[0], lens[0], m, NULL, NULL, NULL, "max_new 0-2");
            dec_check_exact(&env, specs[s], &bos, 1, m + 5, NULL, NULL, NULL, "BOS alone");
        }
    if (tokens_per_step) *tokens_per_step = steps ? (double)tokens / steps : 0;
    /* generate() allocates nothing */
    char err[ERR_LEN];
    dec *d;
    if (dec_create(&d, specs[0], &env, err) == 0) {
        int out[64], n;
        dec_stats st;
        long before = dec_check_mallocs;
        CHECK(dec_generate(d, ids[1], lens[1], 32, out, &n, &st, err) == 0);
        CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
                  dec_check_mallocs - before);
        dec_free(d);
    } else {
        CHECK_MSG(0, "%s", err);
    }
}

/* ---- 2. tree attention -------------------------------------------------------------------------
 */

static void test_tree_rows(const model *tm, const char *dir) {
    char err[ERR_LEN];
    eagle_head *h;
    if (eagle_head_open(&h, dir, tm, NULL, 8, 8, err)) {
        CHECK_MSG(0, "%s", err);
        return;
    }
    const int D = tm->cfg.dim, V = tm->cfg.vocab_size;
    float feats[8 * 64 * 8], hid[8 * 512], lg[8 * 512], hid2[8 * 512], lg2[8 * 512];
    CHECK(D <= 64 && V <= 512);
    rng_state r;
    rng_seed(&r, 3);
    for (int i = 0; i < 8 * D; i++) feats[i] = (float)(rng_unit(&r) * 2 - 1);
    int text[5] = {1, 40, 41, 42, 43};
    /* the text, then a tree: rows 0 (below the text), 1 (sibling of 0), 2 (child of 0),
     * 3 (child of 2) */
    CHECK(eagle_head_append(h, 5, text, feats, 1, NULL, NULL, err) == 0);
    int tt[4] = {7, 8, 9, 10}, par[4] = {-1, -1, 0, 2};
    float tf[4 * 64];
    memcpy(tf, feats + 5 * D, sizeof(float) * D);     /* row 0 */
    memcpy(tf + D, feats + 6 * D, sizeof(float) * D); /* row 1 */
    memcpy(tf + 2 * D, feats + 7 * D, sizeof(float) * D);
    memcpy(tf + 3 * D, feats, sizeof(float) * D);
    CHECK(eagle_head_tree(h, 2, tt, tf, par, hid, lg, err) == 0);
    CHECK(eagle_head_tree(h, 2, tt + 2, tf + 2 * D, par + 2, hid + 2 * D, lg + 2 * V, err) == 0);
    /* the path 0, 2, 3 as text */
    int path[3] = {0, 2, 3};
    int ptok[3];
    float pf[3 * 64];
    for (int i = 0; i < 3; i++) {
        ptok[i] = tt[path[i]];
        memcpy(pf + i * D, tf + path[i] * D, sizeof(float) * D);
    }
    CHECK(eagle_head_append(h, 3, ptok, pf, 3, hid2, lg2, err) == 0);
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(!memcmp(hid + path[i] * D, hid2 + i * D, sizeof(float) * D),
                  "tree row %d's output differs from the text's", path[i]);
        CHECK_MSG(!memcmp(lg + path[i] * V, lg2 + i * V, sizeof(float) * V),
                  "tree row %d's logits differ from the text's", path[i]);
    }
    CHECK(eagle_head_n_past(h) == 8 && eagle_head_scratch_rows(h) == 0);
    eagle_head_free(h);
}

/* ---- 3. against the PyTorch reference
 * ------------------------------------------------------------ */

/* reference.tsv (train/reference.py): a line "# tokens (N; ...): t0 t1 ..." with the sequence;
 * then per head row i (the target's feature at position i after its final norm, with token
 * t(i+1), at RoPE position i, attending to rows 0..i): "i<TAB>t(i+1)<TAB>id1<TAB>logit1 ..."
 * the top-5 of the target's classifier on the head's output. */
static void test_reference(const model *tm) {
    char path[512], line[4096], err[ERR_LEN];
    snprintf(path, sizeof path, "%s/reference.tsv", TRAINED_HEAD);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "reference: %s absent, skipped\n", path);
        return;
    }
    enum { MAXN = 64 };
    int tok[MAXN], n = 0, rows = 0, top1 = 0;
    double worst = 0;
    const int D = tm->cfg.dim, V = tm->cfg.vocab_size;
    float *feat = malloc(sizeof(float) * MAXN * D), *tl = malloc(sizeof(float) * MAXN * V);
    float *hl = malloc(sizeof(float) * MAXN * V);
    eagle_head *h = NULL;
    fwd_ctx *fc = NULL;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# tokens", 8)) {
            char *p = strchr(line, ':'), *end;
            for (p = p ? p + 1 : line + strlen(line); n < MAXN; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p) break;
                tok[n++] = (int)v;
            }
            /* the target's features of every position, then the head's rows */
            CHECK(n >= 2 && fwd_new(&fc, tm, NULL, MAXN, KERN_EXACT, err) == 0);
            if (!fc) break;
            fwd_set_hidden_out(fc, feat, NULL);
            CHECK(fwd_eval(fc, n, tok, NULL, NULL, NULL, n, tl, err) == 0);
            CHECK_MSG(eagle_head_open(&h, TRAINED_HEAD, tm, NULL, MAXN, 1, err) == 0, "%s", err);
            if (!h) break;
            CHECK_MSG(eagle_head_append(h, n - 1, tok + 1, feat, n - 1, NULL, hl, err) == 0, "%s",
                      err);
            continue;
        }
        if (line[0] == '#' || line[0] == '\n' || !h) continue;
        int i, next, id[5];
        double lg[5];
        if (sscanf(line, "%d %d %d %lf %d %lf %d %lf %d %lf %d %lf", &i, &next, &id[0], &lg[0],
                   &id[1], &lg[1], &id[2], &lg[2], &id[3], &lg[3], &id[4], &lg[4]) != 12 ||
            i < 0 || i >= n - 1 || next != tok[i + 1]) {
            CHECK_MSG(0, "%s: bad line '%s'", path, line);
            break;
        }
        const float *row = hl + (size_t)i * V;
        int best = 0;
        for (int v = 1; v < V; v++) best = row[v] > row[best] ? v : best;
        top1 += best == id[0];
        CHECK_MSG(best == id[0], "row %d: top-1 %d, reference %d", i, best, id[0]);
        for (int k = 0; k < 5; k++) {
            double rel = fabs(row[id[k]] - lg[k]) / fmax(fabs(lg[k]), 1);
            if (rel > worst) worst = rel;
            CHECK_MSG(rel <= 1e-4, "row %d token %d: logit %.9g, reference %.9g", i, id[k],
                      row[id[k]], lg[k]);
        }
        rows++;
    }
    fclose(f);
    fprintf(stderr, "reference: %d rows, %d top-1 equal, logits within %.2g relative\n", rows, top1,
            worst);
    CHECK(rows >= 8 && rows == n - 1);
    eagle_head_free(h);
    fwd_free(fc);
    free(feat), free(tl), free(hl);
}

/* ---- 4. the loader's refusals
 * -------------------------------------------------------------------- */

static void refuse(const model *tm, const char *dir, const head_opts *o, const char *want,
                   const char *what) {
    char err[ERR_LEN];
    if (o) write_head(dir, tm, 5, o);
    eagle_head *h = NULL;
    int rc = eagle_head_open(&h, dir, tm, NULL, 4, 4, err);
    CHECK_MSG(rc == -1 && strstr(err, want) && !strchr(err, '\n'), "%s: rc %d, '%s' (want '%s')",
              what, rc, rc ? err : "", want);
    if (rc == 0) eagle_head_free(h);
    fprintf(stderr, "refused (%s): %s\n", what, err);
}

static void test_errors(const model *tm) {
    const char *dir = test_tmp("bad_head");
    char want[600];
    refuse(tm, test_tmp("no_such_head"), NULL, "config.json: cannot read", "no folder");
    head_opts o = {0};
    o.drop = "layers.0.mlp.up_proj.weight";
    refuse(tm, dir, &o, "tensor 'layers.0.mlp.up_proj.weight' is missing", "missing tensor");
    o = (head_opts){.drop = "fc.bias"};
    refuse(tm, dir, &o, "tensor 'fc.bias' is missing", "missing bias");
    o = (head_opts){.reshape = "layers.0.self_attn.k_proj.weight"};
    snprintf(want, sizeof want,
             "tensor 'layers.0.self_attn.k_proj.weight' has shape [%d, %d]; "
             "expected [%d, %d]",
             tm->cfg.kv_dim + 1, tm->cfg.dim, tm->cfg.kv_dim, tm->cfg.dim);
    refuse(tm, dir, &o, want, "shape");
    o = (head_opts){.int_dtype = "fc.weight"};
    refuse(tm, dir, &o, "tensor 'fc.weight'", "dtype");
    o = (head_opts){.nan_in = "layers.0.mlp.down_proj.weight"};
    refuse(tm, dir, &o, "tensor 'layers.0.mlp.down_proj.weight': row 0, column 3 is NaN", "NaN");
    o = (head_opts){.inf_in = "layers.0.post_attention_layernorm.weight", .dtype = DT_F16};
    refuse(tm, dir, &o, "tensor 'layers.0.post_attention_layernorm.weight'", "infinity");
    o = (head_opts){.truncate = 10};
    refuse(tm, dir, &o, "model.safetensors", "truncated");
    o = (head_opts){.dim = tm->cfg.dim * 2};
    snprintf(want, sizeof want, "hidden_size %d does not match the target's embedding width %d",
             tm->cfg.dim * 2, tm->cfg.dim);
    refuse(tm, dir, &o, want, "width");
    o = (head_opts){.vocab = 32000};
    refuse(tm, dir, &o, "vocab_size 32000 does not match the target's vocabulary of 512", "vocab");
    o = (head_opts){.heads = tm->cfg.n_heads / 2, .kv_heads = tm->cfg.n_kv_heads / 2};
    refuse(tm, dir, &o, "do not match the target's", "heads");
    o = (head_opts){.config_extra = ", \"draft_vocab_size\": 32000"};
    refuse(tm, dir, &o, "an EAGLE-3 head", "EAGLE-3");
    o = (head_opts){.config_extra = ", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2.0}"};
    refuse(tm, dir, &o, "field 'rope_scaling'", "rope scaling");
    /* no head= at all */
    char err[ERR_LEN];
    dec_env env = {.target = tm, .kernels = KERN_EXACT};
    dec *d;
    char spec[600];
    CHECK(dec_create(&d, "eagle", &env, err) == -1 && strstr(err, "eagle needs a draft head"));
    /* static mode's tree is fixed */
    snprintf(spec, sizeof spec, "eagle:head=%s,mode=static,top_k=4", dir);
    CHECK(dec_create(&d, spec, &env, err) == -1 && strstr(err, "mode=static drafts EAGLE-1's"));
    /* the decoder passes the loader's message on */
    o = (head_opts){.drop = "fc.weight"};
    write_head(dir, tm, 5, &o);
    snprintf(spec, sizeof spec, "eagle:head=%s", dir);
    CHECK(dec_create(&d, spec, &env, err) == -1 && strstr(err, "tensor 'fc.weight' is missing"));
}

int main(void) {
    char err[ERR_LEN];
    model *tm = NULL;
    CHECK_MSG(model_open(&tm, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!tm || dec_check_tinystories(N_PROMPTS, ids, lens)) {
        model_close(tm);
        return test_finish("test_eagle");
    }
    /* random heads in the three published dtypes (the target's embedding for two) */
    double t0 = clock_now();
    const char *rnd = test_tmp("random_head");
    head_opts o = {0};
    write_head(rnd, tm, 1, &o);
    test_exact(tm, rnd, "random f32 head", N_PROMPTS, 32, NULL);
    const char *rnd16 = test_tmp("random_head_f16");
    o = (head_opts){.dtype = DT_F16, .no_embed = 1};
    write_head(rnd16, tm, 2, &o);
    test_exact(tm, rnd16, "random f16 head", 2, 16, NULL);
    const char *rnd_bf = test_tmp("random_head_bf16");
    o = (head_opts){.dtype = DT_BF16, .no_embed = 1};
    write_head(rnd_bf, tm, 3, &o);
    test_exact(tm, rnd_bf, "random bf16 head", 2, 16, NULL);
    test_tree_rows(tm, rnd);
    double t1 = clock_now();
    struct stat sb;
    if (stat(TRAINED_HEAD "/model.safetensors", &sb) == 0) {
        double tps = 0;
        test_exact(tm, TRAINED_HEAD, "trained head", N_PROMPTS, test_sanitized() ? 64 : 128, &tps);
        fprintf(stderr, "trained head: %.2f tokens per target step\n", tps);
        test_reference(tm);
    } else {
        fprintf(stderr, "%s absent: the trained head's checks skipped\n", TRAINED_HEAD);
    }
    double t2 = clock_now();
    test_errors(tm);
    fprintf(stderr, "time: random heads %.1f s, trained head %.1f s, refusals %.1f s\n", t1 - t0,
            t2 - t1, clock_now() - t2);
    model_close(tm);
    return test_finish("test_eagle");
}
