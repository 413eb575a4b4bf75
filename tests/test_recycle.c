/* test_recycle.c: Token Recycling (decoders/recycle.c).
 *  1. the algorithm against a brute force written from the paper: its own copy of the
 *     reference's template (8, 21, 25, 15, 8, 3 nodes per depth), its own cut (rank < k, then
 *     the nodes of smallest depth + rank sum), every node's logits from a plain causal pass over
 *     its path, greedy acceptance, and every row's top-k written into its own matrix in row
 *     order. Over several prompts through one warm decoder, for the paper's tree, a capped tree
 *     with few candidates and a uniform shape: every step's rows, depth, accepted and emitted
 *     tokens are equal, and so is the decoder's saved matrix, row by row;
 *  2. a full matrix (a file written here, every token's row filled, no end token): the first
 *     tree is the whole template: 80 nodes over 6 depths, 56 at k=4, a uniform shape's product,
 *     the cut's count and depth; shapes past 1024 nodes are refused;
 *  3. real models: stories260K and llama2xs targets, the first 20 TinyStories prompts x 256 new
 *     tokens through one decoder (warm across them) and variants (cold, small trees, a chain,
 *     a uniform shape): all exact; the warm matrix takes fewer target steps than the cold one;
 *  4. synthetic grid (max_new 0/1/2/37, one-token and longer prompts, a model that repeats
 *     itself: long accepted runs) and a prompt near the context's end;
 *  5. generate() allocates nothing;
 *  6. state: save -> load -> save gives the same bytes and the same decoding as the decoder
 *     that was never saved; corrupted, truncated, foreign and mismatched files (another k,
 *     another vocabulary, rows out of order, a repeated candidate) are refused with a message
 *     naming the byte and change nothing; warm=0 refuses state; the fuzz target's seeds (a
 *     real matrix, sealed and not, and an empty one) and 3000 seeded mutations of them replayed
 *     through fuzz_recycle_state_one (tests/fuzz_recycle_state.c), the seeds written to
 *     <tmp>/seeds for libFuzzer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoders/decoder.h"
#include "decoders/sequoia.h"
#include "model/convert/synth.h"
#include "model/forward.h"
#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/fuzz_recycle_state.c"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/hash.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 20
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* ---- the test's own template and matrix ------------------------------------------------------ */

/* The reference's template "2.2.2" (model/recycling/tree_template_.py), path by path. */
static const char *const ref_paths[80] = {
    "0",     "1",     "2",     "3",     "4",     "5",     "6",     "7",      "00",     "01",
    "02",    "03",    "04",    "05",    "06",    "07",    "10",    "11",     "12",     "13",
    "20",    "21",    "22",    "30",    "31",    "40",    "50",    "60",     "70",     "000",
    "001",   "002",   "003",   "004",   "005",   "006",   "007",   "010",    "011",    "012",
    "020",   "021",   "030",   "040",   "050",   "060",   "070",   "100",    "101",    "110",
    "200",   "300",   "400",   "500",   "0000",  "0001",  "0002",  "0003",   "0004",   "0010",
    "0011",  "0020",  "0030",  "0040",  "0100",  "0200",  "1000",  "2000",   "3000",   "00000",
    "00001", "00002", "00010", "00020", "00100", "01000", "10000", "000000", "000001", "000100"};

#define TMAX 1100
typedef struct {
    int n, depth_max;
    int par[TMAX], rank[TMAX], depth[TMAX], sum[TMAX]; /* sum: ranks along the path */
} tmpl;

static void tmpl_paper(tmpl *t) {
    t->n = 80;
    for (int i = 0; i < 80; i++) {
        int l = (int)strlen(ref_paths[i]);
        t->depth[i] = l, t->rank[i] = ref_paths[i][l - 1] - '0', t->par[i] = -1;
        for (int j = 0; j < i; j++)
            if ((int)strlen(ref_paths[j]) == l - 1 && !strncmp(ref_paths[j], ref_paths[i], l - 1))
                t->par[i] = j;
    }
}

static void tmpl_uniform(tmpl *t, const int *shape, int n_shape) {
    t->n = 0;
    int first = 0, last = 0; /* the parents: nodes [first, last) of the previous depth */
    for (int d = 0; d < n_shape; d++) {
        int end = t->n;
        for (int p = d ? first : -1; p < (d ? last : 0); p++)
            for (int c = 0; c < shape[d]; c++) {
                t->par[t->n] = p, t->rank[t->n] = c, t->depth[t->n] = d + 1;
                t->n++;
            }
        first = end, last = t->n;
    }
}

static const tmpl *sort_t;
static int by_score(const void *a, const void *b) {
    int i = *(const int *)a, j = *(const int *)b;
    int si = sort_t->depth[i] + sort_t->sum[i], sj = sort_t->depth[j] + sort_t->sum[j];
    return si != sj ? si - sj : i - j;
}

