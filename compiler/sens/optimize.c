/* optimize.c — `srdc optimize` (see optimize.h). The search runs in the varied params scaled to
 * [0, 1] by their declared ranges. Each evaluation builds the model at the point, runs its
 * analysis (the static block, or the simulate block recording its probes at every step),
 * evaluates the objective (objective.h: DAGs of the probes, the terms and the params) and, for
 * the gradient-based methods, its gradient (objective_grad.h): through the equilibrium's
 * sensitivities, or the simulation's adjoint fed the objective's slopes step by step. */
#include "sens/optimize.h"
#include <errno.h>
#include <math.h>
#include <nlopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "alloc.h"
#include "diag.h"
#include "diff.h"
#include "driver.h"
#include "elab.h"
#include "lower.h"
#include "probe.h"
#include "sens/dynamic.h"
#include "sens/objective_grad.h"
#include "sens/objective.h"

typedef struct Search {
    const OptimizeOptions *o;
    const srd_model       *m;          /* the first point's model: the block, the params */
    Objective              objective;  /* lowered on the first point's model */
    nlopt_opt              opt;
    int                    evaluations;
    char                   failure[512];
    double                 best;
    double                *best_u;
    FILE                  *history;
} Search;

static const srd_param *varied(const Search *S, int j) { return &S->m->params[S->m->optimize.vary[j]]; }

static double value_at(const Search *S, int j, double u)
{
    const srd_param *p = varied(S, j);
    return p->lo + u * (p->hi - p->lo);
}

/* The model's -p values with the varied params at point u. */
static GradOptions options_at(const Search *S, const double *u, char (*specs)[512])
{
    const GradOptions *base = &S->o->model;
    GradOptions g = *base;
    int n_vary = S->m->optimize.n_vary;
    g.overrides = srd_xcalloc((size_t)base->n_overrides + (size_t)n_vary + 1, sizeof *g.overrides);
    g.n_overrides = 0;
    for (int j = 0; j < n_vary; j++)
        elab_format_override(specs[j], sizeof specs[j], varied(S, j), value_at(S, j, u[j]));
    for (int k = 0; k < base->n_overrides; k++) {
        bool replaced = false;
        for (int j = 0; j < n_vary; j++) {
            const char *spec = specs[j];
            replaced |= srd_override_find(&spec, 1, base->overrides[k]) >= 0;
        }
        if (!replaced)
            g.overrides[g.n_overrides++] = base->overrides[k];
    }
    for (int j = 0; j < n_vary; j++)
        g.overrides[g.n_overrides++] = specs[j];
    g.quiet = true;
    return g;
}

static void record(Search *S, const double *u, double f, const double *grad)
{
    int n = S->m->optimize.n_vary;
    S->evaluations++;
    bool best = f < S->best;
    if (best) {
        S->best = f;
        memcpy(S->best_u, u, sizeof(double) * (size_t)n);
    }
    printf("evaluation %3d:", S->evaluations);
    fprintf(S->history, "%d", S->evaluations);
    for (int j = 0; j < n; j++) {
        printf(" %s = %.10g%s%s", varied(S, j)->name, value_at(S, j, u[j]),
               strcmp(varied(S, j)->unit, "1") ? " " : "", strcmp(varied(S, j)->unit, "1") ? varied(S, j)->unit : "");
        fprintf(S->history, ",%.17g", value_at(S, j, u[j]));
    }
    printf(": objective %.10e%s\n", f, best ? " (best)" : "");
    fprintf(S->history, ",%.17g", f);
    for (int j = 0; j < n; j++)
        fprintf(S->history, ",%.17g", grad ? grad[j] / (varied(S, j)->hi - varied(S, j)->lo) : NAN);
    fprintf(S->history, "\n");
    fflush(stdout);
}

/* The objective and its gradient over the varied params (objective_gradient: the equilibrium's
 * sensitivities, or the simulation's adjoint); HUGE_VAL with S->failure set when either is not
 * to be had. */
