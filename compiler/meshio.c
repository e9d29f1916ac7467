/* meshio.c — reads shell triangulations from Wavefront OBJ and MAT-DiSMech text files, naming the line of any fault. */
#include "geom.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources.h"

/* Keeps 3 * count inside int (GeomMesh indexes with int) with room to spare. */
enum { MAX_ITEMS = 100000000 };
#define MAX_ITEMS_TEXT "100000000"

/* A triangle's area counts as zero when |cross product| <= this x (longest edge)^2, i.e. when
 * its smallest angle is below about 1e-12 radians: such a triangle has no usable normal. */
static const double DEGENERATE_RATIO = 1e-12;

/* ------------------------------------------------------------------------------------------ */
/* messages                                                                                    */

static void set_err(char *err, size_t err_n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t err_n, const char *fmt, ...)
{
    if (!err || err_n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_n, fmt, ap);
    va_end(ap);
}

/* Token text fit for a message: bounded, and control bytes from a damaged file replaced. */
static void printable_copy(const char *s, size_t len, char *out, size_t out_n)
{
    size_t keep = len < out_n - 4 ? len : out_n - 4;
    size_t k = 0;
    for (; k < keep; k++)
        out[k] = isprint((unsigned char)s[k]) ? s[k] : '?';
    if (keep < len)
        out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = '\0';
}

/* ------------------------------------------------------------------------------------------ */
/* growable arrays                                                                             */

typedef struct Builder {
    double *xyz;
    size_t  n_nodes, cap_nodes;
    int    *tri;   /* 1-based indices as read (resolved for negative OBJ indices) */
    long   *line;  /* the line each triangle came from, for messages */
    size_t  n_tris, cap_tri, cap_line;
} Builder;

static void builder_free(Builder *b)
{
    free(b->xyz);
    free(b->tri);
    free(b->line);
    memset(b, 0, sizeof *b);
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return true;
    size_t new_cap = *cap ? *cap * 2 : 64;
    while (new_cap < need)
        new_cap *= 2;
    void *q = realloc(*p, new_cap * elem_size);
    if (!q)
        return false;
    *p = q;
    *cap = new_cap;
    return true;
}

static bool builder_add_node(Builder *b, const double xyz[3])
{
    if (!grow((void **)&b->xyz, &b->cap_nodes, b->n_nodes + 1, 3 * sizeof(double)))
        return false;
    memcpy(b->xyz + 3 * b->n_nodes++, xyz, 3 * sizeof(double));
    return true;
}

