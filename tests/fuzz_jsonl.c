/* fuzz_jsonl.c: libFuzzer target for the dataset readers: JSONL (one object per line, with line
 * numbers), JSON arrays (sanitized MBPP), and everything ds_open does with the records (field
 * extraction by kind, ids, categories, references, few-shot prefixes, template rendering,
 * Python repr of lists, subsets, ds_select).
 *
 * Each input becomes the contents of every dataset file at once: it is written to one memfd,
 * and a scratch datasets folder holds, for each named dataset, a symbolic link from its file
 * name (humaneval/HumanEval.jsonl, mbpp/sanitized-mbpp.json, ...) to /proc/self/fd/N. The
 * last byte of the input picks one of the ds_open calls: a named dataset with one of its
 * templates or its first subset, or `jsonl:PATH` with the default field, a list field or the
 * chat template. Whatever opens is read back in full and shuffled. A crash, sanitizer report
 * or leak is a bug; an error return is the expected outcome.
 *
 * Build and run (clang; needs the compiler-rt fuzzer runtime, Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_jsonl -j2
 *   ctest --test-dir build -R test_datasets   # a normal build; writes the seeds
 *   mkdir -p /tmp/jsonl-corpus
 *   cp build/tests/tmp_test_datasets/seeds_jsonl/seed* /tmp/jsonl-corpus/
 *   ./build-fuzz/tests/fuzz_jsonl /tmp/jsonl-corpus -max_len=16384 -max_total_time=600
 * Crashing inputs are written to ./crash-*; replay one with ./build-fuzz/tests/fuzz_jsonl FILE.
 *
 * Without libFuzzer the same entry, fuzz_jsonl_one(), is driven by test_datasets.c over its
 * seeds and a fixed, seeded corpus of mutations, on every run of the test suite. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "datasets/ds_internal.h"
#include "util/err.h"
#include "tests/fuzz_files.h"

/* The memfd every dataset file links to, and the scratch datasets folder; made once. */
static int fuzz_jsonl_fd = -1;
static char fuzz_jsonl_dir[64], fuzz_jsonl_path[64];

static void fuzz_jsonl_cleanup(void) {
    for (int i = 0; ds_registry[i]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", fuzz_jsonl_dir, ds_registry[i]->file);
        unlink(p);
        char *slash = strrchr(p, '/');
        *slash = '\0';
        rmdir(p);
    }
    rmdir(fuzz_jsonl_dir);
}

static int fuzz_jsonl_setup(void) {
    if (fuzz_jsonl_fd >= 0) return 0;
    fuzz_jsonl_fd = memfd_create("fuzz_jsonl", MFD_CLOEXEC);
    snprintf(fuzz_jsonl_dir, sizeof fuzz_jsonl_dir, "/tmp/fuzz_jsonl.XXXXXX");
    if (fuzz_jsonl_fd < 0 || !mkdtemp(fuzz_jsonl_dir)) return -1;
    snprintf(fuzz_jsonl_path, sizeof fuzz_jsonl_path, "/proc/self/fd/%d", fuzz_jsonl_fd);
    for (int i = 0; ds_registry[i]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", fuzz_jsonl_dir, ds_registry[i]->file);
        char *slash = strrchr(p, '/');
        *slash = '\0';
        mkdir(p, 0700);
        *slash = '/';
        if (symlink(fuzz_jsonl_path, p) != 0) return -1;
    }
    atexit(fuzz_jsonl_cleanup);
    return 0;
}

/* Reads every string of every selected sample, then a shuffled slice. */
static unsigned fuzz_jsonl_walk(ds_set *s) {
    unsigned sum = 0;
    char err[ERR_LEN];
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ds_count(s); i++) {
            const ds_sample *x = ds_get(s, i);
            const char *str[] = {x->dataset, x->id, x->category, x->group, x->prompt, x->reference};
            for (int k = 0; k < 6; k++) sum += str[k] ? (unsigned)strlen(str[k]) : 0;
            sum += (unsigned)(x->index + x->line);
        }
        if (ds_select(s, ds_total(s) / 2, 3, 1, 42, err) != 0) break;
    }
    sum += (unsigned)strlen(ds_name(s)) + (unsigned)strlen(ds_template(s)) +
           (unsigned)ds_default_max_new(s);
    return sum;
}

volatile unsigned fuzz_jsonl_sink; /* keeps the reads above from being optimized away */
int fuzz_jsonl_opened;             /* ds_open calls that succeeded */

static unsigned fuzz_jsonl_open(const char *spec, const char *tpl, const char *dir) {
    char err[ERR_LEN];
    ds_set *s;
    if (ds_open(&s, spec, tpl, dir, err) != 0) return (unsigned)strlen(err);
    fuzz_jsonl_opened++;
    unsigned sum = fuzz_jsonl_walk(s);
    ds_free(s);
    return sum;
}

/* The ds_open calls an input can go to: jsonl:PATH with the default field, with a list field
 * and with the chat template, then every named dataset with each of its templates, then each
 * dataset that has subsets with its first subset. Returns how many there are and, for k below
 * that, fills the spec and template of call k. */
static int fuzz_jsonl_target(int k, char *spec, size_t n, const char **tpl, const char **dir) {
    int i = 0;
    static const char *const fields[] = {"", ":turns", ":prompt"};
    for (int f = 0; f < 3; f++, i++)
        if (i == k) {
            snprintf(spec, n, "jsonl:%s%s", fuzz_jsonl_path, fields[f]);
            *tpl = f == 2 ? "chat" : NULL, *dir = NULL;
        }
    for (int d = 0; ds_registry[d]; d++) {
        const ds_def *def = ds_registry[d];
        for (int t = 0; t < DS_MAX_TEMPLATES && def->templates[t].name; t++, i++)
            if (i == k) snprintf(spec, n, "%s", def->name), *tpl = def->templates[t].name;
        if (def->subsets && i++ == k)
            snprintf(spec, n, "%s/%s", def->name, def->subsets[0]), *tpl = NULL;
    }
    if (k >= 3) *dir = fuzz_jsonl_dir;
    return i;
}

/* How many targets the selector byte chooses among (test_datasets.c replays each seed with
 * every one; unused in the fuzz target itself). */
__attribute__((unused)) static int fuzz_jsonl_n_targets(void) {
    char spec[128];
    const char *tpl, *dir;
    return fuzz_jsonl_target(-1, spec, sizeof spec, &tpl, &dir);
}

/* The fuzz entry: never fails, only crashes if the library has a bug. The last byte of the
 * input selects the ds_open call (fuzz_jsonl_target), the bytes before it are the file: one
 * parse per input instead of one per dataset and template keeps the fuzzer fast, and a
 * mutation of that byte moves an input to another reader. */
int fuzz_jsonl_one(const uint8_t *data, size_t size) {
    size_t len = size - 1;
    if (size == 0 || fuzz_jsonl_setup() != 0 || fuzz_memfd_fill(fuzz_jsonl_fd, data, len)) return 0;
    char spec[128];
    const char *tpl = NULL, *dir = NULL;
    int n = fuzz_jsonl_target(-1, spec, sizeof spec, &tpl, &dir);
    fuzz_jsonl_target(data[len] % n, spec, sizeof spec, &tpl, &dir);
    fuzz_jsonl_sink += fuzz_jsonl_open(spec, tpl, dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_jsonl_one(data, size);
}
