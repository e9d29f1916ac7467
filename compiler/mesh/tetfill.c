/* tetfill.c — fills a closed triangulated surface (OBJ, or STL in ASCII or binary) with
 * tetrahedra through the `tetgen` command (Debian's tetgen package, TetGen 1.5): the surface
 * is read and checked here (every edge shared by exactly two triangles), written as a TetGen
 * .smesh into a private temporary directory, meshed with a quality bound, and read back. A
 * command rather than a linked library keeps the compiler free of TetGen's licence (AGPL) and
 * of Gmsh's large dependency tree; the mesh becomes part of the model, so built simulators
 * never need it. */
#include "mesh/tetmesh.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "geom.h"
#include "sources.h"

/* ---- STL ---- */

typedef struct Corner {
    double p[3];
    int    index; /* corner number in reading order */
} Corner;

static int corner_cmp(const void *a, const void *b)
{
    const Corner *x = a, *y = b;
    for (int c = 0; c < 3; c++)
        if (x->p[c] != y->p[c])
            return x->p[c] < y->p[c] ? -1 : 1;
    return 0;
}

/* STL repeats each corner per facet: equal points become one node. */
static void weld(const double *pts, int n_corners, double scale, GeomMesh *out)
{
    Corner *c = malloc(sizeof(Corner) * (size_t)n_corners + 1);
    for (int i = 0; i < n_corners; i++) {
        memcpy(c[i].p, &pts[3 * i], sizeof c[i].p);
        c[i].index = i;
    }
    qsort(c, (size_t)n_corners, sizeof *c, corner_cmp);
    out->x = malloc(sizeof(double) * 3 * (size_t)n_corners + 1);
    out->tri = malloc(sizeof(int) * (size_t)n_corners + 1);
    out->n_nodes = 0;
    out->n_tris = n_corners / 3;
    for (int i = 0; i < n_corners; i++) {
        if (i == 0 || corner_cmp(&c[i], &c[i - 1])) {
            for (int k = 0; k < 3; k++)
                out->x[3 * out->n_nodes + k] = scale * c[i].p[k];
            out->n_nodes++;
        }
        out->tri[c[i].index] = out->n_nodes - 1;
    }
    free(c);
}

static bool read_stl_binary(const char *text, size_t len, double scale, GeomMesh *out)
{
    uint32_t n;
    memcpy(&n, text + 80, 4);
    if (len != 84 + 50 * (size_t)n || n == 0 || n > 20000000)
        return false;
    double *pts = malloc(sizeof(double) * 9 * (size_t)n);
    for (uint32_t t = 0; t < n; t++)
        for (int k = 0; k < 9; k++) {
            float f;
            memcpy(&f, text + 84 + 50 * (size_t)t + 12 + 4 * k, 4);
            pts[9 * t + k] = f;
        }
    weld(pts, 3 * (int)n, scale, out);
    free(pts);
    return true;
}

static bool read_stl_ascii(char *text, double scale, GeomMesh *out)
{
    int n = 0, cap = 3 * 1024;
    double *pts = malloc(sizeof(double) * 3 * (size_t)cap);
    for (char *s = strstr(text, "vertex"); s; s = strstr(s, "vertex")) {
        s += 6;
        if (n == cap) {
            cap *= 2;
            pts = realloc(pts, sizeof(double) * 3 * (size_t)cap);
        }
        char *end;
        for (int k = 0; k < 3; k++, s = end)
            pts[3 * n + k] = strtod(s, &end);
        n++;
    }
    bool ok = n > 0 && n % 3 == 0;
    if (ok)
        weld(pts, n, scale, out);
    free(pts);
    return ok;
}

static bool read_stl(const char *path, double scale, GeomMesh *out, char *err, size_t err_n)
{
    size_t len;
    char *text = sources_read(path, &len);
    if (!text) {
        snprintf(err, err_n, "cannot read surface file `%s`: %s", path, sources_error());
        return false;
    }
    bool ok = (len >= 84 && read_stl_binary(text, len, scale, out)) ||
              (!strncmp(text, "solid", 5) && read_stl_ascii(text, scale, out));
    free(text);
    if (!ok)
        snprintf(err, err_n, "surface file `%s` is neither a binary STL nor an ASCII one with facets", path);
    return ok;
}

/* ---- closed surface ---- */

typedef struct Edge {
    int a, b, tri; /* directed a -> b as triangle tri runs it */
} Edge;

static int edge_cmp(const void *p, const void *q)
{
    const Edge *x = p, *y = q;
    int xa = x->a < x->b ? x->a : x->b, xb = x->a ^ x->b ^ xa, ya = y->a < y->b ? y->a : y->b, yb = y->a ^ y->b ^ ya;
    if (xa != ya)
        return xa < ya ? -1 : 1;
    return xb < yb ? -1 : xb > yb;
}

/* Every edge in exactly two triangles that run it in opposite directions; else a message
 * naming the edge's end points. */