/* Nodes of rank < k only (whole paths), then the `cap` of smallest depth + rank sum. */
static void tmpl_cut(tmpl *t, int k, int cap) {
    static int ok[TMAX], order[TMAX], map[TMAX];
    int n_ok = 0;
    for (int i = 0; i < t->n; i++) {
        ok[i] = t->rank[i] < k && (t->par[i] < 0 || ok[t->par[i]]);
        t->sum[i] = t->rank[i] + (t->par[i] < 0 ? 0 : t->sum[t->par[i]]);
        if (ok[i]) order[n_ok++] = i;
    }
    sort_t = t;
    qsort(order, (size_t)n_ok, sizeof(int), by_score);
    for (int i = 0; i < t->n; i++) ok[i] = 0;
    for (int i = 0; i < n_ok && i < cap; i++) ok[order[i]] = 1;
    tmpl c = {0};
    for (int i = 0; i < t->n; i++) {
        map[i] = -1;
        if (!ok[i]) continue;
        map[i] = c.n;
        c.par[c.n] = t->par[i] < 0 ? -1 : map[t->par[i]];
        c.rank[c.n] = t->rank[i], c.depth[c.n] = t->depth[i];
        if (t->depth[i] > c.depth_max) c.depth_max = t->depth[i];
        c.n++;
    }
    *t = c;
}

/* The k most likely tokens, by repeated selection (ties: the lower id). */
static void ref_top_k(const float *l, int V, int k, int *out) {
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int v = 0; v < V; v++) {
            int taken = 0;
            for (int q = 0; q < j; q++) taken |= out[q] == v;
            if (!taken && (best < 0 || l[v] > l[best])) best = v;
        }
        out[j] = best;
    }
}

/* ---- 1. the brute force --------------------------------------------------------------------- */

typedef struct {
    const model *m;
    fwd_ctx *f;
    tmpl t;
    int k, V;
    int *mat; /* V x k, -1: empty */
    float *logits;
    int *tok, *par, *top;
} ref_dec;

#define REF_STEPS 1024

/* One generate call of the algorithm as the paper states it; steps[] receives each target step
 * after the prompt pass. Returns the output length, or -1. */
static int ref_generate(ref_dec *r, const int *prompt, int n_prompt, int max_new, int *out,
                        dec_step *steps, int *n_steps) {
    char err[ERR_LEN];
    static int text[1024], chain[64];
    const int V = r->V, end_id = r->m->cfg.end_id;
    memcpy(text, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt, n_out = 0, done = max_new == 0;
    *n_steps = 0;
    if (done) return 0;
    CHECK(fwd_truncate(r->f, 0, err) == 0 &&
          fwd_prefill(r->f, prompt, n_prompt, r->logits, err) == 0);
    ref_top_k(r->logits, V, r->k, r->mat + (size_t)prompt[n_prompt - 1] * r->k);
    int cur = fwd_argmax(r->logits, V);
    out[n_out++] = text[L++] = cur;
    done = cur == end_id || n_out >= max_new;
    while (!done) {
        int maxd = max_new - n_out - 1, rows = 1, node_row[TMAX], row_depth[TMAX];
        r->tok[0] = cur, r->par[0] = -1, row_depth[0] = 0;
        for (int i = 0; i < r->t.n; i++) {
            int p = r->t.par[i], prow = p < 0 ? 0 : node_row[p];
            node_row[i] = -1;
            if (prow < 0 || r->t.depth[i] > maxd || r->tok[prow] == end_id) continue;
            int c = r->mat[(size_t)r->tok[prow] * r->k + r->t.rank[i]];
            if (c < 0) continue;
            node_row[i] = rows, r->tok[rows] = c, r->par[rows] = prow;
            row_depth[rows++] = r->t.depth[i];
        }
        /* each row's logits: a causal pass over the text and the row's path */
        CHECK(fwd_truncate(r->f, 0, err) == 0 &&
              fwd_prefill(r->f, text, L - 1, r->logits, err) == 0);
        int deepest = 0;
        for (int q = 0; q < rows; q++) {
            int n = row_depth[q] + 1, at = q;
            for (int j = n - 1; j >= 0; j--, at = r->par[at]) chain[j] = r->tok[at];
            int last = n - 1;
            CHECK(fwd_eval(r->f, n, chain, NULL, NULL, &last, 1, r->logits + (size_t)q * V, err) ==
                  0);
            r->top[q] = fwd_argmax(r->logits + (size_t)q * V, V);
            if (row_depth[q] > deepest) deepest = row_depth[q];
        }
        /* greedy acceptance: from the root, the first child holding its parent's top */
        int at = 0, acc = 0, emitted = 0, ended = 0;
        for (;;) {
            int next = -1;
            for (int q = at + 1; q < rows && next < 0; q++)
                if (r->par[q] == at && r->tok[q] == r->top[at]) next = q;
            if (next < 0) break;
            acc++, at = next;
            if (r->tok[next] == end_id) {
                ended = 1;
                break;
            }
        }
        int em[TMAX], n_em = 0;
        for (int q = at; q > 0; q = r->par[q]) em[n_em++] = r->tok[q];
        for (int i = 0; i < n_em / 2; i++) {
            int x = em[i];
            em[i] = em[n_em - 1 - i], em[n_em - 1 - i] = x;
        }
        if (!ended) em[n_em++] = r->top[at];
        for (int i = 0; i < n_em && !done; i++) {
            out[n_out++] = text[L++] = em[i], emitted++;
            done = em[i] == end_id || n_out >= max_new;
        }
        if (*n_steps < REF_STEPS)
            steps[(*n_steps)++] =
                (dec_step){.rows = rows, .drafted = deepest, .accepted = acc, .emitted = emitted};
        for (int q = 0; q < rows; q++)
            ref_top_k(r->logits + (size_t)q * V, V, r->k, r->mat + (size_t)r->tok[q] * r->k);
        cur = out[n_out - 1];
    }
    return n_out;
}

typedef struct {
    dec_step s[REF_STEPS];
    int n;
} step_log;

static void log_step(void *user, const dec_step *s) {
    step_log *l = user;
    if (l->n < REF_STEPS) l->s[l->n++] = *s;
}

/* Reads a saved matrix file into mat (V x k, -1 empty); returns its row count, or -1. */
static long read_matrix(const char *path, int V, int k, int *mat) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char h[24], b[4];
    long rows = -1;
    if (fread(h, 1, 24, f) == 24 && !memcmp(h, "DBRECYC1", 8)) {
        rows = h[20] | h[21] << 8 | h[22] << 16 | (long)h[23] << 24;
        for (int i = 0; i < V * k; i++) mat[i] = -1;
        for (long i = 0; i < rows; i++) {
            int vals[1 + 64];
            for (int j = 0; j <= k; j++) {
                if (fread(b, 1, 4, f) != 4) rows = -1;
                vals[j] = b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24;
            }
            if (rows < 0 || vals[0] < 0 || vals[0] >= V) break;
            memcpy(mat + (size_t)vals[0] * k, vals + 1, sizeof(int) * (size_t)k);
        }
    }
    fclose(f);
    return rows;
}

