/* test_rest.c: REST (decoders/rest.c) and its datastore (util/token_store.c).
 *  1. the suffix array against sorting with a comparator, over random and repetitive texts of
 *     small and large vocabularies; lookups against brute-force counts;
 *  2. the file: write -> load gives the same store; every truncation and every flipped byte of
 *     a file is refused with a message naming it; crafted files with a valid checksum (token
 *     outside the vocabulary, suffix array entry out of range, repeated, out of order, another
 *     version, trailing bytes, another vocabulary's size or fingerprint) are refused naming the
 *     byte; a missing file and a folder too;
 *  3. the decoder's refusals (no ds, a missing or foreign datastore, min_span > max_span, a ds
 *     value with a separator) and its canonical spec;
 *  4. real models: stories260K and llama2xs, the first 20 TinyStories prompts x 256 new tokens
 *     against a datastore of the paragraphs of records 64 on (never the prompts'): exact with
 *     the defaults and small variants, with hits, more than one token per step, and counters
 *     that agree with the framework's; a datastore holding greedy's own outputs: long accepted
 *     paths, a story's end token inside one;
 *  5. synthetic grid (max_new 0/1/2/37, one-token and longer prompts, a model that repeats
 *     itself) and a prompt near the context's end;
 *  6. generate() allocates nothing;
 *  7. the fuzz target's seeds and 3000 mutations replayed (tests/fuzz_datastore.c).
 * Under the sanitizers (testutil.h test_sanitized) the real prompts' runs take a quarter of the
 * prompts; every variant still runs and is compared with greedy. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoders/decoder.h"
#include "model/convert/synth.h"
#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/fuzz_datastore.c"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"
#include "util/token_store.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 20
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];
static char store_path[4096]; /* TinyStories paragraphs of records 64 on */

/* ---- 1. the suffix array ------------------------------------------------------------------- */

static const uint32_t *cmp_text;
static int cmp_n;
static int cmp_suffix(const void *a, const void *b) {
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    while (i < (uint32_t)cmp_n && j < (uint32_t)cmp_n) {
        if (cmp_text[i] != cmp_text[j]) return cmp_text[i] < cmp_text[j] ? -1 : 1;
        i++, j++;
    }
    return i < (uint32_t)cmp_n ? 1 : j < (uint32_t)cmp_n ? -1 : 0; /* the shorter first */
}

static void test_suffix_array(void) {
    char err[ERR_LEN];
    rng_state r;
    rng_seed(&r, 7);
    static uint32_t text[3000], sa[3000], want[3000];
    const int vocabs[] = {1, 2, 3, 7, 512, 70000}, lens_[] = {1, 2, 5, 64, 999, 3000};
    int bad = 0, finds = 0;
    for (int vi = 0; vi < 6; vi++)
        for (int li = 0; li < 6; li++)
            for (int kind = 0; kind < 3; kind++) {
                const int V = vocabs[vi], n = lens_[li];
                for (int i = 0; i < n; i++) /* random, periodic, runs of one token */
                    text[i] = kind == 0   ? (uint32_t)(rng_u64(&r) % (uint64_t)V)
                              : kind == 1 ? (uint32_t)((i % 5 * 7) % V)
                                          : (uint32_t)((i / 37) % V);
                CHECK(tstore_sa_build(text, n, V, sa, err) == 0);
                for (int i = 0; i < n; i++) want[i] = (uint32_t)i;
                cmp_text = text, cmp_n = n;
                qsort(want, (size_t)n, sizeof want[0], cmp_suffix);
                bad += memcmp(sa, want, sizeof(uint32_t) * (size_t)n) != 0;
                tstore s = {.tok = text, .sa = sa, .n = n, .vocab = V};
                for (int t = 0; t < 40; t++) { /* lookups: substrings, and random patterns */
                    int q[6], m = 1 + (int)(rng_u64(&r) % 6), at = (int)(rng_u64(&r) % n);
                    for (int j = 0; j < m; j++)
                        q[j] = t % 2 && at + j < n ? (int)text[at + j]
                                                   : (int)(rng_u64(&r) % (uint64_t)V);
                    int c = 0, lo, hi;
                    for (int i = 0; i + m <= n; i++) {
                        int j = 0;
                        while (j < m && (int)text[i + j] == q[j]) j++;
                        c += j == m;
                    }
                    int got = tstore_find(&s, q, m, &lo, &hi);
                    finds += got > 0;
                    CHECK_MSG(got == c, "V %d n %d kind %d: %d found, %d occur", V, n, kind, got,
                              c);
                    for (int i = lo; i < hi; i++) {
                        int ok = (int)sa[i] + m <= n;
                        for (int j = 0; ok && j < m; j++) ok = (int)text[sa[i] + j] == q[j];
                        CHECK(ok);
                    }
                }
            }
    CHECK_MSG(bad == 0, "%d suffix arrays differ from sorting", bad);
    CHECK(finds > 500);
}

