/* test_elab.c — unit tests of elaboration (elab.c, objects.c, select.c, analysis.c,
 * finalize.c): node, edge and element counts, masses, DOF numbering and bandwidth, junctions,
 * joins, boundary conditions, planar mode, selections and actuation instances. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "elab_internal.h"
#include "parse.h"
#include "diag_capture.h"

static const double PI = 3.14159265358979323846;

#include "tap.h"

static bool close_rel(double a, double b, double rel) { return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)); }

static Arena arena;
static char last_diags[8192];

/* Parses and elaborates `text` as the file `name`; the diagnostics land in last_diags. */
static srd_model *build(const char *text)
{
    diag_reset();
    Program prog = { 0 };
    srd_model *m = NULL;
    if (parse_program_text(&arena, "elab_test.srd", text, strlen(text), parse_stdlib_dir(), &prog))
        m = elab_program(&prog, &arena, "elab_test.srd");
    diag_capture(last_diags, sizeof last_diags);
    diag_reset();
    return m;
}

/* Builds a model that must check cleanly; prints the diagnostics otherwise. */
static srd_model *build_ok(Tally *t, const char *what, const char *text)
{
    srd_model *m = build(text);
    check(t, m != NULL, "%s: elaborates without errors", what);
    if (!m)
        printf("# %s", last_diags);
    return m;
}

static const srd_elemset *find_set(const srd_model *m, const char *kind)
{
    for (int i = 0; i < m->n_sets; i++)
        if (!strcmp(m->sets[i].kind, kind))
            return &m->sets[i];
    return NULL;
}

static int set_count(const srd_model *m, const char *kind)
{
    const srd_elemset *s = find_set(m, kind);
    return s ? s->n : 0;
}

static int set_index(const srd_model *m, const char *kind)
{
    for (int i = 0; i < m->n_sets; i++)
        if (!strcmp(m->sets[i].kind, kind))
            return i;
    return -1;
}

static int dofs_of_kind(const srd_model *m, int kind)
{
    int n = 0;
    for (int i = 0; i < m->n_dofs; i++)
        n += m->dof_kind[i] == kind;
    return n;
}

#define MATERIAL "material rubber { E = 2 MPa; nu = 0.5; rho = 1200 kg/m^3; }\n"

/* ---- one rod ---- */

