/* lattice.c — speed of the explicit fast path (runtime/explicit) on mass-spring lattices: spring
 * updates per second for box lattices of about 1e4 to 1e7 springs on one and two threads,
 * beside this machine's memory bandwidth (a STREAM-like copy and triad) and the floor it sets
 * on the update rate; and Cronos's comparison case, 8,000 active masses. It prints figures
 * (bench/README.md); it is not a test.
 *
 *   lattice_bench [--quick]      --quick: up to 1e6 springs
 *   lattice_bench --cells N      one cubic lattice of N^3 cells, without the bandwidth figures */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "elab.h"
#include "explicit.h"
#include "kernels.h"
#include "parse.h"

/* ---- memory bandwidth: copy c = a and triad a = b + s c over arrays far larger than cache ---- */

enum { STREAM_N = 1 << 25 }; /* 32 Mi doubles, 256 MiB per array */

typedef struct StreamJob {
    double *a, *b, *c;
    size_t  lo, hi;
    int     triad;
} StreamJob;

static void *stream_part(void *arg)
{
    StreamJob *j = arg;
    if (j->triad)
        for (size_t i = j->lo; i < j->hi; i++)
            j->a[i] = j->b[i] + 3.0 * j->c[i];
    else
        for (size_t i = j->lo; i < j->hi; i++)
            j->c[i] = j->a[i];
    return NULL;
}

/* GB/s of one kernel on `threads` threads, the best of 5 (bytes as STREAM counts them). */
static double stream_rate(double *a, double *b, double *c, int threads, int triad)
{
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        pthread_t th[8];
        StreamJob job[8];
        double t0 = srd_seconds();
        for (int k = 0; k < threads; k++) {
            job[k] = (StreamJob){ a, b, c, (size_t)STREAM_N * k / threads, (size_t)STREAM_N * (k + 1) / threads, triad };
            if (k)
                pthread_create(&th[k], NULL, stream_part, &job[k]);
        }
        stream_part(&job[0]);
        for (int k = 1; k < threads; k++)
            pthread_join(th[k], NULL);
        double bytes = (triad ? 24.0 : 16.0) * STREAM_N;
        best = fmax(best, bytes / (srd_seconds() - t0) / 1e9);
    }
    return best;
}

/* Prints copy and triad on 1 and 2 threads; returns the best triad rate (GB/s). */
static double memory_bandwidth(void)
{
    double *a = malloc(sizeof(double) * STREAM_N), *b = malloc(sizeof(double) * STREAM_N);
    double *c = malloc(sizeof(double) * STREAM_N);
    for (size_t i = 0; i < STREAM_N; i++)
        a[i] = 1, b[i] = 2, c[i] = 0;
    double best = 0;
    printf("memory bandwidth (STREAM-like, 256 MiB arrays, best of 5):\n");
    for (int threads = 1; threads <= 2; threads++) {
        double copy = stream_rate(a, b, c, threads, 0), triad = stream_rate(a, b, c, threads, 1);
        printf("  %d thread%s: copy %.1f GB/s, triad %.1f GB/s\n", threads, threads > 1 ? "s" : " ", copy, triad);
        best = fmax(best, triad);
    }
    free(a);
    free(b);
    free(c);
    return best;
}

/* ---- lattices ---- */

typedef struct Lattice {
    Arena        arena;
    Program      prog;
    srd_model   *m;
    ModelKernels mk;
    KernelTable  kt;
    double      *params;
} Lattice;

/* A cubic lattice (edges and face diagonals) of nx x ny x nz cells of 1 mm; ground: a floor
 * with contact and friction under it and gravity. Returns 0, or 1 after a message. */
