/* test_tiers.c — the interpreted tier of kernels (compiler/kernel/interp.c) against the JIT:
 * energies, residuals and Jacobians of every element kind of every example, on random
 * configurations, must be equal bit for bit, and so must the scalar kernels of the middle tier (the tolerance is zero: a run must not depend on
 * when the compiled code arrived). Then the trampolines (compiler/kernel/tier.c): they
 * interpret until compiled code is published, switch while another thread calls them without
 * changing a bit, and kernels_start's modes (interp, wait, tiered) give the same results. */
#include <dirent.h>
#include <pthread.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include "batch.h"
#include "elab.h"
#include "kernel/interp.h"
#include "kernel/tier.h"
#include "kernels.h"
#include "parse.h"

#include "tap.h"

static Tally tally;

/* One element set's batch in dense storage, and DOF vectors near the reference. */
typedef struct Harness {
    const srd_model *m;
    srd_system       sys;
    srd_batch_owner  batch;
    double          *q, *q0, *v0, params[16], t, dt;
} Harness;

static double reference_dof(const srd_model *m, int d)
{
    return m->dof_kind[d] <= SRD_DOF_NODE_Z ? m->x0[3 * m->dof_owner[d] + m->dof_kind[d]] : 0;
}

static bool harness_open(Harness *h, const srd_model *m, const KernelSet *ks, int set)
{
    memset(h, 0, sizeof *h);
    h->m = m;
    srd_system_init(&h->sys, m, SRD_JAC_DENSE);
    int built = srd_batch_build(&h->batch, m, set, &ks->info, &h->sys);
    h->q = calloc((size_t)m->n_dofs + 1, sizeof(double));
    h->q0 = calloc((size_t)m->n_dofs + 1, sizeof(double));
    h->v0 = calloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int p = 0; p < m->n_params && p < 16; p++)
        h->params[p] = m->params[p].value;
    h->dt = 1e-3;
    return built == 0;
}

static void harness_close(Harness *h)
{
    free(h->q);
    free(h->q0);
    free(h->v0);
    srd_batch_free(&h->batch);
    srd_system_free(&h->sys);
}

static double uniform(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xFFFFFF) / (double)0x1000000;
}

/* Every DOF moved by up to amp (of metres) from the reference; velocities and time too. */
static void randomize(Harness *h, unsigned *seed, double amp)
{
    for (int d = 0; d < h->m->n_dofs; d++) {
        h->q[d] = reference_dof(h->m, d) + amp * (2 * uniform(seed) - 1);
        h->q0[d] = h->q[d] + amp * (2 * uniform(seed) - 1);
        h->v0[d] = 2 * uniform(seed) - 1;
    }
    h->t = uniform(seed);
}

/* What one kernel call adds: energy, residual and Jacobian, from zero. */
typedef struct Result {
    double  energy;
    double *grad, *jac;
    size_t  n_grad, n_jac;
} Result;

static void result_init(Result *r, const Harness *h)
{
    r->n_grad = srd_system_grad_len(&h->sys);
    r->n_jac = srd_system_jac_len(&h->sys);
    r->grad = calloc(r->n_grad, sizeof(double));
    r->jac = calloc(r->n_jac, sizeof(double));
}

static void result_free(Result *r)
{
    free(r->grad);
    free(r->jac);
}

static void evaluate(const Harness *h, srd_kernel_fn fn, const InterpProgram *prog, Result *r)
{
    r->energy = 0;
    memset(r->grad, 0, r->n_grad * sizeof(double));
    memset(r->jac, 0, r->n_jac * sizeof(double));
    srd_eval_ctx ctx = { h->q, h->q0, h->v0, h->params, h->t, h->dt, &r->energy, r->grad, r->jac };
    if (fn)
        fn(&ctx, &h->batch.b);
    else
        interp_run(prog, &ctx, &h->batch.b);
}

/* Equal bits, or both NaN: a NaN's sign and payload are not defined by IEEE arithmetic and
 * differ between libm and LLVM's folding (a solid's tetrahedron inverted by the 2 mm
 * perturbations has log J of a negative J); every tier rejects a NaN step alike. */
static bool same_values(const double *x, const double *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&x[i], &y[i], sizeof *x) && !(isnan(x[i]) && isnan(y[i])))
            return false;
    return true;
}

