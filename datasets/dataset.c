/* dataset.c: the public API of dataset.h: parse a spec, find the file, read and validate every
 * record, render the prompts, select subsets. The table of datasets is in registry.c. */
#include "datasets/dataset.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datasets/ds_internal.h"
#include "util/err.h"
#include "util/paths.h"
#include "util/rng.h"

/* ---- a string arena: every string of a set lives in a few big blocks ---- */

typedef struct ds_block {
    struct ds_block *next;
    size_t used, cap;
    char data[];
} ds_block;

static char *arena_dup(ds_block **a, const char *s, size_t n) {
    ds_block *b = *a;
    if (!b || b->cap - b->used < n + 1) {
        size_t cap = n + 1 > (1u << 20) ? n + 1 : (1u << 20);
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = *a;
        b->used = 0;
        b->cap = cap;
        *a = b;
    }
    char *p = b->data + b->used;
    memcpy(p, s, n);
    p[n] = '\0';
    b->used += n + 1;
    return p;
}

/* n bytes aligned for pointers (the turns of a record). */
static void *arena_alloc(ds_block **a, size_t n) {
    ds_block *b = *a;
    size_t pad = b ? (8 - (b->used & 7)) & 7 : 0;
    if (b && b->cap - b->used >= n + pad) {
        b->used += pad;
    } else {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        if (!(b = malloc(sizeof *b + cap))) return NULL;
        b->next = *a;
        b->used = 0;
        b->cap = cap;
        *a = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static char *arena_str(ds_block **a, const char *s) {
    return arena_dup(a, s, strlen(s));
}

static void arena_free(ds_block *a) {
    while (a) {
        ds_block *next = a->next;
        free(a);
        a = next;
    }
}

struct ds_set {
    ds_block *arena;
    const char *name, *path, *field_key;
    ds_def def; /* a copy: jsonl sets fields[0].key */
    const ds_template_def *tpl;
    const ds_chat_row *chat; /* the format wrapping a chat template; NULL for other templates */
    const char *tpl_label;   /* ds_template(): the name, ":FORMAT" when not the source's own */
    ds_sample *samples;      /* the set (subset applied), file order */
    int n;
    int *order; /* the selection: indices into samples */
    int nsel;
};

/* ---- reading records ---- */

typedef struct {
    ds_fields f;
    const char *id, *category, *reference;
    int line, index;
} ds_rec;

typedef struct {
    ds_set *s;
    const ds_def *d;
    int generic; /* jsonl:PATH: optional id and category */
    ds_rec *recs;
    int n, cap;
    ds_buf tmp;
} load_ctx;

static int field_error(char *err, const char *path, int line, int index, const char *key,
                       const json_t *v, const char *expected) {
    char where[4096];
    ds_where(where, sizeof where, path, line, index);
    if (!v) return err_set(err, "%s: field \"%s\" missing", where, key);
    return err_set(err, "%s: field \"%s\" is %s, expected %s", where, key, ds_json_type_name(v),
                   expected);
}

/* The first string found by descending into first elements (reference answers are a string,
 * a list of strings or a list of lists); NULL if none. */
static const json_t *first_string(const json_t *v) {
    for (int depth = 0; v && depth < 4; depth++) {
        if (json_is_string(v)) return v;
        if (!json_is_array(v) || json_array_size(v) == 0) return NULL;
        v = json_array_get(v, 0);
    }
    return NULL;
}

static int take_id(load_ctx *c, json_t *rec, ds_rec *r, char *err) {
    static const char *const generic_keys[] = {"id", "question_id", "task_id", NULL};
    const char *key = c->d->id_key;
    json_t *v = NULL;
    if (c->generic) {
        for (int i = 0; generic_keys[i] && !v; i++)
            if ((v = json_object_get(rec, generic_keys[i]))) key = generic_keys[i];
    } else if (key) {
        v = json_object_get(rec, key);
        if (!v) return field_error(err, c->s->path, r->line, r->index, key, v, "");
    }
    char num[32];
    r->f.num_id = r->index;
    if (!v) {
        snprintf(num, sizeof num, "%d", r->index);
        r->id = arena_str(&c->s->arena, num);
    } else if (json_is_integer(v)) {
        r->f.num_id = json_integer_value(v);
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        r->id = arena_str(&c->s->arena, num);
    } else if (json_is_string(v)) {
        r->id = arena_dup(&c->s->arena, json_string_value(v), json_string_length(v));
    } else {
        return field_error(err, c->s->path, r->line, r->index, key, v, "a string or an integer");
    }
    return r->id ? 0 : err_set(err, "out of memory");
}

static int take_field(load_ctx *c, json_t *rec, ds_rec *r, int i, char *err) {
    const ds_field *fd = &c->d->fields[i];
    json_t *v = json_object_get(rec, fd->key);
    const json_t *str = NULL;
    switch (fd->kind) {
    case DS_STRING:
        if (!json_is_string(v))
            return field_error(err, c->s->path, r->line, r->index, fd->key, v, "a string");
        str = v;
        break;
    case DS_FIRST_TURN:
        if (json_is_string(v)) {
            str = v;
        } else if (json_is_array(v) && json_array_size(v) > 0 &&
                   json_is_string(json_array_get(v, 0))) {
            str = json_array_get(v, 0);
            /* every turn, for ds_turn_prompt (a later one that is not a string is an error) */
            size_t n = json_array_size(v);
            r->f.turns = arena_alloc(&c->s->arena, n * sizeof *r->f.turns);
            if (!r->f.turns) return err_set(err, "out of memory");
            for (size_t k = 0; k < n; k++) {
                json_t *e = json_array_get(v, k);
                if (!json_is_string(e)) {
                    char where[4096];
                    ds_where(where, sizeof where, c->s->path, r->line, r->index);
                    return err_set(err, "%s: field \"%s\" turn %zu is %s, expected a string", where,
                                   fd->key, k + 1, ds_json_type_name(e));
                }
                r->f.turns[k] =
                    arena_dup(&c->s->arena, json_string_value(e), json_string_length(e));
                if (!r->f.turns[k]) return err_set(err, "out of memory");
            }
            r->f.n_turns = (int)n;
        } else if (json_is_array(v)) {
            char where[4096];
            ds_where(where, sizeof where, c->s->path, r->line, r->index);
            if (json_array_size(v) == 0)
                return err_set(err, "%s: field \"%s\" is an empty array, expected a string", where,
                               fd->key);
            return err_set(err, "%s: field \"%s\" starts with %s, expected a string", where,
                           fd->key, ds_json_type_name(json_array_get(v, 0)));
        } else {
            return field_error(err, c->s->path, r->line, r->index, fd->key, v,
                               "a string or an array of strings");
        }
        break;
    case DS_PY_LIST: {
        if (!json_is_array(v))
            return field_error(err, c->s->path, r->line, r->index, fd->key, v,
                               "an array of strings");
        c->tmp.len = 0;
        int bad = ds_buf_add(&c->tmp, "[", 1);
        for (size_t k = 0; k < json_array_size(v) && !bad; k++) {
            json_t *e = json_array_get(v, k);
            if (!json_is_string(e)) {
                char where[4096];
                ds_where(where, sizeof where, c->s->path, r->line, r->index);
                return err_set(err, "%s: field \"%s\" element %zu is %s, expected a string", where,
                               fd->key, k, ds_json_type_name(e));
            }
            if (k) bad |= ds_buf_add(&c->tmp, ", ", 2);
            bad |= ds_py_repr(json_string_value(e), json_string_length(e), &c->tmp);
        }
        bad |= ds_buf_add(&c->tmp, "]", 1);
        if (bad || !(r->f.val[i] = arena_dup(&c->s->arena, c->tmp.p, c->tmp.len)))
            return err_set(err, "out of memory");
        return 0;
    }
    }
    r->f.val[i] = arena_dup(&c->s->arena, json_string_value(str), json_string_length(str));
    return r->f.val[i] ? 0 : err_set(err, "out of memory");
}

static int on_record(void *ctx, json_t *rec, int line, int index, char *err) {
    load_ctx *c = ctx;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 256;
        ds_rec *p = realloc(c->recs, (size_t)cap * sizeof *p);
        if (!p) return err_set(err, "out of memory");
        c->recs = p;
        c->cap = cap;
    }
    ds_rec *r = &c->recs[c->n];
    memset(r, 0, sizeof *r);
    r->line = line;
    r->index = index;
    for (int i = 0; i < DS_MAX_FIELDS && c->d->fields[i].name; i++)
        if (take_field(c, rec, r, i, err)) return -1;
    if (take_id(c, rec, r, err)) return -1;
    if (c->d->category_key) {
        json_t *v = json_object_get(rec, c->d->category_key);
        if (v || !c->generic) {
            if (!json_is_string(v))
                return field_error(err, c->s->path, line, index, c->d->category_key, v, "a string");
            r->category = arena_dup(&c->s->arena, json_string_value(v), json_string_length(v));
            if (!r->category) return err_set(err, "out of memory");
        }
    }
    if (c->d->reference_key) {
        const json_t *v = first_string(json_object_get(rec, c->d->reference_key));
        if (v &&
            !(r->reference = arena_dup(&c->s->arena, json_string_value(v), json_string_length(v))))
            return err_set(err, "out of memory");
    }
    c->n++;
    return 0;
}

/* ---- parsing the spec ---- */

static void list_names(char *out, size_t n) {
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; ds_registry[i] && len < n; i++) {
        const ds_def *d = ds_registry[i];
        len +=
            (size_t)snprintf(out + len, n - len, "%s%s%s%s%s", i ? ", " : "", d->name,
                             d->alias ? " (" : "", d->alias ? d->alias : "", d->alias ? ")" : "");
    }
    if (len < n) snprintf(out + len, n - len, ", jsonl:PATH[:FIELD]");
}

