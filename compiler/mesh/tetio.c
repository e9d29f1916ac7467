/* tetio.c — reads tetrahedral meshes from Gmsh .msh files (ASCII, format 2.x and 4.1) and
 * TetGen .node/.ele pairs, naming the file's line of any fault. Orientation is settled here:
 * a file whose tetrahedra are all negatively oriented is taken in its own convention (each is
 * turned over); the solid's builder then refuses inverted or degenerate ones. */
#include "mesh/tetmesh.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources.h"

/* Keeps 4 * count inside int with room to spare; node tags index a table of this size at most. */
enum { MAX_ITEMS = 50000000 };

/* A whole file as words, with the line each word is on. */
typedef struct Words {
    char       *text;
    size_t      len, pos;
    long        line;     /* line of the word last read */
    long        at;       /* line of the scan position */
    const char *path;
    char       *err;
    size_t      err_n;
    bool        failed;
} Words;

static void fail(Words *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The first fault wins: "mesh file `F`, line N: ..." */
static void fail(Words *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    w->failed = true;
    int k = snprintf(w->err, w->err_n, "mesh file `%s`, line %ld: ", w->path, w->line);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < w->err_n)
        vsnprintf(w->err + k, w->err_n - (size_t)k, fmt, ap);
    va_end(ap);
}

/* Skips blanks and '#' comments (TetGen's), counting lines. */
static void skip_blank(Words *w, bool comments)
{
    while (w->pos < w->len) {
        char c = w->text[w->pos];
        if (c == '\n')
            w->at++;
        if (comments && c == '#') {
            while (w->pos < w->len && w->text[w->pos] != '\n')
                w->pos++;
            continue;
        }
        if (!isspace((unsigned char)c))
            return;
        w->pos++;
    }
}

/* The next word (NUL-terminated in place), or NULL at the end. */
static char *next_word(Words *w, bool comments)
{
    skip_blank(w, comments);
    if (w->pos >= w->len)
        return NULL;
    w->line = w->at;
    char *s = w->text + w->pos;
    while (w->pos < w->len && !isspace((unsigned char)w->text[w->pos]) && !(comments && w->text[w->pos] == '#'))
        w->pos++;
    if (w->pos < w->len) {
        if (w->text[w->pos] == '\n')
            w->at++;
        w->text[w->pos++] = '\0';
    }
    return s;
}

static bool read_long(Words *w, bool comments, const char *what, long *out)
{
    char *s = next_word(w, comments), *end;
    if (!s) {
        fail(w, "the file ends where %s was expected", what);
        return false;
    }
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || end == s || errno == ERANGE || v > INT_MAX || v < -INT_MAX) {
        fail(w, "expected %s, found `%.40s`", what, s);
        return false;
    }
    *out = v;
    return true;
}

static bool read_double(Words *w, bool comments, double *out)
{
    char *s = next_word(w, comments), *end;
    if (!s) {
        fail(w, "the file ends where a coordinate was expected");
        return false;
    }
    double v = strtod(s, &end);
    if (*end || end == s || !isfinite(v)) {
        fail(w, "expected a coordinate, found `%.40s`", s);
        return false;
    }
    *out = v;
    return true;
}

static bool read_count(Words *w, bool comments, const char *what, long *out)
{
    if (!read_long(w, comments, what, out))
        return false;
    if (*out < 0 || *out > MAX_ITEMS) {
        fail(w, "%s is %ld: a mesh holds 0 to %d", what, *out, MAX_ITEMS);
        return false;
    }
    return true;
}

static bool open_words(Words *w, const char *path, char *err, size_t err_n)
{
    memset(w, 0, sizeof *w);
    w->path = path;
    w->err = err;
    w->err_n = err_n;
    w->at = w->line = 1;
    w->text = sources_read(path, &w->len);
    if (!w->text)
        snprintf(err, err_n, "cannot read mesh file `%s`: %s", path, sources_error());
    return w->text != NULL;
}

/* ---- the mesh under construction ---- */

typedef struct Build {
    TetMesh m;
    int     cap;
    int    *node_of;   /* file tag -> node index, -1 when absent */
    long    n_tags;
} Build;

static void build_free(Build *b)
{
    tetmesh_free(&b->m);
    free(b->node_of);
}

