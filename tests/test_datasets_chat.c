/* test_datasets_chat.c: chat formats (datasets/chat.c). Each format's exact text for a fixed
 * turn, with and without a system message; the papers' chat templates re-wrapped for another
 * model (and unchanged by default: test_datasets' golden hashes); recognition of each family
 * from the chat templates the models ship (the texts below are those of the models' Hugging
 * Face tokenizer_config.json, Vicuna's from FastChat as the model ships none), and refusal of
 * look-alikes llama.cpp gives to other families; the wrapped prompt through the tokenizer with
 * its control tokens parsed; the chat template read from a GGUF file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "model/formats/gguf.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/testutil.h"
#include "util/err.h"

#define SYS_VICUNA                                                                                 \
    "A chat between a curious user and an artificial intelligence assistant. The assistant "       \
    "gives helpful, detailed, and polite answers to the user's questions."

/* A one-record JSONL file whose "prompt" is text. */
static const char *one_record(const char *name, const char *json_text) {
    const char *p = test_tmp(name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) fprintf(f, "{\"prompt\": %s}\n", json_text), fclose(f);
    return p;
}

/* The first prompt of spec/template wrapped in chat (NULL: the source's); "" on error. */
static char *prompt_of(const char *spec, const char *tpl, const char *chat, char *label,
                       int *special) {
    char err[ERR_LEN];
    ds_set *s;
    if (ds_open_chat(&s, spec, tpl, chat, NULL, err) != 0) {
        CHECK_MSG(0, "%s %s %s: %s", spec, tpl, chat ? chat : "-", err);
        return strdup("");
    }
    char *p = strdup(ds_get(s, 0)->prompt);
    if (label) snprintf(label, 64, "%s", ds_template(s));
    if (special) *special = ds_parse_special(s);
    ds_free(s);
    return p;
}

static void expect(const char *spec, const char *tpl, const char *chat, const char *want,
                   const char *want_label, int want_special) {
    char label[64] = "";
    int special = -1;
    char *got = prompt_of(spec, tpl, chat, label, &special);
    CHECK_MSG(strcmp(got, want) == 0, "%s/%s in %s:\n got '%s'\nwant '%s'", spec, tpl,
              chat ? chat : "-", got, want);
    CHECK_MSG(strcmp(label, want_label) == 0, "label '%s', want '%s'", label, want_label);
    CHECK_MSG(special == want_special, "%s: parse_special %d", chat ? chat : "-", special);
    free(got);
}