static int lattice_open(Lattice *L, int nx, int ny, int nz, int ground)
{
    char text[1024];
    snprintf(text, sizeof text,
             "material gel { E = 1 MPa; rho = 1000 kg/m^3; }\n"
             "lattice b { shape = box((%d mm, %d mm, %d mm)); spacing = 1 mm; material = gel; }\n%s",
             nx, ny, nz, ground ? "gravity = (0, 0, -9.81) m/s^2;\n"
                                  "ground { stiffness = 10 N/m; delta = 0.1 mm; friction = 0.5; }\n" : "");
    memset(L, 0, sizeof *L);
    arena_init(&L->arena);
    if (parse_program_text(&L->arena, "lattice.srd", text, strlen(text), parse_stdlib_dir(), &L->prog))
        L->m = elab_program(&L->prog, &L->arena, "lattice.srd");
    diag_flush(stderr);
    char err[512];
    if (!L->m || !kernels_lower(&L->mk, &L->prog, L->m, false, err, sizeof err) ||
        !kernels_jit(&L->mk, JIT_CHUNK_OPS, err, sizeof err)) {
        fprintf(stderr, "%s\n", L->m ? err : "lattice model failed");
        return 1;
    }
    kernels_table_fill(&L->kt, &L->mk);
    L->params = calloc((size_t)L->m->n_params + 1, sizeof(double));
    return 0;
}

static void lattice_close(Lattice *L)
{
    free(L->params);
    kernels_table_free(&L->kt);
    kernels_free(&L->mk);
    srd_model_free(L->m);
    arena_free(&L->arena);
    diag_reset();
}

/* The fast path over L with `threads` threads, Verlet at a tenth of a stable step, moving:
 * every node starts with a small velocity varying over the body, so the springs are strained. */
static srd_explicit *lattice_path(const Lattice *L, int threads, const double *fext)
{
    srd_explicit_input in = { L->m, L->kt.gradients, L->kt.infos, NULL, L->params, fext, NULL, NULL, 0, threads };
    srd_explicit *x = srd_explicit_new(&in, SRD_VERLET, 1e-6);
    double *v = calloc((size_t)L->m->n_dofs + 1, sizeof(double));
    for (int d = 0; d < L->m->n_dofs; d++)
        v[d] = 1e-3 * sin(0.37 * d);
    srd_explicit_set_state(x, NULL, v, 0);
    free(v);
    return x;
}

/* Seconds per step, the best of 3 runs of at least 0.3 s each. */
static double seconds_per_step(srd_explicit *x)
{
    srd_explicit_steps(x, 2);
    double best = INFINITY;
    for (int rep = 0; rep < 3; rep++) {
        long steps = 0;
        double t0 = srd_seconds(), t;
        do {
            srd_explicit_steps(x, 4);
            steps += 4;
            t = srd_seconds() - t0;
        } while (t < 0.3);
        best = fmin(best, t / (double)steps);
    }
    return best;
}

/* Bytes one force evaluation (with the node pass of chained Verlet steps) must move to or
 * from memory, once each: per spring its stencil's DOF indices and its data row; per node
 * DOF the position (read by the springs, then read and written by the update), the velocity
 * (read and written), the kept acceleration (written), inverse mass, damping and external
 * force (read), and its force buffer (written by the springs and read and cleared by the sum). */
static double bytes_per_evaluation(const srd_model *m)
{
    double bytes = 0;
    for (int k = 0; k < m->n_sets; k++)
        bytes += (double)m->sets[k].n * (6 * 4 + 8.0 * m->sets[k].n_data);
    double per_dof = 8 + 16 + 16 + 8 + 3 * 8 + 16 + 16;
    return bytes + per_dof * 3.0 * m->n_nodes;
}

/* Spring updates per second of the lattice_spring gradient kernel alone (one thread, model
 * order, SoA numbering): what the step adds to it is the node pass and the threads' meeting. */
