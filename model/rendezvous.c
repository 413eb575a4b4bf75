/* rendezvous.c: the baton and the gathered passes of rendezvous.h.
 *
 * Everything below happens under one mutex, the gathered passes included: while they run,
 * every other sequence is blocked anyway (it waits for its pass or for the baton), and the
 * mutex makes the contexts the running thread computes for visible to the threads that own
 * them. The thread holding the baton is the only one that ever runs a pass. */
#include "model/rendezvous.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* A slot's sequence: not in the rendezvous, waiting for the baton, holding it, waiting for its
 * pass. */
enum { SEQ_OUT = 0, SEQ_READY, SEQ_RUN, SEQ_WAIT };

/* Models a slot counts passes of (a target and a draft; more are not counted). */
#define SLOT_MODELS 4
/* Groups (model, kernel mode, pool) a rendezvous keeps; passes of any further one run alone. */
#define MAX_GROUPS 8

typedef struct {
    const model *m;
    long passes, rows;
} slot_count;

typedef struct {
    fwd_hook hook; /* first member: a context's hook is its slot */
    fwd_rdv *r;
    int state;
    pthread_cond_t cv;
    /* the pass the sequence waits for (FWD_HOOK_* flags), and its outcome */
    int more, prompt, rc;
    fwd_part part;
    char *err;
    slot_count counts[SLOT_MODELS];
} rdv_slot;

typedef struct {
    const model *m;
    tpool *pool;
    kern_mode mode;
    fwd_group *g;
} rdv_group;

struct fwd_rdv {
    pthread_mutex_t mu;
    int n, holder, last; /* holder: the slot with the baton, -1 none; last: the latest given it */
    rdv_slot *slots;
    rdv_group groups[MAX_GROUPS];
    int n_groups;
    fwd_part *parts; /* a group pass's parts and their slots, [n] */
    int *who;
    unsigned char *taken;
};

static int rdv_eval(fwd_hook *h, fwd_ctx *c, int flags, const fwd_part *part, char *err);

int fwd_rdv_new(fwd_rdv **out, int max_seqs, char *err) {
    *out = NULL;
    if (max_seqs < 1 || max_seqs > FWD_RDV_MAX_SEQS)
        return err_set(err, "rendezvous: %d sequences, expected 1..%d", max_seqs,
                       FWD_RDV_MAX_SEQS);
    fwd_rdv *r = calloc(1, sizeof *r);
    if (!r) return err_set(err, "rendezvous: out of memory");
    r->n = max_seqs, r->holder = -1, r->last = max_seqs - 1;
    r->slots = calloc((size_t)max_seqs, sizeof *r->slots);
    r->parts = calloc((size_t)max_seqs, sizeof *r->parts);
    r->who = calloc((size_t)max_seqs, sizeof *r->who);
    r->taken = calloc((size_t)max_seqs, 1);
    if (!r->slots || !r->parts || !r->who || !r->taken) {
        free(r->slots), free(r->parts), free(r->who), free(r->taken), free(r);
        return err_set(err, "rendezvous: out of memory");
    }
    pthread_mutex_init(&r->mu, NULL);
    for (int i = 0; i < max_seqs; i++) {
        r->slots[i].hook.eval = rdv_eval;
        r->slots[i].r = r;
        pthread_cond_init(&r->slots[i].cv, NULL);
    }
    *out = r;
    return 0;
}

void fwd_rdv_free(fwd_rdv *r) {
    if (!r) return;
    for (int i = 0; i < r->n; i++) pthread_cond_destroy(&r->slots[i].cv);
    for (int i = 0; i < r->n_groups; i++) fwd_group_free(r->groups[i].g);
    pthread_mutex_destroy(&r->mu);
    free(r->slots), free(r->parts), free(r->who), free(r->taken), free(r);
}

void fwd_rdv_attach(fwd_rdv *r, fwd_ctx *c, int slot) { fwd_set_hook(c, &r->slots[slot].hook); }

/* ---- counting --------------------------------------------------------------------------- */

static void count_pass(fwd_rdv *r, int slot, const model *m, long rows) {
    if (r->slots[slot].prompt) return; /* its own prompt's passes are not counted */
    slot_count *c = r->slots[slot].counts;
    for (int i = 0; i < SLOT_MODELS; i++)
        if (c[i].m == m || !c[i].m) {
            c[i].m = m, c[i].passes++, c[i].rows += rows;
            return;
        }
}

void fwd_rdv_counts(fwd_rdv *r, int slot, const model *m, long *passes, long *rows) {
    pthread_mutex_lock(&r->mu);
    *passes = *rows = 0;
    for (int i = 0; i < SLOT_MODELS; i++)
        if (r->slots[slot].counts[i].m == m)
            *passes = r->slots[slot].counts[i].passes, *rows = r->slots[slot].counts[i].rows;
    pthread_mutex_unlock(&r->mu);
}

void fwd_rdv_reset(fwd_rdv *r, int slot) {
    pthread_mutex_lock(&r->mu);
    memset(r->slots[slot].counts, 0, sizeof r->slots[slot].counts);
    pthread_mutex_unlock(&r->mu);
}

/* ---- the gathered passes ---------------------------------------------------------------- */

static void run_alone(fwd_rdv *r, int slot) {
    rdv_slot *s = &r->slots[slot];
    s->rc = fwd_eval_direct(s->part.ctx, s->more, &s->part, s->err);
    count_pass(r, slot, fwd_model(s->part.ctx), s->part.n);
}

