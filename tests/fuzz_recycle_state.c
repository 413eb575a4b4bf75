/* fuzz_recycle_state.c: libFuzzer target for Token Recycling's state file reader (the matrix of
 * decoders/recycle.c, read through the decoder interface's dec_state_load).
 *
 * Random bytes almost never carry a valid checksum, which the reader checks last, so the input
 * is a file WITHOUT its checksum and byte 0 says what to do with it: bit 0 set, the right
 * FNV-1a checksum is appended (every other check of the reader is reached); clear, the input's
 * last 8 bytes stand as they are (a wrong checksum, usually). Set up once: a synthetic target
 * (vocabulary 512), greedy's output for one prompt, and two recycle:k=4 instances warmed on
 * that prompt, one of which never sees an input (its twin). Each input is written to a memfd and
 * loaded by path, as a file on disk. The contract:
 *   - a load that fails leaves the matrix as it was (the instance saves the same bytes as its
 *     twin) and its message names the file;
 *   - a load that succeeds gives a matrix the decoder can use: generating from it emits
 *     greedy's tokens exactly (the matrix only proposes drafts), and save -> load -> save of it
 *     is a fixed point; the twin then takes the loaded matrix.
 * A crash, a sanitizer report, a leak or a broken contract (abort) is a bug.
 *
 * Build and run (clang; Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_recycle_state -j2
 *   ctest --test-dir build -R test_recycle  # writes build/tests/tmp_test_recycle/seeds
 *   ./build-fuzz/tests/fuzz_recycle_state build/tests/tmp_test_recycle/seeds -max_len=8192
 * Without libFuzzer the same entry, fuzz_recycle_state_one(), replays those seeds and a seeded
 * set of their mutations in test_recycle.c on every test run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/decoder.h"
#include "model/convert/synth.h"
#include "tests/fuzz_files.h"
#include "util/err.h"
#include "util/hash.h"

enum { FR_PROMPT = 8, FR_MAX_NEW = 16 };

static struct {
    model *target;
    dec_env env;
    dec *d, *twin;
    int prompt[FR_PROMPT];
    int ref[FR_MAX_NEW], n_ref; /* greedy's output */
    char a[64], b[64];          /* scratch files of the saves */
} fr;

int fuzz_recycle_loaded; /* inputs that loaded */

static void fr_fail(const char *what, const char *err) {
    fprintf(stderr, "fuzz_recycle_state: %s%s%s\n", what, err ? ": " : "", err ? err : "");
    abort();
}

static void fr_init(void) {
    if (fr.target) return;
    char err[ERR_LEN];
    model_config c;
    if (synth_config("64,128,2,4,2,512,128", &c, err) || synth_model(&fr.target, &c, 21, err))
        fr_fail("synthetic model", err);
    fr.env = (dec_env){.target = fr.target, .kernels = KERN_EXACT};
    for (int i = 0; i < FR_PROMPT; i++) fr.prompt[i] = i ? 3 + (i * 37) % 500 : 1;
    dec_stats st;
    int out[FR_MAX_NEW], n;
    dec *g;
    if (dec_create(&g, "greedy", &fr.env, err) ||
        dec_generate(g, fr.prompt, FR_PROMPT, FR_MAX_NEW, fr.ref, &fr.n_ref, &st, err))
        fr_fail("greedy", err);
    dec_free(g);
    if (dec_create(&fr.d, "recycle:k=4", &fr.env, err) ||
        dec_create(&fr.twin, "recycle:k=4", &fr.env, err) ||
        dec_generate(fr.d, fr.prompt, FR_PROMPT, FR_MAX_NEW, out, &n, &st, err) ||
        dec_generate(fr.twin, fr.prompt, FR_PROMPT, FR_MAX_NEW, out, &n, &st, err))
        fr_fail("recycle", err);
    fuzz_scratch_path("fuzz_recycle_a", ".bin", fr.a, sizeof fr.a);
    fuzz_scratch_path("fuzz_recycle_b", ".bin", fr.b, sizeof fr.b);
}

int fuzz_recycle_state_one(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    fr_init();
    char err[ERR_LEN], what[64], path[64];
    size_t n = size - 1;
    uint8_t *buf = malloc(n + 8);
    if (!buf) return 0;
    memcpy(buf, data + 1, n);
    if (data[0] & 1) {
        uint64_t h = hash_fnv1a(buf, n);
        for (int i = 0; i < 8; i++) buf[n++] = (uint8_t)(h >> (8 * i));
    }
    int fd = fuzz_memfd("fuzz_recycle_state", buf, n, path, sizeof path);
    free(buf);
    if (fd < 0) return 0;
    if (dec_state_load(fr.d, path, err) != 0) {
        if (!strstr(err, path)) fr_fail("the message does not name the file", err);
        if (dec_state_save(fr.d, fr.a, what, sizeof what, err) ||
            dec_state_save(fr.twin, fr.b, what, sizeof what, err))
            fr_fail("save", err);
        if (!fuzz_same_files(fr.a, fr.b)) fr_fail("a failed load changed the matrix", NULL);
    } else {
        fuzz_recycle_loaded++;
        int out[FR_MAX_NEW], k;
        dec_stats st;
        if (dec_state_save(fr.d, fr.a, what, sizeof what, err) ||
            dec_state_load(fr.twin, fr.a, err) ||
            dec_state_save(fr.twin, fr.b, what, sizeof what, err))
            fr_fail("save -> load -> save of a loaded matrix", err);
        if (!fuzz_same_files(fr.a, fr.b)) fr_fail("save -> load -> save changed the file", NULL);
        if (dec_generate(fr.d, fr.prompt, FR_PROMPT, FR_MAX_NEW, out, &k, &st, err))
            fr_fail("generate from a loaded matrix", err);
        if (k != fr.n_ref || memcmp(out, fr.ref, sizeof(int) * (size_t)k))
            fr_fail("a loaded matrix changed the output: not greedy's tokens", NULL);
        /* the generate call rewrote rows: the twin follows */
        if (dec_state_save(fr.d, fr.a, what, sizeof what, err) ||
            dec_state_load(fr.twin, fr.a, err))
            fr_fail("resync the twin", err);
    }
    close(fd);
    unlink(fr.a), unlink(fr.b);
    return 0;
}

/* Frees what fr_init made (the replay test calls it, so a leak check sees nothing left). */
void fuzz_recycle_state_done(void) {
    dec_free(fr.d), dec_free(fr.twin);
    model_close(fr.target);
    memset(&fr, 0, sizeof fr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_recycle_state_one(data, size);
}
