/* test_datasets.c: the spec of datasets/: every named set loads from the real files in
 * ../shared/datasets with its documented record count, every template renders exactly what
 * the peers' Python produced (golden hashes + exact strings), subsets are deterministic, and
 * every bad input fails with "path:LINE: what is wrong" before any model work; a byte order
 * mark, a directory or a FIFO gets a message that says so (and never blocks). Ends by replaying
 * a seeded corpus of mutations through fuzz_jsonl_one (the libFuzzer entry of
 * tests/fuzz_jsonl.c) and writes the seed files the fuzzer starts from. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datasets/dataset.h"
#include "tests/fuzz_jsonl.c"
#include "tests/testutil.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/rng.h"

static char err[ERR_LEN];

static ds_set *open_ok(const char *spec, const char *tpl, const char *dir) {
    ds_set *s = NULL;
    err[0] = '\0';
    int rc = ds_open(&s, spec, tpl, dir, err);
    CHECK_MSG(rc == 0 && s, "ds_open(%s, %s): %s", spec, tpl ? tpl : "default", err);
    return rc == 0 ? s : NULL;
}

/* Opens and expects a failure whose one-line message contains want1 and want2 (NULL = any). */
static void open_fails(const char *spec, const char *tpl, const char *dir, const char *want1,
                       const char *want2) {
    ds_set *s = (ds_set *)1;
    err[0] = '\0';
    int rc = ds_open(&s, spec, tpl, dir, err);
    CHECK_MSG(rc == -1 && s == NULL, "ds_open(%s) should fail", spec);
    CHECK_MSG(want1 == NULL || strstr(err, want1), "ds_open(%s): \"%s\" not in: %s", spec, want1,
              err);
    CHECK_MSG(want2 == NULL || strstr(err, want2), "ds_open(%s): \"%s\" not in: %s", spec, want2,
              err);
    CHECK_MSG(strchr(err, '\n') == NULL, "error is not one line: %s", err);
    if (rc == 0) ds_free(s);
}

