/* text_escape.h: how text read from a database (labels, model and dataset paths, dataset
 * names, specs, commits, CPU names) is written in each output format. One function per format,
 * and every writer of that format goes through it: a database is input like any file, and a
 * label holding a line break or an escape sequence must not end a LaTeX comment (what follows
 * would run as TeX), split a Markdown table or plot data row, or drive the terminal.
 *
 * The rule the text formats share, "visible text": valid UTF-8 is kept as it is, except
 *   - the control characters: tab, line feed and carriage return become \t \n \r, the other C0
 *     controls and DEL \xHH, the C1 controls (U+0080..U+009F, which some terminals obey)
 *     \u0080..\u009f;
 *   - a byte that is not part of valid UTF-8 becomes \xHH.
 * The output is valid UTF-8 without control characters, one line per row. A backslash is kept
 * (decbench's own text holds none), so an escape reads the same as the characters typed
 * literally: the text formats are for people and line-based tools; JSON is the exact one.
 *
 * Per format, on top of it:
 *   txt_plain  nothing more: terminal lines and error messages;
 *   txt_md     '|' as \| (a table cell or a note);
 *   txt_csv    RFC 4180: quoted when it holds a comma or a quote, quotes doubled;
 *   txt_tsv    gnuplot data: '"' (which starts a quoted field) as \x22 and a leading '#' (a
 *              comment) as \x23; tabs and line breaks are already escaped;
 *   txt_tex    the LaTeX specials & % $ # _ { } as \&..., ~ ^ \ as \textasciitilde{},
 *              \textasciicircum{}, \textbackslash{} (so the escapes above print as text), and
 *              "±" as $\pm$; one function for comment lines and cells alike;
 *   txt_json   JSON's own escapes (every control character) for valid UTF-8; a byte that is not
 *              part of valid UTF-8 becomes the character of the same number (U+0080..U+00FF,
 *              as Latin-1 reads it), so the key stays and every byte is kept, in order.
 * Each returns a malloc'd string (NULL when out of memory); txt_json a new reference (NULL
 * when out of memory). */
#ifndef RESULTS_TEXT_ESCAPE_H
#define RESULTS_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

struct json_t;

char *txt_plain(const char *s);
char *txt_md(const char *s);
char *txt_csv(const char *s);
char *txt_tsv(const char *s);
char *txt_tex(const char *s);
struct json_t *txt_json(const char *s);

/* s as valid UTF-8 by txt_json's rule (JSON object keys), malloc'd. */
char *txt_utf8(const char *s);

/* Writes fn(s) to out; 0, or -1 when out of memory. */
int txt_put(FILE *out, char *(*fn)(const char *), const char *s);

/* txt_plain into a buffer, truncated to n - 1 bytes (never inside an escape or a UTF-8
 * sequence): for one-line messages. Returns out. */
const char *txt_plain_buf(char *out, size_t n, const char *s);

#endif
