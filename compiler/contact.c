/* contact.c — contact between the model's own parts (`contact self`, `contact a, b { ... }`):
 * checks that every part's contact radius fits its discretisation (and that bodies have a shape
 * to touch with) and creates the dynamic element sets of std.contact whose pairs the runtime
 * finds during a run (runtime/contact/pairs.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "diag.h"
#include "elab_internal.h"

static const srd_body *body_of(const srd_model *m, int o)
{
    int b = srd_model_body_of(m, o);
    return b >= 0 ? &m->bodies[b] : NULL;
}

/* `contact self` takes every rod and shell, and every rigid body with a shape it can touch with. */
static void take_every_part(srd_model *m, srd_self_contact *c)
{
    for (int o = 0; o < m->n_objects; o++) {
        const srd_body *b = m->objects[o].kind == SRD_OBJ_BODY ? body_of(m, o) : NULL;
        bool touches = b && b->shape != SRD_SHAPE_NONE && b->shape != SRD_SHAPE_MESH && !b->world;
        if (m->objects[o].kind == SRD_OBJ_ROD || m->objects[o].kind == SRD_OBJ_SHELL || touches) {
            c->objects = elab_grow(c->objects, sizeof *c->objects * (size_t)(c->n_objects + 1));
            c->objects[c->n_objects++] = o;
        }
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
        double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        double longest = sqrt(fmax(fmax(uu, vv),
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

/* The std.contact element sets of each kind of pair (SRD_PAIR_*): their stencils' nodes (a body
 * counts as one) and data columns. */
static const char *const contact_data[] = { "kc", "delta", "h" };
static const char *const friction_data[] = { "kc", "delta", "h", "mu", "slip_velocity", "which" };
static const char *const body_data[] = { "kc", "delta", "h", "shape", "r", "l", "hx", "hy", "hz" };
static const char *const body_friction_data[] = { "kc", "delta", "h", "mu", "slip_velocity", "shape", "r", "l",
                                                  "hx", "hy", "hz" };
static const char *const edge_body_data[] = { "kc", "delta", "h", "r", "l" };
static const char *const edge_body_friction_data[] = { "kc", "delta", "h", "mu", "slip_velocity", "r", "l", "which" };
static const struct {
    const char *kind;
    int         nodes, n_data;
    const char *const *data;
} pair_sets[SRD_PAIR_SETS] = {
    [SRD_PAIR_EDGE] = { "edge_contact", 4, 3, contact_data },
    [SRD_PAIR_EDGE_FRICTION] = { "edge_friction", 5, 6, friction_data },
    [SRD_PAIR_TRI] = { "node_triangle_contact", 4, 3, contact_data },
    [SRD_PAIR_TRI_FRICTION] = { "node_triangle_friction", 5, 6, friction_data },
    [SRD_PAIR_BODY] = { "node_body_contact", 2, 9, body_data },
    [SRD_PAIR_BODY_FRICTION] = { "node_body_friction", 2, 11, body_friction_data },
    [SRD_PAIR_BODY_FRICTION_BODY] = { "body_node_friction", 2, 11, body_friction_data },
    [SRD_PAIR_EDGE_BODY] = { "edge_body_contact", 3, 5, edge_body_data },
    [SRD_PAIR_EDGE_BODY_FRICTION] = { "edge_body_friction", 4, 8, edge_body_friction_data },
    [SRD_PAIR_EDGE_BODY_FRICTION_BODY] = { "edge_body_friction_on_body", 3, 7, edge_body_friction_data },
};

static void add_set(srd_model *m, srd_self_contact *c, int k)
{
    c->set[k] = srd_model_elemset(m, pair_sets[k].kind, pair_sets[k].nodes, 0, pair_sets[k].n_data, pair_sets[k].data);
    m->sets[c->set[k]].dynamic = 1;
}

/* The sets this model's pairs need: edges of rods and shells, nodes against shells' triangles,
 * nodes against bodies, edges against capsules and spheres; friction with each. */
static void add_sets(srd_model *m, srd_self_contact *c)
{
    bool parts = false, shells = false, bodies = false, round = false;
    for (int k = 0; k < c->n_objects; k++) {
        int kind = m->objects[c->objects[k]].kind;
        const srd_body *b = kind == SRD_OBJ_BODY ? body_of(m, c->objects[k]) : NULL;
        parts |= kind == SRD_OBJ_ROD || kind == SRD_OBJ_SHELL;
        shells |= kind == SRD_OBJ_SHELL;
        bodies |= b != NULL;
        round |= b && (b->shape == SRD_SHAPE_SPHERE || b->shape == SRD_SHAPE_CAPSULE);
    }
    bool friction = c->friction > 0;
    for (int k = 0; k < SRD_PAIR_SETS; k++) {
        bool rubs = k == SRD_PAIR_EDGE_FRICTION || k == SRD_PAIR_TRI_FRICTION || k == SRD_PAIR_BODY_FRICTION ||
                    k == SRD_PAIR_BODY_FRICTION_BODY || k == SRD_PAIR_EDGE_BODY_FRICTION ||
                    k == SRD_PAIR_EDGE_BODY_FRICTION_BODY;
        bool needed = k <= SRD_PAIR_EDGE_FRICTION ? parts : k <= SRD_PAIR_TRI_FRICTION ? shells
                      : k <= SRD_PAIR_BODY_FRICTION_BODY ? parts && bodies : parts && round;
        if (needed && (friction || !rubs))
            add_set(m, c, k);
    }
}

/* A body takes part through its shape: a box, sphere, capsule or cylinder. */
static bool body_fits(const srd_model *m, const Stmt *s, int o)
{
    const srd_body *b = body_of(m, o);
    const char *name = m->objects[o].name;
    if (!b || b->shape == SRD_SHAPE_NONE) {
        Diag *d = diag_error(s->loc, "`%s` has no shape to touch with", name);
        diag_hint(d, "give the body a `shape` (box, sphere, capsule, cylinder), or leave it out of `contact`");
        return false;
    }
    if (b->shape == SRD_SHAPE_MESH) {
        Diag *d = diag_error(s->loc, "`%s` is shaped by a mesh, which contact between parts cannot use yet", name);
        diag_hint(d, "give it the box, capsule or cylinder that bounds it, or leave it out of `contact`");
        return false;
    }
    return true;
}

bool contact_add_pairs(Elab *e, srd_model *m)
{
    srd_self_contact *c = &m->self_contact;
    if (!c->present || !e->contact)
        return true;
    if (c->n_objects == 0)
        take_every_part(m, c);
    bool parts = false;
    for (int k = 0; k < c->n_objects; k++)
        parts |= m->objects[c->objects[k]].kind != SRD_OBJ_BODY;
    if (!parts) {
        Diag *d = diag_error(e->contact->loc, "`contact` needs rods or shells, and %s",
                             c->n_objects ? "names only bodies (which do not touch each other)"
                                          : "this model has none");
        diag_hint(d, "contact between parts acts on rods and shells; the ground and obstacles have their own blocks");
        return false;
    }
    bool ok = true;
    for (int k = 0; k < c->n_objects; k++)
        ok &= m->objects[c->objects[k]].kind == SRD_OBJ_BODY ? body_fits(m, e->contact, c->objects[k])
                                                              : radius_fits(m, e->contact, c->objects[k]);
    if (ok)
        add_sets(m, c);
    return ok;
}