static void test_single_rod(Tally *t)
{
    srd_model *m = build_ok(t, "a straight rod of 51 nodes",
                            MATERIAL "rod finger { path = line((0, 0, 0) m, (0.1, 0, 0) m); nodes = 51; radius = 1 mm; "
                                     "material = rubber; }\n");
    if (!m)
        return;
    check(t, m->n_objects == 1 && m->objects[0].kind == SRD_OBJ_ROD && !strcmp(m->objects[0].name, "finger"),
          "one rod object named finger");
    check(t, m->n_nodes == 51 && m->n_edges == 50 && m->n_tris == 0, "51 nodes, 50 edges, no triangles");
    check(t, m->n_dofs == 51 * 3 + 50, "3 DOFs per node and one twist per edge: %d DOFs", m->n_dofs);
    check(t, dofs_of_kind(m, SRD_DOF_TWIST) == 50 && dofs_of_kind(m, SRD_DOF_XI) == 0, "50 twist DOFs, no xi");
    check(t, set_count(m, "stretch") == 50, "one stretch element per edge (%d)", set_count(m, "stretch"));
    check(t, set_count(m, "bend_twist") == 49, "one bend-twist element per interior node (%d)", set_count(m, "bend_twist"));
    check(t, m->bandwidth == 10, "half-bandwidth of a single rod after ordering is 10 (got %d)", m->bandwidth);
    check(t, m->bandwidth_natural > m->bandwidth, "the ordering reduces the bandwidth (%d -> %d)", m->bandwidth_natural,
          m->bandwidth);
    check(t, m->n_fixed == 0 && !m->planar, "nothing fixed, not planar");

    /* Every node's x, y, z are consecutive DOFs; each DOF has one owner. */
    bool consecutive = true;
    int *seen = calloc((size_t)m->n_dofs, sizeof(int));
    for (int i = 0; i < m->n_nodes; i++)
        for (int c = 0; c < 3; c++) {
            int d = m->node_dof[i] + c;
            consecutive &= d >= 0 && d < m->n_dofs && m->dof_kind[d] == SRD_DOF_NODE_X + c && m->dof_owner[d] == i;
            if (d >= 0 && d < m->n_dofs)
                seen[d]++;
        }
    for (int e = 0; e < m->n_edges; e++) {
        int d = m->edge_twist[e];
        consecutive &= d >= 0 && d < m->n_dofs && m->dof_kind[d] == SRD_DOF_TWIST && m->dof_owner[d] == e &&
                       m->edge_xi[e] == -1;
        if (d >= 0 && d < m->n_dofs)
            seen[d]++;
    }
    bool each_once = true;
    for (int d = 0; d < m->n_dofs; d++)
        each_once &= seen[d] == 1;
    free(seen);
    check(t, consecutive, "node DOFs are x, y, z in a row; every edge has a twist DOF");
    check(t, each_once, "the DOF numbering is a permutation");

    /* Masses: rho A l lumped half to each end of every edge. */
    double A = PI * 1e-6, rho = 1200, L = 0.1, l = L / 50;
    check(t, close_rel(srd_model_total_mass(m), rho * A * L, 1e-9), "total mass rho A L = %.6g kg (got %.6g)",
          rho * A * L, srd_model_total_mass(m));
    check(t, close_rel(m->objects[0].mass, rho * A * L, 1e-9), "the rod object's mass");
    check(t, close_rel(m->node_mass[0], 0.5 * rho * A * l, 1e-9) && close_rel(m->node_mass[50], 0.5 * rho * A * l, 1e-9),
          "end nodes carry half an edge's mass");
    check(t, close_rel(m->node_mass[25], rho * A * l, 1e-9), "interior nodes carry a whole edge's mass");
    check(t, close_rel(m->dof_mass[m->node_dof[25] + 2], m->node_mass[25], 1e-12), "each node DOF has the node's mass");
    double I = PI * 1e-12 / 4;
    check(t, close_rel(m->dof_mass[m->edge_twist[7]], rho * 2 * I * l, 1e-9), "a twist DOF has rho (I1 + I2) l");
    check(t, close_rel(m->objects[0].length, L, 1e-12) && close_rel(m->edge_rest[3], l, 1e-9), "rest lengths");

    /* The stencil of a bend-twist element: three consecutive nodes, the two edges between. */
    const srd_elemset *b = find_set(m, "bend_twist");
    bool stencils = b != NULL;
    for (int i = 0; b && i < b->n; i++) {
        int a = b->nodes[3 * i], c = b->nodes[3 * i + 1], d = b->nodes[3 * i + 2];
        stencils &= c - a == 1 && d - c == 1 && b->object[i] == 0;
        stencils &= b->edges[2 * i] == a && b->edges[2 * i + 1] == c;
    }
    check(t, stencils, "bend-twist stencils are (i-1, i, i+1) with edges (i-1, i)");
    srd_model_free(m);
}

/* ---- rods of every path kind ---- */

static void test_paths(Tally *t)
{
    srd_model *m = build_ok(t, "a closed circle",
                            MATERIAL "rod ring { path = circle((0, 0, 0) m, 5 cm); nodes = 24; radius = 1 mm; material = rubber; }\n");
    if (m) {
        check(t, m->n_nodes == 24 && m->n_edges == 24 && m->objects[0].closed, "a circle of 24 nodes has 24 edges");
        check(t, set_count(m, "bend_twist") == 24, "every node of a loop is interior (%d bend-twist)",
              set_count(m, "bend_twist"));
        srd_model_free(m);
    }
    m = build_ok(t, "a rod by spacing",
                 MATERIAL "rod r { path = line((0, 0, 0) m, (10, 0, 0) cm); spacing = 5 mm; radius = 1 mm; material = rubber; }\n");
    if (m) {
        check(t, m->n_nodes == 21, "10 cm at 5 mm spacing gives 21 nodes (got %d)", m->n_nodes);
        srd_model_free(m);
    }
    m = build_ok(t, "a polyline",
                 MATERIAL "rod r { path = polyline((0, 0, 0) m, (1, 0, 0) cm, (1, 1, 0) cm); nodes = 5; radius = 1 mm; material = rubber; }\n");
    if (m) {
        check(t, m->n_nodes == 5 && m->n_edges == 4, "a polyline of 5 nodes");
        check(t, close_rel(m->objects[0].length, 0.02, 1e-9), "its length is the sum of its segments");
        srd_model_free(m);
    }
    m = build_ok(t, "a rectangular section",
                 MATERIAL "rod r { path = line((0, 0, 0) m, (10, 0, 0) cm); nodes = 3; section = rectangular(20 mm, 1 mm); material = rubber; }\n");
    if (m) {
        check(t, close_rel(m->objects[0].area, 2e-5, 1e-12) && close_rel(m->objects[0].I1, 0.02 * 1e-9 / 12, 1e-9),
              "area w h and I1 = w h^3 / 12");
        check(t, close_rel(m->objects[0].mass, 1200 * 2e-5 * 0.1, 1e-9), "mass from the section's area");
        srd_model_free(m);
    }
}

