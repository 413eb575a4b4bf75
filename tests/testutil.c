#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/paths.h"

int test_failures = 0;

static char *rotating(void) {
    static char slots[8][4096];
    static int next = 0;
    return slots[next++ % 8];
}

const char *test_shared(const char *rel) {
    char dir[2048];
    if (paths_shared_dir(NULL, dir, sizeof dir) != 0) {
        fprintf(stderr, "shared data folder not found (tried %s); set DECBENCH_SHARED\n", dir);
        exit(1);
    }
    char *out = rotating();
    snprintf(out, 4096, "%s/%s", dir, rel);
    return out;
}

const char *test_tmpdir(void) {
    const char *d = getenv("DECBENCH_TEST_TMP");
    if (!d || !d[0]) return "/tmp";
    mkdir(d, 0755);
    return d;
}

const char *test_tmp(const char *name) {
    char *out = rotating();
    snprintf(out, 4096, "%s/%s", test_tmpdir(), name);
    return out;
}

int test_sanitized(void) {
    const char *s = getenv("DECBENCH_SANITIZED");
    return s && s[0] && strcmp(s, "0") != 0;
}

int test_keep(long i, int k) {
    if (k <= 1 || !test_sanitized()) return 1;
    long digits = 0;
    for (; i > 0; i /= k) digits += i % k;
    return digits % k == 0;
}

int test_finish(const char *name) {
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
        return 1;
    }
    fprintf(stderr, "%s: all checks passed\n", name);
    return 0;
}

unsigned char *test_safetensors_bytes(const test_st_tensor *t, int n, size_t *size) {
    size_t cap = 256, len = 0, data = 0;
    for (int i = 0; i < n; i++) cap += strlen(t[i].name) + 160, data += t[i].bytes;
    char *h = malloc(cap);
    if (!h) return NULL;
    len += (size_t)snprintf(h + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(h + len, cap - len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[",
                                t[i].name, t[i].dtype);
        for (int d = 0; d < t[i].n_dims; d++)
            len += (size_t)snprintf(h + len, cap - len, "%s%llu", d ? "," : "", t[i].shape[d]);
        len += (size_t)snprintf(h + len, cap - len, "],\"data_offsets\":[%zu,%zu]}", off,
                                off + t[i].bytes);
        off += t[i].bytes;
    }
    len += (size_t)snprintf(h + len, cap - len, "}");
    while (len % 8) h[len++] = ' '; /* the reference writer pads the header to 8 bytes */
    unsigned char *out = malloc(8 + len + data);
    if (!out) {
        free(h);
        return NULL;
    }
    for (int b = 0; b < 8; b++) out[b] = (unsigned char)((unsigned long long)len >> (8 * b));
    memcpy(out + 8, h, len);
    free(h);
    size_t at = 8 + len;
    for (int i = 0; i < n; i++) {
        if (t[i].bytes) memcpy(out + at, t[i].data, t[i].bytes);
        at += t[i].bytes;
    }
    *size = at;
    return out;
}

int test_write_safetensors(const char *path, const test_st_tensor *t, int n) {
    size_t size;
    unsigned char *b = test_safetensors_bytes(t, n, &size);
    FILE *f = b ? fopen(path, "wb") : NULL;
    int ok = f && fwrite(b, 1, size, f) == size;
    if (f) ok = fclose(f) == 0 && ok;
    free(b);
    return ok ? 0 : -1;
}
