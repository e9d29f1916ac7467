/* schedule_tangent.c — exact tangents of the schedules along one param (see schedule_tangent.h):
 * per schedule kernel one interpreted program whose rows are the kernel's values, their
 * derivative along the param inputs' tangents, and each switch's function, its derivative and
 * a guard; then the runtime's writes (schedule.c, motion.c) differentiated by hand. */
#include "sens/schedule_tangent.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "control.h"
#include "sens/schedule_program.h"
#include "sens/tangent.h"
#include "kernel/interp.h"

struct ScheduleTangents {
    int              n;
    ScheduleTangent *a;
};

double schedule_switch_step(const srd_param *p)
{
    double span = isfinite(p->hi - p->lo) ? p->hi - p->lo : 1;
    return 1e-3 * (p->value != 0 ? fabs(p->value) : span);
}

/* ---- building ---- */

static bool is_logical(ExprOp op) { return op >= XO_LT && op <= XO_NOT; }

/* The switch of node x (a copy), if it has one: its function into *g (and guard, kind). */
static bool switch_of(ExprDag *d, const ExprNode *x, ExprId *g, ExprId *guard, unsigned char *kind)
{
    *guard = dag_const(d, -1);
    *kind = SW_PLAIN;
    switch ((ExprOp)x->op) {
    case XO_MIN: case XO_MAX: case XO_LT: case XO_LE: case XO_EQ: case XO_NE:
        *g = dag_sub(d, x->a, x->b);
        return true;
    case XO_ABS:
        *g = x->a;
        return true;
    case XO_FLOOR:
        *g = x->a, *kind = SW_FLOOR;
        return true;
    case XO_ATAN2:
        *g = x->a, *guard = x->b, *kind = SW_CUT;
        return true;
    case XO_SELECT: /* a comparison's condition is a switch of its own */
        *g = x->a;
        return !is_logical((ExprOp)dag_node(d, x->a)->op);
    default:
        return false;
    }
}

/* The switches of the nodes the rows reach: their functions g and guards (arrays of the
 * reachable count); returns how many. */
static int collect_switches(ExprDag *d, const ExprId *rows, int nd, ExprId **g, ExprId **guard, unsigned char **kind)
{
    int32_t count = 0, limit = 0;
    ExprId *order = dag_reachable(d, rows, nd, &count, &limit);
    ExprNode *nodes = srd_xcalloc((size_t)count + 1, sizeof *nodes);
    for (int32_t i = 0; i < count; i++)
        nodes[i] = *dag_node(d, order[i]); /* copies: the builders below may move the nodes */
    *g = srd_xcalloc((size_t)count + 1, sizeof(ExprId));
    *guard = srd_xcalloc((size_t)count + 1, sizeof(ExprId));
    *kind = srd_xcalloc((size_t)count + 1, 1);
    int n = 0;
    for (int32_t i = 0; i < count; i++) {
        ExprId gi, gu;
        unsigned char ki;
        if (!switch_of(d, &nodes[i], &gi, &gu, &ki))
            continue;
        bool seen = false;
        for (int j = 0; j < n && !seen; j++)
            seen = (*g)[j] == gi && (*guard)[j] == gu && (*kind)[j] == ki;
        if (!seen)
            (*g)[n] = gi, (*guard)[n] = gu, (*kind)[n++] = ki;
    }
    free(order);
    free(nodes);
    return n;
}

/* sum_j jac[r][j] w_j, w_j the DAG input after the kernel's own. */
static ExprId along(ExprDag *d, const ExprId *jac, int n_slots, int n_inputs)
{
    ExprId sum = dag_const(d, 0);
    for (int j = 0; j < n_slots; j++)
        sum = dag_add(d, sum, dag_mul(d, jac[j], dag_input(d, n_inputs + j)));
    return sum;
}

void schedule_program_free(ScheduleTangent *st)
{
    free(st->slot_param);
    free(st->kind);
    if (st->prog)
        interp_free(st->prog);
    memset(st, 0, sizeof *st);
}