static void brute_force_case(const model *m, const char *spec, int k, const tmpl *t, int n_prompts,
                             int max_new) {
    char err[ERR_LEN], what[64];
    const int V = m->cfg.vocab_size;
    static ref_dec r;
    static int out[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    static step_log log;
    static dec_step ref_steps[REF_STEPS];
    r.m = m, r.k = k, r.V = V, r.t = *t;
    r.mat = malloc(sizeof(int) * (size_t)V * k);
    int *saved = malloc(sizeof(int) * (size_t)V * k);
    r.logits = malloc(sizeof(float) * (size_t)TMAX * V);
    r.tok = malloc(sizeof(int) * TMAX), r.par = malloc(sizeof(int) * TMAX);
    r.top = malloc(sizeof(int) * TMAX);
    CHECK(fwd_new(&r.f, m, NULL, 64, KERN_EXACT, err) == 0);
    for (int i = 0; i < V * k; i++) r.mat[i] = -1;
    dec_env env = {.target = m, .kernels = KERN_EXACT, .on_step = log_step, .user = &log};
    dec *d;
    CHECK_MSG(dec_create(&d, spec, &env, err) == 0, "%s: %s", spec, err);
    long steps = 0, tokens = 0;
    for (int p = 0; p < n_prompts; p++) {
        int n_ref_steps, n_got = -1;
        int n_ref = ref_generate(&r, ids[p], lens[p], max_new, out, ref_steps, &n_ref_steps);
        dec_stats st;
        log.n = 0;
        CHECK_MSG(dec_generate(d, ids[p], lens[p], max_new, got, &n_got, &st, err) == 0, "%s", err);
        CHECK_MSG(n_got == n_ref && !memcmp(got, out, sizeof(int) * (size_t)n_ref),
                  "%s prompt %d: %d tokens, the brute force %d", spec, p, n_got, n_ref);
        CHECK_MSG(log.n == n_ref_steps, "%s prompt %d: %d steps, the brute force %d", spec, p,
                  log.n, n_ref_steps);
        for (int s = 0; s < log.n && s < n_ref_steps; s++) {
            const dec_step *a = &log.s[s], *b = &ref_steps[s];
            int eq = a->rows == b->rows && a->drafted == b->drafted && a->accepted == b->accepted &&
                     a->emitted == b->emitted;
            CHECK_MSG(eq,
                      "%s prompt %d step %d: rows %d depth %d accepted %d emitted %d, the "
                      "brute force %d %d %d %d",
                      spec, p, s, a->rows, a->drafted, a->accepted, a->emitted, b->rows, b->drafted,
                      b->accepted, b->emitted);
            if (!eq) break;
        }
        steps += n_ref_steps, tokens += n_ref;
    }
    snprintf(what, sizeof what, "bf_%d.bin", k);
    const char *path = test_tmp(what);
    char desc[128];
    CHECK_MSG(dec_state_save(d, path, desc, sizeof desc, err) == 0, "%s", err);
    long rows = read_matrix(path, V, k, saved), filled = 0, differ = 0;
    for (int t = 0; t < V; t++) {
        filled += r.mat[(size_t)t * k] >= 0;
        differ += memcmp(saved + (size_t)t * k, r.mat + (size_t)t * k, sizeof(int) * k) != 0;
    }
    CHECK_MSG(rows == filled && differ == 0,
              "%s: saved matrix of %ld rows, %ld differ from the "
              "brute force's %ld",
              spec, rows, differ, filled);
    fprintf(stderr, "brute force %s: %d prompts, %ld tokens in %ld steps, matrix of %ld rows: %s\n",
            spec, n_prompts, tokens, steps, filled, differ || rows != filled ? "DIFFERS" : "equal");
    dec_free(d);
    fwd_free(r.f);
    free(r.mat), free(saved), free(r.logits), free(r.tok), free(r.par), free(r.top);
}

static void test_brute_force(const model *m) {
    const int n = test_sanitized() ? 1 : 3;
    static tmpl t;
    tmpl_paper(&t);
    int per_depth[7] = {0};
    for (int i = 0; i < t.n; i++) per_depth[t.depth[i]]++;
    CHECK(per_depth[1] == 8 && per_depth[2] == 21 && per_depth[3] == 25 && per_depth[4] == 15 &&
          per_depth[5] == 8 && per_depth[6] == 3);
    tmpl_cut(&t, 8, 80);
    CHECK(t.n == 80 && t.depth_max == 6);
    brute_force_case(m, "recycle", 8, &t, n, 48);
    tmpl_paper(&t);
    tmpl_cut(&t, 3, 20);
    brute_force_case(m, "recycle:k=3,nodes=20", 3, &t, n, 48);
    const int shape[4] = {3, 2, 2, 1};
    tmpl_uniform(&t, shape, 4);
    tmpl_cut(&t, 2, 12);
    brute_force_case(m, "recycle:k=2,tree=uniform,shape=3-2-2-1,nodes=12", 2, &t, n, 48);
}

/* ---- 2. a full matrix ------------------------------------------------------------------------ */

static unsigned char *put32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    return b + 4;
}

