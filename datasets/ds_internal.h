/* ds_internal.h: what the datasets/ files share and nobody else uses.
 *
 *   registry.c   the table of datasets (files, fields, subsets, templates, defaults)
 *   templates.c  the template strings and few-shot exemplars, each with its source
 *   chat.c       the chat formats (Llama 2, Llama 3, ChatML, DeepSeek-Coder, Vicuna) and their
 *                recognition from a GGUF's chat template
 *   render.c     growable buffer, {field} substitution, Python list repr
 *   jsonl.c      reading JSONL (one object per line, with line numbers) and JSON arrays
 *   dataset.c    ds_open / ds_select / accessors / ds_help (the public API) */
#ifndef DATASETS_DS_INTERNAL_H
#define DATASETS_DS_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#define DS_MAX_FIELDS 4
#define DS_MAX_TEMPLATES 8

/* ---- growable string buffer (render.c) ---- */
typedef struct {
    char *p;
    size_t len, cap;
} ds_buf;

int ds_buf_add(ds_buf *b, const char *s, size_t n); /* 0, or -1 when out of memory */
int ds_buf_adds(ds_buf *b, const char *s);
void ds_buf_free(ds_buf *b);

/* ---- how a record field is read (registry.c describes, dataset.c extracts) ---- */
typedef enum {
    DS_STRING,     /* a JSON string */
    DS_FIRST_TURN, /* a string, or a non-empty array whose first element is a string (the
                    * record's later elements are its later turns) */
    DS_PY_LIST,    /* an array of strings, rendered as Python's str(list) (MBPP test_list) */
} ds_field_kind;

typedef struct {
    const char *name; /* placeholder name in templates, e.g. "text" for {text} */
    const char *key;  /* JSON key in the file */
    ds_field_kind kind;
} ds_field;

typedef struct {
    const char *name;   /* "raw", "chat", "ouroboros", ... */
    const char *text;   /* {field} placeholders, {shots} = the dataset's few-shot prefix;
                         * NULL for a chat template */
    int max_new;        /* max new tokens the source used with this prompt */
    const char *source; /* one line: where text and max_new come from */
    /* A chat template: the messages (with placeholders) the source wrapped in a chat format,
     * so that another model's format can wrap them instead (ds_open_chat). */
    const char *system; /* system message, NULL if none */
    const char *user;   /* the user's turn */
    const char *reply;  /* text the source put after the assistant's header, NULL if none */
    const char *chat;   /* the format the source used: a name in chat.c */
} ds_template_def;

/* ---- chat.c ---- */
/* A chat format: lead, then (with a system message) sys_pre SYSTEM sys_post, then user_pre USER
 * user_post, then assistant (the header the model's reply follows). */
typedef struct {
    const char *name; /* llama.cpp's name */
    const char *aliases[2];
    const char *lead, *sys_pre, *sys_post, *user_pre, *user_post, *assistant;
    int trim;    /* messages are trimmed of surrounding whitespace */
    int special; /* the format's text holds control tokens (encode with them parsed) */
    /* Later turns: after the assistant's header comes reply_pre ANSWER reply_post, then
     * next_lead and the next user turn (user_pre USER user_post assistant). history_special:
     * that history writes end-of-turn tokens as text ("</s><s>") to encode as tokens. */
    const char *reply_pre, *reply_post, *next_lead;
    int history_special;
} ds_chat_row;
const ds_chat_row *ds_chat_find(const char *name); /* by name or alias; NULL if unknown */
/* "llama2, llama2-sys (llama-2), ...": the names for messages; returns the length needed. */
size_t ds_chat_names(char *buf, size_t n);
/* Appends the wrapped turn to out; 0, or -1 when out of memory. */
int ds_chat_apply(const ds_chat_row *c, const char *system, size_t system_len, const char *user,
                  size_t user_len, ds_buf *out);
/* Appends to a conversation ending with the assistant's header: the answer, and the next user
 * turn up to the assistant's header again. 0, or -1 when out of memory. */
int ds_chat_next_turn(const ds_chat_row *c, const char *answer, const char *user, ds_buf *out);

/* The values a record contributes to rendering. */
typedef struct {
    const char *val[DS_MAX_FIELDS]; /* in the order of ds_def.fields */
    long long num_id;               /* integer id when the file has one, else the index */
    const char **turns;             /* the DS_FIRST_TURN field's turns (arena), NULL if none */
    int n_turns;
} ds_fields;