static void list_templates(const ds_def *d, char *out, size_t n) {
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < DS_MAX_TEMPLATES && d->templates[i].name && len < n; i++) {
        const char *t = d->templates[i].name;
        len += (size_t)snprintf(out + len, n - len, "%s%s%s", i ? ", " : "", t,
                                strcmp(t, d->default_template) ? "" : " (default)");
    }
}

static void list_subsets(const ds_def *d, char *out, size_t n) {
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; d->subsets[i] && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", d->subsets[i]);
}

static int in_subsets(const ds_def *d, const char *name) {
    for (int i = 0; d->subsets && d->subsets[i]; i++)
        if (!strcmp(d->subsets[i], name)) return 1;
    return 0;
}

/* Splits "jsonl:PATH[:FIELD]" (rest = after "jsonl:"). A PATH that exists as given wins over
 * reading its last ":..." as FIELD, so paths containing ':' still work. */
static int parse_jsonl_spec(ds_set *s, const char *rest, char *err) {
    if (!rest[0]) return err_set(err, "jsonl: needs a path: jsonl:PATH[:FIELD]");
    const char *colon = strrchr(rest, ':');
    if (access(rest, F_OK) == 0 || !colon || strchr(colon, '/')) {
        s->path = arena_str(&s->arena, rest);
        s->field_key = "prompt";
    } else {
        if (!colon[1]) return err_set(err, "%s: empty FIELD after ':' (jsonl:PATH[:FIELD])", rest);
        s->path = arena_dup(&s->arena, rest, (size_t)(colon - rest));
        s->field_key = arena_str(&s->arena, colon + 1);
        if (!s->path[0]) return err_set(err, "jsonl:%s: empty PATH (jsonl:PATH[:FIELD])", rest);
    }
    if (!s->path || !s->field_key) return err_set(err, "out of memory");
    s->def = ds_jsonl_def;
    s->def.fields[0].key = s->field_key;
    ds_buf b = {0};
    int bad = ds_buf_adds(&b, "jsonl:") || ds_buf_adds(&b, s->path) || ds_buf_adds(&b, ":") ||
              ds_buf_adds(&b, s->field_key);
    s->name = bad ? NULL : arena_dup(&s->arena, b.p, b.len);
    ds_buf_free(&b);
    return s->name ? 0 : err_set(err, "out of memory");
}

