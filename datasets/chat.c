/* chat.c: chat formats, one row per format: how a system message and one user turn are wrapped
 * for a chat model, ending with the assistant's header (the generation prompt). Rows and names
 * are llama.cpp's (llama-chat.cpp, llm_chat_apply_template) for the five families decbench
 * runs, and recognition from a GGUF's tokenizer.chat_template (a Jinja text) follows
 * llama.cpp's llm_chat_detect_template: the same substring tests in the same order, so a
 * template llama.cpp would take for another family (Phi-4, Mistral v1/v3/v7, Zephyr, ...) is
 * not mistaken for one of ours.
 *
 * Where the models' own templates and llama.cpp differ, the rows say which they follow:
 *   - vicuna is FastChat's vicuna_v1.1 (Vicuna's training format and Spec-Bench's prompt:
 *     "SYSTEM USER: ... ASSISTANT:"); llama.cpp's "vicuna" separates with newlines instead.
 *   - chatml and deepseek add no default system message when there is none (llama.cpp's
 *     rendering); Qwen2.5's and DeepSeek-Coder's own templates insert one.
 *   - BOS is not part of the text: the tokenizer adds it when the vocabulary asks for it. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "datasets/ds_internal.h"

/* Later turns (multi-turn MT-bench): the history a conversation carries into its next turn,
 * as the models were trained and the papers prompted them. Llama 2 (Meta's template and
 * FastChat's llama-2, which LookaheadDecoding used): "[/INST] ANSWER </s><s>[INST] USER
 * [/INST]"; Vicuna v1.1 (FastChat, Spec-Bench): "ASSISTANT: ANSWER</s>USER: ...";
 * ChatML, Llama 3, DeepSeek-Coder: the end-of-turn token of their templates as llama.cpp
 * renders them. The first turn's BOS is the tokenizer's; the "<s>" of later turns is text. */
#define LLAMA2_HISTORY                                                                             \
    .reply_pre = " ", .reply_post = " </s>", .next_lead = "<s>[INST] ", .history_special = 1
static const ds_chat_row rows[] = {
    /* Llama 2 without system-message support: the system text opens the turn bare. */
    {.name = "llama2",
     .lead = "[INST] ",
     .sys_pre = "",
     .sys_post = "\n",
     .user_pre = "",
     .user_post = " [/INST]",
     .assistant = "",
     LLAMA2_HISTORY},
    /* Llama 2 chat (<<SYS>> block): the Llama-2-chat, FastChat and the papers' prompts. */
    {.name = "llama2-sys",
     .aliases = {"llama-2"},
     .lead = "[INST] ",
     .sys_pre = "<<SYS>>\n",
     .sys_post = "\n<</SYS>>\n\n",
     .user_pre = "",
     .user_post = " [/INST]",
     .assistant = "",
     LLAMA2_HISTORY},
    /* Differs from llama2-sys only in later turns (BOS inside the history), which is where
     * llama2-sys follows Meta's template too. */
    {.name = "llama2-sys-bos",
     .lead = "[INST] ",
     .sys_pre = "<<SYS>>\n",
     .sys_post = "\n<</SYS>>\n\n",
     .user_pre = "",
     .user_post = " [/INST]",
     .assistant = "",
     LLAMA2_HISTORY},
    /* Meta's own Llama-2-chat template: messages stripped (content.strip()). */
    {.name = "llama2-sys-strip",
     .lead = "[INST] ",
     .sys_pre = "<<SYS>>\n",
     .sys_post = "\n<</SYS>>\n\n",
     .user_pre = "",
     .user_post = " [/INST]",
     .assistant = "",
     .trim = 1,
     LLAMA2_HISTORY},
    {.name = "llama3",
     .aliases = {"llama-3"},
     .lead = "",
     .sys_pre = "<|start_header_id|>system<|end_header_id|>\n\n",
     .sys_post = "<|eot_id|>",
     .user_pre = "<|start_header_id|>user<|end_header_id|>\n\n",
     .user_post = "<|eot_id|>",
     .assistant = "<|start_header_id|>assistant<|end_header_id|>\n\n",
     .trim = 1,
     .special = 1,
     .reply_pre = "",
     .reply_post = "<|eot_id|>",
     .next_lead = ""},
    {.name = "chatml",
     .aliases = {"qwen"},
     .lead = "",
     .sys_pre = "<|im_start|>system\n",
     .sys_post = "<|im_end|>\n",
     .user_pre = "<|im_start|>user\n",
     .user_post = "<|im_end|>\n",
     .assistant = "<|im_start|>assistant\n",
     .special = 1,
     .reply_pre = "",
     .reply_post = "<|im_end|>\n",
     .next_lead = ""},
    /* DeepSeek-Coder instruct. */
    {.name = "deepseek",
     .aliases = {"deepseek-coder"},
     .lead = "",
     .sys_pre = "",
     .sys_post = "",
     .user_pre = "### Instruction:\n",
     .user_post = "\n",
     .assistant = "### Response:\n",
     .reply_pre = "",
     .reply_post = "\n<|EOT|>\n",
     .next_lead = "",
     .history_special = 1},
    {.name = "vicuna",
     .lead = "",
     .sys_pre = "",
     .sys_post = " ",
     .user_pre = "USER: ",
     .user_post = " ",
     .assistant = "ASSISTANT:",
     .reply_pre = " ",
     .reply_post = "</s>",
     .next_lead = "",
     .history_special = 1},
};
#define N_ROWS (sizeof rows / sizeof rows[0])