/* ---- 2. the file ---------------------------------------------------------------------------- */

static long file_size(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 ? (long)s.st_size : -1;
}

static size_t read_file(const char *path, unsigned char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap, f) : 0;
    if (f) fclose(f);
    return n;
}

static void write_file(const char *path, const unsigned char *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f) fwrite(buf, 1, n, f), fclose(f);
}

static void put32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
}

/* Seals buf[0..n) with its checksum (the last 8 bytes). */
static void reseal(unsigned char *buf, size_t n) {
    uint64_t h = hash_fnv1a(buf, n - 8);
    put32(buf + n - 8, (uint32_t)h), put32(buf + n - 4, (uint32_t)(h >> 32));
}

/* A crafted variant of the file must fail with a message naming the path and containing want. */
static void refused(const unsigned char *buf, size_t n, const char *path, const char *want,
                    uint64_t fp) {
    char err[ERR_LEN];
    tstore *s = (tstore *)1;
    int rc = tstore_load_bytes(&s, buf, n, 512, fp, path, err);
    CHECK_MSG(rc == -1 && s == NULL && strstr(err, path) && strstr(err, want),
              "want '%s', got rc %d: %s", want, rc, rc ? err : "");
}

static void test_file(void) {
    char err[ERR_LEN];
    enum { N = 40 };
    uint32_t text[N];
    for (int i = 0; i < N; i++) text[i] = (uint32_t)((i * 7 + i / 3) % 11 + 1);
    const char *path = strcpy((char[4096]){0}, test_tmp("small.ds"));
    const uint64_t fp = 0x1234567890abcdefull;
    CHECK_MSG(tstore_write(path, text, N, 3, 512, fp, err) == 0, "%s", err);
    tstore *s;
    CHECK_MSG(tstore_load(&s, path, 512, fp, err) == 0, "%s", err);
    CHECK(s && s->n == N && s->docs == 3 && s->fingerprint == fp &&
          !memcmp(s->tok, text, sizeof text));
    tstore_free(s);
    CHECK(tstore_load(&s, path, 512, 0, err) == 0); /* an unknown fingerprint: size only */
    tstore_free(s);
    static unsigned char buf[1024], bad[1024];
    size_t n = read_file(path, buf, sizeof buf);
    CHECK(n == TSTORE_HEADER + 8 * N + 8 && (long)n == file_size(path));
    /* every truncation and every flipped byte */
    int refused_all = 1;
    for (size_t cut = 0; cut < n; cut++)
        refused_all &= tstore_load_bytes(&s, buf, cut, 512, fp, "cut.ds", err) == -1 &&
                       strstr(err, "cut.ds") != NULL;
    for (size_t at = 0; at < n; at++) {
        memcpy(bad, buf, n);
        bad[at] ^= 0x24;
        refused_all &= tstore_load_bytes(&s, bad, n, 512, fp, "flip.ds", err) == -1 &&
                       strstr(err, "flip.ds") != NULL;
    }
    CHECK_MSG(refused_all, "a truncated or corrupted datastore was accepted");
    /* crafted, with a valid checksum */
    memcpy(bad, buf, n);
    put32(bad + TSTORE_HEADER + 4 * 5, 512), reseal(bad, n);
    refused(bad, n, "x.ds", "byte 52: token 512 (index 5) is not in the vocabulary", fp);
    memcpy(bad, buf, n);
    put32(bad + TSTORE_HEADER + 4 * N + 4 * 3, N), reseal(bad, n);
    refused(bad, n, "x.ds", "suffix array entry 3 is 40, past the 40 tokens", fp);
    memcpy(bad, buf, n);
    memcpy(bad + TSTORE_HEADER + 4 * N + 4, bad + TSTORE_HEADER + 4 * N, 4), reseal(bad, n);
    refused(bad, n, "x.ds", "suffix array entry 1 repeats", fp);
    memcpy(bad, buf, n); /* the first and last entries swapped: out of order */
    memcpy(bad + TSTORE_HEADER + 4 * N, buf + TSTORE_HEADER + 8 * N - 4, 4);
    memcpy(bad + TSTORE_HEADER + 8 * N - 4, buf + TSTORE_HEADER + 4 * N, 4), reseal(bad, n);
    refused(bad, n, "x.ds", "out of order", fp);
    memcpy(bad, buf, n);
    put32(bad + 8, 2), reseal(bad, n);
    refused(bad, n, "x.ds", "byte 8: version 2, expected 1", fp);
    memcpy(bad, buf, n);
    put32(bad + 24, N + 1), reseal(bad, n);
    refused(bad, n, "x.ds", "truncated", fp);
    memcpy(bad, buf, n);
    put32(bad + 24, 0xffffffffu), reseal(bad, n);
    refused(bad, n, "x.ds", "byte 24", fp);
    memcpy(bad, buf, n);
    put32(bad + 28, N + 1), reseal(bad, n);
    refused(bad, n, "x.ds", "byte 28", fp);
    memcpy(bad, buf, n);
    memcpy(bad + n, buf + n - 8, 8), memset(bad + n - 8, 0, 8), reseal(bad, n + 8);
    refused(bad, n + 8, "x.ds", "unexpected bytes", fp);
    refused(buf, n, "x.ds", "byte 16: built with another vocabulary", fp + 1);
    CHECK(tstore_load_bytes(&s, buf, n, 32000, fp, "v.ds", err) == -1 &&
          strstr(err, "v.ds: byte 12: built for a vocabulary of 512 tokens, the model has 32000"));
    memcpy(bad, buf, n), memcpy(bad, "DBTOKSTX", 8);
    refused(bad, n, "x.ds", "byte 0: not a decbench datastore", fp);
    /* an empty store loads and finds nothing */
    CHECK(tstore_write(test_tmp("empty.ds"), text, 0, 0, 512, fp, err) == 0);
    CHECK(tstore_load(&s, test_tmp("empty.ds"), 512, fp, err) == 0 && s->n == 0);
    int lo, hi, q[1] = {1};
    CHECK(tstore_find(s, q, 1, &lo, &hi) == 0);
    tstore_free(s);
    /* no file, a folder; a token outside the vocabulary is not written */
    CHECK(tstore_load(&s, test_tmp("absent.ds"), 512, 0, err) == -1 && strstr(err, "absent.ds"));
    CHECK(tstore_load(&s, test_tmpdir(), 512, 0, err) == -1 && strstr(err, "directory"));
    text[3] = 600;
    CHECK(tstore_write(test_tmp("w.ds"), text, N, 1, 512, 0, err) == -1 &&
          strstr(err, "token 600 at 3"));
}