bool schedule_program_build(LoweredElement *le, ScheduleTangent *st, const int *slots, int w_base)
{
    ExprDag *d = le->dag;
    ExprId *g, *guard;
    int nd = le->nd, ns = collect_switches(d, le->res, nd, &g, &guard, &st->kind), nf = nd + ns;
    st->n_switch = ns;
    st->n_rows = 2 * nd + 3 * ns;
    ExprId *f = srd_xcalloc((size_t)nf + 1, sizeof(ExprId));
    ExprId *jac = srd_xcalloc((size_t)nf * (size_t)st->n_slots + 1, sizeof(ExprId));
    ExprId *rows = srd_xcalloc((size_t)st->n_rows + 1, sizeof(ExprId));
    for (int r = 0; r < nd; r++)
        f[r] = le->res[r] >= 0 ? le->res[r] : dag_const(d, 0);
    memcpy(f + nd, g, sizeof(ExprId) * (size_t)ns);
    if (st->n_slots > 0)
        kernel_total_jacobian(le, f, nf, slots, st->n_slots, jac);
    for (int r = 0; r < nd; r++) {
        rows[r] = f[r];
        rows[nd + r] = along(d, &jac[(size_t)r * st->n_slots], st->n_slots, le->n_inputs);
    }
    for (int j = 0; j < ns; j++) {
        rows[2 * nd + j] = g[j];
        rows[2 * nd + ns + j] = along(d, &jac[(size_t)(nd + j) * st->n_slots], st->n_slots, le->n_inputs);
    }
    for (int j = 0; j < ns; j++)
        rows[2 * nd + 2 * ns + j] = guard[j];
    KernelInput *inputs = srd_xcalloc((size_t)le->n_inputs + (size_t)st->n_slots + 1, sizeof *inputs);
    memcpy(inputs, le->inputs, sizeof *inputs * (size_t)le->n_inputs);
    for (int j = 0; j < st->n_slots; j++)
        inputs[le->n_inputs + j] = (KernelInput){ KIN_DATA, w_base + j };
    char kind[300];
    snprintf(kind, sizeof kind, "schedule_tangent_%s", le->kind);
    KernelSpec spec = { .kind = kind, .dag = d, .n_inputs = le->n_inputs + st->n_slots, .inputs = inputs,
                        .nd = st->n_rows, .value = -1, .res = rows, .jac = NULL, .gradient_only = true };
    st->prog = interp_build(&spec);
    free(g), free(guard), free(f), free(jac), free(rows), free(inputs);
    return st->prog != NULL;
}

static bool build_one(ScheduleKernel *sk, ScheduleTangent *st)
{
    LoweredElement *le = &sk->lowered;
    st->actuation = sk->actuation;
    st->expr = sk->expr;
    st->nd = le->nd;
    int *slots = srd_xcalloc((size_t)le->n_inputs + 1, sizeof(int));
    st->slot_param = srd_xcalloc((size_t)le->n_inputs + 1, sizeof(int));
    for (int i = 0; i < le->n_inputs; i++)
        if (le->inputs[i].cls == KIN_PARAM) {
            st->slot_param[st->n_slots] = le->inputs[i].index;
            slots[st->n_slots++] = i;
        }
    bool ok = schedule_program_build(le, st, slots, SCHEDULE_N_DATA);
    free(slots);
    return ok;
}

ScheduleTangents *schedule_tangents_build(ModelKernels *mk, const srd_model *m, char *err, size_t err_n)
{
    ScheduleTangents *T = srd_xcalloc(1, sizeof *T);
    T->a = srd_xcalloc((size_t)mk->n_schedules + 1, sizeof *T->a);
    for (int k = 0; k < mk->n_schedules; k++) {
        ScheduleKernel *sk = &mk->schedules[k];
        if (!sk->lowered.kind || (sk->actuation < 0 && srd_control_step_of_expr(m, sk->expr) >= 0))
            continue; /* the control block's steps: the controller runs them */
        if (!build_one(sk, &T->a[T->n++])) {
            snprintf(err, err_n, "the tangent of schedule `%s` could not be built", sk->lowered.kind);
            schedule_tangents_free(T);
            return NULL;
        }
    }
    return T;
}

void schedule_tangents_free(ScheduleTangents *T)
{
    if (!T)
        return;
    for (int k = 0; k < T->n; k++)
        schedule_program_free(&T->a[k]);
    free(T->a);
    free(T);
}

int schedule_tangents_switches(const ScheduleTangents *T)
{
    int n = 0;
    for (int k = 0; T && k < T->n; k++)
        n += T->a[k].n_switch;
    return n;
}

/* ---- evaluating ---- */

