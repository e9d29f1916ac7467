/* diag.h — source files and compiler diagnostics (file:line:col, source line, caret, notes, hints). */
#ifndef SRD_DIAG_H
#define SRD_DIAG_H
#include <stdio.h>

/* A range in a source file; lines and columns count from 1, end is inclusive. */
typedef struct SrcLoc {
    int file;
    int line, col;
    int end_line, end_col;
} SrcLoc;

extern const SrcLoc NO_LOC; /* file = -1: a diagnostic about the command line or the whole run */

/* Source files are registered once and live until diag_reset(). */
int         src_add(const char *path, const char *text, size_t len);
/* Shows a registered file under another name in diagnostics (stdlib/rods.srd). */
void        src_set_display(int file, const char *name);
const char *src_path(int file);
const char *src_text(int file);
SrcLoc      loc_span(SrcLoc from, SrcLoc to);

typedef struct Diag Diag;
typedef enum { DIAG_ERROR, DIAG_WARNING } DiagLevel;

Diag *diag_error(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
Diag *diag_warning(SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void  diag_note(Diag *d, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void  diag_hint(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int  diag_error_count(void);
/* Prints every pending diagnostic sorted by position, then forgets them. */
void diag_flush(FILE *out);
/* The name that starts messages without a source position (default "srdc"). */
void diag_set_program(const char *name);
/* Forgets diagnostics and source files (used between fuzz iterations and tests). */
void diag_reset(void);
/* Forgets the diagnostics reported so far without printing them (the sources stay). */
void diag_discard(void);

/* The closest candidate to `word` within a small edit distance, or NULL. */
const char *diag_closest(const char *word, const char *const *candidates, int n);

#endif
