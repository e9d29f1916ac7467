/* parse.c — reads source files, runs the generated scanner and parser, and follows `use`. */
#include "parse.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sources.h"
#include "srd.tab.h"

typedef void *yyscan_t;
int  srd_yylex_init_extra(LexExtra *extra, yyscan_t *scanner);
int  srd_yylex_destroy(yyscan_t scanner);
void *srd_yy_scan_bytes(const char *bytes, int len, yyscan_t scanner);

Expr *ast_expr(ParseCtx *ctx, ExprKind kind, SrcLoc loc)
{
    Expr *e = arena_alloc(ctx->arena, sizeof *e);
    e->kind = kind;
    e->loc = loc;
    e->depth = 1;
    return e;
}

Expr *ast_number(ParseCtx *ctx, double value, SrcLoc loc)
{
    Expr *e = ast_expr(ctx, EX_NUM, loc);
    e->num = value;
    if (!isfinite(value)) {
        ctx->syntax_errors++;
        Diag *d = diag_error(loc, "this number is out of range");
        diag_hint(d, "the largest number srd can hold is about 1.8e308");
    }
    return e;
}

static int deeper(int d, const Expr *x) { return x && x->depth > d ? x->depth : d; }

Expr *ast_nest(ParseCtx *ctx, Expr *e)
{
    int d = deeper(deeper(deeper(0, e->a), e->b), e->c);
    for (int i = 0; i < e->n_args; i++)
        d = deeper(d, e->args[i]);
    if (e->range)
        d = deeper(deeper(d, e->range->lo), e->range->hi);
    e->depth = d + 1;
    /* Only the node that crosses the limit reports: its ancestors are deeper still. */
    if (e->depth == PARSE_MAX_EXPR_DEPTH + 1)
        parse_too_deep(ctx, e->loc);
    return e;
}

void parse_too_deep(ParseCtx *ctx, SrcLoc loc)
{
    ctx->syntax_errors++;
    Diag *d = diag_error(loc, "expression nested too deeply (limit %d)", PARSE_MAX_EXPR_DEPTH);
    diag_hint(d, "split it into parts with `let`; a long chain such as a + b + c + ... counts one level per operator");
}

Stmt *ast_stmt(ParseCtx *ctx, StmtKind kind, SrcLoc loc)
{
    Stmt *s = arena_alloc(ctx->arena, sizeof *s);
    s->kind = kind;
    s->loc = loc;
    return s;
}

int parse_source(Arena *arena, const char *path, const char *text, size_t len, PtrVec *out)
{
    return parse_source_as(arena, path, path, text, len, out);
}

int parse_source_as(Arena *arena, const char *path, const char *display, const char *text, size_t len, PtrVec *out)
{
    /* A UTF-8 byte-order mark (editors on Windows write one) is not part of the program; the
     * registered text starts after it, so columns and printed lines are as without it. */
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
        text += 3;
        len -= 3;
    }
    ParseCtx ctx = { 0 };
    ctx.arena = arena;
    ctx.file = src_add(path, text, len);
    if (display != path)
        src_set_display(ctx.file, display);
    LexExtra extra = { 0 };
    extra.ctx = &ctx;
    extra.line = extra.col = 1;
    yyscan_t scanner;
    srd_yylex_init_extra(&extra, &scanner);
    /* Scan the registered copy: it is NUL-terminated even when `text` was not. */
    srd_yy_scan_bytes(src_text(ctx.file), (int)len, scanner);
    srd_yyparse(scanner, &ctx);
    srd_yylex_destroy(scanner);
    for (int i = 0; i < ctx.stmts.len; i++)
        ptrvec_push(arena, out, ctx.stmts.items[i]);
    return ctx.syntax_errors;
}

const char *parse_stdlib_dir(void)
{
    const char *env = getenv("SRD_STDLIB");
    if (env && *env)
        return env;
#ifdef SRD_STDLIB_DIR
    return SRD_STDLIB_DIR;
#else
    return "stdlib";
#endif
}

typedef struct Module {
    const char *name;
    const char *path;
} Module;

static const char *std_modules[] = { "std.rods",     "std.shells",  "std.springs",
                                     "std.schedules", "std.contact", "std.fluids",
                                     "std.loads",   "std.solids" };

