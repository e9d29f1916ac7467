/* table.h — the two-column tables of `table("file.csv", u)`: reading them (relative to the
 * model's file) for the evaluator and the kernel compiler alike. */
#ifndef SRD_TABLE_H
#define SRD_TABLE_H
#include <stdbool.h>
#include <stddef.h>

enum { TABLE_MAX_ROWS = 4096 };

typedef struct Table {
    int    n;
    double x[TABLE_MAX_ROWS], y[TABLE_MAX_ROWS];
} Table;

/* Resolves `name` against the directory of the source file `source` (absolute names stay). */
void table_path(const char *source, const char *name, char *path, size_t path_n);
/* Reads rows "x, y" (commas, semicolons or blanks; '#' comments; one header line before the data),
 * x strictly increasing, at least two rows. Returns false with a message in err. */
bool table_read(const char *path, Table *t, char *err, size_t err_n);
/* Linear interpolation, held constant beyond the ends. */
double table_at(const Table *t, double u);
/* The interpolation's slope at u (0 beyond the ends), and the row's x nearest u (where the
 * slope jumps). */
double table_slope(const Table *t, double u);
double table_nearest_row(const Table *t, double u);

#endif
