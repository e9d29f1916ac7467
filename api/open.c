/* open.c — opening a model for the C API: elaborating a .srd file and compiling its kernels, or
 * elaborating a built simulator's embedded files against the kernels compiled into it; then a
 * simulation at the start of the model's `simulate` block. The front end keeps global state
 * (diagnostics, source files), so building is serialised. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "elab.h"
#include "instance.h"
#include "jit.h"
#include "parse.h"
#include "report.h"
#include "sources.h"

static pthread_mutex_t front_end = PTHREAD_MUTEX_INITIALIZER;

void api_lock_front_end(void) { pthread_mutex_lock(&front_end); }
void api_unlock_front_end(void) { pthread_mutex_unlock(&front_end); }

const char *srd_version(void) { return SRD_VERSION; }

/* Reports the diagnostics the front end holds (every error, with its source line and caret). */
static srd_status fail_with_diagnostics(srd_instance *inst, const char *fallback)
{
    char *buf;
    size_t len;
    FILE *f = api_stream_open(&buf, &len);
    if (f)
        diag_flush(f);
    char *text = api_stream_text(f, &buf, &len);
    if (text && !text[0]) {
        free(text);
        return api_fail(inst, SRD_ERR_INPUT, "%s", fallback);
    }
    return api_fail_text(inst, SRD_ERR_INPUT, text);
}

static bool is_shared_library(const char *path)
{
    size_t n = strlen(path);
    return (n > 3 && !strcmp(path + n - 3, ".so")) || strstr(path, ".so.");
}

/* A simulator built with `srdc build --shared`: its table of kernels and embedded files. */
static srd_status load_built(srd_instance *inst)
{
    if (inst->library)
        return SRD_OK;
    inst->library = dlopen(inst->path, RTLD_NOW | RTLD_LOCAL);
    if (!inst->library)
        return api_fail(inst, SRD_ERR_IO, "cannot load %s: %s", inst->path, dlerror());
    inst->built = dlsym(inst->library, "srd_built");
    if (!inst->built)
        return api_fail(inst, SRD_ERR_INPUT, "%s is not a simulator built by `srdc build --shared` (no srd_built table)",
                        inst->path);
    return SRD_OK;
}

/* Elaborates the built simulator's model from its embedded files, and checks it still fits. */
static srd_status elaborate_built(srd_instance *inst)
{
    const srd_built_model *b = inst->built;
    for (int k = 0; k < b->n_files; k++)
        sources_provide(b->files[k].path, b->files[k].text, b->files[k].len);
    inst->m = elab_file(&inst->arena, &inst->prog, b->model_path, b->stdlib_dir, (const char *const *)inst->overrides,
                        inst->n_overrides);
    sources_reset();
    if (!inst->m)
        return fail_with_diagnostics(inst, "the model has errors");
    diag_discard();
    char *buf;
    size_t len;
    FILE *f = api_stream_open(&buf, &len);
    bool fits = f && srd_built_matches(b, inst->m, f, b->name);
    char *text = api_stream_text(f, &buf, &len);
    if (fits) {
        free(text);
        inst->table = &b->kernels;
        return SRD_OK;
    }
    return api_fail_text(inst, SRD_ERR_INPUT, text);
}

/* Elaborates a .srd file and compiles its kernels (the on-disk cache serves a model seen before). */
static srd_status elaborate_and_compile(srd_instance *inst)
{
    bool parsed = parse_program(&inst->arena, inst->path, parse_stdlib_dir(), &inst->prog);
    if (parsed)
        inst->m = elab_program_with(&inst->prog, &inst->arena, inst->path, (const char *const *)inst->overrides,
                                    inst->n_overrides);
    if (!inst->m)
        return fail_with_diagnostics(inst, "the model has errors");
    diag_discard();
    char err[1024];
    /* The columns a param changes stay kernel inputs, as in `srdc run` and built simulators. */
    (void)kernels_mark_param_columns(inst->m->source, inst->m, err, sizeof err);
    diag_discard();
    inst->have_kernels = true;
    if (!kernels_lower(&inst->mk, &inst->prog, inst->m, false, err, sizeof err) ||
        !kernels_jit(&inst->mk, JIT_CHUNK_OPS, err, sizeof err))
        return api_fail(inst, SRD_ERR_INPUT, "%s", err);
    diag_discard();
    kernels_table_fill(&inst->kt, &inst->mk);
    inst->table = &inst->kt.table;
    return SRD_OK;
}