static const char *write_tmp(const char *name, const char *content) {
    const char *path = test_tmp(name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(content, f);
    fclose(f);
    return path;
}

static int starts_with(const char *s, const char *p) {
    return strncmp(s, p, strlen(p)) == 0;
}
static int ends_with(const char *s, const char *p) {
    size_t n = strlen(s), m = strlen(p);
    return n >= m && memcmp(s + n - m, p, m) == 0;
}
static int count_of(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* ---- 1. every named set loads, with the count its SOURCE.md gives, fast ---- */
static void test_counts(void) {
    static const struct {
        const char *spec;
        int count;
        const char *tpl;
        int max_new;
    } sets[] = {
        {"humaneval", 164, "ouroboros", 512}, {"mbpp", 974, "ouroboros", 512},
        {"mbpp-sanitized", 427, "raw", 512},  {"gsm8k", 1319, "ouroboros", 256},
        {"mt_bench", 80, "lookahead", 1024},  {"spec_bench", 480, "specbench", 1024},
        {"cnn_dm", 80, "ouroboros", 128},     {"cnndm", 80, "ouroboros", 128},
        {"wmt_de_en", 80, "ouroboros", 64},   {"wmt", 80, "ouroboros", 64},
        {"tinystories", 713, "raw", 256},
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        double t0 = clock_now();
        ds_set *s = open_ok(sets[i].spec, NULL, NULL);
        double dt = clock_now() - t0;
        if (!s) continue;
        CHECK_MSG(ds_count(s) == sets[i].count && ds_total(s) == sets[i].count, "%s: %d records",
                  sets[i].spec, ds_count(s));
        CHECK_MSG(!strcmp(ds_template(s), sets[i].tpl), "%s default template %s", sets[i].spec,
                  ds_template(s));
        CHECK_MSG(ds_default_max_new(s) == sets[i].max_new, "%s max_new %d", sets[i].spec,
                  ds_default_max_new(s));
        CHECK(ds_template_source(s) && ds_template_source(s)[0]);
        CHECK_MSG(dt < 1.0, "%s took %.3f s to load", sets[i].spec, dt);
        for (int k = 0; k < ds_count(s); k++) {
            const ds_sample *x = ds_get(s, k);
            CHECK(x->index == k && x->prompt && x->prompt[0] && x->id && x->id[0]);
            CHECK(!strcmp(x->dataset, ds_name(s)));
        }
        CHECK(ds_get(s, -1) == NULL && ds_get(s, ds_count(s)) == NULL);
        ds_free(s);
    }
    /* aliases resolve to the canonical name */
    ds_set *s = open_ok("cnndm", NULL, NULL);
    if (s) CHECK(!strcmp(ds_name(s), "cnn_dm") && !strcmp(ds_get(s, 0)->dataset, "cnn_dm"));
    ds_free(s);
    s = open_ok("wmt", NULL, NULL);
    if (s) CHECK(!strcmp(ds_name(s), "wmt_de_en"));
    ds_free(s);
    /* the explicit data folder gives the same */
    s = open_ok("humaneval", NULL, test_shared("datasets"));
    if (s) CHECK(ds_count(s) == 164);
    ds_free(s);
}

/* ---- 2. every template over every record, against datasets/golden_hashes.py ---- */
static void test_golden(void) {
    /* FNV-1a 64 of all prompts in file order, each followed by a NUL; produced by
     * datasets/golden_hashes.py, an independent Python rendering of the same templates. */
    static const struct {
        const char *spec, *tpl;
        int count;
        uint64_t hash;
    } gold[] = {
        {"humaneval", "ouroboros", 164, 0x90045b654067d1ffull},
        {"humaneval", "ouroboros-chat", 164, 0x059e3f7aed993bdfull},
        {"humaneval", "lookahead", 164, 0xd3d9e3334bf4a11full},
        {"humaneval", "chat", 164, 0x1f7eda377ffc39fbull},
        {"mbpp", "ouroboros", 974, 0x39e794aae1d10c2full},
        {"mbpp/validation", "ouroboros", 90, 0x32c4b2c90cedebf5ull},
        {"mbpp", "ouroboros-0shot", 974, 0xa291e1756ad8c685ull},
        {"mbpp", "raw", 974, 0x9deab7b58a8344f2ull},
        {"mbpp-sanitized", "raw", 427, 0xda0dbb69cec1fd24ull},
        {"mbpp-sanitized", "ouroboros-0shot", 427, 0x0fc1e43437e9f93aull},
        {"gsm8k", "ouroboros", 1319, 0x4bc6789dc4ef3bdcull},
        {"gsm8k", "specbench", 1319, 0x9a4c6b7c4fb9fe5cull},
        {"gsm8k", "chat", 1319, 0xab3c788925928ae8ull},
        {"mt_bench", "lookahead", 80, 0xbdbcc94d7dea5b71ull},
        {"mt_bench", "specbench", 80, 0xd8c765bef6bff11bull},
        {"spec_bench", "specbench", 480, 0x11325d7526217565ull},
        {"spec_bench", "raw", 480, 0xcaae91f1cae36f0full},
        {"spec_bench/mt_bench", "specbench", 80, 0xd8c765bef6bff11bull},
        {"cnn_dm", "ouroboros", 80, 0x31968f9d41363e98ull},
        {"cnn_dm", "ouroboros-chat", 80, 0xdb62eee03ee6b1c6ull},
        {"cnn_dm", "lookahead", 80, 0x7c25e50579f96eeaull},
        {"cnn_dm", "specbench", 80, 0xf8037977b846dfdcull},
        {"wmt_de_en", "ouroboros", 80, 0xcce6d2dfbf057896ull},
        {"wmt_de_en", "ouroboros-chat", 80, 0x7e56e41cd35de82aull},
        {"wmt_de_en", "specbench", 80, 0xba3e345a746042a4ull},
        {"tinystories", "raw", 713, 0x3ffdebe79df39d11ull},
        {"tinystories", "chat", 713, 0xbf6be4bfacf8486aull},
    };
    for (size_t i = 0; i < sizeof gold / sizeof gold[0]; i++) {
        ds_set *s = open_ok(gold[i].spec, gold[i].tpl, NULL);
        if (!s) continue;
        uint64_t h = 0xcbf29ce484222325ull;
        for (int k = 0; k < ds_count(s); k++) {
            const char *p = ds_get(s, k)->prompt;
            size_t n = strlen(p) + 1;
            for (size_t j = 0; j < n; j++) h = (h ^ (unsigned char)p[j]) * 0x100000001b3ull;
        }
        CHECK_MSG(ds_count(s) == gold[i].count && h == gold[i].hash,
                  "%s/%s: %d records, hash 0x%016llx", gold[i].spec, gold[i].tpl, ds_count(s),
                  (unsigned long long)h);
        ds_free(s);
    }
}

/* ---- 3. exact strings for known records ---- */
#define HE0                                                                                        \
    "from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: "        \
    "float) -> bool:\n    \"\"\" Check if in given list of numbers, are any two numbers closer "   \
    "to each other than\n    given threshold.\n    >>> has_close_elements([1.0, 2.0, 3.0], "       \
    "0.5)\n    False\n    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n    "       \
    "True\n    \"\"\"\n"
#define HE_INSTR                                                                                   \
    "Please complete the following Python code without providing any additional tasks such "       \
    "as testing or explanations\n"
#define VICUNA_SYS                                                                                 \
    "A chat between a curious user and an artificial intelligence assistant. The assistant "       \
    "gives helpful, detailed, and polite answers to the user's questions."
#define MT81                                                                                       \
    "Compose an engaging travel blog post about a recent trip to Hawaii, highlighting "            \
    "cultural experiences and must-see attractions."
#define DE161                                                                                      \
    "Pfandh\xc3\xa4user boomen in Singapur , da die Krise in der Mittelschicht angekommen ist"
#define GSM0                                                                                       \
    "Janet\xe2\x80\x99s ducks lay 16 eggs per day. She eats three for breakfast every morning "    \
    "and bakes muffins for her friends every day with four. She sells the remainder at the "       \
    "farmers' market daily for $2 per fresh duck egg. How much in dollars does she make every "    \
    "day at the farmers' market?"

static void expect_prompt(const char *spec, const char *tpl, int i, const char *want) {
    ds_set *s = open_ok(spec, tpl, NULL);
    if (!s) return;
    const ds_sample *x = ds_get(s, i);
    CHECK_MSG(x && !strcmp(x->prompt, want), "%s/%s[%d]:\n got: [%s]\nwant: [%s]", spec, tpl, i,
              x ? x->prompt : "(none)", want);
    ds_free(s);
}

static void test_exact(void) {
    expect_prompt("humaneval", "ouroboros", 0, HE_INSTR HE0);
    expect_prompt("humaneval", "ouroboros-chat", 0, "[INST] " HE_INSTR "[/INST]\n" HE0);
    expect_prompt("humaneval", "lookahead", 0, HE0);
    expect_prompt("humaneval", "raw", 0, HE0);
    expect_prompt("humaneval", "chat", 0, "[INST] " HE0 " [/INST]");
    expect_prompt("mt_bench", "lookahead", 0, "[INST] " MT81 " [/INST]");
    expect_prompt("mt_bench", "specbench", 0, VICUNA_SYS " USER: " MT81 " ASSISTANT:");
    expect_prompt("spec_bench", NULL, 0, VICUNA_SYS " USER: " MT81 " ASSISTANT:");
    expect_prompt("spec_bench/translation", "raw", 0, "Translate German to English: " DE161);
    expect_prompt("wmt", "ouroboros", 0,
                  "Translate this German sentence to English. German: " DE161 " English: ");
    expect_prompt("wmt", "ouroboros-chat", 0,
                  "[INST] Translate this German sentence to English and do not output anything "
                  "more. German: " DE161 " English:  [/INST]");
    expect_prompt("wmt", "specbench", 0,
                  VICUNA_SYS " USER: Translate German to English: " DE161 " ASSISTANT:");
    expect_prompt("wmt", "raw", 0, DE161);
    expect_prompt("tinystories", NULL, 0,
                  "Once upon a time, in a big forest, there lived a rhinoceros named Roxy.");
    expect_prompt("gsm8k", "raw", 0, GSM0);
    expect_prompt("gsm8k", "chat", 0, "[INST] " GSM0 " [/INST]");

    /* MBPP task 269: Python's str(list) picks double quotes for strings holding a quote */
    ds_set *s = open_ok("mbpp", "ouroboros-0shot", NULL);
    if (s) {
        const ds_sample *x = ds_get(s, 268);
        CHECK(x && !strcmp(x->id, "269"));
        CHECK(x && !strcmp(x->prompt,
                           "You are an expert Python programmer, and here is your task: Write a "
                           "function to find the ascii value of a character. Your code should "
                           "pass these tests:\n\n[\"assert ascii_value('A')==65\", \"assert "
                           "ascii_value('R')==82\", \"assert ascii_value('S')==83\"]\n[BEGIN]\n"));
    }
    ds_free(s);
    /* MBPP 3-shot: tasks 1, 2, 3 with their code, then the task */
    s = open_ok("mbpp", "ouroboros", NULL);
    if (s) {
        const char *p0 = ds_get(s, 0)->prompt, *p268 = ds_get(s, 268)->prompt;
        CHECK(starts_with(p268, "You are an expert Python programmer, and here is your task: "
                                "Write a function to find the minimum cost path"));
        CHECK(count_of(p268, "[DONE]\n") == 3 && count_of(p268, "[BEGIN]\n") == 4);
        CHECK(ends_with(p268, "Write a function to find the ascii value of a character. Your "
                              "code should pass these tests:\n\n[\"assert ascii_value('A')==65\", "
                              "\"assert ascii_value('R')==82\", \"assert "
                              "ascii_value('S')==83\"]\n[BEGIN]\n"));
        CHECK(strstr(p268, "\n[BEGIN]\nR = 3\r\nC = 3\r\ndef min_cost(cost, m, n): \r\n") != NULL);
        size_t shots = strlen(p268) - strlen(strstr(p268, "[DONE]\nYou are an expert Python "
                                                          "programmer, and here is your task: "
                                                          "Write a function to find the ascii"));
        CHECK(strncmp(p0, p268, shots) == 0); /* the same shots for every task */
    }
    ds_free(s);
    /* GSM8K 8-shot */
    s = open_ok("gsm8k", NULL, NULL);
    if (s) {
        const ds_sample *x = ds_get(s, 0);
        CHECK(starts_with(x->prompt, "Q: There are 15 trees in the grove. Grove workers will plant "
                                     "trees in the grove today. After they are done, there will be "
                                     "21 trees. How many trees did the grove workers plant today?\n"
                                     "A: There are 15 trees originally. Then there were 21 trees "
                                     "after some more were planted. So there must have been 21 - "
                                     "15 = 6. The answer is 6.\n\nQ: If there are 3 cars"));
        CHECK(ends_with(x->prompt, "23 - 15 is 8. The answer is 8.\n\nQ: " GSM0 "\nA:"));
        CHECK(count_of(x->prompt, "The answer is") == 8 && count_of(x->prompt, "\nA:") == 9);
        CHECK(!strcmp(x->id, "0") && x->category == NULL && x->group == NULL);
        CHECK(x->reference && ends_with(x->reference, "farmer\xe2\x80\x99s market.\n#### 18"));
    }
    ds_free(s);
    /* CNN/DM LookaheadDecoding prompt: the article inside the Llama-2 system prompt */
    s = open_ok("cnn_dm", "lookahead", NULL);
    if (s) {
        const ds_sample *x = ds_get(s, 0);
        CHECK(ds_default_max_new(s) == 1024);
        CHECK(starts_with(x->prompt, "[INST] <<SYS>>\nYou are an intelligent chatbot. Answer the "
                                     "questions only using the following context:\n\nHillary "
                                     "Clinton\xe2\x80\x99s security detail arrived"));
        CHECK(ends_with(x->prompt, "- Never generate offensive or foul language.\n\n<</SYS>>\n\n"
                                   "Briefly summarize the given context. [/INST]\nSummary: "));
        CHECK(!strcmp(x->id, "241"));
        CHECK(x->reference && starts_with(x->reference, "Second modified, armored van spotted"));
    }
    ds_free(s);
    s = open_ok("cnn_dm", "ouroboros", NULL);
    if (s) {
        const char *p = ds_get(s, 0)->prompt;
        CHECK(starts_with(p, "Please summarize the following document within one sentence. "
                             "Document: Hillary Clinton\xe2\x80\x99s security detail"));
        CHECK(ends_with(p, "  Summary: "));
    }
    ds_free(s);
    s = open_ok("cnn_dm", "ouroboros-chat", NULL);
    if (s) CHECK(ends_with(ds_get(s, 0)->prompt, "  Summary: [/INST]"));
    ds_free(s);

    /* sample metadata */
    s = open_ok("humaneval", NULL, NULL);
    if (s) {
        const ds_sample *x = ds_get(s, 163);
        CHECK(!strcmp(x->id, "HumanEval/163") && x->index == 163 && x->line == 164);
        CHECK(x->reference != NULL && x->category == NULL);
    }
    ds_free(s);
    s = open_ok("spec_bench", NULL, NULL);
    if (s) {
        const ds_sample *x = ds_get(s, 0), *y = ds_get(s, 80), *z = ds_get(s, 479);
        CHECK(!strcmp(x->id, "81") && !strcmp(x->category, "writing") &&
              !strcmp(x->group, "mt_bench"));
        CHECK(!strcmp(y->id, "161") && !strcmp(y->category, "translation") &&
              !strcmp(y->group, "translation"));
        CHECK(
            y->reference &&
            !strcmp(y->reference, "Pawnbrokers shine in Singapore as middle class feel the pinch"));
        CHECK(!strcmp(z->id, "560") && !strcmp(z->group, "rag"));
    }
    ds_free(s);
    s = open_ok("wmt", NULL, NULL);
    if (s)
        CHECK(!strcmp(ds_get(s, 0)->reference,
                      "Pawnbrokers shine in Singapore as middle class feel the pinch"));
    ds_free(s);
}

/* ---- 4. subsets by category / split ---- */
static void test_categories(void) {
    static const char *const tasks[] = {"mt_bench", "translation",    "summarization",
                                        "qa",       "math_reasoning", "rag"};
    char seen[1000] = {0};
    int total = 0;
    for (int t = 0; t < 6; t++) {
        char spec[64];
        snprintf(spec, sizeof spec, "spec_bench/%s", tasks[t]);
        ds_set *s = open_ok(spec, NULL, NULL);
        if (!s) continue;
        CHECK_MSG(ds_count(s) == 80, "%s: %d", spec, ds_count(s));
        CHECK(!strcmp(ds_name(s), spec));
        for (int i = 0; i < ds_count(s); i++) {
            const ds_sample *x = ds_get(s, i);
            int id = atoi(x->id);
            CHECK(id >= 81 && id <= 560 && !seen[id]);
            if (id >= 81 && id <= 560) seen[id] = 1;
            CHECK(!strcmp(x->group, tasks[t]) && !strcmp(x->dataset, spec));
            total++;
        }
        ds_free(s);
    }
    CHECK_MSG(total == 480, "six Spec-Bench tasks cover %d of 480", total);
    /* an MT-bench category inside Spec-Bench, and MT-bench's own categories */
    ds_set *s = open_ok("spec_bench/writing", NULL, NULL);
    if (s) CHECK(ds_count(s) == 10 && !strcmp(ds_get(s, 0)->category, "writing"));
    ds_free(s);
    static const char *const cats[] = {"writing", "roleplay",   "reasoning", "math",
                                       "coding",  "extraction", "stem",      "humanities"};
    int mt = 0;
    for (int c = 0; c < 8; c++) {
        char spec[64];
        snprintf(spec, sizeof spec, "mt_bench/%s", cats[c]);
        s = open_ok(spec, NULL, NULL);
        if (s) {
            CHECK_MSG(ds_count(s) == 10, "%s: %d", spec, ds_count(s));
            mt += ds_count(s);
        }
        ds_free(s);
    }
    CHECK(mt == 80);
    /* MBPP splits by task_id (SOURCE.md): prompt 10, test 500, validation 90, train 374 */
    static const char *const splits[] = {"prompt", "test", "validation", "train"};
    static const int full[] = {10, 500, 90, 374}, sanitized[] = {7, 257, 43, 120};
    for (int k = 0; k < 4; k++) {
        char spec[64];
        snprintf(spec, sizeof spec, "mbpp/%s", splits[k]);
        s = open_ok(spec, "raw", NULL);
        if (s) CHECK_MSG(ds_count(s) == full[k], "%s: %d", spec, ds_count(s));
        ds_free(s);
        snprintf(spec, sizeof spec, "mbpp-sanitized/%s", splits[k]);
        s = open_ok(spec, NULL, NULL);
        if (s) CHECK_MSG(ds_count(s) == sanitized[k], "%s: %d", spec, ds_count(s));
        ds_free(s);
    }
    s = open_ok("mbpp/validation", NULL, NULL);
    if (s) {
        CHECK(!strcmp(ds_get(s, 0)->id, "511") && ds_get(s, 0)->index == 510);
        CHECK(!strcmp(ds_get(s, 89)->id, "600") && !strcmp(ds_get(s, 0)->group, "validation"));
    }
    ds_free(s);
}

/* ---- 5. jsonl:PATH[:FIELD] ---- */
static void test_jsonl(void) {
    char spec[4200];
    const char *wmt = test_shared("datasets/wmt_de_en/specbench_translation.jsonl");
    snprintf(spec, sizeof spec, "jsonl:%s:de", wmt);
    ds_set *s = open_ok(spec, NULL, NULL);
    if (s) {
        const ds_sample *x = ds_get(s, 0);
        CHECK(ds_count(s) == 80 && !strcmp(ds_template(s), "raw") && ds_default_max_new(s) == 256);
        CHECK(!strcmp(x->prompt, DE161) && !strcmp(x->id, "161") && x->line == 1);
        CHECK(!strcmp(ds_name(s), spec) && !strcmp(x->dataset, spec));
        CHECK(!strcmp(ds_path(s), wmt));
    }
    ds_free(s);
    snprintf(spec, sizeof spec, "jsonl:%s:en", wmt);
    expect_prompt(spec, "chat", 0,
                  "[INST] Pawnbrokers shine in Singapore as middle class feel the pinch [/INST]");
    /* default FIELD is "prompt" */
    snprintf(spec, sizeof spec, "jsonl:%s",
             test_shared("datasets/tinystories/prompts_once_upon_a_time.jsonl"));
    s = open_ok(spec, NULL, NULL);
    if (s) {
        CHECK(ds_count(s) == 713 && !strcmp(ds_get(s, 5)->id, "5"));
        CHECK(ends_with(ds_name(s), ".jsonl:prompt"));
    }
    ds_free(s);
    /* a list field gives its first element; the category is picked up */
    snprintf(spec, sizeof spec, "jsonl:%s:turns",
             test_shared("datasets/spec_bench/question.jsonl"));
    s = open_ok(spec, NULL, NULL);
    if (s) {
        CHECK(ds_count(s) == 480 && !strcmp(ds_get(s, 0)->prompt, MT81));
        CHECK(!strcmp(ds_get(s, 0)->category, "writing") && !strcmp(ds_get(s, 0)->id, "81"));
    }
    ds_free(s);
    /* no id field: the index; blank lines skipped but counted; CRLF accepted */
    const char *p = write_tmp("plain.jsonl", "\n{\"prompt\": \"a\"}\r\n\n  \n{\"prompt\": \"b\"}");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    s = open_ok(spec, NULL, NULL);
    if (s) {
        CHECK(ds_count(s) == 2 && !strcmp(ds_get(s, 1)->prompt, "b"));
        CHECK(!strcmp(ds_get(s, 1)->id, "1") && ds_get(s, 0)->line == 2 && ds_get(s, 1)->line == 5);
    }
    ds_free(s);
    snprintf(spec, sizeof spec, "jsonl:%s:nosuch", wmt);
    open_fails(spec, NULL, NULL, "specbench_translation.jsonl:1: field \"nosuch\" missing", NULL);
    open_fails("jsonl:", NULL, NULL, "jsonl:PATH", NULL);
    snprintf(spec, sizeof spec, "jsonl:%s:", wmt);
    open_fails(spec, NULL, NULL, "empty FIELD", NULL);
    snprintf(spec, sizeof spec, "jsonl:%s:de", wmt);
    open_fails(spec, "ouroboros", NULL, "unknown template \"ouroboros\" for jsonl",
               "raw (default), chat");
}

/* ---- 6. deterministic subsets ---- */
static void test_select(void) {
    ds_set *s = open_ok("spec_bench", NULL, NULL);
    if (!s) return;
    int n = ds_total(s), a[480], b[480];
    CHECK(n == 480);
    /* no shuffle: offset/limit slice the file order */
    CHECK(ds_select(s, 10, 5, 0, 0, err) == 0);
    CHECK(ds_count(s) == 5 && ds_get(s, 0)->index == 10 && ds_get(s, 4)->index == 14);
    CHECK(ds_get(s, 5) == NULL);
    CHECK(ds_select(s, 470, 100, 0, 0, err) == 0 && ds_count(s) == 10);
    CHECK(ds_select(s, 0, 0, 0, 0, err) == 0 && ds_count(s) == 480 && ds_get(s, 479)->index == 479);
    /* shuffle: a permutation, the same for the same seed, different for another seed, and
     * exactly the documented Fisher-Yates over util/rng.h */
    CHECK(ds_select(s, 0, 0, 1, 42, err) == 0 && ds_count(s) == 480);
    char hit[480] = {0};
    for (int i = 0; i < n; i++) {
        a[i] = ds_get(s, i)->index;
        hit[a[i]]++;
    }
    int perm = 1, moved = 0;
    for (int i = 0; i < n; i++) perm &= hit[i] == 1, moved += a[i] != i;
    CHECK(perm && moved > 400);
    int ref[480];
    for (int i = 0; i < n; i++) ref[i] = i;
    rng_state r;
    rng_seed(&r, 42);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&r, (uint32_t)(i + 1)), t = ref[i];
        ref[i] = ref[j];
        ref[j] = t;
    }
    CHECK(memcmp(a, ref, sizeof a) == 0);
    CHECK(ds_select(s, 0, 0, 1, 42, err) == 0);
    for (int i = 0; i < n; i++) b[i] = ds_get(s, i)->index;
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(ds_select(s, 0, 0, 1, 43, err) == 0);
    for (int i = 0; i < n; i++) b[i] = ds_get(s, i)->index;
    CHECK(memcmp(a, b, sizeof a) != 0);
    /* pinned, so a change of generator or algorithm shows up here */
    CHECK(ds_select(s, 0, 4, 1, 1, err) == 0 && ds_count(s) == 4);
    int pin[4];
    for (int i = 0; i < 4; i++) pin[i] = ds_get(s, i)->index;
    CHECK_MSG(pin[0] == 358 && pin[1] == 82 && pin[2] == 42 && pin[3] == 375,
              "seed 1 order starts %d %d %d %d", pin[0], pin[1], pin[2], pin[3]);
    /* shuffle first, then offset, then limit */
    CHECK(ds_select(s, 100, 20, 1, 42, err) == 0 && ds_count(s) == 20);
    for (int i = 0; i < 20; i++) CHECK(ds_get(s, i)->index == a[100 + i]);
    /* errors leave the selection as it was */
    CHECK(ds_select(s, -1, 0, 0, 0, err) == -1 && strstr(err, ">= 0"));
    CHECK(ds_select(s, 0, -5, 0, 0, err) == -1 && strstr(err, ">= 0"));
    CHECK(ds_select(s, 480, 0, 0, 0, err) == -1 && strstr(err, "past the end") &&
          strstr(err, "480"));
    CHECK(ds_count(s) == 20 && ds_get(s, 0)->index == a[100]);
    ds_free(s);
    /* subsets of a category set index into that set */
    s = open_ok("spec_bench/qa", NULL, NULL);
    if (s) {
        CHECK(ds_select(s, 0, 3, 1, 7, err) == 0 && ds_count(s) == 3);
        for (int i = 0; i < 3; i++) CHECK(!strcmp(ds_get(s, i)->group, "qa"));
    }
    ds_free(s);
}

