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
