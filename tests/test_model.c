/* test_model.c: model files. The version-1 ("ak42") layout of stories260K (written here from
 * the legacy file by reordering its arrays) loads and gives bit-identical logits; a synthetic
 * model written to a file equals the same one built in memory; bad files (truncated,
 * inconsistent header, wrong version, directory, FIFO, empty) give one-line errors naming the
 * file; every header field set to INT_MIN, INT_MAX, 0 or -1 is refused naming the field, with no
 * undefined behaviour (run under UBSan); synth_write refuses a runaway size before creating
 * anything and never leaves a partial file at its path. Ends by
 * replaying a seeded corpus of mutations through fuzz_llama2c_one (the libFuzzer entry of
 * tests/fuzz_llama2c.c), and writes the seed files the fuzzer starts from (15.12). */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/loader/model_file.h"
#include "model/forward.h"
#include "model/formats/llama2c.h"
#include "model/convert/synth.h"
#include "tests/fuzz_llama2c.c"
#include "tests/testutil.h"
#include "util/err.h"

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, n, f) == n);
    if (f) fclose(f);
}

/* Appends an array of n floats. */
static unsigned char *put(unsigned char *p, const float *src, size_t n) {
    memcpy(p, src, n * sizeof(float));
    return p + n * sizeof(float);
}

static size_t write_v1(const model *m, const char *path) {
    const model_config *c = &m->cfg;
    size_t L = (size_t)c->n_layers, d = (size_t)c->dim, kv = (size_t)c->kv_dim, h = (size_t)c->hidden_dim;
    size_t floats = 2 * L * d + d + (size_t)c->vocab_size * d + L * (2 * d * d + 2 * kv * d + 3 * h * d);
    size_t size = 256 + floats * sizeof(float);
    unsigned char *img = calloc(1, size), *p = img + 256;
    uint32_t magic = 0x616b3432;
    int32_t version = 1, hdr[7] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len};
    memcpy(img, &magic, 4), memcpy(img + 4, &version, 4), memcpy(img + 8, hdr, 28);
    img[36] = 1; /* shared classifier */
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].rms_att, d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].rms_ffn, d);
    p = put(p, m->rms_final, d);
    p = put(p, m->tok_embd.data, (size_t)c->vocab_size * d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].wq.data, d * d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].wk.data, kv * d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].wv.data, kv * d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].wo.data, d * d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].w1.data, h * d);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].w2.data, d * h);
    for (size_t l = 0; l < L; l++) p = put(p, m->layers[l].w3.data, h * d);
    CHECK((size_t)(p - img) == size);
    write_file(path, img, size);
    free(img);
    return size;
}

/* Logits of a short fixed sequence, for comparing two models. */
static float *logits_of(const model *m) {
    char err[ERR_LEN];
    fwd_ctx *f;
    float *out = malloc(sizeof(float) * 4 * m->cfg.vocab_size);
    int tokens[4] = {1, 20, 300 % m->cfg.vocab_size, 7};
    CHECK(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0);
    CHECK(fwd_eval(f, 4, tokens, NULL, NULL, NULL, 4, out, err) == 0);
    fwd_free(f);
    return out;
}

static void expect_error(const char *path, const char *needle) {
    char err[ERR_LEN] = "";
    model *m = NULL;
    CHECK_MSG(model_open(&m, path, err) == -1, "%s opened", path);
    CHECK_MSG(strstr(err, needle) != NULL, "error '%s' lacks '%s'", err, needle);
    CHECK_MSG(strstr(err, path) != NULL, "error '%s' does not name the file", err);
    CHECK(strchr(err, '\n') == NULL);
    model_close(m);
}

/* Each of the 7 legacy header fields (and the same fields of a version-1 header) set to a
 * hostile value: refused, naming the field and the value. Before the fix UBSan stopped at
 * n_kv_heads * head_size (field 4 = INT_MIN/INT_MAX) and at -vocab_size (field 5 = INT_MIN). */
