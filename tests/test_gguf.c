/* test_gguf.c: the GGUF reader and writer spec. Reads the shared vocabulary-only GGUF, round
 * trips every value type and tensor type through the writer, and feeds hostile files (every
 * truncation, targeted corruptions of each field, huge counts) expecting one clean line that
 * names the file. Ends by replaying a seeded corpus of mutations through fuzz_gguf_one (the
 * libFuzzer entry of tests/fuzz_gguf.c), and writes the seed files the fuzzer starts from. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/arch.h"
#include "model/loader/model_file.h"
#include "model/forward.h"
#include "model/formats/gguf.h"
#include "model/formats/llama2c.h"
#include "model/model.h"
#include "model/convert/synth.h"
#include "tests/testutil.h"
#include "util/err.h"

#include "tests/fuzz_gguf.c"

/* ---- helpers ----------------------------------------------------------------------------- */

static void write_file(const char *path, const void *data, size_t n) {
    remove(path); /* a fresh file: rewriting via O_TRUNC makes ext4 flush on close */
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

static gguf *open_ok(const char *path) {
    char err[ERR_LEN];
    gguf *g = NULL;
    CHECK_MSG(gguf_open(&g, path, err) == 0, "%s", err);
    return g;
}

/* gguf_open fails with one line naming the file and containing `needle`. */
static void expect_error(const char *path, const char *needle) {
    char err[ERR_LEN] = "";
    gguf *g = NULL;
    int rc = gguf_open(&g, path, err);
    CHECK_MSG(rc == -1 && g == NULL, "%s opened (expected '%s')", path, needle);
    CHECK_MSG(strncmp(err, path, strlen(path)) == 0, "message '%s' does not name the file", err);
    CHECK_MSG(strstr(err, needle) != NULL, "message '%s' lacks '%s'", err, needle);
    CHECK_MSG(strchr(err, '\n') == NULL, "message '%s' is not one line", err);
    gguf_close(g);
}

static void expect_bytes_error(const void *data, size_t n, const char *needle) {
    const char *p = test_tmp("bad.gguf");
    write_file(p, data, n);
    expect_error(p, needle);
}

/* A byte builder for hand-made (including hostile) files. */
typedef struct {
    unsigned char b[4096];
    size_t n;
} raw;

static void r_bytes(raw *r, const void *p, size_t n) {
    memcpy(r->b + r->n, p, n);
    r->n += n;
}
static size_t r_u32(raw *r, uint32_t v) {
    r_bytes(r, &v, 4);
    return r->n - 4;
}
static size_t r_u64(raw *r, uint64_t v) {
    r_bytes(r, &v, 8);
    return r->n - 8;
}
static size_t r_str(raw *r, const char *s) {
    size_t at = r_u64(r, strlen(s));
    r_bytes(r, s, strlen(s));
    return at;
}
static void r_pad(raw *r, size_t align) {
    while (r->n % align) r->b[r->n++] = 0;
}
static void put_u32(raw *r, size_t at, uint32_t v) {
    memcpy(r->b + at, &v, 4);
}
static void put_u64(raw *r, size_t at, uint64_t v) {
    memcpy(r->b + at, &v, 8);
}

/* Offsets of the fields of the small hand-made file, for targeted corruption. */
typedef struct {
    size_t version, n_tensors, n_kv, key0_len, type0, str0_len, arr_type, arr_elem, arr_len,
        bool_val, t_name_len, t_ndims, t_ne0, t_ne1, t_type, t_offset, data;
} layout;

/* Header, 3 pairs (string, u32 array, bool) and one 4x2 F32 tensor. */
static raw small_file(layout *L) {
    raw r = {.n = 0};
    r_bytes(&r, "GGUF", 4);
    L->version = r_u32(&r, 3);
    L->n_tensors = r_u64(&r, 1);
    L->n_kv = r_u64(&r, 3);
    L->key0_len = r_str(&r, "general.architecture");
    L->type0 = r_u32(&r, GGUF_STRING);
    L->str0_len = r_str(&r, "llama");
    r_str(&r, "test.arr");
    L->arr_type = r_u32(&r, GGUF_ARRAY);
    L->arr_elem = r_u32(&r, GGUF_U32);
    L->arr_len = r_u64(&r, 3);
    for (uint32_t i = 0; i < 3; i++) r_u32(&r, 10 + i);
    r_str(&r, "test.flag");
    r_u32(&r, GGUF_BOOL);
    L->bool_val = r.n;
    r_bytes(&r, "\x01", 1);
    L->t_name_len = r_str(&r, "w");
    L->t_ndims = r_u32(&r, 2);
    L->t_ne0 = r_u64(&r, 4);
    L->t_ne1 = r_u64(&r, 2);
    L->t_type = r_u32(&r, GGUF_TENSOR_F32);
    L->t_offset = r_u64(&r, 0);
    r_pad(&r, 32);
    L->data = r.n;
    for (int i = 0; i < 8; i++) {
        float f = (float)i * 0.5f;
        r_bytes(&r, &f, 4);
    }
    return r;
}

/* ---- the shared vocabulary file ---------------------------------------------------------- */

static void test_vocab_file(void) {
    const char *path = test_shared("tokenizer-vectors/ggml-vocab-llama-spm.gguf");
    gguf *g = open_ok(path);
    if (!g) return;
    char err[ERR_LEN];
    CHECK(gguf_version(g) == 3 && gguf_alignment(g) == 32);
    CHECK(gguf_kv_count(g) == 22 && gguf_tensor_count(g) == 0);
    CHECK(strcmp(gguf_path(g), path) == 0);
    const char *s;
    CHECK(gguf_get_str(g, "general.architecture", &s, err) == 0 && strcmp(s, "llama") == 0);
    CHECK(gguf_get_str(g, "tokenizer.ggml.model", &s, err) == 0 && strcmp(s, "llama") == 0);
    uint32_t u;
    int32_t i32;
    uint64_t u64;
    CHECK(gguf_get_u32(g, "llama.block_count", &u, err) == 0 && u == 32);
    CHECK(gguf_get_i32(g, "llama.context_length", &i32, err) == 0 && i32 == 4096);
    CHECK(gguf_get_u64(g, "llama.vocab_size", &u64, err) == 0 && u64 == 32000);
    float eps;
    CHECK(gguf_get_f32(g, "llama.attention.layer_norm_rms_epsilon", &eps, err) == 0 &&
          fabsf(eps - 1e-5f) < 1e-9f);
    int b;
    CHECK(gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &b, err) == 0 && b == 1);
    CHECK(gguf_get_bool(g, "tokenizer.ggml.add_eos_token", &b, err) == 0 && b == 0);

    uint64_t n;
    CHECK(gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &n, err) == 0 && n == 32000);
    gguf_str piece;
    CHECK(gguf_get_arr_str(g, "tokenizer.ggml.tokens", 29871, &piece, err) == 0 && piece.len == 3 &&
          memcmp(piece.ptr, "\xe2\x96\x81", 3) == 0);
    CHECK(gguf_get_arr_str(g, "tokenizer.ggml.tokens", 1, &piece, err) == 0 && piece.len == 3 &&
          memcmp(piece.ptr, "<s>", 3) == 0);
    CHECK(gguf_get_arr_str(g, "tokenizer.ggml.tokens", 32000, &piece, err) == -1 &&
          strstr(err, "index 32000 past its 32000 elements"));
    float *scores = malloc(32000 * sizeof *scores);
    int32_t *types = malloc(32000 * sizeof *types);
    CHECK(gguf_get_arr_f32(g, "tokenizer.ggml.scores", scores, 32000, err) == 0);
    CHECK(scores[29871] == -1e9f && scores[0] == 0.0f);
    CHECK(gguf_get_arr_i32(g, "tokenizer.ggml.token_type", types, 32000, err) == 0);
    CHECK(types[0] == 2 && types[1] == 3 && types[3] == 6 && types[29871] == 1);
    CHECK(gguf_get_arr_f32(g, "tokenizer.ggml.scores", scores, 31999, err) == -1 &&
          strstr(err, "has 32000 elements, expected 31999"));
    free(scores);
    free(types);

    /* Errors name the file and the key. */
    CHECK(gguf_get_u32(g, "no.such.key", &u, err) == -1 &&
          strstr(err, "key 'no.such.key' is missing") && strstr(err, path));
    CHECK(gguf_get_str(g, "llama.block_count", &s, err) == -1 &&
          strstr(err, "key 'llama.block_count' should be a string but is u32"));
    CHECK(gguf_get_u32(g, "tokenizer.ggml.tokens", &u, err) == -1 &&
          strstr(err, "should be a u32 but is an array of string"));
    CHECK(gguf_get_bool(g, "llama.block_count", &b, err) == -1);
    CHECK(gguf_get_f32(g, "general.name", &eps, err) == -1);
    CHECK(gguf_get_arr_len(g, "tokenizer.ggml.scores", GGUF_I32, &n, err) == -1 &&
          strstr(err, "should be an array of i32 but holds f32"));
    CHECK(gguf_find_key(g, "general.name") >= 0 && gguf_find_key(g, "general") == -1);
    CHECK(gguf_find_tensor(g, "token_embd.weight") == NULL && gguf_tensor_at(g, 0) == NULL);
    gguf_vtype et;
    int k = gguf_find_key(g, "tokenizer.ggml.tokens");
    CHECK(gguf_kv_array(g, k, &et, &n) == 0 && et == GGUF_STRING && n == 32000);
    CHECK(gguf_kv_type(g, k) == GGUF_ARRAY &&
          strcmp(gguf_kv_key(g, k), "tokenizer.ggml.tokens") == 0);
    CHECK(gguf_kv_array(g, gguf_find_key(g, "general.name"), &et, &n) == -1);
    gguf_close(g);
}

/* ---- writer round trip ------------------------------------------------------------------- */

