/* kernels.c — the kernel compiler's driver over a whole model: definition lookup (user file
 * first, then the standard modules), lowering, code generation, JIT. */
#include "kernels.h"
#include "clock.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include "alloc.h"
#include "codegen.h"
#include "diag.h"
#include "parse.h"
#include "schedule.h"
#include "kernel/backend.h"
#include "kernel/interp.h"
#include "kernel/tier.h"

/* The standard module that defines each built-in element kind. */
static const char *standard_module(const char *kind)
{
    if (!strcmp(kind, "stretch") || !strcmp(kind, "bend_twist"))
        return "rods";
    if (!strcmp(kind, "hinge") || !strcmp(kind, "hinge_wall") || !strcmp(kind, "midedge") ||
        !strcmp(kind, "pressure_force") || !strcmp(kind, "pressure_volume"))
        return "shells";
    if (!strcmp(kind, "ground_contact") || !strcmp(kind, "ground_friction") || !strcmp(kind, "sphere_contact") ||
        !strcmp(kind, "sphere_friction") || !strcmp(kind, "surface_contact") || !strcmp(kind, "surface_friction") ||
        !strcmp(kind, "box_contact") || !strcmp(kind, "box_friction") || !strcmp(kind, "cylinder_contact") ||
        !strcmp(kind, "cylinder_friction") || !strcmp(kind, "body_ground_contact") ||
        !strcmp(kind, "body_ground_friction") || !strcmp(kind, "node_body_box_contact") ||
        !strcmp(kind, "node_body_box_friction") || !strcmp(kind, "body_node_box_friction") ||
        !strcmp(kind, "edge_contact") || !strcmp(kind, "edge_friction") || !strcmp(kind, "node_triangle_contact") ||
        !strcmp(kind, "node_triangle_friction") || !strcmp(kind, "node_body_contact") ||
        !strcmp(kind, "node_body_friction") || !strcmp(kind, "body_node_friction") || !strcmp(kind, "edge_body_contact") ||
        !strcmp(kind, "edge_body_friction") || !strcmp(kind, "edge_body_friction_on_body") ||
        !strncmp(kind, "body_sphere_", 12) || !strncmp(kind, "body_box_", 9) || !strncmp(kind, "body_cylinder_", 14) ||
        !strncmp(kind, "moving_", 7) || !strcmp(kind, "plane_contact") || !strcmp(kind, "plane_friction") ||
        !strncmp(kind, "body_moving_", 12) || !strncmp(kind, "body_plane_", 11))
        return "contact";
    if (!strcmp(kind, "lattice_spring"))
        return "springs";
    if (!strncmp(kind, "tet_", 4))
        return "solids";
    if (!strncmp(kind, "joint_", 6) || !strncmp(kind, "hinge_", 6) || !strncmp(kind, "slide_", 6) ||
        !strcmp(kind, "node_point") || !strncmp(kind, "rod_clamp", 9))
        return "bodies";
    if (!strcmp(kind, "viscous_drag") || !strcmp(kind, "rft_drag") || !strcmp(kind, "aero_drag"))
        return "fluids";
    return NULL;
}

static bool load_standard(ModelKernels *mk, const char *module)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.srd", parse_stdlib_dir(), module);
    for (int i = 0; i < mk->stdlib.n_stmts; i++)
        if (mk->stdlib.stmts[i]->kind == ST_USE && !strcmp(mk->stdlib.stmts[i]->name, path))
            return true;
    Program p = { 0 };
    if (!parse_program(&mk->arena, path, parse_stdlib_dir(), &p))
        return false;
    int n = mk->stdlib.n_stmts + p.n_stmts + 1;
    Stmt **all = arena_alloc(&mk->arena, sizeof(Stmt *) * (size_t)n);
    if (mk->stdlib.n_stmts)
        memcpy(all, mk->stdlib.stmts, sizeof(Stmt *) * (size_t)mk->stdlib.n_stmts);
    if (p.n_stmts)
        memcpy(all + mk->stdlib.n_stmts, p.stmts, sizeof(Stmt *) * (size_t)p.n_stmts);
    /* Remember that the module is loaded with a marker statement. */
    Stmt *mark = arena_alloc(&mk->arena, sizeof *mark);
    mark->kind = ST_USE;
    mark->name = arena_strdup(&mk->arena, path);
    all[n - 1] = mark;
    mk->stdlib.stmts = all;
    mk->stdlib.n_stmts = n;
    return true;
}