static void test_hostile_headers(void) {
    static const char *const names[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                         "n_kv_heads", "vocab_size", "seq_len"};
    static const int32_t values[] = {INT32_MIN, INT32_MIN + 1, -1, 0, INT32_MAX};
    const int32_t good[7] = {64, 172, 5, 8, 4, 512, 512};
    char want[128];
    for (int field = 0; field < 7; field++) {
        for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
            int32_t v = values[k];
            if (field == 5 && v == -1) continue; /* -1: vocabulary 1, separate classifier */
            int32_t h[7];
            memcpy(h, good, sizeof h);
            h[field] = v;
            /* legacy: the header and a few weights */
            float body[64] = {0};
            unsigned char img[28 + sizeof body];
            memcpy(img, h, 28), memcpy(img + 28, body, sizeof body);
            write_file(test_tmp("hostile.bin"), img, sizeof img);
            int32_t shown = field == 5 && v < 0 && v != INT32_MIN ? -v : v;
            snprintf(want, sizeof want, "header field %s = %d, expected 1..", names[field], shown);
            expect_error(test_tmp("hostile.bin"), want);
            /* version 1: magic, version, the same 7 fields, shared flag */
            unsigned char v1[256 + sizeof body] = {0};
            uint32_t magic = 0x616b3432;
            int32_t version = 1;
            memcpy(v1, &magic, 4), memcpy(v1 + 4, &version, 4), memcpy(v1 + 8, h, 28);
            v1[36] = 1;
            write_file(test_tmp("hostile_v1.bin"), v1, sizeof v1);
            snprintf(want, sizeof want, "header field %s = %d, expected", names[field], v);
            expect_error(test_tmp("hostile_v1.bin"), want);
        }
    }
    /* a header whose fields are each in range but whose arrays are huge: the 64-bit size is
     * reported, no allocation or mapping past the file is attempted */
    int32_t big[7] = {1 << 16, 1 << 20, 1024, 1024, 1024, 1 << 22, 1 << 20};
    write_file(test_tmp("big.bin"), big, sizeof big);
    expect_error(test_tmp("big.bin"), "implies 915893991505948");
}

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Runs synth_write with the file size limit at `limit` bytes and SIGXFSZ ignored, so that a
 * write past it fails (EFBIG) instead of growing the file: the test can never fill the disk. */
static int synth_write_limited(const char *path, const model_config *c, rlim_t limit, char *err) {
    struct rlimit old, small;
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = limit;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    int rc = synth_write(path, c, 1, err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    return rc;
}

/* synth_write: a runaway size is refused before anything is created; a write that fails
 * half-way (file size limit: EFBIG) removes its .tmp and leaves the old file at the path. */
static void test_synth_limits(void) {
    char err[ERR_LEN];
    model_config c;
    const char *path = test_tmp("runaway.bin"), *tmp = test_tmp("runaway.bin.tmp");
    unlink(path), unlink(tmp);
    CHECK(synth_config("65536,1048576,1024,1024,1024,4194304,1048576", &c, err) == 0);
    CHECK(synth_write_limited(path, &c, 1 << 20, err) == -1);
    CHECK_MSG(strstr(err, "915.9 TB file (915893991505948 bytes), over the 512.0 GB limit"), "%s",
              err);
    CHECK(!exists(path) && !exists(tmp));
    /* wrapped or saturated numbers are refused, naming the field and its range */
    CHECK(synth_config("4294967360,172,5,8,4,512,512", &c, err) == -1);
    CHECK_MSG(strstr(err, "dim: 4294967360 is out of range 1..65536"), "%s", err);
    CHECK(synth_config("64,172,5,8,4,512,99999999999999999999", &c, err) == -1);
    CHECK_MSG(strstr(err, "seq: 99999999999999999999 is out of range 1..1048576"), "%s", err);
    CHECK(synth_config("64,172,5,8,4,512,", &c, err) == -1 && strstr(err, "expected a preset"));
    CHECK(synth_config("64,172,5,8,4,512,512,8,1", &c, err) == -1 &&
          strstr(err, "expected a preset"));
    CHECK(synth_config("64,172,5,8,x,512,512", &c, err) == -1 && strstr(err, "kv_heads: 'x'"));

    FILE *f = fopen(path, "wb");
    CHECK(f && fputs("old model", f) >= 0);
    if (f) fclose(f);
    CHECK(synth_config("260K", &c, err) == 0); /* 1 MB */
    CHECK(synth_write_limited(path, &c, 100000, err) == -1);
    CHECK_MSG(strstr(err, "write failed: File too large") && strstr(err, path), "%s", err);
    CHECK(!exists(tmp));
    char buf[32] = "";
    f = fopen(path, "rb");
    CHECK(f && fgets(buf, sizeof buf, f) && strcmp(buf, "old model") == 0);
    if (f) fclose(f);
    CHECK_MSG(synth_write(path, &c, 1, err) == 0, "%s", err); /* and it works without the limit */
    CHECK(!exists(tmp));
}

/* ---- mutation corpus through the fuzz entry ---------------------------------------------- */

static uint64_t mut_state = 0x2545f4914f6cdd1dull;
static uint64_t mut_next(void) {
    mut_state ^= mut_state << 13;
    mut_state ^= mut_state >> 7;
    mut_state ^= mut_state << 17;
    return mut_state;
}

enum { N_LSEEDS = 4, LSEED_MAX = 32768 };

static size_t read_file(const char *path, unsigned char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, cap, f) : 0;
    if (f) fclose(f);
    return n;
}

