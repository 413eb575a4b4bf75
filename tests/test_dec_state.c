/* test_dec_state.c: decoder state files read through the decoder interface's state hooks
 * (dec_state_load: Ouroboros' pool reader), driven through the libFuzzer entry of
 * tests/fuzz_state.c:
 *   - real pools of both instances (beta 4 and 6, empty to several prompts' worth) each load
 *     into exactly the instance they were made for, decode greedy's tokens from it and survive
 *     save -> load -> save unchanged (the fuzz entry aborts otherwise);
 *   - 2000 seeded mutations of them (bit flips, hostile header fields, key records, truncation,
 *     growth), half with the checksum recomputed so they reach the decoder: no crash, no
 *     sanitizer report, a failed load leaves the pool alone and names the file, and enough of
 *     them load to exercise decoding from pools no run would write;
 *   - the seeds are written to <tmp>/seeds_state/, the libFuzzer starting corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/testutil.h"

#include "tests/fuzz_state.c"

static uint64_t mut_state = 0x9e3779b97f4a7c15ull;
static uint64_t mut_next(void) {
    mut_state ^= mut_state << 13;
    mut_state ^= mut_state >> 7;
    mut_state ^= mut_state << 17;
    return mut_state;
}

enum { N_SEEDS = 6, SEED_MAX = 65536 };

static size_t read_whole(const char *path, uint8_t *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap, f) : 0;
    if (f) fclose(f);
    return n;
}

int main(void) {
    static uint8_t seeds[N_SEEDS][SEED_MAX], buf[2 * SEED_MAX];
    size_t sizes[N_SEEDS];
    char err[ERR_LEN], dir[4200], path[4300];
    snprintf(dir, sizeof dir, "%s/seeds_state", test_tmpdir());
    mkdir(dir, 0755);
    /* instance 0 (beta 4) and 1 (beta 6) after 0, 1 and 4 prompts */
    static const int prompts[N_SEEDS / 2] = {0, 1, 4};
    for (int s = 0; s < N_SEEDS; s++) {
        snprintf(path, sizeof path, "%s/seed%d.bin", dir, s);
        CHECK_MSG(fuzz_state_seed(s % 2, prompts[s / 2], path, err) == 0, "%s", err);
        sizes[s] = read_whole(path, seeds[s], SEED_MAX);
        CHECK(sizes[s] >= 36 && sizes[s] < SEED_MAX);
    }
    CHECK(sizes[4] > sizes[2] && sizes[2] > sizes[0]); /* the pools grew with the prompts */
    for (int s = 0; s < N_SEEDS; s++) fuzz_state_one(seeds[s], sizes[s]);
    CHECK_MSG(fuzz_state_loaded == N_SEEDS, "%d of %d seeds loaded", fuzz_state_loaded, N_SEEDS);

    static const uint32_t vals[] = {0,     1,     2,        3,          4,           5,
                                    6,     7,     255,      511,        512,         513,
                                    65535, 65536, 1u << 24, 0x7fffffff, 0x80000000u, 0xffffffffu};
    int loaded_before = fuzz_state_loaded, runs = 0;
    for (int round = 0; round < 2000; round++) {
        int s = (int)(mut_next() % N_SEEDS);
        size_t n = sizes[s];
        memcpy(buf, seeds[s], n);
        int muts = 1 + (int)(mut_next() % 3);
        for (int k = 0; k < muts && n > 0; k++) {
            size_t at = (size_t)(mut_next() % n);
            uint32_t v = vals[mut_next() % (sizeof vals / sizeof vals[0])];
            switch (mut_next() % 6) {
            case 0:
                buf[at] ^= (uint8_t)(1u << (mut_next() % 8));
                break;
            case 1: /* a header field: version, vocab, cap, len, n_keys */
                memcpy(buf + 8 + 4 * (mut_next() % 5), &v, 4);
                break;
            case 2: /* a word of the records: a key, a count or a token */
                if (n >= 40) memcpy(buf + 28 + 4 * (mut_next() % ((n - 36) / 4)), &v, 4);
                break;
            case 3: /* truncated */
                n = at;
                break;
            case 4: /* grown by a few words */
                for (int g = (int)(mut_next() % 4) * 4; g >= 0 && n + 4 <= sizeof buf; g--)
                    memcpy(buf + n, &v, 4), n += 4;
                break;
            default: /* a token replaced by a small one (phrases the pool may already hold) */
                if (n >= 40) {
                    uint32_t t = (uint32_t)(mut_next() % 8);
                    memcpy(buf + 28 + 4 * (mut_next() % ((n - 36) / 4)), &t, 4);
                }
            }
        }
        if (mut_next() % 2) fuzz_state_fix(buf, n);
        fuzz_state_one(buf, n);
        runs++;
    }
    int loaded = fuzz_state_loaded - loaded_before;
    fprintf(stderr, "  %d mutated pool files through fuzz_state_one: %d loaded and decoded\n", runs,
            loaded);
    /* the corpus must reach the decoder, not only the reader's refusals */
    CHECK_MSG(loaded > 150, "only %d mutated files loaded", loaded);
    fuzz_state_done();
    return test_finish("test_dec_state");
}