static void fill_info(KernelSet *ks, const Stmt *def)
{
    LoweredElement *le = &ks->lowered;
    int np = def->n_stencil, nd = le->nd, ns = le->n_state;
    ks->arrays = calloc((size_t)(np + 2 * nd + 3 * ns + 1), sizeof(int));
    int *is_node = ks->arrays, *dp = is_node + np, *dc = dp + nd, *sk = dc + nd, *sp = sk + ns, *sc = sp + ns;
    for (int p = 0; p < np; p++)
        is_node[p] = !strcmp(def->stencil[p].kind, "node") || !strcmp(def->stencil[p].kind, "body");
    for (int k = 0; k < nd; k++) {
        dp[k] = le->dofs[k].param;
        dc[k] = le->dofs[k].comp;
    }
    for (int k = 0; k < ns; k++) {
        sk[k] = (int)le->state[k].kind;
        sp[k] = le->state[k].param;
        sc[k] = le->state[k].comp;
    }
    srd_kernel_info *in = &ks->info;
    in->kind = le->kind;
    in->is_force = le->is_force;
    in->symmetric = le->symmetric;
    in->n_params = np;
    in->param_is_node = is_node;
    in->nd = nd;
    in->dof_param = dp;
    in->dof_comp = dc;
    in->n_state = ns;
    in->state_kind = sk;
    in->state_param = sp;
    in->state_comp = sc;
    in->needs_time_step = 0;
    in->cost = le->ops_value + le->ops_grad + le->ops_jac;
    for (int k = 0; k < le->n_inputs; k++)
        if (le->inputs[k].cls == KIN_DT || le->inputs[k].cls == KIN_VEL0)
            in->needs_time_step = 1;
}

/* ---- which element data change with params ----
 * Kernels fold data columns that all instances share. A column that a param can change must
 * stay an input, or the simulator would keep the built value under `-p`. The model is
 * elaborated a second time with every param moved inside its range; the columns that differ
 * are marked. `srdc run` marks them too, so that it runs the very code a built simulator
 * runs; the simulator re-checks every folded column when it starts. */

static double moved_value(const srd_param *p)
{
    double v = p->value, alt = v != 0 ? v * 1.25 : 0.37;
    if (alt > p->hi || alt < p->lo)
        alt = v != 0 ? v * 0.8 : -0.37;
    if (alt > p->hi || alt < p->lo)
        alt = isfinite(p->lo) && isfinite(p->hi) ? p->lo + 0.37 * (p->hi - p->lo) : v;
    return alt;
}

static srd_model *elaborate_moved(const char *file, const srd_model *m, Arena *arena, Program *prog)
{
    char **specs = calloc((size_t)m->n_params + 1, sizeof *specs);
    for (int k = 0; k < m->n_params; k++) {
        const srd_param *p = &m->params[k];
        size_t n = strlen(p->name) + strlen(p->unit) + 40;
        specs[k] = malloc(n);
        /* A param that sets the discretisation stays: moving it would make another model (a
         * built simulator refuses new values of it; `srdc run` elaborates each anew). */
        elab_format_override(specs[k], n, p, p->shapes ? p->value : moved_value(p));
    }
    srd_model *moved = elab_file(arena, prog, file, parse_stdlib_dir(), (const char *const *)specs, m->n_params);
    diag_discard();
    for (int k = 0; k < m->n_params; k++)
        free(specs[k]);
    free(specs);
    return moved;
}

static bool same_structure(const srd_model *a, const srd_model *b)
{
    if (a->n_sets != b->n_sets || a->n_dofs != b->n_dofs || a->n_run_exprs != b->n_run_exprs)
        return false;
    for (int s = 0; s < a->n_sets; s++)
        if (strcmp(a->sets[s].kind, b->sets[s].kind) || a->sets[s].n != b->sets[s].n ||
            a->sets[s].n_data != b->sets[s].n_data)
            return false;
    return true;
}