/* ---- joins and junctions ---- */

static void test_joins(Tally *t)
{
    srd_model *m = build_ok(t, "two rods joined end to start",
                            MATERIAL
                            "rod a { path = line((0, 0, 0) m, (10, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
                            "rod b { path = line((10, 0, 0) cm, (20, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
                            "join a.end, b.start;\n");
    if (m) {
        check(t, m->n_nodes == 21 && m->n_edges == 20, "the joined node is shared: 21 nodes (got %d)", m->n_nodes);
        check(t, m->objects[0].nodes[10] == m->objects[1].nodes[0], "a.end and b.start are one model node");
        const srd_elemset *b = find_set(m, "bend_twist");
        int junction = 0;
        for (int i = 0; b && i < b->n; i++)
            junction += b->object[i] == -1;
        check(t, set_count(m, "bend_twist") == 19 && junction == 1, "9 + 9 bend-twist and one across the junction (%d, %d)",
              set_count(m, "bend_twist"), junction);
        check(t, close_rel(srd_model_total_mass(m), 2 * 1200 * PI * 1e-6 * 0.1, 1e-9), "joining keeps the total mass");
        srd_model_free(m);
    }

    /* Three rods at one point: every pair of their edges there gets a spring. */
    m = build_ok(t, "a three-way junction",
                 MATERIAL
                 "for i in 0..3 { let a = 2*pi*i/3;\n"
                 "  rod leg[i] { path = line((0, 0, 0) m, (4 cm * cos(a), 4 cm * sin(a), 0 m)); nodes = 5; radius = 1 mm; material = rubber; } }\n"
                 "join leg[0].start, leg[1].start, leg[2].start;\n");
    if (m) {
        check(t, m->n_objects == 3 && !strcmp(m->objects[2].name, "leg[2]"), "loop-declared objects are named leg[i]");
        check(t, m->n_nodes == 13, "15 nodes minus 2 merged (got %d)", m->n_nodes);
        const srd_elemset *b = find_set(m, "bend_twist");
        int junction = 0;
        for (int i = 0; b && i < b->n; i++)
            junction += b->object[i] == -1;
        check(t, junction == 3 && set_count(m, "bend_twist") == 3 * 3 + 3,
              "3 interior springs per leg and 3 junction pairs (%d total, %d junction)", set_count(m, "bend_twist"),
              junction);
        srd_model_free(m);
    }

    /* A hub body joined to the legs: its mass adds to the shared node. */
    m = build_ok(t, "legs joined to a body",
                 MATERIAL "body hub { position = (0, 0, 0) m; mass = 20 g; }\n"
                          "for i in 0..4 { let a = pi*i/2;\n"
                          "  rod leg[i] { path = line((0, 0, 0) m, (4 cm * cos(a), 4 cm * sin(a), 0 m)); nodes = 5; radius = 1 mm; material = rubber; }\n"
                          "  join leg[i].start, hub.node; }\n");
    if (m) {
        check(t, m->n_nodes == 17, "4 legs of 5 nodes share the hub node (got %d)", m->n_nodes);
        int hub = m->objects[0].nodes[0];
        double leg_edge = 1200 * PI * 1e-6 * 0.01;
        check(t, close_rel(m->node_mass[hub], 0.02 + 4 * 0.5 * leg_edge, 1e-9), "hub node mass: body plus four half edges");
        check(t, set_count(m, "bend_twist") == 4 * 3 + 6, "C(4, 2) = 6 junction springs (%d)", set_count(m, "bend_twist"));
        srd_model_free(m);
    }

    /* Joining node sets pairs them in order. */
    m = build_ok(t, "joined node ranges",
                 MATERIAL
                 "rod a { path = line((0, 0, 0) m, (10, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
                 "rod b { path = line((0, 0, 0) m, (10, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
                 "join a.nodes[0..3], b.nodes[0..3];\n");
    if (m) {
        check(t, m->n_nodes == 19, "three pairs merged: 19 nodes (got %d)", m->n_nodes);
        check(t, m->objects[0].nodes[2] == m->objects[1].nodes[2] && m->objects[0].nodes[3] != m->objects[1].nodes[3],
              "the pairs are a[i] = b[i] for i < 3 only");
        srd_model_free(m);
    }
    m = build(MATERIAL
              "rod a { path = line((0, 0, 0) m, (10, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
              "rod b { path = line((11, 0, 0) cm, (20, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
              "join a.end, b.start;\n");
    check(t, m == NULL && strstr(last_diags, "joined nodes must be at the same place"), "joining distant nodes fails");
    srd_model_free(m);
}

