/* test_sam.c: SAM-Decoding (decoders/sam.c); its automaton has test_suffix_automaton.c.
 *  1. the draft rule (white box: the decoder's file is compiled into this test): the
 *     continuation of the first occurrence, cut at the text's end and after an end token; the
 *     dynamic match shortened along suffix links while fewer than k + 1 tokens follow it, never
 *     to the root (the reference's to_anc);
 *  2. exactness on both real models, the first 20 TinyStories prompts x 256 new tokens at the
 *     default (it must draft and gain), other settings on a few prompts;
 *  3. the datastore: a file of token sequences (the suffix tree's format) of the greedy
 *     outputs of prompts 10..14 makes their second decoding draft from the static automaton,
 *     exact, in fewer target steps; a suffix decoder's saved tree loads as a datastore;
 *     save -> load -> save keeps the bytes; damaged, foreign, missing and oversized (store=N)
 *     files are refused naming the file and change nothing; 400 seeded mutations of a datastore
 *     file (random tokens, bit flips, cuts; half with the checksum made right, so they reach
 *     the tokens): a refused one leaves the datastore as it was, a loaded one (any tokens of
 *     the vocabulary) decodes exactly;
 *  4. synthetic grid: k 1/4/16 x threshold 1/5 x max_new 0/1/2/37 x prompts of 1 and 9 tokens,
 *     on an untied random model and a positional one, with and without a datastore; a prompt
 *     that repeats itself; the end token inside an accepted run; context edges;
 *  5. generate() allocates nothing; a match with nothing after it drafts nothing and counts no
 *     match length; parameter errors.
 * Under the sanitizers (testutil.h test_sanitized) the real prompts' runs take 5 of 20 prompts
 * (2 of 3 for the other specs); every spec still runs and is compared with greedy. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/rng.h"

#define dec_sam_vtable sam_vtable_under_test
#include "decoders/sam.c"
#undef dec_sam_vtable

DEC_CHECK_COUNT_MALLOC

static int ids[20][DEC_CHECK_MAX_PROMPT], lens[20];

/* ---- 1. the draft rule ---------------------------------------------------------------------- */

static suffix_automaton *build(const int *t, int n) {
    char err[ERR_LEN];
    suffix_automaton *a = NULL;
    CHECK_MSG(sauto_new(&a, 64, err) == 0, "%s", err);
    for (int i = 0; a && i < n; i++) sauto_append(a, t[i]);
    return a;
}

/* The dynamic draft of the decoder for text t (the current token cur not in it). */
static int dyn_draft(const suffix_automaton *a, const int *t, int n, int cur, int k, int end_id,
                     int *out, int *match) {
    sauto_match m = {0, 0};
    for (int i = 0; i < n; i++) m = sauto_step(a, m, t[i]);
    m = sauto_step(a, m, cur);
    *match = m.len;
    return continuation(a, to_anc(a, m.state, k), k, end_id, out);
}

static void test_draft_rule(void) {
    int out[16], match;
    /* "1 2 3" first ends at 2 (and again at 6): its continuation from 3 on */
    const int a[] = {1, 2, 3, 4, 1, 2, 3, 5, 1, 2};
    suffix_automaton *sa = build(a, 10);
    if (!sa) return;
    CHECK(dyn_draft(sa, a, 10, 3, 4, -1, out, &match) == 4 && match == 3);
    CHECK(out[0] == 4 && out[1] == 1 && out[2] == 2 && out[3] == 3);
    /* k = 8: fewer follow (7), and the match's link is the root: stays, cut at the end */
    CHECK(dyn_draft(sa, a, 10, 3, 8, -1, out, &match) == 7 && out[6] == 2);
    /* cut after the end token 5 */
    CHECK(dyn_draft(sa, a, 10, 3, 8, 5, out, &match) == 5 && out[4] == 5);
    /* no match at all: the root's continuation is never asked for (match 0) */
    CHECK(dyn_draft(sa, a, 10, 11, 4, -1, out, &match) >= 0 && match == 0);
    sauto_free(sa);
    /* "4 2" occurs only at 7..8 (3 tokens follow); "2" first at 0 */
    const int b[] = {2, 6, 6, 6, 6, 6, 6, 4, 2, 3, 3, 4};
    sa = build(b, 12);
    if (!sa) return;
    CHECK(dyn_draft(sa, b, 12, 2, 2, -1, out, &match) == 2 && match == 2);
    CHECK(out[0] == 3 && out[1] == 3); /* 3 >= k + 1 follow: the match as is */
    CHECK(dyn_draft(sa, b, 12, 2, 4, -1, out, &match) == 4 && match == 2);
    CHECK(out[0] == 6 && out[3] == 6); /* 3 < k + 1: shortened to "2", first at 0 */
    sauto_free(sa);
}