static srd_status elaborate(srd_instance *inst)
{
    pthread_mutex_lock(&front_end);
    diag_set_program("srd");
    arena_init(&inst->arena);
    srd_status st = is_shared_library(inst->path) ? load_built(inst) : SRD_OK;
    if (st == SRD_OK)
        st = inst->library ? elaborate_built(inst) : elaborate_and_compile(inst);
    diag_reset();
    pthread_mutex_unlock(&front_end);
    return st;
}

/* What the API needs of the model: a simulation it can step on the general path. */
static srd_status check_model(srd_instance *inst)
{
    const srd_model *m = inst->m;
    if (!m->simulate.present)
        return api_fail(inst, SRD_ERR_INPUT, "%s: the model has no `simulate` block, so there is nothing to step\n"
                                             "hint: add `simulate { method = implicit_euler; dt = 1 ms; duration = 1 s; }`",
                        m->source);
    char *buf;
    size_t len;
    FILE *f = api_stream_open(&buf, &len);
    bool refused = f && srd_report_unsupported_method(f, "srd", m, inst->table->infos);
    char *text = api_stream_text(f, &buf, &len);
    if (!refused) {
        free(text);
        return SRD_OK;
    }
    return api_fail_text(inst, SRD_ERR_INPUT, text);
}

/* A simulation of analysis a with its solver and schedules. */
static srd_status init_sim(srd_instance *inst, srd_sim *s, const srd_analysis *a)
{
    char err[512];
    int init = srd_sim_for_analysis(s, inst->m, inst->table, a, NULL, inst->dt, err, sizeof err);
    if (init != 0)
        return api_fail(inst, init == SRD_SIM_NO_MEMORY ? SRD_ERR_MEMORY : SRD_ERR_INPUT, "%s", err);
    s->dt = inst->dt;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
    return SRD_OK;
}

/* `start = equilibrium`: the static block's solution, found once and kept for every reset. */
static srd_status find_equilibrium(srd_instance *inst)
{
    const srd_model *m = inst->m;
    if (!m->simulate.start || !m->statics.present)
        return SRD_OK;
    srd_sim st;
    memset(&st, 0, sizeof st);
    srd_status status = init_sim(inst, &st, &m->statics);
    if (status == SRD_OK) {
        int code = srd_static(&st, m->statics.load_steps);
        if (code == 0)
            srd_start_state_save(&st, &inst->start);
        else {
            char *buf;
            size_t len;
            FILE *f = api_stream_open(&buf, &len);
            if (f)
                srd_report_step_failure(f, "srd", &st, -1, code);
            status = api_fail_text(inst, SRD_ERR_NUMERIC, api_stream_text(f, &buf, &len));
        }
    }
    if (st.m)
        srd_sim_free(&st);
    return status;
}

/* Moves the state vectors of `from` into the new sim's place, so that the arrays srd_q and
 * srd_v gave stay valid across a reset (the sim reads them through s->q and s->v only). */
static void keep_vectors(srd_sim *s, double *q, double *v)
{
    size_t bytes = sizeof(double) * (size_t)s->m->n_dofs;
    memcpy(q, s->q, bytes);
    memcpy(v, s->v, bytes);
    free(s->q);
    free(s->v);
    s->q = q;
    s->v = v;
}