/* Writes a matrix file of mat's filled rows (the format recycle.c documents); with `seal` 0 the
 * checksum is left wrong. Returns its size. */
static long write_matrix(const char *path, int V, int k, const int *mat, int seal) {
    static unsigned char buf[1 << 20];
    unsigned char *b = buf;
    long rows = 0;
    for (int t = 0; t < V; t++) rows += mat[(size_t)t * k] >= 0;
    memcpy(b, "DBRECYC1", 8), b += 8;
    b = put32(put32(put32(put32(b, 1), (uint32_t)V), (uint32_t)k), (uint32_t)rows);
    for (int t = 0; t < V; t++) {
        if (mat[(size_t)t * k] < 0) continue;
        b = put32(b, (uint32_t)t);
        for (int j = 0; j < k; j++) b = put32(b, (uint32_t)mat[(size_t)t * k + j]);
    }
    uint64_t h = hash_fnv1a(buf, (size_t)(b - buf)) + (seal ? 0 : 1);
    b = put32(put32(b, (uint32_t)h), (uint32_t)(h >> 32));
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) fwrite(buf, 1, (size_t)(b - buf), f), fclose(f);
    return (long)(b - buf);
}

/* Every row filled with tokens >= 3 (neither BOS nor the end token): no node is left out. */
static void full_matrix(int V, int k, int *mat) {
    for (int t = 0; t < V; t++)
        for (int j = 0; j < k; j++) mat[(size_t)t * k + j] = 3 + (t * 7 + j * 13) % (V - 3);
}

static void sequoia_check(const model *m, int *mat, int *out, step_log *lg);