static uint16_t f16_of(float f) { /* exact for the small integers used below */
    if (f == 0) return 0;
    int e;
    float m = frexpf(f, &e); /* f = m * 2^e, m in [0.5, 1) */
    uint16_t sign = f < 0 ? 0x8000 : 0;
    m = fabsf(m);
    return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((m * 2 - 1) * 1024));
}

static int fill_copy(void *ctx, void *buf, char *err) {
    const gguf_tensor *t = ctx;
    (void)err;
    memcpy(buf, t->data, (size_t)t->nbytes);
    return 0;
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    if (f) fclose(f);
    return n;
}

/* Every pair copied with gguf_writer_copy_kv and every tensor re-added (half by reference, half
 * filled at write time), into a stream: the same bytes as the original, and gguf_writer_size
 * said so beforehand. */
static void test_copy(const gguf *g, const char *orig) {
    char err[ERR_LEN];
    const char *path = test_tmp("copy.gguf");
    gguf_writer *w =
        gguf_writer_new(gguf_alignment(g) == GGUF_DEFAULT_ALIGNMENT ? 0 : gguf_alignment(g));
    for (int i = 0; i < gguf_kv_count(g); i++)
        if (strcmp(gguf_kv_key(g, i), "general.alignment") != 0)
            CHECK(gguf_writer_copy_kv(w, g, i) == 0);
    for (int i = 0; i < gguf_tensor_count(g); i++) {
        const gguf_tensor *t = gguf_tensor_at(g, i);
        if (i % 2)
            gguf_writer_add_tensor_fill(w, t->name, t->type, t->n_dims, t->ne, t->nbytes, fill_copy,
                                        (void *)t);
        else
            gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes);
    }
    uint64_t size = gguf_writer_size(w);
    FILE *f = fopen(path, "wb");
    CHECK_MSG(f && gguf_writer_write_stream(w, f, err) == 0, "%s", err);
    if (f) fclose(f);
    gguf_writer_free(w);
    long n = file_size(orig);
    CHECK_MSG(n > 0 && size == (uint64_t)n && file_size(path) == n, "sizes %llu, %ld, %ld",
              (unsigned long long)size, file_size(path), n);
    FILE *a = fopen(orig, "rb"), *b = fopen(path, "rb");
    int same = a && b;
    for (int ca = 0, cb = 0; same && ca != EOF; same = ca == cb) ca = fgetc(a), cb = fgetc(b);
    CHECK_MSG(same, "%s: the copy differs", orig);
    if (a) fclose(a);
    if (b) fclose(b);
}

static void test_writer_round_trip(uint32_t alignment) {
    const char *path = test_tmp("rt.gguf");
    gguf_writer *w = gguf_writer_new(alignment);
    CHECK(w != NULL);
    uint8_t u8 = 200;
    int8_t i8 = -100;
    uint16_t u16 = 60000;
    int16_t i16 = -30000;
    int32_t i32 = -2000000000;
    uint64_t u64 = 0xfedcba9876543210ull;
    int64_t i64 = -0x123456789abcll;
    double f64 = 3.141592653589793;
    CHECK(gguf_writer_add(w, "v.u8", GGUF_U8, &u8) == 0);
    gguf_writer_add(w, "v.i8", GGUF_I8, &i8);
    gguf_writer_add(w, "v.u16", GGUF_U16, &u16);
    gguf_writer_add(w, "v.i16", GGUF_I16, &i16);
    gguf_writer_add_u32(w, "v.u32", 4000000000u);
    gguf_writer_add(w, "v.i32", GGUF_I32, &i32);
    gguf_writer_add_f32(w, "v.f32", 0.25f);
    gguf_writer_add_bool(w, "v.bool", 1);
    gguf_writer_add_str(w, "v.str", "h\xc3\xa9llo");
    gguf_writer_add(w, "v.u64", GGUF_U64, &u64);
    gguf_writer_add(w, "v.i64", GGUF_I64, &i64);
    gguf_writer_add(w, "v.f64", GGUF_F64, &f64);
    const float fa[] = {1.5f, -2.0f, 1e30f};
    const int32_t ia[] = {-1, 0, 7, INT32_MAX};
    const uint8_t ua[] = {0, 255};
    const int64_t la[] = {-5, 1ll << 40};
    const char *sa[] = {"", "a", "with\x00nul"};
    const uint64_t slen[] = {0, 1, 8};
    gguf_writer_add_array(w, "a.f32", GGUF_F32, fa, NULL, 3);
    gguf_writer_add_array(w, "a.i32", GGUF_I32, ia, NULL, 4);
    gguf_writer_add_array(w, "a.u8", GGUF_U8, ua, NULL, 2);
    gguf_writer_add_array(w, "a.i64", GGUF_I64, la, NULL, 2);
    gguf_writer_add_array(w, "a.str", GGUF_STRING, sa, slen, 3);
    gguf_writer_add_array(w, "a.empty", GGUF_F32, NULL, NULL, 0);

    /* One tensor of each type the model reads, with odd sizes so padding matters. */
    float f32[3 * 5];
    for (int i = 0; i < 15; i++) f32[i] = (float)i - 7.0f;
    uint16_t f16[7], bf16[9];
    for (int i = 0; i < 7; i++) f16[i] = f16_of((float)(i - 3));
    for (int i = 0; i < 9; i++) {
        float f = (float)i * 0.5f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        bf16[i] = (uint16_t)(bits >> 16);
    }
    unsigned char q8[2 * 2 * 34]; /* 64 x 2, two blocks per row */
    for (size_t i = 0; i < sizeof q8; i++) q8[i] = (unsigned char)(i * 7);
    CHECK(gguf_writer_add_tensor(w, "t.f32", GGUF_TENSOR_F32, 2, (uint64_t[]){5, 3}, f32,
                                 sizeof f32) == 0);
    gguf_writer_add_tensor(w, "t.f16", GGUF_TENSOR_F16, 1, (uint64_t[]){7}, f16, sizeof f16);
    gguf_writer_add_tensor(w, "t.q8", GGUF_TENSOR_Q8_0, 2, (uint64_t[]){64, 2}, q8, sizeof q8);
    gguf_writer_add_tensor(w, "t.bf16", GGUF_TENSOR_BF16, 3, (uint64_t[]){3, 1, 3}, bf16,
                           sizeof bf16);
    char err[ERR_LEN];
    CHECK_MSG(gguf_writer_write(w, path, err) == 0, "%s", err);
    gguf_writer_free(w);

    gguf *g = open_ok(path);
    if (!g) return;
    uint32_t want_align = alignment ? alignment : 32;
    CHECK(gguf_alignment(g) == want_align);
    CHECK(gguf_kv_count(g) == 18 + (want_align != 32));
    uint32_t u;
    int32_t s32;
    uint64_t g64;
    float f;
    int b;
    const char *str;
    CHECK_MSG(gguf_get_u32(g, "v.u8", &u, err) == 0 && u == 200, "%s", err);
    CHECK(gguf_get_i32(g, "v.i8", &s32, err) == 0 && s32 == -100);
    CHECK(gguf_get_u32(g, "v.i8", &u, err) == -1 && strstr(err, "= -100 does not fit a u32"));
    CHECK(gguf_get_u32(g, "v.u16", &u, err) == 0 && u == 60000);
    CHECK(gguf_get_i32(g, "v.i16", &s32, err) == 0 && s32 == -30000);
    CHECK(gguf_get_u32(g, "v.u32", &u, err) == 0 && u == 4000000000u);
    CHECK(gguf_get_i32(g, "v.u32", &s32, err) == -1 && strstr(err, "does not fit an i32"));
    CHECK(gguf_get_i32(g, "v.i32", &s32, err) == 0 && s32 == -2000000000);
    CHECK(gguf_get_f32(g, "v.f32", &f, err) == 0 && f == 0.25f);
    CHECK(gguf_get_bool(g, "v.bool", &b, err) == 0 && b == 1);
    CHECK(gguf_get_str(g, "v.str", &str, err) == 0 && strcmp(str, "h\xc3\xa9llo") == 0);
    CHECK(gguf_get_u64(g, "v.u64", &g64, err) == 0 && g64 == u64);
    CHECK(gguf_get_u32(g, "v.u64", &u, err) == -1);
    CHECK(gguf_get_u64(g, "v.i64", &g64, err) == -1);
    CHECK(gguf_get_f32(g, "v.f64", &f, err) == 0 && f == (float)f64);
    float fo[3];
    int32_t io[4];
    CHECK(gguf_get_arr_f32(g, "a.f32", fo, 3, err) == 0 && memcmp(fo, fa, sizeof fa) == 0);
    CHECK(gguf_get_arr_i32(g, "a.i32", io, 4, err) == 0 && memcmp(io, ia, sizeof ia) == 0);
    CHECK(gguf_get_arr_i32(g, "a.u8", io, 2, err) == 0 && io[0] == 0 && io[1] == 255);
    CHECK(gguf_get_arr_i32(g, "a.i64", io, 2, err) == -1 && strstr(err, "element 1"));
    CHECK(gguf_get_arr_i32(g, "a.f32", io, 3, err) == -1);
    gguf_str gs;
    CHECK(gguf_get_arr_str(g, "a.str", 0, &gs, err) == 0 && gs.len == 0);
    CHECK(gguf_get_arr_str(g, "a.str", 2, &gs, err) == 0 && gs.len == 8 &&
          memcmp(gs.ptr, "with\0nul", 8) == 0);
    uint64_t n = 99;
    CHECK(gguf_get_arr_len(g, "a.empty", GGUF_F32, &n, err) == 0 && n == 0);
    CHECK(gguf_get_arr_f32(g, "a.empty", fo, 0, err) == 0);

    CHECK(gguf_tensor_count(g) == 4);
    const gguf_tensor *t = gguf_find_tensor(g, "t.f32");
    CHECK(t && t->type == GGUF_TENSOR_F32 && t->n_dims == 2 && t->ne[0] == 5 && t->ne[1] == 3 &&
          t->ne[2] == 1 && t->n_elements == 15 && t->nbytes == sizeof f32 &&
          memcmp(t->data, f32, sizeof f32) == 0);
    t = gguf_find_tensor(g, "t.f16");
    CHECK(t && t->nbytes == sizeof f16 && memcmp(t->data, f16, sizeof f16) == 0);
    t = gguf_find_tensor(g, "t.q8");
    CHECK(t && t->type == GGUF_TENSOR_Q8_0 && t->nbytes == sizeof q8 &&
          memcmp(t->data, q8, sizeof q8) == 0);
    t = gguf_find_tensor(g, "t.bf16");
    CHECK(t && t->n_dims == 3 && t->ne[2] == 3 && memcmp(t->data, bf16, sizeof bf16) == 0);
    for (int i = 0; i < gguf_tensor_count(g); i++) {
        t = gguf_tensor_at(g, i);
        CHECK((uintptr_t)t->data % want_align == 0 && t->offset % want_align == 0);
    }
    CHECK(strcmp(gguf_tensor_at(g, 2)->name, "t.q8") == 0);
    test_copy(g, path);
    gguf_close(g);
}

