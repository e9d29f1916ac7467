/* elab_tangent.c — the record of element rows' derivatives and param dependences made while
 * finalize builds the model, and the ElabTangent handed to sensitivities at the end. */
#include "elab_tangent.h"
#include <stdlib.h>
#include <string.h>
#include "alloc.h"

/* Room in the record for set `set` up to row `inst` (rows never recorded stay zero). */
static void make_room(Elab *e, const srd_model *m, int set, int inst)
{
    if (set >= e->n_row_sets) {
        int n = m->n_sets > set + 1 ? m->n_sets : set + 1;
        e->row_tan = srd_xrealloc(e->row_tan, sizeof *e->row_tan * (size_t)n);
        e->row_dep = srd_xrealloc(e->row_dep, sizeof *e->row_dep * (size_t)n);
        e->row_cap = srd_xrealloc(e->row_cap, sizeof *e->row_cap * (size_t)n);
        for (int s = e->n_row_sets; s < n; s++) {
            e->row_tan[s] = NULL;
            e->row_cap[s] = 0;
            e->row_dep[s] = srd_xcalloc((size_t)m->sets[s].n_data + 1, 1);
        }
        e->n_row_sets = n;
    }
    if (inst < e->row_cap[set])
        return;
    int cap = e->row_cap[set] ? 2 * e->row_cap[set] : 64;
    while (cap <= inst)
        cap *= 2;
    size_t w = (size_t)m->sets[set].n_data;
    e->row_tan[set] = srd_xrealloc(e->row_tan[set], sizeof(double) * (w * (size_t)cap + 1));
    memset(e->row_tan[set] + w * (size_t)e->row_cap[set], 0, sizeof(double) * w * (size_t)(cap - e->row_cap[set]));
    e->row_cap[set] = cap;
}

void elab_record_row(Elab *e, const srd_model *m, int set, int inst, const Dual *row)
{
    make_room(e, m, set, inst);
    int w = m->sets[set].n_data;
    for (int c = 0; c < w; c++) {
        e->row_tan[set][(size_t)inst * (size_t)w + (size_t)c] = row[c].d;
        e->row_dep[set][c] |= row[c].dep;
    }
}

int elab_add_row(Elab *e, srd_model *m, int set, const int *nodes, const int *edges, const signed char *signs,
                 const Dual *row, int object)
{
    int w = m->sets[set].n_data;
    double values[64];
    for (int c = 0; c < w && c < 64; c++)
        values[c] = row[c].v;
    int inst = srd_elemset_add(&m->sets[set], nodes, edges, signs, values, object);
    elab_record_row(e, m, set, inst, row);
    return inst;
}

/* Every set's recorded derivatives as n * n_data arrays in the arena. */
static void finish_rows(Elab *e, const srd_model *m, ElabTangent *out)
{
    out->n_sets = m->n_sets;
    out->data = arena_alloc(e->arena, sizeof *out->data * (size_t)(m->n_sets + 1));
    for (int s = 0; s < m->n_sets; s++) {
        size_t n = (size_t)m->sets[s].n * (size_t)m->sets[s].n_data;
        out->data[s] = arena_alloc(e->arena, sizeof(double) * (n + 1));
        memset(out->data[s], 0, sizeof(double) * (n + 1));
        if (s < e->n_row_sets && e->row_tan[s])
            memcpy(out->data[s], e->row_tan[s], sizeof(double) * n);
    }
}

/* The masses' derivatives by DOF (lump_masses), and the rigid bodies' principal moments', which
 * scale with the body's mass unless given. */
static void finish_masses(Elab *e, const srd_model *m, ElabTangent *out)
{
    out->dof_mass = arena_alloc(e->arena, sizeof(double) * ((size_t)m->n_dofs + 1));
    memset(out->dof_mass, 0, sizeof(double) * ((size_t)m->n_dofs + 1));
    for (int d = 0; e->dof_mass && d < m->n_dofs; d++)
        out->dof_mass[d] = e->dof_mass[d].d;
    out->body_inertia = arena_alloc(e->arena, sizeof(double) * (3 * (size_t)m->n_bodies + 1));
    memset(out->body_inertia, 0, sizeof(double) * (3 * (size_t)m->n_bodies + 1));
    for (int k = 0; k < m->n_bodies && k < e->rigids.n; k++) {
        const ElabRigid *r = &e->rigids.a[k];
        for (int c = 0; c < 3 && !r->inertia_given && r->mass.v > 0; c++)
            out->body_inertia[3 * k + c] = m->bodies[k].inertia[c] * r->mass.d / r->mass.v;
    }
}