static double kernel_alone(const Lattice *L)
{
    const srd_model *m = L->m;
    const srd_elemset *es = &m->sets[0];
    int n = m->n_nodes;
    int32_t *dofs = calloc((size_t)es->n * 6, sizeof(int32_t));
    double *q = calloc((size_t)3 * n, sizeof(double)), *f = calloc((size_t)3 * n + SRD_SCRATCH, sizeof(double));
    for (long i = 0; i < es->n; i++)
        for (int d = 0; d < 6; d++)
            dofs[i * 6 + d] = (d % 3) * n + es->nodes[i * 2 + d / 3];
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            q[c * n + i] = m->x0[3 * i + c] * (1 + 1e-3 * sin(i + c));
    srd_eval_ctx ctx = { q, q, q, L->params, 0, 1e-6, NULL, f, NULL };
    srd_elem_batch b = { es->n, 6, es->n_data, 0, dofs, dofs, NULL, es->data, NULL };
    double best = INFINITY;
    for (int rep = 0; rep < 20; rep++) {
        double t0 = srd_seconds();
        L->kt.gradients[0](&ctx, &b);
        best = fmin(best, srd_seconds() - t0);
    }
    free(dofs);
    free(q);
    free(f);
    return es->n / best;
}

static void lattice_row(int nx, int ny, int nz, double bandwidth)
{
    Lattice L;
    if (lattice_open(&L, nx, ny, nz, 0) != 0)
        return;
    long springs = L.m->sets[0].n;
    double bytes = bytes_per_evaluation(L.m) / (double)springs;
    double floor_rate = bandwidth * 1e9 / bytes;
    printf("%10ld springs %9d nodes", springs, L.m->n_nodes);
    for (int threads = 1; threads <= 2; threads++) {
        srd_explicit *x = lattice_path(&L, threads, NULL);
        double rate = (double)springs * srd_explicit_evaluations_per_step(x) / seconds_per_step(x);
        printf("  %d thr: %7.1f M/s (%.2f of floor)", srd_explicit_threads(x), rate / 1e6, rate / floor_rate);
        srd_explicit_free(x);
    }
    printf("  %.0f B/spring, floor %.0f M/s; kernel alone %.1f M/s\n", bytes, floor_rate / 1e6,
           kernel_alone(&L) / 1e6);
    fflush(stdout);
    lattice_close(&L);
}

/* Cronos's comparison (its Table 3: 8,000 active masses, 0.216 ms per iteration on a GTX 1080
 * Ti): a 20 x 20 x 20-node cube, alone and standing on a frictional floor under gravity. */
static void cronos_case(void)
{
    for (int ground = 0; ground <= 1; ground++) {
        Lattice L;
        if (lattice_open(&L, 19, 19, 19, ground) != 0)
            return;
        double *fext = calloc((size_t)L.m->n_dofs + 1, sizeof(double));
        for (int i = 0; ground && i < L.m->n_nodes; i++)
            fext[L.m->node_dof[i] + 2] = -9.81 * L.m->node_mass[i];
        printf("8,000 masses, %d springs%s:", L.m->sets[0].n, ground ? " + floor contact and friction on every node" : "");
        for (int threads = 1; threads <= 2; threads++) {
            srd_explicit *x = lattice_path(&L, threads, fext);
            printf("  %d thr: %.4f ms per step", srd_explicit_threads(x), 1e3 * seconds_per_step(x));
            srd_explicit_free(x);
        }
        printf("\n");
        free(fext);
        lattice_close(&L);
    }
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    if (argc > 2 && !strcmp(argv[1], "--cells")) {
        int n = atoi(argv[2]);
        lattice_row(n, n, n, 1);
        return 0;
    }
    double bandwidth = memory_bandwidth();
    printf("\nVerlet spring updates per second (one force evaluation per step), cubic lattice with face "
           "diagonals;\nfloor: best triad bandwidth %.1f GB/s over the bytes a step moves per spring\n", bandwidth);
    static const int cells[][3] = { { 10, 10, 10 }, { 22, 22, 22 }, { 47, 47, 47 }, { 101, 101, 101 } };
    for (int k = 0; k < (quick ? 3 : 4); k++)
        lattice_row(cells[k][0], cells[k][1], cells[k][2], bandwidth);
    printf("\n");
    cronos_case();
    return 0;
}
