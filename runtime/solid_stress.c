/* solid_stress.c — stress and strain of a solid's tetrahedra, for output: the deformation
 * gradient F = Ds Dm^-1 from the element's data, the Green strain (F^T F - I) / 2 and the Cauchy
 * stress of its std.solids energy. The simulation never reads these (its forces and Jacobians
 * come from the compiled energies); they are the closed-form derivatives of the same energies,
 * written out so that frames can show them. */
#include "solid_stress.h"
#include <math.h>
#include <string.h>

int srd_tet_kind(const srd_elemset *set)
{
    if (set->n_node != 4 || strncmp(set->kind, "tet_", 4))
        return -1;
    return !strcmp(set->kind, "tet_neo_hookean") ? SRD_TET_NEO_HOOKEAN
         : !strcmp(set->kind, "tet_stvk")        ? SRD_TET_STVK
         : !strcmp(set->kind, "tet_linear")      ? SRD_TET_LINEAR : -1;
}

/* F[i][j] from the corners' positions and Dm^-1 (data columns b00..b22 after volume). */
static void deformation(const srd_model *m, const srd_elemset *set, int i, const double *q, double F[3][3])
{
    const int *v = &set->nodes[4 * i];
    const double *d = &set->data[(size_t)i * set->n_data];
    int b0 = srd_elemset_column(set, "b00");
    double e[3][3]; /* e[k][c]: component c of edge k */
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++)
            e[k][c] = q[m->node_dof[v[k + 1]] + c] - q[m->node_dof[v[0]] + c];
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 3; j++)
            F[r][j] = e[0][r] * d[b0 + j] + e[1][r] * d[b0 + 3 + j] + e[2][r] * d[b0 + 6 + j];
}

static double det3(double F[3][3])
{
    return F[0][0] * (F[1][1] * F[2][2] - F[1][2] * F[2][1]) - F[0][1] * (F[1][0] * F[2][2] - F[1][2] * F[2][0]) +
           F[0][2] * (F[1][0] * F[2][1] - F[1][1] * F[2][0]);
}

/* A B^T for 3x3 matrices. */
static void mul_t(double A[3][3], double B[3][3], double out[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[i][j] = A[i][0] * B[j][0] + A[i][1] * B[j][1] + A[i][2] * B[j][2];
}

/* Cauchy stress of each energy: neo-Hookean (mu (F F^T - I) + lambda ln J I) / J; StVK
 * F S F^T / J with S = 2 mu E + lambda tr(E) I; linear 2 mu eps + lambda tr(eps) I. */
static void cauchy(int kind, double mu, double lambda, double F[3][3], double E[3][3], double s[9])
{
    double J = det3(F), b[3][3];
    if (kind == SRD_TET_NEO_HOOKEAN) {
        mul_t(F, F, b);
        for (int i = 0; i < 9; i++)
            s[i] = (mu * (b[i / 3][i % 3] - (i % 4 == 0)) + (i % 4 == 0) * lambda * log(J)) / J;
        return;
    }
    double S[3][3], FS[3][3], tr = 0;
    if (kind == SRD_TET_LINEAR)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                E[i][j] = 0.5 * (F[i][j] + F[j][i]) - (i == j);
    tr = E[0][0] + E[1][1] + E[2][2];
    for (int i = 0; i < 9; i++)
        S[i / 3][i % 3] = 2 * mu * E[i / 3][i % 3] + (i % 4 == 0) * lambda * tr;
    if (kind == SRD_TET_LINEAR) {
        for (int i = 0; i < 9; i++)
            s[i] = S[i / 3][i % 3];
        return;
    }
    mul_t(F, S, FS); /* F S^T = F S: S is symmetric */
    mul_t(FS, F, b);
    for (int i = 0; i < 9; i++)
        s[i] = b[i / 3][i % 3] / J;
}

void srd_tet_stress(const srd_model *m, const srd_elemset *set, int i, const double *q, double sigma[9],
                    double green[9])
{
    double F[3][3], E[3][3];
    deformation(m, set, i, q, F);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            E[r][c] = 0.5 * (F[0][r] * F[0][c] + F[1][r] * F[1][c] + F[2][r] * F[2][c] - (r == c));
    for (int k = 0; k < 9; k++)
        green[k] = E[k / 3][k % 3];
    const double *d = &set->data[(size_t)i * set->n_data];
    cauchy(srd_tet_kind(set), d[srd_elemset_column(set, "mu")], d[srd_elemset_column(set, "lambda")], F, E, sigma);
}

double srd_von_mises(const double s[9])
{
    double a = s[0] - s[4], b = s[4] - s[8], c = s[8] - s[0];
    return sqrt(0.5 * (a * a + b * b + c * c) + 3 * (s[1] * s[1] + s[2] * s[2] + s[5] * s[5]));
}
