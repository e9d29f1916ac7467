/* parallel.c — element assembly on several threads. Every element set's instances are cut into
 * contiguous shares; the calling thread evaluates the first share into the system's own residual
 * and Jacobian, each helper thread the next into buffers of its own, which are then added in.
 * The shares and the order of the additions are fixed, so a run gives the same numbers every
 * time for a given thread count. Whether the shares are worth cutting is decided from the model
 * alone (the kernels' work against clearing and adding a private copy of the Jacobian); whether
 * the helpers then run on their own threads or one after the other on the calling thread is
 * decided by timing the first assemblies both ways. Both give the same numbers. */
#include "parallel.h"
#include "clock.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "alloc.h"

typedef struct Helper {
    struct srd_assembler *a;
    int       index;          /* share index, 1 .. threads-1 */
    pthread_t thread;
    unsigned  seen;           /* generation last worked on */
    double   *res, *res_nc, *jac, energy;
} Helper;

struct srd_assembler {
    int              threads;   /* the calling thread and the helpers that started */
    int              n_helpers; /* allocated */
    Helper          *helpers;
    size_t           n_res, n_jac; /* lengths of the residual and Jacobian buffers */
    pthread_mutex_t  mu;
    pthread_cond_t   go, done;
    unsigned         generation;
    int              pending, quit;
    /* Trial assemblies (with the Jacobian) alternate threaded and serial; then the faster, by
     * its best time, stays. */
    int              trials;
    double           time_threaded, time_serial;
    int              serial;
    /* the job of the current generation (the sim is passed each time: it may have moved) */
    const srd_sim   *sim;
    srd_eval_ctx     ctx, ctx_nc;
    int              with_jacobian;
};

int srd_assembly_threads(void)
{
    const char *env = getenv("SRD_THREADS");
    if (env && *env) {
        int n = atoi(env);
        return n < 1 ? 1 : n > 64 ? 64 : n;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus;
}

static void helper_work(Helper *h)
{
    srd_assembler *a = h->a;
    memset(h->res, 0, sizeof(double) * a->n_res);
    if (!a->sim->conservative)
        memset(h->res_nc, 0, sizeof(double) * a->n_res);
    if (a->with_jacobian)
        memset(h->jac, 0, sizeof(double) * a->n_jac);
    h->energy = 0;
    srd_eval_ctx ctx = a->ctx, ctx_nc = a->ctx_nc;
    ctx.energy = ctx_nc.energy = &h->energy;
    ctx.grad = h->res;
    ctx_nc.grad = h->res_nc;
    ctx.jac = ctx_nc.jac = a->with_jacobian ? h->jac : NULL;
    srd_sim_run_kernels(a->sim, &ctx, &ctx_nc, a->with_jacobian, h->index, a->threads);
}

static void *helper_main(void *arg)
{
    Helper *h = arg;
    srd_assembler *a = h->a;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (h->seen == a->generation && !a->quit)
            pthread_cond_wait(&a->go, &a->mu);
        if (a->quit)
            break;
        h->seen = a->generation;
        pthread_mutex_unlock(&a->mu);
        helper_work(h);
        pthread_mutex_lock(&a->mu);
        if (--a->pending == 0)
            pthread_cond_signal(&a->done);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

srd_assembler *srd_assembler_new(const srd_sim *s, int threads)
{
    /* The kernels' operations per assembly against clearing and adding a private Jacobian: at
     * about 20 operations per nanosecond (vector kernels), 12 million take over half a
     * millisecond, and a double of Jacobian costs about as much to clear and add as 80
     * operations. */
    double work = 0;
    for (int k = 0; k < s->m->n_sets; k++)
        work += (double)s->kernels[k].batch.b.n * s->kernels[k].info.cost;
    size_t n_jac = srd_system_jac_len(&s->solver.sys);
    if (threads < 2 || work < 1.2e7 || (double)n_jac > work / 80)
        return NULL;
    srd_assembler *a = srd_xcalloc(1, sizeof *a);
    a->threads = threads;
    a->n_res = srd_system_grad_len(&s->solver.sys);
    a->n_jac = n_jac;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->go, NULL);
    pthread_cond_init(&a->done, NULL);
    a->n_helpers = threads - 1;
    a->helpers = srd_xcalloc((size_t)a->n_helpers, sizeof *a->helpers);
    for (int j = 0; j < a->n_helpers; j++) {
        Helper *h = &a->helpers[j];
        h->a = a;
        h->index = j + 1;
        h->res = srd_xcalloc(a->n_res, sizeof(double));
        h->res_nc = srd_xcalloc(a->n_res, sizeof(double));
        h->jac = srd_xcalloc(a->n_jac, sizeof(double));
    }
    /* Shares are cut by the final thread count: fix it before any helper runs. */
    int started = 0;
    while (started < a->n_helpers && pthread_create(&a->helpers[started].thread, NULL, helper_main,
                                                    &a->helpers[started]) == 0)
        started++;
    a->threads = started + 1;
    if (started < a->n_helpers) { /* helpers index shares of the planned count: stop them all */
        srd_assembler_free(a);
        return NULL;
    }
    return a;
}

void srd_assembler_free(srd_assembler *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->quit = 1;
    pthread_cond_broadcast(&a->go);
    pthread_mutex_unlock(&a->mu);
    for (int j = 0; j < a->threads - 1; j++)
        pthread_join(a->helpers[j].thread, NULL);
    for (int j = 0; j < a->n_helpers; j++) {
        free(a->helpers[j].res);
        free(a->helpers[j].res_nc);
        free(a->helpers[j].jac);
    }
    free(a->helpers);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->go);
    pthread_cond_destroy(&a->done);
    free(a);
}

