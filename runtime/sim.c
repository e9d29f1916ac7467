/* sim.c — assembles the residual and Jacobian from the generated kernels and solves them
 * with Newton's method: implicit Euler steps and static equilibrium. */
#include "sim.h"
#include "control.h"
#include "clock.h"
#include "alloc.h"
#include "parallel.h"
#include "pairs.h"
#include "eigen.h"
#include <lapacke.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The instances [lo, hi) of a batch, as a batch. */
static srd_elem_batch share_of(const srd_elem_batch *b, int share, int shares)
{
    int lo = (int)((long long)b->n * share / shares), hi = (int)((long long)b->n * (share + 1) / shares);
    srd_elem_batch part = *b;
    part.n = hi - lo;
    part.dofs += (size_t)lo * b->n_dofs;
    part.res += (size_t)lo * b->n_dofs;
    part.jac_pos += (size_t)lo * b->n_dofs * b->n_dofs;
    part.data += (size_t)lo * b->n_data;
    part.state += (size_t)lo * b->n_state;
    return part;
}

void srd_sim_run_kernels(const srd_sim *s, const srd_eval_ctx *ctx, const srd_eval_ctx *ctx_nc, bool with_jacobian,
                         int share, int shares)
{
    for (int k = 0; k < s->m->n_sets; k++) {
        const srd_sim_kernel *sk = &s->kernels[k];
        /* Friction and drag need a velocity: a static solve has none. */
        if (!s->dynamic && sk->info.needs_time_step)
            continue;
        if ((s->kernel_pass == 1 && s->m->sets[k].n_lambda) || (s->kernel_pass == 2 && !s->m->sets[k].n_lambda))
            continue;
        srd_elem_batch part = share_of(&sk->batch.b, share, shares);
        if (part.n > 0)
            (with_jacobian ? sk->fn : sk->gradient)(sk->info.is_force ? ctx_nc : ctx, &part);
    }
}

/* External forces at full strength: gravity on every node's mass, buoyancy-reduced in a
 * medium, and constant point loads. */
static void external_forces(srd_sim *s)
{
    const srd_model *m = s->m;
    for (int i = 0; i < m->n_nodes; i++) {
        double g = 1;
        if (m->medium_density > 0 && m->objects[m->node_object[i]].rho > 0)
            g = 1 - m->medium_density / m->objects[m->node_object[i]].rho;
        for (int c = 0; c < 3; c++)
            if (m->has_gravity)
                s->fext[m->node_dof[i] + c] += m->node_mass[i] * m->gravity[c] * g;
    }
    for (int k = 0; k < m->n_loads; k++)
        for (int c = 0; c < 3; c++)
            s->fext[m->node_dof[m->loads[k].node] + c] += m->loads[k].f[c];
}

/* Scales for the convergence test: the largest external or elastic force at the reference,
 * and the model's size. */
static void characteristic_scales(srd_sim *s)
{
    const srd_model *m = s->m;
    double f = 0;
    for (int d = 0; d < m->n_dofs; d++)
        f = fmax(f, fabs(s->fext[d]));
    for (int d = 0; d < m->n_dofs; d++)
        f = fmax(f, m->dof_mass[d] * 9.81);
    s->force_scale = f > 0 ? f : 1;
    double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    for (int i = 0; i < m->n_nodes; i++)
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], m->x0[3 * i + c]);
            hi[c] = fmax(hi[c], m->x0[3 * i + c]);
        }
    double size = 0;
    for (int c = 0; c < 3; c++)
        size = fmax(size, hi[c] - lo[c]);
    s->length_scale = size > 0 ? size : 1;
}

static int is_damped(const srd_sim *s)
{
    return s->m->damping_alpha > 0 || s->m->damping_beta > 0;
}

/* The buffers sized by the free DOFs, for the current system. */
static void allocate_free_vectors(srd_sim *s)
{
    const srd_system *sys = &s->solver.sys;
    size_t n_free = (size_t)sys->n_free + 1;
    s->res = srd_xcalloc(srd_system_grad_len(sys), sizeof(double));
    s->res_nc = srd_xcalloc(srd_system_grad_len(sys), sizeof(double));
    s->res_nc_start = srd_xcalloc(n_free, sizeof(double));
    s->dq = srd_xcalloc(n_free, sizeof(double));
    if (is_damped(s)) {
        s->damping_x = srd_xcalloc(n_free, sizeof(double));
        s->damping_y = srd_xcalloc(n_free, sizeof(double));
    }
    if (s->m->damping_beta > 0) {
        s->damping_k = srd_xcalloc((size_t)srd_system_storage(sys) + 1, sizeof(double));
        s->damping_kv0 = srd_xcalloc(n_free, sizeof(double));
        s->damping_held = srd_xcalloc(n_free, sizeof(double));
    }
    s->n_lambda_rows = 0;
    s->lambda_rows = srd_xcalloc((size_t)s->n_multipliers + 1, sizeof(int));
    for (int d = 0; s->n_multipliers && d < s->m->n_dofs; d++)
        if (s->m->dof_kind[d] == SRD_DOF_LAMBDA && sys->free_index[d] >= 0)
            s->lambda_rows[s->n_lambda_rows++] = sys->free_index[d];
    s->end_rows = s->n_multipliers ? srd_xcalloc(srd_system_grad_len(sys), sizeof(double)) : NULL;
}

static void free_free_vectors(srd_sim *s)
{
    free(s->res);
    free(s->res_nc);
    free(s->res_nc_start);
    free(s->dq);
    free(s->damping_x);
    free(s->damping_y);
    free(s->damping_k);
    free(s->damping_kv0);
    free(s->damping_held);
    free(s->lambda_rows);
    free(s->end_rows);
}

/* Vectors of n_dofs doubles the sim and its integrators keep (q, v, residuals, scratch). */
enum { SIM_VECTORS_PER_DOF = 24 };

/* The memory of the model's state and Jacobian (in the layout the solver chose), refused with
 * a message above what this process may use: allocating it would end in an out-of-memory
 * kill or exit after a long wait. Element data and kernels are not counted (they are already
 * allocated when this runs). */
static bool memory_suffices(const srd_sim *s, char *err, size_t err_n)
{
    const srd_system *sys = &s->solver.sys;
    double jacobian = srd_solver_bytes(&s->solver);
    if (s->m->damping_beta > 0) /* the saved stiffness for Rayleigh damping */
        jacobian += sizeof(double) * (double)srd_system_storage(sys);
    double need = jacobian + sizeof(double) * SIM_VECTORS_PER_DOF * (double)s->m->n_dofs;
    const char *what;
    double limit = srd_memory_limit(&what);
    if (limit <= 0 || need <= limit)
        return true;
    snprintf(err, err_n, "the model needs about %.3g GB (its %s Jacobian of %d free DOFs takes %.3g GB), more than "
                         "%s (%.3g GB)\nhint: %s",
             need / 1e9, srd_solver_kind_name(s->solver.kind), sys->n_free, jacobian / 1e9, what,
             limit / 1e9,
             sys->layout == SRD_JAC_DENSE ? "try `solver = sparse`, or a coarser model"
             : sys->layout == SRD_JAC_CSC ? "a coarser model"
                                          : "try `solver = sparse`, or a coarser model");
    return false;
}

/* Contact pairs couple any two parts of the model, which a band cannot hold: the automatic
 * choice takes sparse storage where it would take a band, and a band asked for is refused.
 * Dense storage is taken when it is predicted cheaper, and whenever its factorisation is
 * predicted under 1 ms: the sparse prediction is of the pattern without the pairs, and each
 * step in which a new pair appears grows the pattern and repeats the symbolic analysis (measured:
 * rope_coil, 267 free DOFs, dense predicted 0.32 ms against sparse 0.11 ms, ran 11.5 ms per step
 * sparse and 6.3 ms dense; knot, 331, 5.4 and 4.2 ms). */
#define CONTACT_DENSE_BELOW 1e-3 /* s */
static bool plan_solver(srd_sim *s, const srd_model *m, srd_solver_kind solver, int symmetric, char *err, size_t err_n)
{
    if (m->self_contact.present && solver == SRD_SOLVER_BANDED) {
        snprintf(err, err_n, "`solver = banded` cannot hold contact between the model's parts, which couples any two "
                             "nodes\nhint: write `solver = sparse` (or dense, or leave `solver` out)");
        return false;
    }
    srd_solver_plan(&s->solver, m, solver, symmetric);
    if (m->self_contact.present && s->solver.kind == SRD_SOLVER_BANDED) {
        srd_solver_free(&s->solver);
        srd_solver_plan(&s->solver, m, SRD_SOLVER_SPARSE, symmetric);
        if (s->solver.predicted[SRD_SOLVER_DENSE] < s->solver.predicted[SRD_SOLVER_SPARSE] ||
            s->solver.predicted[SRD_SOLVER_DENSE] < CONTACT_DENSE_BELOW) {
            srd_solver_free(&s->solver);
            srd_solver_plan(&s->solver, m, SRD_SOLVER_DENSE, symmetric);
        }
    }
    return true;
}

int srd_sim_init(srd_sim *s, const srd_model *m, const srd_kernel_fn *fns, const srd_kernel_fn *gradients,
                 const srd_kernel_info *infos, srd_solver_kind solver, char *err, size_t err_n)
{
    memset(s, 0, sizeof *s);
    s->m = m;
    int symmetric = 1;
    for (int k = 0; k < m->n_sets; k++) {
        if (!fns[k]) {
            snprintf(err, err_n, "element kind `%s` has no kernel", m->sets[k].kind);
            return -1;
        }
        symmetric &= infos[k].symmetric;
        s->n_multipliers += m->sets[k].n_lambda * m->sets[k].n;
    }
    /* Multipliers make the system indefinite and gyroscopic terms unsymmetric: LU solvers. */
    symmetric &= !s->n_multipliers && !m->n_bodies;
    if (!plan_solver(s, m, solver, symmetric, err, err_n))
        return -1;
    if (!memory_suffices(s, err, err_n))
        return SRD_SIM_NO_MEMORY;
    srd_solver_allocate(&s->solver);
    s->conservative = symmetric;
    s->kernels = srd_xcalloc((size_t)m->n_sets + 1, sizeof *s->kernels);
    for (int k = 0; k < m->n_sets; k++) {
        s->kernels[k].fn = fns[k];
        s->kernels[k].gradient = gradients && gradients[k] ? gradients[k] : fns[k];
        s->kernels[k].info = infos[k];
        if (srd_batch_build(&s->kernels[k].batch, m, k, &infos[k], &s->solver.sys) != 0) {
            snprintf(err, err_n, "element kind `%s` does not match its kernel's stencil", m->sets[k].kind);
            return -1;
        }
    }
    size_t n = (size_t)m->n_dofs;
    s->q = srd_xcalloc(n, sizeof(double));
    s->q0 = srd_xcalloc(n, sizeof(double));
    s->v = srd_xcalloc(n, sizeof(double));
    s->v0 = srd_xcalloc(n, sizeof(double));
    s->trial = srd_xcalloc(n, sizeof(double));
    s->qhat = srd_xcalloc(n, sizeof(double));
    s->a0 = srd_xcalloc(n, sizeof(double));
    s->qeval = srd_xcalloc(n, sizeof(double));
    s->work = srd_xcalloc(n, sizeof(double));
    s->inertia_a = 0;
    s->stiffness_b = 1;
    s->fext = srd_xcalloc(n, sizeof(double));
    allocate_free_vectors(s);
    s->params = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    for (int p = 0; p < m->n_params; p++)
        s->params[p] = m->params[p].value;
    for (int i = 0; i < m->n_nodes; i++)
        for (int c = 0; c < 3; c++)
            s->q[m->node_dof[i] + c] = m->x0[3 * i + c];
    memcpy(s->q0, s->q, n * sizeof(double));
    s->load_factor = 1;
    s->tolerance = 1e-8;
    s->max_iterations = 50;
    s->line_search = 1;
    external_forces(s);
    characteristic_scales(s);
    srd_motion_init(s);
    s->assembler = srd_assembler_new(s, srd_assembly_threads());
    srd_bodies_init(s);
    s->pairs = srd_pairs_new(s);
    return 0;
}