static void test_full_matrix(const model *m) {
    char err[ERR_LEN];
    const int V = m->cfg.vocab_size;
    static int mat[512 * 32], out[DEC_CHECK_MAX_OUT];
    static step_log log;
    struct {
        const char *spec;
        int k, paper, shape[4], n_shape, cap, want_n, want_depth;
    } cases[] = {
        {"recycle", 8, 1, {0}, 0, 80, 80, 6},
        {"recycle:k=4", 4, 1, {0}, 0, 80, 56, 6},
        {"recycle:nodes=16", 8, 1, {0}, 0, 16, 16, 4},
        {"recycle:nodes=1", 8, 1, {0}, 0, 1, 1, 1},
        {"recycle:k=1", 1, 1, {0}, 0, 80, 6, 6},
        {"recycle:k=32", 32, 1, {0}, 0, 80, 80, 6},
        {"recycle:tree=uniform,shape=3-2-2-1", 8, 0, {3, 2, 2, 1}, 4, 80, 33, 4},
        {"recycle:tree=uniform,shape=4-4-4,k=2", 2, 0, {4, 4, 4}, 3, 80, 14, 3},
        {"recycle:tree=uniform,shape=8-8-8,nodes=1024", 8, 0, {8, 8, 8}, 3, 1024, 584, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        static tmpl t;
        if (cases[c].paper)
            tmpl_paper(&t);
        else
            tmpl_uniform(&t, cases[c].shape, cases[c].n_shape);
        tmpl_cut(&t, cases[c].k, cases[c].cap);
        CHECK_MSG(t.n == cases[c].want_n && t.depth_max == cases[c].want_depth,
                  "%s: the brute force's cut has %d nodes, depth %d", cases[c].spec, t.n,
                  t.depth_max);
        full_matrix(V, cases[c].k, mat);
        const char *path = test_tmp("full.bin");
        write_matrix(path, V, cases[c].k, mat, 1);
        dec_env env = {.target = m, .kernels = KERN_EXACT, .on_step = log_step, .user = &log};
        dec *d;
        dec_stats st;
        int n;
        CHECK_MSG(dec_create(&d, cases[c].spec, &env, err) == 0, "%s", err);
        CHECK_MSG(dec_state_load(d, path, err) == 0, "%s: %s", cases[c].spec, err);
        log.n = 0;
        CHECK(dec_generate(d, ids[0], lens[0], 24, out, &n, &st, err) == 0);
        CHECK_MSG(log.n > 0 && log.s[0].rows == 1 + t.n && log.s[0].drafted == t.depth_max,
                  "%s: first tree of %d rows, depth %d; want %d nodes, depth %d", cases[c].spec,
                  log.n ? log.s[0].rows : 0, log.n ? log.s[0].drafted : 0, t.n, t.depth_max);
        CHECK(st.counters[1] == t.n); /* tree_nodes_max */
        dec_free(d);
    }
    dec *d;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    CHECK(dec_create(&d, "recycle:tree=uniform,shape=32-32", &env, err) == -1 &&
          strstr(err, "recycle: shape grows 1056 nodes, more than 1024"));
    sequoia_check(m, mat, out, &log);
}

/* tree=sequoia: with a full matrix the first tree is the DP's (sequoia.h) for accept= cut to
 * the k ranks M holds, its size and depth; the canonical spec names accept= and depth= only when
 * given; the other trees refuse them, and a bad vector is refused. */
static void sequoia_check(const model *m, int *mat, int *out, step_log *lg) {
    char err[ERR_LEN];
    const struct {
        const char *spec;
        int k, nodes, depth;
        double p[3];
        int n_p;
    } cases[] = {
        {"recycle:tree=sequoia", 8, 80, 6, {0.386, 0.096, 0.056}, 0},
        {"recycle:tree=sequoia,nodes=16,accept=0.6/0.2/0.1,k=2", 2, 16, 6, {0.6, 0.2}, 2},
        {"recycle:tree=sequoia,nodes=40,depth=3,accept=0.3/0.3/0.2", 8, 40, 3, {0.3, 0.3, 0.2}, 3}};
    static sequoia_node sq[SEQUOIA_MAX_NODES];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double p[SEQUOIA_MAX_RANKS], e;
        int k = cases[c].n_p, n_sq = 0, depth = 0;
        if (k == 0) /* the default vector */
            CHECK(sequoia_parse_accept("0.386/0.096/0.056/0.036", "", p, &k, err) == 0);
        else
            memcpy(p, cases[c].p, sizeof(double) * (size_t)k);
        CHECK(sequoia_tree(p, k, cases[c].nodes, cases[c].depth, sq, &n_sq, &e, err) == 0);
        for (int i = 0; i < n_sq; i++)
            if (sq[i].depth > depth) depth = sq[i].depth;
        full_matrix(m->cfg.vocab_size, cases[c].k, mat);
        const char *path = test_tmp("full.bin");
        write_matrix(path, m->cfg.vocab_size, cases[c].k, mat, 1);
        dec_env env = {.target = m, .kernels = KERN_EXACT, .on_step = log_step, .user = lg};
        dec *d;
        dec_stats st;
        int n;
        CHECK_MSG(dec_create(&d, cases[c].spec, &env, err) == 0, "%s", err);
        CHECK_MSG(dec_state_load(d, path, err) == 0, "%s: %s", cases[c].spec, err);
        lg->n = 0;
        CHECK(dec_generate(d, ids[0], lens[0], 24, out, &n, &st, err) == 0);
        CHECK_MSG(lg->n > 0 && lg->s[0].rows == 1 + n_sq && lg->s[0].drafted == depth,
                  "%s: first tree of %d rows, depth %d; the DP's has %d nodes, depth %d",
                  cases[c].spec, lg->n ? lg->s[0].rows : 0, lg->n ? lg->s[0].drafted : 0, n_sq,
                  depth);
        fprintf(stderr, "%s: %d nodes, depth %d, %.3f expected accepted\n", cases[c].spec, n_sq,
                depth, e);
        dec_free(d);
    }
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "recycle:tree=sequoia,nodes=8", &env, err) == 0);
    CHECK_MSG(!strcmp(dec_spec(d), "recycle:k=8,tree=sequoia,shape=4-2-2-1,nodes=8,warm=1"), "%s",
              dec_spec(d));
    dec_free(d);
    CHECK(dec_create(&d, "recycle:tree=sequoia,depth=4,accept=0.5/0.2", &env, err) == 0);
    CHECK_MSG(!strcmp(dec_spec(d), "recycle:k=8,tree=sequoia,shape=4-2-2-1,nodes=80,warm=1,"
                                   "depth=4,accept=0.5/0.2"),
              "%s", dec_spec(d));
    dec_free(d);
    const char *bad[][2] = {{"recycle:accept=0.5", "tree=paper does not use them"},
                            {"recycle:tree=uniform,depth=3", "tree=uniform does not use them"},
                            {"recycle:tree=sequoia,accept=0.9/0.2", "more than 1"},
                            {"recycle:tree=sequoia,accept=a", "recycle: accept=a: not numbers"}};
    for (int i = 0; i < 4; i++)
        CHECK_MSG(dec_create(&d, bad[i][0], &env, err) == -1 && strstr(err, bad[i][1]), "%s: %s",
                  bad[i][0], err);
}

/* ---- 3. real models -------------------------------------------------------------------------- */