static bool same_bits(const Result *a, const Result *b)
{
    return same_values(&a->energy, &b->energy, 1) && same_values(a->grad, b->grad, a->n_grad) &&
           same_values(a->jac, b->jac, a->n_jac);
}

/* The spec kernels_emit gives set s's kernel (or its gradient-only twin). */
static KernelSpec set_spec(const LoweredElement *le, bool gradient_only)
{
    return (KernelSpec){ .kind = le->kind, .dag = le->dag, .n_inputs = le->n_inputs, .inputs = le->inputs,
                         .nd = le->nd, .value = le->value, .res = le->res, .jac = le->jac,
                         .symmetric = le->symmetric, .gradient_only = gradient_only, .parts = 1, .lanes = 1 };
}

/* A model of an example file with its kernels lowered and JIT-compiled. */
typedef struct Compiled {
    Arena        arena;
    Program      prog;
    srd_model   *m;
    ModelKernels mk;
    bool         ok;
} Compiled;

static void compiled_open_lanes(Compiled *c, const char *path, bool jit, int lanes)
{
    memset(c, 0, sizeof *c);
    arena_init(&c->arena);
    char err[512] = "";
    if (parse_program(&c->arena, path, parse_stdlib_dir(), &c->prog))
        c->m = elab_program(&c->prog, &c->arena, path);
    diag_discard();
    c->ok = c->m && kernels_lower(&c->mk, &c->prog, c->m, true, err, sizeof err);
    c->mk.lanes = lanes;
    c->ok = c->ok && (!jit || kernels_jit(&c->mk, JIT_CHUNK_OPS, err, sizeof err));
    if (!c->ok)
        printf("# %s: %s\n", path, err);
}

static void compiled_open(Compiled *c, const char *path, bool jit) { compiled_open_lanes(c, path, jit, 0); }

static void compiled_close(Compiled *c)
{
    kernels_free(&c->mk);
    srd_model_free(c->m);
    arena_free(&c->arena);
}

/* Set s of c: the JIT's kernel (and gradient kernel) against the interpreter's on `configs`
 * random configurations. Returns the evaluations that differed in any bit. */
static int compare_set(Compiled *c, int s, int configs, int *evaluations)
{
    const KernelSet *ks = &c->mk.sets[s];
    Harness h;
    if (!harness_open(&h, c->m, ks, s)) {
        harness_close(&h);
        return 1;
    }
    KernelSpec spec = set_spec(&ks->lowered, false), grad_spec = set_spec(&ks->lowered, true);
    InterpProgram *p = interp_build(&spec), *pg = interp_build(&grad_spec);
    Result a, b;
    result_init(&a, &h);
    result_init(&b, &h);
    unsigned seed = 17u + (unsigned)s;
    int differ = 0;
    for (int k = 0; k < configs; k++) {
        randomize(&h, &seed, 2e-3);
        evaluate(&h, ks->fn, NULL, &a);
        evaluate(&h, NULL, p, &b);
        differ += !same_bits(&a, &b);
        evaluate(&h, ks->gradient, NULL, &a);
        evaluate(&h, NULL, pg, &b);
        differ += !same_bits(&a, &b);
        *evaluations += 2;
    }
    result_free(&a);
    result_free(&b);
    interp_free(p);
    interp_free(pg);
    harness_close(&h);
    return differ;
}

/* ---- 1. every example, every element kind: interpreter == scalar JIT == vector JIT ---- */

/* Set s's scalar kernels (the middle tier) against the vector ones of c, on one configuration. */
static bool scalar_same(Compiled *c, Compiled *scalar, int s)
{
    Harness h;
    bool same = harness_open(&h, c->m, &c->mk.sets[s], s);
    Result a, b;
    result_init(&a, &h);
    result_init(&b, &h);
    unsigned seed = 29u + (unsigned)s;
    randomize(&h, &seed, 2e-3);
    evaluate(&h, c->mk.sets[s].fn, NULL, &a);
    evaluate(&h, scalar->mk.sets[s].fn, NULL, &b);
    same = same && same_bits(&a, &b);
    evaluate(&h, c->mk.sets[s].gradient, NULL, &a);
    evaluate(&h, scalar->mk.sets[s].gradient, NULL, &b);
    same = same && same_bits(&a, &b);
    result_free(&a);
    result_free(&b);
    harness_close(&h);
    return same;
}

