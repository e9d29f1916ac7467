/* test_tetmesh.c — unit tests of the tetrahedral meshes of solids (compiler/mesh/): the box and
 * cylinder generators (volumes, orientation, conforming faces), cavities, and the Gmsh and
 * TetGen readers on small files given in memory, their faults named by line. */
#include "mesh/tetmesh.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources.h"

#include "tap.h"

static Tally tally;
static const double PI = 3.14159265358979323846;

static double total_volume(const TetMesh *m, double *smallest)
{
    double v = 0;
    *smallest = INFINITY;
    for (int t = 0; t < m->n_tets; t++) {
        double vt = tetmesh_volume(m, t);
        v += vt;
        *smallest = fmin(*smallest, vt);
    }
    return v;
}

typedef struct Face {
    int k[3];
} Face;

static int face_cmp(const void *a, const void *b) { return memcmp(a, b, sizeof(Face)); }

/* Faces met once (boundary) and faces met more than twice (a non-conforming mesh). */
static void count_faces(const TetMesh *m, int *boundary, int *excess)
{
    Face *f = malloc(sizeof(Face) * 4 * (size_t)m->n_tets);
    for (int t = 0; t < m->n_tets; t++)
        for (int o = 0; o < 4; o++) {
            int *k = f[4 * t + o].k, n = 0;
            for (int c = 0; c < 4; c++)
                if (c != o)
                    k[n++] = m->tet[4 * t + c];
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2 - i; j++)
                    if (k[j] > k[j + 1]) {
                        int s = k[j];
                        k[j] = k[j + 1];
                        k[j + 1] = s;
                    }
        }
    qsort(f, 4 * (size_t)m->n_tets, sizeof *f, face_cmp);
    *boundary = *excess = 0;
    for (int i = 0; i < 4 * m->n_tets;) {
        int j = i + 1;
        while (j < 4 * m->n_tets && !face_cmp(&f[i], &f[j]))
            j++;
        *boundary += j - i == 1;
        *excess += j - i > 2;
        i = j;
    }
    free(f);
}

static void test_box(void)
{
    TetMesh m;
    double o[3] = { 1, 2, 3 }, size[3] = { 0.3, 0.2, 0.1 }, smallest;
    const char *err = tetmesh_box(o, size, 0.05, NULL, NULL, &m);
    check(&tally, !err && m.n_nodes == 7 * 5 * 3 && m.n_tets == 6 * 6 * 4 * 2, "box: 7 x 5 x 3 nodes, 288 tetrahedra");
    double v = total_volume(&m, &smallest);
    check(&tally, fabs(v - 0.006) < 1e-15 && smallest > 0, "box: volume %.15g, every tetrahedron positive", v);
    int boundary, excess;
    count_faces(&m, &boundary, &excess);
    check(&tally, excess == 0 && boundary == 2 * 2 * (6 * 4 + 6 * 2 + 4 * 2), "box: conforming, %d boundary faces", boundary);
    int *tris;
    int n = tetmesh_cavities(&m, &tris);
    check(&tally, n == 0, "box: no cavity");
    free(tris);
    tetmesh_free(&m);
}

static void test_cavity(void)
{
    TetMesh m;
    double o[3] = { 0, 0, 0 }, size[3] = { 4, 4, 3 }, co[3] = { 1, 1, 1 }, cs[3] = { 2, 2, 1 }, smallest;
    const char *err = tetmesh_box(o, size, 1, co, cs, &m);
    double v = err ? 0 : total_volume(&m, &smallest);
    check(&tally, !err && fabs(v - 44) < 1e-12, "cavity: volume 48 - 4 (%g)", v);
    int *tris, n = err ? 0 : tetmesh_cavities(&m, &tris);
    check(&tally, n == 2 * (4 + 2 + 2 + 2 + 2 + 4), "cavity: 32 wall triangles (%d)", n);
    /* oriented out of the cavity: the enclosed volume (divergence theorem) is +4 */
    double enclosed = 0;
    for (int i = 0; i < n; i++) {
        const double *a = &m.x[3 * tris[3 * i]], *b = &m.x[3 * tris[3 * i + 1]], *c = &m.x[3 * tris[3 * i + 2]];
        enclosed += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                     a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
    }
    check(&tally, fabs(enclosed - 4) < 1e-12, "cavity: walls enclose +4 (%g)", enclosed);
    if (n)
        free(tris);
    tetmesh_free(&m);
    double far[3] = { 0, 0, 0 };
    err = tetmesh_box(o, size, 1, far, cs, &m);
    check(&tally, err && strstr(err, "reaches the box's surface"), "cavity at the surface refused: %s", err ? err : "");
}