static void apply_schedules(srd_sim *s, double t)
{
    if (s->schedules.n)
        srd_schedules_apply(&s->schedules, s->m, s->params, t, s->step_dt, s->dt, s->set_data, s->fext);
}

void srd_sim_apply_schedules(srd_sim *s, double t) { apply_schedules(s, t); }

void srd_sim_set_schedules(srd_sim *s, int n, const srd_kernel_fn *fns, const int *actuation, const int *expr)
{
    srd_schedules_free(&s->schedules);
    free(s->set_data);
    s->set_data = srd_xcalloc((size_t)s->m->n_sets + 1, sizeof(double *));
    for (int k = 0; k < s->m->n_sets; k++)
        s->set_data[k] = s->kernels[k].batch.data;
    srd_schedules_build(&s->schedules, s->m, n, fns, actuation, expr, s->set_data, s->fext);
    srd_controller_free(s->controller);
    s->controller = srd_controller_new(s->m, n, fns, actuation, expr);
    apply_schedules(s, s->t);
    srd_motion_impose(s, s->t, 1, s->q, s->v);
}

void srd_sim_free(srd_sim *s)
{
    srd_assembler_free(s->assembler);
    srd_motion_free(s);
    srd_schedules_free(&s->schedules);
    srd_controller_free(s->controller);
    free(s->set_data);
    if (s->kernels)
        for (int k = 0; k < s->m->n_sets; k++)
            srd_batch_free(&s->kernels[k].batch);
    free(s->kernels);
    srd_solver_free(&s->solver);
    free(s->q);
    free(s->q0);
    free(s->v);
    free(s->v0);
    free(s->trial);
    free(s->qhat);
    free(s->a0);
    free(s->qeval);
    free(s->work);
    free(s->fext);
    free_free_vectors(s);
    free(s->params);
    free(s->factor_key);
    srd_bodies_free(&s->bodies);
    srd_pairs_free(s->pairs);
    memset(s, 0, sizeof *s);
}

/* Rayleigh damping in an implicit step: adds (alpha M + beta K0) (c1 (q - q0) + c0 v0) to the
 * residual and c1 (alpha M + beta K0) to the Jacobian; returns the matching potential term. K0
 * acts on every DOF's velocity: a held DOF's (prescribed motion) gives the constant damping_held,
 * so a support carrying the model rigidly damps nothing. */
static double add_damping(srd_sim *s, const double *q, int with_jacobian)
{
    const srd_model *m = s->m;
    const srd_system *sys = &s->solver.sys;
    double alpha = m->damping_alpha, beta = m->damping_beta, c1 = s->damping_c1, c0 = s->damping_c0;
    double potential = 0;
    for (int d = 0; d < m->n_dofs; d++) {
        int f = sys->free_index[d];
        if (f < 0)
            continue;
        double w = q[d] - s->q0[d], am = alpha * m->dof_mass[d];
        s->damping_x[f] = w;
        s->res[f] += am * (c1 * w + c0 * s->v0[d]);
        potential += am * (0.5 * c1 * w * w + c0 * s->v0[d] * w);
        if (with_jacobian && am > 0)
            srd_solver_add_diagonal(&s->solver, f, am * c1);
    }
    if (beta > 0) {
        srd_system_multiply(sys, s->damping_k, s->damping_x, s->damping_y);
        for (int f = 0; f < sys->n_free; f++) {
            double held = s->damping_held[f]; /* constant over the step */
            s->res[f] += beta * (c1 * s->damping_y[f] + c0 * s->damping_kv0[f] + held);
            potential += beta * (0.5 * c1 * s->damping_x[f] * s->damping_y[f] +
                                 (c0 * s->damping_kv0[f] + held) * s->damping_x[f]);
        }
        if (with_jacobian)
            srd_solver_add_scaled(&s->solver, s->damping_k, beta * c1);
    }
    return potential;
}

/* A step whose forces act at a point between its start and end (midpoint): the constraint
 * forces lambda grad c act there too (their work over the step is then lambda times the change
 * of c, to third order, which keeps the scheme's energy behaviour), while the constraints
 * themselves, c = 0, hold at the end. Their Jacobian is left unscaled by b: the q-q block is
 * off by that factor and the multiplier rows take grad c at the evaluation point, which costs
 * Newton's method a little of its rate but not the solution. */
static void constraints_at_end(srd_sim *s, const srd_eval_ctx *ctx, const double *q, bool with_jacobian)
{
    s->kernel_pass = 2;
    srd_sim_run_kernels(s, ctx, ctx, with_jacobian, 0, 1);
    double energy = 0;
    memset(s->end_rows, 0, sizeof(double) * srd_system_grad_len(&s->solver.sys));
    srd_eval_ctx end = *ctx;
    end.q = q;
    end.grad = s->end_rows;
    end.jac = NULL;
    end.energy = &energy;
    srd_sim_run_kernels(s, &end, &end, false, 0, 1);
    s->kernel_pass = 0;
    for (int k = 0; k < s->n_lambda_rows; k++)
        s->res[s->lambda_rows[k]] = s->end_rows[s->lambda_rows[k]];
}

/* Residual at configuration q (free DOFs), and the Jacobian when `with_jacobian`:
 *   static:  grad E(q) - lambda fext
 *   dynamic: a M (q - qhat) + grad E(b q + (1 - b) q0) - fext, Jacobian a M + b K
 * Returns the incremental potential whose gradient that residual is (meaningful when every
 * element is an energy): E(q_b) / b - lambda fext.q (+ a/2 |q - qhat|_M^2). */
static double assemble(srd_sim *s, const double *q, int with_jacobian)
{
    const srd_model *m = s->m;
    const srd_system *sys = &s->solver.sys;
    memset(s->res, 0, sizeof(double) * srd_system_grad_len(sys));
    if (with_jacobian)
        srd_solver_zero(&s->solver);
    double b = s->dynamic ? s->stiffness_b : 1;
    const double *qe = q;
    if (b != 1) {
        for (int d = 0; d < m->n_dofs; d++) /* a multiplier is the step's, never averaged */
            s->qeval[d] = m->dof_kind[d] == SRD_DOF_LAMBDA ? q[d] : b * q[d] + (1 - b) * s->q0[d];
        qe = s->qeval;
    }
    double energy = 0;
    srd_eval_ctx ctx = { qe, s->q0, s->v0, s->params, s->t, s->dt, &energy, s->res,
                         with_jacobian ? s->solver.jac : NULL };
    /* Forces (non-conservative elements) add into res_nc first: the line search needs their
     * share of the residual on its own. Models of energies only have none. */
    srd_eval_ctx ctx_nc = ctx;
    ctx_nc.grad = s->res_nc;
    if (!s->conservative)
        memset(s->res_nc, 0, sizeof(double) * srd_system_grad_len(sys));
    double t0 = srd_seconds();
    /* Constraints hold at the step's end, not at the evaluation point of the forces. */
    bool split = b != 1 && s->n_multipliers;
    s->kernel_pass = split ? 1 : 0;
    if (s->assembler)
        srd_assembler_run(s->assembler, s, &ctx, &ctx_nc, with_jacobian);
    else
        srd_sim_run_kernels(s, &ctx, &ctx_nc, with_jacobian, 0, 1);
    if (with_jacobian && b != 1)
        srd_solver_scale(&s->solver, b);
    if (split)
        constraints_at_end(s, &ctx, q, with_jacobian);
    if (!s->conservative)
        for (int f = 0; f < sys->n_free; f++)
            s->res[f] += s->res_nc[f];
    s->time_assembly += srd_seconds() - t0;
    double a = s->dynamic ? s->inertia_a : 0;
    double potential = energy / b;
    for (int d = 0; d < m->n_dofs; d++) {
        int f = sys->free_index[d];
        if (f < 0)
            continue;
        double r = -s->load_factor * s->fext[d];
        potential -= s->load_factor * s->fext[d] * q[d];
        if (a > 0) {
            double u = q[d] - s->qhat[d];
            r += a * m->dof_mass[d] * u;
            potential += 0.5 * a * m->dof_mass[d] * u * u;
        }
        s->res[f] += r;
        if (with_jacobian && a > 0)
            srd_solver_add_diagonal(&s->solver, f, a * m->dof_mass[d]);
    }
    if (a > 0 && is_damped(s))
        potential += add_damping(s, q, with_jacobian);
    if (a > 0 && s->bodies.n)
        srd_bodies_inertia(s, q, with_jacobian, s->method);
    return potential;
}

/* assemble for Newton's method: sliding nodes' rows in their lines' basis (slide.c). */
static double assemble_reduced(srd_sim *s, const double *q, int with_jacobian)
{
    double potential = assemble(s, q, with_jacobian);
    srd_slides_reduce(s, with_jacobian);
    return potential;
}

static double residual_norm(const srd_sim *s)
{
    double r = 0;
    for (int f = 0; f < s->solver.sys.n_free; f++) {
        if (!isfinite(s->res[f]))
            return INFINITY;
        r = fmax(r, fabs(s->res[f]));
    }
    return r;
}

/* Every constraint (a joint's, a motor's) holds to SRD_CONSTRAINT_TOLERANCE: its rows of the
 * residual are the constraint values themselves. */
static bool constraints_met(const srd_sim *s)
{
    for (int k = 0; k < s->n_lambda_rows; k++)
        if (!(fabs(s->res[s->lambda_rows[k]]) <= SRD_CONSTRAINT_TOLERANCE))
            return false;
    return true;
}

/* q + alpha dq over the free DOFs (fixed DOFs keep their values). */
static void advance(const srd_sim *s, const double *q, double alpha, double *out)
{
    const srd_model *m = s->m;
    for (int d = 0; d < m->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        out[d] = f >= 0 ? q[d] + alpha * s->dq[f] : q[d];
    }
}

static double squared_norm(const double *v, int n)
{
    double r = 0;
    for (int i = 0; i < n; i++)
        r += v[i] * v[i];
    return r;
}

