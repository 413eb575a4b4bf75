/* test_greedy.c: greedy decoding equals llama2.c's reference run.c token for token.
 *
 * tests/data/greedy_runc.tsv holds, for stories260K and llama2xs and a dozen prompts, the ids
 * run.c (karpathy/llama2.c, temperature 0) printed: the expected ids were produced by the
 * reference implementation, not by this project, so this is an independent check of the
 * tokenizer (prompt ids), the forward pass and the greedy decoder. run.c's -n counts prompt
 * plus generated positions and it stops before printing BOS (1); decbench emits the end token.
 * Each case runs with 1 and 2 threads. */
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "model/tokenizer.h"
#include "tests/testutil.h"
#include "util/err.h"

#define SRC_DIR DECBENCH_SOURCE_DIR

static int parse_json_string(const char *s, char *out, size_t n) {
    /* the prompts are plain ASCII with \" escapes only */
    if (*s++ != '"') return -1;
    size_t k = 0;
    while (*s && *s != '"' && k + 1 < n) {
        if (*s == '\\') s++;
        out[k++] = *s++;
    }
    out[k] = '\0';
    return *s == '"' ? 0 : -1;
}

int main(void) {
    char err[ERR_LEN], path[2048];
    snprintf(path, sizeof path, "%s/tests/data/greedy_runc.tsv", SRC_DIR);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return test_finish("test_greedy");
    tok *t;
    CHECK_MSG(tok_load(&t, test_shared("models/tok512.bin"), err) == 0, "%s", err);
    char line[16384];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char *model_name = strtok(line, "\t"), *prompt_json = strtok(NULL, "\t");
        int steps = atoi(strtok(NULL, "\t"));
        char *ids_s = strtok(NULL, "\n");
        int want[1024], n_want = 0;
        for (char *p = strtok(ids_s, " "); p; p = strtok(NULL, " ")) want[n_want++] = atoi(p);
        char prompt[512], mpath[256];
        CHECK(parse_json_string(prompt_json, prompt, sizeof prompt) == 0);
        snprintf(mpath, sizeof mpath, "models/%s", model_name);
        model *m;
        CHECK_MSG(model_open(&m, test_shared(mpath), err) == 0, "%s", err);
        int ids[600], n_ids;
        CHECK(tok_encode(t, prompt, 1, ids, &n_ids, err) == 0);
        int max_new = steps - n_ids + 1;
        if (n_want < max_new) want[n_want++] = 1; /* run.c stopped at the end token */
        for (int threads = 1; threads <= 2; threads++) {
            tpool *pool;
            CHECK(tpool_new(&pool, threads, err) == 0);
            dec_env env = {.target = m, .pool = pool, .kernels = KERN_EXACT};
            dec *d;
            CHECK(dec_create(&d, "greedy", &env, err) == 0);
            int out[1024], n_out;
            dec_stats st;
            CHECK(dec_generate(d, ids, n_ids, max_new, out, &n_out, &st, err) == 0);
            int same = n_out == n_want && memcmp(out, want, sizeof(int) * n_out) == 0;
            CHECK_MSG(same, "%s %s (%d threads): %d tokens, run.c %d", model_name, prompt, threads,
                      n_out, n_want);
            CHECK(st.target_steps == n_out && st.new_tokens == n_out);
            dec_free(d);
            tpool_free(pool);
            cases++;
        }
        model_close(m);
    }
    fclose(f);
    CHECK_MSG(cases == 48, "%d cases run, expected 24 prompts x 2 thread counts", cases);
    tok_free(t);
    return test_finish("test_greedy");
}
