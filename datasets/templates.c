/* templates.c: the prompt template strings, each with its source. The strings are facts about
 * how the papers prompted their models and are reproduced exactly (spacing and newlines
 * included); the code around them is ours. Sources:
 *   [OURO]  thunlp/Ouroboros @7dac65b7, benchmark/test_*.py (the model_type "llama" path for
 *           base-model prompts, "chat"/"codellama" for chat prompts)
 *   [LADE]  hao-ai-lab/LookaheadDecoding, applications/eval_*.py
 *   [SPEC]  hemingkx/Spec-Bench @fd2c1cd7, evaluation/eval.py: FastChat conversation template
 *           of the model (Vicuna v1.1 for its reference model Vicuna-7B-v1.3), every turn
 *   [FC]    lm-sys/FastChat fastchat/conversation.py: "vicuna_v1.1" (system message + " USER: "
 *           + message + " ASSISTANT:") and "llama-2" ("[INST] " + message + " [/INST]" when
 *           the system message is empty, its default)
 * Placeholders: {name} is a field of the record (see registry.c), {raw} the raw field and
 * {shots} the dataset's few-shot prefix. See datasets/README.md for the per-dataset table. */
#include <stdio.h>
#include <string.h>

#include "datasets/ds_internal.h"
#include "util/err.h"

/* [FC] Vicuna v1.1's system message: Spec-Bench runs Vicuna-7B-v1.3 with it, one user turn,
 * in the "vicuna" chat format (datasets/chat.c: SYSTEM " USER: " message " ASSISTANT:"). */
const char ds_sys_vicuna[] =
    "A chat between a curious user and an artificial intelligence assistant. The assistant "
    "gives helpful, detailed, and polite answers to the user's questions.";
/* [FC] Llama-2 chat, one user turn, no system prompt: what LADE eval_mtbench.py produces for
 * Llama-2-chat through get_conversation_template (FastChat's llama-2 system message is
 * empty), i.e. "[INST] {raw} [/INST]" in the "llama2-sys" chat format. The tokenizer adds
 * <s>; it is not part of the text. */

/* HumanEval. [OURO] test_human_eval.py gen_prompt() prepends this line (generate_len 512). */
#define HUMANEVAL_INSTR                                                                            \
    "Please complete the following Python code without providing any additional tasks such "       \
    "as testing or explanations\n"
const char ds_tpl_humaneval_ouroboros[] = HUMANEVAL_INSTR "{prompt}";
/* [OURO] --model_type codellama: "[INST] " + p[:113] + "[/INST]\n" + p[113:], where p is the
 * prompt above; its first 113 characters are exactly the instruction line with its "\n". */
const char ds_tpl_humaneval_ouroboros_chat[] = "[INST] " HUMANEVAL_INSTR "[/INST]\n{prompt}";

/* MBPP. [OURO] test_mbpp.py gen_context_prompt() / evaluate(): three shots from the "prompt"
 * split (the first three rows of HF mbpp "prompt", task_id 1, 2, 3), then the task; {test_list}
 * is Python's str() of the list of assert strings. generate_len 512. */
#define MBPP_TASK                                                                                  \
    "You are an expert Python programmer, and here is your task: {text} Your code should pass "    \
    "these tests:\n\n{test_list}\n[BEGIN]\n"
const char ds_tpl_mbpp_shot[] = MBPP_TASK "{code}\n[DONE]\n";
const char ds_tpl_mbpp_ouroboros[] = "{shots}" MBPP_TASK;
/* Ours: the same task text without the three shots (a shorter prompt for small models). */
const char ds_tpl_mbpp_ouroboros_0shot[] = MBPP_TASK;

/* GSM8K. [OURO] test_gsm8k.py build_prompt(): 8-shot chain of thought, each shot
 * "Q: {q}\nA: {chain} The answer is {answer}.\n\n", then "Q: {question}\nA:". The exemplars
 * are those of Wei et al. 2022 (chain-of-thought prompting, appendix table of math word
 * problem exemplars), as collected in Guangxuan-Xiao/GSM8K-eval. generate_len 256. */
const char ds_tpl_gsm8k_ouroboros[] = "{shots}Q: {question}\nA:";