/* Whether elaboration marked the columns itself (every param-dependent value went through
 * dual numbers, elab_tangent.c), so that nothing needs elaborating again. */
static bool marked_by_elaboration(const srd_model *m)
{
    for (int s = 0; s < m->n_sets; s++)
        if (!m->sets[s].param_column)
            return false;
    return true;
}

static bool param_shapes(const srd_model *m, const char *name)
{
    for (int k = 0; k < m->n_params; k++)
        if (!strcmp(m->params[k].name, name))
            return m->params[k].shapes;
    return false;
}

/* A run-time expression that reads a loop's value depending on a param: a simulator would keep
 * the value it was built with. */
static bool captures_param(const char *file, const srd_model *m, char *err, size_t err_n)
{
    for (int k = 0; k < m->n_run_exprs; k++) {
        const RunExpr *a = elab_run_expr(m, k);
        for (int j = 0; j < a->n_captured; j++)
            if (a->captured[j].param && !param_shapes(m, a->captured[j].param)) {
                snprintf(err, err_n, "%s:%d: this run-time expression reads `%s`, a value of the enclosing loop "
                                     "that depends on a param; a simulator would keep its built value\n"
                                     "hint: use the param itself inside the expression, or a top-level `let`",
                         file, a->expr->loc.line, a->captured[j].name);
                return true;
            }
    }
    return false;
}

/* The columns that differ in a second elaboration with every param moved (when elaboration
 * could not mark them: a param reached a value it carries no derivative of). */
static bool mark_by_moving(const char *file, srd_model *m, char *err, size_t err_n)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *moved = elaborate_moved(file, m, &arena, &prog);
    bool comparable = moved && same_structure(m, moved);
    for (int s = 0; s < m->n_sets; s++) {
        srd_elemset *set = &m->sets[s];
        free(set->param_column);
        set->param_column = calloc((size_t)set->n_data + 1, 1);
        for (int c = 0; c < set->n_data; c++) {
            bool differs = !comparable;
            for (int i = 0; i < set->n && !differs; i++)
                differs = set->data[i * set->n_data + c] != moved->sets[s].data[i * set->n_data + c];
            set->param_column[c] = differs;
        }
    }
    srd_model_free(moved);
    arena_free(&arena);
    return !captures_param(file, m, err, err_n);
}

bool kernels_mark_param_columns(const char *file, srd_model *m, char *err, size_t err_n)
{
    if (m->n_params == 0)
        return true;
    if (!marked_by_elaboration(m))
        return mark_by_moving(file, m, err, err_n);
    return !captures_param(file, m, err, err_n);
}

/* `dt` in an actuation or load is the simulate block's time step; a model without one (static
 * or modes only) has no time step, and a silent 0 there would change the result. */
static bool dt_has_meaning(const srd_model *m, const LoweredElement *le, const Expr *x, char *err, size_t err_n)
{
    bool uses_dt = false;
    for (int k = 0; k < le->n_inputs; k++)
        uses_dt |= le->inputs[k].cls == KIN_DT;
    if (!uses_dt || m->simulate.present)
        return true;
    snprintf(err, err_n, "%s:%d:%d: `dt` is the simulate block's time step, but this model has no simulate block\n"
                         "hint: static and modes analyses have no time step; write the value itself",
             src_path(x->loc.file), x->loc.line, x->loc.col);
    return false;
}

/* The prescribed motion whose expression is `expr`, or -1. */
static int motion_of_expr(const srd_model *m, int expr)
{
    for (int k = 0; k < m->n_motions; k++)
        if (m->motions[k].expr == expr)
            return k;
    return -1;
}

static bool lower_one_schedule(ModelKernels *mk, const Program *prog, const srd_model *m, int actuation, int expr,
                               int n_out, char *err, size_t err_n)
{
    ScheduleKernel *sk = &mk->schedules[mk->n_schedules];
    char kind[64], msg[512];
    int motion = actuation >= 0 ? -1 : motion_of_expr(m, expr);
    if (actuation >= 0)
        snprintf(kind, sizeof kind, "schedule_actuation%d", actuation);
    else
        snprintf(kind, sizeof kind, "schedule_%s%d", motion >= 0 ? "motion" : "load", expr);
    if (!lower_schedule(prog, m, kind, elab_run_expr(m, expr), n_out, motion >= 0, &sk->lowered, msg, sizeof msg)) {
        snprintf(err, err_n, "%s: %s", actuation >= 0 ? "actuation" : motion >= 0 ? "prescribed motion" : "time-dependent load",
                 msg);
        return false;
    }
    sk->actuation = actuation;
    sk->expr = expr;
    mk->n_schedules++;
    return dt_has_meaning(m, &sk->lowered, elab_run_expr(m, expr)->expr, err, err_n);
}

