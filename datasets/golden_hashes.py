#!/usr/bin/env python3
"""Independent re-rendering of every (dataset, template) pair, for tests/test_datasets.c.

Prints, per pair, the record count and the FNV-1a 64 hash of all prompts in file order, each
followed by one NUL byte. The prompts are built here the way the peer scripts build them in
Python (f-strings, str(list) for MBPP's test_list, FastChat's conversation formats), written
from the template descriptions in ../shared/datasets/*/SOURCE.md and datasets/README.md, not
from the C code, so that a match checks the C renderer (escaping, spacing, shots) end to end.

usage: python3 datasets/golden_hashes.py [DATASETS_DIR]   (default ../shared/datasets)
Not run by ctest (the tests must not need Python); rerun it when a template changes and paste
the output into the golden table of tests/test_datasets.c.
"""
import json
import os
import sys

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "datasets")


def jsonl(rel):
    with open(os.path.join(D, rel), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def fnv(prompts):
    h = 0xCBF29CE484222325
    for p in prompts:
        for b in p.encode("utf-8") + b"\0":
            h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


VICUNA_SYS = ("A chat between a curious user and an artificial intelligence assistant. "
              "The assistant gives helpful, detailed, and polite answers to the user's questions.")


def vicuna(msg):  # FastChat vicuna_v1.1, ADD_COLON_TWO, sep " ", one user turn
    return VICUNA_SYS + " " + "USER: " + msg + " " + "ASSISTANT:"


def llama2(msg):  # FastChat llama-2, empty system message, one user turn
    return "[INST] " + msg + " " + "[/INST]"


HE_INSTR = ("Please complete the following Python code without providing any additional tasks "
            "such as testing or explanations\n")

GSM_SHOTS = [
    ("There are 15 trees in the grove. Grove workers will plant trees in the grove today. After they are done, there will be 21 trees. How many trees did the grove workers plant today?",
     "There are 15 trees originally. Then there were 21 trees after some more were planted. So there must have been 21 - 15 = 6.", "6"),
    ("If there are 3 cars in the parking lot and 2 more cars arrive, how many cars are in the parking lot?",
     "There are originally 3 cars. 2 more cars arrive. 3 + 2 = 5.", "5"),
    ("Leah had 32 chocolates and her sister had 42. If they ate 35, how many pieces do they have left in total?",
     "Originally, Leah had 32 chocolates. Her sister had 42. So in total they had 32 + 42 = 74. After eating 35, they had 74 - 35 = 39.", "39"),
    ("Jason had 20 lollipops. He gave Denny some lollipops. Now Jason has 12 lollipops. How many lollipops did Jason give to Denny?",
     "Jason started with 20 lollipops. Then he had 12 after giving some to Denny. So he gave Denny 20 - 12 = 8.", "8"),
    ("Shawn has five toys. For Christmas, he got two toys each from his mom and dad. How many toys does he have now?",
     "Shawn started with 5 toys. If he got 2 toys each from his mom and dad, then that is 4 more toys. 5 + 4 = 9.", "9"),
    ("There were nine computers in the server room. Five more computers were installed each day, from monday to thursday. How many computers are now in the server room?",
     "There were originally 9 computers. For each of 4 days, 5 more computers were added. So 5 * 4 = 20 computers were added. 9 + 20 is 29.", "29"),
    ("Michael had 58 golf balls. On tuesday, he lost 23 golf balls. On wednesday, he lost 2 more. How many golf balls did he have at the end of wednesday?",
     "Michael started with 58 golf balls. After losing 23 on tuesday, he had 58 - 23 = 35. After losing 2 more, he had 35 - 2 = 33 golf balls.", "33"),
    ("Olivia has $23. She bought five bagels for $3 each. How much money does she have left?",
     "Olivia had 23 dollars. 5 bagels for 3 dollars each will be 5 x 3 = 15 dollars. So she has 23 - 15 dollars left. 23 - 15 is 8.", "8"),
]
GSM_DEMO = "".join(f"Q: {q}\nA: {c} The answer is {a}.\n\n" for q, c, a in GSM_SHOTS)

LADE_CNNDM = """[INST] <<SYS>>
You are an intelligent chatbot. Answer the questions only using the following context:

{article}

Here are some rules you always follow:

- Generate human readable output, avoid creating output with gibberish text.
- Generate only the requested output, don't include any other language before or after the requested output.
- Never say thank you, that you are happy to help, that you are an AI agent, etc. Just answer directly.
- Generate professional language typically used in business documents in North America.
- Never generate offensive or foul language.

<</SYS>>

Briefly summarize the given context. [/INST]
Summary: """


def mbpp_task(text, tests):
    return f"You are an expert Python programmer, and here is your task: {text} Your code should pass these tests:\n\n{tests}\n[BEGIN]\n"


def main():
    he = jsonl("humaneval/HumanEval.jsonl")
    mb = jsonl("mbpp/mbpp.jsonl")
    with open(os.path.join(D, "mbpp/sanitized-mbpp.json"), encoding="utf-8") as f:
        ms = json.load(f)
    gs = jsonl("gsm8k/test.jsonl")
    mt = jsonl("mt_bench/question.jsonl")
    sb = jsonl("spec_bench/question.jsonl")
    cn = jsonl("cnn_dailymail/specbench_summarization.jsonl")
    wm = jsonl("wmt_de_en/specbench_translation.jsonl")
    ts = jsonl("tinystories/prompts_once_upon_a_time.jsonl")

    by_id = {e["task_id"]: e for e in mb}
    mbpp_ctx = "".join(mbpp_task(by_id[i]["text"], by_id[i]["test_list"]) + f"{by_id[i]['code']}\n[DONE]\n"
                       for i in (1, 2, 3))
    sb_mt = [e for e in sb if e["category"] not in ("translation", "summarization", "qa", "math_reasoning", "rag")]

    rows = [
        ("humaneval", "ouroboros", [HE_INSTR + e["prompt"] for e in he]),
        ("humaneval", "ouroboros-chat", ["[INST] " + (HE_INSTR + e["prompt"])[:113] + "[/INST]\n" + (HE_INSTR + e["prompt"])[113:] for e in he]),
        ("humaneval", "lookahead", [e["prompt"] for e in he]),
        ("humaneval", "chat", [llama2(e["prompt"]) for e in he]),
        ("mbpp", "ouroboros", [mbpp_ctx + mbpp_task(e["text"], e["test_list"]) for e in mb]),
        ("mbpp/validation", "ouroboros", [mbpp_ctx + mbpp_task(e["text"], e["test_list"]) for e in mb if 511 <= e["task_id"] <= 600]),
        ("mbpp", "ouroboros-0shot", [mbpp_task(e["text"], e["test_list"]) for e in mb]),
        ("mbpp", "raw", [e["text"] for e in mb]),
        ("mbpp-sanitized", "raw", [e["prompt"] for e in ms]),
        ("mbpp-sanitized", "ouroboros-0shot", [mbpp_task(e["prompt"], e["test_list"]) for e in ms]),
        ("gsm8k", "ouroboros", [GSM_DEMO + "Q: " + e["question"] + "\n" + "A:" for e in gs]),
        ("gsm8k", "specbench", [vicuna(e["question"]) for e in gs]),
        ("gsm8k", "chat", [llama2(e["question"]) for e in gs]),
        ("mt_bench", "lookahead", [llama2(e["turns"][0]) for e in mt]),
        ("mt_bench", "specbench", [vicuna(e["turns"][0]) for e in mt]),
        ("spec_bench", "specbench", [vicuna(e["turns"][0]) for e in sb]),
        ("spec_bench", "raw", [e["turns"][0] for e in sb]),
        ("spec_bench/mt_bench", "specbench", [vicuna(e["turns"][0]) for e in sb_mt]),
        ("cnn_dm", "ouroboros", ["Please summarize the following document within one sentence. Document: {article}  Summary: ".format(**e) for e in cn]),
        ("cnn_dm", "ouroboros-chat", ["[INST] Please summarize the following document within one sentence and do not output anything more. Document: {article}  Summary: [/INST]".format(**e) for e in cn]),
        ("cnn_dm", "lookahead", [LADE_CNNDM.format(article=e["article"]) for e in cn]),
        ("cnn_dm", "specbench", [vicuna("Summarize: " + e["article"]) for e in cn]),
        ("wmt_de_en", "ouroboros", ["Translate this German sentence to English. German: {de} English: ".format(**e) for e in wm]),
        ("wmt_de_en", "ouroboros-chat", ["[INST] " + "Translate this German sentence to English and do not output anything more. German: {de} English: ".format(**e) + " [/INST]" for e in wm]),
        ("wmt_de_en", "specbench", [vicuna("Translate German to English: " + e["de"]) for e in wm]),
        ("tinystories", "raw", [e["prompt"] for e in ts]),
        ("tinystories", "chat", [llama2(e["prompt"]) for e in ts]),
    ]
    # Cross-checks of the derived files against Spec-Bench (SOURCE.md says they are copies).
    assert [vicuna("Summarize: " + e["article"]) for e in cn] == [vicuna(e["turns"][0]) for e in sb if e["category"] == "summarization"]
    assert [vicuna("Translate German to English: " + e["de"]) for e in wm] == [vicuna(e["turns"][0]) for e in sb if e["category"] == "translation"]
    for spec, tpl, prompts in rows:
        print(f'    {{"{spec}", "{tpl}", {len(prompts)}, 0x{fnv(prompts):016x}ull}},')


if __name__ == "__main__":
    main()
