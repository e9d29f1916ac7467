/* tetsurface.c — the surfaces of a tetrahedral mesh: its boundary faces (those of one
 * tetrahedron only) split into connected surfaces, the outer one and those of its cavities,
 * which a pressure inflates. */
#include "mesh/tetmesh.h"
#include <stdlib.h>
#include <string.h>

typedef struct Face {
    int key[3];  /* sorted corners */
    int v[3];    /* corners oriented out of the tetrahedron */
} Face;

static int face_cmp(const void *p, const void *q)
{
    const Face *a = p, *b = q;
    for (int k = 0; k < 3; k++)
        if (a->key[k] != b->key[k])
            return a->key[k] < b->key[k] ? -1 : 1;
    return 0;
}

static void sort3(int *k)
{
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (k[j] > k[j + 1]) {
                int s = k[j];
                k[j] = k[j + 1];
                k[j + 1] = s;
            }
}

/* The four faces of every (positively oriented) tetrahedron, each with its normal outward. */
static Face *all_faces(const TetMesh *m)
{
    /* face opposite corner k, ordered so that its normal points away from corner k */
    static const int opp[4][3] = { { 1, 2, 3 }, { 0, 3, 2 }, { 0, 1, 3 }, { 0, 2, 1 } };
    Face *f = malloc(sizeof(Face) * 4 * (size_t)m->n_tets + 1);
    for (int t = 0; t < m->n_tets; t++)
        for (int k = 0; k < 4; k++) {
            Face *x = &f[4 * t + k];
            for (int c = 0; c < 3; c++)
                x->v[c] = x->key[c] = m->tet[4 * t + opp[k][c]];
            sort3(x->key);
        }
    return f;
}

/* Faces met once, their corners in *out (3 each, normals out of the solid); returns the count. */
static int boundary_faces(const TetMesh *m, int **out)
{
    Face *f = all_faces(m);
    int n = 4 * m->n_tets, nb = 0;
    qsort(f, (size_t)n, sizeof *f, face_cmp);
    *out = malloc(sizeof(int) * 3 * (size_t)n + 1);
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && !face_cmp(&f[i], &f[j]))
            j++;
        if (j == i + 1)
            memcpy(&(*out)[3 * nb++], f[i].v, sizeof f[i].v);
        i = j;
    }
    free(f);
    return nb;
}

static int find(int *parent, int a)
{
    while (parent[a] != a)
        a = parent[a] = parent[parent[a]];
    return a;
}

/* Connected surfaces: faces that share a node are joined (node-wise union of their corners). */
static void join_corners(const int *tri, int n, int *parent)
{
    for (int i = 0; i < n; i++)
        for (int k = 1; k < 3; k++) {
            int a = find(parent, tri[3 * i]), b = find(parent, tri[3 * i + k]);
            if (a != b)
                parent[a] = b;
        }
}

int tetmesh_cavities(const TetMesh *m, int **tris)
{
    int *b, nb = boundary_faces(m, &b), n = 0;
    int *parent = malloc(sizeof(int) * (size_t)m->n_nodes + 1);
    for (int i = 0; i < m->n_nodes; i++)
        parent[i] = i;
    join_corners(b, nb, parent);
    int far = 0;
    for (int i = 0; i < 3 * nb; i++)
        if (m->x[3 * b[i]] > m->x[3 * b[far]])
            far = i;
    int outer = nb ? find(parent, b[far]) : -1;
    *tris = malloc(sizeof(int) * 3 * (size_t)nb + 1);
    for (int i = 0; i < nb; i++) {
        if (find(parent, b[3 * i]) == outer)
            continue;
        /* out of the solid is into the cavity: turn the face over */
        int *t = &(*tris)[3 * n++];
        t[0] = b[3 * i], t[1] = b[3 * i + 2], t[2] = b[3 * i + 1];
    }
    free(parent);
    free(b);
    return n;
}