/* ---- 3. the decoder's refusals and spec ------------------------------------------------------ */

static void test_refusals(const model *m) {
    char err[ERR_LEN], spec[4200];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d = NULL;
    CHECK(dec_create(&d, "rest", &env, err) == -1 && strstr(err, "rest needs a datastore"));
    CHECK(dec_create(&d, "rest:ds=/nonexistent/x.ds", &env, err) == -1 &&
          strstr(err, "/nonexistent/x.ds"));
    snprintf(spec, sizeof spec, "rest:ds=%s,min_span=5,max_span=4", store_path);
    CHECK(dec_create(&d, spec, &env, err) == -1 && strstr(err, "min_span=5 is more than"));
    CHECK(dec_create(&d, "rest:ds=a;b", &env, err) == -1 && strstr(err, "without ','"));
    dec_info info;
    CHECK(dec_describe("rest:ds=x.ds,num_draft=8", &info, err) == 0 &&
          !strcmp(info.spec, "rest:ds=x.ds,max_span=16,min_span=2,num_draft=8,cont=10,k=5000"));
    CHECK(dec_describe("rest", &info, err) == 0 &&
          !strcmp(info.spec, "rest:max_span=16,min_span=2,num_draft=64,cont=10,k=5000"));
    /* another vocabulary: of another size (a 32000-token store), or of the same size */
    uint32_t t[3] = {1, 5, 2};
    const char *big = strcpy((char[4096]){0}, test_tmp("v32000.ds"));
    CHECK(tstore_write(big, t, 3, 1, 32000, 0, err) == 0);
    snprintf(spec, sizeof spec, "rest:ds=%s", big);
    CHECK(dec_create(&d, spec, &env, err) == -1 && strstr(err, "byte 12") && strstr(err, big));
    snprintf(spec, sizeof spec, "rest:ds=%s", store_path);
    dec_env other = env;
    other.vocab_fingerprint = 42;
    CHECK(dec_create(&d, spec, &other, err) == -1 && strstr(err, "byte 16"));
    CHECK(dec_create(&d, spec, &env, err) == 0);
    dec_free(d);
    /* shape=sequoia's parameters */
    const char *bad[][2] = {{",accept=0.5", "shape=count does not use them"},
                            {",levels=3", "shape=count does not use them"},
                            {",shape=sequoia,accept=0.7/0.5", "rest: accept"}};
    for (int i = 0; i < 3; i++) {
        d = NULL;
        snprintf(spec, sizeof spec, "rest:ds=%s%s", store_path, bad[i][0]);
        CHECK_MSG(dec_create(&d, spec, &env, err) == -1 && strstr(err, bad[i][1]), "%s: %s",
                  bad[i][0], err);
        dec_free(d);
    }
}