typedef struct ds_def ds_def;
struct ds_def {
    const char *name;               /* canonical name */
    const char *alias;              /* or NULL */
    const char *file;               /* relative to the datasets folder */
    int json_array;                 /* 1: the file is one JSON array, 0: JSONL */
    const char *blurb;              /* one line for --help: contents and record count */
    ds_field fields[DS_MAX_FIELDS]; /* fields[0] is the "raw" field */
    const char *id_key;             /* NULL: id = index */
    const char *category_key;       /* NULL: no category */
    const char *reference_key;      /* NULL: no reference (first string found is used) */
    const char *const *subsets;     /* names accepted after '/', NULL-terminated; NULL: none */
    /* group of a record from its category and integer id; NULL = no groups */
    const char *(*group)(const char *category, long long num_id);
    /* few-shot prefix for {shots}; recs are all records of the file in order */
    int (*shots)(const ds_def *d, const ds_fields *recs, int n, ds_buf *out, char *err);
    const char *default_template;
    ds_template_def templates[DS_MAX_TEMPLATES]; /* ends at name == NULL */
};

/* ---- registry.c ---- */
extern const ds_def *const ds_registry[];    /* NULL-terminated */
const ds_def *ds_find_def(const char *name); /* by name or alias; NULL if unknown */
const ds_template_def *ds_find_template(const ds_def *d, const char *name);
/* The definition used for jsonl:PATH:FIELD (FIELD filled in by dataset.c on a copy). */
extern const ds_def ds_jsonl_def;

/* ---- templates.c: strings shared by several datasets ---- */
extern const char ds_tpl_humaneval_ouroboros[], ds_tpl_humaneval_ouroboros_chat[];
extern const char ds_tpl_mbpp_ouroboros[], ds_tpl_mbpp_ouroboros_0shot[], ds_tpl_mbpp_shot[];
extern const char ds_tpl_gsm8k_ouroboros[];
extern const char ds_tpl_cnndm_ouroboros[], ds_msg_cnndm_ouroboros_chat[];
extern const char ds_sys_cnndm_lookahead[], ds_msg_cnndm_lookahead[], ds_reply_cnndm_lookahead[];
extern const char ds_msg_cnndm_specbench[];
extern const char ds_tpl_wmt_ouroboros[], ds_msg_wmt_ouroboros_chat[], ds_msg_wmt_specbench[];
extern const char ds_sys_vicuna[];
int ds_shots_gsm8k(const ds_def *d, const ds_fields *recs, int n, ds_buf *out, char *err);
int ds_shots_mbpp(const ds_def *d, const ds_fields *recs, int n, ds_buf *out, char *err);

/* ---- render.c ---- */
/* Appends tpl to out with every {name} replaced by the value of the field of that name in d
 * ({raw} = fields[0], {shots} = shots). Values are not re-scanned. An unknown {name} or a
 * missing value is an error naming the template. */
int ds_render(const char *tpl, const ds_def *d, const ds_fields *f, const char *shots, ds_buf *out,
              char *err);
/* Appends Python's repr(s) for the UTF-8 string s (quote choice and escapes as CPython). */
int ds_py_repr(const char *s, size_t n, ds_buf *out);

/* ---- jsonl.c ---- */
/* Called once per record with the parsed value (borrowed), its 1-based line (0 for array
 * elements) and 0-based index. A non-zero return stops the reading and is passed on. */
typedef int (*ds_record_fn)(void *ctx, json_t *rec, int line, int index, char *err);
/* Reads path as JSONL: one JSON object per line; whitespace-only lines are skipped (but
 * counted); a file with no record is an error. Errors read "path:LINE: ...". */
int ds_read_jsonl(const char *path, ds_record_fn fn, void *ctx, char *err);
/* Reads path as one JSON array of objects. Errors read "path:LINE: ..." for syntax and
 * "path: record N: ..." for elements. */
int ds_read_json_array(const char *path, ds_record_fn fn, void *ctx, char *err);
/* "an object", "a string", "a number", ... for messages. */
const char *ds_json_type_name(const json_t *v);
/* Formats "path:LINE" (line > 0) or "path: record INDEX" into buf. */
void ds_where(char *buf, size_t n, const char *path, int line, int index);

#endif
