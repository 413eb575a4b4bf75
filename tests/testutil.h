/* testutil.h: the few helpers every test file uses. A failed CHECK prints file:line and the
 * expression and makes the test exit 1 at the end (tests keep going to report every failure). */
#ifndef TESTS_TESTUTIL_H
#define TESTS_TESTUTIL_H

#include <stdio.h>

extern int test_failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
            test_failures++;                                                                   \
        }                                                                                      \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            test_failures++;                                                                   \
        }                                                                                      \
    } while (0)

/* Path of a file in the shared data folder ($DECBENCH_SHARED/<rel>), in a static buffer
 * rotating over 8 slots. Aborts the test (exit 1) if the shared folder is missing. */
const char *test_shared(const char *rel);

/* A scratch folder for this test ($DECBENCH_TEST_TMP, created), or /tmp. */
const char *test_tmpdir(void);

/* Path <tmpdir>/<name> in a rotating static buffer. */
const char *test_tmp(const char *name);

/* Under the sanitizers (DECBENCH_SANITIZED set and not "0": tests/CMakeLists.txt sets it for
 * every test of a DECBENCH_SANITIZE or DECBENCH_FUZZ build) the heaviest property grids are
 * thinned, as ASan and UBSan make the forward pass 10-30 times slower; the Release stage runs
 * them in full. test_sanitized() says whether they are. */
int test_sanitized(void);

/* Whether point i (0, 1, 2, ... in loop order) of a grid thinned by k runs: always in a normal
 * build; under the sanitizers when the digits of i in base k add up to a multiple of k. That keeps
 * one point in every k consecutive ones (from a multiple of k), and which one moves on from one
 * run of k to the next, so an innermost dimension of k values (or of a multiple of k) still sees
 * each of them as the dimensions outside it change. A thinned grid checks every point it visits
 * exactly as the full grid does. */
int test_keep(long i, int k);

/* A tensor for test_safetensors_bytes: name, dtype as the format spells it ("F32"), shape
 * (n_dims <= 4) and its bytes, laid out one after the other in the data section. */
typedef struct {
    const char *name, *dtype;
    int n_dims;
    unsigned long long shape[4];
    const void *data;
    size_t bytes;
} test_st_tensor;

/* A safetensors file of t[0..n) in memory (malloc'd, *size bytes; the caller frees it), with
 * data_offsets as the tensors follow each other; NULL when out of memory. */
unsigned char *test_safetensors_bytes(const test_st_tensor *t, int n, size_t *size);
/* The same written to path; 0, or -1 when it cannot be written. */
int test_write_safetensors(const char *path, const test_st_tensor *t, int n);

/* Prints "N passed, M failed" style summary and returns the process exit status. */
int test_finish(const char *name);

#endif