static int resolve_path(ds_set *s, const char *data_dir, char *err) {
    char dir[4096];
    if (paths_datasets_dir(data_dir, dir, sizeof dir) != 0) {
        const char *env = getenv("DECBENCH_DATASETS");
        if (data_dir && data_dir[0])
            return err_set(err, "datasets folder %s (from --data-dir) is not a directory",
                           data_dir);
        if (env && env[0])
            return err_set(err, "datasets folder %s (from DECBENCH_DATASETS) is not a directory",
                           env);
        return err_set(err,
                       "datasets folder not found (last tried %s): pass --data-dir DIR, or set "
                       "DECBENCH_DATASETS=DIR, or DECBENCH_SHARED=DIR holding datasets/",
                       dir);
    }
    ds_buf b = {0};
    int bad = ds_buf_adds(&b, dir) || ds_buf_adds(&b, "/") || ds_buf_adds(&b, s->def.file);
    s->path = bad ? NULL : arena_dup(&s->arena, b.p, b.len);
    ds_buf_free(&b);
    if (!s->path) return err_set(err, "out of memory");
    if (access(s->path, R_OK) != 0)
        return err_set(err,
                       "%s: not found or not readable (dataset %s; datasets/README.md says where "
                       "to download it; point --data-dir or DECBENCH_DATASETS at the folder "
                       "holding %s)",
                       s->path, s->def.name, s->def.file);
    return 0;
}

