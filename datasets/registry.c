/* registry.c: the datasets decbench knows: file, fields, subsets, templates with the max new
 * tokens the source used, and the default template. Record counts and file facts come from
 * ../shared/datasets/<folder>/SOURCE.md; template strings and their sources from templates.c.
 * Adding a dataset is one entry here (plus its row in datasets/README.md). */
#include <string.h>

#include "datasets/ds_internal.h"

#define RAW(max_new)                                                                               \
    { "raw", "{raw}", max_new, "the field as is" }
/* Chat templates: the messages and the chat format (datasets/chat.c) the source wrapped them
 * in; another model's format replaces that one with ds_open_chat. */
#define CHAT_TPL(name_, max_new_, source_, chat_, system_, user_, reply_)                          \
    {                                                                                              \
        .name = name_, .max_new = max_new_, .source = source_, .chat = chat_, .system = system_,   \
        .user = user_, .reply = reply_                                                             \
    }
#define CHAT(max_new)                                                                              \
    CHAT_TPL("chat", max_new,                                                                      \
             "Llama-2 chat wrapping of the raw field, no system prompt (FastChat llama-2)",        \
             "llama2-sys", NULL, "{raw}", NULL)
/* Spec-Bench eval.py: FastChat's template of the model (Vicuna v1.1 for Vicuna-7B-v1.3). */
#define SPECBENCH(max_new, source, user)                                                           \
    CHAT_TPL("specbench", max_new, source, "vicuna", ds_sys_vicuna, user, NULL)

/* ---- groups (coarse subsets) ---- */

static const char *const mt_categories[] = {
    "writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities", NULL};

static int in_list(const char *s, const char *const *list) {
    for (int i = 0; s && list[i]; i++)
        if (!strcmp(s, list[i])) return 1;
    return 0;
}

/* MT-bench: the category itself. */
static const char *group_category(const char *category, long long num_id) {
    (void)num_id;
    for (int i = 0; mt_categories[i]; i++)
        if (category && !strcmp(category, mt_categories[i])) return mt_categories[i];
    return NULL;
}

/* Spec-Bench's six tasks (SOURCE.md layout): the 8 MT-bench categories form "mt_bench". */
static const char *const specbench_subsets[] = {
    "mt_bench", "translation", "summarization", "qa",         "math_reasoning",
    "rag",      "writing",     "roleplay",      "reasoning",  "math",
    "coding",   "extraction",  "stem",          "humanities", NULL};
static const char *group_specbench(const char *category, long long num_id) {
    (void)num_id;
    if (in_list(category, mt_categories)) return "mt_bench";
    for (int i = 1; i < 6; i++)
        if (category && !strcmp(category, specbench_subsets[i])) return specbench_subsets[i];
    return NULL;
}

/* MBPP splits by task_id (google-research mbpp README, HF "full" config): prompt 1-10,
 * test 11-510, validation 511-600, train 601-974. Ouroboros evaluates "validation". */
static const char *const mbpp_splits[] = {"prompt", "test", "validation", "train", NULL};
static const char *group_mbpp(const char *category, long long id) {
    (void)category;
    if (id >= 1 && id <= 10) return "prompt";
    if (id >= 11 && id <= 510) return "test";
    if (id >= 511 && id <= 600) return "validation";
    if (id >= 601) return "train";
    return NULL;
}

/* ---- the datasets ---- */

static const ds_def humaneval = {
    .name = "humaneval",
    .file = "humaneval/HumanEval.jsonl",
    .blurb = "HumanEval, 164 Python completion problems (openai/human-eval)",
    .fields = {{"prompt", "prompt", DS_STRING}},
    .id_key = "task_id",
    .reference_key = "canonical_solution",
    .default_template = "ouroboros",
    .templates =
        {
            {"ouroboros", ds_tpl_humaneval_ouroboros, 512,
             "Ouroboros test_human_eval.py gen_prompt, generate_len 512"},
            {"ouroboros-chat", ds_tpl_humaneval_ouroboros_chat, 512,
             "Ouroboros test_human_eval.py --model_type codellama, generate_len 512"},
            {"lookahead", "{prompt}", 512,
             "LookaheadDecoding eval_humaneval.py: prompt as is, max_new_tokens 512"},
            RAW(512),
            CHAT(512),
        },
};