/* Backtracking line search along dq (Armijo) on the incremental potential, whose decrease a
 * Newton step through stiff axial terms keeps (|r|^2 would reject it). In a static solve,
 * non-conservative forces (follower loads, user forces) enter with their values at the start
 * of the search, frozen: the merit pi(q) + r_nc(q_k).(q - q_k) has the full residual as its
 * gradient at q_k, so the Newton direction descends it. Time steps with such forces (friction,
 * drag, which turn too fast for a frozen merit) use |r|^2. Returns the accepted step length;
 * *res_at_step says whether s->res is the residual there. The full step is usually taken:
 * when the next iteration will need the Jacobian there (want_jac), the first trial assembles
 * it too, and *jac_at_step says whether that trial was accepted (its potential is in
 * *pi_at_step). */
static double line_search(srd_sim *s, double pi0, double slope, double r2, bool want_jac, bool *res_at_step,
                          bool *jac_at_step, double *pi_at_step)
{
    int n = s->solver.sys.n_free;
    memcpy(s->res_nc_start, s->res_nc, sizeof(double) * (size_t)n);
    double alpha = 1;
    for (int cut = 0; cut < 12; cut++) {
        advance(s, s->q, alpha, s->trial);
        double pi1 = assemble_reduced(s, s->trial, want_jac && cut == 0);
        *pi_at_step = pi1;
        if (!s->conservative)
            for (int f = 0; f < n; f++)
                pi1 += s->res_nc_start[f] * alpha * s->dq[f];
        bool ok = (s->conservative || !s->dynamic) && !s->n_multipliers && !s->bodies.n
                      ? isfinite(pi1) && pi1 <= pi0 + 1e-4 * alpha * slope
                      : squared_norm(s->res, n) <= (1 - 1e-4 * alpha) * r2;
        /* Close to the solution the decrease the step promises is below the rounding error of
         * the potential itself, and the test above rejects good steps at random; there the
         * residual decides. */
        if (!ok && isfinite(pi1) && -alpha * slope <= 1e-12 * fabs(pi0))
            ok = squared_norm(s->res, n) < r2;
        if (ok && residual_norm(s) < INFINITY) {
            *res_at_step = true;
            *jac_at_step = want_jac && cut == 0;
            return alpha;
        }
        alpha *= 0.5;
        s->last.line_search_cuts++;
    }
    return alpha;
}

/* The history ends with the iterate whose residual s->res holds, so that a failure report
 * lists the largest residuals of the last norm it prints. */
static void record_residual(srd_newton_stats *st, double r)
{
    int n = (int)(sizeof st->history / sizeof st->history[0]);
    st->history[st->n_history < n ? st->n_history : n - 1] = r;
    st->n_history++;
}

int srd_newton(srd_sim *s)
{
    int n = s->solver.sys.n_free;
    srd_newton_stats *st = &s->last;
    memset(st, 0, sizeof *st);
    /* The line search leaves the residual of the point it accepts, and the Jacobian when that
     * is the full step: the next iteration tests convergence on it and assembles only what it
     * lacks for another step. */
    bool have_res = false, have_jac = false;
    double pi_q = 0, r_prev = 0;
    srd_slides_place(s, s->q, NULL);
    for (int it = 0; it < s->max_iterations; it++) {
        double pi0 = have_res ? pi_q : assemble_reduced(s, s->q, 1);
        double r = residual_norm(s);
        st->residual = r;
        record_residual(st, r);
        if (s->log)
            fprintf(s->log, "    t = %.6g s, iteration %d: |residual| = %.6e N\n", s->t, it, r);
        if (!isfinite(r))
            return 2;
        if (r <= s->tolerance * s->force_scale && constraints_met(s))
            return 0;
        if (have_res && !have_jac)
            pi0 = assemble_reduced(s, s->q, 1);
        have_res = have_jac = false;
        double r2 = squared_norm(s->res, n), slope = 0;
        for (int f = 0; f < n; f++)
            s->dq[f] = -s->res[f];
        double ts = srd_seconds();
        int singular = srd_solver_solve(&s->solver, s->dq);
        s->time_solve += srd_seconds() - ts;
        if (singular) {
            st->singular = 1;
            return 1;
        }
        double full = 0;
        for (int f = 0; f < n; f++) {
            slope += s->res[f] * s->dq[f];
            full = fmax(full, fabs(s->dq[f]));
        }
        if (!isfinite(full))
            return 2;
        srd_slides_expand(s, s->dq);
        /* A Newton update below the tolerance in length: the solution is found to that
         * precision, and stiff rods reach rounding error in force before the force test
         * can pass. Take it without a line search (which cannot see decreases that small). */
        if (full <= s->tolerance * s->length_scale) {
            advance(s, s->q, 1, s->trial);
            memcpy(s->q, s->trial, sizeof(double) * (size_t)s->m->n_dofs);
            st->iterations = it + 1;
            s->total_iterations++;
            assemble_reduced(s, s->q, 0);
            st->residual = residual_norm(s);
            record_residual(st, st->residual);
            if (isfinite(st->residual) && !constraints_met(s))
                continue; /* the next iteration's Newton step closes them */
            return isfinite(st->residual) ? 0 : 2;
        }
        /* Quadratic convergence predicts the next residual as r^2 / r_prev: only when that
         * misses the tolerance is another iteration, and its Jacobian, likely. */
        bool want_jac = it == 0 || r * r > s->tolerance * s->force_scale * r_prev;
        r_prev = r;
        double alpha = s->line_search && slope < 0
                           ? line_search(s, pi0, slope, r2, want_jac, &have_res, &have_jac, &pi_q)
                           : 1;
        advance(s, s->q, alpha, s->trial);
        memcpy(s->q, s->trial, sizeof(double) * (size_t)s->m->n_dofs);
        st->iterations = it + 1;
        s->total_iterations++;
    }
    assemble_reduced(s, s->q, 0);
    st->residual = residual_norm(s);
    record_residual(st, st->residual);
    return st->residual <= s->tolerance * s->force_scale ? 0 : 1;
}