static bool add_tet(Build *b, const int v[4], int region, long line)
{
    TetMesh *m = &b->m;
    if (m->n_tets == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 1024;
        m->tet = realloc(m->tet, sizeof(int) * 4 * (size_t)b->cap);
        m->region = realloc(m->region, sizeof(int) * (size_t)b->cap);
        m->line = realloc(m->line, sizeof(long) * (size_t)b->cap);
        if (!m->tet || !m->region || !m->line)
            return false;
    }
    memcpy(&m->tet[4 * m->n_tets], v, sizeof(int) * 4);
    m->region[m->n_tets] = region;
    m->line[m->n_tets++] = line;
    return true;
}

/* The node index of file tag `tag`, or -1 after an error. */
static int node_tag(Words *w, Build *b, long tag)
{
    if (tag < 0 || tag >= b->n_tags || b->node_of[tag] < 0) {
        fail(w, "node %ld is not defined in the file", tag);
        return -1;
    }
    return b->node_of[tag];
}

/* Reads the four corner tags of a tetrahedron. */
static bool read_corners(Words *w, Build *b, bool comments, int v[4])
{
    for (int k = 0; k < 4; k++) {
        long tag;
        if (!read_long(w, comments, "a node number", &tag) || (v[k] = node_tag(w, b, tag)) < 0)
            return false;
    }
    return true;
}

static bool alloc_nodes(Build *b, long n, long max_tag)
{
    b->m.x = malloc(sizeof(double) * 3 * (size_t)(n + 1));
    b->n_tags = max_tag + 1;
    b->node_of = malloc(sizeof(int) * (size_t)b->n_tags);
    if (!b->m.x || !b->node_of)
        return false;
    for (long i = 0; i < b->n_tags; i++)
        b->node_of[i] = -1;
    return true;
}

/* Stores node `tag` at the next index; a repeated tag is a fault. */
static bool set_node(Words *w, Build *b, long tag, const double p[3], double scale)
{
    if (tag < 0 || tag >= b->n_tags) {
        fail(w, "node number %ld is out of the range the file declares", tag);
        return false;
    }
    if (b->node_of[tag] >= 0) {
        fail(w, "node %ld is defined twice", tag);
        return false;
    }
    b->node_of[tag] = b->m.n_nodes;
    for (int c = 0; c < 3; c++)
        b->m.x[3 * b->m.n_nodes + c] = scale * p[c];
    b->m.n_nodes++;
    return true;
}

/* ---- Gmsh ---- */

static bool expect(Words *w, const char *word)
{
    char *s = next_word(w, false);
    if (!s || strcmp(s, word)) {
        fail(w, "expected `%s`, found %s%.40s%s", word, s ? "`" : "", s ? s : "the end of the file", s ? "`" : "");
        return false;
    }
    return true;
}

/* Skips to just after `$EndX` for the section `$X` just read. */
static bool skip_section(Words *w, const char *name)
{
    char end[80];
    snprintf(end, sizeof end, "$End%s", name + 1);
    for (char *s; (s = next_word(w, false));)
        if (!strcmp(s, end))
            return true;
    fail(w, "section `%s` has no `%s`", name, end);
    return false;
}

/* Format 2: `n`, then `tag x y z` lines (read whole, then indexed by tag). */
static bool msh2_nodes(Words *w, Build *b, double scale)
{
    long n, max_tag = 0;
    if (!read_count(w, false, "the node count", &n))
        return false;
    long *tags = malloc(sizeof(long) * (size_t)(n + 1));
    double *p = malloc(sizeof(double) * 3 * (size_t)(n + 1));
    bool ok = tags && p;
    for (long i = 0; i < n && ok; i++) {
        ok = read_long(w, false, "a node number", &tags[i]) && read_double(w, false, &p[3 * i]) &&
             read_double(w, false, &p[3 * i + 1]) && read_double(w, false, &p[3 * i + 2]);
        if (ok && (tags[i] < 1 || tags[i] > MAX_ITEMS)) {
            fail(w, "node number %ld is out of range", tags[i]);
            ok = false;
        }
        max_tag = ok && tags[i] > max_tag ? tags[i] : max_tag;
    }
    ok = ok && alloc_nodes(b, n, max_tag);
    for (long i = 0; i < n && ok; i++)
        ok = set_node(w, b, tags[i], &p[3 * i], scale);
    free(tags);
    free(p);
    return ok && expect(w, "$EndNodes");
}

/* Gmsh element types: 4 is the 4-node tetrahedron; 11 and 29 are tetrahedra of higher order. */
static int msh_type_nodes(long type)
{
    static const int nodes[] = { 0, 2, 3, 4, 4, 8, 6, 5, 3, 6, 9, 10, 27, 18, 14, 1, 8, 20, 15, 13 };
    return type >= 0 && type < (long)(sizeof nodes / sizeof *nodes) ? nodes[type] : -1;
}