static const ds_def mbpp = {
    .name = "mbpp",
    .file = "mbpp/mbpp.jsonl",
    .blurb = "MBPP full, 974 problems, task_id 1-974 (google-research mbpp)",
    .fields = {{"text", "text", DS_STRING},
               {"test_list", "test_list", DS_PY_LIST},
               {"code", "code", DS_STRING}},
    .id_key = "task_id",
    .reference_key = "code",
    .subsets = mbpp_splits,
    .group = group_mbpp,
    .shots = ds_shots_mbpp,
    .default_template = "ouroboros",
    .templates =
        {
            {"ouroboros", ds_tpl_mbpp_ouroboros, 512,
             "Ouroboros test_mbpp.py: 3 shots (task_id 1-3) + task, generate_len 512"},
            {"ouroboros-0shot", ds_tpl_mbpp_ouroboros_0shot, 512,
             "Ouroboros test_mbpp.py task text without the shots (ours), 512 as Ouroboros"},
            RAW(512),
            CHAT(512),
        },
};

/* No peer prompts sanitized MBPP: raw, chat and the Ouroboros task text (0-shot); 512 as MBPP.
 * Its "prompt" field plays the role of MBPP's "text", hence the placeholder name. */
static const ds_def mbpp_sanitized = {
    .name = "mbpp-sanitized",
    .file = "mbpp/sanitized-mbpp.json",
    .json_array = 1,
    .blurb = "MBPP sanitized, 427 hand-verified problems (google-research mbpp)",
    .fields = {{"text", "prompt", DS_STRING},
               {"test_list", "test_list", DS_PY_LIST},
               {"code", "code", DS_STRING}},
    .id_key = "task_id",
    .reference_key = "code",
    .subsets = mbpp_splits,
    .group = group_mbpp,
    .default_template = "raw",
    .templates =
        {
            RAW(512),
            CHAT(512),
            {"ouroboros-0shot", ds_tpl_mbpp_ouroboros_0shot, 512,
             "Ouroboros MBPP task text without shots (ours; no peer prompts sanitized MBPP)"},
        },
};

static const ds_def gsm8k = {
    .name = "gsm8k",
    .file = "gsm8k/test.jsonl",
    .blurb = "GSM8K test split, 1319 grade-school math problems (openai/grade-school-math)",
    .fields = {{"question", "question", DS_STRING}},
    .reference_key = "answer",
    .shots = ds_shots_gsm8k,
    .default_template = "ouroboros",
    .templates =
        {
            {"ouroboros", ds_tpl_gsm8k_ouroboros, 256,
             "Ouroboros test_gsm8k.py: 8-shot chain of thought, generate_len 256"},
            SPECBENCH(
                1024,
                "Spec-Bench math_reasoning (GSM8K questions), Vicuna template, max_new_tokens "
                "1024",
                "{raw}"),
            RAW(256),
            CHAT(256),
        },
};

/* Two turns per question: the prompt is the first; the second is asked after greedy's answer to
 * it (run --turns 2, ds_turn_prompt), in the chat template's format, as the papers did. */
static const ds_def mt_bench = {
    .name = "mt_bench",
    .file = "mt_bench/question.jsonl",
    .blurb = "MT-bench, 80 questions of 2 turns (--turns 2 measures both) (lm-sys/FastChat)",
    .fields = {{"turn", "turns", DS_FIRST_TURN}},
    .id_key = "question_id",
    .category_key = "category",
    .reference_key = "reference",
    .subsets = mt_categories,
    .group = group_category,
    .default_template = "lookahead",
    .templates =
        {
            CHAT_TPL("lookahead", 1024,
                     "LookaheadDecoding eval_mtbench.py: FastChat llama-2, turn 1, max_new_tokens "
                     "1024",
                     "llama2-sys", NULL, "{raw}", NULL),
            SPECBENCH(1024, "Spec-Bench eval.py: Vicuna template, turn 1, max_new_tokens 1024",
                      "{raw}"),
            RAW(1024),
            CHAT(1024),
        },
};

static const ds_def spec_bench = {
    .name = "spec_bench",
    .file = "spec_bench/question.jsonl",
    .blurb = "Spec-Bench, 480 questions in 6 tasks, mt_bench's 80 of 2 turns (--turns 2) "
             "(hemingkx/Spec-Bench)",
    .fields = {{"turn", "turns", DS_FIRST_TURN}},
    .id_key = "question_id",
    .category_key = "category",
    .reference_key = "reference",
    .subsets = specbench_subsets,
    .group = group_specbench,
    .default_template = "specbench",
    .templates =
        {
            SPECBENCH(1024, "Spec-Bench eval.py: Vicuna template, turn 1, max_new_tokens 1024",
                      "{raw}"),
            RAW(1024),
            CHAT(1024),
        },
};

