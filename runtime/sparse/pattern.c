/* pattern.c — builds the compressed-column pattern of the reduced Jacobian from the element
 * stencils: a DOF-to-instance incidence first, then each column as the union of the DOFs of the
 * instances touching it, so memory stays proportional to the pattern (never n^2, never the sum
 * of nd^2 over instances). */
#include "pattern.h"
#include "alloc.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int add_free(const srd_system *s, int dof, int *out, int n)
{
    int f = dof >= 0 ? s->free_index[dof] : -1;
    if (f >= 0 && n < SRD_STENCIL_MAX)
        out[n++] = f;
    return n;
}

int srd_instance_free_dofs(const srd_system *s, const srd_model *m, int k, int i, int *out)
{
    const srd_elemset *set = &m->sets[k];
    int n = 0;
    for (int j = 0; j < set->n_node; j++) {
        int node = set->nodes[i * set->n_node + j], base = m->node_dof[node];
        int dofs = m->node_body && m->node_body[node] >= 0 ? 6 : 3; /* a rigid body's rotation too */
        for (int c = 0; c < dofs; c++)
            n = add_free(s, base + c, out, n);
    }
    for (int c = 0; c < set->n_lambda; c++) /* a constraint's multipliers */
        n = add_free(s, set->lambda_dof[i] + c, out, n);
    for (int j = 0; j < set->n_edge; j++) {
        int e = set->edges[i * set->n_edge + j];
        n = add_free(s, m->edge_twist[e], out, n);
        n = add_free(s, m->edge_xi[e], out, n);
    }
    return n;
}

/* Instances numbered across all sets, with their free DOFs in CSR form. */
typedef struct incidence {
    int  n_inst;
    int *inst_start, *inst_dofs; /* instance -> its free DOFs */
    int *dof_start, *dof_insts;  /* free DOF -> the instances touching it */
} incidence;

static int total_instances(const srd_model *m)
{
    int n = 0;
    for (int k = 0; k < m->n_sets; k++)
        n += m->sets[k].n;
    return n;
}

/* Instance -> DOFs, growing the DOF list as it goes (the sizes are not known up front). */
static void gather_instances(incidence *g, const srd_system *s, const srd_model *m)
{
    g->n_inst = total_instances(m);
    g->inst_start = srd_xcalloc((size_t)g->n_inst + 1, sizeof(int));
    size_t cap = (size_t)g->n_inst * 8 + SRD_STENCIL_MAX, used = 0;
    g->inst_dofs = srd_xcalloc(cap, sizeof(int));
    int id = 0;
    for (int k = 0; k < m->n_sets; k++)
        for (int i = 0; i < m->sets[k].n; i++, id++) {
            if (used + SRD_STENCIL_MAX > cap) {
                cap *= 2;
                g->inst_dofs = srd_xrealloc(g->inst_dofs, cap * sizeof(int));
            }
            used += (size_t)srd_instance_free_dofs(s, m, k, i, g->inst_dofs + used);
            g->inst_start[id + 1] = (int)used;
        }
}

/* The transpose: DOF -> instances, by counting then placing. */
static void transpose(incidence *g, int n_free)
{
    g->dof_start = srd_xcalloc((size_t)n_free + 2, sizeof(int));
    int total = g->inst_start[g->n_inst];
    g->dof_insts = srd_xcalloc((size_t)total + 1, sizeof(int));
    for (int k = 0; k < total; k++)
        g->dof_start[g->inst_dofs[k] + 2]++;
    for (int f = 0; f < n_free; f++)
        g->dof_start[f + 2] += g->dof_start[f + 1];
    for (int e = 0; e < g->n_inst; e++)
        for (int k = g->inst_start[e]; k < g->inst_start[e + 1]; k++)
            g->dof_insts[g->dof_start[g->inst_dofs[k] + 1]++] = e;
}

static void free_incidence(incidence *g)
{
    free(g->inst_start);
    free(g->inst_dofs);
    free(g->dof_start);
    free(g->dof_insts);
}

/* The rows of column j (unsorted) into rows (when not NULL); returns how many. mark[r] == j + 1
 * says row r is already taken. */