/* Seeds: micro models of every layout the loader knows (legacy tied, legacy with a separate
 * classifier, version 1, two layers with grouped-query attention), each a few kB. Also written
 * to <tmp>/seeds_llama2c/ as the libFuzzer starting corpus. */
static void make_llama2c_seeds(unsigned char seeds[N_LSEEDS][LSEED_MAX], size_t sizes[N_LSEEDS]) {
    char err[ERR_LEN];
    model_config c;
    CHECK(synth_config("8,16,1,2,1,8,4", &c, err) == 0);
    CHECK_MSG(synth_write(test_tmp("lseed0.bin"), &c, 5, err) == 0, "%s", err);
    c.shared_classifier = 0;
    CHECK_MSG(synth_write(test_tmp("lseed1.bin"), &c, 6, err) == 0, "%s", err);
    model *m = NULL;
    CHECK_MSG(model_open(&m, test_tmp("lseed0.bin"), err) == 0, "%s", err);
    if (m) write_v1(m, test_tmp("lseed2.bin"));
    model_close(m);
    CHECK(synth_config("16,32,2,4,2,16,8", &c, err) == 0);
    CHECK_MSG(synth_write(test_tmp("lseed3.bin"), &c, 7, err) == 0, "%s", err);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/seeds_llama2c", test_tmpdir());
    mkdir(dir, 0755);
    for (int i = 0; i < N_LSEEDS; i++) {
        char name[64];
        snprintf(name, sizeof name, "lseed%d.bin", i);
        sizes[i] = read_file(test_tmp(name), seeds[i], LSEED_MAX);
        CHECK(sizes[i] > 28 && sizes[i] < LSEED_MAX);
        snprintf(name, sizeof name, "seeds_llama2c/seed%d.bin", i);
        write_file(test_tmp(name), seeds[i], sizes[i]);
    }
}