srd_status api_start(srd_instance *inst)
{
    double *q = inst->s.q, *v = inst->s.v;
    if (inst->s.m) {
        inst->s.q = inst->s.v = NULL;
        srd_sim_free(&inst->s);
    }
    srd_status st = init_sim(inst, &inst->s, &inst->m->simulate);
    if (st != SRD_OK) {
        free(q);
        free(v);
        return st;
    }
    if (q)
        keep_vectors(&inst->s, q, v);
    if (inst->start.q)
        srd_sim_start_at(&inst->s, &inst->start);
    inst->s.dynamic = 1;
    inst->failed = false;
    api_views_from_state(inst);
    return SRD_OK;
}

srd_status api_build(srd_instance *inst)
{
    srd_status st = elaborate(inst);
    if (st != SRD_OK)
        return st;
    const srd_model *m = inst->m;
    if ((st = check_model(inst)) != SRD_OK)
        return st;
    inst->method = (srd_method)srd_method_from_name(m->simulate.method);
    if (!(inst->dt > 0))
        inst->dt = m->simulate.dt;
    inst->x = srd_xcalloc(3 * (size_t)m->n_nodes + 1, sizeof(double));
    inst->xdot = srd_xcalloc(3 * (size_t)m->n_nodes + 1, sizeof(double));
    inst->x_synced = srd_xcalloc(3 * (size_t)m->n_nodes + 1, sizeof(double));
    inst->xdot_synced = srd_xcalloc(3 * (size_t)m->n_nodes + 1, sizeof(double));
    if ((st = find_equilibrium(inst)) != SRD_OK)
        return st;
    return api_start(inst);
}

void api_unbuild(srd_instance *inst)
{
    if (inst->s.m)
        srd_sim_free(&inst->s);
    if (inst->have_kernels) {
        kernels_table_free(&inst->kt);
        kernels_free(&inst->mk);
    }
    inst->have_kernels = false;
    srd_model_free(inst->m);
    inst->m = NULL;
    arena_free(&inst->arena);
    memset(&inst->prog, 0, sizeof inst->prog);
    srd_start_state_free(&inst->start);
    free(inst->x);
    free(inst->xdot);
    free(inst->x_synced);
    free(inst->xdot_synced);
    inst->x = inst->xdot = inst->x_synced = inst->xdot_synced = NULL;
    inst->table = NULL;
}

static void copy_overrides(srd_instance *inst, const char *const *params, int n)
{
    inst->overrides = srd_xcalloc((size_t)n + 1, sizeof(char *));
    for (int k = 0; k < n; k++)
        inst->overrides[k] = srd_xstrdup(params[k]);
    inst->n_overrides = n;
}

static srd_status check_open_arguments(const char *path, const char *const *params, int n, srd_instance **out)
{
    if (!out)
        return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_open: `out` is NULL");
    *out = NULL;
    if (!path)
        return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_open: the path is NULL");
    if (n < 0 || (n > 0 && !params))
        return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_open: %d params given but no array", n);
    for (int k = 0; k < n; k++)
        if (!params[k] || !strchr(params[k], '='))
            return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_open: param %d is `%s`, not NAME=VALUE", k,
                            params[k] ? params[k] : "NULL");
    return SRD_OK;
}

srd_status srd_open(const char *path, const char *const *params, int n_params, srd_instance **out)
{
    srd_status st = check_open_arguments(path, params, n_params, out);
    if (st != SRD_OK)
        return st;
    srd_instance *inst = srd_xcalloc(1, sizeof *inst);
    inst->path = srd_xstrdup(path);
    copy_overrides(inst, params, n_params);
    st = api_build(inst);
    if (st != SRD_OK) {
        srd_close(inst); /* last_error keeps the message */
        return st;
    }
    *out = inst;
    return SRD_OK;
}

void srd_close(srd_instance *inst)
{
    if (!inst)
        return;
    api_unbuild(inst);
    if (inst->library)
        dlclose(inst->library);
    for (int k = 0; k < inst->n_overrides; k++)
        free(inst->overrides[k]);
    free(inst->overrides);
    free(inst->path);
    free(inst->message);
    free(inst);
}
