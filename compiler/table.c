/* table.c — reads the two-column tables behind `table(...)` and interpolates them. */
#include "table.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sources.h"

void table_path(const char *source, const char *name, char *path, size_t path_n)
{
    const char *slash = strrchr(source, '/');
    if (name[0] == '/' || !slash)
        snprintf(path, path_n, "%s", name);
    else
        snprintf(path, path_n, "%.*s/%s", (int)(slash - source), source, name);
}

static const char *skip_separators(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';')
        p++;
    return p;
}

/* One data line into (u, w); 0 for a blank or comment line, 1 for a row, -1 when malformed. */
static int parse_row(const char *line, double *u, double *w)
{
    const char *p = skip_separators(line);
    char *end;
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == 0)
        return 0;
    *u = strtod(p, &end);
    if (end == p)
        return -1;
    p = skip_separators(end);
    *w = strtod(p, &end);
    return end == p ? -1 : 1;
}

bool table_read(const char *path, Table *t, char *err, size_t err_n)
{
    FILE *fp = sources_open(path);
    if (!fp) {
        snprintf(err, err_n, "cannot open table `%s`: %s", path, sources_error());
        return false;
    }
    char buf[512];
    int line = 0;
    bool ok = true, header = false;
    t->n = 0;
    while (ok && fgets(buf, sizeof buf, fp)) {
        line++;
        double u, w;
        int kind = parse_row(buf, &u, &w);
        if (kind < 0 && t->n == 0 && !header) { /* a header line before the data */
            header = true;
            continue;
        }
        if (kind == 0)
            continue;
        if (kind < 0)
            snprintf(err, err_n, "table `%s`, line %d: expected two numbers", path, line);
        else if (t->n > 0 && !(u > t->x[t->n - 1]))
            snprintf(err, err_n, "table `%s`, line %d: the first column must increase", path, line);
        else if (t->n == TABLE_MAX_ROWS)
            snprintf(err, err_n, "table `%s` has more than %d rows", path, TABLE_MAX_ROWS);
        ok = kind > 0 && (t->n == 0 || u > t->x[t->n - 1]) && t->n < TABLE_MAX_ROWS;
        if (ok) {
            t->x[t->n] = u;
            t->y[t->n] = w;
            t->n++;
        }
    }
    fclose(fp);
    if (ok && t->n < 2) {
        snprintf(err, err_n, "table `%s` needs at least two rows", path);
        ok = false;
    }
    return ok;
}

/* The row k with x[k] < u <= x[k + 1], for u strictly inside the table. */
static int segment(const Table *t, double u)
{
    int k = 0;
    while (t->x[k + 1] < u)
        k++;
    return k;
}

double table_at(const Table *t, double u)
{
    if (u <= t->x[0])
        return t->y[0];
    if (u >= t->x[t->n - 1])
        return t->y[t->n - 1];
    int k = segment(t, u);
    return t->y[k] + (t->y[k + 1] - t->y[k]) * (u - t->x[k]) / (t->x[k + 1] - t->x[k]);
}

double table_slope(const Table *t, double u)
{
    if (u <= t->x[0] || u >= t->x[t->n - 1])
        return 0;
    int k = segment(t, u);
    return (t->y[k + 1] - t->y[k]) / (t->x[k + 1] - t->x[k]);
}

double table_nearest_row(const Table *t, double u)
{
    double best = t->x[0];
    for (int k = 1; k < t->n; k++)
        if (fabs(t->x[k] - u) < fabs(best - u))
            best = t->x[k];
    return best;
}