/* ---- 7. every bad input fails with its message ---- */
static void test_errors(void) {
    char spec[4200];
    const char *p;
    /* malformed JSON on line 3 */
    p = write_tmp("bad_json.jsonl",
                  "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\",}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "bad_json.jsonl:3: invalid JSON", NULL);
    p = write_tmp("trailing.jsonl",
                  "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"c\"} x\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "trailing.jsonl:3: invalid JSON", NULL);
    p = write_tmp("two_per_line.jsonl", "{\"prompt\": \"a\"}{\"prompt\": \"b\"}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "two_per_line.jsonl:1: invalid JSON", NULL);
    p = write_tmp("bad_utf8.jsonl",
                  "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": \"\xff\"}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "bad_utf8.jsonl:3: invalid JSON", NULL);
    /* missing field, wrong type, not an object, empty */
    p = write_tmp("missing.jsonl", "{\"prompt\": \"a\"}\n{\"text\": \"b\"}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "missing.jsonl:2: field \"prompt\" missing", NULL);
    p = write_tmp("wrong_type.jsonl",
                  "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n{\"prompt\": 5}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "wrong_type.jsonl:3: field \"prompt\" is a number, expected",
               NULL);
    p = write_tmp("empty_list.jsonl", "{\"prompt\": []}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "empty_list.jsonl:1: field \"prompt\" is an empty array", NULL);
    p = write_tmp("bad_id.jsonl", "{\"prompt\": \"a\", \"id\": [1]}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "bad_id.jsonl:1: field \"id\" is an array", NULL);
    p = write_tmp("array_line.jsonl", "{\"prompt\": \"a\"}\n[1, 2]\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "array_line.jsonl:2: expected a JSON object, found an array",
               NULL);
    p = write_tmp("empty.jsonl", "");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "empty.jsonl: empty file", NULL);
    p = write_tmp("blank.jsonl", "\n  \n\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL, "blank.jsonl: empty file", NULL);
    /* missing file */
    open_fails("jsonl:/nonexistent/dir/x.jsonl", NULL, NULL, "/nonexistent/dir/x.jsonl",
               "cannot open");
    /* unknown dataset, template, subset: the valid names are listed */
    open_fails("humaneva", NULL, NULL, "unknown dataset \"humaneva\"", "humaneval, mbpp");
    open_fails("humaneva", NULL, NULL, "jsonl:PATH[:FIELD]", "cnn_dm (cnndm)");
    open_fails("", NULL, NULL, "no dataset", "spec_bench");
    open_fails("humaneval", "vicuna", NULL, "unknown template \"vicuna\" for humaneval",
               "ouroboros (default), ouroboros-chat, lookahead, raw, chat");
    open_fails("spec_bench/chat", NULL, NULL, "unknown subset \"chat\" of spec_bench",
               "mt_bench, translation, summarization, qa, math_reasoning, rag");
    open_fails("gsm8k/test", NULL, NULL, "gsm8k has no subsets", NULL);
    /* missing data folder: named, with the ways to set it */
    open_fails("humaneval", NULL, "/nonexistent/datasets", "/nonexistent/datasets", "--data-dir");
    /* a data folder without the file */
    char dir[4096], sub[4200];
    snprintf(dir, sizeof dir, "%s/nofiles", test_tmpdir()); /* never populated */
    mkdir(dir, 0755);
    open_fails("humaneval", NULL, dir, "nofiles/humaneval/HumanEval.jsonl", "README");
    snprintf(dir, sizeof dir, "%s/emptydata", test_tmpdir());
    mkdir(dir, 0755);
    /* DECBENCH_DATASETS is honoured (and named when wrong) */
    char *old = getenv("DECBENCH_DATASETS") ? strdup(getenv("DECBENCH_DATASETS")) : NULL;
    setenv("DECBENCH_DATASETS", "/nonexistent/env/datasets", 1);
    open_fails("gsm8k", NULL, NULL, "/nonexistent/env/datasets", "DECBENCH_DATASETS");
    setenv("DECBENCH_DATASETS", test_shared("datasets"), 1);
    ds_set *s = open_ok("gsm8k", NULL, NULL);
    if (s) CHECK(ds_count(s) == 1319);
    ds_free(s);
    if (old)
        setenv("DECBENCH_DATASETS", old, 1);
    else
        unsetenv("DECBENCH_DATASETS");
    free(old);

    /* a named dataset in a fake data folder: required fields and their types are checked */
    snprintf(sub, sizeof sub, "%s/humaneval", dir);
    mkdir(sub, 0755);
    write_tmp("emptydata/humaneval/HumanEval.jsonl",
              "{\"task_id\": \"t/0\", \"prompt\": \"def f():\\n\"}\n{\"prompt\": \"x\"}\n");
    open_fails("humaneval", NULL, dir, "HumanEval.jsonl:2: field \"task_id\" missing", NULL);
    snprintf(sub, sizeof sub, "%s/mbpp", dir);
    mkdir(sub, 0755);
    /* MBPP test_list: Python repr escapes (quote choice, backslash, \t \n, \xa0, U+2028,
     * control characters); the expected text is what Python 3 prints for str(test_list) */
    write_tmp("emptydata/mbpp/mbpp.jsonl",
              "{\"text\": \"T\", \"code\": \"c\", \"task_id\": 7, \"test_list\": [\"assert "
              "f('a') == \\\"b\\\"\", \"x\\\\y\\t\\n\", \"it's\", "
              "\"caf\\u00e9\\u00a0\\u2028\\u0001\\u007f\", \"\\u2019\"]}\n");
    s = open_ok("mbpp", "ouroboros-0shot", dir);
    if (s) {
        CHECK_MSG(!strcmp(ds_get(s, 0)->prompt,
                          "You are an expert Python programmer, and here is your task: T Your "
                          "code should pass these tests:\n\n['assert f(\\'a\\') == \"b\"', "
                          "'x\\\\y\\t\\n', \"it's\", 'caf\xc3\xa9\\xa0\\u2028\\x01\\x7f', "
                          "'\xe2\x80\x99']\n[BEGIN]\n"),
                  "got %s", ds_get(s, 0)->prompt);
        CHECK(!strcmp(ds_get(s, 0)->id, "7") && !strcmp(ds_get(s, 0)->group, "prompt"));
    }
    ds_free(s);
    /* the 3-shot prompt needs tasks 1-3 */
    open_fails("mbpp", "ouroboros", dir, "task_id 1, 2 and 3", NULL);
    write_tmp("emptydata/mbpp/mbpp.jsonl",
              "{\"text\": \"T\", \"code\": \"c\", \"task_id\": 7, \"test_list\": [\"a\"]}\n"
              "{\"text\": \"T\", \"code\": \"c\", \"task_id\": 8, \"test_list\": [\"a\", 3]}\n");
    open_fails("mbpp", "raw", dir, "mbpp.jsonl:2: field \"test_list\" element 1 is a number", NULL);
    write_tmp("emptydata/mbpp/mbpp.jsonl",
              "{\"text\": \"T\", \"code\": \"c\", \"task_id\": 7.5, \"test_list\": []}\n");
    open_fails("mbpp", "raw", dir,
               "mbpp.jsonl:1: field \"task_id\" is a number, expected a "
               "string or an integer",
               NULL);
    /* sanitized MBPP is one JSON array: syntax errors by line, record errors by index */
    write_tmp("emptydata/mbpp/sanitized-mbpp.json",
              "[{\"prompt\": \"p\", \"code\": \"c\", \"task_id\": 2, \"test_list\": []},\n"
              " {\"prompt\": \"p\", \"code\": \"c\", \"task_id\": 3}]");
    open_fails("mbpp-sanitized", NULL, dir,
               "sanitized-mbpp.json: record 1: field \"test_list\" missing", NULL);
    write_tmp("emptydata/mbpp/sanitized-mbpp.json",
              "[{\"prompt\": \"p\"},\n\n {\"prompt\" \"p\"}]");
    open_fails("mbpp-sanitized", NULL, dir, "sanitized-mbpp.json:3: invalid JSON", NULL);
    write_tmp("emptydata/mbpp/sanitized-mbpp.json", "{\"prompt\": \"p\"}");
    open_fails("mbpp-sanitized", NULL, dir, "expected a JSON array", NULL);
    write_tmp("emptydata/mbpp/sanitized-mbpp.json", "\n");
    open_fails("mbpp-sanitized", NULL, dir, "sanitized-mbpp.json: empty file", NULL);
    /* a JSON-array file with a UTF-8 byte order mark loads like one without */
    write_tmp(
        "emptydata/mbpp/sanitized-mbpp.json",
        "\xef\xbb\xbf[{\"prompt\": \"p\", \"code\": \"c\", \"task_id\": 2, \"test_list\": []}]");
    s = open_ok("mbpp-sanitized", NULL, dir);
    if (s) CHECK(ds_count(s) == 1 && !strcmp(ds_get(s, 0)->prompt, "p"));
    ds_free(s);
    /* Spec-Bench: category required */
    snprintf(sub, sizeof sub, "%s/spec_bench", dir);
    mkdir(sub, 0755);
    write_tmp("emptydata/spec_bench/question.jsonl",
              "{\"question_id\": 1, \"category\": \"qa\", \"turns\": [\"q\"]}\n"
              "{\"question_id\": 2, \"turns\": [\"q\"]}\n");
    open_fails("spec_bench", NULL, dir, "question.jsonl:2: field \"category\" missing", NULL);
    write_tmp("emptydata/spec_bench/question.jsonl",
              "{\"question_id\": 1, \"category\": \"qa\", \"turns\": [1]}\n");
    open_fails("spec_bench", NULL, dir, "question.jsonl:1: field \"turns\" starts with a number",
               NULL);
    /* a subset with no record in the file */
    write_tmp("emptydata/spec_bench/question.jsonl",
              "{\"question_id\": 1, \"category\": \"qa\", \"turns\": [\"q\"]}\n");
    open_fails("spec_bench/rag", NULL, dir, "no records in spec_bench/rag", NULL);
}

/* ---- 8. byte order marks, directories and FIFOs ---- */
static void test_file_kinds(void) {
    char spec[4200];
    /* a UTF-8 BOM at the start is skipped: same records, same line numbers, same prompt */
    const char *p =
        write_tmp("bom.jsonl", "\xef\xbb\xbf{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    ds_set *s = open_ok(spec, NULL, NULL);
    if (s) {
        CHECK(ds_count(s) == 2 && !strcmp(ds_get(s, 0)->prompt, "a"));
        CHECK(ds_get(s, 0)->line == 1 && ds_get(s, 1)->line == 2);
    }
    ds_free(s);
    /* a BOM on a later line (files joined with cat) and UTF-16 files are named as such */
    p = write_tmp("bom2.jsonl", "{\"prompt\": \"a\"}\n\xef\xbb\xbf{\"prompt\": \"b\"}\n");
    snprintf(spec, sizeof spec, "jsonl:%s", p);
    open_fails(spec, NULL, NULL,
               "bom2.jsonl:2: a UTF-8 byte order mark (EF BB BF) starts this line", NULL);
    FILE *f = fopen(test_tmp("utf16.jsonl"), "wb");
    CHECK(f && fwrite("\xff\xfe{\0\"\0p\0", 1, 8, f) == 8);
    if (f) fclose(f);
    snprintf(spec, sizeof spec, "jsonl:%s", test_tmp("utf16.jsonl"));
    open_fails(spec, NULL, NULL, "utf16.jsonl: starts with a UTF-16 byte order mark (FF FE)",
               "expected UTF-8");
    /* a directory, a FIFO (which blocked open() forever), a device */
    snprintf(spec, sizeof spec, "jsonl:%s", test_tmpdir());
    open_fails(spec, NULL, NULL, "is a directory, expected a dataset file", test_tmpdir());
    const char *fifo = test_tmp("fifo.jsonl");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    snprintf(spec, sizeof spec, "jsonl:%s", fifo);
    open_fails(spec, NULL, NULL, "fifo.jsonl: is not a regular file (a FIFO), expected a dataset",
               NULL);
    open_fails("jsonl:/dev/zero", NULL, NULL,
               "/dev/zero: is not a regular file (a character device)", NULL);
    /* a named dataset whose file is a directory */
    char dir[4096], sub[4200];
    snprintf(dir, sizeof dir, "%s/dirdata", test_tmpdir());
    snprintf(sub, sizeof sub, "%s/gsm8k", dir);
    mkdir(dir, 0755), mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/gsm8k/test.jsonl", dir);
    mkdir(sub, 0755);
    open_fails("gsm8k", NULL, dir, "gsm8k/test.jsonl: is a directory", NULL);
}

/* ---- 9. --help text ---- */
static void test_help(void) {
    size_t need = ds_help(NULL, 0);
    char *buf = malloc(need + 1);
    CHECK(ds_help(buf, need + 1) == need && strlen(buf) == need);
    const char *want[] = {"humaneval",       "mbpp-sanitized",   "gsm8k",
                          "mt_bench",        "spec_bench",       "cnn_dm (cnndm)",
                          "wmt_de_en (wmt)", "tinystories",      "jsonl:PATH[:FIELD]",
                          "ouroboros*[512]", "specbench*[1024]", "ouroboros*[128]",
                          "ouroboros*[64]",  "ouroboros*[256]",  "lookahead[1024]",
                          "math_reasoning",  "validation",       "DECBENCH_DATASETS",
                          "--data-dir"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(strstr(buf, want[i]), "help lacks %s", want[i]);
    char small[10];
    CHECK(ds_help(small, sizeof small) == need && strlen(small) == 9);
    free(buf);
}

/* ---- 10. mutation corpus through the fuzz entry ---- */

static uint64_t mut_state = 0x853c49e6748fea9bull;
static uint64_t mut_next(void) {
    mut_state ^= mut_state << 13;
    mut_state ^= mut_state >> 7;
    mut_state ^= mut_state << 17;
    return mut_state;
}

enum { N_JSEEDS = 13, JSEED_MAX = 16384 };

/* The first records of a shared file (whole lines, at most JSEED_MAX bytes and max_lines). */
static size_t head_lines(const char *rel, int max_lines, unsigned char *out) {
    FILE *f = fopen(test_shared(rel), "rb");
    size_t n = 0;
    char line[JSEED_MAX];
    for (int i = 0; f && i < max_lines && fgets(line, sizeof line, f); i++) {
        size_t k = strlen(line);
        if (n + k >= JSEED_MAX) break;
        memcpy(out + n, line, k);
        n += k;
    }
    if (f) fclose(f);
    return n;
}

/* Seeds: the first records of every shared dataset file (MBPP's are task_id 1-3, what its
 * 3-shot prompt needs), the first records of sanitized MBPP as an array, one record holding
 * every field any dataset reads (as JSONL, after a byte order mark, and as an array), and an
 * empty array. Also written to
 * <tmp>/seeds_jsonl/ as the libFuzzer starting corpus. */
static int make_jsonl_seeds(unsigned char seeds[N_JSEEDS][JSEED_MAX + 1], size_t sizes[N_JSEEDS]) {
    int n = 0;
    for (int i = 0; ds_registry[i]; i++) {
        char rel[256];
        snprintf(rel, sizeof rel, "datasets/%s", ds_registry[i]->file);
        if (ds_registry[i]->json_array) {
            json_error_t je;
            json_t *all = json_load_file(test_shared(rel), 0, &je), *head = json_array();
            for (size_t k = 0; k < 2 && json_is_array(all) && k < json_array_size(all); k++)
                json_array_append(head, json_array_get(all, k));
            char *text = json_dumps(head, JSON_COMPACT);
            sizes[n] = text && strlen(text) < JSEED_MAX ? strlen(text) : 0;
            if (sizes[n]) memcpy(seeds[n], text, sizes[n]);
            free(text);
            json_decref(all), json_decref(head);
        } else {
            sizes[n] = head_lines(rel, 3, seeds[n]);
        }
        CHECK_MSG(sizes[n] > 0, "no seed from %s", rel);
        n++;
    }
    static const char every[] =
        "{\"id\": 1, \"task_id\": 1, \"question_id\": 81, \"category\": \"writing\", "
        "\"prompt\": \"def f():\\n\", \"text\": \"Write f.\", \"code\": \"pass\", "
        "\"test_list\": [\"assert f() == 'a'\", \"x\\\\y\"], \"question\": \"Q?\", "
        "\"answer\": \"A\", \"turns\": [\"t1\", \"t2\"], \"reference\": [\"r\"], "
        "\"article\": \"Art\", \"highlights\": \"H\", \"de\": \"Hallo\", \"en\": \"Hi\", "
        "\"paragraph\": \"Once\", \"canonical_solution\": \"  return 1\"}\n"
        "{\"id\": \"b\", \"task_id\": 2, \"question_id\": 82, \"category\": \"qa\", "
        "\"prompt\": \"p\", \"text\": \"t\", \"code\": \"c\", \"test_list\": [], "
        "\"question\": \"q\", \"turns\": \"one\", \"article\": \"a\", \"de\": \"d\"}\n";
    size_t len = strlen(every);
    memcpy(seeds[n], every, len), sizes[n++] = len;
    memcpy(seeds[n], "\xef\xbb\xbf", 3), memcpy(seeds[n] + 3, every, len), sizes[n++] = 3 + len;
    /* the same two records as one JSON array (sanitized MBPP's reader), and an empty array */
    seeds[n][0] = '[';
    memcpy(seeds[n] + 1, every, len);
    char *nl = memchr(seeds[n] + 1, '\n', len);
    *nl = ',';
    seeds[n][len] = ']', sizes[n++] = len + 1;
    memcpy(seeds[n], "[]", 2), sizes[n++] = 2;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/seeds_jsonl", test_tmpdir());
    mkdir(dir, 0755);
    /* on disk: each seed once per target (its last byte selects the ds_open call) */
    CHECK(fuzz_jsonl_setup() == 0);
    for (int i = 0; i < n; i++) {
        for (int t = 0; t < fuzz_jsonl_n_targets(); t++) {
            char name[64];
            snprintf(name, sizeof name, "seeds_jsonl/seed%d_%d", i, t);
            FILE *f = fopen(test_tmp(name), "wb");
            CHECK(f && fwrite(seeds[i], 1, sizes[i], f) == sizes[i] && fputc(t, f) == t);
            if (f) fclose(f);
        }
    }
    return n;
}

static void test_jsonl_mutations(void) {
    static unsigned char seeds[N_JSEEDS][JSEED_MAX + 1], buf[2 * JSEED_MAX + 1];
    size_t sizes[N_JSEEDS];
    int nseeds = make_jsonl_seeds(seeds, sizes);
    CHECK(nseeds <= N_JSEEDS);
    int targets = fuzz_jsonl_n_targets(), n_ok = 0;
    static struct {
        int seed, target;
    } ok[N_JSEEDS * 256];              /* the pairs that open: mutants start from those */
    for (int s = 0; s < nseeds; s++) { /* every seed through every reader and template */
        for (int t = 0; t < targets; t++) {
            int before = fuzz_jsonl_opened;
            seeds[s][sizes[s]] = (unsigned char)t;
            fuzz_jsonl_one(seeds[s], sizes[s] + 1);
            if (fuzz_jsonl_opened > before) ok[n_ok].seed = s, ok[n_ok++].target = t;
        }
    }
    int seeds_opened = fuzz_jsonl_opened;
    CHECK(n_ok > 0);
    static const char *const tokens[] = {"{",
                                         "}",
                                         "[",
                                         "]",
                                         "\"",
                                         ",",
                                         ":",
                                         "\n",
                                         "\\",
                                         "\\u0000",
                                         "\xef\xbb\xbf",
                                         "\xff",
                                         "\xc3",
                                         "null",
                                         "-9223372036854775809",
                                         "1e999",
                                         "[[[[[[[[",
                                         "\"\"",
                                         " "};
    int runs = 0;
    for (int round = 0; round < 6000; round++) {
        int pick = (int)(mut_next() % (uint64_t)(n_ok ? n_ok : 1)), s = ok[pick].seed;
        size_t n = sizes[s];
        memcpy(buf, seeds[s], n);
        int muts = 1 + (int)(mut_next() % 4);
        for (int k = 0; k < muts && n > 0; k++) {
            size_t at = (size_t)(mut_next() % n);
            switch (mut_next() % 5) {
            case 0:
                buf[at] ^= (unsigned char)(1u << (mut_next() % 8));
                break;
            case 1: { /* insert a token */
                const char *t = tokens[mut_next() % (sizeof tokens / sizeof tokens[0])];
                size_t len = strlen(t);
                if (n + len < sizeof buf) {
                    memmove(buf + at + len, buf + at, n - at);
                    memcpy(buf + at, t, len);
                    n += len;
                }
                break;
            }
            case 2: { /* delete a chunk */
                size_t len = (size_t)(mut_next() % 24) % (n - at + 1);
                memmove(buf + at, buf + at + len, n - at - len);
                n -= len;
                break;
            }
            case 3: { /* duplicate a chunk (a line, often) */
                size_t len = (size_t)(mut_next() % 200) % (n - at + 1);
                if (n + len < sizeof buf) {
                    memmove(buf + at + len, buf + at, n - at);
                    n += len;
                }
                break;
            }
            default:
                n = at; /* truncate */
            }
        }
        /* the reader and template: the seed's, or now and then another one */
        buf[n] = (unsigned char)(mut_next() % 8 ? ok[pick].target : (int)(mut_next() % 64));
        fuzz_jsonl_one(buf, n + 1);
        runs++;
    }
    fprintf(stderr,
            "  %d seeds x %d targets and %d mutated inputs through fuzz_jsonl_one; ds_open "
            "succeeded %d + %d times\n",
            nseeds, targets, runs, seeds_opened, fuzz_jsonl_opened - seeds_opened);
    /* the seeds open (each dataset finds its fields in its own and the all-fields records) and
     * mutants still get past the parser */
    CHECK(seeds_opened > 3 * targets && fuzz_jsonl_opened - seeds_opened > 500);
}

int main(void) {
    alarm(900); /* a FIFO that blocks open() fails the test instead of hanging it */
    test_counts();
    test_golden();
    test_exact();
    test_categories();
    test_jsonl();
    test_select();
    test_errors();
    test_file_kinds();
    test_help();
    test_jsonl_mutations();
    return test_finish("test_datasets");
}