static double value_and_gradient(Search *S, StaticPoint *pt, GradOptions *g, Objective *ob, double *grad)
{
    const srd_model *m = pt->m;
    int n_vary = m->optimize.n_vary;
    bool *want = srd_xcalloc((size_t)m->n_params + 1, sizeof(bool));
    for (int j = 0; j < n_vary; j++)
        want[m->optimize.vary[j]] = true;
    double f = HUGE_VAL, *dp = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    int *status = srd_xcalloc((size_t)m->n_params + 1, sizeof(int));
    char why[512] = "";
    if (objective_gradient(pt, g, ob, want, &f, dp, status, why, sizeof why) != 0)
        f = HUGE_VAL;
    for (int j = 0; j < n_vary && isfinite(f); j++) {
        int k = m->optimize.vary[j];
        if (status[k] != STATIC_DERIVED) {
            snprintf(why, sizeof why, "the objective's derivative with respect to `%s` is not derived: %s",
                     varied(S, j)->name, objective_why(pt, k, status[k]));
            f = HUGE_VAL;
        }
        grad[j] = dp[k] * (varied(S, j)->hi - varied(S, j)->lo);
    }
    if (!isfinite(f))
        snprintf(S->failure, sizeof S->failure, "%s", why);
    free(want), free(dp), free(status);
    return f;
}

/* NLopt's objective: the model solved at u; on a failure the search is stopped with a reason. */
static double evaluate(unsigned n, const double *u, double *grad, void *data)
{
    Search *S = data;
    char (*specs)[512] = srd_xcalloc(n + 1, sizeof *specs);
    GradOptions g = options_at(S, u, specs);
    StaticPoint pt;
    ObjectiveRun run;
    memset(&run, 0, sizeof run);
    double f = HUGE_VAL;
    int status = static_point_open(&pt, &g);
    bool simulate = pt.m && pt.m->simulate.present;
    if (status == SRD_EXIT_OK && grad)
        f = value_and_gradient(S, &pt, &g, &S->objective, grad);
    else if (status == SRD_EXIT_OK && objective_run_point(&S->objective, &pt, &run) != 0)
        snprintf(S->failure, sizeof S->failure, "the %s failed at this point",
                 simulate ? "simulation" : "static equilibrium's solve");
    else if (status == SRD_EXIT_OK) {
        /* The objective was lowered on the first point's model, whose layout (probes, DOFs,
         * objects) every point shares: only the param values differ. */
        Objective *ob = &S->objective;
        const srd_model *first = ob->m;
        ob->m = pt.m;
        f = objective_value(ob, &run);
        ob->m = first;
    } else
        snprintf(S->failure, sizeof S->failure, "the model could not be built at this point");
    objective_run_free(&run);
    static_point_close(&pt);
    if (isfinite(f))
        record(S, u, f, grad);
    else
        nlopt_force_stop(S->opt);
    free(g.overrides);
    free(specs);
    return isfinite(f) ? f : HUGE_VAL;
}

static nlopt_algorithm algorithm_of(const char *method)
{
    return !strcmp(method, "mma") ? NLOPT_LD_MMA : !strcmp(method, "slsqp") ? NLOPT_LD_SLSQP
         : !strcmp(method, "bobyqa") ? NLOPT_LN_BOBYQA : NLOPT_LD_LBFGS;
}

/* A value as `-p` takes it in one word: 7/m, 2500000Pa, 0.3. */
static void write_arg(FILE *f, const srd_param *p, double value)
{
    const char *unit = !strcmp(p->unit, "1") ? "" : !strncmp(p->unit, "1/", 2) ? p->unit + 1 : p->unit;
    fprintf(f, "%s-p %s=%.17g%s", f == stdout ? " " : "", p->name, value, unit);
}

static int write_result(Search *S, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/optimum.args", dir);
    FILE *f = fopen(path, "w");
    for (int j = 0; f && j < S->m->optimize.n_vary; j++) {
        fputs(j ? " " : "", f);
        write_arg(f, varied(S, j), value_at(S, j, S->best_u[j]));
    }
    if (f)
        fputc('\n', f);
    if (!f || fclose(f) != 0) {
        fprintf(stderr, "srdc: error: cannot write %s: %s\n", path, strerror(errno));
        return SRD_EXIT_IO;
    }
    return SRD_EXIT_OK;
}