/* The steps of the control block, as schedules of their expressions (no actuation): the table
 * of built simulators and the JIT carry them like any schedule, and the runtime's controller
 * (runtime/control.c) picks them out by expression. */
static bool lower_control(ModelKernels *mk, const Program *prog, const srd_model *m, char *err, size_t err_n)
{
    for (int k = 0; k < m->control.n_steps; k++) {
        ScheduleKernel *sk = &mk->schedules[mk->n_schedules];
        char kind[64], msg[512];
        snprintf(kind, sizeof kind, "control_step%d", k);
        if (!lower_control_step(prog, m, kind, k, &sk->lowered, msg, sizeof msg)) {
            snprintf(err, err_n, "control: %s", msg);
            return false;
        }
        sk->actuation = -1;
        sk->expr = m->control.steps[k].expr;
        mk->n_schedules++;
    }
    return true;
}

/* One schedule per actuation, one per distinct expression of time-dependent loads, one per
 * prescribed motion and one per step of the control block. */
static bool lower_schedules(ModelKernels *mk, const Program *prog, const srd_model *m, char *err, size_t err_n)
{
    mk->schedules = calloc((size_t)(m->n_actuations + m->n_loads + m->n_motions + m->control.n_steps) + 1,
                           sizeof *mk->schedules);
    for (int k = 0; k < m->n_actuations; k++)
        if (!lower_one_schedule(mk, prog, m, k, m->actuations[k].expr, srd_actuation_components(m->actuations[k].target),
                                err, err_n))
            return false;
    for (int k = 0; k < m->n_loads; k++) {
        int expr = m->loads[k].expr, seen = 0;
        for (int j = 0; j < k && !seen; j++)
            seen = m->loads[j].expr == expr;
        if (expr >= 0 && !seen && !lower_one_schedule(mk, prog, m, -1, expr, 3, err, err_n))
            return false;
    }
    for (int k = 0; k < m->n_motions; k++)
        if (!lower_one_schedule(mk, prog, m, -1, m->motions[k].expr, m->motions[k].kind == SRD_MOTION_MOVE ? 3 : 1, err,
                                err_n))
            return false;
    return lower_control(mk, prog, m, err, err_n);
}

bool kernels_lower(ModelKernels *mk, const Program *prog, const srd_model *m, bool allow_missing, char *err,
                   size_t err_n)
{
    memset(mk, 0, sizeof *mk);
    arena_init(&mk->arena);
    mk->n = m->n_sets;
    mk->sets = calloc((size_t)m->n_sets + 1, sizeof *mk->sets);
    double t0 = srd_milliseconds();
    for (int s = 0; s < m->n_sets; s++) {
        const char *kind = m->sets[s].kind;
        const Stmt *def = lower_find_definition(prog, kind);
        const Program *home = prog;
        if (!def && standard_module(kind)) {
            if (!load_standard(mk, standard_module(kind))) {
                snprintf(err, err_n, "cannot load the standard module std.%s", standard_module(kind));
                return false;
            }
            def = lower_find_definition(&mk->stdlib, kind);
            home = &mk->stdlib;
        }
        if (!def) {
            if (allow_missing)
                continue;
            snprintf(err, err_n, "element kind `%s` has no definition", kind);
            return false;
        }
        char msg[512];
        if (!lower_element(home, prog, m, def, &m->sets[s], &mk->sets[s].lowered, msg, sizeof msg)) {
            snprintf(err, err_n, "element `%s`: %s", kind, msg);
            return false;
        }
        fill_info(&mk->sets[s], def);
    }
    if (!lower_schedules(mk, prog, m, err, err_n))
        return false;
    if (m->has_ground && m->ground_height_expr >= 0) {
        char msg[512];
        if (!lower_schedule(prog, m, "schedule_ground_height", elab_run_expr(m, m->ground_height_expr), 1, false,
                            &mk->ground_height, msg, sizeof msg)) {
            snprintf(err, err_n, "ground height: %s", msg);
            return false;
        }
    }
    mk->ms_lower = srd_milliseconds() - t0;
    return true;
}

