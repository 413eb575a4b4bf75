/* paper_recipes.c: the papers' experiments, their settings and their published figures, one
 * table each (paper.h says how they fit together and how the papers' parameter names map to
 * decbench's).
 *
 * Sources, cited row by row in the `cite` of every figure:
 *   - Ouroboros: Zhao et al., "Ouroboros: Generating Longer Drafts Phrase by Phrase for Faster
 *     Speculative Decoding", arXiv 2402.13720 (Tables 2, 3, 4, 7; Figures 4, 5), as transcribed
 *     in ../shared/docs/paper_tables.md; its benchmark scripts (thunlp/Ouroboros@7dac65b,
 *     benchmark/test_*.py) for prompts and limits (datasets/README.md).
 *   - Lookahead decoding: Fu et al., arXiv 2402.02057, and its blog (lmsys.org, Nov 2023:
 *     Table 1 configurations, Figure 6 scaling law, Figure 7 speed-ups), as in paper_tables.md;
 *     hao-ai-lab/LookaheadDecoding@eed010d applications/ for prompts and limits.
 *   - Spec-Bench: Xia et al., arXiv 2401.07851; hemingkx/Spec-Bench@fd2c1cd Leaderboard.md (A100
 *     tables), eval.sh (lookahead level 5, window 7, guess 7), evaluation/inference_pld.py
 *     (matching window 3, 10 candidate tokens), evaluation/eval.py (3 warm-up passes),
 *     evaluation/inference_eagle.py, inference_eagle2.py and inference_medusa.py (the trees) with
 *     the model code they call (model/eagle/, model/eagle2/, model/medusa/).
 * Where a paper gives a value only in a figure, the table says so in words instead of a number. */
#include <stdio.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/paper.h"
#include "util/err.h"

/* ---- model pairs and sizes ------------------------------------------------------------------ */

static const paper_model pairs[] = {
    {"yi", "Yi-34b/6b", 0},
    {"deepseek", "DeepSeek-34b/7b", 0},
    {"codellama", "CodeLlama-34b/7b", 0},
    {"llama2", "Llama-2 70b/7b", 0},
};

static const paper_model sizes[] = {
    {"7b", "7B", 7e9},
    {"13b", "13B", 13e9},
    {"33b", "33B", 33e9},
};

/* ---- Ouroboros Table 7 (as printed: beta counts the key token) ------------------------------- */

static const paper_setting table7[] = {
    /* task, pair, spec gamma, lookahead W, lookahead beta, Ouroboros gamma, W, beta, K */
    {"humaneval", "yi", 12, 16, 7, 12, 20, 8, 3},
    {"humaneval", "deepseek", 3, 16, 7, 11, 20, 8, 3},
    {"humaneval", "codellama", 5, 17, 5, 10, 20, 7, 3},
    {"mbpp", "yi", 6, 16, 6, 6, 18, 6, 3},
    {"mbpp", "deepseek", 5, 15, 7, 7, 15, 6, 3},
    {"mbpp", "codellama", 4, 16, 6, 8, 16, 7, 3},
    {"gsm8k", "yi", 7, 15, 6, 4, 15, 7, 3},
    {"gsm8k", "llama2", 7, 15, 6, 6, 17, 7, 3},
    {"cnn_dm", "yi", 5, 15, 6, 10, 15, 6, 3},
    {"cnn_dm", "llama2", 4, 16, 5, 4, 13, 6, 3},
    {"wmt", "yi", 2, 15, 6, 5, 16, 6, 3},
    {"wmt", "llama2", 5, 18, 7, 4, 13, 6, 3},
};

/* ---- lookahead decoding's A100 configurations (blog Table 1, G = W) -------------------------- */

static const paper_lade_config lade_configs[] = {
    {"7b", 15, 5, 15, 120},
    {"13b", 10, 5, 10, 80},
    {"33b", 7, 5, 7, 56},
};

/* ---- the recipes ------------------------------------------------------------------------------
 */

#define GREEDY(label)                                                                              \
    { .row = label, .alg = PAPER_GREEDY }
/* Ouroboros Table 2 / Figure 4 rows, with the Table 7 settings of the part's task. */
#define OURO_ROWS                                                                                  \
    GREEDY("greedy"), {.row = "speculative", .alg = PAPER_SPEC},                                   \
        {.row = "lookahead", .alg = PAPER_LOOKAHEAD},                                              \
        {.row = "Ouroboros", .alg = PAPER_OUROBOROS, .extra = "warm=0"},                           \
        {.row = "Ouroboros †", .alg = PAPER_OUROBOROS, .extra = "warm=1"},
/* Table 3's settings: Yi-34b/6b on HumanEval, warm start off. */
#define T3(label, switches)                                                                        \
    {                                                                                              \
        .row = label, .alg = PAPER_OUROBOROS, .gamma = 12, .W = 20, .beta = 8, .K = 3,             \
        .extra = "warm=0," switches, .varies = "suffix,inspire,refine"                             \
    }
/* Table 4's settings, warm start off or on. */
#define T4(warm)                                                                                   \
    {                                                                                              \
        .group = warm ? "warm start on" : "warm start off", .alg = PAPER_OUROBOROS, .gamma = 6,    \
        .W = 18, .beta = 6, .K = 3, .extra = warm ? "warm=1" : "warm=0"                            \
    }