static int parse_spec(ds_set *s, const char *spec, const char *template_name, const char **subset,
                      char *err) {
    char names[ERR_LEN];
    *subset = NULL;
    if (!spec || !spec[0]) {
        list_names(names, sizeof names);
        return err_set(err, "no dataset given; valid: %s", names);
    }
    if (!strncmp(spec, "jsonl:", 6)) {
        if (parse_jsonl_spec(s, spec + 6, err)) return -1;
    } else {
        const char *slash = strchr(spec, '/');
        size_t blen = slash ? (size_t)(slash - spec) : strlen(spec);
        char base[128];
        if (blen >= sizeof base) blen = sizeof base - 1;
        memcpy(base, spec, blen);
        base[blen] = '\0';
        const ds_def *d = ds_find_def(base);
        if (!d) {
            list_names(names, sizeof names);
            return err_set(err, "unknown dataset \"%s\"; valid: %s", base, names);
        }
        s->def = *d;
        if (slash) {
            if (!d->subsets)
                return err_set(err, "dataset %s has no subsets (\"%s\")", d->name, spec);
            if (!in_subsets(d, slash + 1)) {
                list_subsets(d, names, sizeof names);
                return err_set(err, "unknown subset \"%s\" of %s; valid: %s", slash + 1, d->name,
                               names);
            }
            *subset = slash + 1;
        }
        ds_buf b = {0};
        int bad = ds_buf_adds(&b, d->name) || (slash && ds_buf_adds(&b, slash));
        s->name = bad ? NULL : arena_dup(&s->arena, b.p, b.len);
        ds_buf_free(&b);
        if (!s->name) return err_set(err, "out of memory");
    }
    const char *t = template_name && template_name[0] ? template_name : s->def.default_template;
    s->tpl = ds_find_template(&s->def, t);
    if (!s->tpl) {
        list_templates(&s->def, names, sizeof names);
        return err_set(err, "unknown template \"%s\" for %s; valid: %s", t, s->def.name, names);
    }
    return 0;
}