KernelSpec kernels_spec(const LoweredElement *le, ExprId value, bool symmetric, int part, int parts, int lanes)
{
    return (KernelSpec){ .kind = le->kind, .dag = le->dag, .n_inputs = le->n_inputs, .inputs = le->inputs,
                         .nd = le->nd, .value = value, .res = le->res, .jac = le->jac, .symmetric = symmetric,
                         .gradient_only = false, .part = part, .parts = parts, .lanes = lanes };
}

/* Every kernel of the model as one list of entries: set s's kernel at 2s and its gradient at
 * 2s + 1, then the schedules, then the ground's height. */
int kernels_n_entries(const ModelKernels *mk) { return 2 * mk->n + mk->n_schedules + 1; }

const LoweredElement *kernels_entry(const ModelKernels *mk, int e, bool *gradient_only)
{
    *gradient_only = e >= 2 * mk->n || e % 2 == 1;
    if (e < 2 * mk->n)
        return &mk->sets[e / 2].lowered;
    e -= 2 * mk->n;
    return e < mk->n_schedules ? &mk->schedules[e].lowered : &mk->ground_height;
}

/* Puts entry functions where the runtime's table (kernels_table_fill) reads them. */
static void install_entries(ModelKernels *mk, srd_kernel_fn *fn)
{
    for (int s = 0; s < mk->n; s++) {
        mk->sets[s].fn = fn[2 * s];
        mk->sets[s].gradient = fn[2 * s + 1];
    }
    for (int k = 0; k < mk->n_schedules; k++)
        mk->schedules[k].fn = fn[2 * mk->n + k];
    mk->ground_height_fn = fn[2 * mk->n + mk->n_schedules];
}

/* One warning line per damaged kernel cache entry, reported here on the main thread. */
static void report_cache_warnings(char warn[2][BACKEND_WARN_N])
{
    bool any = false;
    for (int p = 0; p < 2; p++)
        if (warn[p][0]) {
            diag_warning(NO_LOC, "%s", warn[p]);
            any = true;
        }
    if (any)
        diag_flush(stderr);
}

/* Compiles every entry with the backend (loading it first) into *jit and fn. */
static bool compile_entries(ModelKernels *mk, int chunk_ops, SrdJit **jit, srd_kernel_fn *fn,
                            char warn[2][BACKEND_WARN_N], char *err, size_t err_n)
{
    warn[0][0] = warn[1][0] = 0;
    const SrdBackend *b = srd_backend(err, err_n);
    return b && b->compile(mk, chunk_ops, jit, fn, warn, err, err_n);
}

bool kernels_jit(ModelKernels *mk, int chunk_ops, char *err, size_t err_n)
{
    double t0 = srd_milliseconds();
    char warn[2][BACKEND_WARN_N];
    srd_kernel_fn *fn = srd_xcalloc((size_t)kernels_n_entries(mk), sizeof *fn);
    bool ok = compile_entries(mk, chunk_ops, &mk->jit, fn, warn, err, err_n);
    report_cache_warnings(warn);
    if (ok)
        install_entries(mk, fn);
    free(fn);
    mk->ms_jit = srd_milliseconds() - t0;
    return ok;
}

/* ---- tiers: interpreted kernels at once, compiled ones when ready ---- */

/* The compiled tiers, in the order they arrive. */
enum { TIER_SCALAR, TIER_VECTOR, TIERS };

typedef struct KernelTiers {
    ModelKernels   *mk;
    int             n, chunk_ops;
    InterpProgram **prog;         /* per entry */
    int            *slot;         /* per entry: its trampoline, or -1 */
    pthread_t       thread;
    bool            running;      /* the helper thread is to be joined */
    bool            finished;     /* kernels_finish has reported */
    bool            vector_only;  /* SRD_JIT=wait: no scalar tier */
    atomic_bool     stop;         /* the run is over: begin no further tier */
    /* what each compiled tier left for kernels_finish */
    SrdJit         *jit[TIERS];
    char            warn[TIERS][2][BACKEND_WARN_N];
    bool            done[TIERS], ok[TIERS], hit[TIERS];
    char            err[512];
    double          started_ms, ready_ms[TIERS]; /* since launch: trampolines in place, tier k in use */
} KernelTiers;