/* Runs spec over prompts [0, n) with one decoder instance (warm across them); sums. */
static void run_prompts(const dec_env *env, const char *spec, int n, dec_stats *sum, double *cnt,
                        const char *what) {
    char err[ERR_LEN];
    static int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    memset(sum, 0, sizeof *sum);
    for (int c = 0; c < STAT_MAX_COUNTERS; c++) cnt[c] = 0;
    dec *d;
    if (dec_create(&d, spec, env, err)) {
        CHECK_MSG(0, "%s: %s", spec, err);
        return;
    }
    int equal = 0;
    for (int i = 0; i < n; i++) {
        int n_want = dec_check_greedy(env, ids[i], lens[i], 256, want), n_got = -1;
        dec_stats st;
        CHECK_MSG(dec_generate(d, ids[i], lens[i], 256, got, &n_got, &st, err) == 0, "%s", err);
        int same = n_got == n_want && !memcmp(got, want, sizeof(int) * (size_t)n_want);
        CHECK_MSG(same, "%s %s prompt %d: %d tokens vs greedy's %d", what, spec, i, n_got, n_want);
        equal += same;
        sum->new_tokens += st.new_tokens, sum->target_steps += st.target_steps;
        sum->target_rows += st.target_rows, sum->drafted += st.drafted;
        sum->accepted += st.accepted;
        for (int c = 0; c < st.n_counters; c++)
            cnt[c] = st.counter_defs[c].agg == STAT_MAX ? st.counters[c] : cnt[c] + st.counters[c];
        /* the trees' nodes are the decode rows but the roots; every decode row and the
         * prompt's last wrote a row of the matrix */
        CHECK_MSG(st.counters[0] == st.target_rows - (st.target_steps - 1) &&
                      st.counters[3] == st.target_rows + 1 && st.counters[4] <= 512,
                  "%s prompt %d: %.0f nodes, %.0f rows written, %ld rows in %ld steps", spec, i,
                  st.counters[0], st.counters[3], st.target_rows, st.target_steps);
    }
    fprintf(stderr,
            "%s %s: %d/%d equal, %.2f tokens per target step, %.1f rows per step, %.0f empty "
            "steps; matrix of %.0f rows\n",
            what, spec, equal, n, (double)sum->new_tokens / sum->target_steps,
            (double)sum->target_rows / (sum->target_steps - n), cnt[2], cnt[4]);
    dec_free(d);
}

static void test_real(const model *m, const char *what, int n) {
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_stats warm, cold, st;
    double cw[STAT_MAX_COUNTERS], cc[STAT_MAX_COUNTERS], c[STAT_MAX_COUNTERS];
    run_prompts(&env, "recycle", n, &warm, cw, what);
    run_prompts(&env, "recycle:warm=0", n, &cold, cc, what);
    CHECK_MSG(warm.target_steps < cold.target_steps && cw[2] < cc[2],
              "%s: warm %ld steps (%.0f empty), cold %ld (%.0f empty)", what, warm.target_steps,
              cw[2], cold.target_steps, cc[2]);
    CHECK_MSG((double)warm.new_tokens / warm.target_steps > 1.8, "%s: %.2f tokens per step", what,
              (double)warm.new_tokens / warm.target_steps);
    run_prompts(&env, "recycle:nodes=16", n, &st, c, what);
    CHECK(c[1] <= 16);
    run_prompts(&env, "recycle:k=1,nodes=4", n / 2, &st, c, what); /* a chain of 4 */
    CHECK(c[1] <= 4 && st.drafted <= 4 * (st.target_steps - n / 2));
    run_prompts(&env, "recycle:tree=uniform,shape=2-2-1,k=2", n / 2, &st, c, what);
    run_prompts(&env, "recycle:tree=sequoia,nodes=16", n / 2, &st, c, what);
    CHECK(c[1] <= 16);
}

/* ---- 4. synthetic grid ----------------------------------------------------------------------- */

static void test_synthetic(void) {
    char err[ERR_LEN];
    model *donor, *rep;
    model *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model_config c; /* tied: greedy repeats itself, long accepted runs */
    CHECK(synth_config("64,160,2,4,2,512,512", &c, err) == 0 && synth_model(&rep, &c, 4, err) == 0);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const char *specs[] = {"recycle", "recycle:k=2,nodes=5",
                           "recycle:tree=uniform,shape=1-1-1-1-1-1-1-1,k=1", "recycle:warm=0",
                           "recycle:tree=sequoia,nodes=12,depth=8,accept=0.8/0.1"};
    const int max_news[] = {0, 1, 2, 37}, plen[] = {1, 9, 300};
    char what[96];
    for (int si = 0; si < 5; si++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 3; li++)
                for (int k = 0; k < 2; k++) {
                    dec_env env = {.target = k ? rep : m, .kernels = KERN_EXACT};
                    dec_stats st;
                    snprintf(what, sizeof what, "synthetic %s, prompt %d, max_new %d",
                             k ? "repeating" : "untied", plen[li], max_news[mi]);
                    CHECK(dec_check_exact(&env, specs[si], prompt, plen[li], max_news[mi], NULL,
                                          &st, NULL, what));
                    if (max_news[mi] == 0) CHECK(st.target_steps == 0);
                    if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                    /* a repeating output: the prompt pass fills the repeated token's row, so
                     * deep trees accept most tokens from the first step on */
                    if (k && max_news[mi] == 37 && si != 1)
                        CHECK_MSG(st.accepted >= 25, "%s %s: %ld accepted", specs[si], what,
                                  st.accepted);
                }
    dec_env env = {.target = rep, .kernels = KERN_EXACT};
    dec_stats st;
    CHECK(dec_check_exact(&env, "recycle", prompt, 505, 256, NULL, &st, NULL, "near seq_len"));
    CHECK(st.new_tokens == 7);
    model_close(m), model_close(donor), model_close(rep);
}

/* ---- 5, 6. allocation, state ----------------------------------------------------------------- */

static void test_no_malloc(const model *m) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    dec *d;
    int n;
    dec_stats st;
    CHECK(dec_create(&d, "recycle", &env, err) == 0);
    long before = dec_check_mallocs;
    for (int i = 0; i < 4; i++)
        CHECK(dec_generate(d, ids[i], lens[i], 200, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
              dec_check_mallocs - before);
    dec_free(d);
}