static void test_llama2c_mutations(void) {
    static unsigned char seeds[N_LSEEDS][LSEED_MAX], buf[2 * LSEED_MAX];
    size_t sizes[N_LSEEDS];
    make_llama2c_seeds(seeds, sizes);
    for (int s = 0; s < N_LSEEDS; s++) fuzz_llama2c_one(seeds[s], sizes[s]);
    static const int32_t vals[] = {
        INT32_MIN, INT32_MIN + 1, -65536,        -1,      0,       1,        2, 3, 4, 6, 8, 16,
        64,        1 << 16,       (1 << 16) + 1, 1 << 20, 1 << 22, INT32_MAX};
    int runs = 0;
    for (int round = 0; round < 3000; round++) {
        int s = (int)(mut_next() % N_LSEEDS);
        size_t n = sizes[s];
        memcpy(buf, seeds[s], n);
        size_t hdr = s == 2 ? 8 : 0; /* the 7 fields start at byte 8 in a version-1 header */
        int muts = 1 + (int)(mut_next() % 3);
        for (int k = 0; k < muts && n > 0; k++) {
            size_t at = (size_t)(mut_next() % n);
            int field = (int)(mut_next() % 7);
            switch (mut_next() % 6) {
            case 0:
                buf[at] ^= (unsigned char)(1u << (mut_next() % 8));
                break;
            case 1: /* a hostile header field */
                memcpy(buf + hdr + 4 * field, &vals[mut_next() % (sizeof vals / sizeof vals[0])],
                       4);
                break;
            case 2: { /* a small header field, the file resized to match (random new bytes) */
                int32_t v = (int32_t)(mut_next() % 17) - 1;
                memcpy(buf + hdr + 4 * field, &v, 4);
                size_t fit = fuzz_llama2c_fit(buf, n, sizeof buf);
                for (size_t g = n; g < fit; g++) buf[g] = (unsigned char)mut_next();
                n = fit;
                break;
            }
            case 3:
                n = at;
                break; /* truncate */
            case 4:    /* grow by a few bytes */
                for (int g = (int)(mut_next() % 8); g >= 0 && n < sizeof buf; g--) buf[n++] = 0;
                break;
            default:
                buf[36] = (unsigned char)mut_next(); /* v1: shared_classifier */
            }
        }
        fuzz_llama2c_one(buf, n);
        runs++;
    }
    fprintf(stderr, "  %d mutated inputs through fuzz_llama2c_one: %d loaded, %d ran a pass\n",
            runs, fuzz_llama2c_loaded, fuzz_llama2c_ran);
    /* the corpus must reach the binding and the forward pass, not only the header checks */
    CHECK(fuzz_llama2c_loaded > 300 && fuzz_llama2c_ran > 300);
}

/* The KV cache types' table (model.c's kv_types[]): each name parses back to its row, the
 * messages' list of names (KV_TYPE_NAMES, KV_TYPE_METAVAR) is the table's, a model starts
 * with f32, and a row's bytes are its storage type's. */
static void test_kv_types(void) {
    char names[128] = "", meta[128] = "";
    for (int i = 0; i < KV_TYPE_COUNT; i++) {
        const kv_type_row *row = kv_type_get((kv_type)i);
        kv_type back = KV_TYPE_COUNT;
        CHECK(row && strcmp(kv_type_name((kv_type)i), row->name) == 0 && row->help[0]);
        CHECK(kv_type_parse(row->name, &back) == 0 && back == (kv_type)i);
        CHECK(kv_type_bytes((kv_type)i) == wtype_row_bytes(row->storage, 1));
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                 i == 0                   ? ""
                 : i == KV_TYPE_COUNT - 1 ? " or "
                                          : ", ",
                 row->name);
        snprintf(meta + strlen(meta), sizeof meta - strlen(meta), "%s%s", i ? "|" : "", row->name);
    }
    CHECK_MSG(strcmp(names, KV_TYPE_NAMES) == 0, "KV_TYPE_NAMES '%s', the table's '%s'",
              KV_TYPE_NAMES, names);
    CHECK_MSG(strcmp(meta, KV_TYPE_METAVAR) == 0, "KV_TYPE_METAVAR '%s', the table's '%s'",
              KV_TYPE_METAVAR, meta);
    kv_type t;
    CHECK(kv_type_parse("q8_0", &t) == -1 && kv_type_parse("", &t) == -1 &&
          kv_type_parse(NULL, &t) == -1 && kv_type_get(KV_TYPE_COUNT) == NULL);
    CHECK(kv_type_bytes(KV_F32) == 4 && kv_type_bytes(KV_F16) == 2);
    CHECK(strcmp(kv_type_name(KV_F32), "f32") == 0 && strcmp(kv_type_name(KV_F16), "f16") == 0);
}

