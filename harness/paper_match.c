/* paper_match.c: which of a paper's model pairs or sizes is closest to the model given.
 *
 * Decisions (README, "Reproducing the papers"):
 *   - The family comes from the GGUF's general.name (else general.basename), lower-cased:
 *     "codellama" / "code llama" / "code-llama" -> CodeLlama; "deepseek" -> DeepSeek; "vicuna"
 *     -> Vicuna; a word "yi" -> Yi; any other "llama" (Llama 1/2/3, TinyLlama) -> Llama-2. A
 *     name naming none of them falls back on general.architecture: "llama" (Mistral and other
 *     Llama-shaped models) -> Llama-2; anything else (qwen2, qwen3) has no family.
 *   - A llama2.c checkpoint (the TinyStories models) has no metadata: it is a Llama-2-shaped
 *     model, so the Llama-2 family; this is the stated default the tests run under.
 *   - Ouroboros Table 7 has rows only for some (task, pair): a family without a row for a task
 *     takes the first pair of its chain of stand-ins that has one (CodeLlama and Llama-2 stand in
 *     for each other: CodeLlama is Llama 2 trained on code; DeepSeek-Coder falls back on
 *     CodeLlama then Llama-2, Vicuna (Llama fine-tuned on chats) on Llama-2 then CodeLlama); a
 *     model with no family takes the task's first row, the paper's lead pair (Yi-34b/6b).
 *   - The size (lookahead's A100 configurations, Spec-Bench's Vicuna 7B/13B/33B tables) is the
 *     one nearest the target's parameter count on a log scale (below 7B: 7B). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/paper.h"
#include "model/formats/gguf.h"
#include "model/loader/model_file.h"
#include "model/model.h"
#include "util/err.h"

static void lower(const char *s, char *out, size_t n) {
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

/* A whole word of letters and digits in s. */
static int has_word(const char *s, const char *word) {
    size_t w = strlen(word);
    for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
        int before = p == s || !isalnum((unsigned char)p[-1]);
        int after = !isalnum((unsigned char)p[w]);
        if (before && after) return 1;
    }
    return 0;
}

const char *paper_family_of(const char *name, const char *arch) {
    char s[256];
    lower(name ? name : "", s, sizeof s);
    if (strstr(s, "codellama") || strstr(s, "code llama") || strstr(s, "code-llama"))
        return "codellama";
    if (strstr(s, "deepseek")) return "deepseek";
    if (strstr(s, "vicuna")) return "vicuna";
    if (has_word(s, "yi")) return "yi";
    if (strstr(s, "llama")) return "llama2";
    if (arch && !strcmp(arch, "llama")) return "llama2";
    return NULL;
}

static void copy(char *out, size_t n, const char *s) {
    snprintf(out, n, "%s", s ? s : "");
}

int paper_model_read(const char *path, paper_model_info *m, char *err) {
    memset(m, 0, sizeof *m);
    model *md;
    if (model_open(&md, path, err)) return -1;
    m->params = (double)model_param_count(md);
    int is_gguf = md->format && !strcmp(md->format, "gguf");
    model_close(md);
    copy(m->arch, sizeof m->arch, "llama");
    if (is_gguf) {
        gguf *g;
        if (gguf_open(&g, path, err)) return -1;
        const char *s = NULL;
        char e[ERR_LEN];
        if (!gguf_get_str(g, "general.architecture", &s, e)) copy(m->arch, sizeof m->arch, s);
        if (!gguf_get_str(g, "general.name", &s, e) || !gguf_get_str(g, "general.basename", &s, e))
            copy(m->name, sizeof m->name, s);
        gguf_close(g);
    }
    m->family = paper_family_of(m->name, m->arch);
    char s[256];
    lower(m->name, s, sizeof s);
    if (!is_gguf)
        snprintf(m->why, sizeof m->why,
                 "a llama2.c checkpoint (no name): a Llama-2-shaped model, the Llama-2 family");
    else if (m->family && strcmp(m->family, "llama2") == 0 && !strstr(s, "llama"))
        snprintf(m->why, sizeof m->why,
                 "GGUF '%.100s', architecture %.40s: no family in the name, a Llama-shaped "
                 "model: the Llama-2 family",
                 m->name, m->arch);
    else if (m->family)
        snprintf(m->why, sizeof m->why, "GGUF general.name '%.100s': the %s family", m->name,
                 m->family);
    else
        snprintf(m->why, sizeof m->why,
                 "GGUF '%.100s', architecture %.40s: none of the papers' families", m->name,
                 m->arch);
    return 0;
}

/* The stand-ins of each family, closest first. */
static const char *const chains[][4] = {
    {"yi", "yi", NULL},
    {"deepseek", "deepseek", "codellama", "llama2"},
    {"codellama", "codellama", "llama2", NULL},
    {"llama2", "llama2", "codellama", NULL},
    {"vicuna", "llama2", "codellama", NULL},
};

static const char *pair_title(const char *key) {
    int n;
    const paper_model *p = paper_pairs(&n);
    for (int i = 0; i < n; i++)
        if (!strcmp(p[i].key, key)) return p[i].title;
    return key;
}

const paper_setting *paper_pair_for(const char *task, const char *family, char *why, size_t n) {
    for (size_t c = 0; family && c < sizeof chains / sizeof chains[0]; c++) {
        if (strcmp(chains[c][0], family)) continue;
        for (int k = 1; k < 4 && chains[c][k]; k++) {
            const paper_setting *s = paper_setting_find(task, chains[c][k]);
            if (!s) continue;
            snprintf(why, n, "%s%s", pair_title(s->pair),
                     k == 1 && !strcmp(chains[c][k], family)
                         ? ""
                         : " (the closest pair Table 7 has for this task)");
            return s;
        }
    }
    int np;
    const paper_model *p = paper_pairs(&np);
    for (int i = 0; i < np; i++) {
        const paper_setting *s = paper_setting_find(task, p[i].key);
        if (!s) continue;
        snprintf(why, n, "%s (the paper's first pair for this task: the model matches none)",
                 p[i].title);
        return s;
    }
    return NULL;
}

const char *paper_size_for(double params) {
    int n;
    const paper_model *s = paper_sizes(&n);
    int best = 0;
    double x = log(params > 1 ? params : 1);
    for (int i = 1; i < n; i++)
        if (fabs(x - log(s[i].params)) < fabs(x - log(s[best].params))) best = i;
    return s[best].key;
}