/* ---- 2. real models -------------------------------------------------------------------------- */

static void test_real(const char *path) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared(path), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_check_exact(&env, "sam", &m->cfg.bos_id, 1, 256, NULL, NULL, NULL, "BOS-only prompt");
    const char *specs[] = {"sam", "sam:threshold=1", "sam:k=1", "sam:k=39,bias=0"};
    for (int si = 0; si < 4; si++) {
        long tokens = 0, steps = 0, drafted = 0, accepted = 0, equal = 0;
        int n = si == 0 ? (test_sanitized() ? 5 : 20) : (test_sanitized() ? 2 : 3);
        for (int i = 0; i < n; i++) {
            dec_stats st;
            equal += dec_check_exact(&env, specs[si], ids[i], lens[i], 256, NULL, &st, NULL, path);
            tokens += st.new_tokens, steps += st.target_steps;
            drafted += st.drafted, accepted += st.accepted;
            CHECK(st.counters[SC_DYN_TOKENS] == st.drafted &&
                  st.counters[SC_DYN_ACCEPTED] == st.accepted &&
                  st.counters[SC_STATIC_STEPS] == 0 && st.counters[SC_STORE_TOKENS] == 0);
        }
        fprintf(stderr,
                "%s %s: %ld/%d equal to greedy, %.3f tokens per target step, %.0f%% of "
                "drafted accepted\n",
                path, specs[si], equal, n, (double)tokens / steps,
                100.0 * accepted / (drafted ? drafted : 1));
        if (si == 0) CHECK((double)tokens / steps > 1.1);
    }
    model_close(m);
}

/* ---- 3. the datastore --------------------------------------------------------------------------
 */