static bool builder_add_tri(Builder *b, int i, int j, int k, long line)
{
    if (!grow((void **)&b->tri, &b->cap_tri, b->n_tris + 1, 3 * sizeof(int)) ||
        !grow((void **)&b->line, &b->cap_line, b->n_tris + 1, sizeof(long)))
        return false;
    int *t = b->tri + 3 * b->n_tris;
    t[0] = i;
    t[1] = j;
    t[2] = k;
    b->line[b->n_tris++] = line;
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* lines and tokens                                                                            */

typedef struct LineReader {
    FILE  *f;
    char  *buf;
    size_t cap;
    size_t len;
    long   number;
} LineReader;

typedef enum { LINE_READ, LINE_END, LINE_FAILED } LineStatus;

/* Any line length; embedded NUL bytes stay inside `len` and simply fail to parse. */
static LineStatus read_line(LineReader *r)
{
    errno = 0;
    ssize_t got = getline(&r->buf, &r->cap, r->f);
    if (got < 0)
        return errno == ENOMEM || ferror(r->f) ? LINE_FAILED : LINE_END;
    r->len = (size_t)got;
    r->number++;
    while (r->len > 0 && (r->buf[r->len - 1] == '\n' || r->buf[r->len - 1] == '\r'))
        r->len--;
    if (r->number == 1 && r->len >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(r->buf, r->buf + 3, r->len - 3); /* a UTF-8 byte-order mark is not content */
        r->len -= 3;
    }
    const char *hash = memchr(r->buf, '#', r->len);
    if (hash)
        r->len = (size_t)(hash - r->buf);
    return LINE_READ;
}

typedef struct Token {
    const char *s;
    size_t      len;
} Token;

typedef struct Scanner {
    const char *s;
    size_t      len, pos;
    bool        commas; /* DiSMech files may separate values with commas */
} Scanner;

static bool is_separator(const Scanner *sc, char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || (sc->commas && c == ',');
}

static bool next_token(Scanner *sc, Token *t)
{
    while (sc->pos < sc->len && is_separator(sc, sc->s[sc->pos]))
        sc->pos++;
    if (sc->pos >= sc->len)
        return false;
    size_t start = sc->pos;
    while (sc->pos < sc->len && !is_separator(sc, sc->s[sc->pos]))
        sc->pos++;
    t->s = sc->s + start;
    t->len = sc->pos - start;
    return true;
}

static bool token_is(Token t, const char *word) { return t.len == strlen(word) && memcmp(t.s, word, t.len) == 0; }

/* Longer tokens than this cannot be sensible numbers; refusing them keeps the copy bounded. */
enum { NUMBER_MAX = 64 };

static bool parse_double(Token t, double *out)
{
    char buf[NUMBER_MAX + 1];
    if (t.len == 0 || t.len > NUMBER_MAX)
        return false;
    memcpy(buf, t.s, t.len);
    buf[t.len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + t.len || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static bool parse_int(Token t, long *out)
{
    char buf[NUMBER_MAX + 1];
    if (t.len == 0 || t.len > NUMBER_MAX || isspace((unsigned char)t.s[0]))
        return false;
    memcpy(buf, t.s, t.len);
    buf[t.len] = '\0';
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (end != buf + t.len || errno == ERANGE || v > INT_MAX || v < -INT_MAX)
        return false;
    *out = v;
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* shared end: check indices and shapes, hand over the arrays                                  */

typedef struct ReadCtx {
    const char *path;
    double      scale;
    const char *node_word; /* "vertices" (OBJ) or "nodes" (DiSMech) in messages */
    const char *index_word;
    char       *err;
    size_t      err_n;
} ReadCtx;

static bool add_scaled_node(ReadCtx *cx, Builder *b, const double xyz[3], long line)
{
    double p[3] = {xyz[0] * cx->scale, xyz[1] * cx->scale, xyz[2] * cx->scale};
    if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
        set_err(cx->err, cx->err_n, "line %ld: coordinate is too large once scaled", line);
        return false;
    }
    if (b->n_nodes >= MAX_ITEMS) {
        set_err(cx->err, cx->err_n, "line %ld: too many %s (at most " MAX_ITEMS_TEXT ")", line, cx->node_word);
        return false;
    }
    if (!builder_add_node(b, p)) {
        set_err(cx->err, cx->err_n, "line %ld: out of memory", line);
        return false;
    }
    return true;
}

static bool add_triangle(ReadCtx *cx, Builder *b, int i, int j, int k, long line)
{
    if (b->n_tris >= MAX_ITEMS) {
        set_err(cx->err, cx->err_n, "line %ld: too many triangles (at most " MAX_ITEMS_TEXT ")", line);
        return false;
    }
    if (!builder_add_tri(b, i, j, k, line)) {
        set_err(cx->err, cx->err_n, "line %ld: out of memory", line);
        return false;
    }
    return true;
}

static double dot3(const double u[3], const double v[3]) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; }

/* Edges are first divided by their largest component so that huge (or tiny) coordinates can
 * neither overflow nor underflow the cross product. */
static bool triangle_has_area(const double *a, const double *b, const double *c)
{
    double e[3][3], big = 0;
    for (int d = 0; d < 3; d++) {
        e[0][d] = b[d] - a[d];
        e[1][d] = c[d] - a[d];
        e[2][d] = c[d] - b[d];
        for (int k = 0; k < 3; k++)
            big = fmax(big, fabs(e[k][d]));
    }
    if (!(big > 0) || !isfinite(big))
        return false;
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 3; d++)
            e[k][d] /= big;
    double cr[3] = {e[0][1] * e[1][2] - e[0][2] * e[1][1], e[0][2] * e[1][0] - e[0][0] * e[1][2],
                    e[0][0] * e[1][1] - e[0][1] * e[1][0]};
    double longest = fmax(dot3(e[0], e[0]), fmax(dot3(e[1], e[1]), dot3(e[2], e[2])));
    return sqrt(dot3(cr, cr)) > DEGENERATE_RATIO * longest;
}

static bool check_triangles(ReadCtx *cx, Builder *b)
{
    if (b->n_tris == 0) {
        set_err(cx->err, cx->err_n, "no triangles in the file");
        return false;
    }
    for (size_t t = 0; t < b->n_tris; t++) {
        const int *v = b->tri + 3 * t;
        for (int k = 0; k < 3; k++) {
            if (v[k] < 1 || (size_t)v[k] > b->n_nodes) {
                set_err(cx->err, cx->err_n, "line %ld: %s index %d is out of range (the file has %zu %s)",
                        b->line[t], cx->index_word, v[k], b->n_nodes, cx->node_word);
                return false;
            }
        }
        if (!triangle_has_area(b->xyz + 3 * (v[0] - 1), b->xyz + 3 * (v[1] - 1), b->xyz + 3 * (v[2] - 1))) {
            set_err(cx->err, cx->err_n, "line %ld: triangle %d %d %d has zero area", b->line[t], v[0], v[1], v[2]);
            return false;
        }
    }
    return true;
}

/* Nodes keep the file's numbering (minus one), unreferenced ones included, so that node numbers
 * quoted from the file stay valid. */
static void hand_over(Builder *b, GeomMesh *out)
{
    for (size_t k = 0; k < 3 * b->n_tris; k++)
        b->tri[k]--;
    out->n_nodes = (int)b->n_nodes;
    out->x = b->xyz;
    out->n_tris = (int)b->n_tris;
    out->tri = b->tri;
    b->xyz = NULL;
    b->tri = NULL;
}

typedef bool (*LineParser)(ReadCtx *cx, Builder *b, void *state, const char *text, size_t len, long line);

static bool read_mesh(const char *path, double scale, GeomMesh *out, char *err, size_t err_n, ReadCtx cx,
                      LineParser parse_line, void *state)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (err && err_n)
        err[0] = '\0';
    if (!path || !out) {
        set_err(err, err_n, "no file or output mesh given");
        return false;
    }
    if (!isfinite(scale) || !(scale > 0)) {
        set_err(err, err_n, "scale must be positive and finite");
        return false;
    }
    LineReader r = {.f = sources_open(path)};
    if (!r.f) {
        set_err(err, err_n, "cannot open %s: %s", path, sources_error());
        return false;
    }
    cx.path = path;
    cx.scale = scale;
    cx.err = err;
    cx.err_n = err_n;
    Builder b = {0};
    bool       ok = true;
    LineStatus status;
    while (ok && (status = read_line(&r)) == LINE_READ)
        ok = parse_line(&cx, &b, state, r.buf, r.len, r.number);
    if (ok && status == LINE_FAILED) {
        set_err(err, err_n, "cannot read %s after line %ld: %s", path, r.number,
                errno == ENOMEM ? "out of memory" : "read error");
        ok = false;
    }
    free(r.buf);
    fclose(r.f);
    if (ok)
        ok = check_triangles(&cx, &b);
    if (ok)
        hand_over(&b, out);
    builder_free(&b);
    return ok;
}

