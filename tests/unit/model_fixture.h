/* model_fixture.h — what the solver tests share: a model elaborated from source text (its arena
 * kept as long as the model), the clamped or free rod they solve on, a hand-built chain of
 * nodes, and a hash that gives reproducible matrix entries in [-1, 1) without a random
 * generator's state. */
#ifndef SRD_TEST_MODEL_FIXTURE_H
#define SRD_TEST_MODEL_FIXTURE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "elab.h"
#include "parse.h"

typedef struct Loaded {
    Arena      arena;
    srd_model *m;
} Loaded;

static inline srd_model *load_text(Loaded *l, const char *text)
{
    arena_init(&l->arena);
    Program prog = { 0 };
    bool parsed = parse_program_text(&l->arena, "fixture.srd", text, strlen(text), parse_stdlib_dir(), &prog);
    l->m = parsed ? elab_program(&prog, &l->arena, "fixture.srd") : NULL;
    diag_flush(stdout);
    diag_reset();
    return l->m;
}

static inline void unload(Loaded *l)
{
    srd_model_free(l->m);
    arena_free(&l->arena);
}

/* A straight rod of `nodes` nodes along x, 1 m (3 DOFs per node, a twist per edge), clamped at
 * its start when asked (the first node and the first twist held; node 1 slides along x). */
static inline srd_model *load_rod(Loaded *l, int nodes, bool clamped)
{
    char text[512];
    snprintf(text, sizeof text,
             "material m { E = 2 MPa; rho = 1200 kg/m^3; nu = 0.4; }\n"
             "rod r { path = line((0, 0, 0) m, (1, 0, 0) m); nodes = %d; radius = 1 mm; material = m; }\n%s",
             nodes, clamped ? "clamp r.start;\n" : "");
    return load_text(l, text);
}

/* A hand-built chain of 3-DOF nodes linked i to i+1; `loop` also links the last node to the first,
 * which makes the band as wide as the system. `all_fixed` fixes every DOF. */
static inline srd_model *chain_model(int nodes, bool loop, bool all_fixed)
{
    srd_model *m = srd_model_new();
    m->n_nodes = nodes;
    m->n_dofs = 3 * nodes;
    m->x0 = calloc((size_t)m->n_dofs, sizeof(double));
    m->node_mass = calloc((size_t)nodes, sizeof(double));
    m->node_dof = calloc((size_t)nodes, sizeof(int));
    m->dof_kind = calloc((size_t)m->n_dofs, sizeof(int));
    m->dof_owner = calloc((size_t)m->n_dofs, sizeof(int));
    m->dof_mass = calloc((size_t)m->n_dofs, sizeof(double));
    m->dof_fixed = calloc((size_t)m->n_dofs, 1);
    for (int i = 0; i < nodes; i++)
        m->node_dof[i] = 3 * i;
    for (int d = 0; d < m->n_dofs; d++) {
        m->dof_kind[d] = d % 3;
        m->dof_owner[d] = d / 3;
        m->dof_fixed[d] = all_fixed;
    }
    m->n_fixed = all_fixed ? m->n_dofs : 0;
    int set = srd_model_elemset(m, "link", 2, 0, 0, NULL);
    for (int i = 0; i + 1 < nodes; i++)
        srd_elemset_add(&m->sets[set], (int[]){ i, i + 1 }, NULL, NULL, NULL, -1);
    if (loop)
        srd_elemset_add(&m->sets[set], (int[]){ nodes - 1, 0 }, NULL, NULL, NULL, -1);
    return m;
}

static inline double hash_uniform(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t z = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) / 4503599627370496.0 - 1.0; /* 2^52: [-1, 1) */
}

#endif