/* The tangent of schedule sc (NULL when it has none: a kernel the model lacks). */
static const ScheduleTangent *tangent_of(const ScheduleTangents *T, const srd_schedule *sc)
{
    for (int k = 0; k < T->n; k++)
        if (T->a[k].actuation == sc->actuation && (sc->actuation >= 0 || T->a[k].expr == sc->expr))
            return &T->a[k];
    return NULL;
}

/* st's rows for sc's instances along the params' tangents dp at time t: n * n_rows values,
 * instance-major. */
static double *run_rows(const ScheduleTangent *st, const srd_schedule *sc, const double *params, const double *dp,
                        double t, double dt)
{
    int n = sc->n, w = SCHEDULE_N_DATA + st->n_slots, nr = st->n_rows;
    double *data = srd_xcalloc((size_t)n * (size_t)w + 1, sizeof(double));
    double *out = srd_xcalloc((size_t)n * (size_t)nr + 1, sizeof(double));
    int32_t *res = srd_xcalloc((size_t)n * (size_t)nr + 1, sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        memcpy(&data[(size_t)i * w], &sc->data[(size_t)i * SCHEDULE_N_DATA], sizeof(double) * SCHEDULE_N_DATA);
        for (int j = 0; j < st->n_slots; j++)
            data[(size_t)i * w + SCHEDULE_N_DATA + j] = dp[st->slot_param[j]];
        for (int r = 0; r < nr; r++)
            res[(size_t)i * nr + r] = (int32_t)((size_t)i * nr + r);
    }
    srd_elem_batch b = { 0 };
    b.n = n, b.n_dofs = nr, b.n_data = w, b.dofs = res, b.res = res, b.data = data;
    srd_eval_ctx ctx = { NULL, NULL, NULL, params, t, dt, NULL, out, NULL };
    if (n > 0)
        interp_run(st->prog, &ctx, &b);
    free(data), free(res);
    return out;
}

bool schedule_program_switch(const ScheduleTangent *st, const double *rows, int n, double hk)
{
    int nd = st->nd, ns = st->n_switch;
    for (int i = 0; i < n; i++) {
        const double *r = &rows[(size_t)i * st->n_rows];
        for (int j = 0; j < ns; j++) {
            double g = r[2 * nd + j], dg = r[2 * nd + ns + j], guard = r[2 * nd + 2 * ns + j];
            if (st->kind[j] == SW_FLOOR)
                g -= nearbyint(g);
            if (st->kind[j] == SW_CUT && !(guard < 0))
                continue;
            if (dg != 0 && fabs(g) <= 2 * hk * fabs(dg))
                return true;
        }
    }
    return false;
}

/* A moving obstacle's step-start pose columns: the pose's tangent at t - h. */
static bool step_start_tangent(const ScheduleTangent *st, const srd_schedule *sc, const srd_model *m,
                               const double *params, const double *dp, double hk, double t0, double dt, double *dd)
{
    double *rows = run_rows(st, sc, params, dp, t0, dt);
    int stride = m->sets[m->actuations[sc->actuation].set].n_data;
    for (int i = 0; i < sc->n; i++)
        for (int c = 0; c < sc->n_columns; c++)
            if (sc->prev_columns[c] >= 0)
                dd[(size_t)sc->targets[i] * stride + sc->prev_columns[c]] = rows[(size_t)i * st->n_rows + st->nd + c];
    bool kink = schedule_program_switch(st, rows, sc->n, hk);
    free(rows);
    return kink;
}

/* E: d(value base / e0) with dbase the stiffness columns' static tangent (saved before any
 * schedule wrote them) and de0 the instance's material modulus's. */
static void write_stiffness(const ScheduleTangent *st, const srd_schedule *sc, const srd_model *m, const double *rows,
                            const double *dbase, const double *dE, double *dd)
{
    const srd_actuation *a = &m->actuations[sc->actuation];
    const srd_elemset *set = &m->sets[a->set];
    for (int i = 0; i < sc->n; i++) {
        double *row = &dd[(size_t)sc->targets[i] * set->n_data], e0 = sc->e0[i];
        double v = rows[(size_t)i * st->n_rows], dv = rows[(size_t)i * st->n_rows + st->nd];
        int obj = set->object[sc->targets[i]];
        double de0 = dE && obj >= 0 ? dE[obj] : 0;
        for (int c = 0; c < sc->n_columns; c++) {
            double base = sc->base[i * sc->n_columns + c], db = dbase[i * sc->n_columns + c];
            row[sc->columns[c]] = e0 > 0 ? dv * base / e0 + v * db / e0 - v * base * de0 / (e0 * e0) : 0;
        }
    }
}