/* ------------------------------------------------------------------------------------------ */
/* Wavefront OBJ                                                                               */

/* Reads the numbers left on a line, keeping the first three in xyz; *count gets how many
 * there were. False (with the message set) on a token that is not a finite number. */
static bool read_coordinates(ReadCtx *cx, Scanner *sc, long line, double xyz[3], int *count)
{
    int   n = 0;
    Token t;
    while (next_token(sc, &t)) {
        double v;
        if (!parse_double(t, &v)) {
            char shown[40];
            printable_copy(t.s, t.len, shown, sizeof shown);
            set_err(cx->err, cx->err_n, "line %ld: '%s' is not a finite number", line, shown);
            return false;
        }
        if (n < 3)
            xyz[n] = v;
        n++;
    }
    *count = n;
    return true;
}

static bool obj_vertex(ReadCtx *cx, Builder *b, Scanner *sc, long line)
{
    double xyz[3];
    int    n = 0;
    /* Extra numbers (w, or vertex colours some exporters add) are accepted and ignored. */
    if (!read_coordinates(cx, sc, line, xyz, &n))
        return false;
    if (n < 3) {
        set_err(cx->err, cx->err_n, "line %ld: a vertex needs 3 coordinates, found %d", line, n);
        return false;
    }
    return add_scaled_node(cx, b, xyz, line);
}

