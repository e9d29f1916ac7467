/* query.c — what the C API reads of a model and its simulation: objects, element sets, probes,
 * energies, reaction and contact forces. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "instance.h"
#include "probe.h"

/* ---- objects and element sets ---- */

int srd_object_count(const srd_instance *inst) { return inst ? inst->m->n_objects : 0; }

const char *srd_object_name(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < inst->m->n_objects ? inst->m->objects[k].name : NULL;
}

const char *srd_object_kind(const srd_instance *inst, int k)
{
    static const char *const kinds[] = { "rod", "shell", "body", "lattice", "solid" };
    if (!inst || k < 0 || k >= inst->m->n_objects)
        return NULL;
    int kind = inst->m->objects[k].kind;
    return kind >= 0 && kind < 5 ? kinds[kind] : "?";
}

int srd_object_index(const srd_instance *inst, const char *name)
{
    for (int k = 0; inst && name && k < inst->m->n_objects; k++)
        if (!strcmp(inst->m->objects[k].name, name))
            return k;
    return -1;
}

const int *srd_object_nodes(const srd_instance *inst, int k, int *n_nodes)
{
    bool ok = inst && k >= 0 && k < inst->m->n_objects;
    if (n_nodes)
        *n_nodes = ok ? inst->m->objects[k].n_nodes : 0;
    return ok ? inst->m->objects[k].nodes : NULL;
}

int srd_element_set_count(const srd_instance *inst) { return inst ? inst->m->n_sets : 0; }

const char *srd_element_set_kind(const srd_instance *inst, int k, int *n, int *n_node)
{
    bool ok = inst && k >= 0 && k < inst->m->n_sets;
    if (n)
        *n = ok ? inst->m->sets[k].n : 0;
    if (n_node)
        *n_node = ok ? inst->m->sets[k].n_node : 0;
    return ok ? inst->m->sets[k].kind : NULL;
}

const int *srd_element_set_nodes(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < inst->m->n_sets ? inst->m->sets[k].nodes : NULL;
}

/* ---- probes ---- */

static const srd_analysis *probes(const srd_instance *inst) { return &inst->m->simulate; }

int srd_probe_count(const srd_instance *inst) { return inst ? probes(inst)->n_probes : 0; }

const char *srd_probe_name(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < probes(inst)->n_probes ? probes(inst)->probes[k].name : NULL;
}

int srd_probe_index(const srd_instance *inst, const char *name)
{
    for (int k = 0; inst && name && k < probes(inst)->n_probes; k++)
        if (!strcmp(probes(inst)->probes[k].name, name))
            return k;
    return -1;
}

int srd_probe_size(const srd_instance *inst, int k)
{
    return inst && k >= 0 && k < probes(inst)->n_probes ? srd_probe_width(&probes(inst)->probes[k]) : 0;
}

srd_status srd_read_probe_at(srd_instance *inst, int k, double *values, int n)
{
    API_CHECK(inst);
    if (k < 0 || k >= probes(inst)->n_probes)
        return api_fail(inst, SRD_ERR_ARGUMENT, "there is no probe %d (the simulate block has %d)", k,
                        probes(inst)->n_probes);
    const srd_probe *p = &probes(inst)->probes[k];
    if (!values || n < srd_probe_width(p))
        return api_fail(inst, SRD_ERR_ARGUMENT, "probe `%s` gives %d values, but room for %d was given", p->name,
                        srd_probe_width(p), values ? n : 0);
    api_views_to_state(inst);
    double v[6];
    srd_probe_value(&inst->s, p, v);
    memcpy(values, v, sizeof(double) * (size_t)srd_probe_width(p));
    return SRD_OK;
}

srd_status srd_read_probe(srd_instance *inst, const char *name, double *values, int n)
{
    API_CHECK(inst);
    int k = srd_probe_index(inst, name);
    if (k < 0)
        return api_fail(inst, SRD_ERR_ARGUMENT, "the simulate block has no probe `%s`", name ? name : "(NULL)");
    return srd_read_probe_at(inst, k, values, n);
}

/* ---- energies and forces ---- */

srd_status srd_energy(srd_instance *inst, double *kinetic, double *potential)
{
    API_CHECK(inst);
    api_views_to_state(inst);
    if (kinetic)
        *kinetic = srd_kinetic_energy(&inst->s);
    if (potential)
        *potential = srd_potential_energy(&inst->s);
    return SRD_OK;
}

static srd_status check_force_array(srd_instance *inst, const double *force, int n)
{
    API_CHECK(inst);
    if (!force || n < inst->m->n_dofs)
        return api_fail(inst, SRD_ERR_ARGUMENT, "a force array needs one entry per DOF (%d), but room for %d was given",
                        inst->m->n_dofs, force ? n : 0);
    return SRD_OK;
}

srd_status srd_reaction_forces(srd_instance *inst, double *force, int n)
{
    srd_status st = check_force_array(inst, force, n);
    if (st != SRD_OK)
        return st;
    api_views_to_state(inst);
    srd_sim_reactions(&inst->s, force);
    return SRD_OK;
}

srd_status srd_contact_forces(srd_instance *inst, int target, double *force, int n)
{
    srd_status st = check_force_array(inst, force, n);
    if (st != SRD_OK)
        return st;
    if (target < -2 || target >= inst->m->n_obstacles)
        return api_fail(inst, SRD_ERR_ARGUMENT, "contact target %d: -1 is the ground, -2 all, 0 to %d the obstacles",
                        target, inst->m->n_obstacles - 1);
    api_views_to_state(inst);
    memset(force, 0, sizeof(double) * (size_t)inst->m->n_dofs);
    srd_sim_contact_forces(&inst->s, target, force);
    return SRD_OK;
}