static bool open_history(Search *S, const char *dir)
{
    char path[4200];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return false;
    snprintf(path, sizeof path, "%s/history.csv", dir);
    S->history = fopen(path, "w");
    if (!S->history)
        return false;
    fprintf(S->history, "evaluation");
    for (int j = 0; j < S->m->optimize.n_vary; j++)
        fprintf(S->history, ",%s", varied(S, j)->name);
    fprintf(S->history, ",objective");
    for (int j = 0; j < S->m->optimize.n_vary; j++)
        fprintf(S->history, ",d/d%s", varied(S, j)->name);
    fprintf(S->history, "\n");
    return true;
}

/* The objective's DAGs and their derivatives with respect to every input slot. */
static bool prepare(Search *S, StaticPoint *first)
{
    char err[512];
    if (!objective_prepare(&S->objective, &first->prog, first->m, err, sizeof err)) {
        fprintf(stderr, "srdc: error: the objective: %s\n", err);
        return false;
    }
    return true;
}

static int search(Search *S, const char *dir)
{
    const srd_optimize *spec = &S->m->optimize;
    int n = spec->n_vary;
    double *u = srd_xcalloc((size_t)n + 1, sizeof(double)), *lo = srd_xcalloc((size_t)n + 1, sizeof(double)),
           *hi = srd_xcalloc((size_t)n + 1, sizeof(double));
    for (int j = 0; j < n; j++) {
        const srd_param *p = varied(S, j);
        u[j] = (p->value - p->lo) / (p->hi - p->lo);
        hi[j] = 1;
    }
    S->opt = nlopt_create(algorithm_of(spec->method), (unsigned)n);
    nlopt_set_lower_bounds(S->opt, lo);
    nlopt_set_upper_bounds(S->opt, hi);
    nlopt_set_min_objective(S->opt, evaluate, S);
    nlopt_set_ftol_rel(S->opt, spec->tolerance);
    nlopt_set_xtol_rel(S->opt, spec->tolerance);
    nlopt_set_maxeval(S->opt, spec->max_evaluations);
    double f = HUGE_VAL;
    nlopt_result r = nlopt_optimize(S->opt, u, &f);
    nlopt_destroy(S->opt);
    free(u);
    free(lo);
    free(hi);
    if (r == NLOPT_FORCED_STOP || S->evaluations == 0 || r < 0) {
        fprintf(stderr, "srdc: error: the optimisation stopped after %d evaluations: %s\n", S->evaluations,
                S->failure[0] ? S->failure : nlopt_result_to_string(r));
        fprintf(stderr, "hint: narrow the params' ranges, or give the static block more load_steps\n");
        return SRD_EXIT_NUMERIC;
    }
    printf("optimum after %d evaluations (%s, NLopt: %s): objective %.10e\n ", S->evaluations, spec->method,
           nlopt_result_to_string(r), S->best);
    for (int j = 0; j < n; j++)
        write_arg(stdout, varied(S, j), value_at(S, j, S->best_u[j]));
    printf("\nwritten: %s/optimum.args (the -p values, for srdc run and built simulators), %s/history.csv\n", dir, dir);
    return write_result(S, dir);
}

int optimize_model(const OptimizeOptions *o)
{
    Search S;
    memset(&S, 0, sizeof S);
    S.o = o;
    S.best = HUGE_VAL;
    StaticPoint first;
    int status = static_point_open(&first, &o->model);
    if (status == SRD_EXIT_OK && !first.m->optimize.present) {
        fprintf(stderr, "srdc: error: %s has no `optimize` block\nhint: add `optimize { minimize = (tip.z - 2 cm)^2; "
                        "vary E; }`\n", o->model.file);
        status = SRD_EXIT_BAD_INPUT;
    }

    const char *dir = o->out ? o->out : "optimize";
    if (status == SRD_EXIT_OK) {
        S.m = first.m;
        S.best_u = srd_xcalloc((size_t)S.m->optimize.n_vary + 1, sizeof(double));
        if (!prepare(&S, &first))
            status = SRD_EXIT_BAD_INPUT;
        else if (!open_history(&S, dir)) {
            fprintf(stderr, "srdc: error: cannot write to %s: %s\n", dir, strerror(errno));
            status = SRD_EXIT_IO;
        } else
            status = search(&S, dir);
    }
    if (S.history)
        fclose(S.history);
    objective_free(&S.objective);
    free(S.best_u);
    static_point_close(&first);
    diag_reset();
    return status;
}