static void test_type_table(void) {
    uint64_t be, bb;
    CHECK(strcmp(gguf_type_name(0), "F32") == 0 && strcmp(gguf_type_name(30), "BF16") == 0);
    CHECK(gguf_type_block(GGUF_TENSOR_Q8_0, &be, &bb) == 0 && be == 32 && bb == 34);
    CHECK(gguf_type_block(12, &be, &bb) == 0 && be == 256 && bb == 144); /* Q4_K */
    CHECK(gguf_type_name(4) == NULL && gguf_type_name(31) == NULL && gguf_type_name(1000) == NULL);
    CHECK(gguf_type_block(5, &be, &bb) == -1);
}

static void test_writer_errors(void) {
    const char *path = test_tmp("werr.gguf");
    char err[ERR_LEN];
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_u32(w, "k", 1);
    CHECK(gguf_writer_add_u32(w, "k", 2) == -1);
    CHECK(gguf_writer_add_u32(w, "other", 2) == -1); /* sticky */
    CHECK(gguf_writer_write(w, path, err) == -1 && strstr(err, "metadata key 'k' added twice"));
    gguf_writer_free(w);

    float d[4] = {0};
    w = gguf_writer_new(0);
    CHECK(gguf_writer_add_tensor(w, "t", GGUF_TENSOR_F32, 1, (uint64_t[]){4}, d, 12) == -1);
    CHECK(gguf_writer_write(w, path, err) == -1 && strstr(err, "'t': byte size does not match"));
    gguf_writer_free(w);

    w = gguf_writer_new(0);
    gguf_writer_add_tensor(w, "t", GGUF_TENSOR_F32, 1, (uint64_t[]){4}, d, 16);
    gguf_writer_add_tensor(w, "t", GGUF_TENSOR_F32, 1, (uint64_t[]){4}, d, 16);
    CHECK(gguf_writer_write(w, path, err) == -1 && strstr(err, "tensor 't' added twice"));
    gguf_writer_free(w);

    w = gguf_writer_new(0);
    gguf_writer_add_tensor(w, "q", GGUF_TENSOR_Q8_0, 1, (uint64_t[]){33}, d, 16);
    CHECK(gguf_writer_write(w, path, err) == -1);
    gguf_writer_free(w);

    w = gguf_writer_new(48);
    CHECK(gguf_writer_write(w, path, err) == -1 && strstr(err, "power of two"));
    gguf_writer_free(w);

    w = gguf_writer_new(0);
    CHECK(gguf_writer_write(w, test_tmp("no/such/dir/x.gguf"), err) == -1 &&
          strstr(err, "cannot create"));
    gguf_writer_free(w);
}

/* ---- hostile files ----------------------------------------------------------------------- */

static void test_open_errors(void) {
    expect_error(test_tmp("missing.gguf"), "cannot open");
    expect_error(test_tmpdir(), "is a directory");
    expect_bytes_error("", 0, "empty file");
    expect_bytes_error("GGU", 3, "not a GGUF file");
    expect_bytes_error("ggjt\x03\0\0\0", 8, "not a GGUF file");
    expect_bytes_error("GGUF\x03\0", 6, "header: truncated: version needs 4 bytes");
    expect_bytes_error("GGUF\x03\0\0\0\0\0", 10, "tensor count needs 8 bytes");
    expect_bytes_error("GGUF\x01\0\0\0", 8, "GGUF version 1 is not supported");
    expect_bytes_error("GGUF\x07\0\0\0", 8, "GGUF version 7 is not supported");
    expect_bytes_error("GGUF\0\0\0\x03", 8, "big-endian");
}

static void test_truncations(void) {
    layout L;
    raw r = small_file(&L);
    const char *p = test_tmp("small.gguf");
    write_file(p, r.b, r.n);
    gguf *g = open_ok(p);
    if (g) {
        char err[ERR_LEN];
        const char *s;
        int32_t arr[3];
        int b;
        CHECK(gguf_get_str(g, "general.architecture", &s, err) == 0 && !strcmp(s, "llama"));
        CHECK(gguf_get_arr_i32(g, "test.arr", arr, 3, err) == 0 && arr[2] == 12);
        CHECK(gguf_get_bool(g, "test.flag", &b, err) == 0 && b == 1);
        const gguf_tensor *t = gguf_find_tensor(g, "w");
        CHECK(t && t->nbytes == 32 && ((const float *)t->data)[7] == 3.5f);
        gguf_close(g);
    }
    /* Every strict prefix fails cleanly (the tensor data runs to the last byte). */
    for (size_t cut = 1; cut < r.n; cut++) {
        write_file(p, r.b, cut);
        char err[ERR_LEN] = "";
        g = NULL;
        int rc = gguf_open(&g, p, err);
        CHECK_MSG(rc == -1 && g == NULL, "prefix of %zu bytes opened", cut);
        CHECK_MSG(strstr(err, p) && !strchr(err, '\n') &&
                      (strstr(err, "truncated") || strstr(err, "past the end") ||
                       strstr(err, "not a GGUF")),
                  "cut %zu: %s", cut, err);
        gguf_close(g);
    }
}

/* Applies one corruption to a fresh small file and expects `needle`. */
#define CORRUPT(stmt, needle)                                                                      \
    do {                                                                                           \
        raw r = small_file(&L);                                                                    \
        stmt;                                                                                      \
        expect_bytes_error(r.b, r.n, needle);                                                      \
    } while (0)

/* What ggml's reader accepts opens here too, read as ggml reads it: version 0, a key or tensor
 * name holding a NUL byte (read up to it; keys equal up to the NUL are two keys, the first
 * found), an empty key, a string value holding a NUL byte, a bool byte of 2 (true). */
static void test_ggml_leniency(void) {
    layout L;
    const char *p = test_tmp("lenient.gguf");
    char err[ERR_LEN];
    const char *s;
    int b;
    raw r = small_file(&L);
    put_u32(&r, L.version, 0);
    r.b[L.key0_len + 8 + 10] = 0; /* "general.ar\0hitecture" */
    r.b[L.str0_len + 8 + 2] = 0;  /* "ll\0ma" */
    r.b[L.bool_val] = 2;
    r.b[L.t_name_len + 8] = 0; /* tensor "\0" */
    write_file(p, r.b, r.n);
    gguf *g = open_ok(p);
    if (g) {
        CHECK(gguf_version(g) == 0 && gguf_find_key(g, "general.architecture") < 0);
        CHECK(gguf_get_str(g, "general.ar", &s, err) == 0 && strcmp(s, "ll") == 0);
        CHECK(gguf_get_bool(g, "test.flag", &b, err) == 0 && b == 1);
        CHECK(gguf_find_tensor(g, "") != NULL && gguf_find_tensor(g, "w") == NULL);
        gguf_close(g);
    }
    /* Two keys "k\0a" and "k\0b", and an empty one. */
    r.n = 0;
    r_bytes(&r, "GGUF", 4);
    r_u32(&r, 3);
    r_u64(&r, 0);
    r_u64(&r, 3);
    for (int i = 0; i < 3; i++) {
        const char *key[] = {"k\0a", "k\0b", ""};
        r_u64(&r, i < 2 ? 3 : 0);
        r_bytes(&r, key[i], i < 2 ? 3 : 0);
        r_u32(&r, GGUF_U8);
        uint8_t v = (uint8_t)(5 + i);
        r_bytes(&r, &v, 1);
    }
    write_file(p, r.b, r.n);
    g = open_ok(p);
    if (g) {
        uint32_t v;
        CHECK(gguf_kv_count(g) == 3 && gguf_get_u32(g, "k", &v, err) == 0 && v == 5);
        CHECK(gguf_get_u32(g, "", &v, err) == 0 && v == 7);
        gguf_close(g);
    }
    /* Equal whole keys still repeat one another, as in ggml. */
    r.n = 0;
    r_bytes(&r, "GGUF", 4);
    r_u32(&r, 3);
    r_u64(&r, 0);
    r_u64(&r, 2);
    for (int i = 0; i < 2; i++) {
        r_u64(&r, 3);
        r_bytes(&r, "k\0a", 3);
        r_u32(&r, GGUF_U8);
        r_bytes(&r, "\x05", 1);
    }
    expect_bytes_error(r.b, r.n, "metadata pair 1: key 'k' repeats pair 0");
}

