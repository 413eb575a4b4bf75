/* test_safetensors.c: the safetensors reader (model/formats/safetensors.h), on files this test
 * writes (tests/testutil.h test_safetensors_bytes, or by hand where the header must be wrong).
 *  1. a valid file: F32, F16 and BF16 tensors (values widened exactly), a scalar, an empty
 *     tensor, __metadata__ ignored, header padding, gaps and trailing bytes allowed; lookups;
 *     st_load_f32's shape check and missing tensor; a dtype of the format that cannot be read
 *     (I64) opens and is refused when read, naming the file, the tensor and the dtype.
 *  2. refused at open with one line naming the file and the field: empty, shorter than 8 bytes,
 *     a header length past the end, truncated data, JSON that does not parse, a header that
 *     is not an object, an entry that is not an object, a missing or unknown dtype, a bad
 *     shape (negative, fractional, too many dims), bad data_offsets (missing, one value, end
 *     before begin, past the data, not matching the shape's bytes), two tensors overlapping, a
 *     name twice.
 *  3. the fuzz entry (tests/fuzz_safetensors.c) over the seeds and a seeded set of their
 *     mutations; the seeds are written to <tmp>/seeds/ as the libFuzzer starting corpus. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/formats/safetensors.h"
#include "model/weights/wtype.h"
#include "tests/fuzz_safetensors.c"
#include "tests/testutil.h"
#include "util/err.h"

static void write_bytes(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
}

/* A file of an 8-byte length and the given header text (no padding), then data[0..n). */
static void write_raw(const char *path, const char *header, const void *data, size_t n) {
    size_t h = strlen(header);
    unsigned char *b = malloc(8 + h + n + 1);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    if (n) memcpy(b + 8 + h, data, n);
    write_bytes(path, b, 8 + h + n);
    free(b);
}

/* st_open of path must fail with a message holding path and every one of the needles. */
static void expect_refused(const char *path, const char *what, const char *n1, const char *n2) {
    char err[ERR_LEN] = "";
    safetensors *s = NULL;
    int rc = st_open(&s, path, err);
    CHECK_MSG(rc != 0 && s == NULL, "%s: opened", what);
    CHECK_MSG(strstr(err, path) != NULL, "%s: the message does not name the file: %s", what, err);
    CHECK_MSG(!strchr(err, '\n'), "%s: not one line: %s", what, err);
    CHECK_MSG(!n1 || strstr(err, n1), "%s: \"%s\" not in: %s", what, n1, err);
    CHECK_MSG(!n2 || strstr(err, n2), "%s: \"%s\" not in: %s", what, n2, err);
    st_close(s);
}

static float f32s[6] = {1.0f, -2.5f, 3.25f, 0.0f, -0.0f, 1e-3f};
static uint16_t f16s[4], bf16s[3];
static int64_t i64s[2] = {7, -7};
static float scalar = 42.0f;

static void fill_halves(void) {
    const float v[4] = {0.5f, -1.75f, 65504.0f, 6.1035156e-05f};
    for (int i = 0; i < 4; i++) f16s[i] = wtype_f32_to_f16(v[i]);
    const float w[3] = {1.0f, -3.0f, 1.5e20f};
    for (int i = 0; i < 3; i++) bf16s[i] = wtype_f32_to_bf16(w[i]);
}

static const test_st_tensor valid[] = {
    {"0.0.linear.weight", "F32", 2, {2, 3}, f32s, sizeof f32s},
    {"0.1.weight", "F16", 2, {2, 2}, f16s, sizeof f16s},
    {"bf", "BF16", 1, {3}, bf16s, sizeof bf16s},
    {"scalar", "F32", 0, {0}, &scalar, 4},
    {"empty", "F16", 2, {0, 5}, NULL, 0},
    {"ids", "I64", 1, {2}, i64s, sizeof i64s},
};
#define N_VALID (int)(sizeof valid / sizeof valid[0])

