/* dataset.h: the benchmark prompt sets, rendered with the prompt templates the papers used.
 *
 * A set is named by a spec string:
 *   humaneval | mbpp[/SPLIT] | mbpp-sanitized[/SPLIT] | gsm8k | mt_bench[/CATEGORY] |
 *   spec_bench[/TASK or /CATEGORY] | cnn_dm (alias cnndm) | wmt_de_en (alias wmt) |
 *   tinystories | jsonl:PATH[:FIELD]            (FIELD defaults to "prompt")
 * and rendered with a named template (NULL = the dataset's default). ds_help() lists the names,
 * templates and defaults; datasets/README.md says where every template string comes from.
 *
 * Loading reads and validates the WHOLE file and renders every prompt before returning, so a
 * malformed record fails ds_open ("path:LINE: what is wrong") before any model work starts.
 *
 * Ownership: a ds_set owns every string reachable from it (samples included); pointers stay
 * valid until ds_free. There is no global state: sets are independent and may be used from
 * different threads as long as one set is not modified (ds_select) while being read. */
#ifndef DATASETS_DATASET_H
#define DATASETS_DATASET_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *dataset;   /* canonical spec of the set, e.g. "spec_bench/qa", "cnn_dm",
                            * "jsonl:data/x.jsonl:prompt" (aliases resolved) */
    int index;             /* 0-based position of the record in its file (kept by ds_select) */
    int line;              /* 1-based line of the record (JSONL); 0 for JSON-array files */
    const char *id;        /* the file's id field (task_id, question_id, id) as text, else the
                            * index in decimal */
    const char *category;  /* the file's category field, NULL if none */
    const char *group;     /* coarse group for per-group tables: the Spec-Bench task (mt_bench,
                            * translation, ...), the MBPP split, the MT-bench category; NULL if
                            * the dataset has none */
    const char *prompt;    /* the rendered prompt text (UTF-8) */
    const char *reference; /* reference answer/solution when the file has one, else NULL */
    /* The record's user turns (MT-bench and Spec-Bench keep two for some questions): turn[0]
     * is the one the prompt holds; later ones are asked after the model's answer
     * (ds_turn_prompt). n_turns is 1 for single-turn records. */
    const char *const *turns;
    int n_turns;
} ds_sample;

typedef struct ds_set ds_set;

/* Loads the set named by spec and renders every record with template_name (NULL or "" = the
 * dataset's default). data_dir is the datasets folder (the --data-dir flag; NULL = default:
 * $DECBENCH_DATASETS, else <shared>/datasets via util/paths.h); it is not used for
 * jsonl:PATH. On success *out owns everything and the selection is the whole set in file
 * order. Returns 0, or -1 with a one-line message in err (ERR_LEN bytes) and *out = NULL. */
int ds_open(ds_set **out, const char *spec, const char *template_name, const char *data_dir,
            char *err);

/* Chat formats (datasets/chat.c: llama2, llama2-sys, llama2-sys-bos, llama2-sys-strip, llama3,
 * chatml, deepseek, vicuna, as llama.cpp names them; aliases llama-2, llama-3, qwen,
 * deepseek-coder). A chat template (the "chat" templates, Spec-Bench's and LookaheadDecoding's
 * chat prompts, Ouroboros' CNN/DM and WMT chat prompts) holds a system message, a user turn and
 * optional text after the assistant's header; ds_open wraps them in the format the source used
 * (Llama 2 or Vicuna v1.1), ds_open_chat in the format named by chat (NULL or "": the
 * source's), so that each model gets the prompt the way it was trained. Other templates are
 * not affected. An unknown name is an error listing the names. */
int ds_open_chat(ds_set **out, const char *spec, const char *template_name, const char *chat,
                 const char *data_dir, char *err);
/* The format of a GGUF tokenizer.chat_template (Jinja text), recognised as llama.cpp's
 * llm_chat_detect_template does; NULL when it is none of the formats above (Mistral, Phi,
 * Gemma, ... or unrecognisable). */
const char *ds_chat_detect(const char *chat_template);

/* The prompt of turn `turn` (2 .. s->n_turns) of a multi-turn record, as the papers built it
 * (FastChat's conversation in Spec-Bench's eval.py and LookaheadDecoding's eval_mtbench.py):
 * the conversation so far in the set's chat format, the model's answers answers[0..turn-2] as
 * the assistant's replies (the caller passes the decoded answer, stripped of surrounding
 * whitespace, as FastChat does), then the next user turn and the assistant's header. Only a
 * set rendered with a chat template has turns beyond the first (error otherwise). *out is
 * malloc'd. Turn 1 is s->prompt. */
int ds_turn_prompt(const ds_set *set, const ds_sample *s, int turn, const char *const *answers,
                   char **out, char *err);
/* 1 when turn `turn`'s prompt holds control tokens to encode as such (a chat format's own,
 * or the end-of-turn tokens the history of a Llama-2 or Vicuna conversation writes as text,
 * "</s><s>", which the models' tokenizers read as EOS and BOS). */
int ds_turn_parse_special(const ds_set *set, int turn);

/* Selects a deterministic subset, always starting again from the full set in file order:
 *   1. if shuffle != 0: Fisher-Yates with util/rng.h seeded by seed
 *      (for i = n-1 down to 1: j = rng_below(i + 1); swap order[i], order[j]);
 *   2. skip the first offset samples (0 <= offset < n);
 *   3. keep at most limit samples (limit 0 = no limit).
 * Returns 0, or -1 with err (negative numbers, offset past the end); the selection is then
 * unchanged. */
int ds_select(ds_set *s, int offset, int limit, int shuffle, uint64_t seed, char *err);

int ds_count(const ds_set *s);                   /* samples in the current selection */
int ds_total(const ds_set *s);                   /* samples in the set before ds_select */
const ds_sample *ds_get(const ds_set *s, int i); /* i-th selected sample; NULL if out of range */

const char *ds_name(const ds_set *s);        /* canonical spec (same as ds_sample.dataset) */
const char *ds_template(const ds_set *s);    /* template in use: NAME, or NAME:FORMAT when
                                              * a chat template is wrapped in another format
                                              * than its source's */
const char *ds_chat_format(const ds_set *s); /* the chat format in use, NULL if none */
/* 1 if the prompts hold a chat format's control tokens (<|im_start|>, <|eot_id|>, ...): encode
 * them with TOK_PARSE_SPECIAL. */
int ds_parse_special(const ds_set *s);
const char *ds_template_source(const ds_set *s); /* where the template and max_new come from */
int ds_default_max_new(const ds_set *s);         /* max new tokens the source used with it */
const char *ds_path(const ds_set *s);            /* the file that was read */

void ds_free(ds_set *s); /* NULL is fine */

/* Writes the --help text (datasets, subsets, templates with their max_new, default marked,
 * data folder resolution) into buf (size n, NUL-terminated, truncated if short) and returns
 * the length it needs, like snprintf. */
size_t ds_help(char *buf, size_t n);

#endif
