/* frames.c — the reader of frames.h: a small scanner over srd's own .pvd and .vtu layout. */
#include "frames.h"
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"

/* The whole file, NUL-terminated (binary frames hold NULs too: *len tells the real length). */
static char *slurp(const char *path, size_t *len, char *err, size_t err_n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_n, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = srd_xcalloc(cap + 1, 1);
    for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = srd_xrealloc(buf, cap + 1);
        }
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* The value of attribute `name` in the tag starting at tag (up to its '>'), copied to out. */
static int attribute(const char *tag, const char *name, char *out, size_t n)
{
    const char *end = strchr(tag, '>');
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *at = strstr(tag, key);
    if (!at || (end && at > end))
        return -1;
    at += strlen(key);
    const char *close = strchr(at, '"');
    if (!close || (size_t)(close - at) >= n)
        return -1;
    memcpy(out, at, (size_t)(close - at));
    out[close - at] = 0;
    return 0;
}

int srd_series_read(const char *pvd, srd_series *s, char *err, size_t err_n)
{
    memset(s, 0, sizeof *s);
    size_t len;
    char *text = slurp(pvd, &len, err, err_n);
    if (!text)
        return -1;
    const char *slash = strrchr(pvd, '/');
    int dir_len = slash ? (int)(slash - pvd + 1) : 0;
    int cap = 16;
    s->times = srd_xcalloc((size_t)cap, sizeof(double));
    s->paths = srd_xcalloc((size_t)cap, sizeof(char *));
    for (const char *p = strstr(text, "<DataSet"); p; p = strstr(p + 1, "<DataSet")) {
        char t[64], file[1024];
        if (attribute(p, "timestep", t, sizeof t) || attribute(p, "file", file, sizeof file))
            continue;
        if (s->n == cap) {
            cap *= 2;
            s->times = srd_xrealloc(s->times, sizeof(double) * (size_t)cap);
            s->paths = srd_xrealloc(s->paths, sizeof(char *) * (size_t)cap);
        }
        char path[2048];
        snprintf(path, sizeof path, "%.*s%s", dir_len, pvd, file);
        s->times[s->n] = strtod(t, NULL);
        s->paths[s->n++] = srd_xstrdup(path);
    }
    free(text);
    if (s->n == 0) {
        snprintf(err, err_n, "%s lists no frames", pvd);
        return -1;
    }
    return 0;
}

void srd_series_free(srd_series *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->paths[i]);
    free(s->paths);
    free(s->times);
    memset(s, 0, sizeof *s);
}

/* ---- one frame ---- */

enum { SEC_NONE, SEC_POINTS, SEC_CELLS, SEC_POINT_DATA, SEC_CELL_DATA, SEC_FIELD_DATA };

typedef struct Reader {
    const char *text, *appended; /* appended: the byte after '_', or NULL */
    size_t      len;
    char       *err;
    size_t      err_n;
} Reader;

/* The section a DataArray at p belongs to: the last section tag opened before it. */
static int section_at(const char *text, const char *p)
{
    static const char *tags[] = { "<Points>", "<Cells>", "<PointData", "<CellData", "<FieldData" };
    int best = SEC_NONE;
    const char *best_at = NULL;
    for (int k = 0; k < 5; k++) {
        for (const char *q = strstr(text, tags[k]); q && q < p; q = strstr(q + 1, tags[k]))
            if (!best_at || q > best_at) {
                best_at = q;
                best = k + 1;
            }
    }
    return best;
}

/* n values of a DataArray as doubles: text after the tag, or raw bytes at its offset. */
static double *array_values(const Reader *r, const char *tag, size_t n)
{
    char type[32], format[32], off[32];
    if (attribute(tag, "type", type, sizeof type) || attribute(tag, "format", format, sizeof format))
        return NULL;
    double *v = srd_xcalloc(n + 1, sizeof(double));
    if (!strcmp(format, "ascii")) {
        const char *p = strchr(tag, '>') + 1;
        for (size_t i = 0; i < n; i++) {
            char *end;
            v[i] = strtod(p, &end);
            if (end == p) {
                free(v);
                return NULL;
            }
            p = end;
        }
        return v;
    }
    if (strcmp(format, "appended") || !r->appended || attribute(tag, "offset", off, sizeof off)) {
        free(v);
        return NULL;
    }
    size_t size = !strcmp(type, "Float64") ? 8 : !strcmp(type, "Int32") ? 4 : 1;
    const char *at = r->appended + strtoull(off, NULL, 10) + sizeof(uint64_t);
    if (at + n * size > r->text + r->len) {
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (size == 8)
            memcpy(&v[i], at + 8 * i, 8);
        else if (size == 4) {
            int32_t x;
            memcpy(&x, at + 4 * i, 4);
            v[i] = x;
        } else
            v[i] = (unsigned char)at[i];
    }
    return v;
}