/* ---- boundary conditions ---- */

#define ARM "rod arm { path = line((0, 0, 0) m, (10, 0, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"

static int fixed_count(Tally *t, const char *what, const char *stmts)
{
    char text[2048];
    snprintf(text, sizeof text, MATERIAL ARM "%s", stmts);
    srd_model *m = build_ok(t, what, text);
    int n = m ? m->n_fixed : -1;
    srd_model_free(m);
    return n;
}

static void test_fixes(Tally *t)
{
    int n;
    n = fixed_count(t, "clamp a rod's start", "clamp arm.start;\n");
    check(t, n == 4, "clamping a rod end fixes its node and the end edge's twist (the next node slides): 4 (got %d)",
          n);
    n = fixed_count(t, "clamp both ends", "clamp arm.start;\nclamp arm.end;\n");
    check(t, n == 8, "both ends: 8 (got %d)", n);
    n = fixed_count(t, "clamp a middle node", "clamp arm.node(5);\n");
    check(t, n == 3, "a single interior node: 3 (got %d)", n);
    n = fixed_count(t, "clamp nodes where x <= 2 cm", "clamp arm.nodes where x <= 2 cm;\n");
    check(t, n == 3 * 3 + 2, "three nodes and the two edges between them: 11 (got %d)", n);
    n = fixed_count(t, "clamp a slice", "clamp arm.nodes[0..=2];\n");
    check(t, n == 11, "the same nodes by an inclusive slice: 11 (got %d)", n);
    n = fixed_count(t, "fix one component", "fix arm.node(3).z;\n");
    check(t, n == 1, "fix .z: 1 (got %d)", n);
    n = fixed_count(t, "fix components of a selection", "fix (arm.nodes where x >= 5 cm).y;\n");
    check(t, n == 6, "fix .y of six nodes: 6 (got %d)", n);
    n = fixed_count(t, "fix a twist", "fix arm.edge(2).theta;\n");
    check(t, n == 1, "fix an edge's theta: 1 (got %d)", n);
    n = fixed_count(t, "fix whole nodes", "fix arm.nodes[0..2];\n");
    check(t, n == 6, "fix two whole nodes (no twist): 6 (got %d)", n);
    n = fixed_count(t, "repeated fixes", "fix arm.node(3).z;\nfix arm.node(3);\nclamp arm.node(3);\n");
    check(t, n == 3, "fixing the same DOF again does not count twice: 3 (got %d)", n);

    char text[1024];
    snprintf(text, sizeof text, MATERIAL ARM "clamp arm.start;\n");
    srd_model *m = build(text);
    if (m) {
        int e0 = m->edge_twist[0], n0 = m->node_dof[0], n1 = m->node_dof[1];
        const double *a = m->slide_axis;
        double along = (m->x0[3] - m->x0[0]) * a[0] + (m->x0[4] - m->x0[1]) * a[1] + (m->x0[5] - m->x0[2]) * a[2];
        check(t, m->dof_fixed[e0] && m->dof_fixed[n0] && m->dof_fixed[n0 + 2] && !m->dof_fixed[n1] &&
                     !m->dof_fixed[n1 + 2] && !m->dof_fixed[m->edge_twist[1]] && m->n_slides == 1 &&
                     m->slide_node[0] == 1 && m->slide_anchor[0] == 0 && fabs(along - m->edge_rest[0]) < 1e-15,
              "the clamped DOFs are node 0 and edge 0's twist; node 1 slides along edge 0 from node 0");
        srd_model_free(m);
    }
    /* Something else holding node 1 in part: held in full, no slide. */
    snprintf(text, sizeof text, MATERIAL ARM "clamp arm.start;\nfix arm.node(1).z;\n");
    m = build(text);
    if (m) {
        check(t, m->n_fixed == 7 && m->n_slides == 0, "clamp plus a fix of node 1's z: node 1 held in full, 7 fixed, "
              "no slide (got %d, %d)", m->n_fixed, m->n_slides);
        srd_model_free(m);
    }

    /* Planar: y of every node is fixed and rods carry no twist. */
    snprintf(text, sizeof text, "planar;\n" MATERIAL ARM "clamp arm.start;\n");
    m = build_ok(t, "a planar rod", text);
    if (m) {
        check(t, m->planar && m->n_dofs == 33 && dofs_of_kind(m, SRD_DOF_TWIST) == 0, "planar: 33 DOFs, no twist");
        bool all_y = true;
        for (int i = 0; i < m->n_nodes; i++)
            all_y &= m->dof_fixed[m->node_dof[i] + 1];
        check(t, all_y, "planar: every node's y is fixed");
        check(t, m->n_fixed == 11 + 2 && m->n_slides == 1, "planar clamp: 11 y DOFs plus x, z of node 0, node 1 "
              "sliding (got %d)", m->n_fixed);
        check(t, m->bandwidth <= 8, "planar rod bandwidth (got %d)", m->bandwidth);
        srd_model_free(m);
    }

    /* Loads. */
    snprintf(text, sizeof text, MATERIAL ARM "clamp arm.start;\nload arm.end = (0, 0, -1) N;\n"
                                             "load arm.nodes where x > 7 cm = (0, 0, -1) mN * (1 + t / 1 s);\n");
    m = build_ok(t, "loads", text);
    if (m) {
        check(t, m->n_loads == 1 + 3, "one load on the end, one on each of three nodes (got %d)", m->n_loads);
        check(t, m->n_loads > 0 && m->loads[0].node == m->objects[0].nodes[10] && m->loads[0].f[2] == -1 &&
                     m->loads[0].expr == -1,
              "a constant load: its node and value, no run-time expression");
        check(t, m->n_loads == 4 && m->loads[1].expr >= 0 && m->loads[1].expr == m->loads[3].expr,
              "a time-dependent load shares one run-time expression");
        srd_model_free(m);
    }
}