static void test_corruptions(void) {
    layout L;
    CORRUPT(put_u64(&r, L.n_kv, 1ull << 40), "metadata count 1099511627776 needs more than the");
    CORRUPT(put_u64(&r, L.n_kv, UINT64_MAX), "metadata count");
    CORRUPT(put_u64(&r, L.n_tensors, 1ull << 60), "tensor count 1152921504606846976 needs more");
    /* One pair too few: the third pair is read as a tensor info. */
    CORRUPT(put_u64(&r, L.n_kv, 2), "tensor 0 ('test.flag'): n_dims 7 is more than 4");
    CORRUPT(put_u64(&r, L.key0_len, 1ull << 62), "metadata pair 0: truncated: key needs");
    /* an empty key is a key (ggml's too): "general.architecture" is then read as its type */
    CORRUPT(put_u64(&r, L.key0_len, 0), "metadata pair 0 (''): unknown value type");
    CORRUPT(put_u32(&r, L.type0, 13), "('general.architecture'): unknown value type 13");
    CORRUPT(put_u32(&r, L.type0, 0x80000000u), "unknown value type 2147483648");
    CORRUPT(put_u64(&r, L.str0_len, UINT64_MAX), "string value needs 18446744073709551615 bytes");
    CORRUPT(put_u32(&r, L.arr_elem, GGUF_ARRAY), "('test.arr'): nested arrays are not supported");
    CORRUPT(put_u32(&r, L.arr_elem, 99), "unknown array element type 99");
    CORRUPT(put_u64(&r, L.arr_len, 1ull << 62), "array of 4611686018427387904 u32 needs more");
    CORRUPT(put_u64(&r, L.arr_len, UINT64_MAX / 4 + 2), "array of");
    CORRUPT((put_u32(&r, L.arr_elem, GGUF_STRING), put_u64(&r, L.arr_len, 1ull << 50)),
            "array of 1125899906842624 strings needs more");
    CORRUPT(put_u32(&r, L.arr_elem, GGUF_STRING), "string 0 of the array needs");
    CORRUPT(put_u32(&r, L.t_ndims, 5), "tensor 0 ('w'): n_dims 5 is more than 4");
    CORRUPT(put_u32(&r, L.t_ndims, 0xffffffffu), "n_dims 4294967295");
    CORRUPT(put_u32(&r, L.t_type, 4), "tensor 0 ('w'): unknown ggml type 4");
    CORRUPT(put_u32(&r, L.t_type, 1000), "unknown ggml type 1000");
    CORRUPT(put_u32(&r, L.t_type, GGUF_TENSOR_Q8_0),
            "ne[0] = 4 is not a multiple of the Q8_0 block size 32");
    /* every block type decbench reads: a row that is not whole blocks is refused by name */
    for (int wt = 0; wt < WTYPE_COUNT; wt++) {
        const wtype_traits *tt = wtype_get((wtype)wt);
        if (tt->block == 1) continue;
        char needle[96];
        snprintf(needle, sizeof needle, "ne[0] = 4 is not a multiple of the %s block size %d",
                 gguf_type_name(tt->ggml_type), tt->block);
        CORRUPT(put_u32(&r, L.t_type, tt->ggml_type), needle);
    }
    CORRUPT(put_u64(&r, L.t_ne1, UINT64_MAX), "dimensions overflow");
    CORRUPT((put_u64(&r, L.t_ne0, 1ull << 32), put_u64(&r, L.t_ne1, 1ull << 31)),
            "dimensions overflow");
    CORRUPT((put_u64(&r, L.t_ne0, 1ull << 31), put_u64(&r, L.t_ne1, 1ull << 31)),
            "byte size overflows");
    CORRUPT(put_u64(&r, L.t_ne1, 3), "runs past the end of the file");
    CORRUPT(put_u64(&r, L.t_ne1, 1ull << 40), "runs past the end");
    CORRUPT(put_u64(&r, L.t_offset, 7), "offset 7 is not a multiple of the alignment 32");
    CORRUPT(put_u64(&r, L.t_offset, 32), "data [32, +32) runs past the end");
    CORRUPT(put_u64(&r, L.t_offset, UINT64_MAX - 31), "runs past the end");
    CORRUPT(put_u64(&r, L.t_name_len, 1ull << 62), "tensor 0: truncated: name needs");
    /* general.alignment: type and value checked, and it moves the data section. */
    raw r = {.n = 0};
    r_bytes(&r, "GGUF", 4);
    r_u32(&r, 3);
    r_u64(&r, 0);
    r_u64(&r, 1);
    r_str(&r, "general.alignment");
    size_t type_at = r_u32(&r, GGUF_U32);
    size_t val_at = r_u32(&r, 48);
    expect_bytes_error(r.b, r.n, "general.alignment must be a u32 power of two (found u32 48)");
    put_u32(&r, val_at, 0);
    expect_bytes_error(r.b, r.n, "found u32 0");
    put_u32(&r, val_at, 64);
    put_u32(&r, type_at, GGUF_I32);
    expect_bytes_error(r.b, r.n, "found i32");
    put_u32(&r, type_at, GGUF_U32);
    const char *p = test_tmp("align.gguf");
    write_file(p, r.b, r.n);
    gguf *g = open_ok(p);
    CHECK(g && gguf_alignment(g) == 64);
    gguf_close(g);

    /* Duplicate keys and duplicate tensor names. */
    r.n = 0;
    r_bytes(&r, "GGUF", 4);
    r_u32(&r, 2); /* version 2 reads the same */
    r_u64(&r, 0);
    r_u64(&r, 2);
    for (int i = 0; i < 2; i++) {
        r_str(&r, "dup.key");
        r_u32(&r, GGUF_U8);
        r_bytes(&r, "\x05", 1);
    }
    expect_bytes_error(r.b, r.n, "metadata pair 1: key 'dup.key' repeats pair 0");
    r.n = 0;
    r_bytes(&r, "GGUF", 4);
    r_u32(&r, 2);
    r_u64(&r, 2);
    r_u64(&r, 0);
    for (int i = 0; i < 2; i++) {
        r_str(&r, "t\n\x01");
        r_u32(&r, 1);
        r_u64(&r, 1);
        r_u32(&r, GGUF_TENSOR_F32);
        r_u64(&r, 0);
    }
    r_pad(&r, 32);
    r_u32(&r, 0);
    expect_bytes_error(r.b, r.n, "tensor 1: name 't\?\?' repeats tensor 0");
    /* The same two tensors sharing data is fine once the names differ (overlaps are allowed:
     * nothing reads past the file). */
    r.b[24 + 8 + 2] = 'x';
    p = test_tmp("overlap.gguf");
    write_file(p, r.b, r.n);
    g = open_ok(p);
    CHECK(g && gguf_tensor_count(g) == 2 &&
          gguf_tensor_at(g, 0)->data == gguf_tensor_at(g, 1)->data);
    gguf_close(g);
    /* A file with no tensors may end right after its metadata (no padding). */
    r.n = 0;
    r_bytes(&r, "GGUF", 4);
    r_u32(&r, 3);
    r_u64(&r, 0);
    r_u64(&r, 0);
    p = test_tmp("bare.gguf");
    write_file(p, r.b, r.n);
    g = open_ok(p);
    CHECK(g && gguf_kv_count(g) == 0 && gguf_tensor_count(g) == 0);
    gguf_close(g);
}

/* ---- mutation corpus through the fuzz entry ---------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int write_model_gguf(const struct model *m, const char *path, char *err);

/* A micro Llama model (dim 32, one layer, vocab 8) written through write_model_gguf: its
 * matrices in type `small`, ffn_down in `big` (hidden 256 when that is a k-quant, else 32).
 * 8-20 KB, so the fuzzer can reach model_open_gguf's binding code and the kernels of each block
 * type. The block bytes are a fixed pattern: any bytes are a valid block but for an f16 scale
 * whose exponent is all ones (NaN, infinity: the loader refuses it), so no byte has bits 2-6
 * all set. */
static void write_micro_model(const char *path, wtype small, wtype big) {
    static unsigned char q[32 * 1024];
    static float norm[32];
    for (size_t i = 0; i < sizeof q; i++) {
        q[i] = (unsigned char)(i * 7 % 251);
        if ((q[i] & 0x7c) == 0x7c) q[i] ^= 0x40;
    }
    for (int i = 0; i < 32; i++) norm[i] = 1.0f;
    int hidden = wtype_get(big)->block == 256 ? 256 : 32;
    model_config c = {.dim = 32,
                      .hidden_dim = hidden,
                      .n_layers = 1,
                      .n_heads = 2,
                      .n_kv_heads = 1,
                      .vocab_size = 8,
                      .seq_len = 64,
                      .head_size = 16,
                      .kv_dim = 16,
                      .rope_dim = 16,
                      .rope_theta = 10000.0f,
                      .norm_eps = 1e-5f,
                      .bos_id = 1,
                      .eos_id = 2,
                      .end_id = 2};
    model_layer y = {.rms_att = norm, .rms_ffn = norm};
    y.wq = y.wo = (wmat){small, q, 32, 32, NULL, NULL};
    y.wk = y.wv = (wmat){small, q, 16, 32, NULL, NULL};
    y.w1 = y.w3 = (wmat){small, q, hidden, 32, NULL, NULL};
    y.w2 = (wmat){big, q, 32, hidden, NULL, NULL};
    model m = {.cfg = c, .layers = &y, .rms_final = norm};
    m.tok_embd = m.wcls = (wmat){small, q, 8, 32, NULL, NULL};
    char err[ERR_LEN];
    CHECK_MSG(write_model_gguf(&m, path, err) == 0, "%s", err);
}

/* Seeds: the small hand-made file, a writer-made file with every type, a tiny vocabulary and
 * micro models (q8_0; q4_0 with q4_k; q5_1 with q6_k; q4_1 with q2_k; q5_0 with q3_k and
 * q5_k's siblings). Also written to <tmp>/seeds/ as the libFuzzer starting corpus. */