static void test_valid(void) {
    char err[ERR_LEN];
    const char *path = test_tmp("valid.safetensors");
    CHECK(test_write_safetensors(path, valid, N_VALID) == 0);
    safetensors *s;
    CHECK_MSG(st_open(&s, path, err) == 0, "%s", err);
    if (!s) return;
    CHECK(st_count(s) == N_VALID && strcmp(st_path(s), path) == 0);
    for (int i = 0; i < N_VALID; i++) {
        const st_tensor *t = st_tensor_at(s, i);
        CHECK(t && strcmp(t->name, valid[i].name) == 0 && st_find(s, valid[i].name) == t);
        CHECK(t && strcmp(st_dtype_name(t->dtype), valid[i].dtype) == 0);
        CHECK(t && t->n_dims == valid[i].n_dims && t->end - t->begin == valid[i].bytes);
    }
    CHECK(st_find(s, "missing") == NULL && st_tensor_at(s, N_VALID) == NULL);
    float out[6];
    CHECK(st_read_f32(s, st_find(s, "0.0.linear.weight"), out, err) == 0);
    CHECK(memcmp(out, f32s, sizeof f32s) == 0);
    CHECK(st_read_f32(s, st_find(s, "0.1.weight"), out, err) == 0);
    CHECK(out[0] == 0.5f && out[1] == -1.75f && out[2] == 65504.0f && out[3] == 6.1035156e-05f);
    CHECK(st_read_f32(s, st_find(s, "bf"), out, err) == 0);
    CHECK(out[0] == 1.0f && out[1] == -3.0f && out[2] == wtype_bf16_to_f32(bf16s[2]));
    CHECK(st_read_f32(s, st_find(s, "scalar"), out, err) == 0 && out[0] == 42.0f);
    CHECK(st_find(s, "scalar")->n_elements == 1 && st_find(s, "empty")->n_elements == 0);
    CHECK(st_read_f32(s, st_find(s, "empty"), out, err) == 0);
    const uint64_t sh23[2] = {2, 3}, sh32[2] = {3, 2}, sh6[1] = {6}, sh2[1] = {2};
    CHECK(st_load_f32(s, "0.0.linear.weight", 2, sh23, out, err) == 0 &&
          memcmp(out, f32s, sizeof f32s) == 0);
    CHECK(st_load_f32(s, "0.0.linear.weight", 2, sh32, out, err) != 0);
    CHECK_MSG(strstr(err, path) && strstr(err, "\"0.0.linear.weight\"") &&
                  strstr(err, "[2, 3]") && strstr(err, "expected [3, 2]"),
              "%s", err);
    CHECK(st_load_f32(s, "0.0.linear.weight", 1, sh6, out, err) != 0);
    CHECK(st_load_f32(s, "0.2.weight", 2, sh23, out, err) != 0);
    CHECK_MSG(strstr(err, path) && strstr(err, "\"0.2.weight\" is missing"), "%s", err);
    /* a dtype of the format that is not read: the file opens, the tensor is refused */
    CHECK(st_load_f32(s, "ids", 1, sh2, out, err) != 0);
    CHECK_MSG(strstr(err, path) && strstr(err, "\"ids\"") && strstr(err, "I64"), "%s", err);
    st_close(s);

    /* gaps between tensors, trailing bytes, spaces and an unknown key in an entry: accepted */
    const char *gaps = test_tmp("gaps.safetensors");
    unsigned char data[40] = {0};
    memcpy(data + 4, f32s, 8);
    write_raw(gaps,
              "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12],\"x\":1},"
              " \"__metadata__\":{\"k\":\"v\"}}     ",
              data, sizeof data);
    CHECK_MSG(st_open(&s, gaps, err) == 0, "%s", err);
    if (s) {
        CHECK(st_count(s) == 1 && st_read_f32(s, st_find(s, "a"), out, err) == 0 &&
              out[0] == f32s[0] && out[1] == f32s[1]);
        st_close(s);
    }
    /* no tensors at all */
    const char *none = test_tmp("none.safetensors");
    write_raw(none, "{}", NULL, 0);
    CHECK_MSG(st_open(&s, none, err) == 0, "%s", err);
    if (s) CHECK(st_count(s) == 0);
    st_close(s);
}