static int same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, ca;
    while (same && (ca = fgetc(fa)) != EOF) same = ca == fgetc(fb);
    if (same) same = fgetc(fb) == EOF;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* A copy of src with byte `at` changed (flip) or cut there (!flip). */
static void damaged_copy(const char *src, const char *dst, long at, int flip) {
    FILE *f = fopen(src, "rb"), *g = fopen(dst, "wb");
    int c;
    for (long i = 0; f && g && (c = fgetc(f)) != EOF; i++) {
        if (i == at && !flip) break;
        fputc(i == at ? c ^ 0x5a : c, g);
    }
    if (f) fclose(f);
    if (g) fclose(g);
}

static void test_state(const model *m) {
    char err[ERR_LEN], what[128];
    const int V = m->cfg.vocab_size;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT], mat[512 * 8];
    int n;
    dec_stats st, st2;
    const char *f1 = strcpy((char[4096]){0}, test_tmp("state1.bin"));
    const char *f2 = strcpy((char[4096]){0}, test_tmp("state2.bin"));
    const char *bad = strcpy((char[4096]){0}, test_tmp("bad.bin"));
    dec *a = NULL, *b = NULL;
    CHECK(dec_create(&a, "recycle", &env, err) == 0);
    CHECK(dec_create(&b, "recycle", &env, err) == 0);
    CHECK(!strcmp(dec_state_name(a), "matrix") && dec_state_check(a, err) == 0);
    /* an empty matrix saves and loads too */
    CHECK(dec_state_save(a, f1, what, sizeof what, err) == 0 &&
          !strcmp(what, "0 rows of 8 candidates"));
    CHECK(dec_state_load(b, f1, err) == 0);
    for (int i = 0; i < 5; i++)
        CHECK(dec_generate(a, ids[i], lens[i], 200, out, &n, &st, err) == 0);
    CHECK_MSG(dec_state_save(a, f1, what, sizeof what, err) == 0, "%s", err);
    long rows = read_matrix(f1, V, 8, mat);
    CHECK_MSG(rows > 50 && st.counters[4] == rows, "%ld rows saved, %.0f counted", rows,
              st.counters[4]);
    char want_what[64];
    snprintf(want_what, sizeof want_what, "%ld rows of 8 candidates", rows);
    CHECK_MSG(!strcmp(what, want_what), "%s", what);
    CHECK(dec_state_load(b, f1, err) == 0 && dec_state_save(b, f2, what, sizeof what, err) == 0);
    CHECK(same_files(f1, f2));
    /* the loaded decoder decodes the next prompt exactly as the original */
    CHECK(dec_generate(a, ids[5], lens[5], 200, out, &n, &st, err) == 0);
    CHECK(dec_generate(b, ids[5], lens[5], 200, out, &n, &st2, err) == 0);
    CHECK_MSG(st.target_steps == st2.target_steps && st.target_rows == st2.target_rows &&
                  st.accepted == st2.accepted,
              "after a load: %ld steps %ld rows, the original %ld %ld", st2.target_steps,
              st2.target_rows, st.target_steps, st.target_rows);
    CHECK(dec_state_save(a, f1, what, sizeof what, err) == 0);
    /* refusals leave the state as it was: b saved again equals a saved again */
    long size = read_matrix(f1, V, 8, mat) * 36 + 32;
    struct {
        long at;
        int flip;
        const char *msg;
    } cases[] = {
        {0, 1, "byte 0: not a decbench matrix file (magic DBRECYC1)"},
        {8, 1, "byte 8: version"},
        {12, 1, "byte 12: a vocabulary of"},
        {16, 1, "byte 16: rows of 82 candidates, the decoder keeps k=8"},
        {22, 1, "byte 20: 5898"}, /* the row count's third byte: past the vocabulary */
        {25, 1, "byte 24: row token"},
        {30, 1, "byte 28: candidate 1 of token"},
        {size - 1, 1, "checksum mismatch"},
        {size - 9, 0, "truncated in row"},
        {10, 0, "truncated: 10 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        damaged_copy(f1, bad, cases[i].at, cases[i].flip);
        CHECK(dec_state_load(b, bad, err) == -1);
        CHECK_MSG(strstr(err, bad) && strstr(err, cases[i].msg), "case %zu: %s", i, err);
    }
    /* well-sealed files a run would never write: a repeated candidate, rows out of order */
    for (int i = 0; i < V * 8; i++) mat[i] = -1;
    for (int j = 0; j < 8; j++) mat[5 * 8 + j] = 10 + j, mat[9 * 8 + j] = 20 + j;
    mat[9 * 8 + 3] = 21;
    write_matrix(bad, V, 8, mat, 1);
    CHECK(dec_state_load(b, bad, err) == -1 &&
          strstr(err, "byte 76: candidate 4 of token 9: 21, a repeat of an earlier one"));
    mat[9 * 8 + 3] = 23;
    long good = write_matrix(bad, V, 8, mat, 1);
    CHECK(good == 24 + 2 * 36 + 8);
    FILE *g = fopen(bad, "r+b"); /* swap the two rows' tokens: 9 then 5 */
    if (g) {
        unsigned char buf[128];
        CHECK(fread(buf, 1, (size_t)good, g) == (size_t)good);
        buf[24] = 9, buf[60] = 5;
        uint64_t h = hash_fnv1a(buf, (size_t)good - 8);
        put32(put32(buf + good - 8, (uint32_t)h), (uint32_t)(h >> 32));
        fseek(g, 0, SEEK_SET), fwrite(buf, 1, (size_t)good, g), fclose(g);
    }
    CHECK(dec_state_load(b, bad, err) == -1 &&
          strstr(err, "byte 60: row token 5, expected 10..511"));
    write_matrix(bad, V, 8, mat, 0);
    CHECK(dec_state_load(b, bad, err) == -1 && strstr(err, "checksum mismatch"));
    CHECK(dec_state_load(b, test_tmp("missing.bin"), err) == -1 && strstr(err, "cannot open"));
    CHECK(dec_state_save(a, f1, what, sizeof what, err) == 0 &&
          dec_state_save(b, f2, what, sizeof what, err) == 0 && same_files(f1, f2));
    dec_free(a), dec_free(b);
    /* another k, another vocabulary */
    CHECK(dec_create(&a, "recycle:k=4", &env, err) == 0);
    CHECK(dec_state_load(a, f1, err) == -1 &&
          strstr(err, "byte 16: rows of 8 candidates, the decoder keeps k=4"));
    dec_free(a);
    model *donor, *big = dec_check_synth_untied("64,160,2,4,2,1024,512", 1, &donor);
    dec_env benv = {.target = big, .kernels = KERN_EXACT};
    CHECK(dec_create(&a, "recycle", &benv, err) == 0);
    CHECK(dec_state_load(a, f1, err) == -1 &&
          strstr(err, "byte 12: a vocabulary of 512 tokens, the model has 1024"));
    dec_free(a);
    model_close(big), model_close(donor);
    CHECK(dec_create(&a, "recycle:warm=0", &env, err) == 0);
    CHECK(dec_state_check(a, err) == -1 && strstr(err, "(warm=0); use warm=1"));
    dec_free(a);
}