/* The length of rod each bending spring of ARM (edges of 1 cm) stands for, by middle node. */
static bool spring_lengths(Tally *t, const char *what, const char *stmts, const double want[11])
{
    char text[2048];
    snprintf(text, sizeof text, MATERIAL ARM "%s", stmts);
    srd_model *m = build_ok(t, what, text);
    const srd_elemset *b = m ? find_set(m, "bend_twist") : NULL;
    int col = b ? srd_elemset_column(b, "voronoi_length") : -1;
    bool ok = b && col >= 0 && b->n == 9;
    for (int i = 0; ok && i < b->n; i++) {
        double got = b->data[i * b->n_data + col], expect = want[b->nodes[3 * i + 1]];
        if (!close_rel(got, expect, 1e-12)) {
            printf("# %s: the spring at node %d stands for %g m, not %g m\n", what, b->nodes[3 * i + 1], got, expect);
            ok = false;
        }
    }
    srd_model_free(m);
    return ok;
}

static void test_clamp_walls(Tally *t)
{
    const double l = 0.01;
    double want[11];
    for (int i = 0; i < 11; i++)
        want[i] = l;
    check(t, spring_lengths(t, "unclamped", "", want), "unclamped: every spring stands for one edge (its Voronoi length)");
    want[1] = 1.5 * l;
    check(t, spring_lengths(t, "clamp start", "clamp arm.start;\n", want),
          "clamp r.start: the spring at node 1 reaches the wall at node 0 (3l/2)");
    want[9] = 1.5 * l;
    check(t, spring_lengths(t, "clamp both ends", "clamp arm.start;\nclamp arm.end;\n", want),
          "clamp both ends: 3l/2 at nodes 1 and 9");
    for (int i = 0; i < 11; i++)
        want[i] = l;
    want[2] = 0.5 * l;
    check(t, spring_lengths(t, "clamped root", "clamp arm.nodes where x <= 2 cm;\n", want),
          "a clamped root (nodes 0-2) is rigid: the spring at its last node covers the half edge beyond (l/2)");
    want[2] = l;
    check(t, spring_lengths(t, "fixed, not clamped", "fix arm.nodes[0..2];\nfix arm.edge(0).theta;\n", want),
          "`fix` moves no wall: plain Voronoi lengths");

    /* A rod clamped at the node where a second rod (2 cm edges) joins it: the junction spring
     * there covers only the free rod's half edge. */
    srd_model *m = build_ok(t, "clamp at a junction",
                            MATERIAL ARM "rod b { path = line((10, 0, 0) cm, (10, 10, 0) cm); nodes = 6; radius = 1 mm; "
                                         "material = rubber; }\njoin arm.end, b.start;\nclamp arm.end;\n");
    const srd_elemset *b = m ? find_set(m, "bend_twist") : NULL;
    int col = b ? srd_elemset_column(b, "voronoi_length") : -1, hub = m ? m->objects[0].nodes[10] : -1;
    double at_hub = -1, before = -1;
    for (int i = 0; b && col >= 0 && i < b->n; i++) {
        int c = b->nodes[3 * i + 1];
        if (c == hub)
            at_hub = b->data[i * b->n_data + col];
        if (m && c == m->objects[0].nodes[9])
            before = b->data[i * b->n_data + col];
    }
    check(t, close_rel(at_hub, 0.01, 1e-12) && close_rel(before, 0.015, 1e-12),
          "clamped at a junction: the spring at the wall covers the other rod's half edge (%g m), the one before it "
          "3l/2 (%g m)", at_hub, before);
    srd_model_free(m);
}

