/* paths.h: where the data lives.
 *
 * The "shared" folder holds models/, datasets/ and tokenizer-vectors/. It is found, first hit
 * wins: an explicit flag value (the caller passes it), $DECBENCH_SHARED, ./../shared (the
 * checkout's sibling when run from the project root), ./shared, then <source dir>/../shared.
 * $DECBENCH_MODELS and $DECBENCH_DATASETS override the two sub-folders separately. */
#ifndef UTIL_PATHS_H
#define UTIL_PATHS_H

#include <stddef.h>

/* Writes the shared folder into out (size n). explicit_dir may be NULL. Returns 0, or -1 if
 * none of the candidates exists (out then holds the last candidate tried). */
int paths_shared_dir(const char *explicit_dir, char *out, size_t n);

/* The models folder: $DECBENCH_MODELS, else <shared>/models. Same return convention. */
int paths_models_dir(const char *explicit_shared, char *out, size_t n);

/* The datasets folder: explicit_dir, else $DECBENCH_DATASETS, else <shared>/datasets. */
int paths_datasets_dir(const char *explicit_dir, char *out, size_t n);

/* 1 if path names an existing directory. */
int paths_is_dir(const char *path);

/* The absolute form of path, for telling whether two names mean one file: the longest prefix
 * that exists resolved by realpath() (symbolic links, "..", the current folder), the rest
 * appended with "." and "//" dropped and ".." taking off the component before it (as the
 * kernel would once those folders exist). Returns 0, or -1 (out is then path as given) when
 * the current folder cannot be read or the result does not fit in n bytes. */
int paths_resolve(const char *path, char *out, size_t n);

/* A folder of the files decbench reads at run time besides the data (the gnuplot scripts:
 * sub = "plots"), wherever decbench was installed or built: $DECBENCH_HOME/SUB (a checkout or
 * an install prefix's share/decbench), then <directory of the binary>/../share/decbench/SUB (an
 * installed, possibly relocated, `cmake --install`), then <source dir>/SUB (a binary of the
 * build tree: its own checkout's scripts, not an older installed copy's), then <install
 * prefix>/share/decbench/SUB as configured (a binary copied away from its prefix). Returns 0
 * with the first that exists in out, or -1 (out then holds the last tried). */
int paths_data_dir(const char *sub, char *out, size_t n);

#endif