/* The vertex part of "a", "a/b", "a//c" or "a/b/c", made 1-based: a negative index counts back
 * from the vertices read so far (-1 is the latest). Positive ones are range-checked at the end,
 * against the whole file. */
static bool obj_face_index(ReadCtx *cx, Builder *b, Token t, long line, int *index)
{
    const char *slash = memchr(t.s, '/', t.len);
    Token       head = {t.s, slash ? (size_t)(slash - t.s) : t.len};
    long        v;
    char        shown[40];
    printable_copy(t.s, t.len, shown, sizeof shown);
    if (!parse_int(head, &v)) {
        set_err(cx->err, cx->err_n, "line %ld: '%s' is not a vertex index", line, shown);
        return false;
    }
    if (v == 0) {
        set_err(cx->err, cx->err_n, "line %ld: face index 0 is invalid (OBJ indices start at 1)", line);
        return false;
    }
    if (v < 0) {
        long resolved = (long)b->n_nodes + v + 1;
        if (resolved < 1) {
            set_err(cx->err, cx->err_n, "line %ld: face index %ld is out of range (only %zu vertices precede it)",
                    line, v, b->n_nodes);
            return false;
        }
        v = resolved;
    }
    *index = (int)v;
    return true;
}

/* Polygons are fanned from their first vertex. */
static bool obj_face(ReadCtx *cx, Builder *b, Scanner *sc, long line)
{
    int   first = 0, prev = 0, n = 0;
    Token t;
    while (next_token(sc, &t)) {
        int v;
        if (!obj_face_index(cx, b, t, line, &v))
            return false;
        if (n == 0)
            first = v;
        else if (n >= 2 && !add_triangle(cx, b, first, prev, v, line))
            return false;
        prev = v;
        n++;
    }
    if (n < 3) {
        set_err(cx->err, cx->err_n, "line %ld: a face needs at least 3 vertices, found %d", line, n);
        return false;
    }
    return true;
}

static bool obj_line(ReadCtx *cx, Builder *b, void *state, const char *text, size_t len, long line)
{
    (void)state;
    Scanner sc = {text, len, 0, false};
    Token   key;
    if (!next_token(&sc, &key))
        return true;
    if (token_is(key, "v"))
        return obj_vertex(cx, b, &sc, line);
    if (token_is(key, "f"))
        return obj_face(cx, b, &sc, line);
    return true; /* vt, vn, g, o, s, usemtl, mtllib, l, ...: nothing a shell needs */
}