static bool msh_check_type(Words *w, long type)
{
    if (type == 11 || type == 29 || type == 30 || type == 31) {
        fail(w, "element type %ld is a tetrahedron of higher order: srd takes 4-node tetrahedra (Gmsh: "
                "`Mesh.ElementOrder = 1`)", type);
        return false;
    }
    if (msh_type_nodes(type) < 0) {
        fail(w, "unknown element type %ld", type);
        return false;
    }
    return true;
}

/* Format 2: `n`, then `tag type ntags tags... nodes...`; the first tag is the physical group. */
static bool msh2_elements(Words *w, Build *b)
{
    long n;
    if (!read_count(w, false, "the element count", &n))
        return false;
    for (long i = 0; i < n; i++) {
        long tag, type, ntags, region = 0, skip;
        if (!read_long(w, false, "an element number", &tag))
            return false;
        long line = w->line;
        if (!read_long(w, false, "an element type", &type) || !msh_check_type(w, type) ||
            !read_count(w, false, "the tag count", &ntags))
            return false;
        for (long k = 0; k < ntags; k++)
            if (!read_long(w, false, "a tag", k == 0 ? &region : &skip))
                return false;
        int v[4];
        if (type == 4) {
            if (!read_corners(w, b, false, v) || !add_tet(b, v, (int)region, line))
                return false;
            continue;
        }
        for (int k = 0; k < msh_type_nodes(type); k++)
            if (!read_long(w, false, "a node number", &skip))
                return false;
    }
    return expect(w, "$EndElements");
}

/* Format 4.1 entities: the physical group of each volume (the first one it belongs to). */
typedef struct Volumes {
    int  n;
    long tag[4096], physical[4096];
} Volumes;

static bool skip_longs(Words *w, long n)
{
    long x;
    for (long k = 0; k < n; k++)
        if (!read_long(w, false, "a number", &x))
            return false;
    return true;
}

static bool msh4_entities(Words *w, Volumes *vols)
{
    long count[4];
    for (int d = 0; d < 4; d++)
        if (!read_count(w, false, "an entity count", &count[d]))
            return false;
    for (int d = 0; d < 4; d++)
        for (long i = 0; i < count[d]; i++) {
            long tag, nphys, nb, phys = 0;
            double box;
            if (!read_long(w, false, "an entity tag", &tag))
                return false;
            for (int k = 0; k < (d ? 6 : 3); k++)
                if (!read_double(w, false, &box))
                    return false;
            if (!read_count(w, false, "a physical tag count", &nphys))
                return false;
            for (long k = 0; k < nphys; k++)
                if (!read_long(w, false, "a physical tag", k == 0 ? &phys : &nb))
                    return false;
            if (d && (!read_count(w, false, "a boundary count", &nb) || !skip_longs(w, nb)))
                return false;
            if (d == 3 && vols->n < 4096) {
                vols->tag[vols->n] = tag;
                vols->physical[vols->n++] = nphys ? phys : tag;
            }
        }
    return expect(w, "$EndEntities");
}

/* Format 4.1 nodes: blocks of `dim tag parametric n`, then n tags, then n coordinate lines. */
static bool msh4_nodes(Words *w, Build *b, double scale)
{
    long blocks, n, lo, hi;
    if (!read_count(w, false, "the block count", &blocks) || !read_count(w, false, "the node count", &n) ||
        !read_count(w, false, "the smallest node tag", &lo) || !read_count(w, false, "the largest node tag", &hi) ||
        !alloc_nodes(b, n, hi))
        return false;
    for (long k = 0; k < blocks; k++) {
        long dim, tag, param, m;
        if (!read_long(w, false, "an entity dimension", &dim) || !read_long(w, false, "an entity tag", &tag) ||
            !read_long(w, false, "a parametric flag", &param) || !read_count(w, false, "a block size", &m))
            return false;
        if (param) {
            fail(w, "parametric node coordinates are not read: save the mesh without them (`Mesh.SaveParametric = 0`)");
            return false;
        }
        long *tags = malloc(sizeof(long) * (size_t)(m + 1));
        bool ok = true;
        for (long i = 0; i < m && ok; i++)
            ok = read_long(w, false, "a node tag", &tags[i]);
        for (long i = 0; i < m && ok; i++) {
            double p[3];
            ok = read_double(w, false, &p[0]) && read_double(w, false, &p[1]) && read_double(w, false, &p[2]) &&
                 set_node(w, b, tags[i], p, scale);
        }
        free(tags);
        if (!ok)
            return false;
    }
    return expect(w, "$EndNodes");
}