enum { N_SEEDS = 12, SEED_MAX = 32768 };
static size_t make_seeds(unsigned char seeds[N_SEEDS][SEED_MAX], size_t sizes[N_SEEDS]) {
    layout L;
    raw r = small_file(&L);
    memcpy(seeds[0], r.b, r.n);
    sizes[0] = r.n;
    test_writer_round_trip(0); /* leaves rt.gguf */
    const char *files[] = {"rt.gguf",          "vocab_seed.gguf",  "micro_model.gguf",
                           "micro_q4k.gguf",   "micro_q6k.gguf",   "micro_q2k.gguf",
                           "micro_q3k.gguf",   "micro_q5k.gguf",   "micro_qwen2.gguf",
                           "micro_qwen3.gguf", "micro_llama3.gguf"};
    gguf_writer *w = gguf_writer_new(0);
    const char *tokens[] = {"<unk>", "<s>", "</s>", "<0x41>", "\xe2\x96\x81", "\xe2\x96\x81H", "e",
                            "l",     "ll",  "o",    "He"};
    float scores[11] = {0, 0, 0, 0, -1, -2, -3, -4, -5, -6, -7};
    int32_t types[11] = {2, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1};
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, 11);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, NULL, 11);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, 11);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 1);
    char err[ERR_LEN];
    CHECK_MSG(gguf_writer_write(w, test_tmp("vocab_seed.gguf"), err) == 0, "%s", err);
    gguf_writer_free(w);
    const wtype micro[][2] = {{WTYPE_Q8_0, WTYPE_Q8_0}, {WTYPE_Q4_0, WTYPE_Q4_K},
                              {WTYPE_Q5_1, WTYPE_Q6_K}, {WTYPE_Q4_1, WTYPE_Q2_K},
                              {WTYPE_Q5_0, WTYPE_Q3_K}, {WTYPE_Q8_0, WTYPE_Q5_K}};
    for (int i = 0; i < 6; i++) {
        const char *path = test_tmp(files[2 + i]);
        write_micro_model(path, micro[i][0], micro[i][1]);
        model *m = NULL;
        CHECK_MSG(model_open_gguf(&m, path, err) == 0, "%s", err);
        CHECK(m && m->layers[0].w2.type == micro[i][1] && m->layers[0].wq.type == micro[i][0]);
        model_close(m);
    }
    /* one small file of each architecture's features (synth.h), q8_0 / q4_0 with vectors in f32 */
    const char *shapes[][2] = {{"qwen2:32,64,1,2,1,16,32", "q8_0"},
                               {"qwen3:32,64,1,2,1,16,32,32", "Q4_0"},
                               {"llama:32,64,1,4,2,16,32,16", "q8_0"}};
    for (int i = 0; i < 3; i++) {
        synth_shape sh;
        convert_opts o = {.name = "seed"};
        CHECK_MSG(synth_shape_parse(shapes[i][0], &sh, err) == 0 &&
                      convert_scheme_parse(shapes[i][1], &o) == 0,
                  "%s", err);
        if (i == 2) sh.llama3_factor = 8.0f, sh.cfg.rope_theta = 5e5f; /* rope_freqs */
        const char *path = test_tmp(files[8 + i]);
        model *m = NULL;
        CHECK_MSG(synth_write_gguf(path, &sh, &o, NULL, 1, err) == 0 &&
                      model_open_gguf(&m, path, err) == 0,
                  "%s: %s", shapes[i][0], err);
        CHECK(m && (i == 2 ? m->rope_freqs != NULL : m->cfg.rope == ROPE_NEOX));
        model_close(m);
    }
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/seeds", test_tmpdir());
    mkdir(dir, 0755);
    for (int i = 0; i < N_SEEDS; i++) {
        if (i > 0) {
            FILE *f = fopen(test_tmp(files[i - 1]), "rb");
            sizes[i] = f ? fread(seeds[i], 1, SEED_MAX, f) : 0;
            if (f) fclose(f);
        }
        CHECK(sizes[i] < SEED_MAX);
        char name[64];
        snprintf(name, sizeof name, "seeds/seed%d.gguf", i);
        write_file(test_tmp(name), seeds[i], sizes[i]);
    }
    return N_SEEDS;
}

static void test_mutation_corpus(void) {
    static unsigned char seeds[N_SEEDS][SEED_MAX];
    size_t sizes[N_SEEDS];
    size_t nseeds = make_seeds(seeds, sizes);
    for (size_t s = 0; s < nseeds; s++) fuzz_gguf_one(seeds[s], sizes[s]);
    static unsigned char buf[2 * SEED_MAX];
    int runs = 0;
    for (int round = 0; round < 6000; round++) {
        size_t s = (size_t)(next_rand() % nseeds), n = sizes[s];
        memcpy(buf, seeds[s], n);
        int muts = 1 + (int)(next_rand() % 4);
        for (int m = 0; m < muts && n > 0; m++) {
            size_t at = (size_t)(next_rand() % n);
            switch (next_rand() % 7) {
            case 0:
                buf[at] ^= (unsigned char)(1u << (next_rand() % 8));
                break;
            case 1:
                buf[at] = (unsigned char)next_rand();
                break;
            case 2:
                n = at;
                break; /* truncate */
            case 3:    /* an interesting 64-bit value (counts, lengths, dims, offsets) */
                if (at + 8 <= n) {
                    static const uint64_t vals[] = {
                        0,          1,          0xff,       0x7fffffff,      0xffffffffull,
                        1ull << 32, 1ull << 62, UINT64_MAX, UINT64_MAX - 31, 32000};
                    uint64_t v = vals[next_rand() % 10];
                    memcpy(buf + at, &v, 8);
                }
                break;
            case 4: /* a small 32-bit value (types, n_dims) */
                if (at + 4 <= n) {
                    uint32_t v = (uint32_t)(next_rand() % 45);
                    memcpy(buf + at, &v, 4);
                }
                break;
            case 5: /* duplicate a chunk */
                if (n < sizeof buf / 2) {
                    size_t len = (size_t)(next_rand() % 32) % (n - at + 1);
                    memmove(buf + at + len, buf + at, n - at);
                    n += len;
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
        fuzz_gguf_one(buf, n);
        runs++;
    }
    fprintf(stderr, "  %d mutated inputs through fuzz_gguf_one\n", runs);
}

/* ---- Llama models from GGUF -------------------------------------------------------------- */

/* Writes m as a llama GGUF, weights in their stored type (what `decbench convert` does for
 * llama2.c checkpoints): dims columns first, classifier omitted when tied. */
static int write_model_gguf(const struct model *m, const char *path, char *err) {
    const model_config *c = &m->cfg;
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "general.architecture", "llama");
    gguf_writer_add_u32(w, "llama.context_length", (uint32_t)c->seq_len);
    gguf_writer_add_u32(w, "llama.embedding_length", (uint32_t)c->dim);
    gguf_writer_add_u32(w, "llama.block_count", (uint32_t)c->n_layers);
    gguf_writer_add_u32(w, "llama.feed_forward_length", (uint32_t)c->hidden_dim);
    gguf_writer_add_u32(w, "llama.attention.head_count", (uint32_t)c->n_heads);
    gguf_writer_add_u32(w, "llama.attention.head_count_kv", (uint32_t)c->n_kv_heads);
    gguf_writer_add_u32(w, "llama.rope.dimension_count", (uint32_t)c->rope_dim);
    gguf_writer_add_f32(w, "llama.rope.freq_base", c->rope_theta);
    gguf_writer_add_f32(w, "llama.attention.layer_norm_rms_epsilon", c->norm_eps);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)c->bos_id);
    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)c->eos_id);
#define MAT(name, wm)                                                                              \
    gguf_writer_add_tensor(w, name, wtype_get((wm).type)->ggml_type, 2,                            \
                           (uint64_t[]){(uint64_t)(wm).cols, (uint64_t)(wm).rows}, (wm).data,      \
                           wtype_row_bytes((wm).type, (wm).cols) * (uint64_t)(wm).rows)
#define VEC(name, v)                                                                               \
    gguf_writer_add_tensor(w, name, GGUF_TENSOR_F32, 1, (uint64_t[]){(uint64_t)c->dim}, v,         \
                           4 * (uint64_t)c->dim)
    MAT("token_embd.weight", m->tok_embd);
    VEC("output_norm.weight", m->rms_final);
    if (m->wcls.data != m->tok_embd.data) MAT("output.weight", m->wcls);
    char name[64];
    for (int l = 0; l < c->n_layers; l++) {
        const model_layer *y = &m->layers[l];
        const char *sfx[] = {"attn_q",   "attn_k",   "attn_v", "attn_output",
                             "ffn_gate", "ffn_down", "ffn_up"};
        const wmat *mats[] = {&y->wq, &y->wk, &y->wv, &y->wo, &y->w1, &y->w2, &y->w3};
        for (int i = 0; i < 7; i++) {
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, sfx[i]);
            MAT(name, *mats[i]);
        }
        snprintf(name, sizeof name, "blk.%d.attn_norm.weight", l);
        VEC(name, y->rms_att);
        snprintf(name, sizeof name, "blk.%d.ffn_norm.weight", l);
        VEC(name, y->rms_ffn);
    }
#undef MAT
#undef VEC
    int rc = gguf_writer_write(w, path, err);
    gguf_writer_free(w);
    return rc;
}

static int same_wmat(const wmat *a, const wmat *b) {
    return a->type == b->type && a->rows == b->rows && a->cols == b->cols &&
           memcmp(a->data, b->data, wtype_row_bytes(a->type, a->cols) * (size_t)a->rows) == 0;
}