static void write_actuation(const ScheduleTangent *st, const srd_schedule *sc, const srd_model *m, const double *rows,
                            double *dd)
{
    int stride = m->sets[m->actuations[sc->actuation].set].n_data;
    for (int i = 0; i < sc->n; i++) {
        double *row = &dd[(size_t)sc->targets[i] * stride];
        for (int c = 0; c < sc->n_columns; c++)
            if (sc->columns[c] >= 0)
                row[sc->columns[c]] = rows[(size_t)i * st->n_rows + st->nd + c];
        if (sc->flag_column >= 0)
            row[sc->flag_column] = 0;
    }
}

/* The static tangents of every E schedule's stiffness columns, before any is overwritten. */
static double **save_bases(const srd_schedules *S, const srd_model *m, double *const *dd)
{
    double **saved = srd_xcalloc((size_t)S->n + 1, sizeof *saved);
    for (int j = 0; j < S->n; j++) {
        const srd_schedule *sc = &S->a[j];
        if (sc->motion >= 0 || sc->actuation < 0 || !sc->base)
            continue;
        int set = m->actuations[sc->actuation].set, stride = m->sets[set].n_data;
        saved[j] = srd_xcalloc((size_t)sc->n * (size_t)sc->n_columns + 1, sizeof(double));
        for (int i = 0; i < sc->n; i++)
            for (int c = 0; c < sc->n_columns; c++)
                saved[j][i * sc->n_columns + c] = dd[set][(size_t)sc->targets[i] * stride + sc->columns[c]];
    }
    return saved;
}

bool schedule_tangents_apply(const ScheduleTangents *T, const srd_schedules *S, const srd_model *m,
                             const double *params, const double *dp, double hk, double t, double dt, double h,
                             const double *dE, double *const *dset_data, double *dfext)
{
    bool kink = false;
    double **dbase = save_bases(S, m, dset_data);
    for (int j = 0; j < S->n; j++) {
        const srd_schedule *sc = &S->a[j];
        const ScheduleTangent *st = tangent_of(T, sc);
        if (sc->motion >= 0 || !st)
            continue;
        double *dd = sc->actuation >= 0 ? dset_data[m->actuations[sc->actuation].set] : NULL;
        if (sc->has_prev)
            kink |= step_start_tangent(st, sc, m, params, dp, hk, t - h, dt, dd);
        double *rows = run_rows(st, sc, params, dp, t, dt);
        kink |= schedule_program_switch(st, rows, sc->n, hk);
        if (sc->actuation >= 0 && sc->base)
            write_stiffness(st, sc, m, rows, dbase[j], dE, dd);
        else if (sc->actuation >= 0)
            write_actuation(st, sc, m, rows, dd);
        else
            for (int i = 0; i < sc->n && dfext; i++)
                for (int c = 0; c < 3; c++)
                    dfext[m->node_dof[sc->targets[i]] + c] += rows[(size_t)i * st->n_rows + st->nd + c];
        free(rows);
    }
    for (int j = 0; j < S->n; j++)
        free(dbase[j]);
    free(dbase);
    return kink;
}

void schedule_tangents_static_base(const srd_schedules *S, const srd_model *m, const double *const *delab,
                                   double *const *dset_data)
{
    for (int j = 0; j < S->n; j++) {
        const srd_schedule *sc = &S->a[j];
        if (sc->motion >= 0 || sc->actuation < 0 || !sc->base)
            continue;
        int set = m->actuations[sc->actuation].set, stride = m->sets[set].n_data;
        for (int i = 0; i < sc->n; i++)
            for (int c = 0; c < sc->n_columns; c++) {
                size_t at = (size_t)sc->targets[i] * stride + sc->columns[c];
                dset_data[set][at] = delab[set][at];
            }
    }
}

/* ---- prescribed motion ---- */

static void cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* A move: q = x0 + u, v = u', a = u'' at each held node; their tangents are the rows'. */
static void move_tangent(const srd_model *m, const srd_motion *mo, const double *rows, int n_rows,
                         const unsigned char *fixed, double *dq, double *dv, double *da)
{
    for (int i = 0; i < mo->n_nodes; i++) {
        int d = m->node_dof[mo->nodes[i]];
        const double *du = &rows[(size_t)i * n_rows + 9]; /* after the 9 values: their tangents */
        for (int c = 0; c < 3 && fixed[d]; c++)
            dq[d + c] = du[c], dv[d + c] = du[3 + c], da[d + c] = du[6 + c];
    }
}