static int column_rows(const incidence *g, int j, int *mark, int *rows)
{
    int n = 0;
    mark[j] = j + 1;
    if (rows)
        rows[n] = j;
    n++;
    for (int a = g->dof_start[j]; a < g->dof_start[j + 1]; a++) {
        int e = g->dof_insts[a];
        for (int k = g->inst_start[e]; k < g->inst_start[e + 1]; k++) {
            int r = g->inst_dofs[k];
            if (mark[r] == j + 1)
                continue;
            mark[r] = j + 1;
            if (rows)
                rows[n] = r;
            n++;
        }
    }
    return n;
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void srd_pattern_build(srd_system *s, const srd_model *m)
{
    int n = s->n_free;
    incidence g = { 0 };
    gather_instances(&g, s, m);
    transpose(&g, n);
    int *mark = srd_xcalloc((size_t)n + 1, sizeof(int));
    s->col_start = srd_xcalloc((size_t)n + 1, sizeof(int));
    for (int j = 0; j < n; j++)
        s->col_start[j + 1] = s->col_start[j] + column_rows(&g, j, mark, NULL);
    s->nnz = s->col_start[n];
    s->row_index = srd_xcalloc((size_t)s->nnz + 1, sizeof(int));
    memset(mark, 0, sizeof(int) * (size_t)n);
    for (int j = 0; j < n; j++) {
        int *rows = s->row_index + s->col_start[j];
        qsort(rows, (size_t)column_rows(&g, j, mark, rows), sizeof(int), compare_int);
    }
    free(mark);
    free_incidence(&g);
}

long long srd_pattern_find(const srd_system *s, int row, int col)
{
    if (row >= s->n_free || col >= s->n_free)
        return -1;
    int lo = s->col_start[col], hi = s->col_start[col + 1] - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, r = s->row_index[mid];
        if (r == row)
            return mid;
        if (r < row)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* ---- couplings that appear later (contact pairs) ---- */

static int compare_entry(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[0] != y[0])
        return (x[0] > y[0]) - (x[0] < y[0]);
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The entries (col, row) the pattern lacks, sorted and without repeats; returns how many. */
static long long missing_entries(const srd_system *s, int n_pairs, const int *pairs, int *out)
{
    long long n = 0;
    for (int k = 0; k < n_pairs; k++)
        for (int d = 0; d < 2; d++) {
            int col = pairs[2 * k + d], row = pairs[2 * k + 1 - d];
            if (col < 0 || row < 0 || col >= s->n_free || row >= s->n_free || srd_pattern_find(s, row, col) >= 0)
                continue;
            out[2 * n] = col;
            out[2 * n + 1] = row;
            n++;
        }
    qsort(out, (size_t)n, 2 * sizeof(int), compare_entry);
    long long unique = 0;
    for (long long k = 0; k < n; k++)
        if (unique == 0 || compare_entry(&out[2 * k], &out[2 * (unique - 1)]) != 0) {
            out[2 * unique] = out[2 * k];
            out[2 * unique + 1] = out[2 * k + 1];
            unique++;
        }
    return unique;
}

/* Column j of the old pattern merged with the new rows of that column (both sorted). */
static int merge_column(const srd_system *s, int j, const int *add, long long *next, long long n_add, int *rows)
{
    int n = 0, k = s->col_start[j], end = s->col_start[j + 1];
    while (k < end || (*next < n_add && add[2 * *next] == j)) {
        bool take_new = *next < n_add && add[2 * *next] == j && (k >= end || add[2 * *next + 1] < s->row_index[k]);
        rows[n++] = take_new ? add[2 * (*next)++ + 1] : s->row_index[k++];
    }
    return n;
}

long long srd_pattern_add(srd_system *s, int n_pairs, const int *pairs)
{
    int *add = srd_xcalloc(4 * (size_t)n_pairs + 2, sizeof(int));
    long long n_add = missing_entries(s, n_pairs, pairs, add);
    if (n_add > 0) {
        int *start = srd_xcalloc((size_t)s->n_free + 1, sizeof(int));
        int *rows = srd_xcalloc((size_t)(s->nnz + n_add) + 1, sizeof(int));
        long long next = 0;
        for (int j = 0; j < s->n_free; j++)
            start[j + 1] = start[j] + merge_column(s, j, add, &next, n_add, rows + start[j]);
        free(s->col_start);
        free(s->row_index);
        s->col_start = start;
        s->row_index = rows;
        s->nnz += n_add;
    }
    free(add);
    return n_add;
}