int srd_assembler_threads(const srd_assembler *a) { return a && !a->serial ? a->threads : 1; }

enum { TRIALS = 8 };

/* The shares of the helpers, evaluated one after the other on the calling thread. */
static void run_serially(srd_assembler *a)
{
    for (int j = 0; j < a->threads - 1; j++)
        helper_work(&a->helpers[j]);
}

static void run_threaded(srd_assembler *a)
{
    pthread_mutex_lock(&a->mu);
    a->pending = a->threads - 1;
    a->generation++;
    pthread_cond_broadcast(&a->go);
    pthread_mutex_unlock(&a->mu);
    srd_sim_run_kernels(a->sim, &a->ctx, &a->ctx_nc, a->with_jacobian, 0, a->threads);
    pthread_mutex_lock(&a->mu);
    while (a->pending > 0)
        pthread_cond_wait(&a->done, &a->mu);
    pthread_mutex_unlock(&a->mu);
}

void srd_assembler_run(srd_assembler *a, const srd_sim *s, const srd_eval_ctx *ctx, const srd_eval_ctx *ctx_nc,
                       int with_jacobian)
{
    pthread_mutex_lock(&a->mu);
    a->sim = s;
    a->ctx = *ctx;
    a->ctx_nc = *ctx_nc;
    a->with_jacobian = with_jacobian;
    pthread_mutex_unlock(&a->mu);
    bool trial = with_jacobian && a->trials < TRIALS, threaded = trial ? a->trials % 2 == 0 : !a->serial;
    double t0 = trial ? srd_seconds() : 0;
    if (threaded)
        run_threaded(a);
    else {
        srd_sim_run_kernels(a->sim, ctx, ctx_nc, a->with_jacobian, 0, a->threads);
        run_serially(a);
    }
    /* Helpers' shares in share order. */
    for (int j = 0; j < a->threads - 1; j++) {
        const Helper *h = &a->helpers[j];
        if (ctx->energy)
            *ctx->energy += h->energy;
        for (size_t i = 0; i < a->n_res; i++)
            ctx->grad[i] += h->res[i];
        if (!a->sim->conservative)
            for (size_t i = 0; i < a->n_res; i++)
                ctx_nc->grad[i] += h->res_nc[i];
        if (with_jacobian)
            for (size_t i = 0; i < a->n_jac; i++)
                ctx->jac[i] += h->jac[i];
    }
    if (trial) {
        /* The fastest of each kind: one slow trial (another process, a page fault) must not
         * decide. */
        double *best = threaded ? &a->time_threaded : &a->time_serial, took = srd_seconds() - t0;
        if (*best == 0 || took < *best)
            *best = took;
        if (++a->trials == TRIALS)
            a->serial = a->time_serial <= a->time_threaded;
    }
}