static void test_refused(void) {
    const char *p = test_tmp("bad.safetensors");
    write_bytes(p, "", 0);
    expect_refused(p, "empty", "empty file", NULL);
    write_bytes(p, "\x02\0\0\0", 4);
    expect_refused(p, "4 bytes", "too short", NULL);
    /* the valid file truncated: in its data, then in its header */
    size_t size;
    unsigned char *b = test_safetensors_bytes(valid, N_VALID, &size);
    write_bytes(p, b, size - 3);
    expect_refused(p, "truncated data", "\"ids\"", "past the end of the data");
    write_bytes(p, b, 40);
    expect_refused(p, "truncated header", "header length", "past the end of the file");
    free(b);
    static const struct {
        const char *header, *what, *n1, *n2;
    } bad[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]", "unclosed JSON",
         "header:", NULL},
        {"not json", "not JSON", "header:", NULL},
        {"[1,2]", "an array", "not a JSON object", NULL},
        {"{\"a\":3}", "entry not an object", "\"a\" is not a JSON object", NULL},
        {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", "no dtype", "\"a\"", "\"dtype\""},
        {"{\"a\":{\"dtype\":\"Q4_0\",\"shape\":[1],\"data_offsets\":[0,4]}}", "unknown dtype",
         "\"a\"", "unknown dtype \"Q4_0\""},
        {"{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", "no shape", "\"a\"", "\"shape\""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", "negative dim",
         "\"a\"", "shape[0]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", "fractional dim",
         "\"a\"", "shape[0]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
         "9 dims", "\"a\"", "9 dimensions"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", "no offsets", "\"a\"", "\"data_offsets\""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4]}}", "one offset", "\"a\"",
         "\"data_offsets\""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", "end before begin",
         "\"a\"", "[8, 4]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[16,20]}}", "past the end",
         "\"a\"", "past the end of the data (16 bytes"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", "shape vs bytes",
         "\"a\"", "3 elements of F32"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,8]}}",
         "element count overflows", "\"a\"", "overflows 64 bits"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         "overlap", "\"b\"", "overlap those of \"a\""},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
         "duplicate name", "duplicate", NULL},
    };
    unsigned char data[16] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_raw(p, bad[i].header, data, sizeof data);
        expect_refused(p, bad[i].what, bad[i].n1, bad[i].n2);
    }
}

/* Seeds: the valid file, a file of every dtype, two Medusa heads (what fuzz_medusa loads) and
 * the gaps file. Written to <tmp>/seeds/. */
enum { N_SEEDS = 4, SEED_MAX = 4096 };
static uint64_t state = 12345;
static uint32_t next_rand(void) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(state >> 33);
}

