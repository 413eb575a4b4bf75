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

int test_finish(const char *name) {
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
        return 1;
    }
    fprintf(stderr, "%s: all checks passed\n", name);
    return 0;
}
