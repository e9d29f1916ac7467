/* model.c — ownership, element sets, and the human and JSON summaries of a model. */
#include "srd_model.h"
#include "alloc.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

srd_model *srd_model_new(void)
{
    srd_model *m = srd_xcalloc(1, sizeof *m);
    for (int k = 0; k < SRD_PAIR_SETS; k++)
        m->self_contact.set[k] = -1;
    return m;
}

static void free_analysis(srd_analysis *a)
{
    free(a->method);
    free(a->start);
    free(a->solver);
    free(a->output_format);
    free(a->output_name);
    for (int i = 0; i < a->n_probes; i++) {
        free(a->probes[i].name);
        free(a->probes[i].nodes);
        free(a->probes[i].target_name);
    }
    free(a->probes);
}

static void free_control(srd_control *c)
{
    for (int i = 0; i < c->n_slots; i++)
        free(c->slots[i].name);
    free(c->slots);
    free(c->steps);
    free(c->init);
}

static void free_elemset(srd_elemset *s)
{
    free(s->kind);
    for (int i = 0; i < s->n_data; i++)
        free(s->data_names[i]);
    free(s->data_names);
    free(s->nodes);
    free(s->edges);
    free(s->signs);
    free(s->data);
    free(s->param_column);
    free(s->object);
    free(s->lambda_dof);
}

void srd_model_free(srd_model *m)
{
    if (!m)
        return;
    free(m->source);
    for (int i = 0; i < m->n_objects; i++) {
        free(m->objects[i].name);
        free(m->objects[i].nodes);
    }
    free(m->objects);
    free(m->x0);
    for (int i = 0; i < m->n_bodies; i++)
        free(m->bodies[i].points);
    free(m->bodies);
    for (int i = 0; i < m->n_joints; i++)
        free(m->joints[i].name);
    free(m->joints);
    free(m->node_body);
    free(m->node_mass);
    free(m->node_object);
    free(m->node_local);
    free(m->edge_nodes);
    free(m->edge_object);
    free(m->edge_rest);
    free(m->edge_twist);
    free(m->edge_xi);
    free(m->edge_is_rod);
    free(m->tri_nodes);
    free(m->tri_edges);
    free(m->tri_edge_sign);
    free(m->tri_object);
    free(m->node_dof);
    free(m->dof_kind);
    free(m->dof_owner);
    free(m->dof_mass);
    free(m->dof_fixed);
    for (int i = 0; i < m->n_sets; i++)
        free_elemset(&m->sets[i]);
    free(m->sets);
    for (int i = 0; i < m->n_params; i++) {
        free(m->params[i].name);
        free(m->params[i].unit);
    }
    free(m->params);
    free(m->loads);
    for (int i = 0; i < m->n_actuations; i++) {
        free(m->actuations[i].target);
        free(m->actuations[i].instances);
        free(m->actuations[i].s);
    }
    free(m->actuations);
    for (int i = 0; i < m->n_motions; i++) {
        free(m->motions[i].nodes);
        free(m->motions[i].edges);
    }
    free(m->slide_node);
    free(m->slide_anchor);
    free(m->slide_axis);
    free(m->motions);
    for (int i = 0; i < m->n_releases; i++)
        free(m->releases[i].dofs);
    free(m->releases);
    for (int i = 0; i < m->n_obstacles; i++) {
        free(m->obstacles[i].shape);
        free(m->obstacles[i].name);
    }
    free(m->obstacles);
    free(m->self_contact.objects);
    free_analysis(&m->simulate);
    free_analysis(&m->statics);
    free_analysis(&m->modes);
    free_control(&m->control);
    for (int i = 0; i < m->optimize.n_terms; i++) {
        free(m->optimize.terms[i].x);
        free(m->optimize.terms[i].y);
        free(m->optimize.terms[i].s);
    }
    free(m->optimize.terms);
    free(m->optimize.vary);
    free(m->optimize.method);
    free(m);
}