static long volume_region(const Volumes *vols, long tag)
{
    for (int i = 0; i < vols->n; i++)
        if (vols->tag[i] == tag)
            return vols->physical[i];
    return tag;
}

/* Format 4.1 elements: blocks of `dim tag type n`, then n lines `tag nodes...`. */
static bool msh4_elements(Words *w, Build *b, const Volumes *vols)
{
    long blocks, n, lo, hi;
    if (!read_count(w, false, "the block count", &blocks) || !read_count(w, false, "the element count", &n) ||
        !read_long(w, false, "the smallest element tag", &lo) || !read_long(w, false, "the largest element tag", &hi))
        return false;
    for (long k = 0; k < blocks; k++) {
        long dim, tag, type, m, skip;
        if (!read_long(w, false, "an entity dimension", &dim) || !read_long(w, false, "an entity tag", &tag) ||
            !read_long(w, false, "an element type", &type) || !msh_check_type(w, type) ||
            !read_count(w, false, "a block size", &m))
            return false;
        for (long i = 0; i < m; i++) {
            if (!read_long(w, false, "an element tag", &skip))
                return false;
            long line = w->line;
            int v[4];
            if (type == 4 && (!read_corners(w, b, false, v) || !add_tet(b, v, (int)volume_region(vols, tag), line)))
                return false;
            if (type != 4 && !skip_longs(w, msh_type_nodes(type)))
                return false;
        }
    }
    return expect(w, "$EndElements");
}

/* `$MeshFormat version binary size $EndMeshFormat`: 2 or 4 (4.1), ASCII only. */
static int msh_version(Words *w)
{
    char *s = next_word(w, false);
    if (!s || strcmp(s, "$MeshFormat")) {
        fail(w, "this is not a Gmsh mesh: it does not start with `$MeshFormat`");
        return 0;
    }
    char *version = next_word(w, false);
    long binary, size, at = w->line;
    if (!version || !read_long(w, false, "the file type (0 for ASCII)", &binary) ||
        !read_long(w, false, "the data size", &size) || !expect(w, "$EndMeshFormat"))
        return version ? 0 : (fail(w, "the file ends inside `$MeshFormat`"), 0);
    w->line = at; /* faults of the format are the version line's */
    if (binary) {
        fail(w, "a binary Gmsh mesh: save it as ASCII (`gmsh -save -format msh2` or `Mesh.Binary = 0`)");
        return 0;
    }
    if (version[0] == '2')
        return 2;
    if (!strcmp(version, "4.1"))
        return 4;
    fail(w, "Gmsh format %.20s is not read: srd reads formats 2.2 and 4.1 (`gmsh -format msh41`)", version);
    return 0;
}

static bool read_msh_sections(Words *w, Build *b, double scale)
{
    int version = msh_version(w);
    if (!version)
        return false;
    Volumes *vols = calloc(1, sizeof *vols);
    bool ok = true, nodes = false, elements = false;
    for (char *s; ok && (s = next_word(w, false));) {
        if (!strcmp(s, "$Nodes") && !nodes)
            ok = nodes = version == 2 ? msh2_nodes(w, b, scale) : msh4_nodes(w, b, scale);
        else if (!strcmp(s, "$Elements") && nodes)
            ok = elements = version == 2 ? msh2_elements(w, b) : msh4_elements(w, b, vols);
        else if (!strcmp(s, "$Entities") && version == 4)
            ok = msh4_entities(w, vols);
        else if (s[0] == '$')
            ok = skip_section(w, s);
        else
            fail(w, "expected a section such as `$Nodes`, found `%.40s`", s), ok = false;
    }
    free(vols);
    if (ok && !elements)
        fail(w, "the file has no `$Elements` section after its `$Nodes`"), ok = false;
    return ok;
}

/* ---- TetGen ---- */

/* base.node: `n 3 attributes markers`, then `index x y z [attributes] [marker]`; the first
 * index is 0 or 1 and the rest follow on. */