/* ---- 4. real models ------------------------------------------------------------------------- */

/* spec over prompts [0, n) x 256 tokens: every output greedy's; sums into *sum and cnt. */
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
        sum->target_rows += st.target_rows, sum->accepted += st.accepted;
        for (int c = 0; c < st.n_counters; c++) cnt[c] += st.counters[c];
        /* hits <= decode steps; accepted = the framework's; nodes within num_draft a hit */
        CHECK(st.counters[0] <= st.target_steps - 1 && st.counters[3] == st.accepted &&
              st.counters[1] >= st.counters[0] && st.counters[2] <= 64 * st.counters[0]);
    }
    fprintf(stderr,
            "%s %s: %d/%d equal, %.2f tokens per target step, %.1f rows per step; %.0f hits, "
            "mean match %.1f, %.1f nodes a hit\n",
            what, spec, equal, n, (double)sum->new_tokens / sum->target_steps,
            (double)sum->target_rows / (sum->target_steps - n), cnt[0],
            cnt[1] / (cnt[0] ? cnt[0] : 1), cnt[2] / (cnt[0] ? cnt[0] : 1));
    dec_free(d);
}

static void test_real(const model *m, const char *what, int n) {
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_stats st;
    double c[STAT_MAX_COUNTERS];
    char spec[4300];
    const char *variants[] = {"",        ",num_draft=8",           ",cont=1",
                              ",max_span=3,min_span=3", ",k=1,num_draft=3", ",shape=sequoia",
                              ",shape=sequoia,num_draft=8,levels=3"};
    for (int v = 0; v < 7; v++) {
        snprintf(spec, sizeof spec, "rest:ds=%s%s", store_path, variants[v]);
        run_prompts(&env, spec, v ? n / 2 : n, &st, c, what);
        CHECK_MSG(c[0] > 0 && st.accepted > 0, "%s %s: %.0f hits, %ld accepted", what, spec, c[0],
                  st.accepted);
        if (v == 0)
            CHECK_MSG((double)st.new_tokens / st.target_steps > 1.3, "%s: %.2f tokens per step",
                      what, (double)st.new_tokens / st.target_steps);
        if (v == 2) CHECK(st.target_rows <= 1 + st.target_steps * 64); /* depth 1 */
        /* Sequoia's shape: every accepted token counted by its sibling rank, rank 0 most */
        if (v >= 5)
            CHECK_MSG(c[5] > c[6] && c[5] + c[6] + c[7] + c[8] == st.accepted,
                      "%s %s: accepted by rank %.0f %.0f %.0f %.0f of %ld", what, spec, c[5],
                      c[6], c[7], c[8], st.accepted);
    }
}