static void test_formats(void) {
    char spec[600];
    snprintf(spec, sizeof spec, "jsonl:%s", one_record("hello.jsonl", "\"Hello there\""));
    /* One user turn, no system message: the "chat" template in every format. */
    expect(spec, "chat", NULL, "[INST] Hello there [/INST]", "chat", 0);
    expect(spec, "chat", "llama2", "[INST] Hello there [/INST]", "chat:llama2", 0);
    expect(spec, "chat", "llama-2", "[INST] Hello there [/INST]", "chat", 0);
    expect(spec, "chat", "llama3",
           "<|start_header_id|>user<|end_header_id|>\n\nHello there<|eot_id|>"
           "<|start_header_id|>assistant<|end_header_id|>\n\n",
           "chat:llama3", 1);
    expect(spec, "chat", "chatml",
           "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n", "chat:chatml", 1);
    expect(spec, "chat", "qwen", "<|im_start|>user\nHello there<|im_end|>\n<|im_start|>assistant\n",
           "chat:chatml", 1);
    expect(spec, "chat", "deepseek-coder", "### Instruction:\nHello there\n### Response:\n",
           "chat:deepseek", 0);
    expect(spec, "chat", "vicuna", "USER: Hello there ASSISTANT:", "chat:vicuna", 0);
    /* The raw template is not a chat template: no format touches it. */
    expect(spec, "raw", "chatml", "Hello there", "raw", 0);

    /* Surrounding whitespace: kept, except where the format trims (Llama 3, Meta's Llama 2). */
    snprintf(spec, sizeof spec, "jsonl:%s", one_record("spaces.jsonl", "\"  Hi there \\n\""));
    expect(spec, "chat", "llama2-sys-strip", "[INST] Hi there [/INST]", "chat:llama2-sys-strip", 0);
    expect(spec, "chat", NULL, "[INST]   Hi there \n [/INST]", "chat", 0);
    expect(spec, "chat", "llama3",
           "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
           "<|start_header_id|>assistant<|end_header_id|>\n\n",
           "chat:llama3", 1);
    expect(spec, "chat", "chatml",
           "<|im_start|>user\n  Hi there \n<|im_end|>\n<|im_start|>assistant\n", "chat:chatml", 1);

    /* With a system message: Spec-Bench's Vicuna prompt, first MT-bench question. */
    const char *q = "Compose an engaging travel blog post about a recent trip to Hawaii, "
                    "highlighting cultural experiences and must-see attractions.";
    char want[2048];
    snprintf(want, sizeof want, SYS_VICUNA " USER: %s ASSISTANT:", q);
    expect("spec_bench", "specbench", NULL, want, "specbench", 0);
    snprintf(want, sizeof want,
             "<|im_start|>system\n" SYS_VICUNA "<|im_end|>\n<|im_start|>user\n%s<|im_end|>\n"
             "<|im_start|>assistant\n",
             q);
    expect("spec_bench", "specbench", "chatml", want, "specbench:chatml", 1);
    snprintf(want, sizeof want,
             "<|start_header_id|>system<|end_header_id|>\n\n" SYS_VICUNA "<|eot_id|>"
             "<|start_header_id|>user<|end_header_id|>\n\n%s<|eot_id|>"
             "<|start_header_id|>assistant<|end_header_id|>\n\n",
             q);
    expect("spec_bench", "specbench", "llama3", want, "specbench:llama3", 1);
    snprintf(want, sizeof want, "[INST] <<SYS>>\n" SYS_VICUNA "\n<</SYS>>\n\n%s [/INST]", q);
    expect("spec_bench", "specbench", "llama2-sys", want, "specbench:llama2-sys", 0);
    snprintf(want, sizeof want, "[INST] " SYS_VICUNA "\n%s [/INST]", q); /* no <<SYS>> support */
    expect("spec_bench", "specbench", "llama2", want, "specbench:llama2", 0);
    snprintf(want, sizeof want, SYS_VICUNA "### Instruction:\n%s\n### Response:\n", q);
    expect("spec_bench", "specbench", "deepseek", want, "specbench:deepseek", 0);

    /* Text after the assistant's header stays after it: LookaheadDecoding's CNN/DM prompt. */
    char *p = prompt_of("cnn_dm", "lookahead", "chatml", NULL, NULL);
    CHECK(strncmp(p, "<|im_start|>system\nYou are an intelligent chatbot.", 50) == 0);
    const char *tail = "<|im_end|>\n<|im_start|>user\nBriefly summarize the given context."
                       "<|im_end|>\n<|im_start|>assistant\n\nSummary: ";
    CHECK(strlen(p) > strlen(tail) && strcmp(p + strlen(p) - strlen(tail), tail) == 0);
    free(p);
    p = prompt_of("cnn_dm", "lookahead", NULL, NULL, NULL);
    CHECK(strncmp(p, "[INST] <<SYS>>\nYou are an intelligent chatbot.", 45) == 0);
    free(p);
    /* Ouroboros' WMT chat prompt keeps its two spaces before [/INST] in Llama 2 ... */
    p = prompt_of("wmt_de_en", "ouroboros-chat", NULL, NULL, NULL);
    CHECK(strstr(p, " English:  [/INST]") != NULL);
    free(p);
    /* ... and its HumanEval one, a literal CodeLlama prompt, is never re-wrapped. */
    char label[64];
    p = prompt_of("humaneval", "ouroboros-chat", "chatml", label, NULL);
    CHECK(strncmp(p, "[INST] Please complete", 22) == 0 && strcmp(label, "ouroboros-chat") == 0);
    free(p);

    /* Unknown names are refused with the list. */
    char err[ERR_LEN];
    ds_set *s;
    CHECK(ds_open_chat(&s, "spec_bench", NULL, "klingon", NULL, err) == -1);
    CHECK_MSG(strstr(err, "unknown chat template \"klingon\"") && strstr(err, "chatml") &&
                  strstr(err, "llama3") && strstr(err, "vicuna"),
              "%s", err);
}