static void compare_example(const char *path)
{
    Compiled c, scalar;
    compiled_open(&c, path, true);
    compiled_open_lanes(&scalar, path, true, 1);
    check(&tally, c.ok && scalar.ok, "%s compiles (vector and scalar kernels)", path);
    int differ = 0, evaluations = 0, kinds = 0, scalar_differ = 0;
    for (int s = 0; c.ok && scalar.ok && s < c.mk.n; s++)
        if (c.mk.sets[s].fn) {
            differ += compare_set(&c, s, 4, &evaluations);
            scalar_differ += !scalar_same(&c, &scalar, s);
            kinds++;
        }
    if (c.ok && scalar.ok) {
        check(&tally, differ == 0 && evaluations > 0,
              "%s: interpreted and compiled kernels agree bit for bit (%d kinds, %d evaluations, %d differ)", path,
              kinds, evaluations, differ);
        check(&tally, scalar_differ == 0, "%s: scalar and vector kernels agree bit for bit (%d kinds differ)", path,
              scalar_differ);
    }
    compiled_close(&scalar);
    compiled_close(&c);
}

/* An example to compare: every one, or those named in $SRD_EXAMPLES (space-separated), the
 * sample the sanitizer build runs (tests/CMakeLists.txt). */
static bool example_chosen(const char *file)
{
    const char *only = getenv("SRD_EXAMPLES");
    if (!only || !*only)
        return true;
    size_t len = strlen(file) - 4; /* less ".srd" */
    for (const char *p = only; *p;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == len && !strncmp(p, file, len))
            return true;
        p += n;
    }
    return false;
}

static void compare_examples(void)
{
    DIR *dir = opendir("../../examples");
    check(&tally, dir != NULL, "examples directory found");
    if (!dir)
        return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".srd") || !example_chosen(e->d_name))
            continue;
        char path[600];
        snprintf(path, sizeof path, "../../examples/%s", e->d_name);
        compare_example(path);
        n++;
    }
    closedir(dir);
    check(&tally, n >= (getenv("SRD_EXAMPLES") ? 5 : 10), "every example chosen compared (%d)", n);
}

/* ---- 2. a trampoline switches tier under a calling thread without changing a bit ---- */

typedef struct Caller {
    const Harness  *h;
    srd_kernel_fn   tramp;
    const Result   *want;
    atomic_int      calls, mismatches;
    atomic_bool     stop;
} Caller;

static void *call_repeatedly(void *arg)
{
    Caller *c = arg;
    Result r;
    result_init(&r, c->h);
    while (!atomic_load(&c->stop) || atomic_load(&c->calls) < 20) {
        evaluate(c->h, c->tramp, NULL, &r);
        atomic_fetch_add(&c->mismatches, !same_bits(&r, c->want));
        atomic_fetch_add(&c->calls, 1);
    }
    result_free(&r);
    return NULL;
}

static void swap_under_load(void)
{
    Compiled c;
    compiled_open(&c, "../../examples/cantilever_rod.srd", true);
    int s = 0;
    while (c.ok && s < c.mk.n && strcmp(c.mk.sets[s].lowered.kind, "bend_twist"))
        s++;
    check(&tally, c.ok && s < c.mk.n, "bend-twist kernel of cantilever_rod for the swap test");
    if (!c.ok || s == c.mk.n) {
        compiled_close(&c);
        return;
    }
    Harness h;
    harness_open(&h, c.m, &c.mk.sets[s], s);
    unsigned seed = 3;
    randomize(&h, &seed, 2e-3);
    Result want;
    result_init(&want, &h);
    evaluate(&h, c.mk.sets[s].fn, NULL, &want);
    KernelSpec spec = set_spec(&c.mk.sets[s].lowered, false);
    InterpProgram *p = interp_build(&spec);
    int slot;
    Caller caller = { &h, tier_claim(p, &slot), &want, 0, 0, false };
    check(&tally, caller.tramp != NULL, "a trampoline is claimed");
    long before = tier_interpreted_calls();
    pthread_t thread;
    pthread_create(&thread, NULL, call_repeatedly, &caller);
    while (atomic_load(&caller.calls) < 10)
        sched_yield();
    tier_publish(slot, c.mk.sets[s].fn); /* while the other thread calls */
    int at_swap = atomic_load(&caller.calls);
    while (atomic_load(&caller.calls) < at_swap + 20)
        sched_yield();
    atomic_store(&caller.stop, true);
    pthread_join(thread, NULL);
    long interpreted = tier_interpreted_calls() - before;
    int calls = atomic_load(&caller.calls);
    check(&tally, interpreted >= 10 && interpreted < calls,
          "calls before the swap were interpreted, later ones compiled (%ld of %d interpreted)", interpreted, calls);
    check(&tally, atomic_load(&caller.mismatches) == 0, "no call changed a bit across the swap (%d calls, %d differ)",
          calls, atomic_load(&caller.mismatches));
    tier_release(slot);
    interp_free(p);
    result_free(&want);
    harness_close(&h);
    compiled_close(&c);
}