/* ---- rendering and the public API ---- */

/* One prompt: the template's text, or a chat template's messages wrapped in s->chat. */
static int render_one(const ds_set *s, const ds_fields *f, const char *shots, ds_buf *out,
                      ds_buf *sys, ds_buf *user, char *err) {
    const ds_template_def *t = s->tpl;
    const ds_def *d = &s->def;
    if (t->text) return ds_render(t->text, d, f, shots, out, err);
    sys->len = user->len = 0;
    if ((t->system && ds_render(t->system, d, f, shots, sys, err)) ||
        ds_render(t->user, d, f, shots, user, err))
        return -1;
    if (ds_chat_apply(s->chat, t->system ? (sys->p ? sys->p : "") : NULL, sys->len,
                      user->p ? user->p : "", user->len, out))
        return err_set(err, "out of memory");
    return t->reply ? ds_render(t->reply, d, f, shots, out, err) : 0;
}

static int uses_shots(const ds_template_def *t) {
    const char *parts[] = {t->text, t->system, t->user, t->reply};
    for (int i = 0; i < 4; i++)
        if (parts[i] && strstr(parts[i], "{shots}")) return 1;
    return 0;
}

static int render_all(ds_set *s, load_ctx *c, const char *subset, char *err) {
    const ds_def *d = &s->def;
    ds_buf shots = {0}, out = {0}, sys = {0}, user = {0};
    int rc = 0;
    if (uses_shots(s->tpl) && d->shots) {
        ds_fields *fs = malloc((size_t)c->n * sizeof *fs);
        if (!fs) return err_set(err, "out of memory");
        for (int i = 0; i < c->n; i++) fs[i] = c->recs[i].f;
        rc = d->shots(d, fs, c->n, &shots, err);
        free(fs);
        if (!rc && !shots.p) rc = ds_buf_add(&shots, "", 0) ? err_set(err, "out of memory") : 0;
    }
    if (!rc && !(s->samples = calloc((size_t)c->n, sizeof *s->samples)))
        rc = err_set(err, "out of memory");
    for (int i = 0; i < c->n && !rc; i++) {
        ds_rec *r = &c->recs[i];
        const char *group = d->group ? d->group(r->category, r->f.num_id) : NULL;
        if (subset && !(group && !strcmp(group, subset)) &&
            !(r->category && !strcmp(r->category, subset)))
            continue;
        out.len = 0;
        if (render_one(s, &r->f, shots.p, &out, &sys, &user, err)) {
            rc = -1;
            break;
        }
        ds_sample *sm = &s->samples[s->n++];
        sm->dataset = s->name;
        sm->index = r->index;
        sm->line = r->line;
        sm->id = r->id;
        sm->category = r->category;
        sm->group = group;
        sm->reference = r->reference;
        sm->turns = r->f.turns;
        sm->n_turns = r->f.n_turns > 1 ? r->f.n_turns : 1;
        sm->prompt = arena_dup(&s->arena, out.p ? out.p : "", out.len);
        if (!sm->prompt) rc = err_set(err, "out of memory");
    }
    if (!rc && s->n == 0) rc = err_set(err, "%s: no records in %s", s->path, s->name);
    ds_buf_free(&shots);
    ds_buf_free(&out);
    ds_buf_free(&sys);
    ds_buf_free(&user);
    return rc;
}

/* The chat format of a chat template: chat_name, else the template's own. Other templates
 * ignore chat_name: they are not chat-wrapped (raw text, base-model prompts) or are a paper's
 * literal prompt for one model family (HumanEval ouroboros-chat). */
