/* contact.c — contact between the model's own parts (`contact self`, `contact a, b { ... }`):
 * checks that every part's contact radius fits its discretisation and creates the dynamic
 * element sets (edge_contact, node_triangle_contact and their friction, of std.contact) whose
 * pairs the runtime finds during a run (runtime/contact/pairs.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "diag.h"
#include "elab_internal.h"

/* `contact self` takes every rod and shell. */
static void take_every_part(srd_model *m, srd_self_contact *c)
{
    for (int o = 0; o < m->n_objects; o++)
        if (m->objects[o].kind == SRD_OBJ_ROD || m->objects[o].kind == SRD_OBJ_SHELL) {
            c->objects = elab_grow(c->objects, sizeof *c->objects * (size_t)(c->n_objects + 1));
            c->objects[c->n_objects++] = o;
        }
}

static double shortest_edge(const srd_model *m, const srd_object *ob)
{
    double shortest = INFINITY;
    for (int k = 0; k < ob->n_edges; k++)
        shortest = fmin(shortest, m->edge_rest[ob->first_edge + k]);
    return shortest;
}

/* The smallest height of a shell's triangles at the reference: how close a node comes to a
 * triangle it is not a corner of, across the edge of a neighbouring triangle. */
static double lowest_altitude(const srd_model *m, const srd_object *ob)
{
    double lowest = INFINITY;
    for (int t = ob->first_tri; t < ob->first_tri + ob->n_tris; t++) {
        const double *a = &m->x0[3 * m->tri_nodes[3 * t]], *b = &m->x0[3 * m->tri_nodes[3 * t + 1]],
                     *c = &m->x0[3 * m->tri_nodes[3 * t + 2]];
        double u[3], v[3], w[3], n[3];
        for (int k = 0; k < 3; k++) {
            u[k] = b[k] - a[k];
            v[k] = c[k] - a[k];
            w[k] = c[k] - b[k];
        }
        n[0] = u[1] * v[2] - u[2] * v[1];
        n[1] = u[2] * v[0] - u[0] * v[2];
        n[2] = u[0] * v[1] - u[1] * v[0];
        double area2 = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        double longest = sqrt(fmax(fmax(u[0] * u[0] + u[1] * u[1] + u[2] * u[2], v[0] * v[0] + v[1] * v[1] + v[2] * v[2]),
                                   w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
        lowest = fmin(lowest, area2 / longest);
    }
    return lowest;
}

/* Parts that share a node never touch each other; the nearest others are an edge apart along a
 * rod and a triangle's height apart in a shell at rest, so the contact must not reach that far:
 * 2 r + delta below that distance. */
static bool radius_fits(const srd_model *m, const Stmt *s, int o)
{
    const srd_object *ob = &m->objects[o];
    bool shell = ob->kind == SRD_OBJ_SHELL;
    double r = srd_contact_radius(m, o), delta = m->self_contact.delta;
    if (!(r > 0)) {
        Diag *d = diag_error(s->loc, "the contact radius of `%s` is zero", ob->name);
        diag_hint(d, shell ? "give the shell a `thickness`, or the contact block a `radius`"
                           : "give the rod a `radius`, or the contact block a `radius`");
        return false;
    }
    double room = shell ? fmin(shortest_edge(m, ob), lowest_altitude(m, ob)) : shortest_edge(m, ob);
    if (2 * r + delta >= room) {
        Diag *d = diag_error(s->loc,
                             "the contact thickness of `%s`, 2 x %g mm plus delta %g mm, reaches past its shortest "
                             "%s (%g mm): %s would touch at rest",
                             ob->name, 1e3 * r, 1e3 * delta, shell ? "triangle height" : "edge", 1e3 * room,
                             shell ? "neighbouring triangles" : "edges one apart");
        diag_hint(d, "use a coarser mesh or fewer nodes, or a smaller `radius` or `delta` in the contact block");
        return false;
    }
    return true;
}

static void add_sets(srd_model *m, srd_self_contact *c)
{
    static const char *contact[] = { "kc", "delta", "h" };
    static const char *friction[] = { "kc", "delta", "h", "mu", "slip_velocity", "which" };
    c->edge_set = srd_model_elemset(m, "edge_contact", 4, 0, 3, contact);
    m->sets[c->edge_set].dynamic = 1;
    if (c->friction > 0) {
        c->friction_set = srd_model_elemset(m, "edge_friction", 5, 0, 6, friction);
        m->sets[c->friction_set].dynamic = 1;
    }
    bool shells = false;
    for (int k = 0; k < c->n_objects; k++)
        shells |= m->objects[c->objects[k]].kind == SRD_OBJ_SHELL;
    if (!shells)
        return;
    c->tri_set = srd_model_elemset(m, "node_triangle_contact", 4, 0, 3, contact);
    m->sets[c->tri_set].dynamic = 1;
    if (c->friction > 0) {
        c->tri_friction_set = srd_model_elemset(m, "node_triangle_friction", 5, 0, 6, friction);
        m->sets[c->tri_friction_set].dynamic = 1;
    }
}

bool contact_add_pairs(Elab *e, srd_model *m)
{
    srd_self_contact *c = &m->self_contact;
    if (!c->present || !e->contact)
        return true;
    if (c->n_objects == 0)
        take_every_part(m, c);
    if (c->n_objects == 0) {
        Diag *d = diag_error(e->contact->loc, "`contact self` needs rods or shells, and this model has none");
        diag_hint(d, "contact between parts acts on rods and shells; the ground and obstacles have their own blocks");
        return false;
    }
    bool ok = true;
    for (int k = 0; k < c->n_objects; k++)
        ok &= radius_fits(m, e->contact, c->objects[k]);
    if (ok)
        add_sets(m, c);
    return ok;
}
