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
 *   file_map_regular(path, what, &map, &size, err)  the same, mapped read-only (private) and
 *       closed: for readers that bind to the bytes in place (GGUF, safetensors, tokenizers);
 *       an empty file is refused, as mmap cannot map one.
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
 * into one file. Written this way: synth, convert (gguf_writer_write), decoder state files
 * (--state-save/--pool-save), report --out, cost --csv, plot's data files (its figures are
 * checked whole and renamed from a private folder, results/plot/plot_render.c). */
#ifndef UTIL_FILE_H
#define UTIL_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* "a directory", "a FIFO", "a socket", "a character device", "a block device", "a symbolic
 * link", "a regular file" or "an unknown kind of file", for messages. */
const char *file_kind_name(mode_t mode);

int file_open_regular(const char *path, const char *what, char *err);
/* file_open_regular, then the whole file mapped read-only: *map (munmap(*map, *size) when done)
 * and *size; -1 with "PATH: cannot stat: ...", "PATH: empty file" or "PATH: mmap failed: ...". */
int file_map_regular(const char *path, const char *what, void **map, size_t *size, char *err);
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

/* ---- a command's files, checked together before it does any work ------------------------
 *
 * An output that is also an input would replace it: `report --db R.db -o R.db` turned the
 * database into a report, `run --state-save MODEL.bin` the model into a pool. Every command
 * lists the files it reads and writes, each with the option naming it, and file_check_io
 * refuses, before anything is measured or written:
 *   - an output that is any input (same device and inode; or, when neither exists yet, the
 *     same path once resolved: paths_resolve), and an output equal to another output;
 *   - a FILE_IO_OUT whose PATH.tmp (what file_out writes first) is an input;
 *   - an output or input of the wrong kind, for the entries that give `what` (the others are
 *     checked by their own opener, early enough and in its own words): an input must be a
 *     readable regular file (a folder for FILE_IO_IN_DIR), an output absent or a regular file
 *     in a folder this user can write (FILE_IO_OUT probes with file_out_open, so its message
 *     is the one the write itself would give), an output folder absent (it is created) or a
 *     folder, below a folder this user can write.
 * A database a command appends to (`run --db`) is both input and output, and legitimately
 * so: the rule is about another option's file landing on an input. The same database read
 * through another option (`paper --project-cost R.db:3 --db R.db`) is FILE_IO_IN_DB, which
 * may be the FILE_IO_DB and nothing else.
 * Messages name both options and the file:
 *   --state-save names the input file R.db (--db): writing it would replace that input;
 *   choose another file
 *   --csv and --db name the same file out.db: each output needs its own file */
typedef enum {
    FILE_IO_IN,     /* a file read */
    FILE_IO_IN_DIR, /* a folder read from (scripts) */
    FILE_IO_IN_DB,  /* a database read, which may be the database the command appends to */
    FILE_IO_OUT,    /* a file replaced whole (file_out: PATH.tmp, then a rename) */
    FILE_IO_DB,     /* a database appended to (created when absent) */
    FILE_IO_OUT_DIR /* a folder written into (created when absent); list its files as outputs */
} file_io_role;

typedef struct {
    const char *flag; /* "--state-save", or "OUT" for an argument */
    const char *path; /* NULL: not given (skipped) */
    file_io_role role;
    const char *what; /* for the kind check ("report", "model"); NULL: identity only */
} file_io;

/* 1 if a and b are one file: the same device and inode when both exist, the same resolved
 * path when neither does (two outputs yet to be written), else 0. */
int file_same(const char *a, const char *b);

/* The checks above over io[0..n). 0, or -1 with the message. */
int file_check_io(const file_io *io, int n, char *err);

#endif
