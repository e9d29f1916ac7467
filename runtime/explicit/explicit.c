/* explicit.c — the explicit fast path of explicit.h. One call of srd_explicit_steps runs every
 * member of the thread team through all the steps asked for; the members meet at a barrier
 * before each force evaluation (the positions must all be updated) and after it (the force
 * buffers must all be written). Each member runs every element set's gradient kernel over its
 * contiguous block of instances into its own buffer, then sums the buffers over its own node
 * range, clearing them, and updates those nodes: no two members ever write the same value, so
 * no atomics. Element sets are numbered by the compiler in grid order, so a member's block of
 * springs touches a narrow band of nodes; a buffer is read only where its member's instances
 * reach (the segments below), which keeps the sum from reading every buffer everywhere. */
#include "explicit.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "team.h"

enum { MAX_MEMBERS = 64 };

/* A run of nodes of one member's range over which the same buffers can be nonzero. */
typedef struct Segment {
    int n0, n1;
    int n_active;
    int active[MAX_MEMBERS];
} Segment;

typedef struct Set {
    srd_kernel_fn fn;
    srd_elem_batch whole;   /* every instance, DOFs in the SoA numbering; res = dofs */
    int32_t      *dofs;
    int           k;        /* model set index */
} Set;

/* One member's share: its block of each set and its node segments. */
typedef struct Share {
    long    *lo, *hi;       /* per set: instances [lo, hi) */
    Segment *seg;
    int      n_seg;
    int      bad;           /* its nodes went non-finite */
} Share;

struct srd_explicit {
    srd_explicit_input in;
    const srd_model   *m;
    srd_method         method;
    double             dt, t;
    int                n;               /* nodes */
    size_t             n3;
    double            *q, *v, *a, *qprev, *inv_m, *damp, *fext;
    double            *qs, *vs, *qsum, *vsum;  /* RK4's stage state and weighted sums */
    double           **buf;             /* per member: forces, 3 n + SRD_SCRATCH */
    Set               *sets;
    int                n_sets;
    Share             *share;
    srd_team          *team;
    int                members;
    int                velocity_forces; /* damping or kernels that read velocities */
    int                needs_prev;      /* kernels read prev(x): given q - dt v */
    int                a_valid;         /* a holds the acceleration of the current state */
    long               todo;
};

/* ---- what the fast path takes ---- */

static const char *set_unsupported(const srd_kernel_info *in)
{
    if (in->n_state > 0)
        return "elements with step-start state (rod frames, mid-edge shells)";
    for (int k = 0; k < in->nd; k++)
        if (in->dof_comp[k] > SRD_COMP_Z || in->dof_param[k] < 0 || !in->param_is_node[in->dof_param[k]])
            return "elements on DOFs other than node positions (twists, mid-edge xi)";
    return NULL;
}

const char *srd_explicit_unsupported(const srd_model *m, const srd_kernel_info *infos)
{
    if (m->n_dofs != 3 * m->n_nodes)
        return "DOFs other than node positions (rod twists, mid-edge xi)";
    if (m->n_slides || m->n_motions || m->n_releases)
        return "clamped rod ends, prescribed motion or releases";
    if (m->damping_beta > 0)
        return "stiffness-proportional damping (beta)";
    for (int k = 0; k < m->n_sets; k++) {
        const char *why = set_unsupported(&infos[k]);
        if (why)
            return why;
    }
    return NULL;
}

/* ---- building ---- */

/* Set k's instances in the model's order (the compiler numbers a lattice's springs node by
 * node in grid order, so the gathers walk along the node arrays), DOFs in the SoA numbering. */
static Set make_set(const srd_explicit_input *in, int k, int n_nodes)
{
    const srd_elemset *es = &in->m->sets[k];
    const srd_kernel_info *info = &in->infos[k];
    Set s = { .fn = in->gradients[k], .k = k };
    int nd = info->nd;
    s.dofs = srd_xcalloc((size_t)es->n * (size_t)nd + 1, sizeof(int32_t));
    for (long i = 0; i < es->n; i++)
        for (int d = 0; d < nd; d++)
            s.dofs[i * nd + d] = info->dof_comp[d] * n_nodes + es->nodes[i * es->n_node + info->dof_param[d]];
    s.whole = (srd_elem_batch){ .n = es->n, .n_dofs = nd, .n_data = es->n_data, .dofs = s.dofs, .res = s.dofs };
    return s;
}

/* The node range member `me` writes: an even share of the nodes. */
static void node_range(const srd_explicit *x, int me, int *n0, int *n1)
{
    *n0 = (int)((long long)x->n * me / x->members);
    *n1 = (int)((long long)x->n * (me + 1) / x->members);
}