static void test_cylinder(void)
{
    TetMesh m;
    double base[3] = { 0, 0, 0 }, axis[3] = { 0, 0.6, 0.8 }, smallest;
    const char *err = tetmesh_cylinder(base, axis, 1, 2, 0.25, &m);
    double v = err ? 0 : total_volume(&m, &smallest);
    /* the disc's 4 rings of 6 k nodes inscribe a 24-gon: area (24/2) sin(2 pi / 24) */
    double polygon = 12 * sin(2 * PI / 24) * 2;
    check(&tally, !err && fabs(v - polygon) < 1e-12 && smallest > 0, "cylinder: volume %.12g of the 24-gon prism %.12g",
          v, polygon);
    int boundary, excess;
    count_faces(&m, &boundary, &excess);
    check(&tally, excess == 0, "cylinder: conforming (prisms cut alike on shared faces)");
    tetmesh_free(&m);
}

/* A file given in memory, read by `read`; its message when it fails. */
static bool read_text(const char *path, const char *text, bool msh, TetMesh *m, char *err, size_t n)
{
    sources_provide(path, text, strlen(text));
    return msh ? tetmesh_read_msh(path, 1, m, err, n) : tetmesh_read_tetgen(path, 1, m, err, n);
}

static const char *msh2_head = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n"
                               "$EndNodes\n";

static void test_readers(void)
{
    TetMesh m;
    char err[512], text[1024];
    snprintf(text, sizeof text, "%s$Elements\n2\n1 2 2 0 1 1 2 3\n2 4 2 7 1 1 2 4 3\n$EndElements\n", msh2_head);
    bool ok = read_text("t1.msh", text, true, &m, err, sizeof err);
    /* the file's only tetrahedron is negatively oriented: its convention, turned over */
    check(&tally, ok && m.n_tets == 1 && m.region[0] == 7 && m.line[0] == 14 && tetmesh_volume(&m, 0) > 0,
          "msh 2.2: one tetrahedron, region 7, line 14, turned positive");
    if (ok)
        tetmesh_free(&m);
    snprintf(text, sizeof text, "%s$Elements\n1\n1 4 2 7 1 1 2 9 4\n$EndElements\n", msh2_head);
    ok = read_text("t2.msh", text, true, &m, err, sizeof err);
    check(&tally, !ok && !strcmp(err, "mesh file `t2.msh`, line 13: node 9 is not defined in the file"), "msh: %s", err);
    snprintf(text, sizeof text, "%s$Elements\n1\n1 11 2 7 1 1 2 3 4 1 2 3 4 1 2\n$EndElements\n", msh2_head);
    ok = read_text("t3.msh", text, true, &m, err, sizeof err);
    check(&tally, !ok && strstr(err, "line 13: element type 11 is a tetrahedron of higher order"), "msh: %s", err);
    ok = read_text("t4.msh", "$MeshFormat\n4.0 0 8\n$EndMeshFormat\n", true, &m, err, sizeof err);
    check(&tally, !ok && strstr(err, "line 2: Gmsh format 4.0 is not read"), "msh: %s", err);
    const char *node = "4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1 # a comment\n";
    sources_provide("c.node", node, strlen(node));
    ok = read_text("c.ele", "1 4 1\n1 1 2 3 4 5\n", false, &m, err, sizeof err);
    check(&tally, ok && m.n_tets == 1 && m.region[0] == 5 && m.line[0] == 2 && tetmesh_volume(&m, 0) > 0,
          "tetgen: numbered from 1, region 5, line 2 %s", ok ? "" : err);
    if (ok)
        tetmesh_free(&m);
    sources_provide("d.node", node, strlen(node)); /* a path is given once: a new name */
    ok = read_text("d.ele", "1 10 0\n", false, &m, err, sizeof err);
    check(&tally, !ok && strstr(err, "10 nodes per tetrahedron"), "tetgen: %s", err);
}

int main(void)
{
    test_box();
    test_cavity();
    test_cylinder();
    test_readers();
    printf("%d checks, %d failed\n", tally.run, tally.failed);
    return tally.failed ? 1 : 0;
}