static bool tetgen_nodes(Words *w, Build *b, double scale, long *first)
{
    long n, dim, attrs, markers;
    if (!read_count(w, true, "the node count", &n) || !read_long(w, true, "the dimension", &dim) ||
        !read_count(w, true, "the attribute count", &attrs) || !read_count(w, true, "the boundary marker flag", &markers))
        return false;
    if (dim != 3) {
        fail(w, "the dimension is %ld: a TetGen mesh of a solid has 3", dim);
        return false;
    }
    if (!alloc_nodes(b, n, n + 1))
        return false;
    for (long i = 0; i < n; i++) {
        long tag;
        double p[3], skip;
        if (!read_long(w, true, "a node number", &tag))
            return false;
        if (i == 0)
            *first = tag;
        if (tag != *first + i || (*first != 0 && *first != 1)) {
            fail(w, "node number %ld: TetGen numbers nodes consecutively from 0 or 1", tag);
            return false;
        }
        if (!read_double(w, true, &p[0]) || !read_double(w, true, &p[1]) || !read_double(w, true, &p[2]))
            return false;
        for (long k = 0; k < attrs + (markers ? 1 : 0); k++)
            if (!read_double(w, true, &skip))
                return false;
        if (!set_node(w, b, tag, p, scale))
            return false;
    }
    return true;
}

/* base.ele: `n 4 attributes`, then `index a b c d [attributes]`; the first attribute is the
 * region. */
static bool tetgen_elements(Words *w, Build *b)
{
    long n, per, attrs;
    if (!read_count(w, true, "the tetrahedron count", &n) || !read_long(w, true, "the nodes per tetrahedron", &per) ||
        !read_count(w, true, "the attribute count", &attrs))
        return false;
    if (per != 4) {
        fail(w, "%ld nodes per tetrahedron: srd takes 4-node tetrahedra (run TetGen without -o2)", per);
        return false;
    }
    for (long i = 0; i < n; i++) {
        long tag;
        double region = 0, skip;
        if (!read_long(w, true, "a tetrahedron number", &tag))
            return false;
        long line = w->line;
        int v[4];
        if (!read_corners(w, b, true, v))
            return false;
        for (long k = 0; k < attrs; k++)
            if (!read_double(w, true, k == 0 ? &region : &skip))
                return false;
        if (!add_tet(b, v, (int)region, line))
            return false;
    }
    return true;
}

/* ---- orientation ---- */

/* Turns every tetrahedron over when most are negatively oriented (the file's convention). */
static void settle_orientation(TetMesh *m)
{
    int negative = 0;
    for (int t = 0; t < m->n_tets; t++)
        negative += tetmesh_volume(m, t) < 0;
    if (2 * negative <= m->n_tets)
        return;
    for (int t = 0; t < m->n_tets; t++) {
        int *v = &m->tet[4 * t], s = v[2];
        v[2] = v[3];
        v[3] = s;
    }
}

static bool finish(Words *w, Build *b, TetMesh *out, const char *what)
{
    bool ok = !w->failed;
    if (ok && b->m.n_tets == 0) {
        snprintf(w->err, w->err_n, "mesh file `%s` holds no 4-node tetrahedra%s", w->path, what);
        ok = false;
    }
    free(w->text);
    if (!ok) {
        build_free(b);
        return false;
    }
    free(b->node_of);
    settle_orientation(&b->m);
    b->m.file = strdup(w->path);
    *out = b->m;
    return true;
}

bool tetmesh_read_msh(const char *path, double scale, TetMesh *out, char *err, size_t err_n)
{
    Words w;
    Build b;
    memset(&b, 0, sizeof b);
    memset(out, 0, sizeof *out);
    if (!open_words(&w, path, err, err_n))
        return false;
    read_msh_sections(&w, &b, scale);
    return finish(&w, &b, out, " (Gmsh element type 4)");
}

/* base.node and base.ele from a path naming either or the base. */
static void tetgen_paths(const char *path, char *node, char *ele, size_t n)
{
    size_t len = strlen(path);
    if (len > 5 && !strcmp(path + len - 5, ".node"))
        len -= 5;
    else if (len > 4 && !strcmp(path + len - 4, ".ele"))
        len -= 4;
    snprintf(node, n, "%.*s.node", (int)len, path);
    snprintf(ele, n, "%.*s.ele", (int)len, path);
}

bool tetmesh_read_tetgen(const char *path, double scale, TetMesh *out, char *err, size_t err_n)
{
    char node[4096], ele[4096];
    tetgen_paths(path, node, ele, sizeof node);
    Words w;
    Build b;
    long first = 0;
    memset(&b, 0, sizeof b);
    memset(out, 0, sizeof *out);
    if (!open_words(&w, node, err, err_n))
        return false;
    bool ok = tetgen_nodes(&w, &b, scale, &first);
    free(w.text);
    if (!ok) {
        build_free(&b);
        return false;
    }
    if (!open_words(&w, ele, err, err_n)) {
        build_free(&b);
        return false;
    }
    tetgen_elements(&w, &b);
    return finish(&w, &b, out, "");
}