/* ---- actuation and selections ---- */

static const srd_actuation *find_act(const srd_model *m, const char *target, const char *set_kind)
{
    for (int i = 0; i < m->n_actuations; i++)
        if (!strcmp(m->actuations[i].target, target) && !strcmp(m->sets[m->actuations[i].set].kind, set_kind))
            return &m->actuations[i];
    return NULL;
}

static void test_actuation(Tally *t)
{
    srd_model *m = build_ok(t, "curvature over s",
                            "param kappa0 = 15.7 /m;\n" MATERIAL
                            "rod finger { path = line((0, 0, 0) m, (0.1, 0, 0) m); nodes = 51; radius = 1 mm; material = rubber; }\n"
                            "clamp finger.start;\n"
                            "actuate finger.curvature over s in 0.25..1 = (kappa0 * sin(2*pi*3 Hz*t - 2*pi*s), 0);\n");
    if (m) {
        const srd_actuation *a = find_act(m, "curvature", "bend_twist");
        check(t, m->n_actuations == 1 && a, "one curvature actuation on the bend-twist set");
        check(t, a && a->n == 37, "interior nodes with s in [0.25, 1]: 13..49, 37 instances (got %d)", a ? a->n : -1);
        bool in_range = a != NULL;
        for (int i = 0; a && i < a->n; i++)
            in_range &= a->s[i] >= 0.25 && a->s[i] <= 1;
        check(t, in_range, "every instance's s lies in the range");
        check(t, a && a->expr >= 0, "the actuation has a run-time expression");
        check(t, m->n_params == 1 && !strcmp(m->params[0].name, "kappa0") && close_rel(m->params[0].value, 15.7, 1e-12) &&
                     !strcmp(m->params[0].unit, "1/m") && isinf(m->params[0].lo),
              "the run-time param kappa0 = 15.7 1/m, unbounded");
        srd_model_free(m);
    }

    m = build_ok(t, "actuation targets",
                 "param E0 = 20 MPa in 1 MPa..100 MPa;\n" MATERIAL ARM
                 "rod b { path = line((0, 1, 0) m, (10, 1, 0) cm); nodes = 11; radius = 1 mm; material = rubber; }\n"
                 "actuate arm.curvature = (10 /m, 0);\n"
                 "actuate arm.twist over s in 0..0.5 = 1 /m * sin(t / 1 s);\n"
                 "actuate arm.edges.rest_length where x > 5 cm = 1 cm * (1 + 0.1 * sin(t / 1 s));\n"
                 "actuate b.E = E0 * (1 + t / 1 s);\n"
                 "actuate b.nodes[2..5].curvature = (0, 1 /m);\n");
    if (m) {
        check(t, m->n_params == 1 && close_rel(m->params[0].value, 2e7, 1e-12) && close_rel(m->params[0].lo, 1e6, 1e-12) &&
                     close_rel(m->params[0].hi, 1e8, 1e-12) && !strcmp(m->params[0].unit, "Pa"),
              "a param with a range, in SI");
        int whole = 0, twist = -1, rest = -1, e_stretch = -1, e_bend = -1, part = -1;
        int bend_set = set_index(m, "bend_twist"), stretch_set = set_index(m, "stretch");
        for (int i = 0; i < m->n_actuations; i++) {
            const srd_actuation *a = &m->actuations[i];
            if (!strcmp(a->target, "curvature") && a->n == 9)
                whole++;
            else if (!strcmp(a->target, "curvature"))
                part = a->n;
            if (!strcmp(a->target, "twist"))
                twist = a->n;
            if (!strcmp(a->target, "rest_length"))
                rest = a->n;
            if (!strcmp(a->target, "E") && a->set == stretch_set)
                e_stretch = a->n;
            if (!strcmp(a->target, "E") && a->set == bend_set)
                e_bend = a->n;
        }
        check(t, whole == 1, "a whole rod's curvature: its 9 interior nodes");
        check(t, twist == 5, "twist over s in 0..0.5: interior nodes 1..5 (got %d)", twist);
        check(t, rest == 5, "rest_length of edges whose midpoint has x > 5 cm: 5 (got %d)", rest);
        check(t, e_stretch == 10 && e_bend == 9, "E acts on every stretch (10) and bend-twist (9) element of b (got %d, %d)",
              e_stretch, e_bend);
        check(t, part == 3, "curvature of nodes 2..4 of b: 3 interior nodes (got %d)", part);
        check(t, m->n_actuations == 6, "six actuation records (got %d)", m->n_actuations);
        srd_model_free(m);
    }

    m = build(MATERIAL ARM "actuate arm.curvature where x > 1 m = (1 /m, 0);\n");
    check(t, m == NULL && strstr(last_diags, "this selection matches nothing"), "an empty `where` is an error");
    srd_model_free(m);
}