static int same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, ca;
    while (same && (ca = fgetc(fa)) != EOF) same = ca == fgetc(fb);
    if (same) same = fgetc(fb) == EOF;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static long file_size(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 ? (long)s.st_size : -1;
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

static void test_mutations(const model *m, const char *src);

static void test_datastore(void) {
    char err[ERR_LEN], what[128];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    const char *f1 = strcpy((char[4096]){0}, test_tmp("store1.bin"));
    const char *f2 = strcpy((char[4096]){0}, test_tmp("store2.bin"));
    const char *bad = strcpy((char[4096]){0}, test_tmp("bad.bin"));
    /* the datastore: prompts 10..14 and their greedy outputs, one sequence each */
    static int text[5 * (DEC_CHECK_MAX_PROMPT + 200)];
    long seq_len[5], at = 0, n_tokens = 0, joins = 0;
    for (int i = 0; i < 5; i++) {
        memcpy(text + at, ids[10 + i], sizeof(int) * (size_t)lens[10 + i]);
        int n = dec_check_greedy(&env, ids[10 + i], lens[10 + i], 200, text + at + lens[10 + i]);
        seq_len[i] = lens[10 + i] + n;
        joins += text[at + seq_len[i] - 1] != m->cfg.end_id;
        at += seq_len[i];
    }
    CHECK_MSG(stree_file_write(f1, m->cfg.vocab_size, text, seq_len, 5, &n_tokens, err) == 0, "%s",
              err);
    CHECK(n_tokens == at);
    dec *a, *b;
    CHECK(dec_create(&a, "sam", &env, err) == 0 && dec_create(&b, "sam", &env, err) == 0);
    CHECK(!strcmp(dec_state_name(a), "datastore") && dec_state_check(a, err) == 0);
    CHECK_MSG(dec_state_load(a, f1, err) == 0, "%s", err);
    CHECK(dec_state_save(a, f2, what, sizeof what, err) == 0 && same_files(f1, f2));
    CHECK_MSG(strstr(what, "5 sequences, ") != NULL, "%s", what);
    /* a prompt whose answer the datastore holds: drafted from it, exact, fewer steps */
    long steps_with = 0, steps_without = 0, static_acc = 0;
    for (int i = 10; i < 15; i++) {
        dec_stats st, st0;
        dec_check_trace tr;
        env.on_step = NULL;
        int out[DEC_CHECK_MAX_OUT], n, want[DEC_CHECK_MAX_OUT];
        int nw = dec_check_greedy(&env, ids[i], lens[i], 200, want);
        CHECK(dec_generate(a, ids[i], lens[i], 200, out, &n, &st, err) == 0);
        CHECK(n == nw && !memcmp(out, want, sizeof(int) * (size_t)n));
        CHECK(dec_generate(b, ids[i], lens[i], 200, out, &n, &st0, err) == 0);
        CHECK(st.counters[SC_STORE_TOKENS] == at + joins && st0.counters[SC_STORE_TOKENS] == 0);
        steps_with += st.target_steps, steps_without += st0.target_steps;
        static_acc += (long)st.counters[SC_STATIC_ACCEPTED];
        CHECK(st.counters[SC_STATIC_TOKENS] + st.counters[SC_DYN_TOKENS] == st.drafted);
        (void)tr;
    }
    fprintf(stderr,
            "datastore of the answers: %ld target steps, %ld without; %ld static tokens "
            "accepted\n",
            steps_with, steps_without, static_acc);
    CHECK(2 * steps_with < steps_without && static_acc > 100);
    /* other prompts stay exact with the datastore loaded */
    for (int i = 0; i < 4; i++)
        CHECK(dec_generate(a, ids[i], lens[i], 200, (int[DEC_CHECK_MAX_OUT]){0}, &(int){0},
                           &(dec_stats){0}, err) == 0);
    /* refusals leave the datastore as it was */
    long size = file_size(f1);
    struct {
        long at;
        int flip;
        const char *msg;
    } cases[] = {
        {0, 1, "byte 0: not a decbench suffix tree file"},
        {12, 1, "byte 12: a vocabulary of"},
        {30, 1, "byte 28: token"},
        {size - 1, 1, "checksum mismatch"},
        {size - 9, 0, "sequence 5 of"},
        {10, 0, "truncated: 10 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        damaged_copy(f1, bad, cases[i].at, cases[i].flip);
        CHECK(dec_state_load(a, bad, err) == -1);
        CHECK_MSG(strstr(err, bad) && strstr(err, cases[i].msg), "case %zu: %s", i, err);
    }
    CHECK(dec_state_load(a, test_tmp("missing.bin"), err) == -1 && strstr(err, "cannot open"));
    CHECK(dec_state_save(a, f2, what, sizeof what, err) == 0 && same_files(f1, f2));
    dec *small;
    CHECK(dec_create(&small, "sam:store=100", &env, err) == 0);
    CHECK(dec_state_load(small, f1, err) == -1 && strstr(err, f1) &&
          strstr(err, "more than store=100"));
    CHECK(dec_state_save(small, f2, what, sizeof what, err) == 0 && strstr(what, "0 sequences, 0"));
    dec_free(small);
    /* a suffix decoder's tree of outputs is a datastore too (one file format) */
    dec *sfx;
    CHECK(dec_create(&sfx, "suffix", &env, err) == 0);
    for (int i = 0; i < 3; i++)
        CHECK(dec_generate(sfx, ids[i], lens[i], 100, (int[DEC_CHECK_MAX_OUT]){0}, &(int){0},
                           &(dec_stats){0}, err) == 0);
    CHECK(dec_state_save(sfx, f2, what, sizeof what, err) == 0);
    CHECK_MSG(dec_state_load(b, f2, err) == 0, "%s", err);
    CHECK(dec_state_save(b, f1, what, sizeof what, err) == 0 && same_files(f1, f2));
    dec_free(sfx), dec_free(a), dec_free(b);
    test_mutations(m, f2);
    model_close(m);
}

/* Mutations of the datastore file src: words set to random tokens, bit flips, cuts; the checksum
 * made right for half of them. */
static void test_mutations(const model *m, const char *src) {
    char err[ERR_LEN], what[128];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    const char *mut = strcpy((char[4096]){0}, test_tmp("mutated.bin"));
    const char *before = strcpy((char[4096]){0}, test_tmp("before.bin"));
    const char *after = strcpy((char[4096]){0}, test_tmp("after.bin"));
    static unsigned char buf[1 << 16];
    FILE *f = fopen(src, "rb");
    size_t size = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(size > 40 && size < sizeof buf);
    dec *d;
    CHECK(dec_create(&d, "sam:k=8,threshold=2,bias=0", &env, err) == 0);
    CHECK(dec_state_load(d, src, err) == 0);
    static int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    int nw = dec_check_greedy(&env, ids[3], lens[3], 60, want), loaded = 0;
    rng_state r;
    rng_seed(&r, 400);
    const int n = test_sanitized() ? 100 : 400;
    for (int i = 0; i < n; i++) {
        static unsigned char b[1 << 16];
        size_t sz = size;
        memcpy(b, buf, size);
        for (int k = 0, flips = 1 + (int)rng_below(&r, 4); k < flips; k++) {
            /* past the vocabulary field, before the checksum */
            size_t at = 16 + rng_below(&r, (uint32_t)(sz - 24));
            if (i % 4 < 2) { /* a word set to a token of the vocabulary (a length word, too) */
                uint32_t t = rng_below(&r, (uint32_t)m->cfg.vocab_size);
                at &= ~(size_t)3;
                for (int j = 0; j < 4; j++) b[at + (size_t)j] = (unsigned char)(t >> (8 * j));
            } else {
                b[at] ^= (unsigned char)(1u << rng_below(&r, 8));
            }
        }
        if (i % 7 == 3) sz -= 4 * (1 + rng_below(&r, 3)); /* a cut: the last tokens go */
        if (i % 2) {
            uint64_t h = hash_fnv1a(b, sz - 8);
            for (int k = 0; k < 8; k++) b[sz - 8 + k] = (unsigned char)(h >> (8 * k));
        }
        FILE *g = fopen(mut, "wb");
        if (g) fwrite(b, 1, sz, g), fclose(g);
        CHECK(dec_state_save(d, before, what, sizeof what, err) == 0);
        if (dec_state_load(d, mut, err) != 0) {
            CHECK_MSG(strstr(err, mut) != NULL, "%s", err);
            CHECK(dec_state_save(d, after, what, sizeof what, err) == 0 &&
                  same_files(before, after));
            continue;
        }
        loaded++;
        int ng;
        dec_stats st;
        CHECK(dec_generate(d, ids[3], lens[3], 60, got, &ng, &st, err) == 0);
        CHECK_MSG(ng == nw && !memcmp(got, want, sizeof(int) * (size_t)ng), "mutation %d", i);
    }
    fprintf(stderr, "datastore mutations: %d of %d loaded, each decoded exactly\n", loaded, n);
    CHECK(loaded > n / 8);
    dec_free(d);
}

/* ---- 4. synthetic grid --------------------------------------------------------------------------
 */

static void test_synthetic(void) {
    char err[ERR_LEN];
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model *pdonor, *pos = dec_check_synth_positional("64,160,2,4,2,512,512", 5, &pdonor);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    /* a datastore for the synthetic vocabulary: the untied model's greedy text and noise */
    const char *store = strcpy((char[4096]){0}, test_tmp("synth_store.bin"));
    {
        dec_env env = {.target = m, .kernels = KERN_EXACT};
        static int t[400];
        int n = dec_check_greedy(&env, prompt, 9, 200, t);
        for (int i = 0; i < 100; i++) t[n + i] = (i * 37) % 512;
        long lensq[2] = {n, 100};
        CHECK_MSG(stree_file_write(store, 512, t, lensq, 2, NULL, err) == 0, "%s", err);
    }
    const int ks[] = {1, 4, 16}, thresholds[] = {1, 5}, max_news[] = {0, 1, 2, 37};
    long point = 0;
    for (int ki = 0; ki < 3; ki++)
        for (int ti = 0; ti < 2; ti++)
            for (int mi = 0; mi < 4; mi++)
                for (int li = 0; li < 2; li++)
                    for (int pi = 0; pi < 2; pi++)
                        for (int si = 0; si < 2; si++, point++) {
                            if (!test_keep(point, 2)) continue;
                            char spec[64], what[128];
                            snprintf(spec, sizeof spec, "sam:k=%d,threshold=%d", ks[ki],
                                     thresholds[ti]);
                            snprintf(what, sizeof what, "%s, %s model, prompt %d, max_new %d%s",
                                     spec, pi ? "positional" : "untied", li ? 9 : 1, max_news[mi],
                                     si ? ", datastore" : "");
                            dec_env env = {.target = pi ? pos : m, .kernels = KERN_EXACT};
                            dec *d;
                            CHECK(dec_create(&d, spec, &env, err) == 0);
                            if (si) CHECK_MSG(dec_state_load(d, store, err) == 0, "%s", err);
                            static int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
                            int nw = dec_check_greedy(&env, prompt, li ? 9 : 1, max_news[mi], want);
                            int ng;
                            dec_stats st;
                            CHECK(dec_generate(d, prompt, li ? 9 : 1, max_news[mi], got, &ng, &st,
                                               err) == 0);
                            CHECK_MSG(ng == nw && !memcmp(got, want, sizeof(int) * (size_t)ng),
                                      "%s", what);
                            if (max_news[mi] == 0) CHECK(st.target_steps == 0);
                            if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                            if (si && pi == 0 && li && max_news[mi] == 37 && ks[ki] > 1)
                                CHECK_MSG(st.counters[SC_STATIC_ACCEPTED] > 10, "%s: %g", what,
                                          st.counters[SC_STATIC_ACCEPTED]);
                            dec_free(d);
                        }
    /* a prompt that is its own greedy continuation repeated: multi-token steps */
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    int story[DEC_CHECK_MAX_OUT], rep[400], len = 0;
    int n = dec_check_greedy(&env, prompt, 9, 60, story);
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < 9; i++) rep[len++] = prompt[i];
        for (int i = 0; i < n; i++) rep[len++] = story[i];
    }
    len -= n; /* the model soon repeats one token; a match's first occurrence is followed by the
               * next copy's BOS (the end token) there, so drafts are short: fewer than pld's */
    dec_stats st;
    dec_check_trace tr;
    dec_check_exact(&env, "sam", rep, len, 60, NULL, &st, &tr, "repeated prompt");
    CHECK_MSG(tr.multi > 0 && st.accepted > 10, "repeated prompt: %ld accepted", st.accepted);
    /* context edges: seq_len 512 */
    for (int i = 300; i < DEC_CHECK_SYNTH_PROMPT; i++) prompt[i] = prompt[i - 100];
    dec_check_exact(&env, "sam:k=64", prompt, 505, 256, NULL, &st, &tr, "near seq_len");
    CHECK(st.new_tokens == 7 && tr.max_rows <= 7);
    dec_check_exact(&env, "sam", prompt, 511, 256, NULL, &st, &tr, "seq_len - 1");
    CHECK(st.new_tokens == 1 && st.target_steps == 1);
    model_close(m), model_close(donor), model_close(pos), model_close(pdonor);
}

