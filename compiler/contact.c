/* contact.c — contact between the model's own parts (`contact self`, `contact a, b { ... }`):
 * checks that every part's contact radius fits its discretisation and creates the dynamic
 * element sets (edge_contact, edge_friction of std.contact) whose pairs the runtime finds
 * during a run (runtime/contact/pairs.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "diag.h"
#include "elab_internal.h"

/* `contact self` takes every rod. */
static void take_every_rod(srd_model *m, srd_self_contact *c)
{
    for (int o = 0; o < m->n_objects; o++)
        if (m->objects[o].kind == SRD_OBJ_ROD) {
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

/* Edges that share a node never touch each other; the next ones along a rod are one edge apart
 * at rest, so the contact must not reach that far: 2 r + delta below the shortest edge. */
static bool radius_fits(const srd_model *m, const Stmt *s, int o)
{
    const srd_object *ob = &m->objects[o];
    double r = srd_contact_radius(m, o), delta = m->self_contact.delta;
    if (!(r > 0)) {
        Diag *d = diag_error(s->loc, "the contact radius of `%s` is zero", ob->name);
        diag_hint(d, "give the rod a `radius`, or the contact block a `radius`");
        return false;
    }
    double edge = shortest_edge(m, ob);
    if (2 * r + delta >= edge) {
        Diag *d = diag_error(s->loc,
                             "the contact thickness of `%s`, 2 x %g mm plus delta %g mm, reaches past its shortest "
                             "edge (%g mm): edges one apart would touch at rest",
                             ob->name, 1e3 * r, 1e3 * delta, 1e3 * edge);
        diag_hint(d, "use fewer nodes, or a smaller `radius` or `delta` in the contact block");
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
}

bool contact_add_pairs(Elab *e, srd_model *m)
{
    srd_self_contact *c = &m->self_contact;
    if (!c->present || !e->contact)
        return true;
    if (c->n_objects == 0)
        take_every_rod(m, c);
    if (c->n_objects == 0) {
        Diag *d = diag_error(e->contact->loc, "`contact self` needs rods, and this model has none");
        diag_hint(d, "contact between parts acts on rods' edges; the ground and obstacles have their own blocks");
        return false;
    }
    bool ok = true;
    for (int k = 0; k < c->n_objects; k++)
        ok &= radius_fits(m, e->contact, c->objects[k]);
    if (ok)
        add_sets(m, c);
    return ok;
}