#define T4_PART(name_, title_, order_, ...)                                                        \
    {                                                                                              \
        .name = name_, .title = title_, .datasets = "mbpp/validation,gsm8k,cnn_dm,wmt_de_en",      \
        .entries = 20, .seeded = 1, .order = order_, .dec = {                                      \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
/* Figure 5: K suffixes with Yi-34b/6b's HumanEval settings; K = 0 is suffix=0. */
#define F5(label, k, switches)                                                                     \
    {                                                                                              \
        .row = label, .alg = PAPER_OUROBOROS, .gamma = 12, .W = 20, .beta = 8, .K = k,             \
        .extra = "warm=0" switches, .varies = "K,suffix"                                           \
    }
/* The scaling law: W = 1, 2, 4, 8, 16 at one N, G = W. */
#define LA(n, w)                                                                                   \
    { .row = "W=" #w, .group = "N=" #n, .alg = PAPER_LOOKAHEAD, .W = w, .N = n, .G = w }
#define SCALE(n) LA(n, 1), LA(n, 2), LA(n, 4), LA(n, 8), LA(n, 16)
#define LADE_CONFIG(size, w, n)                                                                    \
    {                                                                                              \
        .row = "W=" #w ",N=" #n ",G=" #w, .group = "A100 configuration for " size,                 \
        .alg = PAPER_LOOKAHEAD, .W = w, .N = n, .G = w                                             \
    }
#define SPECBENCH_ROWS                                                                             \
    GREEDY("greedy (vanilla)"),                                                                    \
        {.row = "SpS", .alg = PAPER_SPEC, .gamma = 5, .extra = "adapt=1,gamma_max=64"},            \
        {.row = "PLD", .alg = PAPER_PLD, .ngram = 3, .k = 10, .extra = "match=first,miss=100"},    \
        {.row = "Lookahead", .alg = PAPER_LOOKAHEAD, .W = 7, .N = 5, .G = 7},                      \
        {.row = "EAGLE", .alg = PAPER_EAGLE},                                                      \
        {.row = "EAGLE2", .alg = PAPER_EAGLE2, .total_tokens = 60, .depth = 5, .top_k = 10},       \
        {.row = "Medusa", .alg = PAPER_MEDUSA, .extra = "tree=mc_sim_7b_63"},

#define TPS_COL                                                                                    \
    { "paper tok/s", "paper_tps", "%.2f" }
#define SPEEDUP_COL                                                                                \
    { "paper speed-up", "paper_speedup", "%.2fx" }

/* The reference implementation each algorithm stands for (references[] below). */
#define OURO_REFS                                                                                  \
    { [PAPER_SPEC] = "ouroboros-sd", [PAPER_LOOKAHEAD] = "lade", [PAPER_OUROBOROS] = "ouroboros" }
#define LADE_REFS                                                                                  \
    { [PAPER_LOOKAHEAD] = "lade" }
#define SB_REFS                                                                                    \
    {                                                                                              \
        [PAPER_SPEC] = "specbench-sps", [PAPER_PLD] = "specbench-pld",                             \
        [PAPER_LOOKAHEAD] = "specbench-lade", [PAPER_EAGLE] = "specbench-eagle",                   \
        [PAPER_EAGLE2] = "specbench-eagle2", [PAPER_MEDUSA] = "specbench-medusa"                   \
    }

static const paper_recipe recipes[] = {
    {
        .name = "ouro-table2",
        .title = "Ouroboros Table 2: decoding speed on GSM8K, CNN/DM and WMT16",
        .source = "Ouroboros (Zhao et al., arXiv 2402.13720), Table 2; settings Table 7",
        .hardware = "A100 GPUs, fp16",
        .models = "Yi-34b/6b and Llama-2 70b/7b (target/draft)",
        .refs = OURO_REFS,
        .match = PAPER_BY_PAIR,
        .group_header = "task",
        .row_header = "algorithm",
        .figures = "tokens_per_step,tps_e2e,speedup_e2e",
        .cols = {TPS_COL, SPEEDUP_COL},
        .notes = "Entries: 100 of each dataset drawn with --shuffle 13720 (the paper samples 100 "
                 "without saying which). The CNN/DM and WMT files here are Spec-Bench's 80 "
                 "CNN/DM articles and 80 WMT14 de-en pairs (datasets/README.md): all 80 run.\n"
                 "Prompts and limits: Ouroboros' test_gsm8k.py (8-shot chain of thought, 256), "
                 "test_cnndm.py (128), test_wmt16.py (64); --chat takes their chat-model prompts "
                 "for CNN/DM and WMT16.\n"
                 "Ouroboros = a new phrase pool per entry (warm=0); Ouroboros † = one pool over "
                 "the task's entries (warm=1, the paper's warm start).",
        .parts =
            {
                {.name = "gsm8k",
                 .title = "GSM8K",
                 .task = "gsm8k",
                 .datasets = "gsm8k",
                 .entries = 100,
                 .seeded = 1,
                 .max_new = 256,
                 .dec = {OURO_ROWS}},
                {.name = "cnn_dm",
                 .title = "CNN/DM",
                 .task = "cnn_dm",
                 .datasets = "cnn_dm",
                 .chat = "ouroboros-chat",
                 .entries = 100,
                 .seeded = 1,
                 .max_new = 128,
                 .dec = {OURO_ROWS}},
                {.name = "wmt",
                 .title = "WMT16",
                 .task = "wmt",
                 .datasets = "wmt_de_en",
                 .chat = "ouroboros-chat",
                 .entries = 100,
                 .seeded = 1,
                 .max_new = 64,
                 .dec = {OURO_ROWS}},
            },
    },
    {
        .name = "ouro-fig4",
        .title = "Ouroboros Figure 4: decoding speed on HumanEval and MBPP",
        .source = "Ouroboros (Zhao et al., arXiv 2402.13720), Figure 4; settings Table 7",
        .hardware = "A100 GPUs, fp16",
        .models = "Yi-34b/6b, DeepSeek-Coder 34b/7b and CodeLlama-34b/7b (target/draft)",
        .refs = OURO_REFS,
        .match = PAPER_BY_PAIR,
        .group_header = "task",
        .row_header = "algorithm",
        .figures = "tokens_per_step,tps_e2e,speedup_e2e",
        .cols = {TPS_COL, SPEEDUP_COL},
        .notes = "HumanEval: all 164 problems, Ouroboros' test_human_eval.py prompt (--chat: its "
                 "CodeLlama chat prompt); MBPP: the validation split (task_id 511-600, 90), "
                 "test_mbpp.py's 3-shot prompt; 512 new tokens each.\n"
                 "Figure 4 gives its values as bars only. Its text: up to 61.2 tok/s, 3.9x over "
                 "greedy, 2.8x over speculative and 1.9x over lookahead decoding (the best bars). "
                 "The shaded parts of its bars are warm start's gain: Ouroboros † here.",
        .parts =
            {
                {.name = "humaneval",
                 .title = "HumanEval",
                 .task = "humaneval",
                 .datasets = "humaneval",
                 .chat = "ouroboros-chat",
                 .max_new = 512,
                 .dec = {OURO_ROWS}},
                {.name = "mbpp",
                 .title = "MBPP",
                 .task = "mbpp",
                 .datasets = "mbpp/validation",
                 .max_new = 512,
                 .dec = {OURO_ROWS}},
            },
    },
    {
        .name = "ouro-table3",
        .title = "Ouroboros Table 3: ablation of candidate inspiration, suffixes and refinement",
        .source = "Ouroboros (Zhao et al., arXiv 2402.13720), Table 3",
        .hardware = "A100 GPUs, fp16",
        .models = "Yi-34b/6b (target/draft)",
        .refs = OURO_REFS,
        .match = PAPER_FIXED,
        .fixed_key = "yi",
        .needs_draft = 1,
        .group_header = "task",
        .row_header = "Ouroboros with",
        .figures = "tokens_per_step,tau,tps_e2e,speedup_e2e",
        .cols = {TPS_COL},
        .notes = "Yi-34b/6b's HumanEval settings whatever the model (gamma 12, W 20, beta 8: "
                 "decbench beta 6; K 3), warm start off, all 164 HumanEval problems, 512 new "
                 "tokens. The switches: inspiration = inspire, suffixes = suffix (K suffix "
                 "branches), refinement = refine (it rewrites the suffixes used, so the paper "
                 "pairs it with suffixes).",
        .parts =
            {
                {.name = "humaneval",
                 .title = "HumanEval",
                 .datasets = "humaneval",
                 .chat = "ouroboros-chat",
                 .max_new = 512,
                 .dec =
                     {
                         GREEDY("greedy"),
                         T3("none", "suffix=0,inspire=0,refine=0"),
                         T3("inspiration", "suffix=0,inspire=1,refine=0"),
                         T3("suffixes", "suffix=1,inspire=0,refine=0"),
                         T3("inspiration + suffixes", "suffix=1,inspire=1,refine=0"),
                         T3("suffixes + refinement", "suffix=1,inspire=0,refine=1"),
                         T3("all three", "suffix=1,inspire=1,refine=1"),
                     }},
            },
    },
    {
        .name = "ouro-table4",
        .title = "Ouroboros Table 4: context locality and warm start",
        .source = "Ouroboros (Zhao et al., arXiv 2402.13720), Table 4",
        .hardware = "A100 GPUs, fp16",
        .models = "a pair the paper does not name (Yi-34b/6b's settings here)",
        .refs = OURO_REFS,
        .match = PAPER_FIXED,
        .fixed_key = "yi",
        .needs_draft = 1,
        .group_header = "warm start",
        .row_header = "order",
        .figures = "tokens_per_step,tps_e2e,speedup_e2e",
        .cols = {TPS_COL},
        .notes = "gamma 6, W 18, beta 6 (decbench beta 4), K 3 whatever the model: Table 7's "
                 "MBPP settings of Yi-34b/6b (the paper does not name Table 4's pair).\n"
                 "20 entries of each of MBPP (validation split), GSM8K, CNN/DM and WMT drawn with "
                 "--shuffle 13720, each with its new-token limit (512, 256, 128, 64: the paper's "
                 "Table 2 and Figure 4 limits; Table 4's own are not transcribed).\n"
                 "shuffle = the 80 entries in a seeded random order (--order shuffle:13720); "
                 "CN=C = C consecutive entries of each dataset in turn (--order interleave:C; "
                 "CN=20 is one dataset after another). Figures over all 80 entries.",
        .parts =
            {
                T4_PART("shuffle", "shuffle", "shuffle:13720", T4(0), T4(1)),
                T4_PART("cn20", "CN=20", "interleave:20", T4(0), T4(1)),
                T4_PART("cn10", "CN=10", "interleave:10", T4(1)),
                T4_PART("cn4", "CN=4", "interleave:4", T4(1)),
                T4_PART("cn1", "CN=1", "interleave:1", T4(1)),
            },
    },
    {
        .name = "ouro-fig5",
        .title = "Ouroboros Figure 5: the number of candidate suffixes (top-k), and inspiration "
                 "on GSM8K",
        .source = "Ouroboros (Zhao et al., arXiv 2402.13720), Figure 5 and its text",
        .hardware = "A100 GPUs, fp16",
        .models = "Yi-34b/6b (target/draft)",
        .refs = OURO_REFS,
        .match = PAPER_FIXED,
        .fixed_key = "yi",
        .needs_draft = 1,
        .group_header = "task",
        .row_header = "setting",
        .figures = "tokens_per_step,tau,tps_e2e,speedup_e2e",
        .cols = {TPS_COL},
        .notes =
            "Figure 5 sweeps the top-k candidate suffixes on HumanEval with Yi-34b/6b's "
            "settings (gamma 12, W 20, beta 8: decbench beta 6) and gives its values in the "
            "figure only; K = 0..6 around the paper's K = 3 is our range; K=0 is suffix=0. "
            "Warm start off, as in Table 3.\n"
            "GSM8K: candidate inspiration on and off with Yi-34b/6b's GSM8K settings (Table 7: "
            "gamma 4, W 15, beta 7: decbench beta 5; K 3), warm start off, 100 entries drawn "
            "with --shuffle 13720, 256 new tokens.",
        .parts =
            {
                {.name = "humaneval",
                 .title = "HumanEval",
                 .datasets = "humaneval",
                 .chat = "ouroboros-chat",
                 .max_new = 512,
                 .dec =
                     {
                         GREEDY("greedy"),
                         F5("K=0", 3, ",suffix=0"),
                         F5("K=1", 1, ""),
                         F5("K=2", 2, ""),
                         F5("K=3", 3, ""),
                         F5("K=4", 4, ""),
                         F5("K=5", 5, ""),
                         F5("K=6", 6, ""),
                     }},
                {.name = "gsm8k-inspiration",
                 .title = "GSM8K",
                 .datasets = "gsm8k",
                 .entries = 100,
                 .seeded = 1,
                 .max_new = 256,
                 .dec =
                     {
                         GREEDY("greedy"),
                         {.row = "with inspiration",
                          .alg = PAPER_OUROBOROS,
                          .gamma = 4,
                          .W = 15,
                          .beta = 7,
                          .K = 3,
                          .extra = "warm=0,inspire=1",
                          .varies = "inspire"},
                         {.row = "without inspiration",
                          .alg = PAPER_OUROBOROS,
                          .gamma = 4,
                          .W = 15,
                          .beta = 7,
                          .K = 3,
                          .extra = "warm=0,inspire=0",
                          .varies = "inspire"},
                     }},
            },
    },
    {
        .name = "lade-scaling",
        .title = "Lookahead decoding's scaling law: tokens per step against W for N = 3..7",
        .source = "Lookahead decoding (Fu et al., arXiv 2402.02057; blog Figure 6)",
        .hardware = "A100, fp16 (LLaMA-2-7B-chat)",
        .models = "LLaMA-2-7B-chat",
        .refs = LADE_REFS,
        .match = PAPER_FIXED,
        .fixed_key = "7b",
        .group_header = "N",
        .row_header = "W (G = W)",
        .figures = "tokens_per_step,rows_per_step",
        .notes = "The law: the steps needed fall linearly with log W once N is large enough "
                 "(G = W). W = 1, 2, 4, 8, 16 (log-spaced: the figure's W values are not "
                 "transcribed), N = 3..7. MT-Bench, both turns, the Llama-2 chat prompt and 1024 "
                 "new tokens (LADE's eval_mtbench.py). The paper gives this as a figure only: "
                 "compare its shape (tokens/step rising linearly in log W, higher with N), not "
                 "numbers. `decbench plot --kind scaling,heatmap` draws it from these runs.",
        .parts =
            {
                {.name = "mt_bench",
                 .title = "MT-Bench",
                 .datasets = "mt_bench",
                 .tmpl = "lookahead",
                 .max_new = 1024,
                 .turns = 2,
                 .dec = {GREEDY("greedy"), SCALE(3), SCALE(4), SCALE(5), SCALE(6), SCALE(7)}},
            },
    },
    {
        .name = "lade-configs",
        .title = "Lookahead decoding's A100 configurations per model size",
        .source = "Lookahead decoding (Fu et al., arXiv 2402.02057; blog Table 1)",
        .hardware = "A100, fp16",
        .models = "the blog's 7B, 13B and 33B models",
        .refs = LADE_REFS,
        .match = PAPER_BY_SIZE,
        .group_header = "configuration",
        .row_header = "lookahead",
        .figures = "tokens_per_step,rows_per_step,tps_e2e,speedup_e2e",
        .cols = {{"paper extra FLOPs/step", "paper_flops_per_step", "%.0fx"}},
        .notes = "The blog's Table 1: a good configuration per model size on A100 and its extra "
                 "FLOPs per step in multiples of one token's ((W + G)(N - 1)); our rows/step are "
                 "the rows the target computed per step (fewer while the n-gram pool holds fewer "
                 "than G candidates), the same unit. MT-Bench, both turns, the Llama-2 chat "
                 "prompt, 1024 new tokens. lade-speedups uses the configuration of the size "
                 "nearest the model.",
        .parts =
            {
                {.name = "mt_bench",
                 .title = "MT-Bench",
                 .datasets = "mt_bench",
                 .tmpl = "lookahead",
                 .max_new = 1024,
                 .turns = 2,
                 .dec = {GREEDY("greedy"), LADE_CONFIG("7B", 15, 5), LADE_CONFIG("13B", 10, 5),
                         LADE_CONFIG("33B", 7, 5)}},
            },
    },
    {
        .name = "lade-speedups",
        .title = "Lookahead decoding's speed-ups on MT-Bench, HumanEval and GSM8K",
        .source = "Lookahead decoding (Fu et al., arXiv 2402.02057; blog Figure 7)",
        .hardware = "A100, fp16",
        .models = "LLaMA-2-Chat (MT-Bench), CodeLlama (HumanEval), CodeLlama-Instruct (GSM8K)",
        .refs = LADE_REFS,
        .match = PAPER_BY_SIZE,
        .group_header = "task",
        .row_header = "algorithm",
        .figures = "tokens_per_step,tps_e2e,speedup_e2e",
        .notes = "Lookahead's W, N, G: the blog's A100 configuration (Table 1) of the size "
                 "nearest the model. MT-Bench: both turns, the Llama-2 chat prompt, 1024 new "
                 "tokens (LADE's eval_mtbench.py, LLaMA-2-Chat); HumanEval: the raw prompts, 512 "
                 "(eval_humaneval.py, CodeLlama); GSM8K (CodeLlama-Instruct): LADE ships no "
                 "script: 100 entries drawn with --shuffle 13720, the question in the Llama-2 chat "
                 "wrapping, 256 new tokens.\n"
                 "The paper's figures are the blog's words for its Figure 7; the arXiv paper's "
                 "per-model figures (up to 1.8x on MT-Bench, its abstract) are in its figures, "
                 "not transcribed.",
        .parts =
            {
                {.name = "mt_bench",
                 .title = "MT-Bench",
                 .datasets = "mt_bench",
                 .tmpl = "lookahead",
                 .max_new = 1024,
                 .turns = 2,
                 .dec = {GREEDY("greedy"), {.row = "lookahead", .alg = PAPER_LOOKAHEAD}}},
                {.name = "humaneval",
                 .title = "HumanEval",
                 .datasets = "humaneval",
                 .tmpl = "lookahead",
                 .max_new = 512,
                 .dec = {GREEDY("greedy"), {.row = "lookahead", .alg = PAPER_LOOKAHEAD}}},
                {.name = "gsm8k",
                 .title = "GSM8K",
                 .datasets = "gsm8k",
                 .tmpl = "chat",
                 .entries = 100,
                 .seeded = 1,
                 .max_new = 256,
                 .dec = {GREEDY("greedy"), {.row = "lookahead", .alg = PAPER_LOOKAHEAD}}},
            },
    },
    {
        .name = "specbench",
        .title = "Spec-Bench: speed-up per task and mean accepted tokens",
        .source = "Spec-Bench (Xia et al., arXiv 2401.07851), Leaderboard.md (A100)",
        .hardware = "A100 80GB, fp16 (Vicuna-v1.3)",
        .models = "Vicuna-v1.3 7B, 13B and 33B; SpS drafts with Vicuna-68m",
        .refs = SB_REFS,
        .match = PAPER_BY_SIZE,
        .repeats = 3,
        .warmup = 3,
        .group_header = "task",
        .row_header = "method",
        .figures = "mean_accepted_tokens,speedup_specbench,tps_e2e",
        .cols = {SPEEDUP_COL, {"paper mean acc. tokens", "paper_mean_accepted_tokens", "%.2f"}},
        .notes = "All 480 questions (MT-bench's 80 with both turns), the Vicuna v1.1 prompt, 1024 "
                 "new tokens, greedy, 3 runs and 3 warm-up passes (Spec-Bench's eval.py). Its "
                 "speed-up is the mean per question of the turns' tok/s over greedy's, per run, "
                 "averaged over runs (our speed-up SB); its #Mean Accepted Tokens is our mean acc. "
                 "tokens (SB). Its methods with its settings: Lookahead N=5, W=7, G=7 (eval.sh) "
                 "run as LADE's loop (preset=lade); PLD matching window 3, 10 candidate tokens "
                 "(inference_pld.py) with its candidate rule (match=first, miss=100); SpS with a "
                 "draft model (Vicuna-68m there): Hugging Face's assisted generation, 5 tokens "
                 "adjusted +2/-1 (adapt=1). SpS needs --draft.\nEAGLE: EAGLE-1's tree "
                 "mc_sim_7b_63 (inference_eagle.py); EAGLE2: its dynamic tree with total_token "
                 "60, depth 5, top_k 10 (inference_eagle2.py's defaults, which eval.sh keeps); "
                 "both with the same head (eval.sh's Eagle_PATH). Medusa: 4 heads, the tree "
                 "mc_sim_7b_63 (inference_medusa.py), greedy at T = 0. The heads are the "
                 "target's own: --set eagle:head=DIR --set medusa:head=DIR; without them those "
                 "rows are not run and show the paper's figures alone. Not in the recipe: the "
                 "leaderboard's Hydra (not implemented here).\nThe paper's figures: the A100 "
                 "table of the Vicuna size nearest the model.",
        .parts =
            {
                {.name = "all",
                 .title = "Overall",
                 .datasets = "spec_bench/mt_bench,spec_bench/translation,spec_bench/"
                             "summarization,spec_bench/qa,spec_bench/math_reasoning,spec_bench/"
                             "rag",
                 .max_new = 1024,
                 .turns = 2,
                 .per_dataset = 1,
                 .dec = {SPECBENCH_ROWS}},
            },
    },
};

#define N_RECIPES (int)(sizeof recipes / sizeof recipes[0])

/* ---- the papers' figures -----------------------------------------------------------------------
 */

/* Ouroboros Table 2: one line per (task, pair, algorithm): tok/s and speed-up. */
#define T2(task, pair, row, tps, up)                                                               \
    { "ouro-table2", pair, task, row, {tps, up}, NULL, "Table 2" }
#define T2_TASK(task, pair, g, s, l, o, ow)                                                        \
    T2(task, pair, "greedy", g), T2(task, pair, "speculative", s), T2(task, pair, "lookahead", l), \
        T2(task, pair, "Ouroboros", o), T2(task, pair, "Ouroboros †", ow)
#define V(a, b) a, b
/* Spec-Bench's A100 leaderboard: one line per (size, method): the six tasks' speed-ups, then
 * #Mean Accepted Tokens and the overall speed-up. */
#define SB_CITE "Leaderboard.md, A100"
#define SB1(size, method, group, up, tau)                                                          \
    { "specbench", size, group, method, {up, tau}, NULL, SB_CITE }
#define SB(size, method, mt, tr, su, qa, ma, rag, tau, all)                                        \
    SB1(size, method, "Multi-turn Conversation", mt, NULL),                                        \
        SB1(size, method, "Translation", tr, NULL), SB1(size, method, "Summarization", su, NULL),  \
        SB1(size, method, "Question Answering", qa, NULL),                                         \
        SB1(size, method, "Mathematical Reasoning", ma, NULL),                                     \
        SB1(size, method, "Retrieval-aug. Generation", rag, NULL),                                 \
        SB1(size, method, "Overall", all, tau)

static const paper_value values[] = {
    T2_TASK("GSM8K", "yi", V("15.33", "1.00"), V("16.99", "1.11"), V("25.14", "1.64"),
            V("26.41", "1.72"), V("28.23", "1.84")),
    T2_TASK("GSM8K", "llama2", V("8.96", "1.00"), V("16.86", "1.88"), V("13.77", "1.54"),
            V("22.18", "2.48"), V("24.03", "2.68")),
    T2_TASK("CNN/DM", "yi", V("14.62", "1.00"), V("17.82", "1.22"), V("18.77", "1.28"),
            V("21.24", "1.45"), V("22.65", "1.55")),
    T2_TASK("CNN/DM", "llama2", V("8.12", "1.00"), V("12.77", "1.57"), V("9.47", "1.17"),
            V("14.62", "1.80"), V("14.67", "1.81")),
    T2_TASK("WMT16", "yi", V("14.78", "1.00"), V("17.48", "1.18"), V("17.98", "1.22"),
            V("19.75", "1.34"), V("19.94", "1.35")),
    T2_TASK("WMT16", "llama2", V("9.52", "1.00"), V("14.72", "1.55"), V("14.65", "1.54"),
            V("19.11", "2.01"), V("19.27", "2.02")),

    {"ouro-fig4", NULL, NULL, NULL, {NULL}, "bars only", "Figure 4"},

    {"ouro-table3", NULL, NULL, "none", {"49.90"}, NULL, "Table 3"},
    {"ouro-table3", NULL, NULL, "inspiration", {"48.90"}, NULL, "Table 3"},
    {"ouro-table3", NULL, NULL, "suffixes", {"55.92"}, NULL, "Table 3"},
    {"ouro-table3", NULL, NULL, "inspiration + suffixes", {"56.97"}, NULL, "Table 3"},
    {"ouro-table3", NULL, NULL, "suffixes + refinement", {"57.23"}, NULL, "Table 3"},
    {"ouro-table3", NULL, NULL, "all three", {"58.18"}, NULL, "Table 3"},

    {"ouro-table4", NULL, "warm start off", "shuffle", {"32.68"}, NULL, "Table 4"},
    {"ouro-table4", NULL, "warm start off", "CN=20", {"32.53"}, NULL, "Table 4"},
    {"ouro-table4", NULL, "warm start on", "shuffle", {"35.39"}, NULL, "Table 4"},
    {"ouro-table4", NULL, "warm start on", "CN=20", {"36.00"}, NULL, "Table 4"},
    {"ouro-table4", NULL, "warm start on", "CN=10", {"35.32"}, NULL, "Table 4"},
    {"ouro-table4", NULL, "warm start on", "CN=4", {"34.83"}, NULL, "Table 4"},
    {"ouro-table4", NULL, "warm start on", "CN=1", {"35.36"}, NULL, "Table 4"},

    {"ouro-fig5", NULL, "GSM8K", "with inspiration", {"26.41"}, NULL, "text beside Figure 5"},
    {"ouro-fig5", NULL, "GSM8K", "without inspiration", {"25.40"}, NULL, "text beside Figure 5"},
    {"ouro-fig5", NULL, "HumanEval", "greedy", {NULL}, NULL, NULL},
    {"ouro-fig5", NULL, "HumanEval", NULL, {NULL}, "figure only", "Figure 5"},

    {"lade-scaling", NULL, NULL, "greedy", {NULL}, NULL, NULL},
    {"lade-scaling", NULL, NULL, NULL, {NULL}, "figure only", "blog Figure 6"},

    {"lade-configs", NULL, "A100 configuration for 7B", NULL, {"120"}, NULL, "blog Table 1"},
    {"lade-configs", NULL, "A100 configuration for 13B", NULL, {"80"}, NULL, "blog Table 1"},
    {"lade-configs", NULL, "A100 configuration for 33B", NULL, {"56"}, NULL, "blog Table 1"},

    {"lade-speedups",
     NULL,
     "MT-Bench",
     "lookahead",
     {NULL},
     "roughly 1.5x (LLaMA-2-Chat)",
     "blog Figure 7"},
    {"lade-speedups",
     NULL,
     "HumanEval",
     "lookahead",
     {NULL},
     "more than 2x (CodeLlama)",
     "blog Figure 7"},
    {"lade-speedups",
     NULL,
     "GSM8K",
     "lookahead",
     {NULL},
     "1.8x (CodeLlama-Instruct)",
     "blog Figure 7"},

    SB1(NULL, "greedy (vanilla)", NULL, "1.00", NULL),
    SB("7b", "SpS", "1.66", "1.13", "1.71", "1.50", "1.47", "1.66", "2.28", "1.52"),
    SB("7b", "PLD", "1.60", "1.06", "2.66", "1.19", "1.62", "1.86", "1.75", "1.66"),
    SB("7b", "Lookahead", "1.47", "1.14", "1.36", "1.25", "1.57", "1.22", "1.64", "1.34"),
    SB("13b", "SpS", "1.67", "1.15", "1.71", "1.43", "1.58", "1.70", "2.19", "1.54"),
    SB("13b", "PLD", "1.54", "1.03", "2.30", "1.05", "1.65", "1.82", "1.67", "1.56"),
    SB("13b", "Lookahead", "1.43", "1.09", "1.28", "1.18", "1.59", "1.21", "1.63", "1.30"),
    SB("33b", "SpS", "1.70", "1.27", "1.71", "1.52", "1.66", "1.60", "2.01", "1.57"),
    SB("33b", "PLD", "1.42", "1.06", "1.93", "1.07", "1.54", "1.42", "1.54", "1.40"),
    SB("33b", "Lookahead", "1.32", "1.10", "1.20", "1.17", "1.56", "1.15", "1.61", "1.25"),
    SB("7b", "EAGLE", "2.45", "1.77", "2.08", "1.93", "2.44", "1.87", "3.58", "2.10"),
    SB("7b", "EAGLE2", "2.84", "1.88", "2.34", "2.15", "2.79", "2.13", "4.34", "2.36"),
    SB("7b", "Medusa", "1.97", "1.65", "1.57", "1.65", "1.94", "1.49", "2.31", "1.71"),
    SB("13b", "EAGLE", "2.52", "1.84", "2.12", "1.91", "2.52", "2.01", "3.64", "2.16"),
    SB("13b", "EAGLE2", "2.95", "1.96", "2.43", "2.20", "2.95", "2.25", "4.43", "2.46"),
    SB("13b", "Medusa", "2.05", "1.71", "1.62", "1.69", "2.08", "1.61", "2.39", "1.80"),
    SB("33b", "EAGLE", "2.75", "2.04", "2.42", "2.16", "2.97", "2.20", "3.39", "2.43"),
    SB("33b", "EAGLE2", "3.01", "2.10", "2.51", "2.27", "3.30", "2.29", "4.05", "2.59"),
    SB("33b", "Medusa", "1.94", "1.72", "1.58", "1.65", "2.05", "1.56", "2.33", "1.76"),
};

/* Spec-Bench's task names for its categories (its Leaderboard's column heads). */
static const char *const dataset_titles[][2] = {
    {"spec_bench/mt_bench", "Multi-turn Conversation"},
    {"spec_bench/translation", "Translation"},
    {"spec_bench/summarization", "Summarization"},
    {"spec_bench/qa", "Question Answering"},
    {"spec_bench/math_reasoning", "Mathematical Reasoning"},
    {"spec_bench/rag", "Retrieval-aug. Generation"},
};

/* ---- the reference implementations, in decbench's parameters --------------------------------- */

static const paper_reference references[] = {
    {"lade", "LADE (hao-ai-lab/LookaheadDecoding@eed010d, lade/decoding.py)", PAPER_LOOKAHEAD,
     "refill=lade,full_bonus=0,init=lade,fill_prefill=1,fill_verify=0,share=0,jacobi=0,"
     "seed_pool=0",
     "ALWAYS_FWD_ONE asserted 1 (:873) moves the window one column (:1119-1124); the match loop "
     "emits at most N-1 tokens (:1073-1085, :1196); level 0 from random prompt tokens "
     "(:887-902) in the prompt's own pass (:938-941, :1038-1048); no candidate before the window "
     "is full (:948); candidates fed whole (:950-953); POOL_FROM_PROMPT 0 (:862)"},
    {"specbench-lade",
     "Spec-Bench's Lookahead (hemingkx/Spec-Bench@fd2c1cd, model/lade/decoding.py)",
     PAPER_LOOKAHEAD,
     "refill=lade,full_bonus=0,init=lade,fill_prefill=1,fill_verify=0,share=0,jacobi=0,"
     "seed_pool=0",
     "a copy of LADE's loop: ALWAYS_FWD_ONE 1 (:188, :393-398), copy_from (:212-229), the match "
     "loop (:337-348); level 5, window 7, guess 7 (eval.sh:22)"},
    {"ouroboros", "Ouroboros (thunlp/Ouroboros@7dac65b, ouroboros/ouroboros.py)", PAPER_OUROBOROS,
     "trim=1,lookahead=1,p_min=0,adapt=0",
     "each draft cut to gamma tokens (kv_cache_model.py:28 max_new_tokens = gamma; "
     "models/modeling_llama.py:2121-2124); the draft always runs its lookahead window; a fixed "
     "gamma; phrases of lookahead_level - 1 tokens (cache_engine.py, add_extra_ngram) with "
     "lookahead_level = Table 7's beta - 1 (benchmark/test_*.py)"},
    {"ouroboros-sd", "Ouroboros' speculative baseline (its code is not in thunlp/Ouroboros)",
     PAPER_SPEC, "adapt=0,p_min=0",
     "speculative decoding with Table 7's gamma, a fixed draft length (arXiv 2402.13720, "
     "section 4.1 and Table 7)"},
    {"specbench-pld", "Spec-Bench's PLD (hemingkx/Spec-Bench@fd2c1cd, model/pld/pld.py)", PAPER_PLD,
     "ngram=3,k=10,match=first,miss=100",
     "window 3, 10 tokens (evaluation/inference_pld.py:23-24); the earliest match with all 10 "
     "tokens after it (pld.py:15-47); token 100 when nothing matches (pld.py:93-94)"},
    {"specbench-sps",
     "Spec-Bench's SpS (hemingkx/Spec-Bench@fd2c1cd, model/sps/decoding.py: Hugging Face "
     "4.37.1's assisted decoding)",
     PAPER_SPEC, "gamma=5,adapt=1,p_min=0",
     "AssistedCandidateGenerator (decoding.py:196) with num_assistant_tokens 5, updated after "
     "each step (:365): +2 when every drafted token was accepted, else -1 (transformers==4.37.1, "
     "requirements.txt)"},
    {"specbench-eagle",
     "Spec-Bench's EAGLE (hemingkx/Spec-Bench@fd2c1cd, evaluation/inference_eagle.py, "
     "model/eagle/)",
     PAPER_EAGLE, "mode=static",
     "tree_choices mc_sim_7b_63 (inference_eagle.py --tree-choices default; model/eagle/"
     "choices.py: 25 nodes to depth 5), each node its parent's rank-r token of the head's top "
     "10 (cnets.py:52, :795); greedy posterior at TEMP=0.0 (eval.sh:11, utils.py "
     "evaluate_posterior)"},
    {"specbench-eagle2",
     "Spec-Bench's EAGLE2 (hemingkx/Spec-Bench@fd2c1cd, evaluation/inference_eagle2.py, "
     "model/eagle2/)",
     PAPER_EAGLE2, "mode=dynamic,total_tokens=60,depth=5,top_k=10",
     "--total-token 60, --depth 5, --top-k 10 (inference_eagle2.py defaults, eval.sh passes "
     "none); total_token - 1 drafted nodes beside the current token (cnets.py:502, :754, :768), "
     "depth expansions after the root's top_k (cnets.py:704), top_k nodes expanded per level "
     "by summed log-probability (cnets.py:722-731); greedy posterior at T = 0"},
    {"specbench-medusa",
     "Spec-Bench's Medusa (hemingkx/Spec-Bench@fd2c1cd, evaluation/inference_medusa.py, "
     "model/medusa/)",
     PAPER_MEDUSA, "tree=mc_sim_7b_63,nodes=63,topk=10",
     "medusa_choices mc_sim_7b_63 (inference_medusa.py --medusa-choices default; "
     "medusa_choices.py: 63 nodes to depth 4), TOPK 10 (utils.py:3), num_heads 4 "
     "(inference_medusa.py:200); at temperature 0 the posterior is greedy's: the longest "
     "candidate prefix equal to the target's argmax (utils.py:295-307)"},
};

/* ---- what the recipes run differently ------------------------------------------------------- */

static const paper_difference differences[] = {
    /* LADE, wherever it runs */
    {NULL, "lade", NULL,
     "the initial window's random prompt tokens come from decbench's seeded generator (seed=0); "
     "LADE's random.choice is unseeded (random.seed(10) is commented out, decoding.py:877)"},
    {NULL, "specbench-lade", NULL,
     "the initial window's random prompt tokens come from decbench's seeded generator (seed=0); "
     "Spec-Bench's copy draws them with Python's random seeded 10 (decoding.py:204)"},
    {NULL, "lade", NULL,
     "near max_new the window and the candidates are cut to the tokens still wanted; LADE feeds "
     "them whole and cuts the output (the same tokens, fewer rows in the last steps)"},
    {NULL, "specbench-lade", NULL,
     "near max_new the window and the candidates are cut to the tokens still wanted; LADE feeds "
     "them whole and cuts the output (the same tokens, fewer rows in the last steps)"},
    /* Ouroboros' code */
    {NULL, "ouroboros", NULL,
     "decbench keeps the target's next token after a whole suffix (and, in the draft, a whole "
     "pool phrase) matched; the reference drops it, as LADE does (one more token on such "
     "steps)"},
    {NULL, "ouroboros", NULL,
     "the draft verifies pool phrases from its first pass; the reference only once its "
     "lookahead window is full"},
    {NULL, "ouroboros", NULL,
     "refinement moves the corrected phrase to the newest place of its key; the reference "
     "overwrites the K newest slots (cache_engine.py, update_in_place)"},
    {NULL, "ouroboros-sd", NULL,
     "the paper's speculative baseline is not published: decbench's spec, greedy, with Table 7's "
     "gamma"},
    /* Spec-Bench's loops */
    {NULL, "specbench-sps", NULL,
     "Hugging Face grows the draft length without bound; decbench stops at gamma_max=64. "
     "Whether 4.37.1 carries it from one generate call to the next could not be checked here "
     "(transformers is not installed); decbench starts every prompt at 5"},
    {NULL, "specbench-sps", NULL,
     "Spec-Bench's loop verifies its first draft in the pass that carries the prompt; "
     "decbench's prompt pass yields one token and drafting starts with the next pass"},
    {NULL, "specbench-pld", NULL,
     "Spec-Bench's loop verifies its first draft in the pass that carries the prompt; "
     "decbench's prompt pass yields one token and drafting starts with the next pass"},
    /* Spec-Bench's learned drafters */
    {NULL, "specbench-eagle", NULL,
     "the head is the target's own, named with --set eagle:head=DIR (for the TinyStories "
     "models, trained here: tests/data/heads/, train/); Spec-Bench's is SafeAILab's published "
     "EAGLE-Vicuna-v1.3 head"},
    {NULL, "specbench-eagle2", NULL,
     "the head is the target's own, named with --set eagle:head=DIR (for the TinyStories "
     "models, trained here: tests/data/heads/, train/); Spec-Bench's is SafeAILab's published "
     "EAGLE-Vicuna-v1.3 head"},
    {NULL, "specbench-medusa", NULL,
     "the heads are the target's own, named with --set medusa:head=DIR (for the TinyStories "
     "models, trained here: tests/data/heads/, train/); Spec-Bench's are FasterDecoding's "
     "published medusa-vicuna-v1.3 heads, 4 of them; a file of fewer heads keeps the tree's "
     "entries they can fill"},
    {NULL, "specbench-eagle", NULL,
     "decbench stops at max_new tokens; Spec-Bench's loop stops once more than max_new are out "
     "(keeping the whole last step), after 512 steps (max_steps) or at 1960 tokens of context "
     "(inference_eagle.py:102-108)"},
    {NULL, "specbench-eagle2", NULL,
     "decbench stops at max_new tokens; Spec-Bench's loop stops once more than max_new are out "
     "(keeping the whole last step) or at 2048 - 69 tokens of context (ea_model.py:204, "
     ":299-303)"},
    {NULL, "specbench-medusa", NULL,
     "decbench stops at max_new tokens; Spec-Bench's loop stops once more than max_new are out "
     "(keeping the whole last step) or after 512 steps (inference_medusa.py:60, :95-98)"},
    {NULL, "specbench-eagle", NULL,
     "an end token is a leaf: nothing is drafted below it; the reference drafts past it and "
     "cuts the output at the end token (the same tokens)"},
    {NULL, "specbench-eagle2", NULL,
     "an end token is a leaf: nothing is drafted below it; the reference drafts past it and "
     "cuts the output at the end token (the same tokens); equal scores go to the node created "
     "first, where torch.topk leaves the order of ties open"},
    {NULL, "specbench-medusa", NULL,
     "Medusa's typical acceptance (posterior_threshold 0.09, posterior_alpha 0.3) is not "
     "offered: it accepts tokens the target would not sample, so it is not exact. The "
     "leaderboard runs T = 0 (eval.sh TEMP=0.0), where the reference's posterior is greedy's, "
     "as decbench verifies"},
    {NULL, "specbench-medusa", NULL,
     "the heads run on the accepted row's hidden state only; the reference runs them on every "
     "row of the tree pass and keeps the accepted one's (the same values, fewer products); an "
     "end token is a leaf"},
    /* the data */
    {"ouro-table2", NULL, NULL,
     "GSM8K: 100 entries drawn with --shuffle 13720; the paper samples 100 without saying which"},
    {"ouro-table2", NULL, NULL,
     "CNN/DM and WMT: Spec-Bench's 80 CNN/DM articles and 80 WMT14 de-en pairs (all of them); "
     "the paper sampled 100 of CNN/DM and of WMT16 de-en"},
    {"ouro-table4", NULL, NULL,
     "20 entries of each dataset drawn with --shuffle 13720 (the paper's are not given), with "
     "Table 2's and Figure 4's new-token limits (Table 4's are not given)"},
    {"ouro-fig5", NULL, NULL,
     "GSM8K: 100 entries drawn with --shuffle 13720; the paper samples 100 without saying which"},
    {"lade-scaling", NULL, NULL,
     "W = 1, 2, 4, 8, 16: the figure's own W values are not transcribed"},
    {"lade-speedups", NULL, NULL,
     "GSM8K: LADE ships no script; 100 entries drawn with --shuffle 13720, the Llama-2 chat "
     "wrapping, 256 new tokens"},
    {"specbench", NULL, NULL,
     "Spec-Bench counts greedy's tokens by re-tokenising its text (evaluation/speed.py:50-53); "
     "ours are the tokens it generated"},
};

/* ---- look-ups ------------------------------------------------------------------------------- */

int paper_recipe_count(void) {
    return N_RECIPES;
}

const paper_recipe *paper_recipe_at(int i) {
    return i >= 0 && i < N_RECIPES ? &recipes[i] : NULL;
}

const paper_recipe *paper_recipe_find(const char *name) {
    for (int i = 0; i < N_RECIPES; i++)
        if (!strcmp(recipes[i].name, name)) return &recipes[i];
    return NULL;
}

const paper_model *paper_pairs(int *n) {
    *n = (int)(sizeof pairs / sizeof pairs[0]);
    return pairs;
}

const paper_model *paper_sizes(int *n) {
    *n = (int)(sizeof sizes / sizeof sizes[0]);
    return sizes;
}

const paper_setting *paper_setting_find(const char *task, const char *pair) {
    for (size_t i = 0; task && pair && i < sizeof table7 / sizeof table7[0]; i++)
        if (!strcmp(table7[i].task, task) && !strcmp(table7[i].pair, pair)) return &table7[i];
    return NULL;
}

const paper_lade_config *paper_lade_config_find(const char *size) {
    for (size_t i = 0; size && i < sizeof lade_configs / sizeof lade_configs[0]; i++)
        if (!strcmp(lade_configs[i].size, size)) return &lade_configs[i];
    return NULL;
}

static int matches(const char *pattern, const char *s) {
    return !pattern || (s && !strcmp(pattern, s));
}

const paper_value *paper_value_find(const char *recipe, const char *key, const char *group,
                                    const char *row) {
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        const paper_value *v = &values[i];
        if (!strcmp(v->recipe, recipe) && matches(v->key, key) && matches(v->group, group) &&
            matches(v->row, row))
            return v;
    }
    return NULL;
}

const paper_value *paper_values(int *n) {
    *n = (int)(sizeof values / sizeof values[0]);
    return values;
}

const char *paper_dataset_title(const char *dataset) {
    for (size_t i = 0; i < sizeof dataset_titles / sizeof dataset_titles[0]; i++)
        if (!strcmp(dataset_titles[i][0], dataset)) return dataset_titles[i][1];
    return dataset;
}

const paper_reference *paper_references(int *n) {
    *n = (int)(sizeof references / sizeof references[0]);
    return references;
}

const paper_reference *paper_reference_find(const char *name) {
    for (size_t i = 0; name && i < sizeof references / sizeof references[0]; i++)
        if (!strcmp(references[i].name, name)) return &references[i];
    return NULL;
}

const paper_reference *paper_reference_of(const paper_recipe *rc, paper_alg alg) {
    return alg > PAPER_END && alg < PAPER_N_ALGS ? paper_reference_find(rc->refs[alg]) : NULL;
}

const paper_difference *paper_differences(int *n) {
    *n = (int)(sizeof differences / sizeof differences[0]);
    return differences;
}

int paper_difference_applies(const paper_difference *x, const paper_recipe *rc) {
    if (x->recipe) return !strcmp(x->recipe, rc->name);
    for (int a = PAPER_GREEDY; a < PAPER_N_ALGS; a++)
        if (x->ref && rc->refs[a] && !strcmp(rc->refs[a], x->ref)) return 1;
    return 0;
}

int paper_setting_differs(const char *spec, const char *key, const char *value, char *err) {
    dec_info a, b;
    if (dec_describe(spec, &a, err)) return -1;
    char with[640], ignored[ERR_LEN];
    int len =
        snprintf(with, sizeof with, "%s%c%s=%s", spec, strchr(spec, ':') ? ',' : ':', key, value);
    if (len < 0 || (size_t)len >= sizeof with) return err_set(err, "%s: spec too long", spec);
    /* another value than a preset of the spec sets, or not a value of the parameter */
    if (dec_describe(with, &b, ignored)) return 1;
    return strcmp(a.spec, b.spec) != 0;
}

/* Whether key is one of the comma-separated names of list. */
static int listed(const char *list, const char *key, size_t key_len) {
    for (const char *p = list; p && *p;) {
        size_t l = strcspn(p, ",");
        if (l == key_len && !strncmp(p, key, l)) return 1;
        p += l + (p[l] == ',');
    }
    return 0;
}

int paper_spec_departures(const paper_recipe *rc, const paper_decoder *d, const char *spec,
                          char *out, size_t n, char *err) {
    out[0] = '\0';
    const paper_reference *ref = paper_reference_of(rc, d->alg);
    if (!ref) return 0;
    size_t len = 0;
    for (const char *p = ref->settings; *p;) {
        size_t l = strcspn(p, ","), k = strcspn(p, "=");
        if (k >= l)
            return err_set(err, "%s: setting '%.*s' is not key=value", ref->name, (int)l, p);
        char key[64], value[64];
        snprintf(key, sizeof key, "%.*s", (int)k, p);
        snprintf(value, sizeof value, "%.*s", (int)(l - k - 1), p + k + 1);
        if (!listed(d->varies, key, k)) {
            int r = paper_setting_differs(spec, key, value, err);
            if (r < 0) return -1;
            if (r && len < n)
                len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", key);
        }
        p += l + (p[l] == ',');
    }
    return 0;
}

const char *paper_head_decoder(paper_alg a) {
    return a == PAPER_EAGLE || a == PAPER_EAGLE2 ? "eagle" : a == PAPER_MEDUSA ? "medusa" : NULL;
}

/* ---- the papers' names -> decbench specs (paper.h) ---------------------------------------------
 */

static int pick(int own, int from_settings) {
    return own ? own : from_settings;
}

int paper_spec(const paper_decoder *d, const paper_setting *s, const paper_lade_config *c,
               char *out, size_t n, char *err) {
    int len = 0, gamma, W, N, G, beta, K;
    switch (d->alg) {
    case PAPER_GREEDY:
        len = snprintf(out, n, "greedy");
        break;
    case PAPER_SPEC:
        gamma = pick(d->gamma, s ? s->spec_gamma : 0);
        if (!gamma) return err_set(err, "%s: no gamma (no settings row)", d->row);
        len = snprintf(out, n, "spec:gamma=%d", gamma);
        break;
    case PAPER_LOOKAHEAD:
        /* Table 7's lookahead beta is LADE's level, N; Ouroboros runs LADE with G = W. */
        W = pick(d->W, s ? s->la_W : c ? c->W : 0);
        N = pick(d->N, s ? s->la_beta : c ? c->N : 0);
        G = pick(d->G, s ? W : c ? c->G : 0);
        if (!W || !N || !G) return err_set(err, "%s: no W, N, G (no settings row)", d->row);
        /* every lookahead the papers ran is LADE's code (paper.h) */
        len = snprintf(out, n, "lookahead:W=%d,N=%d,G=%d,preset=lade", W, N, G);
        break;
    case PAPER_OUROBOROS:
        gamma = pick(d->gamma, s ? s->ou_gamma : 0);
        W = pick(d->W, s ? s->ou_W : 0);
        beta = pick(d->beta, s ? s->ou_beta : 0);
        K = pick(d->K, s ? s->ou_K : 0);
        if (!gamma || !W || beta < 3 || !K)
            return err_set(err, "%s: no gamma, W, beta, K (no settings row)", d->row);
        /* The reference's scripts run the printed beta as lookahead_level = beta - 1, whose
         * phrases hold level - 1 tokens after the key; and cut each draft to gamma (paper.h). */
        len =
            snprintf(out, n, "ouroboros:gamma=%d,W=%d,beta=%d,K=%d,trim=1", gamma, W, beta - 2, K);
        break;
    case PAPER_PLD:
        len = snprintf(out, n, "pld:ngram=%d,k=%d", d->ngram, d->k);
        break;
    case PAPER_EAGLE:
        len = snprintf(out, n, "eagle:mode=static");
        break;
    case PAPER_EAGLE2:
        if (!d->total_tokens || !d->depth || !d->top_k)
            return err_set(err, "%s: no total_tokens, depth, top_k", d->row);
        len = snprintf(out, n, "eagle:mode=dynamic,total_tokens=%d,depth=%d,top_k=%d",
                       d->total_tokens, d->depth, d->top_k);
        break;
    case PAPER_MEDUSA:
        len = snprintf(out, n, "medusa");
        break;
    default:
        return err_set(err, "unknown algorithm %d", (int)d->alg);
    }
    if (d->extra && len > 0 && (size_t)len < n)
        len += snprintf(out + len, n - (size_t)len, "%c%s", strchr(out, ':') ? ',' : ':', d->extra);
    if (len < 0 || (size_t)len >= n) return err_set(err, "%s: spec too long", d->row);
    return 0;
}