/* BOS + prompt + its greedy story (ending with the end token) + the prompt again: the retold
 * story is drafted from the dynamic automaton, end token included, nothing after it. */
static void test_end_inside(void) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    int found = 0;
    for (int i = 0; i < 20 && !found; i++) {
        int story[DEC_CHECK_MAX_OUT], p[512], len = 0, got[DEC_CHECK_MAX_OUT];
        int n = dec_check_greedy(&env, ids[i], lens[i], 300, story);
        if (n < 1 || story[n - 1] != m->cfg.end_id || 2 * lens[i] + n > 400) continue;
        for (int k = 0; k < lens[i]; k++) p[len++] = ids[i][k];
        for (int k = 0; k < n; k++) p[len++] = story[k];
        for (int k = 1; k < lens[i]; k++) p[len++] = ids[i][k];
        dec_stats st;
        dec_check_trace tr;
        dec_check_exact(&env, "sam:k=64", p, len, 512 - len, got, &st, &tr, "end inside");
        int g = st.new_tokens;
        found = g > 0 && got[g - 1] == m->cfg.end_id && tr.last.emitted >= 2 &&
                tr.last.accepted == tr.last.emitted && tr.last.drafted == tr.last.accepted;
        if (found) fprintf(stderr, "end inside an accepted run: story %d, %d tokens\n", i, g);
    }
    CHECK_MSG(found, "no prompt made the end token arrive inside an accepted run");
    model_close(m);
}

