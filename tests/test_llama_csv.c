/* test_llama_csv.c: the llama-bench CSV reader (results/report/llama_csv.c).
 *  1. a real file of llama-bench (the llama.cpp build of Feb 2025 in ../peers: `llama-bench -m
 *     synth_110M_v3_q8_0.gguf -p 8,64 -n 128 -t 1 -r 1 -o csv`, columns as it printed them,
 *     copied below) reads as pp8, pp64 and tg128 at T = 8, 64 and 1;
 *  2. sizes measured twice are averaged, CRLF line ends and blank lines are fine, pg tests
 *     (prompt and generation together) are skipped;
 *  3. one named case per refusal, with its message;
 *  4. fuzz_llama_csv_one (tests/fuzz_llama_csv.c) over the seeds and 4000 seeded mutations. */
#include <stdlib.h>
#include <string.h>

#include "results/report/llama_csv.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

#include "tests/fuzz_llama_csv.c"

static const char real[] =
    "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,"
    "model_n_params,n_batch,n_ubatch,n_threads,cpu_mask,cpu_strict,poll,type_k,type_v,"
    "n_gpu_layers,split_mode,main_gpu,no_kv_offload,flash_attn,tensor_split,use_mmap,embeddings,"
    "n_prompt,n_gen,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts\n"
    "\"c392e5094\",\"4748\",\"AMD EPYC\",\"\",\"CPU\",\"/root/.cache/decbench/"
    "synth_110M_v3_q8_0.gguf\",\"llama ?B Q8_0\",\"116431872\",\"109529856\",\"2048\",\"512\","
    "\"1\",\"0x0\",\"0\",\"50\",\"f16\",\"f16\",\"99\",\"layer\",\"0\",\"0\",\"0\",\"0.00\",\"1\","
    "\"0\",\"8\",\"0\",\"2026-11-24T13:27:05Z\",\"131552478\",\"0\",\"60.812772\",\"0.000000\"\n"
    "\"c392e5094\",\"4748\",\"AMD EPYC\",\"\",\"CPU\",\"/root/.cache/decbench/"
    "synth_110M_v3_q8_0.gguf\",\"llama ?B Q8_0\",\"116431872\",\"109529856\",\"2048\",\"512\","
    "\"1\",\"0x0\",\"0\",\"50\",\"f16\",\"f16\",\"99\",\"layer\",\"0\",\"0\",\"0\",\"0.00\",\"1\","
    "\"0\",\"64\",\"0\",\"2026-11-24T13:27:06Z\",\"442595437\",\"0\",\"144.601374\",\"0.000000\"\n"
    "\"c392e5094\",\"4748\",\"AMD EPYC\",\"\",\"CPU\",\"/root/.cache/decbench/"
    "synth_110M_v3_q8_0.gguf\",\"llama ?B Q8_0\",\"116431872\",\"109529856\",\"2048\",\"512\","
    "\"1\",\"0x0\",\"0\",\"50\",\"f16\",\"f16\",\"99\",\"layer\",\"0\",\"0\",\"0\",\"0.00\",\"1\","
    "\"0\",\"0\",\"128\",\"2026-11-24T13:27:07Z\",\"9275614811\",\"0\",\"13.799768\",\"0."
    "000000\"\n";

static int parse(const char *text, llama_points *p, char *err) {
    return llama_csv_parse(text, strlen(text), "t.csv", p, err);
}

static void test_real(void) {
    llama_points p;
    char err[ERR_LEN];
    CHECK_MSG(parse(real, &p, err) == 0, "%s", err);
    CHECK(p.n == 3 && p.rows[0] == 1 && p.rows[1] == 8 && p.rows[2] == 64);
    CHECK(p.ms[1] == 131552478 / 1e6 && p.ms[2] == 442595437 / 1e6);
    CHECK(p.ms[0] == 9275614811.0 / 128 / 1e6); /* 72.5 ms per generated token */
}