const ds_chat_row *ds_chat_find(const char *name) {
    for (size_t i = 0; name && i < N_ROWS; i++) {
        if (!strcmp(rows[i].name, name)) return &rows[i];
        for (int k = 0; k < 2 && rows[i].aliases[k]; k++)
            if (!strcmp(rows[i].aliases[k], name)) return &rows[i];
    }
    return NULL;
}

size_t ds_chat_names(char *buf, size_t n) {
    size_t len = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        int k = snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s", i ? ", " : "",
                         rows[i].name);
        len += k > 0 ? (size_t)k : 0;
        if (rows[i].aliases[0]) {
            k = snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, " (%s)",
                         rows[i].aliases[0]);
            len += k > 0 ? (size_t)k : 0;
        }
    }
    return len;
}

/* llama.cpp's llm_chat_detect_template, in its order; families decbench has no row for give
 * NULL. */
const char *ds_chat_detect(const char *t) {
    if (!t) return NULL;
    const ds_chat_row *named = ds_chat_find(t); /* a template may be a format's name */
    if (named) return named->name;
#define HAS(s) (strstr(t, s) != NULL)
    if (HAS("<|im_start|>")) return HAS("<|im_sep|>") ? NULL /* phi4 */ : "chatml";
    if (strncmp(t, "mistral", 7) == 0 || HAS("[INST]")) {
        if (HAS("[SYSTEM_PROMPT]") || HAS("' [INST] ' + system_message") ||
            HAS("[AVAILABLE_TOOLS]"))
            return NULL; /* Mistral v7, v1, v3 */
        if (HAS("content.strip()")) return "llama2-sys-strip";
        if (HAS("bos_token + '[INST]")) return "llama2-sys-bos";
        return HAS("<<SYS>>") ? "llama2-sys" : "llama2";
    }
    if (HAS("<|assistant|>") && (HAS("<|end|>") || HAS("<|user|>"))) return NULL; /* phi3, ... */
    if (HAS("<|user|>") && HAS("<|endoftext|>")) return NULL;                     /* zephyr */
    if (HAS("bos_token + message['role']")) return NULL;                          /* monarch */
    if (HAS("<start_of_turn>")) return NULL;                                      /* gemma */
    if (HAS("'\\n\\nAssistant: ' + eos_token")) return NULL;                      /* orion */
    if (HAS("GPT4 Correct ")) return NULL;                                        /* openchat */
    if (HAS("USER: ") && HAS("ASSISTANT: ")) return HAS("SYSTEM: ") ? NULL /* orca */ : "vicuna";
    if (HAS("### Instruction:") && HAS("<|EOT|>")) return "deepseek";
    if (HAS("<|START_OF_TURN_TOKEN|>") && HAS("<|USER_TOKEN|>")) return NULL; /* command-r */
    if (HAS("<|start_header_id|>") && HAS("<|end_header_id|>")) return "llama3";
    return NULL;
#undef HAS
}

/* Appends s[0..n) trimmed of leading and trailing whitespace when trim is set (llama.cpp's
 * trim: isspace in the C locale). */
static int add_message(ds_buf *out, const char *s, size_t n, int trim) {
    if (trim) {
        while (n && isspace((unsigned char)s[0])) s++, n--;
        while (n && isspace((unsigned char)s[n - 1])) n--;
    }
    return ds_buf_add(out, s, n);
}

int ds_chat_next_turn(const ds_chat_row *c, const char *answer, const char *user, ds_buf *out) {
    return ds_buf_adds(out, c->reply_pre) || add_message(out, answer, strlen(answer), c->trim) ||
           ds_buf_adds(out, c->reply_post) || ds_buf_adds(out, c->next_lead) ||
           ds_buf_adds(out, c->user_pre) || add_message(out, user, strlen(user), c->trim) ||
           ds_buf_adds(out, c->user_post) || ds_buf_adds(out, c->assistant);
}

int ds_chat_apply(const ds_chat_row *c, const char *system, size_t system_len, const char *user,
                  size_t user_len, ds_buf *out) {
    int bad = ds_buf_adds(out, c->lead);
    if (system)
        bad = bad || ds_buf_adds(out, c->sys_pre) ||
              add_message(out, system, system_len, c->trim) || ds_buf_adds(out, c->sys_post);
    return bad || ds_buf_adds(out, c->user_pre) || add_message(out, user, user_len, c->trim) ||
           ds_buf_adds(out, c->user_post) || ds_buf_adds(out, c->assistant);
}
