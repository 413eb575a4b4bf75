/* file.h: opening the files a user names, and writing outputs that are never half-written.
 *
 * Reading. A path on the command line can be anything: a directory, a FIFO (open() blocks
 * until a writer comes, forever), a device (/dev/zero never ends, /dev/null is empty), a socket.
 * Every reader of a user-named file goes through one of these before it reads a byte:
 *
 *   file_open_regular(path, what, err)   opens read-only and returns the fd, or -1. It opens
 *       with O_NONBLOCK, so a FIFO cannot block, and refuses anything fstat() does not call a
 *       regular file; no window between the check and the open. Use it when the reader opens
 *       the file itself (fdopen() the fd for stdio).
 *   file_fopen_regular(path, what, err)  the same as a stdio stream ("rb"), or NULL.
 *   file_read_all(path, what, max, &buf, &size, err)  the whole file into memory (a NUL
 *       after the last byte), refusing a file larger than max bytes with both sizes named.
 *   file_check_regular(path, what, err)  stat() only, never opens: for a path handed to code
 *       that opens it itself (a library, another reader of ours that is not yet converted).
 *   file_check_output(path, what, err)   an output or a database that may not exist yet: absent
 *       or a regular file is fine, anything else is refused (`--db /dev/null` would otherwise
 *       make SQLite create /dev/null-journal; `-o DIR` would fail late).
 *
 * `what` is a noun that reads after "a": "model", "tokenizer", "dataset", "pool", "database".
 * Messages (one line, the path first):
 *   PATH: cannot open WHAT: No such file or directory
 *   PATH: is a directory, expected a WHAT file
 *   PATH: is not a regular file (a FIFO), expected a WHAT file
 *
 * Users: models (model_open, llama2.c, GGUF), tokenizers (tok_load, convert's vocabulary),
 * datasets, decoder state files (--state-load/--pool-load), databases (db_open: a FIFO, a
 * directory or a device is refused before SQLite is involved), --project-cost, gnuplot scripts
 * (--plots-dir) and the model fingerprint. tests/cli_file_kinds.sh names each option.
 *
 * Writing. file_out writes PATH through PATH.tmp and a rename, so PATH holds either its old
 * contents or the complete new file, never a prefix: a full disk, an error or a kill while
 * writing leaves PATH untouched.
 *
 *   file_out o;
 *   if (file_out_open(&o, path, "model", err)) return -1;
 *   ... fwrite(..., o.f) (check each) ...; on a failure: file_out_abort(&o); return -1;
 *   return file_out_commit(&o, err);        flush, fsync, rename; on failure removes PATH.tmp
 *
 * An error or abort removes PATH.tmp; a killed process leaves it (nothing can run then), and
 * the next write of PATH replaces it. Two processes writing the same PATH at once: the second
 * is refused (PATH.tmp is locked with flock() while written), instead of the two interleaving
 * into one file. Written this way: synth, decoder state files (--state-save/--pool-save),
 * report --out, cost --csv, plot's data files (its figures are renamed from a private folder,
 * results/plot_render.c). */
#ifndef UTIL_FILE_H
#define UTIL_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* "a directory", "a FIFO", "a socket", "a character device", "a block device", "a symbolic
 * link", "a regular file" or "an unknown kind of file", for messages. */
const char *file_kind_name(mode_t mode);

int file_open_regular(const char *path, const char *what, char *err);
FILE *file_fopen_regular(const char *path, const char *what, char *err);
/* *buf is malloc'd (size + 1 bytes, buf[size] = 0): the caller frees it. */
int file_read_all(const char *path, const char *what, uint64_t max, unsigned char **buf,
                  size_t *size, char *err);
int file_check_regular(const char *path, const char *what, char *err);
int file_check_output(const char *path, const char *what, char *err);

/* "844.4 TB", "512.0 GiB"-style sizes for messages: decimal units (kB, MB, GB, TB, PB) with
 * one decimal, into buf (at least 16 bytes). Returns buf. */
const char *file_human_size(uint64_t bytes, char *buf, size_t n);

#define FILE_PATH_MAX 4096

typedef struct {
    FILE *f; /* write the contents here */
    char path[FILE_PATH_MAX];
    char tmp[FILE_PATH_MAX + 8]; /* path + ".tmp" */
} file_out;

/* Creates (or truncates) PATH.tmp for writing. Refuses a PATH that exists and is not a regular
 * file (file_check_output) and a PATH.tmp another process is writing. */
int file_out_open(file_out *o, const char *path, const char *what, char *err);

/* Refuses (and aborts o) when the file system of PATH.tmp has fewer than `bytes` bytes
 * available to this user: a write that cannot fit fails at once, with both numbers in the
 * message, instead of after filling the disk. */
int file_out_check_space(file_out *o, uint64_t bytes, char *err);

/* Flushes, fsyncs and renames PATH.tmp to PATH. Any failure (including an earlier failed write
 * that left the stream's error flag set) removes PATH.tmp and returns -1 naming PATH. */
int file_out_commit(file_out *o, char *err);

/* Closes and removes PATH.tmp. Harmless after commit or a failed open, and when called twice. */
void file_out_abort(file_out *o);

#endif