/* The group of c's model, kernel mode and pool, made on first use; NULL when it cannot be. */
static fwd_group *group_of(fwd_rdv *r, const fwd_ctx *c) {
    const model *m = fwd_model(c);
    for (int i = 0; i < r->n_groups; i++)
        if (r->groups[i].m == m && r->groups[i].pool == fwd_pool(c) &&
            r->groups[i].mode == fwd_kern_mode(c))
            return r->groups[i].g;
    if (r->n_groups == MAX_GROUPS) return NULL;
    char err[ERR_LEN];
    fwd_group *g;
    int seqs = r->n < FWD_RDV_GROUP_ROWS ? r->n : FWD_RDV_GROUP_ROWS;
    if (fwd_group_new(&g, m, fwd_pool(c), FWD_RDV_GROUP_ROWS, seqs, fwd_kern_mode(c), err))
        return NULL; /* out of memory: its passes run alone, same bits */
    r->groups[r->n_groups++] = (rdv_group){m, fwd_pool(c), fwd_kern_mode(c), g};
    return g;
}

static int can_group(const rdv_slot *s) {
    return !s->more && fwd_groupable(s->part.ctx) && s->part.n <= FWD_RDV_GROUP_ROWS;
}

/* Runs every waiting sequence's pass, in slot order: each groupable one with the later ones of
 * the same model, kernel mode and pool that fit, the others alone. */
static void run_waiting(fwd_rdv *r) {
    memset(r->taken, 0, (size_t)r->n);
    for (int i = 0; i < r->n; i++) {
        rdv_slot *s = &r->slots[i];
        if (s->state != SEQ_WAIT || r->taken[i]) continue;
        r->taken[i] = 1;
        fwd_group *g = can_group(s) ? group_of(r, s->part.ctx) : NULL;
        if (!g) {
            run_alone(r, i);
            continue;
        }
        const fwd_ctx *c = s->part.ctx;
        int k = 0;
        long rows = 0;
        r->parts[k] = s->part, r->who[k++] = i, rows += s->part.n;
        for (int j = i + 1; j < r->n; j++) {
            const rdv_slot *t = &r->slots[j];
            if (t->state != SEQ_WAIT || r->taken[j] || !can_group(t)) continue;
            const fwd_ctx *d = t->part.ctx;
            if (fwd_model(d) != fwd_model(c) || fwd_pool(d) != fwd_pool(c) ||
                fwd_kern_mode(d) != fwd_kern_mode(c) || rows + t->part.n > FWD_RDV_GROUP_ROWS)
                continue;
            r->taken[j] = 1;
            r->parts[k] = t->part, r->who[k++] = j, rows += t->part.n;
        }
        char err[ERR_LEN];
        if (k == 1) {
            run_alone(r, i);
        } else if (fwd_group_eval(g, r->parts, k, err) == 0) {
            for (int q = 0; q < k; q++) {
                r->slots[r->who[q]].rc = 0;
                count_pass(r, r->who[q], fwd_model(c), rows);
            }
        } else { /* each context as after a failed fwd_eval: its own pass says what failed */
            for (int q = 0; q < k; q++) run_alone(r, r->who[q]);
        }
    }
    for (int i = 0; i < r->n; i++)
        if (r->slots[i].state == SEQ_WAIT) r->slots[i].state = SEQ_READY;
}

/* The baton to the next runnable sequence after the last one that had it; when none is
 * runnable but some wait for passes, the calling thread runs those passes first. */
static void pass_baton(fwd_rdv *r) {
    for (;;) {
        int waiting = 0;
        for (int k = 1; k <= r->n; k++) {
            int i = (r->last + k) % r->n;
            if (r->slots[i].state == SEQ_READY) {
                r->holder = r->last = i;
                r->slots[i].state = SEQ_RUN;
                pthread_cond_signal(&r->slots[i].cv);
                return;
            }
            waiting |= r->slots[i].state == SEQ_WAIT;
        }
        if (!waiting) {
            r->holder = -1;
            return;
        }
        run_waiting(r);
    }
}

static void wait_turn(fwd_rdv *r, rdv_slot *s) {
    while (s->state != SEQ_RUN) pthread_cond_wait(&s->cv, &r->mu);
}

void fwd_rdv_join(fwd_rdv *r, int slot) {
    pthread_mutex_lock(&r->mu);
    if (r->slots[slot].state == SEQ_OUT) r->slots[slot].state = SEQ_READY;
    pthread_mutex_unlock(&r->mu);
}

void fwd_rdv_enter(fwd_rdv *r, int slot) {
    pthread_mutex_lock(&r->mu);
    rdv_slot *s = &r->slots[slot];
    if (s->state == SEQ_OUT) s->state = SEQ_READY;
    if (r->holder < 0) pass_baton(r);
    wait_turn(r, s);
    pthread_mutex_unlock(&r->mu);
}

void fwd_rdv_leave(fwd_rdv *r, int slot) {
    pthread_mutex_lock(&r->mu);
    r->slots[slot].state = SEQ_OUT;
    if (r->holder == slot) pass_baton(r);
    pthread_mutex_unlock(&r->mu);
}

static int rdv_eval(fwd_hook *h, fwd_ctx *c, int flags, const fwd_part *part, char *err) {
    const int more = (flags & FWD_HOOK_MORE) != 0;
    rdv_slot *s = (rdv_slot *)h;
    fwd_rdv *r = s->r;
    pthread_mutex_lock(&r->mu);
    if (s->state != SEQ_RUN) { /* a thread outside the rendezvous: its pass runs as it is */
        pthread_mutex_unlock(&r->mu);
        return fwd_eval_direct(c, more, part, err);
    }
    s->more = more, s->prompt = (flags & FWD_HOOK_PROMPT) != 0;
    s->part = *part, s->part.ctx = c, s->err = err, s->rc = -1;
    s->state = SEQ_WAIT;
    pass_baton(r);
    wait_turn(r, s);
    int rc = s->rc;
    pthread_mutex_unlock(&r->mu);
    return rc;
}
