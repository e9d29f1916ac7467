/* pattern.h — the sparsity pattern of the reduced Jacobian, known from the element stencils
 * before any value is computed: built once per model (and again only when the set of free DOFs
 * changes), so that kernels scatter into a compressed-column array at fixed positions. */
#ifndef SRD_PATTERN_H
#define SRD_PATTERN_H
#include "batch.h"

/* Most free DOFs one element instance touches (kernels have at most 64 stencil DOFs). */
enum { SRD_STENCIL_MAX = 64 };

/* The free indices (in s's numbering) of the DOFs instance i of set k can touch: 3 per node,
 * the twist and mid-edge DOF of each edge. Returns how many were written to out. */
int srd_instance_free_dofs(const srd_system *s, const srd_model *m, int k, int i, int *out);
/* Fills s->col_start, s->row_index and s->nnz: every pair of free DOFs sharing an instance,
 * and the diagonal. */
void srd_pattern_build(srd_system *s, const srd_model *m);
/* Adds the couplings of n_pairs pairs of free DOFs (pairs[2k], pairs[2k+1]: entries (i, j) and
 * (j, i)) that the pattern lacks, keeping the free numbering; positions of later entries move.
 * Returns how many entries were added (0: the pattern already had them all). */
long long srd_pattern_add(srd_system *s, int n_pairs, const int *pairs);
/* Position of (row, col) in the CSC value array, or -1 when the pattern lacks it. */
long long srd_pattern_find(const srd_system *s, int row, int col);

#endif