static void test_forms(void) {
    llama_points p;
    char err[ERR_LEN];
    CHECK_MSG(parse("n_prompt,n_gen,avg_ns\r\n\"8\",\"0\",\"1000000\"\r\n\r\n\"8\",\"0\","
                    "\"3000000\"\r\n\"512\",\"128\",\"5\"\n\"0\",\"16\",\"16000000\"",
                    &p, err) == 0,
              "%s", err);
    CHECK(p.n == 2 && p.rows[0] == 1 && p.ms[0] == 1 && p.rows[1] == 8 && p.ms[1] == 2);
    CHECK_MSG(parse("x,n_prompt,n_gen,avg_ns\n\"a \"\"b\"\", c\",\"4\",\"0\",\"4e6\"\n", &p, err) ==
                  0,
              "%s", err); /* a doubled quote and a comma inside a field */
    CHECK(p.n == 1 && p.rows[0] == 4 && p.ms[0] == 4);
}

static void test_refusals(void) {
    static const struct {
        const char *name, *text, *msg;
    } cases[] = {
        {"empty", "", "t.csv: empty (no llama-bench header)"},
        {"blank", "\n\n", "t.csv: empty (no llama-bench header)"},
        {"no_columns", "a,b,c\n", "t.csv: line 1: no n_prompt, n_gen and avg_ns columns"},
        {"fields", "n_prompt,n_gen,avg_ns\n\"8\",\"0\"\n",
         "t.csv: line 2: 2 fields, the header has 3"},
        {"number", "n_prompt,n_gen,avg_ns\n\"8\",\"0\",\"fast\"\n",
         "t.csv: line 2: n_prompt '8', n_gen '0', avg_ns 'fast': expected counts"},
        {"negative", "n_prompt,n_gen,avg_ns\n\"-8\",\"0\",\"1\"\n", "t.csv: line 2: n_prompt '-8'"},
        {"huge", "n_prompt,n_gen,avg_ns\n\"1e9\",\"0\",\"1\"\n", "t.csv: line 2: n_prompt '1e9'"},
        {"quote", "n_prompt,n_gen,avg_ns\n\"8,\"0\",\"1\"\n", "t.csv: line 2: not a CSV line"},
        {"after_quote", "n_prompt,n_gen,avg_ns\n\"8\"x,\"0\",\"1\"\n",
         "t.csv: line 2: not a CSV line"},
        {"only_pg", "n_prompt,n_gen,avg_ns\n\"512\",\"128\",\"1\"\n", "t.csv: no pp or tg test"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llama_points p;
        char err[ERR_LEN] = "";
        CHECK_MSG(parse(cases[i].text, &p, err) == -1 && strstr(err, cases[i].msg), "%s: got '%s'",
                  cases[i].name, err);
    }
    char err[ERR_LEN];
    llama_points p;
    CHECK(llama_csv_read(test_tmp("absent.csv"), &p, err) == -1 && strstr(err, "absent.csv"));
    char many[8192] = "n_prompt,n_gen,avg_ns\n";
    for (int i = 1; i <= LLAMA_CSV_MAX + 1; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "\"%d\",\"0\",\"1\"\n", i);
    CHECK(parse(many, &p, err) == -1 && strstr(err, "more than 64 prompt sizes"));
}

static void test_fuzz_corpus(void) {
    const char *seeds[] = {real, "n_prompt,n_gen,avg_ns\n\"8\",\"0\",\"1\"\n"};
    rng_state r;
    rng_seed(&r, 11);
    int parsed = 0;
    static uint8_t buf[4096];
    for (int i = 0; i < 4000; i++) {
        const char *s = seeds[i % 2];
        size_t n = strlen(s) < sizeof buf ? strlen(s) : sizeof buf;
        memcpy(buf, s, n);
        int edits = 1 + (int)rng_below(&r, 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rng_below(&r, (uint32_t)n);
            switch (rng_below(&r, 4)) {
            case 0:
                buf[at] = (uint8_t)rng_u64(&r);
                break; /* a byte */
            case 1:
                buf[at] = "\",\n0-.e9"[rng_below(&r, 8)];
                break; /* syntax */
            case 2:
                n = at + 1;
                break; /* truncate */
            default:
                memmove(buf + at, buf + at + 1, n - at - 1), n--;
                break; /* delete */
            }
            if (n == 0) break;
        }
        parsed += fuzz_llama_csv_one(buf, n);
    }
    CHECK_MSG(parsed > 100, "only %d of 4000 mutations parsed: the corpus is too destructive",
              parsed);
    fprintf(stderr, "4000 mutated CSV files: %d parsed, the rest refused, none broke a promise\n",
            parsed);
}

int main(void) {
    test_real();
    test_forms();
    test_refusals();
    test_fuzz_corpus();
    return test_finish("test_llama_csv");
}