static int pick_chat(ds_set *s, const char *chat_name, char *err) {
    s->tpl_label = s->tpl->name;
    if (chat_name && chat_name[0] && !ds_chat_find(chat_name)) {
        char names[ERR_LEN];
        ds_chat_names(names, sizeof names);
        return err_set(err, "unknown chat template \"%s\"; valid: %s", chat_name, names);
    }
    if (s->tpl->text) return 0;
    s->chat = ds_chat_find(chat_name && chat_name[0] ? chat_name : s->tpl->chat);
    if (!s->chat)
        return err_set(err, "template %s: unknown chat format %s", s->tpl->name, s->tpl->chat);
    if (strcmp(s->chat->name, s->tpl->chat)) {
        ds_buf b = {0};
        int bad =
            ds_buf_adds(&b, s->tpl->name) || ds_buf_adds(&b, ":") || ds_buf_adds(&b, s->chat->name);
        s->tpl_label = bad ? NULL : arena_dup(&s->arena, b.p, b.len);
        ds_buf_free(&b);
        if (!s->tpl_label) return err_set(err, "out of memory");
    }
    return 0;
}

int ds_open(ds_set **out, const char *spec, const char *template_name, const char *data_dir,
            char *err) {
    return ds_open_chat(out, spec, template_name, NULL, data_dir, err);
}

int ds_open_chat(ds_set **out, const char *spec, const char *template_name, const char *chat,
                 const char *data_dir, char *err) {
    *out = NULL;
    ds_set *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "out of memory");
    const char *subset = NULL;
    load_ctx c = {.s = s};
    int rc = parse_spec(s, spec, template_name, &subset, err);
    if (!rc) rc = pick_chat(s, chat, err);
    if (!rc && s->def.file) rc = resolve_path(s, data_dir, err);
    if (!rc) {
        c.d = &s->def;
        c.generic = s->def.file == NULL;
        rc = s->def.json_array ? ds_read_json_array(s->path, on_record, &c, err)
                               : ds_read_jsonl(s->path, on_record, &c, err);
    }
    if (!rc) rc = render_all(s, &c, subset, err);
    if (!rc && !(s->order = malloc((size_t)s->n * sizeof *s->order)))
        rc = err_set(err, "out of memory");
    free(c.recs);
    ds_buf_free(&c.tmp);
    if (rc) {
        ds_free(s);
        return -1;
    }
    for (int i = 0; i < s->n; i++) s->order[i] = i;
    s->nsel = s->n;
    *out = s;
    return 0;
}

int ds_turn_prompt(const ds_set *set, const ds_sample *s, int turn, const char *const *answers,
                   char **out, char *err) {
    *out = NULL;
    if (turn < 2 || turn > s->n_turns || !s->turns)
        return err_set(err, "%s[%d] (id %s): no turn %d (the record has %d)", s->dataset, s->index,
                       s->id, turn, s->n_turns);
    if (!set->chat || set->tpl->reply)
        return err_set(err,
                       "%s: template %s is not a chat template ending at the assistant's header: "
                       "turns after the first need one (the dataset's chat templates continue a "
                       "conversation)",
                       set->name, set->tpl->name);
    ds_buf b = {0};
    int bad = ds_buf_adds(&b, s->prompt);
    for (int k = 1; k < turn && !bad; k++)
        bad = ds_chat_next_turn(set->chat, answers[k - 1], s->turns[k], &b);
    if (bad) {
        ds_buf_free(&b);
        return err_set(err, "out of memory");
    }
    *out = b.p;
    return 0;
}

int ds_turn_parse_special(const ds_set *set, int turn) {
    return set->chat && (set->chat->special || (turn > 1 && set->chat->history_special));
}

int ds_select(ds_set *s, int offset, int limit, int shuffle, uint64_t seed, char *err) {
    if (offset < 0 || limit < 0)
        return err_set(err, "%s: offset (%d) and limit (%d) must be >= 0", s->name, offset, limit);
    if (offset >= s->n)
        return err_set(err, "%s: offset %d is past the end (%d samples)", s->name, offset, s->n);
    for (int i = 0; i < s->n; i++) s->order[i] = i;
    if (shuffle) {
        rng_state r;
        rng_seed(&r, seed);
        for (int i = s->n - 1; i > 0; i--) {
            int j = (int)rng_below(&r, (uint32_t)(i + 1));
            int t = s->order[i];
            s->order[i] = s->order[j];
            s->order[j] = t;
        }
    }
    int count = s->n - offset;
    if (limit > 0 && limit < count) count = limit;
    memmove(s->order, s->order + offset, (size_t)count * sizeof *s->order);
    s->nsel = count;
    return 0;
}