/* std.rods → <stdlib>/rods.srd; a.b → <dir of the using file>/a/b.srd */
static const char *module_path(Arena *a, const char *name, const char *stdlib_dir, const char *from)
{
    if (!strncmp(name, "std.", 4)) {
        char *p = arena_printf(a, "%s/%s.srd", stdlib_dir, name + 4);
        for (char *c = p + strlen(stdlib_dir) + 1; *c; c++)
            if (*c == '.' && strcmp(c, ".srd"))
                *c = '/';
        return p;
    }
    const char *slash = strrchr(from, '/');
    char *rel = arena_strdup(a, name);
    for (char *c = rel; *c; c++)
        if (*c == '.')
            *c = '/';
    if (!slash)
        return arena_printf(a, "%s.srd", rel);
    return arena_printf(a, "%.*s/%s.srd", (int)(slash - from), from, rel);
}

static bool load_one(Arena *a, const char *path, SrcLoc use_loc, const char *use_name, PtrVec *out)
{
    size_t len;
    char *text = sources_read(path, &len);
    if (text && memchr(text, 0, len)) {
        diag_error(use_name ? use_loc : NO_LOC, "`%s` is not a text file (it contains NUL bytes)", path);
        free(text);
        return false;
    }
    if (!text && use_name && access(path, F_OK) == 0) { /* there, but not readable */
        diag_error(use_loc, "cannot read module `%s` (%s): %s", use_name, path, sources_error());
        return false;
    }
    if (!text) {
        if (use_name) {
            bool std = !strncmp(use_name, "std.", 4);
            Diag *d = std ? diag_error(use_loc, "cannot find module `%s`", use_name)
                          : diag_error(use_loc, "cannot find module `%s` (looked for %s)", use_name, path);
            const char *close = diag_closest(use_name, std_modules, (int)(sizeof std_modules / sizeof *std_modules));
            if (close)
                diag_hint(d, "did you mean `%s`?", close);
            else if (!strncmp(use_name, "std.", 4))
                diag_hint(d, "the standard modules are std.rods, std.shells, std.springs, std.schedules, std.contact, "
                             "std.fluids, std.loads and std.solids");
        } else {
            diag_error(NO_LOC, "cannot read `%s`: %s", path, sources_error());
        }
        return false;
    }
    /* Standard modules show as stdlib/NAME.srd wherever the library is installed. */
    const char *display = path;
    if (use_name && !strncmp(use_name, "std.", 4))
        display = arena_printf(a, "stdlib/%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    int errors = parse_source_as(a, path, display, text, len, out);
    free(text);
    return errors == 0;
}

bool parse_program(Arena *a, const char *path, const char *stdlib_dir, Program *prog)
{
    return parse_program_text(a, path, NULL, 0, stdlib_dir, prog);
}

bool parse_program_text(Arena *a, const char *path, const char *text, size_t len, const char *stdlib_dir,
                        Program *prog)
{
    PtrVec main_stmts = { 0 };
    if (text) {
        if (parse_source(a, path, text, len, &main_stmts))
            return false;
    } else if (!load_one(a, path, NO_LOC, NULL, &main_stmts)) {
        return false;
    }
    /* Modules are loaded breadth-first; each name once. Their statements precede the user's. */
    PtrVec queue = { 0 }, names = { 0 }, all = { 0 }, froms = { 0 };
    for (int i = 0; i < main_stmts.len; i++) {
        Stmt *s = main_stmts.items[i];
        if (s->kind == ST_USE) {
            ptrvec_push(a, &queue, s);
            ptrvec_push(a, &froms, (void *)path);
        }
    }
    bool ok = true;
    PtrVec module_stmts = { 0 };
    for (int q = 0; q < queue.len; q++) {
        Stmt *use = queue.items[q];
        bool seen = false;
        for (int k = 0; k < names.len; k++)
            seen |= !strcmp(names.items[k], use->name);
        if (seen)
            continue;
        ptrvec_push(a, &names, (void *)use->name);
        const char *mpath = module_path(a, use->name, stdlib_dir, froms.items[q]);
        PtrVec stmts = { 0 };
        if (!load_one(a, mpath, use->loc, use->name, &stmts)) {
            ok = false;
            continue;
        }
        for (int i = 0; i < stmts.len; i++) {
            Stmt *s = stmts.items[i];
            if (s->kind == ST_USE) {
                ptrvec_push(a, &queue, s);
                ptrvec_push(a, &froms, (void *)mpath);
            }
            ptrvec_push(a, &module_stmts, s);
        }
    }
    for (int i = 0; i < module_stmts.len; i++)
        ptrvec_push(a, &all, module_stmts.items[i]);
    for (int i = 0; i < main_stmts.len; i++)
        ptrvec_push(a, &all, main_stmts.items[i]);
    prog->stmts = (Stmt **)all.items;
    prog->n_stmts = all.len;
    return ok && diag_error_count() == 0;
}