/* stories260K.bin converted to GGUF: same config, same weight bytes, bit-identical logits. */
static void test_model_from_llama2c(void) {
    char err[ERR_LEN];
    model *a = NULL, *b = NULL;
    CHECK_MSG(model_open_llama2c(&a, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!a) return;
    const char *path = test_tmp("stories260K.gguf");
    CHECK_MSG(write_model_gguf(a, path, err) == 0, "%s", err);
    CHECK_MSG(model_open_gguf(&b, path, err) == 0, "%s", err);
    if (!b) {
        model_close(a);
        return;
    }
    model_config ca = a->cfg, cb = b->cfg;
    CHECK(cb.end_id == cb.eos_id); /* GGUF models end on EOS; llama2.c ones on BOS */
    ca.end_id = cb.end_id = 0;
    CHECK(memcmp(&ca, &cb, sizeof ca) == 0);
    CHECK(strcmp(b->format, "gguf") == 0 && b->main_type == WTYPE_F32);
    CHECK(same_wmat(&a->tok_embd, &b->tok_embd) && same_wmat(&a->wcls, &b->wcls));
    CHECK((a->wcls.data == a->tok_embd.data) == (b->wcls.data == b->tok_embd.data));
    CHECK(memcmp(a->rms_final, b->rms_final, 4 * (size_t)ca.dim) == 0);
    for (int l = 0; l < ca.n_layers; l++) {
        const model_layer *x = &a->layers[l], *y = &b->layers[l];
        CHECK(same_wmat(&x->wq, &y->wq) && same_wmat(&x->wk, &y->wk) && same_wmat(&x->wv, &y->wv));
        CHECK(same_wmat(&x->wo, &y->wo) && same_wmat(&x->w1, &y->w1));
        CHECK(same_wmat(&x->w2, &y->w2) && same_wmat(&x->w3, &y->w3));
        CHECK(memcmp(x->rms_att, y->rms_att, 4 * (size_t)ca.dim) == 0);
        CHECK(memcmp(x->rms_ffn, y->rms_ffn, 4 * (size_t)ca.dim) == 0);
    }
    CHECK(model_weight_bytes(a) == model_weight_bytes(b));
    /* model_open dispatches on the magic once the model owner wires it in; meanwhile the
     * direct loader is what is tested. Logits must agree bit for bit. */
    fwd_ctx *fa = NULL, *fb = NULL;
    const int toks[] = {1, 403, 407, 261, 378};
    float *la = malloc(sizeof(float) * (size_t)ca.vocab_size);
    float *lb = malloc(sizeof(float) * (size_t)ca.vocab_size);
    CHECK_MSG(fwd_new(&fa, a, NULL, 8, KERN_EXACT, err) == 0, "%s", err);
    CHECK_MSG(fwd_new(&fb, b, NULL, 8, KERN_EXACT, err) == 0, "%s", err);
    if (fa && fb) {
        CHECK(fwd_prefill(fa, toks, 5, la, err) == 0 && fwd_prefill(fb, toks, 5, lb, err) == 0);
        CHECK(memcmp(la, lb, sizeof(float) * (size_t)ca.vocab_size) == 0);
    }
    fwd_free(fa);
    fwd_free(fb);
    free(la);
    free(lb);
    model_close(a);
    model_close(b);
}

/* A tiny synthetic llama GGUF with one thing changed per case. */
typedef struct {
    const char *arch, *drop_key, *extra_tensor, *rope_scaling;
    uint32_t mat_type, norm_type;
    int k_rows, tied;
    uint32_t experts, kv_heads, n_tokens;
    /* float keys written when set: eps (else 1e-5), rope.freq_base, rope.scaling.factor, its
     * old name rope.scale_linear, rope.scaling.attn_factor */
    const float *eps, *freq_base, *factor, *scale_linear, *attn_factor;
    float qk_scale; /* attn_q and attn_k weights times this (0: as the others) */
} tiny_opts;

enum { T_DIM = 64, T_HID = 96, T_LAYERS = 2, T_HEADS = 4, T_KV = 2, T_VOCAB = 40 };

static void write_tiny(const char *path, tiny_opts o) {
    static unsigned char data[T_HID * T_DIM * 4], qk[T_HID * T_DIM * 4];
    for (size_t i = 0; i < sizeof data; i += 4) {
        float f = (float)((i / 4) % 17) * 0.01f, g = f * (o.qk_scale ? o.qk_scale : 1.0f);
        memcpy(data + i, &f, 4);
        memcpy(qk + i, &g, 4);
    }
    const char *keys[] = {"llama.context_length",       "llama.embedding_length",
                          "llama.block_count",          "llama.feed_forward_length",
                          "llama.attention.head_count", "llama.attention.head_count_kv"};
    const uint32_t vals[] = {128, T_DIM, T_LAYERS, T_HID, T_HEADS, o.kv_heads ? o.kv_heads : T_KV};
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "general.architecture", o.arch ? o.arch : "llama");
    for (int i = 0; i < 6; i++)
        if (!o.drop_key || strcmp(o.drop_key, keys[i])) gguf_writer_add_u32(w, keys[i], vals[i]);
    if (!o.drop_key || strcmp(o.drop_key, "eps"))
        gguf_writer_add_f32(w, "llama.attention.layer_norm_rms_epsilon", o.eps ? *o.eps : 1e-5f);
    if (o.freq_base) gguf_writer_add_f32(w, "llama.rope.freq_base", *o.freq_base);
    if (o.rope_scaling) gguf_writer_add_str(w, "llama.rope.scaling.type", o.rope_scaling);
    if (o.factor) gguf_writer_add_f32(w, "llama.rope.scaling.factor", *o.factor);
    if (o.scale_linear) gguf_writer_add_f32(w, "llama.rope.scale_linear", *o.scale_linear);
    if (o.attn_factor) gguf_writer_add_f32(w, "llama.rope.scaling.attn_factor", *o.attn_factor);
    if (o.experts) gguf_writer_add_u32(w, "llama.expert_count", o.experts);
    if (o.n_tokens) {
        const char *toks[T_VOCAB + 1];
        for (int i = 0; i <= T_VOCAB; i++) toks[i] = "t";
        gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, toks, NULL, o.n_tokens);
    }
    uint64_t be, bb;
    gguf_type_block(o.mat_type, &be, &bb);
    const unsigned char *src = data;
#define T(name, type, rows, cols)                                                                  \
    do {                                                                                           \
        uint64_t bytes = (uint64_t)(cols) / be * bb * (uint64_t)(rows);                            \
        if ((type) == o.norm_type && (rows) == 1)                                                  \
            bytes = (uint64_t)(cols) * (o.norm_type ? 2 : 4);                                      \
        gguf_writer_add_tensor(w, name, type, (rows) == 1 ? 1 : 2,                                 \
                               (uint64_t[]){(uint64_t)(cols), (uint64_t)(rows)}, src, bytes);      \
    } while (0)
    T("token_embd.weight", o.mat_type, T_VOCAB, T_DIM);
    T("output_norm.weight", o.norm_type, 1, T_DIM);
    if (!o.tied) T("output.weight", o.mat_type, T_VOCAB, T_DIM);
    char n[64];
    int kv = T_DIM / T_HEADS * T_KV;
    for (int l = 0; l < T_LAYERS; l++) {
#define L(sfx, rows, cols)                                                                         \
    snprintf(n, sizeof n, "blk.%d." sfx ".weight", l);                                             \
    T(n, o.mat_type, rows, cols)
        src = qk; /* Q and K scaled by qk_scale, the rest as before */
        L("attn_q", T_DIM, T_DIM);
        L("attn_k", o.k_rows ? o.k_rows : kv, T_DIM);
        src = data;
        L("attn_v", kv, T_DIM);
        L("attn_output", T_DIM, T_DIM);
        L("ffn_gate", T_HID, T_DIM);
        L("ffn_down", T_DIM, T_HID);
        L("ffn_up", T_HID, T_DIM);
        snprintf(n, sizeof n, "blk.%d.attn_norm.weight", l);
        T(n, o.norm_type, 1, T_DIM);
        snprintf(n, sizeof n, "blk.%d.ffn_norm.weight", l);
        T(n, o.norm_type, 1, T_DIM);
#undef L
    }
    if (o.extra_tensor) T(o.extra_tensor, GGUF_TENSOR_F32, 1, T_DIM);
#undef T
    char err[ERR_LEN];
    CHECK_MSG(gguf_writer_write(w, path, err) == 0, "%s", err);
    gguf_writer_free(w);
}

static void expect_model_error(tiny_opts o, const char *needle) {
    const char *p = test_tmp("tiny.gguf");
    write_tiny(p, o);
    char err[ERR_LEN] = "";
    model *m = NULL;
    int rc = model_open_gguf(&m, p, err);
    CHECK_MSG(rc == -1 && m == NULL, "tiny model opened (expected '%s')", needle);
    CHECK_MSG(strstr(err, p) && strstr(err, needle) && !strchr(err, '\n'),
              "message '%s' lacks '%s'", err, needle);
    model_close(m);
}