static bool check_closed(const GeomMesh *s, const char *path, char *err, size_t err_n)
{
    int n = 3 * s->n_tris;
    Edge *e = malloc(sizeof(Edge) * (size_t)n + 1);
    for (int t = 0; t < s->n_tris; t++)
        for (int k = 0; k < 3; k++)
            e[3 * t + k] = (Edge){ s->tri[3 * t + k], s->tri[3 * t + (k + 1) % 3], t };
    qsort(e, (size_t)n, sizeof *e, edge_cmp);
    bool ok = true;
    for (int i = 0; i < n && ok;) {
        int j = i + 1;
        while (j < n && !edge_cmp(&e[i], &e[j]))
            j++;
        if (j - i != 2 || e[i].a != e[i + 1].b) {
            const double *p = &s->x[3 * e[i].a], *q = &s->x[3 * e[i].b];
            snprintf(err, err_n, "surface file `%s` is not a closed surface: the edge from (%g, %g, %g) to (%g, %g, %g) "
                                 "belongs to %d triangle%s%s", path, p[0], p[1], p[2], q[0], q[1], q[2], j - i,
                     j - i == 1 ? "" : "s", j - i == 2 ? " that run it the same way (their normals disagree)" : "");
            ok = false;
        }
        i = j;
    }
    free(e);
    return ok;
}

/* ---- tetgen ---- */

static bool write_smesh(const char *path, const GeomMesh *s)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fprintf(f, "%d 3 0 0\n", s->n_nodes);
    for (int i = 0; i < s->n_nodes; i++)
        fprintf(f, "%d %.17g %.17g %.17g\n", i, s->x[3 * i], s->x[3 * i + 1], s->x[3 * i + 2]);
    fprintf(f, "%d 0\n", s->n_tris);
    for (int t = 0; t < s->n_tris; t++)
        fprintf(f, "3 %d %d %d\n", s->tri[3 * t], s->tri[3 * t + 1], s->tri[3 * t + 2]);
    fprintf(f, "0\n0\n");
    return fclose(f) == 0;
}

/* Runs `tetgen -pq1.4[a<max_volume>]zQ file` without a shell; its output goes to a log file. */
static bool run_tetgen(const char *smesh, const char *log, double max_volume)
{
    char flags[64];
    if (max_volume > 0)
        snprintf(flags, sizeof flags, "-pq1.4a%.6gzQ", max_volume);
    else
        snprintf(flags, sizeof flags, "-pq1.4zQ");
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        FILE *out = freopen(log, "w", stdout);
        (void)out;
        dup2(fileno(stdout), 2);
        execlp("tetgen", "tetgen", flags, smesh, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static bool mesh_with_tetgen(const GeomMesh *s, double max_volume, TetMesh *out, char *err, size_t err_n)
{
    const char *tmp = getenv("TMPDIR");
    char dir[1024], smesh[1100], log[1100], result[1100];
    snprintf(dir, sizeof dir, "%s/srd-tetgen-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(err, err_n, "cannot make a temporary directory for tetgen: %s", strerror(errno));
        return false;
    }
    snprintf(smesh, sizeof smesh, "%s/surface.smesh", dir);
    snprintf(log, sizeof log, "%s/tetgen.log", dir);
    snprintf(result, sizeof result, "%s/surface.1", dir);
    bool ok = write_smesh(smesh, s);
    if (ok && !run_tetgen(smesh, log, max_volume)) {
        snprintf(err, err_n, "the `tetgen` command failed to fill the surface (is the tetgen package installed? "
                             "does the surface intersect itself?)");
        ok = false;
    }
    if (ok && !tetmesh_read_tetgen(result, 1.0, out, err, err_n))
        ok = false;
    if (ok) {
        free(out->file);
        out->file = NULL; /* its lines are those of a temporary file */
    }
    static const char *parts[] = { "surface.smesh", "tetgen.log", "surface.1.node", "surface.1.ele", "surface.1.face",
                                   "surface.1.edge", "surface.1.smesh" };
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", dir, parts[i]);
        unlink(p);
    }
    rmdir(dir);
    return ok;
}

bool tetmesh_read_surface(const char *path, double scale, GeomMesh *out, char *err, size_t err_n)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(path);
    bool stl = len > 4 && (!strcmp(path + len - 4, ".stl") || !strcmp(path + len - 4, ".STL"));
    char ferr[512];
    bool ok = stl ? read_stl(path, scale, out, err, err_n) : geom_read_obj(path, scale, out, ferr, sizeof ferr);
    if (!ok && !stl)
        snprintf(err, err_n, !strncmp(ferr, "line ", 5) ? "surface file `%s`, %s" : "%s%s", !strncmp(ferr, "line ", 5) ? path : "", ferr);
    ok = ok && check_closed(out, path, err, err_n);
    if (!ok)
        geom_mesh_free(out);
    return ok;
}

bool tetmesh_fill_surface(const char *path, double scale, double max_volume, TetMesh *out, char *err, size_t err_n)
{
    GeomMesh s;
    memset(out, 0, sizeof *out);
    if (!tetmesh_read_surface(path, scale, &s, err, err_n))
        return false;
    bool ok = mesh_with_tetgen(&s, max_volume, out, err, err_n);
    geom_mesh_free(&s);
    return ok;
}