/* ---- 3. kernels_start's modes ---- */

/* Set s of a model started with SRD_JIT=mode against the reference's JIT kernel. */
static void start_mode(const char *mode, bool expect_interpreted)
{
    const char *path = "../../examples/rod_drop.srd";
    Compiled ref, c;
    compiled_open(&ref, path, true);
    compiled_open(&c, path, false);
    setenv("SRD_JIT", mode, 1);
    char err[512] = "";
    bool started = ref.ok && c.ok && kernels_start(&c.mk, JIT_CHUNK_OPS, err, sizeof err);
    unsetenv("SRD_JIT");
    check(&tally, started, "SRD_JIT=%s: kernels start (%s)", mode, started ? "ok" : err);
    if (started) {
        long before = tier_interpreted_calls();
        int differ = 0;
        for (int s = 0; s < c.mk.n; s++) {
            Harness h;
            harness_open(&h, c.m, &c.mk.sets[s], s);
            Result a, b;
            result_init(&a, &h);
            result_init(&b, &h);
            unsigned seed = 9;
            randomize(&h, &seed, 1e-3);
            evaluate(&h, ref.mk.sets[s].fn, NULL, &a);
            evaluate(&h, c.mk.sets[s].fn, NULL, &b);
            differ += !same_bits(&a, &b);
            result_free(&a);
            result_free(&b);
            harness_close(&h);
        }
        long interpreted = tier_interpreted_calls() - before;
        kernels_finish(&c.mk);
        check(&tally, differ == 0, "SRD_JIT=%s: the started kernels give the JIT's bits (%d sets differ)", mode, differ);
        check(&tally, expect_interpreted ? interpreted == c.mk.n : interpreted == 0,
              "SRD_JIT=%s: %ld of %d calls interpreted", mode, interpreted, c.mk.n);
    }
    compiled_close(&c);
    compiled_close(&ref);
}

/* After kernels_finish, a tiered start calls compiled code only. */
static void tiered_finishes_compiled(void)
{
    Compiled c;
    compiled_open(&c, "../../examples/snake.srd", false);
    char err[512] = "";
    bool started = c.ok && kernels_start(&c.mk, JIT_CHUNK_OPS, err, sizeof err);
    check(&tally, started, "tiered kernels start (%s)", started ? "ok" : err);
    if (started) {
        kernels_finish(&c.mk);
        long before = tier_interpreted_calls();
        Harness h;
        harness_open(&h, c.m, &c.mk.sets[0], 0);
        Result r;
        result_init(&r, &h);
        evaluate(&h, c.mk.sets[0].fn, NULL, &r);
        check(&tally, tier_interpreted_calls() == before, "after kernels_finish the trampolines call compiled code");
        result_free(&r);
        harness_close(&h);
    }
    compiled_close(&c);
}

int main(void)
{
    setenv("SRD_CACHE", "off", 1);
    compare_examples();
    swap_under_load();
    start_mode("interp", true);
    start_mode("wait", false);
    tiered_finishes_compiled();
    diag_reset();
    printf("%d passed, %d failed\n", tally.run - tally.failed, tally.failed);
    return tally.failed != 0;
}
