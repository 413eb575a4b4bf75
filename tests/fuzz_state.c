/* fuzz_state.c: libFuzzer target for decoder state files, read through the decoder interface's
 * generic state hooks (dec_state_load), i.e. Ouroboros' pool reader (decoders/ouroboros_pool.c,
 * the file of `run --state-load/--pool-load`).
 *
 * Set up once: a synthetic target and draft model (vocabulary 512) in memory, two Ouroboros
 * instances whose phrase lengths differ (beta=4 and beta=6: a file loads into the one it was
 * made for), and greedy's output for one prompt. Each input is written to a memfd and loaded by
 * path (/proc/self/fd/N), exactly as a file on disk, into both instances. The contract:
 *   - a load that fails leaves the pool as it was (its phrase count is compared);
 *   - a load that succeeds gives a pool the decoder can use: generating from it emits greedy's
 *     tokens exactly (a pool only proposes drafts; whatever it holds, verification decides),
 *     and save -> load -> save of it is a fixed point (the same bytes twice).
 * A crash, a sanitizer report, a leak or a broken contract (abort) is a bug.
 *
 * The file ends with a checksum of every byte before it, so a random mutation almost never
 * loads; a custom mutator recomputes it half of the time (fuzz_state_fix), so mutated pools get
 * past the checksum into the decoder.
 *
 * Build and run (clang; needs the compiler-rt fuzzer runtime, Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_state -j2
 *   ctest --test-dir build -R test_dec_state   # a normal build; writes
 * tmp_test_dec_state/seeds_state mkdir -p /tmp/state-corpus cp
 * build/tests/tmp_test_dec_state/seeds_state/seed* /tmp/state-corpus/
 *   ./build-fuzz/tests/fuzz_state /tmp/state-corpus -max_len=65536 -max_total_time=600
 *
 * Without libFuzzer the same entry, fuzz_state_one(), is driven by test_dec_state.c over its
 * seeds and a fixed, seeded corpus of mutations, so the normal test suite exercises it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/decoder.h"
#include "decoders/ouroboros.h"
#include "model/convert/synth.h"
#include "tests/fuzz_files.h"
#include "util/err.h"
#include "util/hash.h"

enum { FUZZ_STATE_N = 2, FUZZ_STATE_PROMPT = 8, FUZZ_STATE_MAX_NEW = 16 };

static struct {
    model *target, *draft;
    dec_env env;
    dec *d[FUZZ_STATE_N];
    int prompt[FUZZ_STATE_PROMPT];
    int ref[FUZZ_STATE_MAX_NEW], n_ref; /* greedy's output */
    char dir[64]; /* a private folder for the round trip's files, in memory when possible */
} fs;

/* The instances' specs: phrase lengths 4 and 6, so a file's beta picks the instance it loads
 * into; warm=1 (the default) keeps the loaded pool for the generate call. */
static const char *const fuzz_state_specs[FUZZ_STATE_N] = {"ouroboros:gamma=3,W=4,beta=4,K=2",
                                                           "ouroboros:gamma=4,W=8,beta=6,K=3"};

static void fuzz_state_fail(const char *what, const char *err) {
    fprintf(stderr, "fuzz_state: %s%s%s\n", what, err ? ": " : "", err ? err : "");
    abort();
}

/* Creates the models, the instances and greedy's reference once. */
static void fuzz_state_init(void) {
    if (fs.target) return;
    char err[ERR_LEN];
    model_config c;
    if (synth_config("64,128,2,4,2,512,128", &c, err) || synth_model(&fs.target, &c, 21, err) ||
        synth_model(&fs.draft, &c, 22, err))
        fuzz_state_fail("synthetic models", err);
    fs.env = (dec_env){.target = fs.target, .draft = fs.draft, .kernels = KERN_EXACT};
    for (int i = 0; i < FUZZ_STATE_N; i++)
        if (dec_create(&fs.d[i], fuzz_state_specs[i], &fs.env, err))
            fuzz_state_fail("ouroboros", err);
    for (int i = 0; i < FUZZ_STATE_PROMPT; i++) fs.prompt[i] = i ? 3 + (i * 37) % 500 : 1;
    dec *g;
    dec_stats st;
    if (dec_create(&g, "greedy", &fs.env, err) ||
        dec_generate(g, fs.prompt, FUZZ_STATE_PROMPT, FUZZ_STATE_MAX_NEW, fs.ref, &fs.n_ref, &st,
                     err))
        fuzz_state_fail("greedy", err);
    dec_free(g);
    /* /dev/shm when there is one: a save fsyncs, which on a disk took 80% of the run's time */
    snprintf(fs.dir, sizeof fs.dir, "/dev/shm/fuzz_state.XXXXXX");
    if (!mkdtemp(fs.dir)) {
        snprintf(fs.dir, sizeof fs.dir, "/tmp/fuzz_state.XXXXXX");
        if (!mkdtemp(fs.dir)) fuzz_state_fail("mkdtemp", NULL);
    }
}