static void test_mutation_corpus(void) {
    static unsigned char seeds[N_SEEDS][SEED_MAX];
    size_t sizes[N_SEEDS];
    unsigned char zeros[16] = {0};
    const test_st_tensor every[] = {
        {"f64", "F64", 1, {1}, zeros, 8},     {"u8", "U8", 2, {1, 2}, zeros, 2},
        {"bool", "BOOL", 1, {1}, zeros, 1},   {"f8", "F8_E4M3", 1, {3}, zeros, 3},
        {"i32", "I32", 1, {1}, zeros, 4},     {"h", "F16", 3, {1, 1, 2}, zeros, 4},
    };
    static float w[2][16 + 4 + 24];
    for (int i = 0; i < 40; i++) w[0][i] = w[1][i] = 0.01f * (float)(i % 7);
    const test_st_tensor medusa[6] = {
        {"0.0.linear.weight", "F32", 2, {4, 4}, w[0], 64}, {"0.0.linear.bias", "F32", 1, {4}, w[0] + 16, 16},
        {"0.1.weight", "F32", 2, {6, 4}, w[0] + 20, 96},   {"1.0.linear.weight", "F32", 2, {4, 4}, w[1], 64},
        {"1.0.linear.bias", "F32", 1, {4}, w[1] + 16, 16}, {"1.1.weight", "F32", 2, {6, 4}, w[1] + 20, 96}};
    const test_st_tensor *sets[3] = {valid, every, medusa};
    int counts[3] = {N_VALID, 6, 6};
    for (int i = 0; i < 3; i++) {
        unsigned char *b = test_safetensors_bytes(sets[i], counts[i], &sizes[i]);
        CHECK(b && sizes[i] < SEED_MAX);
        if (b) memcpy(seeds[i], b, sizes[i]);
        free(b);
    }
    FILE *f = fopen(test_tmp("gaps.safetensors"), "rb");
    sizes[3] = f ? fread(seeds[3], 1, SEED_MAX, f) : 0;
    if (f) fclose(f);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/seeds", test_tmpdir());
    mkdir(dir, 0755);
    for (int i = 0; i < N_SEEDS; i++) {
        char name[64];
        snprintf(name, sizeof name, "seeds/seed%d.safetensors", i);
        write_bytes(test_tmp(name), seeds[i], sizes[i]);
        fuzz_safetensors_one(seeds[i], sizes[i]);
        /* the Medusa seed loads as heads (so the fuzzer starts from a head that reaches the
         * forward pass), the others do not */
        CHECK_MSG((fuzz_medusa(test_tmp(name)) > 0) == (i == 2), "seed %d as Medusa heads", i);
    }
    static unsigned char buf[2 * SEED_MAX];
    static const char *tokens[] = {"\"", "[", "]", "{", "}", ",", "0", "-1", "99999999999",
                                   "\"F16\"", "\"I64\"", ":", "1e3", "\\u0000"};
    int rounds = test_sanitized() ? 2000 : 6000;
    for (int round = 0; round < rounds; round++) {
        size_t s = next_rand() % N_SEEDS, n = sizes[s];
        memcpy(buf, seeds[s], n);
        int muts = 1 + (int)(next_rand() % 4);
        for (int m = 0; m < muts && n > 0; m++) {
            size_t at = next_rand() % n;
            switch (next_rand() % 6) {
            case 0:
                buf[at] ^= (unsigned char)(1u << (next_rand() % 8));
                break;
            case 1: /* a digit of the header's numbers */
                buf[at] = (unsigned char)('0' + next_rand() % 10);
                break;
            case 2:
                n = at;
                break;
            case 3: /* a JSON token inserted */
            {
                const char *tk = tokens[next_rand() % (sizeof tokens / sizeof tokens[0])];
                size_t len = strlen(tk);
                if (n + len < sizeof buf) {
                    memmove(buf + at + len, buf + at, n - at);
                    memcpy(buf + at, tk, len);
                    n += len;
                }
                break;
            }
            case 4: /* the header length */
                if (n >= 8) {
                    uint64_t v = next_rand() % 2 ? next_rand() % (n + 4) : UINT64_MAX - next_rand();
                    memcpy(buf, &v, 8);
                }
                break;
            default: /* delete a chunk */
            {
                size_t len = (size_t)(next_rand() % 16) % (n - at + 1);
                memmove(buf + at, buf + at + len, n - at - len);
                n -= len;
            }
            }
        }
        fuzz_safetensors_one(buf, n);
    }
    fprintf(stderr, "  %d mutated inputs through fuzz_safetensors_one\n", rounds);
}

int main(void) {
    fill_halves();
    test_valid();
    test_refused();
    test_mutation_corpus();
    return test_finish("test_safetensors");
}