static int piece_counts(const Reader *r, srd_frame *f)
{
    const char *piece = strstr(r->text, "<Piece");
    char np[32], nc[32];
    if (!piece || attribute(piece, "NumberOfPoints", np, sizeof np) ||
        attribute(piece, "NumberOfCells", nc, sizeof nc))
        return -1;
    f->n_points = strtoull(np, NULL, 10);
    f->n_cells = strtoull(nc, NULL, 10);
    return 0;
}

static int32_t *as_ints(double *v, size_t n)
{
    int32_t *out = srd_xcalloc(n + 1, sizeof(int32_t));
    for (size_t i = 0; i < n; i++)
        out[i] = (int32_t)v[i];
    free(v);
    return out;
}

/* Stores one DataArray of the given section into f; -1 when it cannot be read. */
static int store_array(const Reader *r, const char *tag, int section, srd_frame *f)
{
    char name[128] = "", comps[16] = "1";
    attribute(tag, "Name", name, sizeof name);
    attribute(tag, "NumberOfComponents", comps, sizeof comps);
    int ncomp = atoi(comps);
    if (ncomp < 1 || ncomp > 16)
        return -1;
    size_t tuples = section == SEC_POINTS || section == SEC_POINT_DATA ? f->n_points : f->n_cells;
    if (section == SEC_FIELD_DATA) {
        char count[32] = "1";
        attribute(tag, "NumberOfTuples", count, sizeof count);
        tuples = strtoull(count, NULL, 10);
        if (tuples < 1 || tuples > 100000)
            return -1;
    }
    if (section == SEC_CELLS && !strcmp(name, "connectivity"))
        tuples = f->n_cells && f->offsets ? (size_t)f->offsets[f->n_cells - 1] : 0;
    double *v = array_values(r, tag, tuples * (size_t)ncomp);
    if (!v)
        return -1;
    if (section == SEC_POINTS) {
        f->x = v;
    } else if (section == SEC_CELLS) {
        int32_t *ints = as_ints(v, tuples);
        if (!strcmp(name, "offsets"))
            f->offsets = ints;
        else if (!strcmp(name, "connectivity"))
            f->connectivity = ints;
        else {
            f->types = srd_xcalloc(tuples + 1, 1);
            for (size_t i = 0; i < tuples; i++)
                f->types[i] = (uint8_t)ints[i];
            free(ints);
        }
    } else if (f->n_fields < (int)(sizeof f->fields / sizeof *f->fields)) {
        srd_frame_field *fd = &f->fields[f->n_fields++];
        fd->name = srd_xstrdup(name);
        fd->ncomp = ncomp;
        fd->tuples = tuples;
        fd->on_cells = section == SEC_CELL_DATA ? 1 : section == SEC_FIELD_DATA ? 2 : 0;
        fd->values = v;
    } else {
        free(v);
    }
    return 0;
}

/* The arrays in file order, except that offsets must come before connectivity (its length). */
static int read_arrays(const Reader *r, srd_frame *f)
{
    const char *end = r->appended ? r->appended : r->text + r->len;
    for (int pass = 0; pass < 2; pass++)
        for (const char *p = strstr(r->text, "<DataArray"); p && p < end; p = strstr(p + 1, "<DataArray")) {
            char name[128] = "";
            attribute(p, "Name", name, sizeof name);
            if ((pass == 0) != !strcmp(name, "offsets"))
                continue;
            if (store_array(r, p, section_at(r->text, p), f) != 0) {
                snprintf(r->err, r->err_n, "array `%s` cannot be read", name[0] ? name : "Points");
                return -1;
            }
        }
    return 0;
}