static void finish_loads(Elab *e, ElabTangent *out)
{
    out->loads = arena_alloc(e->arena, sizeof(double) * (3 * (size_t)e->loads.n + 1));
    for (int i = 0; i < e->loads.n; i++)
        for (int c = 0; c < 3; c++)
            out->loads[3 * i + c] = e->loads.a[i].f[c].d;
}

/* The columns a param moves, known without elaborating again when no dependence was lost. */
static void mark_columns(Elab *e, srd_model *m)
{
    if (e->dep_lost)
        return;
    for (int s = 0; s < m->n_sets; s++) {
        free(m->sets[s].param_column);
        m->sets[s].param_column = srd_xcalloc((size_t)m->sets[s].n_data + 1, 1);
        if (s < e->n_row_sets)
            memcpy(m->sets[s].param_column, e->row_dep[s], (size_t)m->sets[s].n_data);
    }
}

/* Each object's own contact radius' derivative (srd_contact_radius): a rod's radius, half a
 * shell's thickness; zero when `contact` gives the radius (the pairs' then, ElabTangent.pairs). */
static double *contact_radii(Elab *e, const srd_model *m)
{
    double *d = arena_alloc(e->arena, sizeof(double) * ((size_t)e->objs.n + 1));
    for (int i = 0; i < e->objs.n; i++) {
        bool shell = i < m->n_objects && m->objects[i].kind == SRD_OBJ_SHELL;
        d[i] = m->self_contact.radius > 0 ? 0 : shell ? 0.5 * e->objs.a[i].thickness.d : e->objs.a[i].radius.d;
    }
    return d;
}

void elab_tangent_finish(Elab *e, srd_model *m, ElabTangent *out)
{
    mark_columns(e, m);
    if (!out)
        return;
    finish_rows(e, m, out);
    finish_masses(e, m, out);
    finish_loads(e, out);
    out->object_rho = arena_alloc(e->arena, sizeof(double) * ((size_t)e->objs.n + 1));
    out->object_E = arena_alloc(e->arena, sizeof(double) * ((size_t)e->objs.n + 1));
    for (int i = 0; i < e->objs.n; i++) {
        out->object_rho[i] = e->objs.a[i].rho.d;
        out->object_E[i] = e->objs.a[i].E.d;
    }
    for (int c = 0; c < 3; c++)
        out->gravity[c] = e->env.gravity[c].d;
    out->medium_density = e->env.medium_density.d;
    out->damping_alpha = e->env.damping_alpha.d;
    out->damping_beta = e->env.damping_beta.d;
    for (int k = 0; k < 5; k++)
        out->pairs[k] = e->env.contact[k].d;
    out->object_contact_radius = contact_radii(e, m);
    out->control_init = arena_alloc(e->arena, sizeof(double) * ((size_t)m->control.n_data + 1));
    memset(out->control_init, 0, sizeof(double) * ((size_t)m->control.n_data + 1));
    if (e->control_dinit_n)
        memcpy(out->control_init, e->control_dinit, sizeof(double) * (size_t)e->control_dinit_n);
    for (int i = 0; i < e->releases.n; i++)
        out->moves_release |= e->releases.a[i].dtime != 0;
    out->switched = e->tan_switch;
    out->lost = e->tan_lost;
}

void elab_tangent_free(Elab *e)
{
    for (int s = 0; s < e->n_row_sets; s++)
        free(e->row_tan[s]), free(e->row_dep[s]);
    free(e->row_tan), free(e->row_dep), free(e->row_cap);
    free(e->dof_mass), free(e->control_dinit);
    e->row_tan = NULL, e->row_dep = NULL, e->row_cap = NULL, e->n_row_sets = 0, e->dof_mass = NULL;
    e->control_dinit = NULL, e->control_dinit_n = 0;
}