static long fuzz_state_phrases(const dec *d) {
    ouroboros_counts c;
    char err[ERR_LEN];
    if (ouroboros_counts_get(d, &c, err)) fuzz_state_fail("counts", err);
    return c.pool_phrases;
}

int fuzz_state_loaded; /* inputs that loaded into an instance */

/* The loaded pool: greedy's tokens, then save -> load -> save gives the same bytes. */
static void fuzz_state_use(dec *d) {
    char err[ERR_LEN], what[64], a[128], b[128];
    int out[FUZZ_STATE_MAX_NEW], n;
    dec_stats st;
    snprintf(a, sizeof a, "%s/a.bin", fs.dir);
    snprintf(b, sizeof b, "%s/b.bin", fs.dir);
    if (dec_state_save(d, a, what, sizeof what, err) || dec_state_load(d, a, err) ||
        dec_state_save(d, b, what, sizeof what, err))
        fuzz_state_fail("save -> load -> save of a loaded pool", err);
    if (!fuzz_same_files(a, b)) fuzz_state_fail("save -> load -> save changed the file", a);
    if (dec_generate(d, fs.prompt, FUZZ_STATE_PROMPT, FUZZ_STATE_MAX_NEW, out, &n, &st, err))
        fuzz_state_fail("generate from a loaded pool", err);
    if (n != fs.n_ref || memcmp(out, fs.ref, sizeof(int) * (size_t)n))
        fuzz_state_fail("a loaded pool changed the output: not greedy's tokens", NULL);
}

/* The fuzz entry: never fails, only aborts if the library breaks its contract. */
int fuzz_state_one(const uint8_t *data, size_t size) {
    fuzz_state_init();
    char path[64];
    int fd = fuzz_memfd("fuzz_state", data, size, path, sizeof path);
    if (fd < 0) return 0;
    char err[ERR_LEN];
    for (int i = 0; i < FUZZ_STATE_N; i++) {
        dec *d = fs.d[i];
        long before = fuzz_state_phrases(d);
        if (dec_state_load(d, path, err) != 0) {
            if (fuzz_state_phrases(d) != before)
                fuzz_state_fail("a failed load changed the pool", err);
            if (!strstr(err, path)) fuzz_state_fail("the message does not name the file", err);
            continue;
        }
        fuzz_state_loaded++;
        fuzz_state_use(d);
    }
    close(fd);
    return 0;
}

/* Writes a real pool of instance i (warmed on the prompt and its variations) to path: the
 * seeds. Returns 0 or -1 (err). */
int fuzz_state_seed(int i, int prompts, const char *path, char *err) {
    fuzz_state_init();
    dec *d;
    int p[FUZZ_STATE_PROMPT], out[FUZZ_STATE_MAX_NEW], n;
    dec_stats st;
    char what[64];
    if (dec_create(&d, fuzz_state_specs[i], &fs.env, err)) return -1;
    int rc = 0;
    for (int k = 0; k < prompts && rc == 0; k++) {
        memcpy(p, fs.prompt, sizeof p);
        p[FUZZ_STATE_PROMPT - 1] = 3 + (k * 101) % 500;
        rc = dec_generate(d, p, FUZZ_STATE_PROMPT, FUZZ_STATE_MAX_NEW, out, &n, &st, err);
    }
    if (rc == 0) rc = dec_state_save(d, path, what, sizeof what, err);
    dec_free(d);
    return rc;
}

/* Frees what fuzz_state_init made and removes its folder (the replay test calls it). */
void fuzz_state_done(void) {
    char p[128];
    for (int i = 0; i < FUZZ_STATE_N; i++) dec_free(fs.d[i]);
    model_close(fs.target);
    model_close(fs.draft);
    const char *const names[] = {"a.bin", "b.bin", "a.bin.tmp", "b.bin.tmp"};
    for (int i = 0; fs.dir[0] && i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", fs.dir, names[i]);
        unlink(p);
    }
    if (fs.dir[0]) rmdir(fs.dir);
    memset(&fs, 0, sizeof fs);
}

/* Rewrites the trailing checksum of a pool file (magic "DBOUROP1") to match its bytes; other
 * data is left alone. Returns size. */
size_t fuzz_state_fix(uint8_t *data, size_t size) {
    if (size < 16 || memcmp(data, "DBOUROP1", 8) != 0) return size;
    uint64_t h = hash_fnv1a(data, size - 8);
    for (int i = 0; i < 8; i++) data[size - 8 + i] = (uint8_t)(h >> (8 * i));
    return size;
}

/* libFuzzer's own mutation, then (every other time) the checksum fitted to the bytes. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed) {
    size = LLVMFuzzerMutate(data, size, max);
    return seed % 2 ? fuzz_state_fix(data, size) : size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_state_one(data, size);
}