int main(void) {
    alarm(600); /* a FIFO that blocks open() fails the test instead of hanging it */
    char err[ERR_LEN];
    model *legacy, *v1;
    CHECK_MSG(model_open(&legacy, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK(strcmp(legacy->format, "llama2c") == 0 && legacy->cfg.dim == 64 && legacy->cfg.n_kv_heads == 4);
    CHECK(model_param_count(legacy) > 250000 && model_param_count(legacy) < 300000);
    CHECK(legacy->kv == KV_F32); /* until model_set_kv */
    test_kv_types();
    const char *v1_path = test_tmp("stories260K_v1.bin");
    size_t v1_size = write_v1(legacy, v1_path);
    CHECK_MSG(model_open(&v1, v1_path, err) == 0, "%s", err);
    if (v1) {
        CHECK(strcmp(v1->format, "llama2c-v1") == 0);
        float *a = logits_of(legacy), *b = logits_of(v1);
        CHECK_MSG(memcmp(a, b, sizeof(float) * 4 * 512) == 0, "v1 logits differ from legacy");
        free(a), free(b);
        model_close(v1);
    }
    /* truncated v1, wrong version */
    FILE *f = fopen(v1_path, "rb");
    unsigned char *img = malloc(v1_size);
    CHECK(f && fread(img, 1, v1_size, f) == v1_size);
    if (f) fclose(f);
    write_file(test_tmp("v1_trunc.bin"), img, v1_size - 4);
    expect_error(test_tmp("v1_trunc.bin"), "version-1 header implies");
    int32_t two = 2;
    memcpy(img + 4, &two, 4);
    write_file(test_tmp("v1_v2.bin"), img, v1_size);
    expect_error(test_tmp("v1_v2.bin"), "format version 2");
    free(img);
    /* legacy header inconsistencies */
    int32_t bad[7] = {64, 172, 5, 8, 3, 512, 512};
    write_file(test_tmp("kv3.bin"), bad, sizeof bad);
    expect_error(test_tmp("kv3.bin"), "n_heads 8 is not divisible by n_kv_heads 3");
    int32_t neg[7] = {64, 172, -5, 8, 4, 512, 512};
    write_file(test_tmp("neg.bin"), neg, sizeof neg);
    expect_error(test_tmp("neg.bin"), "n_layers = -5");
    int32_t huge[7] = {1 << 20, 172, 5, 8, 4, 512, 512};
    write_file(test_tmp("huge.bin"), huge, sizeof huge);
    expect_error(test_tmp("huge.bin"), "dim = 1048576");
    write_file(test_tmp("short.bin"), bad, 10);
    expect_error(test_tmp("short.bin"), "too short");
    write_file(test_tmp("empty.bin"), bad, 0);
    expect_error(test_tmp("empty.bin"), "empty file");
    expect_error(test_tmpdir(), "is a directory");
    expect_error(test_tmp("missing.bin"), "cannot open");
    const char *fifo = test_tmp("fifo.bin");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    expect_error(fifo, "is not a regular file (a FIFO), expected a model file");
    model *m = NULL;
    CHECK(model_open_llama2c(&m, fifo, err) == -1 && strstr(err, "(a FIFO)"));
    CHECK(model_open_llama2c(&m, test_tmpdir(), err) == -1 && strstr(err, "is a directory"));
    expect_error("/dev/zero", "(a character device)");
    test_hostile_headers();
    test_synth_limits();
    test_llama2c_mutations();
    /* synthetic: file == memory */
    model_config c;
    CHECK(synth_config("48,96,2,4,2,256,64", &c, err) == 0);
    CHECK(synth_config("15M", &c, err) == 0 && c.dim == 288 && c.vocab_size == 32000);
    CHECK(synth_config("1.1B", &c, err) == 0 && c.n_kv_heads == 4 && c.hidden_dim == 5632 && !c.shared_classifier);
    CHECK(synth_config("7,7", &c, err) == -1 && strstr(err, "expected a preset"));
    CHECK(synth_config("48,96,2,4,2,256,64", &c, err) == 0);
    model *mem, *file;
    CHECK(synth_model(&mem, &c, 9, err) == 0);
    CHECK(synth_write(test_tmp("syn.bin"), &c, 9, err) == 0);
    CHECK_MSG(model_open(&file, test_tmp("syn.bin"), err) == 0, "%s", err);
    if (mem && file) {
        CHECK(mem->wcls.data == mem->tok_embd.data); /* custom shapes: tied */
        float *a = logits_of(mem), *b = logits_of(file);
        CHECK(memcmp(a, b, sizeof(float) * 4 * 256) == 0);
        free(a), free(b);
    }
    model_close(mem), model_close(file);
    model_close(legacy);
    return test_finish("test_model");
}