static const char *const gsm8k_exemplars[8][3] = {
    {"There are 15 trees in the grove. Grove workers will plant trees in the grove today. "
     "After they are done, there will be 21 trees. How many trees did the grove workers plant "
     "today?",
     "There are 15 trees originally. Then there were 21 trees after some more were planted. "
     "So there must have been 21 - 15 = 6.",
     "6"},
    {"If there are 3 cars in the parking lot and 2 more cars arrive, how many cars are in the "
     "parking lot?",
     "There are originally 3 cars. 2 more cars arrive. 3 + 2 = 5.", "5"},
    {"Leah had 32 chocolates and her sister had 42. If they ate 35, how many pieces do they "
     "have left in total?",
     "Originally, Leah had 32 chocolates. Her sister had 42. So in total they had 32 + 42 = "
     "74. After eating 35, they had 74 - 35 = 39.",
     "39"},
    {"Jason had 20 lollipops. He gave Denny some lollipops. Now Jason has 12 lollipops. How "
     "many lollipops did Jason give to Denny?",
     "Jason started with 20 lollipops. Then he had 12 after giving some to Denny. So he gave "
     "Denny 20 - 12 = 8.",
     "8"},
    {"Shawn has five toys. For Christmas, he got two toys each from his mom and dad. How many "
     "toys does he have now?",
     "Shawn started with 5 toys. If he got 2 toys each from his mom and dad, then that is 4 "
     "more toys. 5 + 4 = 9.",
     "9"},
    {"There were nine computers in the server room. Five more computers were installed each "
     "day, from monday to thursday. How many computers are now in the server room?",
     "There were originally 9 computers. For each of 4 days, 5 more computers were added. So "
     "5 * 4 = 20 computers were added. 9 + 20 is 29.",
     "29"},
    {"Michael had 58 golf balls. On tuesday, he lost 23 golf balls. On wednesday, he lost 2 "
     "more. How many golf balls did he have at the end of wednesday?",
     "Michael started with 58 golf balls. After losing 23 on tuesday, he had 58 - 23 = 35. "
     "After losing 2 more, he had 35 - 2 = 33 golf balls.",
     "33"},
    {"Olivia has $23. She bought five bagels for $3 each. How much money does she have left?",
     "Olivia had 23 dollars. 5 bagels for 3 dollars each will be 5 x 3 = 15 dollars. So she "
     "has 23 - 15 dollars left. 23 - 15 is 8.",
     "8"},
};

int ds_shots_gsm8k(const ds_def *d, const ds_fields *recs, int n, ds_buf *out, char *err) {
    (void)d, (void)recs, (void)n;
    for (int i = 0; i < 8; i++) {
        const char *const *e = gsm8k_exemplars[i];
        if (ds_buf_adds(out, "Q: ") || ds_buf_adds(out, e[0]) || ds_buf_adds(out, "\nA: ") ||
            ds_buf_adds(out, e[1]) || ds_buf_adds(out, " The answer is ") ||
            ds_buf_adds(out, e[2]) || ds_buf_adds(out, ".\n\n"))
            return err_set(err, "out of memory building the GSM8K shots");
    }
    return 0;
}

int ds_shots_mbpp(const ds_def *d, const ds_fields *recs, int n, ds_buf *out, char *err) {
    for (long long want = 1; want <= 3; want++) {
        int found = -1;
        for (int i = 0; i < n && found < 0; i++)
            if (recs[i].num_id == want) found = i;
        if (found < 0)
            return err_set(err,
                           "%s: the 3-shot prompt needs task_id 1, 2 and 3 (the prompt split) "
                           "but task_id %lld is not in the file",
                           d->name, want);
        if (ds_render(ds_tpl_mbpp_shot, d, &recs[found], NULL, out, err)) return -1;
    }
    return 0;
}

/* CNN/DailyMail. [OURO] test_cnndm.py prompt / prompt_chat (note the two spaces before
 * "Summary:"), generate_len 128. prompt_chat is "[INST] " + this message + " [/INST]". */
const char ds_tpl_cnndm_ouroboros[] =
    "Please summarize the following document within one sentence. Document: {article}  "
    "Summary: ";
const char ds_msg_cnndm_ouroboros_chat[] =
    "Please summarize the following document within one sentence and do not output "
    "anything more. Document: {article}  Summary:";
/* [LADE] applications/eval_cnndm.py (code index copy at 9d50de4a): a Llama-2 chat prompt with
 * the article in the system prompt, the user turn, then "\nSummary: " after [/INST];
 * max_new_tokens 1024 (inputs over 2048 tokens skipped). */
const char ds_sys_cnndm_lookahead[] =
    "You are an intelligent chatbot. Answer the questions only using the following context:\n"
    "\n"
    "{article}\n"
    "\n"
    "Here are some rules you always follow:\n"
    "\n"
    "- Generate human readable output, avoid creating output with gibberish text.\n"
    "- Generate only the requested output, don't include any other language before or after "
    "the requested output.\n"
    "- Never say thank you, that you are happy to help, that you are an AI agent, etc. Just "
    "answer directly.\n"
    "- Generate professional language typically used in business documents in North America.\n"
    "- Never generate offensive or foul language.\n";
const char ds_msg_cnndm_lookahead[] = "Briefly summarize the given context.";
const char ds_reply_cnndm_lookahead[] = "\nSummary: ";
/* [SPEC] the summarization turn is "Summarize: {article}". */
const char ds_msg_cnndm_specbench[] = "Summarize: {article}";

/* WMT de-en. [OURO] test_wmt16.py prompt / prompt_chat; for chat models run() adds
 * "[INST] " before and " [/INST]" after (hence two spaces after "English:"). generate_len 64. */
const char ds_tpl_wmt_ouroboros[] =
    "Translate this German sentence to English. German: {de} English: ";
const char ds_msg_wmt_ouroboros_chat[] =
    "Translate this German sentence to English and do not output anything more. "
    "German: {de} English: ";
/* [SPEC] the translation turn is "Translate German to English: {de}". */
const char ds_msg_wmt_specbench[] = "Translate German to English: {de}";
