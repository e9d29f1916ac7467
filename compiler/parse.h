/* parse.h — the parser driver: reads files, runs the flex/bison front end, follows `use`. */
#ifndef SRD_PARSE_H
#define SRD_PARSE_H
#include <stdbool.h>
#include "ast.h"

/* State shared by the generated scanner and parser. */
typedef struct ParseCtx {
    Arena *arena;
    int    file;
    PtrVec stmts;
    int    syntax_errors;
    int    prev_line, prev_col; /* end of the last token returned, for "expected `;`" */
    int    cur_line, cur_col;
    int    lex_error_line;      /* line of the last lexical error: no syntax error piles on it */
    int    reserved_name;       /* token of a keyword used as a name (reported once): its later uses
                                   add no errors */
} ParseCtx;

typedef struct LexExtra {
    ParseCtx *ctx;
    int       line, col;
    int       ws_before;    /* whitespace came right before the current token */
    int       comment_line, comment_col;
    int       after_cr;     /* the last character scanned was a CR (a following LF ends no line) */
} LexExtra;

/* Parses one source text; statements are appended to *out. Returns the syntax error count. */
int parse_source(Arena *arena, const char *path, const char *text, size_t len, PtrVec *out);
/* The same, showing the file as `display` in diagnostics. */
int parse_source_as(Arena *arena, const char *path, const char *display, const char *text, size_t len, PtrVec *out);

/* Reads `path` and every module it uses (stdlib_dir holds std.*). Modules come first in the
 * program, each once. Returns false after reporting errors. */
bool parse_program(Arena *arena, const char *path, const char *stdlib_dir, Program *prog);

/* The same with the main file's text given (fuzzing, tests); modules are still read from disk. */
bool parse_program_text(Arena *arena, const char *path, const char *text, size_t len, const char *stdlib_dir,
                        Program *prog);

/* The directory of the standard library: $SRD_STDLIB, else the one the build recorded. */
const char *parse_stdlib_dir(void);

/* How deep one expression's tree may be. Every pass over expressions (evaluation, lowering)
 * recurses, so the parser refuses deeper trees, long left-associative chains included. */
enum { PARSE_MAX_EXPR_DEPTH = 256 };
/* The parser's stack, in states: far above what PARSE_MAX_EXPR_DEPTH levels need (a few states
 * each), so only input nested beyond that limit exhausts it. */
enum { PARSE_MAX_STACK = 20 * PARSE_MAX_EXPR_DEPTH };

/* Helpers for the grammar actions. */
Expr *ast_expr(ParseCtx *ctx, ExprKind kind, SrcLoc loc);
/* A number literal; one too large for a double (1e400) is an error, not infinity. */
Expr *ast_number(ParseCtx *ctx, double value, SrcLoc loc);
/* Records e's depth from its children (built before it) and reports a tree that is too deep. */
Expr *ast_nest(ParseCtx *ctx, Expr *e);
/* The error for input nested too deeply (also what exhausting the parser's stack reports). */
void  parse_too_deep(ParseCtx *ctx, SrcLoc loc);
Stmt *ast_stmt(ParseCtx *ctx, StmtKind kind, SrcLoc loc);

#endif