static void test_model_tiny(void) {
    const char *p = test_tmp("tiny.gguf");
    /* every type whose block divides the tiny widths (64, 96): the k-quants' 256 do not */
    const uint32_t types[] = {GGUF_TENSOR_F32, GGUF_TENSOR_F16, GGUF_TENSOR_BF16, GGUF_TENSOR_Q8_0,
                              2 /* Q4_0 */,    3 /* Q4_1 */,    6 /* Q5_0 */,     7 /* Q5_1 */};
    const wtype wt[] = {WTYPE_F32,  WTYPE_F16,  WTYPE_BF16, WTYPE_Q8_0,
                        WTYPE_Q4_0, WTYPE_Q4_1, WTYPE_Q5_0, WTYPE_Q5_1};
    for (int i = 0; i < 8; i++) {
        write_tiny(p,
                   (tiny_opts){.mat_type = types[i], .tied = i % 2, .n_tokens = i ? 0 : T_VOCAB});
        char err[ERR_LEN];
        model *m = NULL;
        CHECK_MSG(model_open_gguf(&m, p, err) == 0, "%s", err);
        if (!m) continue;
        const model_config *c = &m->cfg;
        CHECK(c->dim == T_DIM && c->hidden_dim == T_HID && c->n_layers == T_LAYERS);
        CHECK(c->n_heads == T_HEADS && c->n_kv_heads == T_KV && c->vocab_size == T_VOCAB);
        CHECK(c->seq_len == 128 && c->head_size == 16 && c->kv_dim == 32 && c->rope_dim == 16);
        CHECK(c->rope_theta == 10000.0f && c->norm_eps == 1e-5f);
        CHECK(c->bos_id == 1 && c->eos_id == 2 && c->end_id == 2);
        CHECK(m->main_type == wt[i] && m->layers[1].w2.type == wt[i]);
        CHECK(m->layers[1].w2.rows == T_DIM && m->layers[1].w2.cols == T_HID);
        CHECK(m->layers[0].wk.rows == 32 && m->layers[0].wk.cols == T_DIM);
        CHECK((m->wcls.data == m->tok_embd.data) == (i % 2));
        model_close(m);
    }
    expect_model_error((tiny_opts){.arch = "gpt2"}, "architecture 'gpt2' is not supported");
    expect_model_error((tiny_opts){.drop_key = "llama.feed_forward_length"},
                       "key 'llama.feed_forward_length' is missing");
    expect_model_error((tiny_opts){.drop_key = "eps"},
                       "key 'llama.attention.layer_norm_rms_epsilon' is missing");
    expect_model_error((tiny_opts){.k_rows = 48},
                       "tensor 'blk.0.attn_k.weight' has ne = [64, 48, 1, 1], expected [64, 32]");
    expect_model_error((tiny_opts){.norm_type = GGUF_TENSOR_F16},
                       "'output_norm.weight' is F16; norm weights, biases and RoPE factors must be "
                       "F32");
    /* Q4_0 loads; block types ggml has and decbench does not read are named */
    expect_model_error((tiny_opts){.mat_type = 20 /* IQ4_NL */},
                       "'token_embd.weight' has type IQ4_NL, which is not supported (F32, F16, "
                       "BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)");
    expect_model_error((tiny_opts){.mat_type = 9 /* Q8_1 */},
                       "'token_embd.weight' has type Q8_1, which is not supported");
    /* Llama 3.1's RoPE factors load (rope_dim / 2 of them); biases llama.cpp does not load do not
     */
    expect_model_error((tiny_opts){.extra_tensor = "rope_freqs.weight"},
                       "tensor 'rope_freqs.weight' has ne = [64, 1, 1, 1], expected [8, 1]");
    expect_model_error((tiny_opts){.extra_tensor = "blk.0.attn_output.bias"},
                       "tensor 'blk.0.attn_output.bias' is not part of a plain Llama model");
    expect_model_error((tiny_opts){.rope_scaling = "yarn"},
                       "llama.rope.scaling.type = 'yarn' is not supported (only none and linear");
    expect_model_error((tiny_opts){.experts = 8}, "mixture-of-experts");
    expect_model_error((tiny_opts){.n_tokens = T_VOCAB + 1},
                       "tokenizer.ggml.tokens has 41 tokens but token_embd.weight has 40 rows");
    /* Found by fuzz_gguf: kv_dim overflowed int before the config check bounded n_kv_heads. */
    expect_model_error((tiny_opts){.kv_heads = 134217729}, "n_kv_heads = 134217729");
    expect_model_error((tiny_opts){.kv_heads = 3}, "n_heads 4 is not divisible by n_kv_heads 3");
    /* A vocabulary-only file has the keys but no weights. */
    char err[ERR_LEN];
    model *m = NULL;
    CHECK(model_open_gguf(&m, test_shared("tokenizer-vectors/ggml-vocab-llama-spm.gguf"), err) ==
              -1 &&
          strstr(err, "tensor 'token_embd.weight' is missing"));
    CHECK(model_open_gguf(&m, test_tmp("missing.gguf"), err) == -1 && strstr(err, "cannot open"));
}

/* Every float hyper-parameter must be a finite number in its range: NaN and infinity passed the
 * "must be positive" checks (eps = +inf scaled every RMSNorm by 0, freq_base = +inf made every
 * RoPE angle but the first pair's 0), and the output looked like text. The RoPE scaling keys
 * are read as llama.cpp reads them: the type linear when absent, the factor under its old name
 * too, the attention factor refused unless 1; a factor under type none is ignored, as
 * llama.cpp ignores it (even NaN: it computes). */
/* rope.scaling.attn_factor loads (llama.cpp runs such files) and multiplies RoPE's cos and sin,
 * as ggml's rope does: a rotation is linear, so a model with factor 2 computes exactly what the
 * same model with its attn_q and attn_k weights doubled computes (doubling is exact in float),
 * bit for bit; and not what factor 1 computes. */
static void test_rope_attn_factor(void) {
    char err[ERR_LEN];
    const float two = 2.0f;
    const char *paths[3] = {test_tmp("attn2.gguf"), test_tmp("qk2.gguf"), test_tmp("plain.gguf")};
    write_tiny(paths[0], (tiny_opts){.attn_factor = &two});
    write_tiny(paths[1], (tiny_opts){.qk_scale = 2.0f});
    write_tiny(paths[2], (tiny_opts){0});
    float logits[3][T_VOCAB];
    const int toks[] = {1, 7, 30, 12, 5, 22};
    for (int k = 0; k < 3; k++) {
        model *m = NULL;
        fwd_ctx *f = NULL;
        CHECK_MSG(model_open_gguf(&m, paths[k], err) == 0, "%s", err);
        if (m) CHECK_MSG(fwd_new(&f, m, NULL, 8, KERN_EXACT, err) == 0, "%s", err);
        CHECK_MSG(f && fwd_prefill(f, toks, 6, logits[k], err) == 0, "%s", err);
        CHECK(!m || m->cfg.rope_attn_factor == (k == 0 ? 2.0f : 1.0f));
        fwd_free(f);
        model_close(m);
    }
    CHECK_MSG(memcmp(logits[0], logits[1], sizeof logits[0]) == 0,
              "attn_factor 2 differs from doubled Q and K weights");
    CHECK_MSG(memcmp(logits[0], logits[2], sizeof logits[0]) != 0,
              "attn_factor 2 computes what factor 1 does");
}

static void test_model_float_keys(void) {
    const float nan = NAN, inf = INFINITY, ninf = -INFINITY, zero = 0.0f, four = 4.0f, two = 2.0f,
                one = 1.0f;
    expect_model_error((tiny_opts){.eps = &inf},
                       "llama.attention.layer_norm_rms_epsilon = inf, expected a positive finite "
                       "number");
    expect_model_error((tiny_opts){.eps = &nan},
                       "llama.attention.layer_norm_rms_epsilon = nan, expected a positive");
    expect_model_error((tiny_opts){.eps = &zero},
                       "llama.attention.layer_norm_rms_epsilon = 0, expected a positive");
    expect_model_error((tiny_opts){.freq_base = &inf},
                       "llama.rope.freq_base = inf, expected a positive finite number");
    expect_model_error((tiny_opts){.freq_base = &nan}, "llama.rope.freq_base = nan, expected");
    expect_model_error((tiny_opts){.freq_base = &ninf}, "llama.rope.freq_base = -inf, expected");
    expect_model_error((tiny_opts){.rope_scaling = "linear", .factor = &nan},
                       "llama.rope.scaling.factor = nan is out of range");
    expect_model_error((tiny_opts){.rope_scaling = "linear", .factor = &inf},
                       "llama.rope.scaling.factor = inf is out of range");
    expect_model_error((tiny_opts){.factor = &inf},
                       "llama.rope.scaling.factor = inf is out of range");
    expect_model_error((tiny_opts){.scale_linear = &nan},
                       "llama.rope.scale_linear = nan is out of range");
    expect_model_error((tiny_opts){.attn_factor = &nan, .rope_scaling = "none"},
                       "llama.rope.scaling.attn_factor = nan, expected a positive finite number");
    expect_model_error((tiny_opts){.attn_factor = &inf},
                       "llama.rope.scaling.attn_factor = inf, expected a positive finite number");
    /* what loads, and the factor it runs with */
    const struct {
        tiny_opts o;
        float factor;
    } ok[] = {{{.factor = &four}, 4.0f}, /* no type: linear, as llama.cpp */
              {{.scale_linear = &four}, 4.0f},
              {{.factor = &two, .scale_linear = &four}, 2.0f}, /* the new name first */
              {{.rope_scaling = "none", .factor = &four}, 1.0f},
              {{.rope_scaling = "none", .factor = &nan}, 1.0f},
              {{.factor = &zero}, 1.0f},
              {{.attn_factor = &one, .freq_base = &four}, 1.0f}};
    /* the configuration check every reader ends with (a llama2.c file has no float fields:
     * model_config_derive fills them) refuses them too */
    char err[ERR_LEN];
    const float bad[3] = {NAN, INFINITY, 0.0f};
    for (int f = 0; f < 3; f++)
        for (int b = 0; b < 3; b++) {
            model_config c;
            CHECK(synth_config("64,128,2,4,2,512,128", &c, err) == 0);
            float *v = f == 0 ? &c.rope_theta : f == 1 ? &c.rope_factor : &c.norm_eps;
            *v = bad[b];
            const char *name = f == 0 ? "rope_theta" : f == 1 ? "rope_factor" : "norm_eps";
            char want[96];
            snprintf(want, sizeof want, "cfg: %s = %g, expected a positive finite number", name,
                     (double)bad[b]);
            CHECK_MSG(model_config_check(&c, "cfg", err) == -1 && strcmp(err, want) == 0,
                      "'%s' is not '%s'", err, want);
        }
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *p = test_tmp("tiny.gguf");
        write_tiny(p, ok[i].o);
        model *m = NULL;
        CHECK_MSG(model_open_gguf(&m, p, err) == 0, "case %zu: %s", i, err);
        CHECK_MSG(m && m->cfg.rope_factor == ok[i].factor, "case %zu: factor %g", i,
                  m ? (double)m->cfg.rope_factor : 0.0);
        model_close(m);
    }
    test_rope_attn_factor();
}