/* ---- recognition ------------------------------------------------------------------------ */

/* meta-llama/Llama-2-7b-chat-hf */
static const char tpl_llama2_chat[] =
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set "
    "system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% "
    "set system_message = false %}{% endif %}{% for message in loop_messages %}{% if "
    "(message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation "
    "roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == "
    "0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + "
    "'\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] "
    "%}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() "
    "+ ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + "
    "eos_token }}{% endif %}{% endfor %}";
/* meta-llama/Meta-Llama-3-8B-Instruct */
static const char tpl_llama3[] =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
    "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | "
    "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% "
    "endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
/* Qwen/Qwen2.5-7B-Instruct (the tool-call branches shortened to their first lines) */
static const char tpl_qwen25[] =
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == "
    "'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- 'You are "
    "Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n    {%- endif %}\n"
    "{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- "
    "'<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n"
    "        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
    "assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- for message in messages %}"
    "\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) "
    "or (message.role == \"assistant\" and not message.tool_calls) %}\n        {{- "
    "'<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n"
    "    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- "
    "'<|im_start|>assistant\\n' }}\n{%- endif %}\n";
/* deepseek-ai/deepseek-coder-6.7b-instruct */
static const char tpl_deepseek_coder[] =
    "{% if not add_generation_prompt is defined %}\n{% set add_generation_prompt = false %}\n{% "
    "endif %}\n{%- set ns = namespace(found=false) -%}\n{%- for message in messages -%}\n    {%- "
    "if message['role'] == 'system' -%}\n        {%- set ns.found = true -%}\n    {%- endif "
    "-%}\n{%- endfor -%}\n{{bos_token}}{%- if not ns.found -%}\n{{'You are an AI programming "
    "assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only "
    "answer questions related to computer science. For politically sensitive questions, "
    "security and privacy issues, and other non-computer science questions, you will refuse to "
    "answer\\n'}}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == "
    "'system' %}\n{{ message['content'] }}\n    {%- else %}\n        {%- if message['role'] == "
    "'user' %}\n{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n"
    "{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n        {%- endif %}\n    "
    "{%- endif %}\n{%- endfor %}\n{% if add_generation_prompt %}\n{{'### Response:'}}\n{% endif "
    "%}";
/* Vicuna v1.1 ships no template; FastChat's format written as one (eachadea/vicuna-13b-1.1) */
static const char tpl_vicuna[] =
    "{%- for message in messages %}{%- if message['role'] == 'system' -%}{{- '' + "
    "message['content'] + '\n\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' "
    "+ message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' "
    "-}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}"
    "{%- endif -%}";
/* Look-alikes llama.cpp gives to other families. */
static const char tpl_phi4[] =
    "{% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system"
    "<|im_sep|>' + message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}";
static const char tpl_mistral_v7[] =
    "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' "
    "+ message['content'] + '[/INST]' }}{% elif message['role'] == 'system' %}{{ "
    "'[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{% endif %}{% endfor %}";
static const char tpl_zephyr[] =
    "{% for message in messages %}{{'<|' + message['role'] + '|>\n' + message['content'] + "
    "'<|endoftext|>\n'}}{% endfor %}{{ '<|user|>' }}";