/* Compiles tier k of every kernel (or loads it from the cache) and points the trampolines at
 * it. A call already running the previous tier finishes there: that tier's JIT stays until
 * kernels_free. */
static void compile_tier(KernelTiers *t, int k)
{
    ModelKernels *mk = t->mk;
    mk->lanes = k == TIER_SCALAR ? 1 : 0;
    srd_kernel_fn *fn = srd_xcalloc((size_t)t->n, sizeof *fn);
    t->ok[k] = compile_entries(mk, t->chunk_ops, &t->jit[k], fn, t->warn[k], t->err, sizeof t->err);
    t->hit[k] = mk->cache_hit;
    for (int e = 0; t->ok[k] && e < t->n; e++)
        if (fn[e] && t->slot[e] >= 0)
            tier_publish(t->slot[e], fn[e]);
    free(fn);
    mk->lanes = 0;
    t->ready_ms[k] = tier_since_start_ms();
    t->done[k] = true;
}

/* The helper thread (or the caller, with SRD_JIT=wait: vector kernels only). */
static void *compile_tiers(void *arg)
{
    KernelTiers *t = arg;
    double t0 = srd_milliseconds();
    if (!t->vector_only)
        compile_tier(t, TIER_SCALAR);
    if (!atomic_load(&t->stop))
        compile_tier(t, TIER_VECTOR);
    t->mk->ms_jit = srd_milliseconds() - t0;
    return NULL;
}

/* An interpreter program and a trampoline for every entry; false when trampolines ran out. */
static bool claim_entries(KernelTiers *t, srd_kernel_fn *fn)
{
    ModelKernels *mk = t->mk;
    for (int e = 0; e < t->n; e++) {
        bool gradient_only;
        const LoweredElement *le = kernels_entry(mk, e, &gradient_only);
        t->slot[e] = -1;
        fn[e] = NULL;
        if (!le->kind)
            continue;
        bool is_set = e < 2 * mk->n;
        KernelSpec spec = kernels_spec(le, is_set ? le->value : -1, is_set && le->symmetric, 0, 1, 1);
        spec.gradient_only = gradient_only;
        t->prog[e] = interp_build(&spec);
        fn[e] = tier_claim(t->prog[e], &t->slot[e]);
        if (!fn[e])
            return false;
    }
    return true;
}

static void tiers_free(KernelTiers *t)
{
    for (int e = 0; e < t->n; e++) {
        tier_release(t->slot[e]);
        interp_free(t->prog[e]);
    }
    for (int k = 0; k < TIERS; k++)
        if (t->jit[k])
            srd_backend(NULL, 0)->jit_free(t->jit[k]); /* a JIT exists only when the backend loaded */
    free(t->prog);
    free(t->slot);
    free(t);
}

bool kernels_start(ModelKernels *mk, int chunk_ops, char *err, size_t err_n)
{
    const char *mode = getenv("SRD_JIT");
    bool wait = mode && !strcmp(mode, "wait"), interp_only = mode && !strcmp(mode, "interp");
    KernelTiers *t = srd_xcalloc(1, sizeof *t);
    t->mk = mk;
    t->n = kernels_n_entries(mk);
    t->chunk_ops = chunk_ops;
    t->prog = srd_xcalloc((size_t)t->n, sizeof *t->prog);
    t->slot = srd_xcalloc((size_t)t->n, sizeof *t->slot);
    srd_kernel_fn *fn = srd_xcalloc((size_t)t->n, sizeof *fn);
    bool claimed = claim_entries(t, fn);
    if (claimed)
        install_entries(mk, fn);
    free(fn);
    if (!claimed) { /* every trampoline is in use: compile first, as kernels_jit does */
        tiers_free(t);
        return kernels_jit(mk, chunk_ops, err, err_n);
    }
    mk->tiers = t;
    t->started_ms = tier_since_start_ms();
    t->vector_only = wait; /* waiting, the vector kernels are compiled at once */
    if (wait || (!interp_only && pthread_create(&t->thread, NULL, compile_tiers, t) != 0))
        compile_tiers(t);
    else
        t->running = !interp_only;
    return true;
}