int srd_method_from_name(const char *name)
{
    static const char *names[] = { "implicit_euler", "implicit_midpoint", "newmark", "euler", "verlet", "rk4" };
    for (int i = 0; i < 6; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

/* Internal force minus external: the residual of the static problem, into s->res (and the
 * stiffness into the solver's Jacobian when asked). */
static void net_force_residual(srd_sim *s, const double *q, int with_jacobian)
{
    int dynamic = s->dynamic;
    s->dynamic = 0;
    assemble(s, q, with_jacobian);
    s->dynamic = dynamic;
}

/* out (n_free) = K(q) u over the held DOFs' velocity u (vel, n_dofs: read on held DOFs only):
 * the free rows of the damping their prescribed motion gives; zero when nothing held moves (the
 * usual clamp: no Hessian is evaluated then). */
static void held_damping(srd_sim *s, const double *q, const double *vel, double *out)
{
    const srd_model *m = s->m;
    const srd_system *sys = &s->solver.sys;
    double *u = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    bool moving = false;
    memset(out, 0, sizeof(double) * (size_t)sys->n_free);
    for (int d = 0; d < m->n_dofs; d++)
        if (sys->free_index[d] < 0 && m->dof_kind[d] != SRD_DOF_LAMBDA) {
            u[d] = vel[d];
            moving |= u[d] != 0;
        }
    if (moving) {
        double *y = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
        srd_sim_stiffness_times(s, q, u, y);
        for (int d = 0; d < m->n_dofs; d++) {
            int f = sys->free_index[d];
            if (f >= 0)
                out[f] = m->dof_kind[d] == SRD_DOF_LAMBDA ? 0 : y[d];
        }
        free(y);
    }
    free(u);
}

/* The step's velocity of the held DOFs, c1 (q - q0) + c0 v0 (prescribed motion has put q at the
 * step's end), into held_damping. */
static void held_step_damping(srd_sim *s)
{
    size_t n = (size_t)s->m->n_dofs;
    double *vel = srd_xcalloc(n + 1, sizeof(double));
    for (size_t d = 0; d < n; d++)
        vel[d] = s->damping_c1 * (s->q[d] - s->q0[d]) + s->damping_c0 * s->v0[d];
    held_damping(s, s->q0, vel, s->damping_held);
    free(vel);
}

/* Under an explicit method, adds friction's and drag's forces at configuration q and velocity v
 * into s->res: their kernels read the velocity as (q - q0) / dt, so they are given q0 = q - dt v
 * (and v0 = v), as the fast path does (explicit.c). Their own state, had they any, would be the
 * step start's: srd_report_unsupported_method refuses such sets under explicit methods. */
static void add_velocity_forces(srd_sim *s, double t, const double *q, const double *v)
{
    if (s->method < SRD_SYMPLECTIC_EULER)
        return;
    int n = s->m->n_dofs;
    double *before = NULL;
    for (int k = 0; k < s->m->n_sets; k++) {
        const srd_sim_kernel *sk = &s->kernels[k];
        if (!sk->info.needs_time_step || !sk->batch.b.n)
            continue;
        if (!before) {
            before = srd_xcalloc((size_t)n + 1, sizeof(double));
            for (int d = 0; d < n; d++)
                before[d] = q[d] - s->dt * v[d];
        }
        srd_eval_ctx ctx = { q, before, v, s->params, t, s->dt, NULL, s->res, NULL };
        sk->gradient(&ctx, &sk->batch.b);
    }
    free(before);
}

/* acc = M^-1 (fext - grad E(q) - (alpha M + beta K(q)) v) on free DOFs (massless DOFs cannot be
 * integrated explicitly), with friction and drag at velocity v under explicit methods. */
int srd_sim_acceleration(srd_sim *s, double t, const double *q, const double *v, double *acc)
{
    const srd_model *m = s->m;
    const srd_system *sys = &s->solver.sys;
    double alpha = m->damping_alpha, beta = m->damping_beta;
    apply_schedules(s, t);
    net_force_residual(s, q, beta > 0);
    add_velocity_forces(s, t, q, v);
    if (is_damped(s)) {
        for (int d = 0; d < m->n_dofs; d++)
            if (sys->free_index[d] >= 0)
                s->damping_x[sys->free_index[d]] = v[d];
        if (beta > 0) {
            srd_solver_multiply(&s->solver, s->damping_x, s->damping_y);
            held_damping(s, q, v, s->damping_held);
        }
        for (int d = 0; d < m->n_dofs; d++) {
            int f = sys->free_index[d];
            if (f >= 0)
                s->res[f] += alpha * m->dof_mass[d] * v[d] + (beta > 0 ? beta * (s->damping_y[f] + s->damping_held[f]) : 0);
        }
    }
    for (int d = 0; d < m->n_dofs; d++) {
        int f = sys->free_index[d];
        acc[d] = f >= 0 && m->dof_mass[d] > 0 ? -s->res[f] / m->dof_mass[d] : 0;
        if (!isfinite(acc[d]))
            return 2;
    }
    /* A body's torque in its axes: at theta = 0 the rotation rows are minus the torque. */
    for (int k = 0; k < m->n_bodies; k++)
        for (int c = 0; c < 3; c++) {
            int f = sys->free_index[m->node_dof[m->bodies[k].node] + 3 + c];
            s->bodies.torque[3 * k + c] = f >= 0 ? -s->res[f] : 0;
        }
    srd_slides_along(s, acc);
    return 0;
}

/* Sets the implicit scheme's constants and prediction for a step from (q0, v0, a0). */
static void prepare_implicit(srd_sim *s, srd_method method)
{
    const srd_model *m = s->m;
    double dt = s->dt;
    s->inertia_a = method == SRD_IMPLICIT_EULER ? 1 / (dt * dt) : method == SRD_IMPLICIT_MIDPOINT ? 2 / (dt * dt)
                                                                                                   : 4 / (dt * dt);
    s->stiffness_b = method == SRD_IMPLICIT_MIDPOINT ? 0.5 : 1;
    for (int d = 0; d < m->n_dofs; d++) {
        s->qhat[d] = s->q0[d] + dt * s->v0[d];
        if (method == SRD_NEWMARK)
            s->qhat[d] += 0.25 * dt * dt * s->a0[d];
    }
}

void srd_scheme_rates(srd_method method, double dt, double dq, double v0, double a0, double *v1, double *a1)
{
    *a1 = a0;
    if (method == SRD_IMPLICIT_EULER)
        *v1 = dq / dt;
    else if (method == SRD_IMPLICIT_MIDPOINT)
        *v1 = 2 * dq / dt - v0;
    else { /* Newmark, average acceleration: q1 = q0 + dt v0 + dt^2/4 (a0 + a1) */
        *a1 = 4 * (dq - dt * v0) / (dt * dt) - a0;
        *v1 = v0 + 0.5 * dt * (a0 + *a1);
    }
}

static void finish_implicit(srd_sim *s, srd_method method)
{
    for (int d = 0; d < s->m->n_dofs; d++)
        srd_scheme_rates(method, s->dt, s->q[d] - s->q0[d], s->v0[d], s->a0[d], &s->v[d], &s->a0[d]);
}

/* Rayleigh damping's stiffness is that of the body: the multipliers' rows and columns (the
 * constraints themselves) take no part, or the damping would move where the constraints hold. */
static void drop_multiplier_couplings(const srd_sim *s, double *k)
{
    const srd_system *sys = &s->solver.sys;
    for (int r = 0; r < s->n_lambda_rows; r++) {
        int f = s->lambda_rows[r];
        for (int g = 0; g < sys->n_free; g++) {
            long long a = srd_system_position(sys, f, g), b = srd_system_position(sys, g, f);
            if (a >= 0)
                k[a] = 0;
            if (b >= 0)
                k[b] = 0;
        }
    }
}

void srd_damping_constants(srd_method method, double dt, double *c1, double *c0)
{
    *c1 = (method == SRD_NEWMARK ? 2 : 1) / dt;
    *c0 = method == SRD_NEWMARK ? -1 : 0;
}

/* Rayleigh damping's step constants (srd_damping_constants) and the stiffness at the step start. */
static void prepare_damping(srd_sim *s, srd_method method)
{
    srd_damping_constants(method, s->dt, &s->damping_c1, &s->damping_c0);
    if (s->m->damping_beta <= 0)
        return;
    const srd_system *sys = &s->solver.sys;
    net_force_residual(s, s->q0, 1);
    memcpy(s->damping_k, s->solver.jac, sizeof(double) * (size_t)srd_system_storage(sys));
    drop_multiplier_couplings(s, s->damping_k);
    for (int d = 0; d < s->m->n_dofs; d++)
        if (sys->free_index[d] >= 0)
            s->damping_x[sys->free_index[d]] = s->v0[d];
    srd_system_multiply(sys, s->damping_k, s->damping_x, s->damping_kv0);
    held_step_damping(s);
}

/* The elements' step-start state (frames, reference twist, tau0) carried from q0 to q. */
static void advance_state(srd_sim *s)
{
    for (int k = 0; k < s->m->n_sets; k++)
        srd_batch_advance_state(&s->kernels[k].batch, s->m, k, &s->kernels[k].info, s->q0, s->q);
    s->state_behind = 0;
}

/* Before a step: the state the last step left at its start is carried to its end, where this
 * step starts. */
static void catch_up_state(srd_sim *s)
{
    if (s->state_behind)
        advance_state(s);
}

/* After an accepted step: the state stays at its start until the next step (state_behind). */
static void end_step(srd_sim *s)
{
    srd_motion_commit(s, s->q);
    s->state_behind = 1;
    s->last_dt = s->dt;
}

/* After an implicit step: the driven DOFs' velocities and (Newmark) accelerations are the
 * motion's own, not the scheme's difference quotients. */
static void exact_prescribed_rates(srd_sim *s, srd_method method)
{
    if (!s->m->n_motions)
        return;
    srd_motion_impose(s, s->t, 1, s->q, s->v);
    if (method == SRD_NEWMARK)
        for (int i = 0; i < s->m->n_motions; i++)
            for (int k = 0; k < s->m->motions[i].n_nodes; k++) {
                int d = s->m->node_dof[s->m->motions[i].nodes[k]];
                for (int c = 0; c < 3; c++)
                    if (s->fixed[d + c])
                        s->a0[d + c] = s->prescribed_acc[d + c];
            }
}

/* Newton's method with the contact pairs found at q_start (the step's start): when a node moved
 * farther than the pairs' margin covers, they are found again with a margin that covers the
 * motion and the solve starts again from its first guess (three times at most); parts that would
 * pass through each other fail the solve (SRD_STEP_CROSSED), which the caller subdivides. */
static int newton_with_pairs(srd_sim *s, const double *q_start, double dt)
{
    if (!s->pairs)
        return srd_newton(s);
    srd_pairs_begin(s, q_start, dt);
    for (int attempt = 0;; attempt++) {
        int code = srd_newton(s);
        if (code != 0)
            return code;
        int verdict = srd_pairs_check(s, s->q);
        if (verdict == SRD_PAIRS_OK)
            return 0;
        if (verdict == SRD_PAIRS_CROSSED || attempt == 3)
            return SRD_STEP_CROSSED;
        srd_pairs_retry(s, dt);
    }
}

static void hook(srd_sim *s, int phase)
{
    if (s->substep_hook)
        s->substep_hook(s, phase, s->substep_ctx);
}

/* One implicit substep from the current state over s->dt. */
static int implicit_substep(srd_sim *s, srd_method method)
{
    const srd_model *m = s->m;
    size_t bytes = sizeof(double) * (size_t)m->n_dofs;
    catch_up_state(s);
    memcpy(s->q0, s->q, bytes);
    memcpy(s->v0, s->v, bytes);
    memcpy(s->work, s->a0, bytes);
    s->method = method;
    hook(s, SRD_SUBSTEP_BEGIN);
    s->t += s->dt;
    apply_schedules(s, s->t);
    srd_motion_impose(s, s->t, 1, s->q, NULL);
    prepare_implicit(s, method);
    if (is_damped(s))
        prepare_damping(s, method);
    /* Newton starts from the constant-velocity guess, not from Newmark's predictor: after an
     * impact the average-acceleration scheme carries an acceleration that oscillates from step
     * to step undamped, and its dt^2/4 a0 term can put the first iterate so far off that
     * Newton's method fails (the star roller at dt = 2.5 ms did, with first residuals of
     * 1e7 to 1e9 N). */
    for (int d = 0; d < m->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            s->q[d] = s->q0[d] + s->dt * s->v0[d];
    int code = newton_with_pairs(s, s->q0, s->dt);
    if (code != 0) {
        memcpy(s->q, s->q0, bytes);
        memcpy(s->v, s->v0, bytes);
        memcpy(s->a0, s->work, bytes);
        s->t -= s->dt;
        hook(s, SRD_SUBSTEP_FAILED);
        return code;
    }
    finish_implicit(s, method);
    exact_prescribed_rates(s, method);
    end_step(s);
    srd_bodies_finish(s, method);
    hook(s, SRD_SUBSTEP_DONE);
    return 0;
}

/* Which entries of the Jacobian the constraint sets write, by kind: 1 a constraint's row (c at the
 * step's end), 2 a force row's multiplier column, 3 a force row's configuration column (0: none,
 * or a scratch slot). */
static unsigned char *constraint_entries(const srd_sim *s)
{
    long long storage = srd_system_storage(&s->solver.sys);
    unsigned char *kind = srd_xcalloc((size_t)storage + 1, 1);
    for (int k = 0; k < s->m->n_sets; k++) {
        const srd_elem_batch *b = &s->kernels[k].batch.b;
        int nd = b->n_dofs;
        for (long long i = 0; s->m->sets[k].n_lambda && i < b->n; i++)
            for (int r = 0; r < nd; r++)
                for (int c = 0; c < nd; c++) {
                    long long pos = b->jac_pos[(i * nd + r) * nd + c];
                    bool row = s->m->dof_kind[b->dofs[i * nd + r]] == SRD_DOF_LAMBDA;
                    bool col = s->m->dof_kind[b->dofs[i * nd + c]] == SRD_DOF_LAMBDA;
                    if (pos < storage)
                        kind[pos] = row ? 1 : col ? 2 : 3;
                }
    }
    return kind;
}

/* The constraint sets' Jacobian at configuration q into jac (zeroed first). */
static void constraint_jacobian(srd_sim *s, const double *q, double *jac, double *grad)
{
    double energy = 0;
    memset(jac, 0, sizeof(double) * srd_system_jac_len(&s->solver.sys));
    srd_eval_ctx ctx = { q, s->q0, s->v0, s->params, s->t, s->dt, &energy, grad, jac };
    s->kernel_pass = 2;
    srd_sim_run_kernels(s, &ctx, &ctx, true, 0, 1);
    s->kernel_pass = 0;
}

/* A split step's exact Jacobian (assemble's takes the constraint sets' at the evaluation point,
 * unscaled: constraints_at_end): their force rows' configuration columns scaled by b, their
 * multiplier columns as they are, and the constraints' rows at the step's end. */
static void exact_split_jacobian(srd_sim *s)
{
    size_t n = srd_system_jac_len(&s->solver.sys);
    double *at_eval = srd_xcalloc(n, sizeof(double)), *at_end = srd_xcalloc(n, sizeof(double));
    double *grad = srd_xcalloc(srd_system_grad_len(&s->solver.sys), sizeof(double));
    constraint_jacobian(s, s->qeval, at_eval, grad);
    constraint_jacobian(s, s->q, at_end, grad);
    unsigned char *kind = constraint_entries(s);
    double b = s->stiffness_b;
    for (long long pos = 0; pos < srd_system_storage(&s->solver.sys); pos++)
        if (kind[pos])
            s->solver.jac[pos] += (kind[pos] == 1 ? at_end[pos] : kind[pos] == 2 ? at_eval[pos] : b * at_eval[pos]) -
                                  at_eval[pos];
    free(at_eval), free(at_end), free(grad), free(kind);
}

void srd_sim_step_jacobian(srd_sim *s, srd_method method)
{
    s->method = method;
    s->dynamic = 1;
    apply_schedules(s, s->t);
    prepare_implicit(s, method);
    if (is_damped(s))
        prepare_damping(s, method);
    assemble(s, s->q, 1);
    if (s->stiffness_b != 1 && s->n_multipliers)
        exact_split_jacobian(s);
}

static int explicit_step(srd_sim *s, srd_method method)
{
    const srd_model *m = s->m;
    int n = m->n_dofs;
    double dt = s->dt;
    size_t bytes = sizeof(double) * (size_t)n;
    catch_up_state(s);
    memcpy(s->q0, s->q, bytes);
    memcpy(s->v0, s->v, bytes);
    hook(s, SRD_SUBSTEP_BEGIN);
    double *acc = s->work;
    int code = 0;
    if (method == SRD_SYMPLECTIC_EULER) {
        code = srd_sim_acceleration(s, s->t, s->q, s->v, acc);
        srd_bodies_kick(s, s->bodies.torque, dt);
        for (int d = 0; d < n; d++) {
            s->v[d] += dt * acc[d];
            s->q[d] += dt * s->v[d];
        }
        srd_bodies_drift(s, dt);
        srd_motion_impose(s, s->t + dt, 1, s->q, s->v);
    } else if (method == SRD_VERLET) {
        code = srd_sim_acceleration(s, s->t, s->q, s->v, acc);
        srd_bodies_kick(s, s->bodies.torque, 0.5 * dt);
        for (int d = 0; d < n; d++) {
            s->v[d] += 0.5 * dt * acc[d];
            s->q[d] += dt * s->v[d];
        }
        srd_bodies_drift(s, dt);
        srd_motion_impose(s, s->t + dt, 1, s->q, s->v);
        code |= srd_sim_acceleration(s, s->t + dt, s->q, s->v, acc);
        srd_bodies_kick(s, s->bodies.torque, 0.5 * dt);
        for (int d = 0; d < n; d++)
            s->v[d] += 0.5 * dt * acc[d];
    } else {
        /* classical fourth-order Runge-Kutta on (q, v) */
        double *kq = srd_xcalloc((size_t)n * 4, sizeof(double)), *kv = srd_xcalloc((size_t)n * 4, sizeof(double));
        double *qs = srd_xcalloc((size_t)n, sizeof(double));
        static const double c[4] = { 0, 0.5, 0.5, 1 };
        for (int st = 0; st < 4 && !code; st++) {
            for (int d = 0; d < n; d++)
                qs[d] = s->q0[d] + (st ? c[st] * dt * kq[(st - 1) * n + d] : 0);
            for (int d = 0; d < n; d++)
                kq[st * n + d] = s->v0[d] + (st ? c[st] * dt * kv[(st - 1) * n + d] : 0);
            srd_motion_impose(s, s->t + c[st] * dt, 1, qs, &kq[st * n]); /* the stage's driven DOFs */
            code = srd_sim_acceleration(s, s->t + c[st] * dt, qs, &kq[st * n], &kv[st * n]);
            srd_bodies_rk4_stage(s, qs, &kq[st * n], &kv[st * n]);
        }
        for (int d = 0; d < n; d++) {
            s->q[d] = s->q0[d] + dt / 6 * (kq[d] + 2 * kq[n + d] + 2 * kq[2 * n + d] + kq[3 * n + d]);
            s->v[d] = s->v0[d] + dt / 6 * (kv[d] + 2 * kv[n + d] + 2 * kv[2 * n + d] + kv[3 * n + d]);
        }
        free(kq);
        free(kv);
        free(qs);
        srd_bodies_rk4_finish(s);
        srd_motion_impose(s, s->t + dt, 1, s->q, s->v);
    }
    s->t += dt;
    s->steps++;
    for (int d = 0; d < n && !code; d++)
        if (!isfinite(s->q[d]) || !isfinite(s->v[d]))
            code = 2;
    if (!code)
        end_step(s);
    hook(s, code ? SRD_SUBSTEP_FAILED : SRD_SUBSTEP_DONE);
    return code;
}

/* The constrained DOFs as the release flags leave them: the model's, less every released region's. */
static void fixed_from_released(srd_sim *s)
{
    const srd_model *m = s->m;
    memcpy(s->fixed, m->dof_fixed, (size_t)m->n_dofs);
    for (int k = 0; k < m->n_releases; k++)
        for (int i = 0; s->released[k] && i < m->releases[k].n_dofs; i++)
            s->fixed[m->releases[k].dofs[i]] = 0;
}

/* The Newton system for the constrained DOFs s->fixed now holds: the solver, the element batches'
 * maps and the assembly buffers are rebuilt; state and data stay. */
static void plan_free_set(srd_sim *s)
{
    const srd_model *m = s->m;
    srd_solver_kind kind = s->solver.kind;
    int symmetric = s->solver.symmetric;
    srd_assembler_free(s->assembler);
    srd_solver_free(&s->solver);
    srd_solver_plan_fixed(&s->solver, m, s->fixed, kind, symmetric);
    srd_solver_allocate(&s->solver);
    for (int j = 0; j < m->n_sets; j++)
        srd_batch_remap(&s->kernels[j].batch, &s->solver.sys);
    srd_pairs_forget_couplings(s->pairs); /* the pattern is new: the next step adds them again */
    free_free_vectors(s);
    allocate_free_vectors(s);
    s->assembler = srd_assembler_new(s, srd_assembly_threads());
}

void srd_sim_release(srd_sim *s, int k)
{
    s->released[k] = 1;
    fixed_from_released(s);
    plan_free_set(s);
}

void srd_sim_set_released(srd_sim *s, const unsigned char *released)
{
    size_t n = (size_t)s->m->n_releases;
    bool same = true;
    for (size_t k = 0; k < n; k++)
        same &= s->released[k] == (released ? released[k] : 0);
    if (same)
        return;
    for (size_t k = 0; k < n; k++)
        s->released[k] = released ? released[k] : 0;
    fixed_from_released(s);
    plan_free_set(s);
}

long long srd_sim_add_couplings(srd_sim *s, int n_pairs, const int *pairs)
{
    long long added = srd_solver_add_couplings(&s->solver, n_pairs, pairs);
    if (added <= 0)
        return added;
    for (int k = 0; k < s->m->n_sets; k++)
        srd_batch_remap(&s->kernels[k].batch, &s->solver.sys);
    /* The assembler's per-thread Jacobians and the saved stiffness have the storage's size. */
    srd_assembler_free(s->assembler);
    free_free_vectors(s);
    allocate_free_vectors(s);
    s->assembler = srd_assembler_new(s, srd_assembly_threads());
    return added;
}

/* Releases whose time has come: the step that starts at or after their time runs free. */
static void release_due(srd_sim *s)
{
    for (int k = 0; k < s->m->n_releases; k++)
        if (!s->released[k] && s->t >= s->m->releases[k].time - 1e-6 * s->dt)
            srd_sim_release(s, k);
}

int srd_step(srd_sim *s, srd_method method, int max_halvings)
{
    srd_controller_sample(s); /* before the step that starts at a sample: its inputs hold through it */
    s->dynamic = 1; /* reactions include inertia from here on, whatever the method */
    s->method = method; /* the forces read after the step take its damping (srd_sim_damping_forces) */
    release_due(s);
    if (method >= SRD_SYMPLECTIC_EULER)
        return explicit_step(s, method);
    if (method == SRD_NEWMARK && s->steps == 0 && s->t == 0)
        srd_sim_acceleration(s, s->t, s->q, s->v, s->a0); /* the initial acceleration from the initial state */
    double dt = s->dt, t_end = s->t + dt;
    int code = implicit_substep(s, method);
    /* Retry what is left of the step in 2, 4, 8, ... substeps. The substeps that succeeded
     * before a failure stand (a failed one restores its own start), so only the rest of the
     * interval is divided again, and the step ends at t + dt. */
    for (int h = 1; code != 0 && h <= max_halvings; h++) {
        s->rejected++;
        int parts = 1 << h;
        s->dt = (t_end - s->t) / parts;
        code = 0;
        for (int k = 0; k < parts && code == 0; k++)
            code = implicit_substep(s, method);
    }
    s->dt = dt;
    s->steps++;
    return code;
}

void srd_sim_start_here(srd_sim *s)
{
    size_t bytes = sizeof(double) * (size_t)s->m->n_dofs;
    advance_state(s); /* from q0, the reference, to q */
    srd_motion_commit(s, s->q);
    srd_bodies_finish(s, -1);
    memset(s->bodies.momentum, 0, sizeof(double) * 3 * (size_t)s->bodies.n);
    memset(s->bodies.torque, 0, sizeof(double) * 3 * (size_t)s->bodies.n);
    memcpy(s->q0, s->q, bytes);
    memset(s->v, 0, bytes);
    memset(s->v0, 0, bytes);
    memset(s->a0, 0, bytes);
    s->t = 0;
    s->steps = 0; /* Newmark then computes the initial acceleration, about zero here */
    s->load_factor = 1;
}

void srd_start_state_save(const srd_sim *s, srd_start_state *out)
{
    size_t n = (size_t)s->m->n_dofs, nb = 9 * (size_t)s->bodies.n;
    out->q = srd_xcalloc(n + 1, sizeof(double));
    out->axes = srd_xcalloc(nb + 1, sizeof(double));
    memcpy(out->q, s->q, n * sizeof(double));
    memcpy(out->axes, s->bodies.axes, nb * sizeof(double));
}

void srd_start_state_free(srd_start_state *st)
{
    free(st->q), free(st->axes);
    st->q = st->axes = NULL;
}

void srd_sim_start_at(srd_sim *s, const srd_start_state *st)
{
    memcpy(s->q, st->q, sizeof(double) * (size_t)s->m->n_dofs);
    memcpy(s->bodies.axes, st->axes, 9 * sizeof(double) * (size_t)s->bodies.n);
    srd_sim_start_here(s); /* which gives the elements the axes (srd_bodies_finish) */
}

void srd_sim_stiffness(srd_sim *s)
{
    net_force_residual(s, s->q, 1);
}

/* Writes the state the stiffness depends on (q, params, time, load factor) into key. */
static size_t factor_key_of(const srd_sim *s, double *key)
{
    size_t nd = (size_t)s->m->n_dofs, np = (size_t)s->m->n_params;
    if (key) {
        memcpy(key, s->q, sizeof(double) * nd);
        memcpy(key + nd, s->params, sizeof(double) * np);
        key[nd + np] = s->t;
        key[nd + np + 1] = s->load_factor;
    }
    return nd + np + 2;
}

/* The static stiffness at the current state, factorised once for every right-hand side that
 * follows: a new assembly or solve anywhere drops the solver's factor, and a changed state
 * shows in the key. Returns 0, or the solver's code when the stiffness is singular. */
static int static_stiffness_factor(srd_sim *s)
{
    size_t n = factor_key_of(s, NULL);
    if (!s->factor_key)
        s->factor_key = srd_xcalloc(n, sizeof(double));
    double *key = srd_xcalloc(n, sizeof(double));
    factor_key_of(s, key);
    bool current = s->solver.factored != SRD_FACTOR_NONE && memcmp(key, s->factor_key, sizeof(double) * n) == 0;
    free(key);
    if (current)
        return 0;
    net_force_residual(s, s->q, 1); /* the stiffness at the equilibrium */
    srd_slides_reduce(s, 1);        /* sliding nodes' rows in their lines' basis, as Newton's */
    int code = srd_solver_factor(&s->solver);
    factor_key_of(s, s->factor_key);
    return code;
}

int srd_sim_static_sensitivity(srd_sim *s, const double *g, double *dq)
{
    const srd_model *m = s->m;
    const srd_system *sys = &s->solver.sys;
    if (static_stiffness_factor(s))
        return 1;
    memcpy(s->res, g, sizeof(double) * (size_t)sys->n_free);
    srd_slides_reduce(s, 0);
    for (int f = 0; f < sys->n_free; f++)
        s->dq[f] = -s->res[f];
    if (srd_solver_solve_factored(&s->solver, s->dq))
        return 1;
    srd_slides_expand(s, s->dq);
    for (int d = 0; d < m->n_dofs; d++)
        dq[d] = sys->free_index[d] >= 0 ? s->dq[sys->free_index[d]] : 0;
    return 0;
}

void srd_sim_net_force(srd_sim *s, double *force)
{
    const srd_model *m = s->m;
    net_force_residual(s, s->q, 0);
    for (int d = 0; d < m->n_dofs; d++) {
        int f = s->solver.sys.free_index[d];
        force[d] = f >= 0 ? -s->res[f] : 0;
    }
    srd_slides_along(s, force);
}

double srd_kinetic_energy(const srd_sim *s)
{
    double k = 0;
    for (int d = 0; d < s->m->n_dofs; d++)
        k += 0.5 * s->m->dof_mass[d] * s->v[d] * s->v[d];
    return k + srd_bodies_kinetic_energy(s);
}

double srd_potential_energy(srd_sim *s)
{
    int dynamic = s->dynamic;
    double lf = s->load_factor;
    s->dynamic = 0;
    s->load_factor = 1;
    double p = assemble(s, s->q, 0);
    s->dynamic = dynamic;
    s->load_factor = lf;
    return p;
}

/* Natural shapes given in the file (curvature, twist, hinge angle) and pressures act as loads:
 * static load steps ramp them with the external loads. Shapes measured from the reference are not
 * ramped: they describe the unloaded body. */
static void scale_natural_shapes(srd_sim *s, double **saved, double factor)
{
    const srd_model *m = s->m;
    for (int k = 0; k < m->n_sets; k++) {
        const srd_elemset *set = &m->sets[k];
        double *data = s->kernels[k].batch.data;
        int flag = srd_elemset_column(set, "natural_from_reference");
        for (int c = 0; c < set->n_data; c++) {
            if (!srd_column_ramped(set->kind, set->data_names[c]))
                continue;
            if (!saved[k]) {
                saved[k] = srd_xcalloc((size_t)set->n * (size_t)set->n_data + 1, sizeof(double));
                memcpy(saved[k], data, sizeof(double) * (size_t)set->n * (size_t)set->n_data);
            }
            for (int i = 0; i < set->n; i++)
                if (flag < 0 || data[i * set->n_data + flag] == 0)
                    data[i * set->n_data + c] = factor * saved[k][i * set->n_data + c];
        }
    }
}

static int *free_to_dof(const srd_sim *s)
{
    int *dof_of_free = srd_xcalloc((size_t)s->solver.sys.n_free + 1, sizeof(int));
    for (int d = 0; d < s->m->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            dof_of_free[s->solver.sys.free_index[d]] = d;
    return dof_of_free;
}

/* A static solve from multipliers of zero sees no geometric stiffness in its joints (a hanging
 * pendulum swings freely) and its Jacobian is singular: the multipliers that best balance the
 * forces at the start, min |r + C^T dlambda| (least squares), give it to the first iteration. */
static void guess_multipliers(srd_sim *s)
{
    int nf = s->solver.sys.n_free, nc = s->n_lambda_rows;
    const int *lam = s->lambda_rows;
    if (!nc)
        return;
    assemble_reduced(s, s->q, 1);
    double *Ct = srd_xcalloc((size_t)nf * nc + 1, sizeof(double)), *b = srd_xcalloc((size_t)nf + 1, sizeof(double));
    double *e = srd_xcalloc((size_t)nf + 1, sizeof(double));
    for (int f = 0; f < nf; f++)
        b[f] = -s->res[f];
    for (int j = 0; j < nc; j++) {
        e[lam[j]] = 1;
        srd_solver_multiply(&s->solver, e, &Ct[(size_t)j * nf]);
        e[lam[j]] = 0;
        b[lam[j]] = 0;
        for (int i = 0; i < nc; i++)
            Ct[(size_t)j * nf + lam[i]] = 0; /* the constraint rows take no part */
    }
    int *dof = free_to_dof(s);
    if (LAPACKE_dgels(LAPACK_COL_MAJOR, 'N', nf, nc, 1, Ct, nf, b, nf) == 0)
        for (int j = 0; j < nc; j++)
            s->q[dof[lam[j]]] += isfinite(b[j]) ? b[j] : 0;
    free(dof);
    free(Ct);
    free(b);
    free(e);
}

int srd_static(srd_sim *s, int load_steps)
{
    s->dynamic = 0;
    if (load_steps < 1)
        load_steps = 1;
    apply_schedules(s, s->t);
    double **saved = srd_xcalloc((size_t)s->m->n_sets + 1, sizeof(double *));
    int code = 0;
    for (int k = 1; k <= load_steps && code == 0; k++) {
        s->load_factor = (double)k / load_steps;
        scale_natural_shapes(s, saved, s->load_factor);
        srd_motion_impose(s, s->t, s->load_factor, s->q, NULL);
        guess_multipliers(s);
        code = newton_with_pairs(s, s->q, 0);
        s->steps++;
    }
    if (code == 0)
        srd_bodies_finish(s, -1); /* the bodies' turns into their axes: modes and runs start there */
    for (int k = 0; k < s->m->n_sets; k++)
        free(saved[k]);
    free(saved);
    return code;
}

void srd_sim_report_worst(const srd_sim *s, FILE *out, int count)
{
    const srd_model *m = s->m;
    int n = s->solver.sys.n_free;
    int *dof_of_free = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int d = 0; d < m->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            dof_of_free[s->solver.sys.free_index[d]] = d;
    unsigned char *shown = srd_xcalloc((size_t)n + 1, 1);
    for (int k = 0; k < count && k < n; k++) {
        int worst = -1;
        for (int f = 0; f < n; f++)
            if (!shown[f] && (worst < 0 || !(fabs(s->res[f]) <= fabs(s->res[worst]))))
                worst = f;
        shown[worst] = 1;
        char what[160];
        srd_model_describe_dof(m, dof_of_free[worst], what, sizeof what);
        fprintf(out, "  %-40s residual %.3e\n", what, s->res[worst]);
    }
    free(shown);
    free(dof_of_free);
}

/* The model DOF of each free index (the caller frees it). */

static void print_dof(const srd_sim *s, FILE *out, int dof)
{
    char what[160];
    srd_model_describe_dof(s->m, dof, what, sizeof what);
    fprintf(out, "  %s\n", what);
}

/* The object a DOF belongs to (the first one of a merged node). */
/* The object a DOF belongs to, or -1 for a constraint's multiplier. */
static int object_of_dof(const srd_model *m, int d)
{
    if (m->dof_kind[d] == SRD_DOF_LAMBDA)
        return -1;
    if (m->dof_kind[d] == SRD_DOF_ROT)
        return m->bodies[m->dof_owner[d]].object;
    return m->dof_kind[d] <= SRD_DOF_NODE_Z ? m->node_object[m->dof_owner[d]] : m->edge_object[m->dof_owner[d]];
}

/* Whether any DOF of object o is constrained now (a clamp, fix or prescribed motion). */
static bool object_held(const srd_sim *s, int o)
{
    for (int j = 0; j < s->m->n_joints; j++) /* a joint holds its bodies (to something) */
        for (int side = 0; side < 2; side++) {
            int b = side ? s->m->joints[j].body_b : s->m->joints[j].body_a;
            if (b >= 0 && s->m->bodies[b].object == o)
                return true;
        }
    for (int d = 0; d < s->m->n_dofs; d++)
        if (s->fixed[d] && object_of_dof(s->m, d) == o)
            return true;
    return false;
}

/* The DOF of a zero pivot, and its object when nothing holds that object directly. */
static void report_pivot(const srd_sim *s, FILE *out, int dof)
{
    const srd_model *m = s->m;
    int o = object_of_dof(m, dof);
    static const char *kinds[] = { "rod", "shell", "body", "lattice", "solid" };
    if (o < 0) {
        fprintf(out, "  a constraint repeats what others already hold (a closed loop of joints over-constrains "
                     "it); its multiplier has no equation of its own:\n");
        print_dof(s, out, dof);
        return;
    }
    if (!object_held(s, o))
        fprintf(out, "  nothing holds %s %s: no clamp, fix or motion acts on any of its DOFs\n",
                kinds[m->objects[o].kind], m->objects[o].name);
    fprintf(out, "  the factorisation found no stiffness left for (one DOF of a free rigid motion or "
                 "mechanism):\n");
    print_dof(s, out, dof);
}

int srd_sim_report_singular(const srd_sim *s, FILE *out, int count)
{
    int n = s->solver.sys.n_free, named = 0, empty = 0;
    int *dof_of_free = free_to_dof(s);
    for (int f = 0; f < n; f++)
        if (srd_solver_column_empty(&s->solver, f) && empty++ < count) {
            if (!named++)
                fprintf(out, "  free DOFs that no element, mass or support acts on:\n");
            print_dof(s, out, dof_of_free[f]);
        }
    if (empty > count)
        fprintf(out, "  ... and %d more\n", empty - count);
    int pivot = s->solver.singular_col;
    if (!named && pivot >= 0 && pivot < n) {
        report_pivot(s, out, dof_of_free[pivot]);
        named = s->m->dof_kind[dof_of_free[pivot]] == SRD_DOF_LAMBDA ? -1 : 1;
    }
    free(dof_of_free);
    return named;
}

/* How wrong the state of DOF d looks: non-finite values first, then by speed. */
static double state_badness(const srd_sim *s, int d)
{
    if (!isfinite(s->q[d]) || !isfinite(s->v[d]))
        return INFINITY;
    return fabs(s->v[d]);
}

void srd_sim_report_state(const srd_sim *s, FILE *out, int count)
{
    const srd_model *m = s->m;
    unsigned char *shown = srd_xcalloc((size_t)m->n_dofs + 1, 1);
    for (int k = 0; k < count; k++) {
        int worst = -1;
        for (int d = 0; d < m->n_dofs; d++)
            if (!shown[d] && s->solver.sys.free_index[d] >= 0 &&
                (worst < 0 || state_badness(s, d) > state_badness(s, worst)))
                worst = d;
        if (worst < 0)
            break;
        shown[worst] = 1;
        char what[160];
        srd_model_describe_dof(m, worst, what, sizeof what);
        fprintf(out, "  %-40s position %.3e, velocity %.3e\n", what, s->q[worst], s->v[worst]);
    }
    free(shown);
}

/* The rows of the modal problem: the free DOFs less the rows across sliding nodes' lines, each
 * with its DOF and its mass. */
typedef struct ModalRows {
    int     n;
    int    *rows;         /* free indices */
    double *mass;         /* per row */
    int    *dof_of_free;  /* per free index: the model DOF */
    int     n_lambda;
    int    *lambda;       /* free indices of constraint multipliers */
} ModalRows;

static void modal_rows_free(ModalRows *mr)
{
    free(mr->lambda);
    free(mr->rows);
    free(mr->mass);
    free(mr->dof_of_free);
}

/* 0, or -1 with a message when a row has no mass (it would have no frequency). */
static int modal_rows(const srd_sim *s, ModalRows *mr, char *err, size_t err_n)
{
    const srd_model *m = s->m;
    int nf = s->solver.sys.n_free;
    unsigned char *across = srd_xcalloc((size_t)nf + 1, 1);
    srd_slides_across(s, across);
    mr->dof_of_free = srd_xcalloc((size_t)nf + 1, sizeof(int));
    for (int d = 0; d < m->n_dofs; d++)
        if (s->solver.sys.free_index[d] >= 0)
            mr->dof_of_free[s->solver.sys.free_index[d]] = d;
    mr->rows = srd_xcalloc((size_t)nf + 1, sizeof(int));
    mr->mass = srd_xcalloc((size_t)nf + 1, sizeof(double));
    mr->n = 0;
    mr->lambda = srd_xcalloc((size_t)nf + 1, sizeof(int));
    mr->n_lambda = 0;
    for (int f = 0; f < nf; f++) {
        int d = mr->dof_of_free[f];
        if (m->dof_kind[d] == SRD_DOF_LAMBDA) {
            mr->lambda[mr->n_lambda++] = f; /* constraints: their null space carries the modes */
        } else if (!across[f]) {
            /* a body's rotation DOFs at theta = 0: the kinetic energy is 1/2 theta'.J theta' */
            mr->mass[mr->n] = m->dof_kind[d] == SRD_DOF_ROT ? m->bodies[m->dof_owner[d]].inertia[d - m->node_dof[
                                  m->bodies[m->dof_owner[d]].node] - 3]
                                                             : m->dof_mass[d];
            mr->rows[mr->n++] = f;
        }
    }
    free(across);
    for (int i = 0; i < mr->n; i++)
        if (!(mr->mass[i] > 0)) {
            char what[160];
            srd_model_describe_dof(m, mr->dof_of_free[mr->rows[i]], what, sizeof what);
            snprintf(err, err_n, "modal analysis needs a mass on every free DOF, but %s has none", what);
            return -1;
        }
    return 0;
}

/* The stiffness among the modal rows (K) and, when C is given, the constraints' Jacobian C (their
 * multipliers' rows against the modal rows), column-major, from the assembled Jacobian column
 * by column. */
static void stiffness_blocks(const srd_sim *s, const ModalRows *mr, double *K, double *C)
{
    int nf = s->solver.sys.n_free, n = mr->n, nc = mr->n_lambda;
    double *e = srd_xcalloc((size_t)nf + 1, sizeof(double)), *col = srd_xcalloc((size_t)nf + 1, sizeof(double));
    for (int j = 0; j < n; j++) {
        e[mr->rows[j]] = 1;
        srd_solver_multiply(&s->solver, e, col);
        e[mr->rows[j]] = 0;
        for (int i = 0; i < n; i++)
            K[(size_t)j * n + i] = col[mr->rows[i]];
        for (int i = 0; C && i < nc; i++)
            C[(size_t)j * nc + i] = col[mr->lambda[i]];
    }
    free(e);
    free(col);
}

/* M^-1/2 K M^-1/2 over the modal rows. */
static double *modal_matrix(const srd_sim *s, const ModalRows *mr)
{
    int n = mr->n;
    double *A = srd_xcalloc((size_t)n * (size_t)n + 1, sizeof(double));
    stiffness_blocks(s, mr, A, NULL);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            A[(size_t)j * n + i] /= sqrt(mr->mass[i] * mr->mass[j]);
    return A;
}

/* Mode k from its free-index values v (zero across sliding lines): the lines' coordinates
 * turned back into node motion, then by model DOF. */
static void store_mode(const srd_sim *s, const ModalRows *mr, int k, double *v, double *modes)
{
    int nf = s->solver.sys.n_free;
    srd_slides_expand(s, v);
    for (int f = 0; f < nf; f++)
        modes[(size_t)k * s->m->n_dofs + mr->dof_of_free[f]] = v[f];
}

bool srd_modes_use_lanczos(const srd_sim *s, int count)
{
    return s->solver.kind == SRD_SOLVER_SPARSE && count + 1 < s->solver.sys.n_free;
}

/* The modes of a model on the sparse solver: shift-invert Lanczos (sparse/eigen.c), K's
 * storage overwritten. The rows across sliding nodes' lines (identity rows of the reduced
 * system) get no mass, which leaves them out of the operator. */
static int modes_lanczos(srd_sim *s, const ModalRows *mr, int count, double *freq, double *modes, char *err,
                         size_t err_n)
{
    int n = s->solver.sys.n_free;
    double *mass = srd_xcalloc((size_t)n, sizeof(double)), *lambda = srd_xcalloc((size_t)count + 1, sizeof(double));
    double *v = srd_xcalloc((size_t)n * (size_t)count + 1, sizeof(double));
    for (int i = 0; i < mr->n; i++)
        mass[mr->rows[i]] = mr->mass[i];
    int status = srd_sparse_modes(&s->solver, mass, count, lambda, v, err, err_n);
    for (int k = 0; k < count && status == 0; k++) {
        freq[k] = lambda[k] > 0 ? sqrt(lambda[k]) / (2 * 3.14159265358979323846) : 0;
        store_mode(s, mr, k, &v[(size_t)k * n], modes);
    }
    free(mass);
    free(lambda);
    free(v);
    return status;
}

/* The modes of the dense symmetric standard form, by LAPACK's dsyevr. */
static int modes_dense(srd_sim *s, const ModalRows *mr, int count, double *freq, double *modes, char *err,
                       size_t err_n)
{
    int n = mr->n, nf = s->solver.sys.n_free, found = 0;
    double *A = modal_matrix(s, mr);
    double *w = srd_xcalloc((size_t)n + 1, sizeof(double));
    double *z = srd_xcalloc((size_t)n * (size_t)(count ? count : 1) + 1, sizeof(double));
    int *support = srd_xcalloc(2 * (size_t)n + 2, sizeof(int));
    int info = n ? LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'U', n, A, n, 0, 0, 1, count, 0, &found, w, z, n, support)
                 : 0;
    if (info != 0)
        snprintf(err, err_n, "the eigenvalue solver failed (LAPACK dsyevr info %d)", info);
    double *v = srd_xcalloc((size_t)nf + 1, sizeof(double));
    for (int k = 0; k < count && info == 0; k++) {
        freq[k] = w[k] > 0 ? sqrt(w[k]) / (2 * 3.14159265358979323846) : 0;
        memset(v, 0, sizeof(double) * (size_t)nf);
        for (int i = 0; i < n; i++)
            v[mr->rows[i]] = z[(size_t)k * n + i] / sqrt(mr->mass[i]);
        store_mode(s, mr, k, v, modes);
    }
    free(v);
    free(A);
    free(w);
    free(z);
    free(support);
    return info != 0 ? -1 : 0;
}


/* Columns of Z (n x r, column-major): an orthonormal basis of the null space of C (nc x n),
 * by the singular value decomposition; returns r. */
static int null_space(double *C, int nc, int n, double **Z)
{
    double *sv = srd_xcalloc((size_t)(nc < n ? nc : n) + 1, sizeof(double)), *vt = srd_xcalloc((size_t)n * n + 1,
                                                                                              sizeof(double));
    double *superb = srd_xcalloc((size_t)n + 1, sizeof(double)), u = 0;
    int info = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'A', nc, n, C, nc, sv, &u, 1, vt, n, superb);
    int rank = 0;
    for (int i = 0; info == 0 && i < (nc < n ? nc : n); i++)
        rank += sv[i] > 1e-10 * sv[0];
    int r = info == 0 ? n - rank : 0;
    *Z = srd_xcalloc((size_t)n * (size_t)(r ? r : 1) + 1, sizeof(double));
    for (int k = 0; k < r; k++) /* rows rank.. of V^T */
        for (int i = 0; i < n; i++)
            (*Z)[(size_t)k * n + i] = vt[(size_t)i * n + rank + k];
    free(sv);
    free(vt);
    free(superb);
    return r;
}

/* Z^T A Z for a dense A (n x n) or, with A NULL, the diagonal `diag`: r x r. */
static double *project(const double *A, const double *diag, const double *Z, int n, int r)
{
    double *out = srd_xcalloc((size_t)r * (size_t)r + 1, sizeof(double)), *AZ = srd_xcalloc((size_t)n + 1, sizeof(double));
    for (int b = 0; b < r; b++) {
        const double *zb = &Z[(size_t)b * n];
        for (int i = 0; i < n; i++) {
            AZ[i] = 0;
            if (!A)
                AZ[i] = diag[i] * zb[i];
            else
                for (int j = 0; j < n; j++)
                    AZ[i] += A[(size_t)j * n + i] * zb[j];
        }
        for (int a = 0; a < r; a++) {
            double v = 0;
            for (int i = 0; i < n; i++)
                v += Z[(size_t)a * n + i] * AZ[i];
            out[(size_t)b * r + a] = v;
        }
    }
    free(AZ);
    return out;
}

/* Modes of a model with joints: K y = w^2 M y on the null space of the constraints' Jacobian
 * (the motions the joints allow), K with the multipliers' geometric stiffness lambda grad^2 c. */
static int modes_constrained(srd_sim *s, const ModalRows *mr, int count, double *freq, double *modes, char *err,
                             size_t err_n)
{
    int n = mr->n, nc = mr->n_lambda, nf = s->solver.sys.n_free;
    double *K = srd_xcalloc((size_t)n * n + 1, sizeof(double)), *C = srd_xcalloc((size_t)nc * n + 1, sizeof(double));
    stiffness_blocks(s, mr, K, C);
    for (int j = 0; j < n; j++) /* symmetrised: the projection below reads all of it */
        for (int i = 0; i < j; i++)
            K[(size_t)j * n + i] = K[(size_t)i * n + j] = 0.5 * (K[(size_t)j * n + i] + K[(size_t)i * n + j]);
    double *Z = NULL;
    int r = null_space(C, nc, n, &Z);
    double *Kr = project(K, NULL, Z, n, r), *Mr = project(NULL, mr->mass, Z, n, r);
    double *w = srd_xcalloc((size_t)r + 1, sizeof(double));
    int info = r ? LAPACKE_dsygv(LAPACK_COL_MAJOR, 1, 'V', 'U', r, Kr, r, Mr, r, w) : 0;
    if (info != 0)
        snprintf(err, err_n, "the eigenvalue solver failed (LAPACK dsygv info %d)", info);
    double *v = srd_xcalloc((size_t)nf + 1, sizeof(double));
    for (int k = 0; k < count && info == 0; k++) {
        freq[k] = k < r && w[k] > 0 ? sqrt(w[k]) / (2 * 3.14159265358979323846) : 0;
        memset(v, 0, sizeof(double) * (size_t)nf);
        for (int i = 0; i < n && k < r; i++)
            for (int b = 0; b < r; b++)
                v[mr->rows[i]] += Z[(size_t)b * n + i] * Kr[(size_t)k * r + b];
        store_mode(s, mr, k, v, modes);
    }
    free(K);
    free(C);
    free(Z);
    free(Kr);
    free(Mr);
    free(w);
    free(v);
    return info != 0 ? -1 : 0;
}

int srd_modes(srd_sim *s, int count, double *freq, double *modes, char *err, size_t err_n)
{
    if (s->pairs) /* the parts touching here stiffen the modes: the pairs at this configuration */
        srd_pairs_begin(s, s->q, 0);
    ModalRows mr;
    if (modal_rows(s, &mr, err, err_n) != 0) {
        modal_rows_free(&mr);
        return -1;
    }
    if (count > mr.n)
        count = mr.n;
    /* K at the current configuration; symmetric standard form M^-1/2 K M^-1/2 y = w^2 y,
     * v = M^-1/2 y (a sliding node's mass is the same along every direction). */
    int dynamic = s->dynamic;
    s->dynamic = 0;
    assemble_reduced(s, s->q, 1);
    s->dynamic = dynamic;
    memset(modes, 0, sizeof(double) * (size_t)count * (size_t)s->m->n_dofs);
    int status = mr.n_lambda                    ? modes_constrained(s, &mr, count, freq, modes, err, err_n)
               : srd_modes_use_lanczos(s, count) ? modes_lanczos(s, &mr, count, freq, modes, err, err_n)
                                                 : modes_dense(s, &mr, count, freq, modes, err, err_n);
    modal_rows_free(&mr);
    return status;
}

/* Adds the gradient of the elements of set k over instances [lo, hi) at the current state to g,
 * with a row for every DOF (fixed ones included): the batch's residual map is swapped for its
 * DOF map. Forces add minus the force. */
void srd_sim_instance_gradient(srd_sim *s, int k, int lo, int hi, double *g)
{
    const srd_sim_kernel *sk = &s->kernels[k];
    if ((!s->dynamic && sk->info.needs_time_step) || hi <= lo)
        return;
    srd_elem_batch part = srd_batch_every_dof(&sk->batch.b, lo, hi);
    double energy = 0;
    srd_eval_ctx ctx = { s->q, s->q0, s->v0, s->params, s->t, srd_sim_view_dt(s), &energy, g, NULL };
    sk->gradient(&ctx, &part);
}

double srd_sim_view_dt(const srd_sim *s)
{
    return s->state_behind ? s->last_dt : s->dt;
}

bool srd_sim_damping_of_step(const srd_sim *s)
{
    return s->state_behind && s->method <= SRD_NEWMARK;
}

bool srd_sim_damped_velocity(const srd_sim *s, double *u, double c[2])
{
    const srd_model *m = s->m;
    bool of_step = srd_sim_damping_of_step(s);
    srd_damping_constants((srd_method)s->method, srd_sim_view_dt(s), &c[0], &c[1]);
    for (int d = 0; d < m->n_dofs; d++)
        u[d] = m->dof_kind[d] == SRD_DOF_LAMBDA ? 0
             : of_step                          ? c[0] * (s->q[d] - s->q0[d]) + c[1] * s->v0[d]
                                                : s->v[d];
    return of_step;
}

void srd_sim_damping_forces(srd_sim *s, double *out)
{
    const srd_model *m = s->m;
    size_t n = (size_t)m->n_dofs;
    double c[2], *u = srd_xcalloc(n + 1, sizeof(double));
    bool of_step = srd_sim_damped_velocity(s, u, c);
    for (size_t d = 0; d < n; d++)
        out[d] += m->damping_alpha * m->dof_mass[d] * u[d];
    if (m->damping_beta > 0) {
        double *y = srd_xcalloc(n + 1, sizeof(double));
        srd_sim_stiffness_times(s, of_step ? s->q0 : s->q, u, y);
        for (size_t d = 0; d < n; d++)
            out[d] += m->dof_kind[d] == SRD_DOF_LAMBDA ? 0 : m->damping_beta * y[d];
        free(y);
    }
    free(u);
}

void srd_sim_reaction_residual(srd_sim *s, double *res)
{
    const srd_model *m = s->m;
    apply_schedules(s, s->t);
    memset(res, 0, sizeof(double) * (size_t)m->n_dofs);
    for (int k = 0; k < m->n_sets; k++) /* the batch's count: the pairs' sets hold this step's pairs */
        srd_sim_instance_gradient(s, k, 0, s->kernels[k].batch.b.n, res);
    for (int d = 0; d < m->n_dofs; d++)
        res[d] -= s->load_factor * s->fext[d];
    if (s->dynamic && is_damped(s))
        srd_sim_damping_forces(s, res);
}

void srd_sim_reactions_of_residual(const srd_sim *s, const double *res, double *reaction)
{
    const srd_model *m = s->m;
    /* A sliding node's reaction is its residual across the line (its line does not move, or
     * moves with a clamp whose inertia the anchor's own reaction carries); other free DOFs have none. */
    memset(reaction, 0, sizeof(double) * (size_t)m->n_dofs);
    srd_slides_across_part(s, res, reaction);
    for (int d = 0; d < m->n_dofs; d++)
        if (s->fixed[d])
            reaction[d] = res[d] + (s->dynamic ? m->dof_mass[d] * s->prescribed_acc[d] : 0);
}

void srd_sim_reactions(srd_sim *s, double *reaction)
{
    double *res = srd_xcalloc((size_t)s->m->n_dofs + 1, sizeof(double));
    srd_sim_reaction_residual(s, res);
    srd_sim_reactions_of_residual(s, res, reaction);
    free(res);
}

/* The contact sets of the ground (target -1) or of obstacle `target`: the kinds, and which
 * instances (obstacles of one shape share a set, each holding one instance per node). */
/* Nodes that touch as nodes: all but rigid bodies' centres (bodies touch with their shapes). */
static int touching_nodes(const srd_model *m)
{
    int n = 0;
    for (int i = 0; i < m->n_nodes; i++)
        n += !m->node_body || m->node_body[i] < 0;
    return n;
}

/* Instances [lo, hi) of a rigid body's obstacle set that belong to obstacle `target` (all: -2),
 * by their `which` column. */
static bool body_obstacle_instances(const srd_model *m, int k, int target, int *lo, int *hi)
{
    const srd_elemset *s = &m->sets[k];
    int c = srd_elemset_column(s, "which");
    *lo = 0;
    *hi = s->n;
    if (target == -2)
        return true;
    while (*lo < s->n && s->data[*lo * s->n_data + c] != target)
        (*lo)++;
    *hi = *lo;
    while (*hi < s->n && s->data[*hi * s->n_data + c] == target)
        (*hi)++;
    return *hi > *lo;
}

static bool contact_instances(const srd_model *m, int k, int target, int *lo, int *hi)
{
    const char *kind = m->sets[k].kind;
    static const char *ground[] = { "ground_contact", "ground_friction", "surface_contact", "surface_friction",
                                    "body_ground_contact", "body_ground_friction" };
    *lo = 0;
    *hi = m->sets[k].n;
    if (target == -1 || target == -2)
        for (int i = 0; i < 6; i++)
            if (!strcmp(kind, ground[i]))
                return true;
    if (!strncmp(kind, "body_", 5) && strcmp(kind, "body_node_box_friction") && target != -1 &&
        srd_elemset_column(&m->sets[k], "which") >= 0)
        return body_obstacle_instances(m, k, target, lo, hi);
    for (int j = 0, same = 0; j < m->n_obstacles; j++) {
        /* a moving obstacle's kinds are moving_<shape>_*, shared with the other moving ones */
        const char *rest = kind;
        if (m->obstacles[j].moving != !strncmp(rest, "moving_", 7))
            continue;
        rest += m->obstacles[j].moving ? 7 : 0;
        size_t len = strlen(m->obstacles[j].shape);
        if (strncmp(rest, m->obstacles[j].shape, len) ||
            (strcmp(rest + len, "_contact") && strcmp(rest + len, "_friction")))
            continue;
        /* a friction set holds the instances of the obstacles with friction only */
        if (!strcmp(rest + len, "_friction") && !(m->obstacles[j].friction > 0))
            continue;
        if (target == -2 || target == j) {
            int per = touching_nodes(m);
            *lo = target == -2 ? 0 : same * per;
            *hi = target == -2 ? m->sets[k].n : *lo + per;
            return true;
        }
        same++;
    }
    return false;
}

/* Whether set k holds pairs of the model's parts in contact (its instances are this step's). */
int srd_sim_contact_instances(const srd_model *m, int k, int target, int *lo, int *hi)
{
    return contact_instances(m, k, target, lo, hi);
}

static bool self_contact_set(const srd_model *m, int k)
{
    for (int j = 0; m->self_contact.present && j < SRD_PAIR_SETS; j++)
        if (m->self_contact.set[j] == k)
            return true;
    return false;
}

void srd_sim_contact_forces(srd_sim *s, int target, double *force)
{
    const srd_model *m = s->m;
    double *g = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    for (int k = 0; k < m->n_sets; k++) {
        int lo, hi;
        if (target == SRD_CONTACT_PARTS ? self_contact_set(m, k) : contact_instances(m, k, target, &lo, &hi))
            srd_sim_instance_gradient(s, k, target == SRD_CONTACT_PARTS ? 0 : lo,
                                      target == SRD_CONTACT_PARTS ? s->kernels[k].batch.b.n : hi, g);
    }
    for (int d = 0; d < m->n_dofs; d++)
        force[d] -= g[d];
    free(g);
}

/* Copies the columns named names[0..n) of instance i of set j into v, where they exist. */
static void read_columns(const srd_sim *s, int j, int i, const char *const *names, int n, double *v)
{
    const srd_elemset *set = &s->m->sets[j];
    for (int c = 0; c < n; c++) {
        int col = srd_elemset_column(set, names[c]);
        if (col >= 0)
            v[c] = s->kernels[j].batch.data[i * set->n_data + col];
    }
}

void srd_sim_obstacle_pose(const srd_sim *s, int k, double center[3], double axis[3], double *angle)
{
    static const char *c[] = { "cx", "cy", "cz" }, *u[] = { "ux", "uy", "uz" };
    static const char *p[] = { "px", "py", "pz" }, *n[] = { "nx", "ny", "nz" }, *a[] = { "angle" };
    const srd_model *m = s->m;
    bool plane = !strcmp(m->obstacles[k].shape, "plane");
    for (int j = 0; j < m->n_sets; j++) {
        int lo, hi;
        if (!s->kernels[j].batch.data || !contact_instances(m, j, k, &lo, &hi) || lo >= hi)
            continue;
        read_columns(s, j, lo, plane ? p : c, 3, center);
        read_columns(s, j, lo, plane ? n : u, 3, axis);
        read_columns(s, j, lo, a, 1, angle);
        double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int c = 0; c < 3 && len > 0; c++)
            axis[c] /= len; /* the kernels take a moving axis or normal as a direction */
        return;
    }
}