static const char tpl_gemma[] = "{{ '<start_of_turn>' + role + '\n' + message['content'] }}";
static const char tpl_orca_vicuna[] =
    "{{-'SYSTEM: ' + message['content'] + '\n' -}}{{-'USER: ' + message['content'] + '\n'-}}"
    "{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}";

static void test_detect(void) {
    struct {
        const char *tpl, *want;
    } cases[] = {
        {tpl_llama2_chat, "llama2-sys-strip"},
        {"{{ '[INST] ' + content + ' [/INST]' }}", "llama2"},
        {"{{ bos_token + '[INST] ' + content + ' [/INST]' }}", "llama2-sys-bos"},
        {"{{ '[INST] <<SYS>>\\n' + system_message }}", "llama2-sys"},
        {tpl_llama3, "llama3"},
        {tpl_qwen25, "chatml"},
        {tpl_deepseek_coder, "deepseek"},
        {tpl_vicuna, "vicuna"},
        {"chatml", "chatml"}, /* a format's name stands for itself, as in llama.cpp */
        {"llama-3", "llama3"},
        {tpl_phi4, NULL},
        {tpl_mistral_v7, NULL},
        {tpl_zephyr, NULL},
        {tpl_gemma, NULL},
        {tpl_orca_vicuna, NULL},
        {"", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = ds_chat_detect(cases[i].tpl);
        CHECK_MSG((!got && !cases[i].want) || (got && cases[i].want && !strcmp(got, cases[i].want)),
                  "case %zu: got %s, want %s", i, got ? got : "NULL",
                  cases[i].want ? cases[i].want : "NULL");
    }
}

/* ---- through the tokenizer and from a GGUF file ------------------------------------------- */

static void test_tokenized(void) {
    char err[ERR_LEN], spec[600];
    snprintf(spec, sizeof spec, "jsonl:%s", one_record("hi.jsonl", "\"Hi\""));
    char *p = prompt_of(spec, "chat", "chatml", NULL, NULL);
    tok *t = NULL;
    CHECK(tok_load(&t, test_shared("tokenizer-vectors/ggml-vocab-qwen2.gguf"), err) == 0);
    int ids[64], n;
    /* <|im_start|> user \n Hi <|im_end|> \n <|im_start|> assistant \n */
    const int want[] = {151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198};
    CHECK(tok_encode_flags(t, p, TOK_PARSE_SPECIAL, ids, &n, err) == 0);
    CHECK(n == 9 && memcmp(ids, want, sizeof want) == 0);
    tok_free(t);
    free(p);

    p = prompt_of(spec, "chat", "llama3", NULL, NULL);
    CHECK(tok_load(&t, test_shared("tokenizer-vectors/ggml-vocab-llama-bpe.gguf"), err) == 0);
    /* <|begin_of_text|> <|start_header_id|> user <|end_header_id|> \n\n Hi <|eot_id|> ... */
    const int want3[] = {128000, 128006, 882,   128007, 271, 13347,
                         128009, 128006, 78191, 128007, 271};
    CHECK(tok_encode_flags(t, p, TOK_ADD_BOS | TOK_PARSE_SPECIAL, ids, &n, err) == 0);
    CHECK(n == 11 && memcmp(ids, want3, sizeof want3) == 0);
    tok_free(t);
    free(p);

    /* tokenizer.chat_template read from a GGUF (and absent from one without it). */
    const char *path = test_tmp("chat.gguf");
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "general.architecture", "llama");
    gguf_writer_add_str(w, "tokenizer.chat_template", tpl_llama3);
    CHECK(gguf_writer_write(w, path, err) == 0);
    gguf_writer_free(w);
    char *tpl = NULL;
    CHECK(tok_file_chat_template(path, &tpl, err) == 0 && tpl && !strcmp(tpl, tpl_llama3));
    CHECK(tpl && !strcmp(ds_chat_detect(tpl), "llama3"));
    free(tpl);
    CHECK(tok_file_chat_template(test_shared("tokenizer-vectors/ggml-vocab-qwen2.gguf"), &tpl,
                                 err) == 0 &&
          tpl == NULL);
    CHECK(tok_file_chat_template(test_shared("models/stories260K.bin"), &tpl, err) == 0 &&
          tpl == NULL);
    CHECK(tok_file_chat_template(test_tmp("nope.gguf"), &tpl, err) == -1 && tpl == NULL);
}