/* "control every 0.005 s: vars integral last, 4 steps, reads probes tip". */
static void print_control(const srd_control *c, FILE *out)
{
    if (!c->present)
        return;
    fprintf(out, "  control        every %g s: %d steps", c->period, c->n_steps);
    static const int kinds[2] = { SRD_CONTROL_VAR, SRD_CONTROL_PROBE };
    static const char *const titles[2] = { ", vars", ", reads probes" };
    for (int i = 0; i < 2; i++) {
        const char *sep = titles[i];
        for (int k = 0; k < c->n_slots; k++)
            if (c->slots[k].kind == kinds[i]) {
                fprintf(out, "%s %s", sep, c->slots[k].name);
                sep = "";
            }
    }
    fputc('\n', out);
}

int srd_model_elemset(srd_model *m, const char *kind, int n_node, int n_edge, int n_data,
                      const char *const *data_names)
{
    for (int i = 0; i < m->n_sets; i++)
        if (!strcmp(m->sets[i].kind, kind))
            return i;
    m->sets = srd_xrealloc(m->sets, sizeof *m->sets * (size_t)(m->n_sets + 1));
    srd_elemset *s = &m->sets[m->n_sets];
    memset(s, 0, sizeof *s);
    s->kind = srd_xstrdup(kind);
    s->n_node = n_node;
    s->n_edge = n_edge;
    s->n_data = n_data;
    s->data_names = srd_xcalloc((size_t)n_data + 1, sizeof(char *));
    for (int i = 0; i < n_data; i++)
        s->data_names[i] = srd_xstrdup(data_names[i]);
    return m->n_sets++;
}

int srd_elemset_uniform(const srd_elemset *s, int c)
{
    if (s->n <= 0 || (s->param_column && s->param_column[c]))
        return 0;
    for (int i = 1; i < s->n; i++)
        if (s->data[i * s->n_data + c] != s->data[c])
            return 0;
    return 1;
}

int srd_elemset_column(const srd_elemset *s, const char *name)
{
    for (int k = 0; k < s->n_data; k++)
        if (!strcmp(s->data_names[k], name))
            return k;
    return -1;
}

int srd_elemset_add(srd_elemset *s, const int *nodes, const int *edges, const signed char *signs,
                    const double *data, int object)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        size_t c = (size_t)s->cap;
        s->nodes = srd_xrealloc(s->nodes, sizeof(int) * c * (size_t)(s->n_node ? s->n_node : 1));
        s->edges = srd_xrealloc(s->edges, sizeof(int) * c * (size_t)(s->n_edge ? s->n_edge : 1));
        s->signs = srd_xrealloc(s->signs, c * (size_t)(s->n_edge ? s->n_edge : 1));
        s->data = srd_xrealloc(s->data, sizeof(double) * c * (size_t)(s->n_data ? s->n_data : 1));
        s->object = srd_xrealloc(s->object, sizeof(int) * c);
        s->lambda_dof = srd_xrealloc(s->lambda_dof, sizeof(int) * c);
    }
    s->lambda_dof[s->n] = -1; /* numbered with the other DOFs */
    int i = s->n++;
    for (int k = 0; k < s->n_node; k++)
        s->nodes[i * s->n_node + k] = nodes[k];
    for (int k = 0; k < s->n_edge; k++) {
        s->edges[i * s->n_edge + k] = edges[k];
        s->signs[i * s->n_edge + k] = signs ? signs[k] : 1;
    }
    for (int k = 0; k < s->n_data; k++)
        s->data[i * s->n_data + k] = data[k];
    s->object[i] = object;
    return i;
}

/* The array grows to the next power of two when it is full (it is only ever grown here), so
 * a model of many objects (a loop of 30,000 bodies) takes linear time, not quadratic. */
int srd_model_add_object(srd_model *m, const srd_object *o)
{
    size_t n = (size_t)m->n_objects;
    if ((n & (n - 1)) == 0) /* 0, 1, 2, 4, ...: full */
        m->objects = srd_xrealloc(m->objects, sizeof *m->objects * (n ? 2 * n : 1));
    m->objects[m->n_objects] = *o;
    m->objects[m->n_objects].name = srd_xstrdup(o->name);
    return m->n_objects++;
}