/* The nodes member t's instances reach: [lo, hi], or lo > hi when none. */
static void touched(const srd_explicit *x, int t, int *lo, int *hi)
{
    *lo = x->n;
    *hi = -1;
    for (int s = 0; s < x->n_sets; s++) {
        const Set *set = &x->sets[s];
        int nd = set->whole.n_dofs;
        for (long i = x->share[t].lo[s] * nd; i < x->share[t].hi[s] * nd; i++) {
            int node = set->dofs[i] % x->n;
            *lo = node < *lo ? node : *lo;
            *hi = node > *hi ? node : *hi;
        }
    }
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Cuts member me's node range where a buffer's reach begins or ends. */
static void make_segments(srd_explicit *x, int me, const int *lo, const int *hi)
{
    int n0, n1, cut[2 * MAX_MEMBERS + 2], nc = 0;
    node_range(x, me, &n0, &n1);
    cut[nc++] = n0;
    cut[nc++] = n1;
    for (int t = 0; t < x->members; t++) {
        if (lo[t] > n0 && lo[t] < n1)
            cut[nc++] = lo[t];
        if (hi[t] + 1 > n0 && hi[t] + 1 < n1)
            cut[nc++] = hi[t] + 1;
    }
    qsort(cut, (size_t)nc, sizeof *cut, cmp_int);
    Share *sh = &x->share[me];
    sh->seg = srd_xcalloc((size_t)nc, sizeof *sh->seg);
    for (int c = 0; c + 1 < nc; c++) {
        if (cut[c] == cut[c + 1])
            continue;
        Segment *g = &sh->seg[sh->n_seg++];
        g->n0 = cut[c];
        g->n1 = cut[c + 1];
        for (int t = 0; t < x->members; t++)
            if (lo[t] <= g->n0 && g->n1 - 1 <= hi[t])
                g->active[g->n_active++] = t;
    }
}

static void make_shares(srd_explicit *x)
{
    x->share = srd_xcalloc((size_t)x->members, sizeof *x->share);
    for (int t = 0; t < x->members; t++) {
        x->share[t].lo = srd_xcalloc((size_t)x->n_sets + 1, sizeof(long));
        x->share[t].hi = srd_xcalloc((size_t)x->n_sets + 1, sizeof(long));
        for (int s = 0; s < x->n_sets; s++) {
            long n = x->sets[s].whole.n;
            x->share[t].lo[s] = n * t / x->members;
            x->share[t].hi[s] = n * (t + 1) / x->members;
        }
    }
    int lo[MAX_MEMBERS], hi[MAX_MEMBERS];
    for (int t = 0; t < x->members; t++)
        touched(x, t, &lo[t], &hi[t]);
    for (int t = 0; t < x->members; t++)
        make_segments(x, t, lo, hi);
}

/* Model DOF of SoA index j. */
static int model_dof(const srd_explicit *x, size_t j)
{
    return x->m->node_dof[j % (size_t)x->n] + (int)(j / (size_t)x->n);
}

static void gather_fext(srd_explicit *x)
{
    for (size_t j = 0; j < x->n3; j++)
        x->fext[j] = x->in.fext ? x->in.fext[model_dof(x, j)] : 0;
}

/* Inverse masses (0 on held and massless DOFs: they do not move) and mass damping. */
static void masses(srd_explicit *x)
{
    const srd_model *m = x->m;
    for (size_t j = 0; j < x->n3; j++) {
        int d = model_dof(x, j);
        int moves = !m->dof_fixed[d] && m->dof_mass[d] > 0;
        x->inv_m[j] = moves ? 1 / m->dof_mass[d] : 0;
        x->damp[j] = moves ? m->damping_alpha : 0;
    }
}

static void allocate_state(srd_explicit *x)
{
    size_t n = x->n3 + 1;
    double **arrays[] = { &x->q, &x->v, &x->a, &x->qprev, &x->inv_m, &x->damp, &x->fext };
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++)
        *arrays[k] = srd_xcalloc(n, sizeof(double));
    if (x->method == SRD_RK4) {
        double **rk[] = { &x->qs, &x->vs, &x->qsum, &x->vsum };
        for (size_t k = 0; k < 4; k++)
            *rk[k] = srd_xcalloc(n, sizeof(double));
    }
    x->buf = srd_xcalloc((size_t)x->members, sizeof *x->buf);
    for (int t = 0; t < x->members; t++)
        x->buf[t] = srd_xcalloc(x->n3 + SRD_SCRATCH, sizeof(double));
}