/* With SRD_TIMING set: one line on stderr saying when the tiers served the run. */
static void report_timing(const KernelTiers *t)
{
    const char *env = getenv("SRD_TIMING"), *name[TIERS] = { "scalar", "vector" };
    if (!env || !*env || !strcmp(env, "0"))
        return;
    fprintf(stderr, "srdc: timing: kernels callable %.1f ms after launch, first kernel call %.1f ms", t->started_ms,
            tier_first_call_ms());
    for (int k = 0; k < TIERS; k++)
        if (t->ok[k])
            fprintf(stderr, ", %s kernels from %.1f ms (%s)", name[k], t->ready_ms[k],
                    t->hit[k] ? "from the kernel cache" : "compiled");
    fprintf(stderr, "; %ld kernel calls interpreted\n", tier_interpreted_calls());
}

void kernels_finish(ModelKernels *mk)
{
    KernelTiers *t = mk->tiers;
    if (!t || t->finished)
        return;
    atomic_store(&t->stop, true);
    if (t->running)
        pthread_join(t->thread, NULL);
    t->running = false;
    t->finished = true;
    bool failed = false;
    for (int k = 0; k < TIERS; k++) {
        report_cache_warnings(t->warn[k]);
        failed |= t->done[k] && !t->ok[k];
    }
    if (failed) { /* once: the tiers fail alike when LLVM cannot be loaded */
        diag_warning(NO_LOC, "the kernels could not be compiled (%s); a slower tier ran them",
                     t->err[0] ? t->err : "LLVM gave no reason");
        diag_flush(stderr);
    }
    report_timing(t);
}

void kernels_free(ModelKernels *mk)
{
    if (mk->tiers) {
        kernels_finish(mk);
        tiers_free(mk->tiers); /* the trampolines first, then the JITs their code lives in */
    }
    for (int s = 0; s < mk->n; s++) {
        lowered_free(&mk->sets[s].lowered);
        free(mk->sets[s].arrays);
    }
    free(mk->sets);
    for (int k = 0; k < mk->n_schedules; k++)
        lowered_free(&mk->schedules[k].lowered);
    free(mk->schedules);
    lowered_free(&mk->ground_height);
    if (mk->jit)
        srd_backend(NULL, 0)->jit_free(mk->jit); /* a JIT exists only when the backend loaded */
    arena_free(&mk->arena);
    memset(mk, 0, sizeof *mk);
}

void kernels_table_fill(KernelTable *t, const ModelKernels *mk)
{
    int n = mk->n, ns = mk->n_schedules;
    t->fns = srd_xcalloc((size_t)n + 1, sizeof *t->fns);
    t->gradients = srd_xcalloc((size_t)n + 1, sizeof *t->gradients);
    t->infos = srd_xcalloc((size_t)n + 1, sizeof *t->infos);
    t->schedules = srd_xcalloc((size_t)ns + 1, sizeof *t->schedules);
    t->actuation = srd_xcalloc((size_t)ns + 1, sizeof(int));
    t->expr = srd_xcalloc((size_t)ns + 1, sizeof(int));
    for (int k = 0; k < n; k++) {
        t->fns[k] = mk->sets[k].fn;
        t->gradients[k] = mk->sets[k].gradient;
        t->infos[k] = mk->sets[k].info;
    }
    for (int k = 0; k < ns; k++) {
        t->schedules[k] = mk->schedules[k].fn;
        t->actuation[k] = mk->schedules[k].actuation;
        t->expr[k] = mk->schedules[k].expr;
    }
    t->table = (srd_kernel_table){ t->fns, t->gradients, t->infos, ns, t->schedules, t->actuation, t->expr,
                                   mk->ground_height_fn };
}

void kernels_table_free(KernelTable *t)
{
    free(t->fns);
    free(t->gradients);
    free(t->infos);
    free(t->schedules);
    free(t->actuation);
    free(t->expr);
}