/* Turn 2 of an MT-bench question: the first turn, greedy's answer and the second
 * question, the way each paper's FastChat conversation renders them: LookaheadDecoding's
 * llama-2 ("[/INST] ANSWER </s><s>[INST] ..."), Spec-Bench's Vicuna v1.1 ("ASSISTANT: ANSWER</s>
 * USER: ..."), and another model's format (ChatML) when the model has one. */
static void test_turns(void) {
    char err[ERR_LEN];
    ds_set *s;
    const char *answers[] = {"Aloha!"};
    char *p;
    CHECK_MSG(ds_open_chat(&s, "mt_bench", NULL, NULL, NULL, err) == 0, "%s", err);
    if (!s) return;
    const ds_sample *x = ds_get(s, 0); /* question 81 */
    CHECK(x->n_turns == 2 && !strncmp(x->turns[1], "Rewrite your previous response.", 31));
    CHECK_MSG(ds_turn_prompt(s, x, 2, answers, &p, err) == 0, "%s", err);
    char want[4096];
    snprintf(want, sizeof want, "[INST] %s [/INST] Aloha! </s><s>[INST] %s [/INST]", x->turns[0],
             x->turns[1]);
    CHECK_MSG(p && !strcmp(p, want), "got '%s'", p ? p : "");
    CHECK(ds_turn_parse_special(s, 2) && !ds_turn_parse_special(s, 1));
    free(p);
    CHECK(ds_turn_prompt(s, x, 3, answers, &p, err) == -1 && strstr(err, "no turn 3"));
    ds_free(s);

    CHECK_MSG(ds_open_chat(&s, "spec_bench/writing", NULL, NULL, NULL, err) == 0, "%s", err);
    if (!s) return;
    x = ds_get(s, 0);
    CHECK_MSG(ds_turn_prompt(s, x, 2, answers, &p, err) == 0, "%s", err);
    snprintf(want, sizeof want, "%s USER: %s ASSISTANT: Aloha!</s>USER: %s ASSISTANT:", SYS_VICUNA,
             x->turns[0], x->turns[1]);
    CHECK_MSG(p && !strcmp(p, want), "got '%s'", p ? p : "");
    free(p);
    ds_free(s);

    CHECK_MSG(ds_open_chat(&s, "mt_bench", "chat", "chatml", NULL, err) == 0, "%s", err);
    if (!s) return;
    x = ds_get(s, 0);
    CHECK_MSG(ds_turn_prompt(s, x, 2, answers, &p, err) == 0, "%s", err);
    snprintf(want, sizeof want,
             "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\nAloha!<|im_end|>\n"
             "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n",
             x->turns[0], x->turns[1]);
    CHECK_MSG(p && !strcmp(p, want), "got '%s'", p ? p : "");
    free(p);
    ds_free(s);

    /* a template that is not a chat template has no later turns */
    CHECK_MSG(ds_open_chat(&s, "mt_bench", "raw", NULL, NULL, err) == 0, "%s", err);
    if (!s) return;
    CHECK(ds_turn_prompt(s, ds_get(s, 0), 2, answers, &p, err) == -1 &&
          strstr(err, "not a chat template"));
    ds_free(s);
}

int main(void) {
    test_formats();
    test_turns();
    test_detect();
    test_tokenized();
    return test_finish("test_datasets_chat");
}