bool geom_read_obj(const char *path, double scale, GeomMesh *out, char *err, size_t err_n)
{
    ReadCtx cx = {.node_word = "vertices", .index_word = "face"};
    return read_mesh(path, scale, out, err, err_n, cx, obj_line, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* MAT-DiSMech text                                                                            */

typedef enum { SECTION_NONE, SECTION_NODES, SECTION_TRIANGLES, SECTION_EDGES } Section;

static bool same_word_nocase(Token t, const char *word)
{
    if (t.len != strlen(word))
        return false;
    for (size_t k = 0; k < t.len; k++)
        if (tolower((unsigned char)t.s[k]) != word[k])
            return false;
    return true;
}

static bool dismech_header(ReadCtx *cx, Section *section, const char *text, size_t len, long line)
{
    Scanner sc = {text, len, 0, true};
    Token   name;
    if (!next_token(&sc, &name) || name.len < 2) {
        set_err(cx->err, cx->err_n, "line %ld: a section name must follow '*'", line);
        return false;
    }
    name.s++;
    name.len--;
    Token extra;
    if (next_token(&sc, &extra)) {
        set_err(cx->err, cx->err_n, "line %ld: unexpected text after the section name", line);
        return false;
    }
    /* MAT-DiSMech's files use several names for the same sections; rod data is skipped
     * because rods are declared with `rod` blocks and joined to the shell. */
    if (same_word_nocase(name, "nodes") || same_word_nocase(name, "shellnodes"))
        *section = SECTION_NODES;
    else if (same_word_nocase(name, "triangles") || same_word_nocase(name, "facenodes"))
        *section = SECTION_TRIANGLES;
    else if (same_word_nocase(name, "edges") || same_word_nocase(name, "rodedges") ||
             same_word_nocase(name, "rodshelljointedges") || same_word_nocase(name, "elstretchrod") ||
             same_word_nocase(name, "elbendrod") || same_word_nocase(name, "elbendsign"))
        *section = SECTION_EDGES;
    else if (same_word_nocase(name, "rodnodes")) {
        set_err(cx->err, cx->err_n,
                "line %ld: *rodNodes: this importer reads shells; declare rods with `rod` blocks and `join` them", line);
        return false;
    } else {
        char shown[40];
        printable_copy(name.s, name.len, shown, sizeof shown);
        set_err(cx->err, cx->err_n,
                "line %ld: unknown section '*%s' (expected *Nodes, *Triangles or *FaceNodes, or *Edges)", line, shown);
        return false;
    }
    return true;
}

static bool dismech_node(ReadCtx *cx, Builder *b, Scanner *sc, long line)
{
    double xyz[3];
    int    n = 0;
    if (!read_coordinates(cx, sc, line, xyz, &n))
        return false;
    if (n != 3) {
        set_err(cx->err, cx->err_n, "line %ld: a node needs 3 coordinates (x, y, z), found %d", line, n);
        return false;
    }
    return add_scaled_node(cx, b, xyz, line);
}

static bool dismech_triangle(ReadCtx *cx, Builder *b, Scanner *sc, long line)
{
    int   v[3];
    int   n = 0;
    Token t;
    while (next_token(sc, &t)) {
        long k;
        char shown[40];
        printable_copy(t.s, t.len, shown, sizeof shown);
        if (!parse_int(t, &k)) {
            set_err(cx->err, cx->err_n, "line %ld: '%s' is not a node index", line, shown);
            return false;
        }
        if (k < 1) {
            set_err(cx->err, cx->err_n, "line %ld: triangle index %ld is invalid (node indices start at 1)", line, k);
            return false;
        }
        if (n < 3)
            v[n] = (int)k;
        n++;
    }
    if (n != 3) {
        set_err(cx->err, cx->err_n, "line %ld: a triangle needs 3 node indices, found %d", line, n);
        return false;
    }
    return add_triangle(cx, b, v[0], v[1], v[2], line);
}

static bool dismech_line(ReadCtx *cx, Builder *b, void *state, const char *text, size_t len, long line)
{
    Section *section = state;
    Scanner  sc = {text, len, 0, true};
    Token    first;
    if (!next_token(&sc, &first))
        return true;
    if (first.s[0] == '*')
        return dismech_header(cx, section, first.s, len - (size_t)(first.s - text), line);
    sc.pos = 0;
    switch (*section) {
    case SECTION_NODES:
        return dismech_node(cx, b, &sc, line);
    case SECTION_TRIANGLES:
        return dismech_triangle(cx, b, &sc, line);
    case SECTION_EDGES:
        return true; /* a shell's edges follow from its triangles */
    case SECTION_NONE:
        break;
    }
    set_err(cx->err, cx->err_n, "line %ld: data before any section (expected a header such as *Nodes)", line);
    return false;
}

bool geom_read_dismech(const char *path, double scale, GeomMesh *out, char *err, size_t err_n)
{
    ReadCtx cx = {.node_word = "nodes", .index_word = "triangle"};
    Section section = SECTION_NONE;
    return read_mesh(path, scale, out, err, err_n, cx, dismech_line, &section);
}