int srd_model_body_of(const srd_model *m, int o)
{
    for (int k = 0; k < m->n_bodies; k++)
        if (m->bodies[k].object == o)
            return k;
    return -1;
}

double srd_contact_radius(const srd_model *m, int o)
{
    const srd_object *ob = &m->objects[o];
    if (m->self_contact.radius > 0)
        return m->self_contact.radius;
    return ob->kind == SRD_OBJ_SHELL ? 0.5 * ob->thickness : ob->radius;
}

const srd_analysis *srd_objective_analysis(const srd_model *m)
{
    return m->simulate.present ? &m->simulate : &m->statics;
}

double srd_model_total_mass(const srd_model *m)
{
    /* Kahan summation: the mass test compares with rho * volume to 1e-12. */
    double sum = 0, c = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        double y = m->node_mass[i] - c;
        double t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    return sum;
}

/* The name of the joint whose constraint or motor is instance i of set k, or NULL. */
static const char *joint_of_part(const srd_model *m, int k, int i)
{
    for (int j = 0; j < m->n_joints; j++) {
        const srd_joint *jt = &m->joints[j];
        for (int p = 0; p < jt->n_parts; p++)
            if (jt->part[p].set == k && jt->part[p].instance == i)
                return jt->name;
        if (jt->motor_part.set == k && jt->motor_part.instance == i)
            return jt->name;
    }
    return NULL;
}

void srd_model_describe_dof(const srd_model *m, int dof, char *buf, size_t n)
{
    static const char *kinds[] = { "rod", "shell", "body", "lattice", "solid" };
    if (dof < 0 || dof >= m->n_dofs) {
        snprintf(buf, n, "DOF %d", dof);
        return;
    }
    int owner = m->dof_owner[dof];
    int kind = m->dof_kind[dof];
    if (kind <= SRD_DOF_NODE_Z) {
        const srd_object *o = &m->objects[m->node_object[owner]];
        if (o->kind == SRD_OBJ_BODY)
            snprintf(buf, n, "body %s, %c", o->name, "xyz"[kind]);
        else
            snprintf(buf, n, "%s %s, node %d, %c", kinds[o->kind], o->name, m->node_local[owner], "xyz"[kind]);
    } else if (kind == SRD_DOF_ROT) {
        const srd_body *b = &m->bodies[owner];
        snprintf(buf, n, "body %s, rotation %d", m->objects[b->object].name, dof - m->node_dof[b->node] - 3);
    } else if (kind == SRD_DOF_LAMBDA) {
        const srd_elemset *s = &m->sets[owner];
        int i = 0;
        while (i < s->n && !(dof >= s->lambda_dof[i] && dof < s->lambda_dof[i] + s->n_lambda))
            i++;
        const char *joint = joint_of_part(m, owner, i);
        if (joint)
            snprintf(buf, n, "joint %s, %s, multiplier %d", joint, s->kind, i < s->n ? dof - s->lambda_dof[i] : 0);
        else
            snprintf(buf, n, "%s %d, multiplier %d", s->kind, i, i < s->n ? dof - s->lambda_dof[i] : 0);
    } else {
        const srd_object *o = &m->objects[m->edge_object[owner]];
        snprintf(buf, n, "%s %s, edge %d, %s", kinds[o->kind], o->name, owner - o->first_edge,
                 kind == SRD_DOF_TWIST ? "twist" : "mid-edge xi");
    }
}

static int count_dofs(const srd_model *m, int kind)
{
    int c = 0;
    for (int i = 0; i < m->n_dofs; i++)
        c += m->dof_kind[i] == kind;
    return c;
}

static int count_objects(const srd_model *m, int kind)
{
    int c = 0;
    for (int i = 0; i < m->n_objects; i++)
        c += m->objects[i].kind == kind;
    return c;
}

static int count_rod_edges(const srd_model *m)
{
    int c = 0;
    for (int i = 0; i < m->n_edges; i++)
        c += m->edge_is_rod[i];
    return c;
}

static const char *analysis_method(const srd_analysis *a) { return a->method ? a->method : "-"; }