static const ds_def cnn_dm = {
    .name = "cnn_dm",
    .alias = "cnndm",
    .file = "cnn_dailymail/specbench_summarization.jsonl",
    .blurb = "CNN/DailyMail, the 80 articles of Spec-Bench's summarization task",
    .fields = {{"article", "article", DS_STRING}},
    .id_key = "question_id",
    .reference_key = "highlights",
    .default_template = "ouroboros",
    .templates =
        {
            {"ouroboros", ds_tpl_cnndm_ouroboros, 128,
             "Ouroboros test_cnndm.py prompt, generate_len 128"},
            CHAT_TPL("ouroboros-chat", 128, "Ouroboros test_cnndm.py prompt_chat, generate_len 128",
                     "llama2-sys", NULL, ds_msg_cnndm_ouroboros_chat, NULL),
            CHAT_TPL("lookahead", 1024,
                     "LookaheadDecoding eval_cnndm.py Llama-2 system prompt, max_new_tokens 1024",
                     "llama2-sys", ds_sys_cnndm_lookahead, ds_msg_cnndm_lookahead,
                     ds_reply_cnndm_lookahead),
            SPECBENCH(1024, "Spec-Bench summarization: Vicuna template, max_new_tokens 1024",
                      ds_msg_cnndm_specbench),
            RAW(128),
            CHAT(128),
        },
};

static const ds_def wmt_de_en = {
    .name = "wmt_de_en",
    .alias = "wmt",
    .file = "wmt_de_en/specbench_translation.jsonl",
    .blurb = "German->English, the 80 WMT14 pairs of Spec-Bench's translation task",
    .fields = {{"de", "de", DS_STRING}},
    .id_key = "question_id",
    .reference_key = "en",
    .default_template = "ouroboros",
    .templates =
        {
            {"ouroboros", ds_tpl_wmt_ouroboros, 64,
             "Ouroboros test_wmt16.py prompt, generate_len 64"},
            CHAT_TPL("ouroboros-chat", 64,
                     "Ouroboros test_wmt16.py prompt_chat in [INST] ... [/INST], generate_len 64",
                     "llama2-sys", NULL, ds_msg_wmt_ouroboros_chat, NULL),
            SPECBENCH(1024, "Spec-Bench translation: Vicuna template, max_new_tokens 1024",
                      ds_msg_wmt_specbench),
            RAW(64),
            CHAT(64),
        },
};

/* No paper uses TinyStories; its models are base models that continue a story opening.
 * 256 new tokens is about one whole story: the 5 stories of cs336_tinystories_sample.txt
 * average ~760 bytes, ~190 tokens at ~4 bytes per Llama token. */
static const ds_def tinystories = {
    .name = "tinystories",
    .file = "tinystories/prompts_once_upon_a_time.jsonl",
    .blurb = "TinyStories, 713 'Once upon a time' first sentences (HF validation head)",
    .fields = {{"prompt", "prompt", DS_STRING}},
    .id_key = "id",
    .reference_key = "paragraph",
    .default_template = "raw",
    .templates =
        {
            {"raw", "{raw}", 256,
             "the first sentence as is; 256 ~ one whole story (decbench's choice)"},
            CHAT(256),
        },
};

/* jsonl:PATH[:FIELD]: dataset.c copies this and sets fields[0].key to FIELD. The id is the
 * first of "id", "question_id", "task_id" present; "category" is used when it is a string. */
const ds_def ds_jsonl_def = {
    .name = "jsonl",
    .file = NULL,
    .blurb = "any JSONL file, one object per line, prompt from FIELD (default \"prompt\")",
    .fields = {{"text", "prompt", DS_FIRST_TURN}},
    .category_key = "category",
    .default_template = "raw",
    .templates =
        {
            {"raw", "{raw}", 256, "the field as is; 256 is decbench's choice"},
            CHAT(256),
        },
};

const ds_def *const ds_registry[] = {&humaneval,  &mbpp,   &mbpp_sanitized, &gsm8k,       &mt_bench,
                                     &spec_bench, &cnn_dm, &wmt_de_en,      &tinystories, NULL};

const ds_def *ds_find_def(const char *name) {
    for (int i = 0; ds_registry[i]; i++) {
        const ds_def *d = ds_registry[i];
        if (!strcmp(name, d->name) || (d->alias && !strcmp(name, d->alias))) return d;
    }
    return NULL;
}

const ds_template_def *ds_find_template(const ds_def *d, const char *name) {
    for (int i = 0; i < DS_MAX_TEMPLATES && d->templates[i].name; i++)
        if (!strcmp(name, d->templates[i].name)) return &d->templates[i];
    return NULL;
}