/* ---- shells ---- */

static void test_shells(Tally *t)
{
    srd_model *m = build_ok(t, "a right-isosceles rectangle with hinges",
                            MATERIAL "shell sheet { mesh = rectangle(4 cm, 2 cm, 1 cm, pattern = right_isosceles); "
                                     "thickness = 1 mm; material = rubber; }\n"
                                     "actuate sheet.hinges.angle where x >= 2 cm = 0.1 * sin(t / 1 s);\n"
                                     "clamp sheet.nodes where x == 0 m;\n");
    if (m) {
        check(t, m->n_nodes == 15 && m->n_tris == 16 && m->n_edges == 30, "5 x 3 grid: 15 nodes, 16 triangles, 30 edges");
        check(t, set_count(m, "hinge") == 18 && set_count(m, "midedge") == 0, "18 interior edges carry hinges");
        check(t, set_count(m, "stretch") == 30 && set_count(m, "bend_twist") == 0, "stretch on every edge, no rod bending");
        check(t, m->n_dofs == 45, "shell nodes only: 45 DOFs (got %d)", m->n_dofs);
        check(t, m->n_fixed == 9, "three nodes at x = 0 clamped: 9 (got %d)", m->n_fixed);
        const srd_actuation *a = find_act(m, "angle", "hinge");
        check(t, a && a->n == 10, "hinges whose edge midpoint has x >= 2 cm: 10 (got %d)", a ? a->n : -1);
        check(t, close_rel(m->objects[0].area, 8e-4, 1e-9), "mid-surface area 8 cm^2");
        check(t, close_rel(srd_model_total_mass(m), 1200 * 1e-3 * 8e-4, 1e-9), "shell mass rho h area");
        srd_model_free(m);
    }
    m = build_ok(t, "a mid-edge shell",
                 MATERIAL "shell sheet { mesh = rectangle(4 cm, 2 cm, 1 cm, pattern = right_isosceles); "
                          "thickness = 1 mm; material = rubber; bending = midedge; }\n");
    if (m) {
        check(t, set_count(m, "midedge") == 16 && set_count(m, "hinge") == 0, "one mid-edge element per triangle");
        check(t, dofs_of_kind(m, SRD_DOF_XI) == 30 && m->n_dofs == 45 + 30, "one xi DOF per edge (%d DOFs)", m->n_dofs);
        srd_model_free(m);
    }
}

/* The bandwidth-reducing ordering is kept only where it narrows the band: on a hinge shell
 * whose generator numbers nodes row by row, reverse Cuthill-McKee comes out wider (311 -> 401
 * on this plate). */
static void test_ordering_keeps_narrower(Tally *t)
{
    srd_model *m = build_ok(t, "a 10 cm square hinge plate of 2 mm equilateral triangles",
                            MATERIAL "shell plate { mesh = rectangle(10 cm, 10 cm, 2 mm, pattern = equilateral); "
                                     "thickness = 1 mm; material = rubber; bending = hinge; }\n");
    if (m) {
        check(t, m->bandwidth <= m->bandwidth_natural, "the ordering never widens the band (%d -> %d)",
              m->bandwidth_natural, m->bandwidth);
        srd_model_free(m);
    }
}

/* ---- user elements, probes, environment ---- */