void srd_model_print(const srd_model *m, FILE *out)
{
    int node_dofs = count_dofs(m, SRD_DOF_NODE_X) * 3;
    fprintf(out, "model %s%s\n", m->source ? m->source : "", m->planar ? " (planar)" : "");
    int lattices = count_objects(m, SRD_OBJ_LATTICE), springs = 0;
    for (int e = 0; e < m->n_edges; e++)
        springs += m->objects[m->edge_object[e]].kind == SRD_OBJ_LATTICE;
    fprintf(out, "  objects        %d rods, %d shells, %d bodies", count_objects(m, SRD_OBJ_ROD),
            count_objects(m, SRD_OBJ_SHELL), count_objects(m, SRD_OBJ_BODY));
    int solids = count_objects(m, SRD_OBJ_SOLID), tets = 0;
    for (int k = 0; k < m->n_sets; k++)
        tets += !strncmp(m->sets[k].kind, "tet_", 4) && m->sets[k].n_node == 4 ? m->sets[k].n : 0;
    if (lattices)
        fprintf(out, ", %d lattices", lattices);
    if (solids)
        fprintf(out, ", %d solids (%d tetrahedra)", solids, tets);
    fputc('\n', out);
    fprintf(out, "  nodes          %d\n", m->n_nodes);
    fprintf(out, "  edges          %d (rod %d, shell %d", m->n_edges, count_rod_edges(m),
            m->n_edges - count_rod_edges(m) - springs);
    fprintf(out, springs ? ", lattice %d)\n" : ")\n", springs);
    fprintf(out, "  triangles      %d\n", m->n_tris);
    fprintf(out, "  DOFs           %d (node %d, twist %d, mid-edge %d)\n", m->n_dofs, node_dofs,
            count_dofs(m, SRD_DOF_TWIST), count_dofs(m, SRD_DOF_XI));
    if (m->n_bodies || count_dofs(m, SRD_DOF_LAMBDA))
        fprintf(out, "  rigid bodies   %d (rotation DOFs %d), constraint multipliers %d\n", m->n_bodies,
                count_dofs(m, SRD_DOF_ROT), count_dofs(m, SRD_DOF_LAMBDA));
    fprintf(out, "  fixed DOFs     %d\n", m->n_fixed);
    if (m->n_slides)
        fprintf(out, "  sliding nodes  %d (a clamped rod end's next node, on its end edge's line)\n", m->n_slides);
    if (m->n_motions || m->n_releases)
        fprintf(out, "  motions        %d, releases %d (their DOFs are among the fixed ones)\n", m->n_motions,
                m->n_releases);
    fprintf(out, "  total mass     %.6g kg\n", srd_model_total_mass(m));
    fprintf(out, "  bandwidth      %d in declaration order, %d after ordering\n", m->bandwidth_natural,
            m->bandwidth);
    fprintf(out, "  elements\n");
    for (int i = 0; i < m->n_sets; i++)
        fprintf(out, "    %-14s %d\n", m->sets[i].kind, m->sets[i].n);
    if (m->n_loads || m->n_actuations)
        fprintf(out, "  loads          %d, actuations %d\n", m->n_loads, m->n_actuations);
    if (m->n_params) {
        fprintf(out, "  params\n");
        for (int i = 0; i < m->n_params; i++)
            fprintf(out, "    %-14s %g %s%s\n", m->params[i].name, m->params[i].value, m->params[i].unit,
                    m->params[i].shapes ? " (sets the discretisation)" : m->params[i].input ? " (input)" : "");
    }
    print_control(&m->control, out);
    fprintf(out, "  environment   ");
    if (m->has_gravity)
        fprintf(out, " gravity (%g, %g, %g)", m->gravity[0], m->gravity[1], m->gravity[2]);
    if (m->medium_density > 0)
        fprintf(out, " medium");
    if (m->viscous_eta > 0)
        fprintf(out, " viscous");
    if (m->damping_alpha > 0 || m->damping_beta > 0)
        fprintf(out, " damping");
    if (m->has_rft)
        fprintf(out, " rft");
    if (m->has_drag)
        fprintf(out, " drag");
    if (m->has_ground)
        fprintf(out, " ground");
    if (m->n_obstacles)
        fprintf(out, " obstacles:%d", m->n_obstacles);
    if (m->self_contact.present)
        fprintf(out, " self-contact");
    fprintf(out, "\n");
    if (m->simulate.present)
        fprintf(out, "  simulate       %s, dt %g s, duration %g s%s\n", analysis_method(&m->simulate), m->simulate.dt,
                m->simulate.duration, m->simulate.start ? ", from the static equilibrium" : "");
    if (m->statics.present)
        fprintf(out, "  static         load steps %d\n", m->statics.load_steps);
    if (m->modes.present)
        fprintf(out, "  modes          %d\n", m->modes.mode_count);
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(out, "\\u%04x", *s);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

/* ,"control": {"period": 0.005, "steps": 4, "slots": [{"name": "integral", "kind": "var", "size": 1}, ...]} */
static void json_control(const srd_control *c, FILE *out)
{
    static const char *const kinds[] = { "var", "let", "probe", "period" };
    if (!c->present)
        return;
    fprintf(out, ",\n  \"control\": {\"period\": %.17g, \"steps\": %d, \"slots\": [", c->period, c->n_steps);
    for (int k = 0; k < c->n_slots; k++) {
        fprintf(out, "%s{\"name\": ", k ? ", " : "");
        json_string(out, c->slots[k].name);
        fprintf(out, ", \"kind\": \"%s\", \"size\": %d}", kinds[c->slots[k].kind], c->slots[k].n);
    }
    fprintf(out, "]}");
}

static void json_analysis(FILE *out, const char *key, const srd_analysis *a)
{
    fprintf(out, ",\n  \"%s\": ", key);
    if (!a->present) {
        fprintf(out, "null");
        return;
    }
    fprintf(out, "{\"method\": ");
    json_string(out, analysis_method(a));
    fprintf(out, ", \"dt\": %.17g, \"duration\": %.17g, \"tolerance\": %.17g, \"solver\": ", a->dt, a->duration,
            a->tolerance);
    json_string(out, a->solver ? a->solver : "auto");
    fprintf(out, ", \"probes\": %d, \"modes\": %d}", a->n_probes, a->mode_count);
}

void srd_model_print_json(const srd_model *m, FILE *out)
{
    static const char *kinds[] = { "rod", "shell", "body", "lattice", "solid" };
    fprintf(out, "{\n  \"source\": ");
    json_string(out, m->source);
    fprintf(out, ",\n  \"planar\": %s", m->planar ? "true" : "false");
    fprintf(out, ",\n  \"nodes\": %d,\n  \"edges\": %d,\n  \"rod_edges\": %d,\n  \"triangles\": %d", m->n_nodes,
            m->n_edges, count_rod_edges(m), m->n_tris);
    fprintf(out, ",\n  \"dofs\": %d,\n  \"dofs_by_kind\": {\"node\": %d, \"twist\": %d, \"midedge\": %d, \"rotation\": %d, "
            "\"multiplier\": %d}", m->n_dofs, count_dofs(m, SRD_DOF_NODE_X) * 3, count_dofs(m, SRD_DOF_TWIST),
            count_dofs(m, SRD_DOF_XI), count_dofs(m, SRD_DOF_ROT), count_dofs(m, SRD_DOF_LAMBDA));
    fprintf(out, ",\n  \"fixed_dofs\": %d,\n  \"sliding_nodes\": %d,\n  \"total_mass\": %.17g", m->n_fixed, m->n_slides,
            srd_model_total_mass(m));
    fprintf(out, ",\n  \"bandwidth\": {\"natural\": %d, \"ordered\": %d}", m->bandwidth_natural, m->bandwidth);
    fprintf(out, ",\n  \"elements\": {");
    for (int i = 0; i < m->n_sets; i++) {
        fprintf(out, "%s", i ? ", " : "");
        json_string(out, m->sets[i].kind);
        fprintf(out, ": %d", m->sets[i].n);
    }
    fprintf(out, "},\n  \"objects\": [");
    for (int i = 0; i < m->n_objects; i++) {
        const srd_object *o = &m->objects[i];
        fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
        json_string(out, o->name);
        fprintf(out, ", \"kind\": \"%s\", \"nodes\": %d, \"edges\": %d, \"triangles\": %d, \"mass\": %.17g",
                kinds[o->kind], o->n_nodes, o->n_edges, o->n_tris, o->mass);
        if (o->kind == SRD_OBJ_ROD)
            fprintf(out, ", \"length\": %.17g, \"area\": %.17g", o->length, o->area);
        if (o->kind == SRD_OBJ_SHELL)
            fprintf(out, ", \"area\": %.17g, \"thickness\": %.17g", o->area, o->thickness);
        fprintf(out, "}");
    }
    fprintf(out, "\n  ],\n  \"params\": [");
    for (int i = 0; i < m->n_params; i++) {
        fprintf(out, "%s{\"name\": ", i ? ", " : "");
        json_string(out, m->params[i].name);
        fprintf(out, ", \"value\": %.17g, \"unit\": ", m->params[i].value);
        json_string(out, m->params[i].unit);
        if (isfinite(m->params[i].lo))
            fprintf(out, ", \"min\": %.17g", m->params[i].lo);
        if (isfinite(m->params[i].hi))
            fprintf(out, ", \"max\": %.17g", m->params[i].hi);
        if (m->params[i].shapes)
            fprintf(out, ", \"discretisation\": true");
        if (m->params[i].input)
            fprintf(out, ", \"input\": true");
        fprintf(out, "}");
    }
    fprintf(out, "],\n  \"loads\": %d,\n  \"actuations\": %d,\n  \"motions\": %d,\n  \"releases\": %d,\n  \"obstacles\": %d",
            m->n_loads, m->n_actuations, m->n_motions, m->n_releases, m->n_obstacles);
    json_control(&m->control, out);
    fprintf(out, ",\n  \"gravity\": [%.17g, %.17g, %.17g]", m->gravity[0], m->gravity[1], m->gravity[2]);
    fprintf(out, ",\n  \"environment\": {\"medium\": %s, \"viscous\": %s, \"damping\": %s, \"rft\": %s, "
                 "\"drag\": %s, \"ground\": %s, \"self_contact\": %s}",
            m->medium_density > 0 ? "true" : "false", m->viscous_eta > 0 ? "true" : "false",
            (m->damping_alpha > 0 || m->damping_beta > 0) ? "true" : "false", m->has_rft ? "true" : "false",
            m->has_drag ? "true" : "false", m->has_ground ? "true" : "false",
            m->self_contact.present ? "true" : "false");
    json_analysis(out, "simulate", &m->simulate);
    json_analysis(out, "static", &m->statics);
    json_analysis(out, "modes", &m->modes);
    fprintf(out, "\n}\n");
}

void srd_model_print_elements(const srd_model *m, FILE *out)
{
    for (int k = 0; k < m->n_sets; k++) {
        const srd_elemset *s = &m->sets[k];
        fprintf(out, "%s: %d instances; stencil %d nodes, %d edges; data", s->kind, s->n, s->n_node, s->n_edge);
        for (int d = 0; d < s->n_data; d++)
            fprintf(out, " %s", s->data_names[d]);
        fprintf(out, "\n");
        for (int i = 0; i < s->n; i++) {
            fprintf(out, "  %6d  nodes", i);
            for (int j = 0; j < s->n_node; j++)
                fprintf(out, " %d", s->nodes[i * s->n_node + j]);
            if (s->n_edge) {
                fprintf(out, "  edges");
                for (int j = 0; j < s->n_edge; j++)
                    fprintf(out, " %c%d", s->signs[i * s->n_edge + j] > 0 ? '+' : '-', s->edges[i * s->n_edge + j]);
            }
            fprintf(out, "  data");
            for (int d = 0; d < s->n_data; d++)
                fprintf(out, " %.6g", s->data[i * s->n_data + d]);
            fprintf(out, "\n");
        }
    }
}