/* A datastore of greedy's own outputs: retrieval finds the text being written. */
static void on_step(void *user, const dec_step *s) {
    *(dec_step *)user = *s;
}

static void test_own_outputs(const model *m) {
    char err[ERR_LEN], spec[4200];
    static int want[8][DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    static uint32_t text[8 * (DEC_CHECK_MAX_OUT + DEC_CHECK_MAX_PROMPT)];
    int n_want[8], total = 0;
    dec_step last = {0};
    dec_env env = {.target = m, .kernels = KERN_EXACT, .on_step = on_step, .user = &last};
    for (int i = 0; i < 8; i++) {
        n_want[i] = dec_check_greedy(&env, ids[i], lens[i], 400, want[i]);
        for (int j = 0; j < lens[i]; j++) text[total++] = (uint32_t)ids[i][j];
        for (int j = 0; j < n_want[i]; j++) text[total++] = (uint32_t)want[i][j];
    }
    const char *path = strcpy((char[4096]){0}, test_tmp("own.ds"));
    CHECK(tstore_write(path, text, total, 8, 512, 0, err) == 0);
    snprintf(spec, sizeof spec, "rest:ds=%s", path);
    dec *d;
    CHECK(dec_create(&d, spec, &env, err) == 0);
    int ended_inside = 0;
    long steps = 0, toks = 0;
    for (int i = 0; i < 8; i++) {
        int n;
        dec_stats st;
        CHECK(dec_generate(d, ids[i], lens[i], 400, got, &n, &st, err) == 0);
        CHECK(n == n_want[i] && !memcmp(got, want[i], sizeof(int) * (size_t)n));
        steps += st.target_steps, toks += n;
        if (n < 400 && last.accepted > 0 && last.emitted == last.accepted) {
            ended_inside++;
            CHECK(got[n - 1] == m->cfg.end_id);
        }
    }
    dec_free(d);
    fprintf(stderr, "own outputs: %.2f tokens per target step\n", (double)toks / steps);
    CHECK_MSG((double)toks / steps > 4, "%.2f tokens per step", (double)toks / steps);
    CHECK_MSG(ended_inside > 0, "no story ended inside an accepted path");
}

/* ---- 5. synthetic grid ------------------------------------------------------------------------
 */

static void test_synthetic(void) {
    char err[ERR_LEN], spec[4300];
    model *donor, *rep;
    model *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model_config c; /* tied: greedy repeats itself */
    CHECK(synth_config("64,160,2,4,2,512,512", &c, err) == 0 && synth_model(&rep, &c, 4, err) == 0);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    /* the store: both models' greedy outputs after the long prompt, then the prompt */
    static int out[2][DEC_CHECK_MAX_OUT];
    static uint32_t text[2 * DEC_CHECK_MAX_OUT + DEC_CHECK_SYNTH_PROMPT];
    int total = 0;
    for (int k = 0; k < 2; k++) {
        dec_env env = {.target = k ? rep : m, .kernels = KERN_EXACT};
        int n = dec_check_greedy(&env, prompt, 300, 100, out[k]);
        for (int j = 0; j < n; j++) text[total++] = (uint32_t)out[k][j];
    }
    for (int j = 0; j < 300; j++) text[total++] = (uint32_t)prompt[j];
    const char *path = strcpy((char[4096]){0}, test_tmp("synth.ds"));
    CHECK(tstore_write(path, text, total, 3, 512, 0, err) == 0);
    const char *variants[] = {"", ",num_draft=3,cont=2", ",max_span=1,min_span=1",
                              ",num_draft=200,cont=40", ",shape=sequoia,num_draft=12"};
    const int max_news[] = {0, 1, 2, 37}, plen[] = {1, 9, 300};
    char what[96];
    for (int si = 0; si < 5; si++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 3; li++)
                for (int k = 0; k < 2; k++) {
                    dec_env env = {.target = k ? rep : m, .kernels = KERN_EXACT};
                    dec_stats st;
                    snprintf(spec, sizeof spec, "rest:ds=%s%s", path, variants[si]);
                    snprintf(what, sizeof what, "synthetic %s, prompt %d, max_new %d",
                             k ? "repeating" : "untied", plen[li], max_news[mi]);
                    CHECK(dec_check_exact(&env, spec, prompt, plen[li], max_news[mi], NULL, &st,
                                          NULL, what));
                    if (max_news[mi] == 0) CHECK(st.target_steps == 0);
                    if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                    /* the 300-token prompt: its outputs are in the store */
                    if (li == 2 && max_news[mi] == 37 && si != 2)
                        CHECK_MSG(st.accepted > 15, "%s %s: %ld accepted", variants[si], what,
                                  st.accepted);
                }
    dec_env env = {.target = rep, .kernels = KERN_EXACT};
    dec_stats st;
    snprintf(spec, sizeof spec, "rest:ds=%s", path);
    CHECK(dec_check_exact(&env, spec, prompt, 505, 256, NULL, &st, NULL, "near seq_len"));
    CHECK(st.new_tokens == 7);
    model_close(m), model_close(donor), model_close(rep);
}

/* ---- 6, 7. allocation, the fuzz corpus ------------------------------------------------------ */

static void test_no_malloc(const model *m) {
    char err[ERR_LEN], spec[4200];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    dec *d;
    int n;
    dec_stats st;
    snprintf(spec, sizeof spec, "rest:ds=%s", store_path);
    CHECK(dec_create(&d, spec, &env, err) == 0);
    long before = dec_check_mallocs;
    for (int i = 0; i < 4; i++)
        CHECK(dec_generate(d, ids[i], lens[i], 300, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
              dec_check_mallocs - before);
    dec_free(d);
}

static void test_fuzz_corpus(void) {
    char err[ERR_LEN], dir[600];
    uint32_t text[60];
    for (int i = 0; i < 60; i++) text[i] = (uint32_t)((i * 5 + i / 7) % 13 + 1);
    const char *path = strcpy((char[4096]){0}, test_tmp("seed.ds"));
    CHECK(tstore_write(path, text, 60, 2, FUZZ_VOCAB, 0, err) == 0);
    static uint8_t file[4096], seeds[3][4096], buf[4096];
    size_t fn = read_file(path, file, sizeof file);
    CHECK(fn == TSTORE_HEADER + 8 * 60 + 8);
    snprintf(dir, sizeof dir, "%s/seeds", test_tmpdir());
    mkdir(dir, 0755);
    size_t sizes[3];
    for (int k = 0; k < 3; k++) { /* with the checksum restored, kept as is, and a short file */
        seeds[k][0] = k != 1;
        memcpy(seeds[k] + 1, file, fn - 8);
        sizes[k] = fn - 7;
        if (k == 1) memcpy(seeds[k] + 1 + fn - 8, file + fn - 8, 8), sizes[k] = fn + 1;
        if (k == 2) { /* 3 tokens: its header says so and its suffix array is rebuilt */
            uint32_t t3[3] = {4, 4, 2};
            CHECK(tstore_write(path, t3, 3, 1, FUZZ_VOCAB, 0, err) == 0);
            size_t n3 = read_file(path, file, sizeof file);
            memcpy(seeds[k] + 1, file, n3 - 8), sizes[k] = n3 - 7;
        }
        char p[700];
        snprintf(p, sizeof p, "%s/seed%d", dir, k);
        write_file(p, seeds[k], sizes[k]);
        fuzz_datastore_one(seeds[k], sizes[k]);
    }
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3000; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t k = r % 3, sz = sizes[k];
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
        fuzz_datastore_one(buf, sz);
    }
    fprintf(stderr, "  3003 inputs through fuzz_datastore_one\n");
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    test_suffix_array();
    test_file();
    test_fuzz_corpus();
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    snprintf(store_path, sizeof store_path, "%s", test_tmp("tinystories.ds"));
    if (!s260 || !xs || dec_check_tinystories(N_PROMPTS, ids, lens) ||
        dec_check_rest_store(store_path, 64, 1000))
        return test_finish("test_rest");
    test_refusals(s260);
    test_no_malloc(s260);
    test_synthetic();
    test_own_outputs(s260);
    test_real(s260, "stories260K", test_sanitized() ? N_PROMPTS / 4 : N_PROMPTS);
    test_real(xs, "llama2xs", test_sanitized() ? 4 : 8);
    model_close(s260), model_close(xs);
    return test_finish("test_rest");
}