static void test_misc(Tally *t)
{
    srd_model *m = build_ok(t, "user elements and probes",
                            "use std.springs;\n" MATERIAL ARM
                            "body w { position = (20, 0, 0) cm; mass = 5 g; }\n"
                            "apply spring(arm.end, w.node; k = 10 N/m, l0 = 10 cm);\n"
                            "force push(node a; c) = c * (0, 0, 1);\n"
                            "apply push(arm.node(4); c = 1 mN);\n"
                            "apply push(arm.node(6); c = 2 mN);\n"
                            "clamp arm.start;\n"
                            "gravity = (0, 0, -9.81) m/s^2;\n"
                            "ground { stiffness = 100 N/m; delta = 1 mm; incline = 30 deg; }\n"
                            "simulate { dt = 1 ms; duration = 1 s; probe tip = arm.end.z every 1 ms; probe tw = arm.edge(9).theta; }\n");
    if (m) {
        const srd_elemset *s = find_set(m, "spring");
        check(t, s && s->n == 1 && s->n_node == 2 && s->n_data == 2, "one spring instance with 2 nodes and 2 data");
        check(t, s && s->nodes[0] == m->objects[0].nodes[10] && s->nodes[1] == m->objects[1].nodes[0] &&
                     close_rel(s->data[0], 10, 1e-12) && close_rel(s->data[1], 0.1, 1e-12),
              "the spring's stencil and data (SI)");
        check(t, set_count(m, "push") == 2, "two instances of the user force");
        check(t, m->has_gravity && m->gravity[2] == -9.81, "gravity");
        check(t, m->has_ground && close_rel(m->ground_normal[0], -0.5, 1e-12) && close_rel(m->ground_normal[2], sqrt(0.75), 1e-12),
              "an inclined ground's normal");
        check(t, m->simulate.present && m->simulate.n_probes == 2, "two probes");
        if (m->simulate.n_probes == 2) {
            const srd_probe *p = &m->simulate.probes[0];
            check(t, p->node == m->objects[0].nodes[10] && p->dof == m->node_dof[p->node] + 2 && close_rel(p->every, 1e-3, 1e-12),
                  "probe tip watches the end node's z DOF every 1 ms");
            check(t, m->simulate.probes[1].dof == m->edge_twist[9], "probe tw watches edge 9's twist");
        }
        check(t, close_rel(m->simulate.dt, 1e-3, 1e-12) && !strcmp(m->simulate.method, "implicit_euler"),
              "simulate defaults to implicit_euler");
        srd_model_free(m);
    }

    m = build(MATERIAL ARM "clamp arm.nodes[4..2];\nload arm.node(20) = (0, 0, 1) N;\n");
    check(t, m == NULL, "a program with errors gives no model");
    check(t, strstr(last_diags, "the range 4..2 is empty") && strstr(last_diags, "node index 20 is out of range"),
          "and reports every error");
    srd_model_free(m);
}

/* The stiffness relation of every lattice against the table of docs/language.md (beta = E a / k
 * and nu along a grid axis, as fractions), and the grids without shear stiffness refused. */
static void test_lattice_relation(Tally *t)
{
    static const struct { int grid, shells; double beta, nu; } table[] = {
        { LATTICE_CUBIC, 2, 5.0 / 2, 1.0 / 4 },  { LATTICE_CUBIC, 3, 27.0 / 10, 7.0 / 20 },
        { LATTICE_BCC, 2, 12.0 / 5, 1.0 / 5 },   { LATTICE_BCC, 3, 36.0 / 7, 2.0 / 7 },
        { LATTICE_FCC, 1, 4.0 / 3, 1.0 / 3 },    { LATTICE_FCC, 2, 40.0 / 7, 1.0 / 7 },
        { LATTICE_FCC, 3, 352.0 / 25, 7.0 / 25 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        double beta = 0, nu = 0;
        bool ok = lattice_relation(table[i].grid, table[i].shells, &beta, &nu);
        check(t, ok && fabs(beta / table[i].beta - 1) < 1e-14 && fabs(nu / table[i].nu - 1) < 1e-14,
              "lattice %d with %d shells: beta %.15g (table %.15g), nu %.15g (table %.15g)", table[i].grid,
              table[i].shells, beta, table[i].beta, nu, table[i].nu);
    }
    double beta, nu;
    check(t, !lattice_relation(LATTICE_CUBIC, 1, &beta, &nu) && !lattice_relation(LATTICE_BCC, 1, &beta, &nu),
          "cubic and bcc lattices of one shell have no shear stiffness");
    srd_model *m = build_ok(t, "a lattice sphere", "material gel { E = 1 MPa; rho = 1000 kg/m^3; }\n"
                                                   "lattice ball { shape = sphere(10 mm); spacing = 2 mm; material = gel; }\n");
    if (m) {
        double v = 4.0 / 3.0 * 3.14159265358979323846 * 1e-6;
        check(t, fabs(srd_model_total_mass(m) / (1000 * v) - 1) < 1e-12 && set_count(m, "lattice_spring") == m->n_edges,
              "a lattice sphere weighs rho V (%.15g kg) and has one lattice_spring per edge", srd_model_total_mass(m));
        srd_model_free(m);
    }
}

int main(void)
{
    arena_init(&arena);
    Tally t = { 0, 0 };
    test_single_rod(&t);
    test_paths(&t);
    test_joins(&t);
    test_fixes(&t);
    test_clamp_walls(&t);
    test_actuation(&t);
    test_shells(&t);
    test_ordering_keeps_narrower(&t);
    test_misc(&t);
    test_lattice_relation(&t);
    arena_free(&arena);
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