static void make_sets(srd_explicit *x)
{
    x->n_sets = x->m->n_sets;
    x->sets = srd_xcalloc((size_t)x->n_sets + 1, sizeof *x->sets);
    for (int k = 0; k < x->n_sets; k++) {
        x->sets[k] = make_set(&x->in, k, x->n);
        x->needs_prev |= x->in.infos[k].needs_time_step;
    }
}

srd_explicit *srd_explicit_new(const srd_explicit_input *in, srd_method method, double dt)
{
    if (srd_explicit_unsupported(in->m, in->infos) || method < SRD_SYMPLECTIC_EULER)
        return NULL;
    srd_explicit *x = srd_xcalloc(1, sizeof *x);
    x->in = *in;
    x->m = in->m;
    x->method = method;
    x->dt = dt;
    x->n = in->m->n_nodes;
    x->n3 = 3 * (size_t)x->n;
    x->team = srd_team_new(in->threads > MAX_MEMBERS ? MAX_MEMBERS : in->threads);
    x->members = srd_team_members(x->team);
    allocate_state(x);
    make_sets(x);
    make_shares(x);
    masses(x);
    gather_fext(x);
    x->velocity_forces = x->needs_prev || in->m->damping_alpha > 0;
    srd_explicit_set_state(x, NULL, NULL, 0);
    return x;
}

void srd_explicit_free(srd_explicit *x)
{
    if (!x)
        return;
    srd_team_free(x->team);
    for (int k = 0; k < x->n_sets; k++)
        free(x->sets[k].dofs);
    free(x->sets);
    for (int t = 0; t < x->members; t++) {
        free(x->share[t].lo);
        free(x->share[t].hi);
        free(x->share[t].seg);
        free(x->buf[t]);
    }
    free(x->share);
    free(x->buf);
    double *arrays[] = { x->q, x->v, x->a, x->qprev, x->inv_m, x->damp, x->fext, x->qs, x->vs, x->qsum, x->vsum };
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++)
        free(arrays[k]);
    free(x);
}

void srd_explicit_set_state(srd_explicit *x, const double *q, const double *v, double t)
{
    for (size_t j = 0; j < x->n3; j++) {
        int d = model_dof(x, j);
        x->q[j] = q ? q[d] : x->m->x0[3 * (j % (size_t)x->n) + j / (size_t)x->n];
        x->v[j] = v ? v[d] : 0;
        x->qprev[j] = x->q[j] - x->dt * x->v[j];
    }
    x->t = t;
    x->a_valid = 0;
}

void srd_explicit_get_state(const srd_explicit *x, double *q, double *v)
{
    for (size_t j = 0; j < x->n3; j++) {
        if (q)
            q[model_dof(x, j)] = x->q[j];
        if (v)
            v[model_dof(x, j)] = x->v[j];
    }
}

double srd_explicit_time(const srd_explicit *x) { return x->t; }
int    srd_explicit_threads(const srd_explicit *x) { return x->members; }

long srd_explicit_instances(const srd_explicit *x)
{
    long n = 0;
    for (int k = 0; k < x->n_sets; k++)
        n += x->sets[k].whole.n;
    return n;
}

int srd_explicit_evaluations_per_step(const srd_explicit *x)
{
    return x->method == SRD_RK4 ? 4 : x->method == SRD_VERLET && x->velocity_forces ? 2 : 1;
}

/* ---- one force evaluation ---- */

/* Member me's block of every set into its buffer, at state (q, v) and time t. */
static void run_sets(const srd_explicit *x, const double *q, const double *v, double t, int me)
{
    srd_eval_ctx ctx = { q, x->qprev, v, x->in.params, t, x->dt, NULL, x->buf[me], NULL };
    for (int s = 0; s < x->n_sets; s++) {
        const Set *set = &x->sets[s];
        long lo = x->share[me].lo[s], hi = x->share[me].hi[s];
        if (hi <= lo)
            continue;
        int nd = set->whole.n_dofs, nv = set->whole.n_data;
        srd_elem_batch b = set->whole;
        b.n = (int32_t)(hi - lo);
        b.dofs = b.res = set->dofs + lo * nd;
        b.data = (x->in.set_data ? x->in.set_data[set->k] : x->m->sets[set->k].data) + lo * nv;
        set->fn(&ctx, &b);
    }
}

/* Every member: the forces at (q, v) and time t into the buffers, once all members have
 * finished updating the state. Member 0 applies the schedules first. */