/* ---- 5. allocation, parameters ------------------------------------------------------------------
 */

static void test_alloc_and_params(void) {
    char err[ERR_LEN];
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "sam:k=8", &env, err) == 0);
    CHECK_MSG(strcmp(dec_spec(d), "sam:k=8,threshold=5,bias=5,store=4194304") == 0, "%s",
              dec_spec(d));
    CHECK(dec_state_load(d, test_tmp("synth_store.bin"), err) == 0);
    int prompt[12] = {1, 5, 9, 13, 5, 9, 13, 5, 9, 13, 5, 9}, out[64], n;
    dec_stats st;
    long before = dec_check_mallocs;
    for (int i = 0; i < 3; i++) CHECK(dec_generate(d, prompt, 12, 60, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "generate allocated %ld times",
              dec_check_mallocs - before);
    dec_free(d);
    /* a match whose only earlier occurrence ends the text ([1 x] then x again: "x" first ends
     * at the last token) drafts nothing and counts no match length */
    int found = 0;
    for (int x = 3; x < 512 && !found; x++) {
        int p2[2] = {1, x}, g[4];
        if (dec_check_greedy(&env, p2, 2, 1, g) != 1 || g[0] != x) continue;
        found = 1;
        dec_check_exact(&env, "sam:threshold=1", p2, 2, 3, NULL, &st, NULL, "empty continuation");
        CHECK_MSG(st.drafted == 0 && st.counters[SC_MATCH_LEN] == 0 &&
                      st.counters[SC_DYN_STEPS] == 0,
                  "token %d: drafted %ld, match_len %g", x, st.drafted, st.counters[SC_MATCH_LEN]);
    }
    CHECK_MSG(found, "no token x whose greedy successor after [1 x] is x");
    CHECK(dec_create(&d, "sam:k=0", &env, err) == -1 && strstr(err, "1..128"));
    CHECK(dec_create(&d, "sam:threshold=0", &env, err) == -1 && strstr(err, "1..1048576"));
    CHECK(dec_create(&d, "sam:store=0", &env, err) == -1 && strstr(err, "1..268435456"));
    model_close(m), model_close(donor);
}

int main(void) {
    if (dec_check_tinystories(20, ids, lens)) return test_finish("test_sam");
    test_draft_rule();
    test_synthetic();
    test_alloc_and_params();
    test_datastore();
    test_end_inside();
    test_real("models/stories260K.bin");
    test_real("models/llama2xs.bin");
    return test_finish("test_sam");
}