static int check_cells(const srd_frame *f, char *err, size_t err_n)
{
    if (!f->x || !f->offsets || !f->connectivity || !f->types) {
        snprintf(err, err_n, "points or cells are missing");
        return -1;
    }
    for (size_t c = 0, at = 0; c < f->n_cells; c++) {
        size_t next = (size_t)f->offsets[c];
        if (next < at || next > (f->n_cells ? (size_t)f->offsets[f->n_cells - 1] : 0))
            return snprintf(err, err_n, "cell %zu has bad offsets", c), -1;
        for (size_t k = at; k < next; k++)
            if (f->connectivity[k] < 0 || (size_t)f->connectivity[k] >= f->n_points)
                return snprintf(err, err_n, "cell %zu names point %d of %zu", c, f->connectivity[k], f->n_points), -1;
        at = next;
    }
    return 0;
}

int srd_frame_read(const char *path, srd_frame *f, char *err, size_t err_n)
{
    memset(f, 0, sizeof *f);
    char why[256] = "";
    Reader r = { NULL, NULL, 0, why, sizeof why };
    char *text = slurp(path, &r.len, err, err_n);
    if (!text)
        return -1;
    r.text = text;
    const char *app = strstr(text, "<AppendedData");
    if (app && (app = strchr(app, '_')))
        r.appended = app + 1;
    int status = 0;
    if (!strstr(text, "<VTKFile type=\"UnstructuredGrid\"") || piece_counts(&r, f) != 0) {
        snprintf(why, sizeof why, "not an unstructured-grid frame");
        status = -1;
    }
    if (status == 0)
        status = read_arrays(&r, f);
    if (status == 0)
        status = check_cells(f, why, sizeof why);
    free(text);
    if (status != 0) {
        snprintf(err, err_n, "%s: %s", path, why);
        srd_frame_free(f);
    }
    return status;
}

void srd_frame_free(srd_frame *f)
{
    free(f->x);
    free(f->connectivity);
    free(f->offsets);
    free(f->types);
    for (int i = 0; i < f->n_fields; i++) {
        free(f->fields[i].name);
        free(f->fields[i].values);
    }
    memset(f, 0, sizeof *f);
}

const srd_frame_field *srd_frame_field_named(const srd_frame *f, const char *name)
{
    for (int i = 0; i < f->n_fields; i++)
        if (!strcmp(f->fields[i].name, name))
            return &f->fields[i];
    return NULL;
}

char *srd_series_find(const char *dir, const char *name, char *err, size_t err_n)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_n, "cannot open the run directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    char *best = NULL;
    int best_n = -1;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".pvd"))
            continue;
        if (name && (strncmp(e->d_name, name, len - 4) || strlen(name) != len - 4))
            continue;
        char path[4096], why[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        srd_series s;
        int n = srd_series_read(path, &s, why, sizeof why) == 0 ? s.n : 0;
        srd_series_free(&s);
        if (n > best_n || (n == best_n && strcmp(path, best) < 0)) {
            free(best);
            best = srd_xstrdup(path);
            best_n = n;
        }
    }
    closedir(d);
    if (!best)
        snprintf(err, err_n, name ? "%s has no series `%s` (no %s.pvd)" : "%s holds no VTK series (.pvd)", dir,
                 name ? name : "", name ? name : "");
    return best;
}

srd_frame *srd_frames_read_all(const srd_series *s, char *err, size_t err_n)
{
    srd_frame *frames = srd_xcalloc((size_t)s->n, sizeof *frames);
    for (int k = 0; k < s->n; k++)
        if (srd_frame_read(s->paths[k], &frames[k], err, err_n) != 0) {
            srd_frames_free(frames, k);
            return NULL;
        }
    return frames;
}

void srd_frames_free(srd_frame *frames, int n)
{
    for (int k = 0; frames && k < n; k++)
        srd_frame_free(&frames[k]);
    free(frames);
}

double srd_frame_value(const srd_frame_field *fd, size_t i)
{
    if (fd->ncomp == 1)
        return fd->values[i];
    double s = 0;
    for (int c = 0; c < fd->ncomp; c++)
        s += fd->values[fd->ncomp * i + c] * fd->values[fd->ncomp * i + c];
    return sqrt(s);
}

const srd_frame_field *srd_frame_field_on(const srd_frame *f, const char *name, int on_cells)
{
    for (int i = 0; i < f->n_fields; i++)
        if (f->fields[i].on_cells == on_cells && !strcmp(f->fields[i].name, name))
            return &f->fields[i];
    return NULL;
}