static void evaluate(srd_explicit *x, const double *q, const double *v, double t, int me)
{
    srd_team_barrier(x->team);
    if (x->in.schedules) {
        if (me == 0) {
            x->in.schedules(x->in.schedules_ctx, t);
            if (x->in.fext_varies)
                gather_fext(x);
        }
        srd_team_barrier(x->team);
    }
    run_sets(x, q, v, t, me);
    srd_team_barrier(x->team);
}

/* ---- node passes: the buffers summed (and cleared) into an acceleration, then an update ---- */

enum Update {
    EULER,          /* v += dt a; q += dt v */
    KICK_DRIFT,     /* Verlet's first half: v += dt/2 a; q += dt v */
    KICK,           /* Verlet's second half: v += dt/2 a (a kept for the next step) */
    KICK_KICK_DRIFT,/* Verlet's second half and the next step's first, with a kept */
    RK_STAGE0, RK_STAGE1, RK_STAGE2, RK_FINAL,
};

/* The node pass works through its DOFs in chunks that stay in L1 between its two loops. */
enum { CHUNK = 256 };

/* acc[0..len) for DOFs j0.. of segment g: the summed buffers (cleared) and the external force
 * over the mass, less mass damping at velocity vel. */
static void chunk_accelerations(const srd_explicit *x, const Segment *g, size_t j0, int len, const double *vel,
                                double *acc)
{
    const double *fext = x->fext + j0, *inv_m = x->inv_m + j0, *damp = x->damp + j0, *v = vel + j0;
    for (int i = 0; i < len; i++)
        acc[i] = fext[i];
    for (int k = 0; k < g->n_active; k++) {
        double *b = x->buf[g->active[k]] + j0;
        for (int i = 0; i < len; i++)
            acc[i] -= b[i];
        memset(b, 0, sizeof(double) * (size_t)len);
    }
    for (int i = 0; i < len; i++)
        acc[i] = inv_m[i] * acc[i] - damp[i] * v[i];
}

/* RK4 after stage s's acceleration acc, at stage velocity vs (the step's v at stage 0). */
static inline void rk_update(srd_explicit *x, enum Update u, size_t j, double acc)
{
    double dt = x->dt, kq = u == RK_STAGE0 ? x->v[j] : x->vs[j];
    if (u == RK_STAGE0) {
        x->qsum[j] = kq;
        x->vsum[j] = acc;
    } else if (u != RK_FINAL) {
        x->qsum[j] += 2 * kq;
        x->vsum[j] += 2 * acc;
    }
    if (u == RK_FINAL) {
        x->q[j] += dt / 6 * (x->qsum[j] + kq);
        x->v[j] += dt / 6 * (x->vsum[j] + acc);
        if (x->needs_prev) /* the next step's first stage reads the step's end */
            x->qprev[j] = x->q[j] - dt * x->v[j];
        return;
    }
    double c = u == RK_STAGE2 ? dt : 0.5 * dt;
    x->qs[j] = x->q[j] + c * kq;
    x->vs[j] = x->v[j] + c * acc;
    if (x->needs_prev)
        x->qprev[j] = x->qs[j] - dt * x->vs[j];
}

static inline void update(srd_explicit *x, enum Update u, size_t j, double acc)
{
    double dt = x->dt;
    if (u >= RK_STAGE0) {
        rk_update(x, u, j, acc);
        return;
    }
    if (u == KICK || u == KICK_KICK_DRIFT)
        x->a[j] = acc;
    x->v[j] += (u == EULER ? dt : 0.5 * dt) * acc;
    if (u == KICK_KICK_DRIFT)
        x->v[j] += 0.5 * dt * acc;
    if (u != KICK)
        x->q[j] += dt * x->v[j];
    if (x->needs_prev)
        x->qprev[j] = x->q[j] - dt * x->v[j];
}

/* Update u of DOFs j0.. with accelerations acc: a switch outside the loops, so that each
 * loop is update() with u known. */
static void chunk_update(srd_explicit *x, enum Update u, size_t j0, int len, const double *acc)
{
#define UPDATE_LOOP(U)                        \
    case U:                                   \
        for (int i = 0; i < len; i++)         \
            update(x, U, j0 + (size_t)i, acc[i]); \
        break;
    switch (u) {
        UPDATE_LOOP(EULER)
        UPDATE_LOOP(KICK_DRIFT)
        UPDATE_LOOP(KICK)
        UPDATE_LOOP(KICK_KICK_DRIFT)
        UPDATE_LOOP(RK_STAGE0)
        UPDATE_LOOP(RK_STAGE1)
        UPDATE_LOOP(RK_STAGE2)
        UPDATE_LOOP(RK_FINAL)
    }
#undef UPDATE_LOOP
}