/* The fuzz target's seeds (a matrix of 2 prompts and an empty one, each with its checksum
 * restored by the mode byte and as it is) into <tmp>/seeds, then seeded mutations of them. */
static void test_fuzz_corpus(const model *m) {
    char err[ERR_LEN], dir[600], what[64];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    static uint8_t file[2][16384], seeds[4][16384], buf[16400];
    size_t fn[2], sizes[4];
    int n;
    dec_stats st;
    for (int f = 0; f < 2; f++) {
        dec *d;
        const char *path = strcpy((char[4096]){0}, test_tmp("seed_state.bin"));
        CHECK(dec_create(&d, "recycle:k=4", &env, err) == 0);
        for (int i = 0; i < 2 * f; i++)
            CHECK(dec_generate(d, ids[i], lens[i], 40, out, &n, &st, err) == 0);
        CHECK(dec_state_save(d, path, what, sizeof what, err) == 0);
        dec_free(d);
        FILE *g = fopen(path, "rb");
        fn[f] = g ? fread(file[f], 1, sizeof file[f], g) : 0;
        if (g) fclose(g);
        CHECK(fn[f] >= 32 && fn[f] < sizeof file[f]);
    }
    snprintf(dir, sizeof dir, "%s/seeds", test_tmpdir());
    mkdir(dir, 0755);
    for (int k = 0; k < 4; k++) {
        const size_t len = fn[k / 2];
        seeds[k][0] = (uint8_t)(k % 2); /* 1: the checksum appended, 0: the file as it is */
        memcpy(seeds[k] + 1, file[k / 2], k % 2 ? len - 8 : len);
        sizes[k] = 1 + (k % 2 ? len - 8 : len);
        char p[700];
        snprintf(p, sizeof p, "%s/seed%d", dir, k);
        FILE *g = fopen(p, "wb");
        if (g) fwrite(seeds[k], 1, sizes[k], g), fclose(g);
        fuzz_recycle_state_one(seeds[k], sizes[k]);
    }
    CHECK(fuzz_recycle_loaded == 4);
    const int total = test_sanitized() ? 600 : 3000;
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < total; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t k = r % 4, sz = sizes[k];
        memcpy(buf, seeds[k], sz);
        for (int mu = 0; mu < 1 + (int)(r >> 61); mu++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            size_t at = 1 + (r >> 8) % (sz - 1);
            switch (r % 4) {
            case 0:
                buf[at] = (uint8_t)(r >> 24);
                break;
            case 1:
                buf[at] ^= (uint8_t)(1u << ((r >> 32) % 8));
                break;
            case 2:
                if (sz > 2) memmove(buf + at, buf + at + 1, sz - at - 1), sz--;
                break;
            default:
                if (sz < sizeof buf)
                    memmove(buf + at + 1, buf + at, sz - at), buf[at] = (uint8_t)(r >> 40), sz++;
            }
        }
        fuzz_recycle_state_one(buf, sz);
    }
    fprintf(stderr, "  %d inputs through fuzz_recycle_state_one, %d loaded\n", total + 4,
            fuzz_recycle_loaded);
    CHECK(fuzz_recycle_loaded > 4);
    fuzz_recycle_state_done();
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_recycle");
    test_brute_force(s260);
    test_full_matrix(s260);
    test_no_malloc(s260);
    test_state(s260);
    test_fuzz_corpus(s260);
    test_synthetic();
    const int n = test_sanitized() ? N_PROMPTS / 4 : N_PROMPTS;
    test_real(s260, "stories260K", n);
    test_real(xs, "llama2xs", test_sanitized() ? 2 : 8);
    model_close(s260), model_close(xs);
    return test_finish("test_recycle");
}
