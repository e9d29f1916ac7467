/* built.c — whether a model elaborated again with new params still fits the kernels compiled
 * into a built simulator (its executable, or a shared library the C API opens). */
#include <string.h>
#include "srd_built.h"

/* A param that sets the discretisation (nodes, spacing, mesh, bending) changes the DOF count
 * compiled in: say so by name, and what runs such a value. */
static bool shaping_unchanged(const srd_built_model *b, const srd_model *m, FILE *out, const char *program)
{
    for (int k = 0; k < m->n_params && k < b->n_params; k++)
        if (m->params[k].shapes && m->params[k].value != b->params[k].value) {
            fprintf(out,
                    "%s: error: param `%s` sets the discretisation (nodes, spacing, mesh or bending), which this "
                    "simulator has compiled in\nhint: run other values with `srdc run %s -p %s=...`, or sweep them "
                    "with `srdc sweep`, which elaborates a model for each\n",
                    program, m->params[k].name, b->model_path, m->params[k].name);
            return false;
        }
    return true;
}

/* Every value compiled into set s's kernel as a constant must be unchanged. */
static bool folded_unchanged(const srd_built_model *b, const srd_model *m, int s, FILE *out, const char *program)
{
    const srd_elemset *set = &m->sets[s];
    const srd_built_set *bs = &b->sets[s];
    for (int k = 0; k < bs->n_folded; k++) {
        int c = bs->folded_column[k];
        for (int i = 0; i < set->n; i++)
            if (set->data[i * set->n_data + c] != bs->folded_value[k]) {
                fprintf(out,
                        "%s: error: these param values change `%s` of the `%s` elements, which this simulator "
                        "has compiled in as a constant\nhint: run the model with `srdc run` instead\n",
                        program, set->data_names[c], set->kind);
                return false;
            }
    }
    return true;
}

bool srd_built_matches(const srd_built_model *b, const srd_model *m, FILE *out, const char *program)
{
    if (!shaping_unchanged(b, m, out, program))
        return false;
    if (m->n_sets != b->n_sets || m->n_nodes != b->n_nodes || m->n_dofs != b->n_dofs ||
        m->n_actuations != b->n_actuations) {
        fprintf(out, "%s: error: the model no longer has the structure it was built with\n", program);
        return false;
    }
    for (int s = 0; s < m->n_sets; s++) {
        const srd_elemset *set = &m->sets[s];
        const srd_built_set *bs = &b->sets[s];
        if (strcmp(set->kind, b->kernels.infos[s].kind) || set->n != bs->n || set->n_data != bs->n_data) {
            fprintf(out, "%s: error: the model's `%s` elements differ from those it was built with\n", program,
                    set->kind);
            return false;
        }
        if (!folded_unchanged(b, m, s, out, program))
            return false;
    }
    return true;
}