/* A rotation by w0 about the axis through the centre: with r = R(w0) r0, ar = axis x r and
 * aar = axis x ar, q = c + r, v = w1 ar, a = w2 ar + w1^2 aar; dr = dw0 ar (R' = axis x R),
 * d(ar) = dw0 aar, d(aar) = dw0 axis x aar. */
static void rotation_tangent(const srd_model *m, const srd_motion *mo, const double *w, const double *dw,
                             const unsigned char *fixed, double *dq, double *dv, double *da)
{
    const double *ax = mo->axis;
    double c = cos(w[0]), s = sin(w[0]);
    for (int i = 0; i < mo->n_nodes; i++) {
        int d = m->node_dof[mo->nodes[i]];
        if (!fixed[d])
            continue;
        double r0[3], r[3], a0[3], ar[3], aar[3], aaar[3], along = 0;
        for (int k = 0; k < 3; k++)
            r0[k] = m->x0[3 * mo->nodes[i] + k] - mo->center[k], along += ax[k] * r0[k];
        cross(ax, r0, a0);
        for (int k = 0; k < 3; k++)
            r[k] = c * r0[k] + s * a0[k] + (1 - c) * along * ax[k];
        cross(ax, r, ar), cross(ax, ar, aar), cross(ax, aar, aaar);
        for (int k = 0; k < 3; k++) {
            dq[d + k] = dw[0] * ar[k];
            dv[d + k] = dw[1] * ar[k] + w[1] * dw[0] * aar[k];
            da[d + k] = dw[2] * ar[k] + w[2] * dw[0] * aar[k] + 2 * w[1] * dw[1] * aar[k] + w[1] * w[1] * dw[0] * aaar[k];
        }
    }
}

/* Whether rotation mo turns what its tangent leaves out: rod edges' frames, a sliding clamp's line. */
static bool turns_frames_or_lines(const srd_model *m, const srd_motion *mo)
{
    if (mo->kind != SRD_MOTION_ROTATE)
        return false;
    if (mo->n_edges > 0)
        return true;
    for (int k = 0; k < m->n_slides; k++)
        for (int i = 0; i < mo->n_nodes; i++)
            if (mo->nodes[i] == m->slide_anchor[k])
                return true;
    return false;
}

bool schedule_tangents_turn_clamps(const ScheduleTangents *T, const srd_schedules *S, const srd_model *m,
                                   const double *params, const double *dp, double t, double dt)
{
    bool turns = false;
    for (int j = 0; j < S->n && !turns; j++) {
        const srd_schedule *sc = &S->a[j];
        const ScheduleTangent *st = sc->motion >= 0 ? tangent_of(T, sc) : NULL;
        if (!st || !turns_frames_or_lines(m, &m->motions[sc->motion]))
            continue;
        double *rows = run_rows(st, sc, params, dp, t, dt);
        for (int i = 0; i < sc->n && !turns; i++)
            for (int c = 0; c < st->nd && !turns; c++)
                turns = rows[(size_t)i * st->n_rows + st->nd + c] != 0; /* the angle's or its rates' tangent */
        free(rows);
    }
    return turns;
}

bool schedule_tangents_motion(const ScheduleTangents *T, const srd_schedules *S, const srd_model *m,
                              const double *params, const double *dp, double hk, double t, double dt,
                              const unsigned char *fixed, double *dq, double *dv, double *da)
{
    size_t bytes = sizeof(double) * (size_t)m->n_dofs;
    memset(dq, 0, bytes), memset(dv, 0, bytes), memset(da, 0, bytes);
    bool kink = false;
    for (int j = 0; j < S->n; j++) {
        const srd_schedule *sc = &S->a[j];
        const ScheduleTangent *st = sc->motion >= 0 ? tangent_of(T, sc) : NULL;
        if (!st)
            continue;
        const srd_motion *mo = &m->motions[sc->motion];
        double *rows = run_rows(st, sc, params, dp, t, dt);
        kink |= schedule_program_switch(st, rows, sc->n, hk);
        if (mo->kind == SRD_MOTION_MOVE)
            move_tangent(m, mo, rows, st->n_rows, fixed, dq, dv, da);
        else
            rotation_tangent(m, mo, rows, rows + st->nd, fixed, dq, dv, da);
        free(rows);
    }
    return kink;
}