int ds_count(const ds_set *s) {
    return s->nsel;
}
int ds_total(const ds_set *s) {
    return s->n;
}

const ds_sample *ds_get(const ds_set *s, int i) {
    return i >= 0 && i < s->nsel ? &s->samples[s->order[i]] : NULL;
}

const char *ds_name(const ds_set *s) {
    return s->name;
}
const char *ds_template(const ds_set *s) {
    return s->tpl_label;
}
const char *ds_chat_format(const ds_set *s) {
    return s->chat ? s->chat->name : NULL;
}
int ds_parse_special(const ds_set *s) {
    return s->chat && s->chat->special;
}
const char *ds_template_source(const ds_set *s) {
    return s->tpl->source;
}
int ds_default_max_new(const ds_set *s) {
    return s->tpl->max_new;
}
const char *ds_path(const ds_set *s) {
    return s->path;
}

void ds_free(ds_set *s) {
    if (!s) return;
    free(s->samples);
    free(s->order);
    arena_free(s->arena);
    free(s);
}

/* ---- --help text ---- */

static void help_add(char *buf, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void help_add(char *buf, size_t n, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(*len < n ? buf + *len : NULL, *len < n ? n - *len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) *len += (size_t)k;
}

static void help_def(char *buf, size_t n, size_t *len, const ds_def *d, const char *label) {
    help_add(buf, n, len, "  %-20s %s\n", label, d->blurb);
    if (d->subsets) {
        help_add(buf, n, len, "  %-20s subsets (/NAME):", "");
        for (int i = 0; d->subsets[i]; i++) help_add(buf, n, len, " %s", d->subsets[i]);
        help_add(buf, n, len, "\n");
    }
    help_add(buf, n, len, "  %-20s templates:", "");
    for (int i = 0; i < DS_MAX_TEMPLATES && d->templates[i].name; i++)
        help_add(buf, n, len, " %s%s[%d]", d->templates[i].name,
                 strcmp(d->templates[i].name, d->default_template) ? "" : "*",
                 d->templates[i].max_new);
    help_add(buf, n, len, "\n");
}

size_t ds_help(char *buf, size_t n) {
    size_t len = 0;
    if (buf && n) buf[0] = '\0';
    help_add(buf, n, &len,
             "Datasets (NAME[/SUBSET]); templates: * = default, [N] = its max new tokens:\n");
    for (int i = 0; ds_registry[i]; i++) {
        const ds_def *d = ds_registry[i];
        char label[64];
        snprintf(label, sizeof label, "%s%s%s%s", d->name, d->alias ? " (" : "",
                 d->alias ? d->alias : "", d->alias ? ")" : "");
        help_def(buf, n, &len, d, label);
    }
    help_def(buf, n, &len, &ds_jsonl_def, "jsonl:PATH[:FIELD]");
    help_add(buf, n, &len,
             "Subsets: shuffle (seeded Fisher-Yates) first, then offset, then limit.\n"
             "Data folder: --data-dir DIR, else $DECBENCH_DATASETS, else <shared>/datasets with\n"
             "<shared> = $DECBENCH_SHARED, ../shared, ./shared or the source tree's ../shared.\n");
    char names[512];
    ds_chat_names(names, sizeof names);
    help_add(buf, n, &len,
             "Chat templates (chat, lookahead, specbench, ouroboros-chat of CNN/DM and WMT) wrap\n"
             "their messages in the model's chat format (its GGUF chat template as llama.cpp\n"
             "recognises it, or --chat-template NAME), else in the source's own. Formats:\n"
             "  %s\n",
             names);
    return len;
}