/* Overwrites the 2 bytes at `at` of tensor `name`'s data in the GGUF file at path. */
static void poke_tensor(const char *path, const char *name, size_t at, uint16_t v) {
    gguf *g = open_ok(path);
    const gguf_tensor *t = g ? gguf_find_tensor(g, name) : NULL;
    size_t size;
    const unsigned char *base = g ? gguf_mapping(g, &size) : NULL;
    long off = t ? (long)((const unsigned char *)t->data - base + at) : -1;
    gguf_close(g);
    FILE *f = fopen(path, "r+b");
    CHECK_MSG(f && off >= 0 && fseek(f, off, SEEK_SET) == 0 && fwrite(&v, 2, 1, f) == 1,
              "%s: cannot patch %s", path, name);
    if (f) fclose(f);
}

/* A block scale (d, m, dmin) that is NaN or infinite is refused at load naming the tensor, the
 * block and the scale, as llama.cpp's --check-tensors refuses it (ggml_validate_row_data's rules
 * per type): before, the file loaded and the int8 mode decoded token 0 forever. Float weights
 * load (reading them all costs a second per GB); a NaN among them fails the first pass that uses
 * it, naming the tensor. */
static void test_model_bad_scales(void) {
    const struct {
        const char *type, *tensor;
        int block;
        size_t at;      /* byte of the block */
        uint16_t value; /* f16 */
        const char *want;
    } cases[] = {
        {"q8_0", "blk.0.attn_v.weight", 5, 0, 0x7e00,
         "tensor 'blk.0.attn_v.weight' (q8_0): block 5 (row 2, columns 32..63) has scale d = "
         "NaN; the file is corrupt"},
        {"q8_0", "token_embd.weight", 9, 0, 0xfc00,
         "tensor 'token_embd.weight' (q8_0): block 9 (row 4, columns 32..63) has scale d = -inf"},
        {"q4_0", "blk.0.ffn_down.weight", 18, 0, 0x7c00,
         "tensor 'blk.0.ffn_down.weight' (q4_0): block 18 (row 1, columns 32..63) has scale d = "
         "+inf"},
        {"q4_k", "blk.0.attn_q.weight", 1, 2, 0x7e01,
         "tensor 'blk.0.attn_q.weight' (q4_k): block 1 (row 1, columns 0..255) has scale dmin = "
         "NaN"},
        {"q6_k", "output.weight", 3, 208, 0x7c00,
         "tensor 'output.weight' (q6_k): block 3 (row 3, columns 0..255) has scale d = +inf"},
    };
    char err[ERR_LEN];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        synth_shape sh;
        convert_opts o = {.name = "t"};
        const char *p = test_tmp("scales.gguf");
        int k = strcmp(cases[i].type, "q4_k") == 0 || strcmp(cases[i].type, "q6_k") == 0;
        CHECK(synth_shape_parse(k ? "256,512,1,4,2,64,32" : "64,544,1,4,2,64,32", &sh, err) == 0 &&
              convert_scheme_parse(cases[i].type, &o) == 0);
        sh.cfg.shared_classifier = 0;
        CHECK_MSG(synth_write_gguf(p, &sh, &o, NULL, 1, err) == 0, "%s", err);
        wtype t;
        CHECK(wtype_parse(cases[i].type, &t) == 0);
        poke_tensor(p, cases[i].tensor,
                    (size_t)cases[i].block * wtype_get(t)->block_bytes + cases[i].at,
                    cases[i].value);
        model *m = NULL;
        CHECK_MSG(model_open(&m, p, err) == -1 && strstr(err, cases[i].want) && strstr(err, p),
                  "%s: '%s' lacks '%s'", cases[i].type, err, cases[i].want);
        model_close(m);
    }
    /* an infinite RoPE factor (Llama 3.1+): its pair's angles would be 0 at every position,
     * finite and wrong, so the logits check would never see it */
    {
        synth_shape sh;
        convert_opts o = {.name = "t"};
        const char *p = test_tmp("scales.gguf");
        CHECK(synth_shape_parse("tiny-llama3", &sh, err) == 0 &&
              convert_scheme_parse("q8_0", &o) == 0);
        CHECK_MSG(synth_write_gguf(p, &sh, &o, NULL, 1, err) == 0, "%s", err);
        poke_tensor(p, "rope_freqs.weight", 4 * 2, 0x0000);
        poke_tensor(p, "rope_freqs.weight", 4 * 2 + 2, 0x7f80);
        model *m = NULL;
        const char *want = "tensor 'rope_freqs.weight' (f32): value 2 is +inf; the file is corrupt";
        CHECK_MSG(model_open(&m, p, err) == -1 && strstr(err, want), "'%s' lacks '%s'", err, want);
        model_close(m);
    }
    /* an f16 weight NaN: loads; its first pass is refused naming it */
    synth_shape sh;
    convert_opts o = {.name = "t"};
    const char *p = test_tmp("scales.gguf");
    CHECK(synth_shape_parse("64,128,1,4,2,64,32", &sh, err) == 0 &&
          convert_scheme_parse("f16", &o) == 0);
    CHECK_MSG(synth_write_gguf(p, &sh, &o, NULL, 1, err) == 0, "%s", err);
    poke_tensor(p, "blk.0.attn_k.weight", 2 * (64 * 3 + 5), 0x7e00);
    model *m = NULL;
    CHECK_MSG(model_open(&m, p, err) == 0, "%s", err);
    fwd_ctx *f = NULL;
    if (m) CHECK_MSG(fwd_new(&f, m, NULL, 1, KERN_AUTO, err) == 0, "%s", err);
    float logits[64];
    int tok = 1;
    CHECK_MSG(f && fwd_eval(f, 1, &tok, NULL, NULL, NULL, 1, logits, err) == -1 &&
                  strstr(err, "non-finite logits at position 0") &&
                  strstr(err, "(tensor 'blk.0.attn_k.weight' (f16): row 3, column 5 is NaN)"),
              "%s", err);
    fwd_free(f);
    model_close(m);
}

/* The architecture table formats llama.cpp's keys and names; every tensor of a loaded model is
 * bound where the table says. */
static void test_arch_table(void) {
    char k[ARCH_KEY_LEN], name[64];
    const model_arch *a = arch_find("llama");
    CHECK(a && a == arch_default() && arch_find("gpt2") == NULL && arch_find(NULL) == NULL);
    CHECK(strcmp(arch_key(a, ARCH_KV_CONTEXT_LENGTH, k), "llama.context_length") == 0);
    CHECK(strcmp(arch_key(a, ARCH_KV_RMS_EPS, k), "llama.attention.layer_norm_rms_epsilon") == 0);
    arch_tensor_name(ARCH_T_FFN_DOWN, 11, name, sizeof name);
    CHECK(strcmp(name, "blk.11.ffn_down.weight") == 0);
    arch_tensor_name(ARCH_T_OUTPUT, 11, name, sizeof name);
    CHECK(strcmp(name, "output.weight") == 0);
    char names[64];
    arch_names(names, sizeof names);
    CHECK(strstr(names, "'llama'") != NULL);
    char err[ERR_LEN];
    model *m = NULL;
    CHECK_MSG(model_open(&m, test_shared("models/quantized/xs_Q8_0.gguf"), err) == 0, "%s", err);
    if (!m) return;
    CHECK(m->arch == a);
    for (int l = 0; l < m->cfg.n_layers; l++) {
        CHECK(arch_matrix(m, ARCH_T_ATTN_K, l) == &m->layers[l].wk);
        CHECK(*arch_vector(m, ARCH_T_FFN_NORM, l) == m->layers[l].rms_ffn);
        CHECK(arch_vector(m, ARCH_T_ATTN_K, l) == NULL &&
              arch_matrix(m, ARCH_T_FFN_NORM, l) == NULL);
    }
    CHECK(arch_matrix(m, ARCH_T_OUTPUT, 0) == &m->wcls &&
          *arch_vector(m, ARCH_T_OUTPUT_NORM, 0) == m->rms_final);
    model_close(m);
}

/* llama.cpp's quantized files cut short: the tensor whose blocks run past the end is named. */
static void test_truncated_blocks(void) {
    const char *files[] = {"models/quantized/kq_Q4_K_M.gguf", "models/quantized/kq_Q2_K.gguf",
                           "models/quantized/xs_Q5_1.gguf"};
    for (int f = 0; f < 3; f++) {
        FILE *in = fopen(test_shared(files[f]), "rb");
        CHECK(in != NULL);
        if (!in) continue;
        fseek(in, 0, SEEK_END);
        long n = ftell(in);
        unsigned char *b = malloc((size_t)n);
        fseek(in, 0, SEEK_SET);
        CHECK(fread(b, 1, (size_t)n, in) == (size_t)n);
        fclose(in);
        char err[ERR_LEN];
        gguf *g = NULL;
        CHECK_MSG(gguf_open(&g, test_shared(files[f]), err) == 0, "%s", err);
        const gguf_tensor *last = g ? gguf_tensor_at(g, gguf_tensor_count(g) - 1) : NULL;
        for (long cut = 1; last && cut <= (long)last->nbytes + 1; cut += cut < 300 ? 37 : 977) {
            char needle[128];
            snprintf(needle, sizeof needle, "('%s'): data", last->name);
            expect_bytes_error(b, (size_t)(n - cut), needle);
        }
        gguf_close(g);
        free(b);
    }
}

int main(void) {
    test_arch_table();
    test_truncated_blocks();
    test_vocab_file();
    test_type_table();
    test_writer_round_trip(0);
    test_writer_round_trip(64);
    test_writer_round_trip(4096);
    test_writer_errors();
    test_open_errors();
    test_truncations();
    test_corruptions();
    test_ggml_leniency();
    test_mutation_corpus();
    test_model_from_llama2c();
    test_model_tiny();
    test_model_float_keys();
    test_model_bad_scales();
    return test_finish("test_gguf");
}
