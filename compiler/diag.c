/* diag.c — collects diagnostics during a run and prints them like a good compiler does. */
#include "diag.h"
#include "alloc.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const SrcLoc NO_LOC = { -1, 0, 0, 0, 0 };

typedef struct SrcFile {
    char *path;
    char *text;
    size_t len;
} SrcFile;

typedef struct Note {
    SrcLoc loc;
    char  *msg;
} Note;

struct Diag {
    DiagLevel level;
    SrcLoc    loc;
    char     *msg;
    char     *hint;
    Note      notes[4];
    int       n_notes;
    int       seq; /* keeps the order of diagnostics reported at the same position */
    uint64_t  key; /* hash of position and message (seen_find) */
};

static SrcFile *files;
static int      n_files, cap_files;
static Diag   **diags;
static int      n_diags, cap_diags, n_errors, seq_counter;

enum { MAX_REPORTED_ERRORS = 50 };

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = srd_xrealloc(NULL, (size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

int src_add(const char *path, const char *text, size_t len)
{
    if (n_files == cap_files) {
        cap_files = cap_files ? 2 * cap_files : 8;
        files = srd_xrealloc(files, sizeof *files * (size_t)cap_files);
    }
    SrcFile *f = &files[n_files];
    f->path = srd_xstrdup(path);
    f->text = srd_xrealloc(NULL, len + 1);
    memcpy(f->text, text, len);
    f->text[len] = 0;
    f->len = len;
    return n_files++;
}

void src_set_display(int file, const char *name)
{
    if (file < 0 || file >= n_files)
        return;
    free(files[file].path);
    files[file].path = srd_xstrdup(name);
}

const char *src_path(int file) { return file >= 0 && file < n_files ? files[file].path : "<command line>"; }
const char *src_text(int file) { return file >= 0 && file < n_files ? files[file].text : ""; }

SrcLoc loc_span(SrcLoc from, SrcLoc to)
{
    if (from.file != to.file)
        return from;
    SrcLoc r = from;
    r.end_line = to.end_line;
    r.end_col = to.end_col;
    return r;
}

static bool same_loc(SrcLoc a, SrcLoc b)
{
    return a.file == b.file && a.line == b.line && a.col == b.col && a.end_line == b.end_line &&
           a.end_col == b.end_col;
}

/* The diagnostics recorded so far, by a hash of position and message: loop bodies and functions
 * repeat their mistakes, and a loop of 10,000 turns can make as many different ones (each naming
 * its `b[i]`), which a linear search for duplicates made quadratic. Open addressing, NULL empty. */
static Diag  **seen;
static size_t  n_seen_slots, n_seen;

static uint64_t diag_key(SrcLoc loc, const char *msg)
{
    int parts[5] = { loc.file, loc.line, loc.col, loc.end_line, loc.end_col };
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 5; i++)
        h = (h ^ (uint64_t)(unsigned)parts[i]) * 0x100000001b3ull;
    for (const char *c = msg; *c; c++)
        h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    return h;
}

static Diag *seen_find(SrcLoc loc, const char *msg, uint64_t key)
{
    for (size_t i = n_seen_slots ? key & (n_seen_slots - 1) : 0; n_seen_slots && seen[i];
         i = (i + 1) & (n_seen_slots - 1))
        if (seen[i]->key == key && same_loc(seen[i]->loc, loc) && !strcmp(seen[i]->msg, msg))
            return seen[i];
    return NULL;
}

static void seen_insert(Diag *d)
{
    size_t i = d->key & (n_seen_slots - 1);
    while (seen[i])
        i = (i + 1) & (n_seen_slots - 1);
    seen[i] = d;
}

static void seen_add(Diag *d)
{
    if (2 * (n_seen + 1) > n_seen_slots) {
        Diag **old = seen;
        size_t n_old = n_seen_slots;
        n_seen_slots = n_old ? 2 * n_old : 64;
        seen = srd_xcalloc(n_seen_slots, sizeof *seen);
        for (size_t k = 0; k < n_old; k++)
            if (old[k])
                seen_insert(old[k]);
        free(old);
    }
    seen_insert(d);
    n_seen++;
}

static void seen_clear(void)
{
    free(seen);
    seen = NULL;
    n_seen_slots = n_seen = 0;
}

static Diag *diag_new(DiagLevel level, SrcLoc loc, const char *fmt, va_list ap)
{
    char *msg = vformat(fmt, ap);
    /* Loop bodies and functions are evaluated many times: report each mistake once. */
    uint64_t key = diag_key(loc, msg);
    if (seen_find(loc, msg, key)) {
        free(msg);
        return NULL;
    }
    Diag *d = srd_xrealloc(NULL, sizeof *d);
    memset(d, 0, sizeof *d);
    d->level = level;
    d->loc = loc;
    d->msg = msg;
    d->key = key;
    seen_add(d);
    d->seq = seq_counter++;
    if (n_diags == cap_diags) {
        cap_diags = cap_diags ? 2 * cap_diags : 16;
        diags = srd_xrealloc(diags, sizeof *diags * (size_t)cap_diags);
    }
    diags[n_diags++] = d;
    if (level == DIAG_ERROR)
        n_errors++;
    return d;
}

Diag *diag_error(SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    Diag *d = diag_new(DIAG_ERROR, loc, fmt, ap);
    va_end(ap);
    return d;
}

Diag *diag_warning(SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    Diag *d = diag_new(DIAG_WARNING, loc, fmt, ap);
    va_end(ap);
    return d;
}

void diag_note(Diag *d, SrcLoc loc, const char *fmt, ...)
{
    if (!d || d->n_notes == (int)(sizeof d->notes / sizeof d->notes[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    d->notes[d->n_notes].loc = loc;
    d->notes[d->n_notes].msg = vformat(fmt, ap);
    d->n_notes++;
    va_end(ap);
}

void diag_hint(Diag *d, const char *fmt, ...)
{
    if (!d)
        return;
    va_list ap;
    va_start(ap, fmt);
    free(d->hint);
    d->hint = vformat(fmt, ap);
    va_end(ap);
}

int diag_error_count(void) { return n_errors; }

/* Finds the text of line `line` (1-based) in file `file`; returns its length. CR, CRLF and
 * LF end lines, as in the scanner. */
static const char *line_text(int file, int line, int *len)
{
    const char *p = src_text(file);
    for (int l = 1; l < line && *p; p++)
        if (*p == '\n' || (*p == '\r' && p[1] != '\n'))
            l++;
    const char *e = p;
    while (*e && *e != '\n' && *e != '\r')
        e++;
    *len = (int)(e - p);
    return p;
}

enum { EXCERPT_MAX = 256, EXCERPT_WIDTH = 160 }; /* a line longer than EXCERPT_MAX shows EXCERPT_WIDTH columns */

/* The part of a line to show: all of it when short, else a window around column col (1-based),
 * clang-style, so that a 10,000-column line prints as a hundred. Never splits a UTF-8
 * sequence. */
static void excerpt_window(const char *text, int len, int col, int *from, int *to)
{
    *from = 0;
    *to = len;
    if (len <= EXCERPT_MAX)
        return;
    int start = col - 1 - EXCERPT_WIDTH / 2;
    if (start > len - EXCERPT_WIDTH)
        start = len - EXCERPT_WIDTH;
    if (start < 0)
        start = 0;
    while (start > 0 && ((unsigned char)text[start] & 0xC0) == 0x80)
        start--;
    int end = start + EXCERPT_WIDTH;
    while (end < len && ((unsigned char)text[end] & 0xC0) == 0x80)
        end++;
    *from = start;
    *to = end;
}

static void print_source_excerpt(FILE *out, SrcLoc loc)
{
    if (loc.file < 0 || loc.line <= 0)
        return;
    int len;
    const char *text = line_text(loc.file, loc.line, &len);
    if (loc.line > 1 && len == 0 && loc.col <= 1)
        return;
    int col = loc.col < 1 ? 1 : loc.col, from, to;
    excerpt_window(text, len, col, &from, &to);
    const char *head = from > 0 ? "..." : "", *tail = to < len ? "..." : "";
    fprintf(out, "%5d | %s%.*s%s\n      | %s", loc.line, head, to - from, text + from, tail, from > 0 ? "   " : "");
    /* Reproduce tabs so the caret lines up however the terminal expands them. */
    for (int i = from; i < col - 1 && i < to; i++)
        fputc(text[i] == '\t' ? '\t' : ' ', out);
    for (int i = len; i < col - 1; i++)
        fputc(' ', out);
    int last = loc.end_line == loc.line ? loc.end_col : len;
    if (last > to)
        last = to;
    if (last < col)
        last = col;
    fputc('^', out);
    for (int i = col + 1; i <= last; i++)
        fputc('~', out);
    fputc('\n', out);
}

static const char *program = "srdc";

void diag_set_program(const char *name) { program = name; }

static void print_header(FILE *out, SrcLoc loc, const char *kind, const char *msg)
{
    if (loc.file >= 0)
        fprintf(out, "%s:%d:%d: %s: %s\n", src_path(loc.file), loc.line, loc.col, kind, msg);
    else
        fprintf(out, "%s: %s: %s\n", program, kind, msg);
}

static int diag_order(const void *pa, const void *pb)
{
    const Diag *a = *(Diag *const *)pa, *b = *(Diag *const *)pb;
    if (a->loc.file != b->loc.file)
        return a->loc.file < b->loc.file ? -1 : 1;
    if (a->loc.line != b->loc.line)
        return a->loc.line < b->loc.line ? -1 : 1;
    if (a->loc.col != b->loc.col)
        return a->loc.col < b->loc.col ? -1 : 1;
    return a->seq < b->seq ? -1 : 1;
}

static void free_diag(Diag *d)
{
    free(d->msg);
    free(d->hint);
    for (int i = 0; i < d->n_notes; i++)
        free(d->notes[i].msg);
    free(d);
}

void diag_flush(FILE *out)
{
    if (n_diags > 1)
        qsort(diags, (size_t)n_diags, sizeof *diags, diag_order);
    int shown_errors = 0;
    for (int i = 0; i < n_diags; i++) {
        Diag *d = diags[i];
        if (d->level == DIAG_ERROR && shown_errors == MAX_REPORTED_ERRORS) {
            fprintf(out, "%s: too many errors, stopping after %d\n", program, MAX_REPORTED_ERRORS);
            break;
        }
        shown_errors += d->level == DIAG_ERROR;
        print_header(out, d->loc, d->level == DIAG_ERROR ? "error" : "warning", d->msg);
        print_source_excerpt(out, d->loc);
        for (int k = 0; k < d->n_notes; k++) {
            print_header(out, d->notes[k].loc, "note", d->notes[k].msg);
            print_source_excerpt(out, d->notes[k].loc);
        }
        if (d->hint)
            fprintf(out, "hint: %s\n", d->hint);
    }
    seen_clear();
    for (int i = 0; i < n_diags; i++)
        free_diag(diags[i]);
    n_diags = 0;
    fflush(out);
}

void diag_discard(void)
{
    seen_clear();
    for (int i = 0; i < n_diags; i++)
        free_diag(diags[i]);
    free(diags);
    diags = NULL;
    n_diags = cap_diags = n_errors = 0;
}

void diag_reset(void)
{
    diag_discard();
    for (int i = 0; i < n_files; i++) {
        free(files[i].path);
        free(files[i].text);
    }
    free(files);
    files = NULL;
    n_files = cap_files = 0;
}

/* Optimal string alignment distance: insertions, deletions, substitutions and swaps of
 * neighbouring letters (`amr` -> `arm`) each cost one. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    static int d[64][64];
    for (int i = 0; i <= la; i++)
        d[i][0] = i;
    for (int j = 0; j <= lb; j++)
        d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int cost = a[i - 1] == b[j - 1] ? 0 : 1;
            int best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* Length of the common prefix: breaks ties between equally close candidates. */
static int common_prefix(const char *a, const char *b)
{
    int n = 0;
    while (a[n] && a[n] == b[n])
        n++;
    return n;
}

const char *diag_closest(const char *word, const char *const *candidates, int n)
{
    const char *best = NULL;
    int best_d = 99, best_prefix = -1;
    size_t wl = strlen(word);
    int limit = wl <= 3 ? 1 : wl <= 6 ? 2 : 3;
    for (int i = 0; i < n; i++) {
        if (!candidates[i] || !strcmp(candidates[i], word))
            continue;
        int d = edit_distance(word, candidates[i]);
        int prefix = common_prefix(word, candidates[i]);
        if (d < best_d || (d == best_d && prefix > best_prefix)) {
            best_d = d;
            best = candidates[i];
            best_prefix = prefix;
        }
    }
    return best_d <= limit ? best : NULL;
}
