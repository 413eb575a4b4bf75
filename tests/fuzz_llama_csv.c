/* fuzz_llama_csv.c: libFuzzer target for the llama-bench CSV reader (results/report/llama_csv.c):
 * any bytes as the text of a `llama-bench -o csv` file. A crash, sanitizer report or an
 * accepted result breaking the reader's promises (1..LLAMA_CSV_MAX sizes, increasing, finite
 * non-negative times) traps; an error return is the expected outcome.
 *
 * Build and run (clang; see tests/fuzz_jsonl.c for the build directory):
 *   cmake --build build-fuzz --target fuzz_llama_csv -j2
 *   ./build-fuzz/tests/fuzz_llama_csv -max_len=4096 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_llama_csv_one(), runs from tests/test_llama_csv.c over
 * its seeds and a seeded corpus of mutations on every test run. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "results/report/llama_csv.h"
#include "util/err.h"

/* The fuzz entry: 1 if the input parsed, 0 if refused; traps on a broken promise. */
int fuzz_llama_csv_one(const uint8_t *data, size_t size) {
    llama_points p;
    char err[ERR_LEN];
    if (llama_csv_parse((const char *)data, size, "fuzz.csv", &p, err) != 0) return 0;
    if (p.n < 1 || p.n > LLAMA_CSV_MAX) __builtin_trap();
    for (int i = 0; i < p.n; i++)
        if (p.rows[i] < 1 || (i && p.rows[i] <= p.rows[i - 1]) || !isfinite(p.ms[i]) || p.ms[i] < 0)
            __builtin_trap();
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_llama_csv_one(data, size);
    return 0;
}