/* Member me's nodes: acceleration from the buffers (at velocity vel), then update u. */
static void node_pass(srd_explicit *x, int me, enum Update u, const double *vel)
{
    const Share *sh = &x->share[me];
    double acc[CHUNK];
    for (int c = 0; c < 3; c++)
        for (int s = 0; s < sh->n_seg; s++) {
            const Segment *g = &sh->seg[s];
            size_t j0 = (size_t)c * (size_t)x->n + (size_t)g->n0, j1 = j0 + (size_t)(g->n1 - g->n0);
            for (size_t j = j0; j < j1; j += CHUNK) {
                int len = j1 - j < CHUNK ? (int)(j1 - j) : CHUNK;
                chunk_accelerations(x, g, j, len, vel, acc);
                chunk_update(x, u, j, len, acc);
            }
        }
}

/* Member me's nodes: v += dt/2 a; q += dt v with the kept acceleration (no forces). */
static void kick_drift_kept(srd_explicit *x, int me)
{
    int n0, n1;
    node_range(x, me, &n0, &n1);
    for (int c = 0; c < 3; c++)
        for (size_t j = (size_t)c * (size_t)x->n + (size_t)n0; j < (size_t)c * (size_t)x->n + (size_t)n1; j++)
            update(x, KICK_DRIFT, j, x->a[j]);
}

/* ---- steps ---- */

static void euler_step(srd_explicit *x, double t, int me)
{
    evaluate(x, x->q, x->v, t, me);
    node_pass(x, me, EULER, x->v);
}

/* Velocity Verlet. Without velocity-dependent forces the acceleration at the end of a step is
 * the one at the start of the next (same q and t), so it is kept: one evaluation per step, and
 * the closing half kick of a step and the opening kick and drift of the next are one node pass
 * (KICK_KICK_DRIFT). Otherwise the start is evaluated again at the full velocity, as the
 * general path does. *drifted: this step's opening kick and drift are done. */
static void verlet_step(srd_explicit *x, double t, int me, int have_a, int last, int *drifted)
{
    if (!have_a || x->velocity_forces) {
        evaluate(x, x->q, x->v, t, me);
        node_pass(x, me, KICK_DRIFT, x->v);
    } else if (!*drifted) {
        kick_drift_kept(x, me);
    }
    evaluate(x, x->q, x->v, t + x->dt, me);
    *drifted = !x->velocity_forces && !last;
    node_pass(x, me, *drifted ? KICK_KICK_DRIFT : KICK, x->v);
}

static void rk4_step(srd_explicit *x, double t, int me)
{
    static const enum Update after[4] = { RK_STAGE0, RK_STAGE1, RK_STAGE2, RK_FINAL };
    static const double c[4] = { 0, 0.5, 0.5, 1 };
    for (int s = 0; s < 4; s++) {
        const double *q = s ? x->qs : x->q, *v = s ? x->vs : x->v;
        evaluate(x, q, v, t + c[s] * x->dt, me);
        node_pass(x, me, after[s], v);
    }
}

/* Member me's nodes all finite? */
static int finite_range(const srd_explicit *x, int me)
{
    int n0, n1;
    node_range(x, me, &n0, &n1);
    double sum = 0;
    for (int c = 0; c < 3; c++)
        for (size_t j = (size_t)c * (size_t)x->n + (size_t)n0; j < (size_t)c * (size_t)x->n + (size_t)n1; j++)
            sum += 0 * x->q[j] + 0 * x->v[j];
    return sum == 0;
}

static void member_steps(void *arg, int me, int members)
{
    (void)members;
    srd_explicit *x = arg;
    double t = x->t;
    int have_a = x->a_valid, drifted = 0;
    for (long k = 0; k < x->todo; k++) {
        if (x->method == SRD_SYMPLECTIC_EULER)
            euler_step(x, t, me);
        else if (x->method == SRD_RK4)
            rk4_step(x, t, me);
        else
            verlet_step(x, t, me, have_a, k + 1 == x->todo, &drifted);
        t += x->dt;
        have_a = 1;
    }
    x->share[me].bad = !finite_range(x, me);
}

int srd_explicit_steps(srd_explicit *x, long n)
{
    if (n <= 0)
        return 0;
    x->todo = n;
    srd_team_run(x->team, member_steps, x);
    for (long k = 0; k < n; k++)
        x->t += x->dt;
    x->a_valid = 1;
    int bad = 0;
    for (int t = 0; t < x->members; t++)
        bad |= x->share[t].bad;
    return bad ? 2 : 0;
}
