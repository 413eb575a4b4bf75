#include "util/paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int paths_is_dir(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int try_dir(const char *dir, char *out, size_t n) {
    snprintf(out, n, "%s", dir);
    return paths_is_dir(dir);
}

int paths_shared_dir(const char *explicit_dir, char *out, size_t n) {
    if (explicit_dir && explicit_dir[0]) return try_dir(explicit_dir, out, n) ? 0 : -1;
    const char *env = getenv("DECBENCH_SHARED");
    if (env && env[0]) return try_dir(env, out, n) ? 0 : -1;
    if (try_dir("../shared", out, n) || try_dir("shared", out, n)) return 0;
#ifdef DECBENCH_SOURCE_DIR
    if (try_dir(DECBENCH_SOURCE_DIR "/../shared", out, n)) return 0;
#endif
    return -1;
}

static int sub_dir(const char *env_name, const char *explicit_dir, const char *sub, char *out,
                   size_t n) {
    if (explicit_dir && explicit_dir[0]) return try_dir(explicit_dir, out, n) ? 0 : -1;
    const char *env = getenv(env_name);
    if (env && env[0]) return try_dir(env, out, n) ? 0 : -1;
    char shared[4096];
    if (paths_shared_dir(NULL, shared, sizeof shared) != 0) {
        snprintf(out, n, "%s/%s", shared, sub);
        return -1;
    }
    snprintf(out, n, "%s/%s", shared, sub);
    return paths_is_dir(out) ? 0 : -1;
}

int paths_models_dir(const char *explicit_shared, char *out, size_t n) {
    if (explicit_shared && explicit_shared[0]) {
        snprintf(out, n, "%s/models", explicit_shared);
        return paths_is_dir(out) ? 0 : -1;
    }
    return sub_dir("DECBENCH_MODELS", NULL, "models", out, n);
}

int paths_datasets_dir(const char *explicit_dir, char *out, size_t n) {
    return sub_dir("DECBENCH_DATASETS", explicit_dir, "datasets", out, n);
}

int paths_data_dir(const char *sub, char *out, size_t n) {
    char dir[4096];
    snprintf(out, n, "%s", sub);
    const char *home = getenv("DECBENCH_HOME");
    if (home && home[0]) {
        snprintf(dir, sizeof dir, "%s/%s", home, sub);
        if (try_dir(dir, out, n)) return 0;
        snprintf(dir, sizeof dir, "%s/share/decbench/%s", home, sub);
        if (try_dir(dir, out, n)) return 0;
    }
    /* The binary's folder: /proc/self/exe names the file even when run through a symlink. */
    char exe[2048];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(dir, sizeof dir, "%s/../share/decbench/%s", exe, sub);
            if (try_dir(dir, out, n)) return 0;
        }
    }
#ifdef DECBENCH_SOURCE_DIR
    snprintf(dir, sizeof dir, "%s/%s", DECBENCH_SOURCE_DIR, sub);
    if (try_dir(dir, out, n)) return 0;
#endif
#ifdef DECBENCH_INSTALL_DATADIR
    snprintf(dir, sizeof dir, "%s/%s", DECBENCH_INSTALL_DATADIR, sub);
    if (try_dir(dir, out, n)) return 0;
#endif
    return -1;
}

/* Appends the components of rest to out (an absolute path, no trailing '/'), lexically. */
static int append_lexical(char *out, size_t n, const char *rest) {
    size_t len = strlen(out);
    while (*rest) {
        size_t c = strcspn(rest, "/");
        if (c == 0 || (c == 1 && rest[0] == '.')) {
            /* "//" or "." */
        } else if (c == 2 && rest[0] == '.' && rest[1] == '.') {
            while (len > 0 && out[len - 1] != '/') len--;
            if (len > 1) len--; /* the '/' before it, unless it is the root */
            out[len] = '\0';
        } else {
            if (len + (len > 1) + c + 1 > n) return -1;
            if (len != 1) out[len++] = '/';
            memcpy(out + len, rest, c);
            len += c;
            out[len] = '\0';
        }
        rest += c;
        while (*rest == '/') rest++;
    }
    return 0;
}

int paths_resolve(const char *path, char *out, size_t n) {
    snprintf(out, n, "%s", path);
    char buf[PATH_MAX * 2], real[PATH_MAX];
    if (path[0] == '/') {
        if (strlen(path) >= sizeof buf) return -1;
        snprintf(buf, sizeof buf, "%s", path);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) return -1;
        if ((size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= sizeof buf) return -1;
    }
    /* the longest existing prefix: cut the last component until realpath() succeeds */
    size_t cut = strlen(buf);
    for (;;) {
        char saved = buf[cut];
        buf[cut] = '\0';
        int ok = realpath(cut ? buf : "/", real) != NULL;
        buf[cut] = saved;
        if (ok) break;
        while (cut > 0 && buf[cut - 1] != '/') cut--; /* to the start of the last component */
        while (cut > 0 && buf[cut - 1] == '/') cut--; /* and the slashes before it */
        if (cut == 0 && buf[0] != '/') return -1;
    }
    char res[PATH_MAX * 2];
    snprintf(res, sizeof res, "%s", real);
    if (append_lexical(res, sizeof res, buf + cut) || strlen(res) >= n) return -1;
    snprintf(out, n, "%s", res);
    return 0;
}
