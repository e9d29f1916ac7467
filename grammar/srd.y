/* srd.y — the pure bison parser of the .srd language. It builds the AST (ast.h) and recovers
 * at `;` and `}` so that one run reports several syntax errors. */
%code requires {
#include "parse.h"
typedef void *yyscan_t;
}

%code {
#define YYMAXDEPTH PARSE_MAX_STACK
#include <stdint.h>
#include <stdio.h>
#include <string.h>
int srd_yylex(YYSTYPE *lval, YYLTYPE *lloc, yyscan_t scanner);
#define yylex srd_yylex
static SrcLoc mkloc(ParseCtx *ctx, YYLTYPE l);
#define L(x) mkloc(ctx, (x))
static Expr *bin(ParseCtx *ctx, BinOp op, Expr *a, Expr *b, SrcLoc loc);
static void **vec_items(PtrVec *v) { return v ? v->items : NULL; }
static int vec_len(PtrVec *v) { return v ? v->len : 0; }
static PtrVec *vec_new(ParseCtx *ctx, void *first);
static PtrVec *vec_add(ParseCtx *ctx, PtrVec *v, void *item);
static Stmt *block_stmt(ParseCtx *ctx, BlockKind k, SrcLoc loc, PtrVec *items);
static Ident *ident_new(ParseCtx *ctx, const char *name, SrcLoc loc);
static void set_call_args(ParseCtx *ctx, Expr *e, PtrVec *args);
static void set_idents(PtrVec *v, Ident **out, int *n, ParseCtx *ctx);
static void set_stmts(PtrVec *v, Stmt ***out, int *n);
static Stmt *apply_stmt(ParseCtx *ctx, SrcLoc loc, const char *name, SrcLoc name_loc, PtrVec *args, PtrVec *named);
#define SEMICOLON_SYMBOL ((yysymbol_kind_t)symbol_for_char(';'))
#define CLOSE_BRACE_SYMBOL ((yysymbol_kind_t)symbol_for_char('}'))
static int symbol_for_char(int c);
static void srd_yyerror(YYLTYPE *loc, yyscan_t scanner, ParseCtx *ctx, const char *msg);
static void unknown_statement(ParseCtx *ctx, const char *word, SrcLoc loc, bool block);
static void missing_semicolon(ParseCtx *ctx, YYLTYPE after);
static void reserved_name(ParseCtx *ctx, const char *word, SrcLoc loc);
static void var_outside_control(ParseCtx *ctx, SrcLoc loc);
}

%define api.pure full
%define api.prefix {srd_yy}
%define parse.error custom
%locations
%param {yyscan_t scanner}
%parse-param {ParseCtx *ctx}
%expect 0

%union {
    double  num;
    const char *str;
    Expr   *expr;
    Stmt   *stmt;
    PtrVec *vec;
    Range  *range;
    Ident  *ident;
    int     kind;
}

%token <num> NUMBER "number"
%token <str> IDENT "identifier" STRING "string" UNIT "unit"
%token KW_USE "use" KW_PARAM "param" KW_LET "let" KW_FN "fn" KW_MATERIAL "material"
%token KW_ROD "rod" KW_SHELL "shell" KW_BODY "body" KW_LATTICE "lattice" KW_SOLID "solid" KW_JOINT "joint" KW_RFEM "rfem" KW_CONSTRAINT "constraint" KW_JOIN "join" KW_CLAMP "clamp"
%token KW_FIX "fix" KW_LOAD "load" KW_PRESSURE "pressure" KW_GRAVITY "gravity" KW_MEDIUM "medium"
%token KW_VISCOUS "viscous" KW_DAMPING "damping" KW_RFT "rft" KW_DRAG "drag"
%token KW_VIEW "view"
%token KW_GROUND "ground" KW_OBSTACLE "obstacle" KW_CONTACT "contact" KW_ACTUATE "actuate"
%token KW_ENERGY "energy" KW_FORCE "force" KW_APPLY "apply" KW_FOR "for" KW_IN "in"
%token KW_OVER "over" KW_WHERE "where" KW_SIMULATE "simulate" KW_STATIC "static"
%token KW_OPTIMIZE "optimize" KW_VARY "vary"
%token KW_MODES "modes" KW_OUTPUT "output" KW_PROBE "probe" KW_EVERY "every"
%token KW_MOVE "move" KW_ROTATE "rotate" KW_RELEASE "release"
%token KW_INPUT "input" KW_CONTROL "control" KW_VAR "var"
%token KW_RETURN "return" KW_PLANAR "planar"
%token DOTDOT ".." DOTDOTEQ "..=" LE "<=" GE ">=" EQ "==" NE "!=" AND "&&" OR "||"

%type <expr> expr postfix primary
%type <stmt> stmt item body_stmt decl_head
%type <vec> stmts items body_stmts expr_list opt_args args idents opt_idents stencil
%type <vec> named_args control_items
%type <stmt> control_item
%type <range> range
%type <str> dotted prop_key reserved_word
%type <ident> stencil_param named_arg
%type <kind> env_kw analysis_kw object_kw

%left KW_WHERE KW_OVER
%precedence DOTDOT DOTDOTEQ
%right '?' ':'
%left OR
%left AND
%nonassoc EQ NE
%nonassoc '<' LE '>' GE
%left '+' '-'
%left '*' '/'
%precedence UMINUS '!'
%right '^'

%%

program
    : stmts                         { if ($1) for (int i = 0; i < $1->len; i++) ptrvec_push(ctx->arena, &ctx->stmts, $1->items[i]); }
    ;

stmts
    : %empty                        { $$ = NULL; }
    | stmts stmt                    { $$ = $2 ? vec_add(ctx, $1, $2) : $1; }
    ;

dotted
    : IDENT                         { $$ = $1; }
    | dotted '.' IDENT              { $$ = arena_printf(ctx->arena, "%s.%s", $1, $3); }
    | dotted '.' KW_CONTACT         { $$ = arena_printf(ctx->arena, "%s.contact", $1); }
    ;

stmt
    : KW_USE dotted ';'             { $$ = ast_stmt(ctx, ST_USE, L(@$)); $$->name = $2; $$->name_loc = L(@2); }
    | KW_PARAM IDENT '=' expr ';'   { $$ = ast_stmt(ctx, ST_PARAM, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | KW_PARAM IDENT '=' expr KW_IN range ';'
                                    { $$ = ast_stmt(ctx, ST_PARAM, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; $$->range = $6; }
    | KW_INPUT IDENT '=' expr ';'   { $$ = ast_stmt(ctx, ST_INPUT, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | KW_INPUT IDENT '=' expr KW_IN range ';'
                                    { $$ = ast_stmt(ctx, ST_INPUT, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; $$->range = $6; }
    | KW_CONTROL KW_EVERY expr '{' control_items '}'
                                    { $$ = ast_stmt(ctx, ST_CONTROL, L(@1)); $$->every = $3; set_stmts($5, &$$->body, &$$->n_body); }
    | KW_CONTROL '{' control_items '}'
                                    { $$ = ast_stmt(ctx, ST_CONTROL, L(@1)); set_stmts($3, &$$->body, &$$->n_body); }
    | KW_VAR IDENT '=' expr ';'     { var_outside_control(ctx, L(@1)); $$ = NULL; }
    | KW_LET IDENT '=' expr ';'     { $$ = ast_stmt(ctx, ST_LET, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | KW_FN IDENT '(' opt_idents ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_FN, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->params, &$$->n_params, ctx); $$->value = $7; }
    | KW_FN IDENT '(' opt_idents ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_FN, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->params, &$$->n_params, ctx); set_stmts($7, &$$->body, &$$->n_body); }
    | decl_head '{' items '}'       { $$ = $1; set_stmts($3, &$$->body, &$$->n_body); }
    | env_kw '{' items '}'          { $$ = block_stmt(ctx, (BlockKind)$1, L(@1), $3); }
    | KW_OBSTACLE IDENT '{' items '}'
                                    { $$ = block_stmt(ctx, BK_OBSTACLE, L(@1), $4); $$->subkind = $2; $$->subkind_loc = L(@2); }
    | KW_OBSTACLE IDENT IDENT '{' items '}'
                                    { $$ = block_stmt(ctx, BK_OBSTACLE, L(@1), $5); $$->subkind = $2; $$->subkind_loc = L(@2);
                                      $$->name = $3; $$->name_loc = L(@3); }
    | KW_CONTACT expr_list '{' items '}'
                                    { $$ = block_stmt(ctx, BK_CONTACT, L(@1), $4);
                                      $$->items = (Expr **)vec_items($2); $$->n_items = vec_len($2); }
    | analysis_kw '{' items '}'     { $$ = block_stmt(ctx, (BlockKind)$1, L(@1), $3); }
    | KW_GRAVITY '=' expr ';'       { $$ = ast_stmt(ctx, ST_GRAVITY, L(@$)); $$->value = $3; }
    | KW_JOIN expr_list ';'         { $$ = ast_stmt(ctx, ST_JOIN, L(@$)); $$->items = (Expr **)vec_items($2); $$->n_items = vec_len($2); }
    | KW_CLAMP expr ';'             { $$ = ast_stmt(ctx, ST_CLAMP, L(@$)); $$->target = $2; }
    | KW_FIX expr ';'               { $$ = ast_stmt(ctx, ST_FIX, L(@$)); $$->target = $2; }
    | KW_LOAD expr '=' expr ';'     { $$ = ast_stmt(ctx, ST_LOAD, L(@$)); $$->target = $2; $$->value = $4; }
    | KW_PRESSURE expr '=' expr ';' { $$ = ast_stmt(ctx, ST_PRESSURE, L(@$)); $$->target = $2; $$->value = $4; }
    | KW_MOVE expr '=' expr ';'     { $$ = ast_stmt(ctx, ST_MOVE, L(@$)); $$->target = $2; $$->value = $4; }
    | KW_RELEASE expr IDENT expr ';'
                                    { $$ = ast_stmt(ctx, ST_RELEASE, L(@$)); $$->target = $2; $$->name = $3; $$->name_loc = L(@3);
                                      $$->value = $4; }
    | KW_ROTATE expr IDENT expr '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_ROTATE, L(@$)); $$->target = $2; $$->name = $3; $$->name_loc = L(@3);
                                      $$->every = $4; $$->value = $6; }
    | KW_ACTUATE postfix '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_ACTUATE, L(@$)); $$->target = $2; $$->value = $4; }
    | KW_ACTUATE postfix KW_OVER IDENT KW_IN range '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_ACTUATE, L(@$)); $$->target = $2; $$->over_var = $4;
                                      $$->range = $6; $$->value = $8; }
    | KW_ACTUATE postfix KW_WHERE expr '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_ACTUATE, L(@$)); $$->target = $2; $$->where = $4; $$->value = $6; }
    | KW_ENERGY IDENT '(' stencil ';' opt_idents ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_ENERGY, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_idents($6, &$$->params, &$$->n_params, ctx);
                                      set_stmts($9, &$$->body, &$$->n_body); }
    | KW_ENERGY IDENT '(' stencil ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_ENERGY, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_stmts($7, &$$->body, &$$->n_body); }
    | KW_FORCE IDENT '(' stencil ';' opt_idents ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_FORCE, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_idents($6, &$$->params, &$$->n_params, ctx);
                                      $$->value = $9; }
    | KW_FORCE IDENT '(' stencil ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_FORCE, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); $$->value = $7; }
    | KW_ENERGY IDENT '(' stencil ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_ENERGY, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); $$->value = $7; }
    | KW_FORCE IDENT '(' stencil ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_FORCE, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_stmts($7, &$$->body, &$$->n_body); }
    | KW_FORCE IDENT '(' stencil ';' opt_idents ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_FORCE, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_idents($6, &$$->params, &$$->n_params, ctx);
                                      set_stmts($9, &$$->body, &$$->n_body); }
    | KW_CONSTRAINT IDENT '(' stencil ';' opt_idents ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_CONSTRAINT, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_idents($6, &$$->params, &$$->n_params, ctx);
                                      $$->value = $9; }
    | KW_CONSTRAINT IDENT '(' stencil ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_CONSTRAINT, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); $$->value = $7; }
    | KW_CONSTRAINT IDENT '(' stencil ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_CONSTRAINT, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_stmts($7, &$$->body, &$$->n_body); }
    | KW_CONSTRAINT IDENT '(' stencil ';' opt_idents ')' '{' body_stmts '}'
                                    { $$ = ast_stmt(ctx, ST_CONSTRAINT, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_idents($6, &$$->params, &$$->n_params, ctx);
                                      set_stmts($9, &$$->body, &$$->n_body); }
    | KW_APPLY IDENT '(' opt_args ')' ';'
                                    { $$ = apply_stmt(ctx, L(@$), $2, L(@2), $4, NULL); }
    | KW_APPLY IDENT '(' args ';' named_args ')' ';'
                                    { $$ = apply_stmt(ctx, L(@$), $2, L(@2), $4, $6); }
    | KW_FOR IDENT KW_IN range '{' stmts '}'
                                    { $$ = ast_stmt(ctx, ST_FOR, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->range = $4;
                                      set_stmts($6, &$$->body, &$$->n_body); }
    | KW_PLANAR ';'                 { $$ = ast_stmt(ctx, ST_PLANAR, L(@$)); }
    | IDENT IDENT '{' items '}'     { unknown_statement(ctx, $1, L(@1), true); $$ = NULL; }
    | IDENT '{' items '}'           { unknown_statement(ctx, $1, L(@1), true); $$ = NULL; }
    | IDENT '=' expr ';'            { unknown_statement(ctx, $1, L(@1), false); $$ = NULL; }
    | KW_ENERGY IDENT '(' stencil ';' opt_idents ')' '=' expr ';'
                                    { $$ = ast_stmt(ctx, ST_ENERGY, L(@$)); $$->name = $2; $$->name_loc = L(@2);
                                      set_idents($4, &$$->stencil, &$$->n_stencil, ctx); set_idents($6, &$$->params, &$$->n_params, ctx);
                                      $$->value = $9; }
    | error ';'                     { $$ = NULL; yyerrok; }
    | error '}'                     { $$ = NULL; yyerrok; }
    ;

decl_head
    : object_kw IDENT               { $$ = block_stmt(ctx, (BlockKind)$1, L(@1), NULL); $$->name = $2; $$->name_loc = L(@2); }
    | object_kw reserved_word       { $$ = block_stmt(ctx, (BlockKind)$1, L(@1), NULL); $$->name = $2; $$->name_loc = L(@2);
                                      reserved_name(ctx, $2, L(@2)); }
    | object_kw IDENT '[' expr ']'  { $$ = block_stmt(ctx, (BlockKind)$1, L(@1), NULL); $$->name = $2; $$->name_loc = L(@2); $$->index = $4; }
    ;

/* A keyword where an object's name belongs (`rod body`): one error, then the block parses. */
reserved_word
    : KW_USE                      { $$ = "use"; }
    | KW_PARAM                    { $$ = "param"; }
    | KW_LET                      { $$ = "let"; }
    | KW_FN                       { $$ = "fn"; }
    | KW_MATERIAL                 { $$ = "material"; }
    | KW_ROD                      { $$ = "rod"; }
    | KW_SHELL                    { $$ = "shell"; }
    | KW_BODY                     { $$ = "body"; }
    | KW_LATTICE                  { $$ = "lattice"; }
    | KW_SOLID                    { $$ = "solid"; }
    | KW_JOINT                    { $$ = "joint"; }
    | KW_RFEM                     { $$ = "rfem"; }
    | KW_CONSTRAINT               { $$ = "constraint"; }
    | KW_JOIN                     { $$ = "join"; }
    | KW_CLAMP                    { $$ = "clamp"; }
    | KW_FIX                      { $$ = "fix"; }
    | KW_LOAD                     { $$ = "load"; }
    | KW_PRESSURE                 { $$ = "pressure"; }
    | KW_GRAVITY                  { $$ = "gravity"; }
    | KW_MEDIUM                   { $$ = "medium"; }
    | KW_VISCOUS                  { $$ = "viscous"; }
    | KW_DAMPING                  { $$ = "damping"; }
    | KW_RFT                      { $$ = "rft"; }
    | KW_DRAG                     { $$ = "drag"; }
    | KW_GROUND                   { $$ = "ground"; }
    | KW_OBSTACLE                 { $$ = "obstacle"; }
    | KW_CONTACT                  { $$ = "contact"; }
    | KW_ACTUATE                  { $$ = "actuate"; }
    | KW_ENERGY                   { $$ = "energy"; }
    | KW_FORCE                    { $$ = "force"; }
    | KW_APPLY                    { $$ = "apply"; }
    | KW_FOR                      { $$ = "for"; }
    | KW_IN                       { $$ = "in"; }
    | KW_OVER                     { $$ = "over"; }
    | KW_WHERE                    { $$ = "where"; }
    | KW_SIMULATE                 { $$ = "simulate"; }
    | KW_STATIC                   { $$ = "static"; }
    | KW_MODES                    { $$ = "modes"; }
    | KW_OUTPUT                   { $$ = "output"; }
    | KW_PROBE                    { $$ = "probe"; }
    | KW_EVERY                    { $$ = "every"; }
    | KW_RETURN                   { $$ = "return"; }
    | KW_PLANAR                   { $$ = "planar"; }
    | KW_INPUT                    { $$ = "input"; }
    | KW_CONTROL                  { $$ = "control"; }
    | KW_VAR                      { $$ = "var"; }
    | KW_OPTIMIZE                 { $$ = "optimize"; }
    | KW_VARY                     { $$ = "vary"; }
    ;

object_kw
    : KW_MATERIAL                   { $$ = BK_MATERIAL; }
    | KW_ROD                        { $$ = BK_ROD; }
    | KW_SHELL                      { $$ = BK_SHELL; }
    | KW_BODY                       { $$ = BK_BODY; }
    | KW_LATTICE                    { $$ = BK_LATTICE; }
    | KW_SOLID                      { $$ = BK_SOLID; }
    | KW_JOINT                      { $$ = BK_JOINT; }
    | KW_RFEM                       { $$ = BK_RFEM; }
    ;

env_kw
    : KW_MEDIUM                     { $$ = BK_MEDIUM; }
    | KW_VISCOUS                    { $$ = BK_VISCOUS; }
    | KW_DAMPING                    { $$ = BK_DAMPING; }
    | KW_RFT                        { $$ = BK_RFT; }
    | KW_DRAG                       { $$ = BK_DRAG; }
    | KW_GROUND                     { $$ = BK_GROUND; }
    | KW_VIEW                       { $$ = BK_VIEW; }
    ;

analysis_kw
    : KW_SIMULATE                   { $$ = BK_SIMULATE; }
    | KW_STATIC                     { $$ = BK_STATIC; }
    | KW_MODES                      { $$ = BK_MODES; }
    | KW_OPTIMIZE                   { $$ = BK_OPTIMIZE; }
    ;

items
    : %empty                        { $$ = NULL; }
    | items item                    { $$ = $2 ? vec_add(ctx, $1, $2) : $1; }
    ;

prop_key
    : IDENT                         { $$ = $1; }
    | KW_MATERIAL                   { $$ = "material"; }
    | KW_DRAG                       { $$ = "drag"; }
    | KW_DAMPING                    { $$ = "damping"; }
    | KW_CONTACT                    { $$ = "contact"; }
    | KW_GRAVITY                    { $$ = "gravity"; }
    ;

item
    : prop_key '=' expr ';'         { $$ = ast_stmt(ctx, ST_PROP, L(@$)); $$->name = $1; $$->name_loc = L(@1); $$->value = $3; }
    | prop_key '=' expr             { /* the last property of a block without its `;`: say so and go on */
                                      missing_semicolon(ctx, @3);
                                      $$ = NULL; }
    | KW_LET IDENT '=' expr ';'     { $$ = ast_stmt(ctx, ST_LET, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | KW_OUTPUT IDENT STRING ';'    { $$ = ast_stmt(ctx, ST_OUTPUT, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->str = $3; $$->str_loc = L(@3); }
    | KW_OUTPUT IDENT STRING KW_EVERY expr ';'
                                    { $$ = ast_stmt(ctx, ST_OUTPUT, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->str = $3; $$->str_loc = L(@3); $$->every = $5; }
    | KW_OUTPUT IDENT STRING IDENT ';'
                                    { $$ = ast_stmt(ctx, ST_OUTPUT, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->str = $3; $$->str_loc = L(@3);
                                      $$->subkind = $4; $$->subkind_loc = L(@4); }
    | KW_OUTPUT IDENT STRING IDENT KW_EVERY expr ';'
                                    { $$ = ast_stmt(ctx, ST_OUTPUT, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->str = $3; $$->str_loc = L(@3);
                                      $$->subkind = $4; $$->subkind_loc = L(@4); $$->every = $6; }
    | KW_VARY idents ';'            { $$ = ast_stmt(ctx, ST_VARY, L(@$)); set_idents($2, &$$->params, &$$->n_params, ctx); }
    | KW_PROBE IDENT '=' expr ';'   { $$ = ast_stmt(ctx, ST_PROBE, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->target = $4; }
    | KW_PROBE IDENT '=' expr KW_EVERY expr ';'
                                    { $$ = ast_stmt(ctx, ST_PROBE, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->target = $4; $$->every = $6; }
    | error ';'                     { $$ = NULL; yyerrok; }
    ;

/* The statements of a `control` block: controller state, locals and assignments, run in order
 * at every sample. */
control_items
    : %empty                        { $$ = NULL; }
    | control_items control_item    { $$ = $2 ? vec_add(ctx, $1, $2) : $1; }
    ;

control_item
    : KW_VAR IDENT '=' expr ';'     { $$ = ast_stmt(ctx, ST_VAR, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | KW_LET IDENT '=' expr ';'     { $$ = ast_stmt(ctx, ST_LET, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | IDENT '=' expr ';'            { $$ = ast_stmt(ctx, ST_ASSIGN, L(@$)); $$->name = $1; $$->name_loc = L(@1); $$->value = $3; }
    | error ';'                     { $$ = NULL; yyerrok; }
    ;

body_stmts
    : %empty                        { $$ = NULL; }
    | body_stmts body_stmt          { $$ = $2 ? vec_add(ctx, $1, $2) : $1; }
    ;

body_stmt
    : KW_LET IDENT '=' expr ';'     { $$ = ast_stmt(ctx, ST_LET, L(@$)); $$->name = $2; $$->name_loc = L(@2); $$->value = $4; }
    | KW_RETURN expr ';'            { $$ = ast_stmt(ctx, ST_RETURN, L(@$)); $$->value = $2; }
    | error ';'                     { $$ = NULL; yyerrok; }
    ;

stencil
    : stencil_param                 { $$ = vec_new(ctx, $1); }
    | stencil ',' stencil_param     { $$ = vec_add(ctx, $1, $3); }
    ;

stencil_param
    : IDENT IDENT                   { $$ = ident_new(ctx, $2, L(@2)); $$->kind = $1; $$->kind_loc = L(@1); }
    | KW_BODY IDENT                 { $$ = ident_new(ctx, $2, L(@2)); $$->kind = "body"; $$->kind_loc = L(@1); }
    ;

opt_idents
    : %empty                        { $$ = NULL; }
    | idents                        { $$ = $1; }
    ;

idents
    : IDENT                         { $$ = vec_new(ctx, ident_new(ctx, $1, L(@1))); }
    | idents ',' IDENT              { $$ = vec_add(ctx, $1, ident_new(ctx, $3, L(@3))); }
    ;

named_args
    : named_arg                     { $$ = vec_new(ctx, $1); }
    | named_args ',' named_arg      { $$ = vec_add(ctx, $1, $3); }
    ;

named_arg
    : IDENT '=' expr                { $$ = ident_new(ctx, $1, L(@1)); $$->kind = (const char *)(void *)$3; }
    ;

range
    : expr DOTDOT expr              { $$ = arena_alloc(ctx->arena, sizeof(Range)); $$->lo = $1; $$->hi = $3; $$->loc = L(@$); }
    | expr DOTDOTEQ expr            { $$ = arena_alloc(ctx->arena, sizeof(Range)); $$->lo = $1; $$->hi = $3; $$->inclusive = true; $$->loc = L(@$); }
    ;

expr_list
    : expr                          { $$ = vec_new(ctx, $1); }
    | expr_list ',' expr            { $$ = vec_add(ctx, $1, $3); }
    ;

opt_args
    : %empty                        { $$ = NULL; }
    | args                          { $$ = $1; }
    ;

/* Call arguments: positional expressions or name = expr (stored as EX_BIN OP_EQ placeholders). */
args
    : expr                          { $$ = vec_new(ctx, $1); }
    | IDENT '=' expr                { $$ = vec_new(ctx, ident_new(ctx, $1, L(@1))); ((Ident *)$$->items[0])->kind = (const char *)(void *)$3;
                                      $$->items[0] = (void *)((uintptr_t)$$->items[0] | 1); }
    | args ',' expr                 { $$ = vec_add(ctx, $1, $3); }
    | args ',' IDENT '=' expr       { Ident *id = ident_new(ctx, $3, L(@3)); id->kind = (const char *)(void *)$5;
                                      $$ = vec_add(ctx, $1, (void *)((uintptr_t)id | 1)); }
    ;

expr
    : expr '?' expr ':' expr        { $$ = ast_expr(ctx, EX_COND, L(@$)); $$->a = $1; $$->b = $3; $$->c = $5; ast_nest(ctx, $$); }
    | expr OR expr                  { $$ = bin(ctx, OP_OR, $1, $3, L(@$)); }
    | expr AND expr                 { $$ = bin(ctx, OP_AND, $1, $3, L(@$)); }
    | expr EQ expr                  { $$ = bin(ctx, OP_EQ, $1, $3, L(@$)); }
    | expr NE expr                  { $$ = bin(ctx, OP_NE, $1, $3, L(@$)); }
    | expr '<' expr                 { $$ = bin(ctx, OP_LT, $1, $3, L(@$)); }
    | expr LE expr                  { $$ = bin(ctx, OP_LE, $1, $3, L(@$)); }
    | expr '>' expr                 { $$ = bin(ctx, OP_GT, $1, $3, L(@$)); }
    | expr GE expr                  { $$ = bin(ctx, OP_GE, $1, $3, L(@$)); }
    | expr '+' expr                 { $$ = bin(ctx, OP_ADD, $1, $3, L(@$)); }
    | expr '-' expr                 { $$ = bin(ctx, OP_SUB, $1, $3, L(@$)); }
    | expr '*' expr                 { $$ = bin(ctx, OP_MUL, $1, $3, L(@$)); }
    | expr '/' expr                 { $$ = bin(ctx, OP_DIV, $1, $3, L(@$)); }
    | expr '^' expr                 { $$ = bin(ctx, OP_POW, $1, $3, L(@$)); }
    | '-' expr %prec UMINUS         { $$ = ast_expr(ctx, EX_NEG, L(@$)); $$->a = $2; ast_nest(ctx, $$); }
    | '!' expr                      { $$ = ast_expr(ctx, EX_NOT, L(@$)); $$->a = $2; ast_nest(ctx, $$); }
    | expr KW_WHERE expr            { $$ = ast_expr(ctx, EX_WHERE, L(@$)); $$->a = $1; $$->b = $3; ast_nest(ctx, $$); }
    | expr KW_OVER IDENT KW_IN range
                                    { $$ = ast_expr(ctx, EX_OVER, L(@$)); $$->a = $1; $$->str = $3; $$->range = $5; ast_nest(ctx, $$); }
    | postfix                       { $$ = $1; }
    ;

postfix
    : primary                       { $$ = $1; }
    | postfix '.' IDENT             { $$ = ast_expr(ctx, EX_MEMBER, L(@$)); $$->a = $1; $$->str = $3; ast_nest(ctx, $$); }
    | postfix '.' IDENT '(' opt_args ')'
                                    { $$ = ast_expr(ctx, EX_MEMBER, L(@$)); $$->a = $1; $$->str = $3; $$->has_args = true;
                                      set_call_args(ctx, $$, $5); ast_nest(ctx, $$); }
    | postfix '[' expr ']'          { $$ = ast_expr(ctx, EX_INDEX, L(@$)); $$->a = $1; $$->b = $3; ast_nest(ctx, $$); }
    | postfix '[' range ']'         { $$ = ast_expr(ctx, EX_SLICE, L(@$)); $$->a = $1; $$->range = $3; ast_nest(ctx, $$); }
    | postfix UNIT                  { $$ = ast_expr(ctx, EX_UNIT, L(@$)); $$->a = $1; $$->str = $2; ast_nest(ctx, $$); }
    ;

primary
    : NUMBER                        { $$ = ast_number(ctx, $1, L(@$)); }
    | STRING                        { $$ = ast_expr(ctx, EX_STR, L(@$)); $$->str = $1; }
    | IDENT                         { $$ = ast_expr(ctx, EX_NAME, L(@$)); $$->str = $1; }
    | KW_LATTICE                    { $$ = ast_expr(ctx, EX_NAME, L(@$)); $$->str = "lattice"; } /* `stretching = lattice` */
    | KW_FORCE                      { $$ = ast_expr(ctx, EX_NAME, L(@$)); $$->str = "force"; } /* `motor = force` */
    | IDENT '(' opt_args ')'        { $$ = ast_expr(ctx, EX_CALL, L(@$)); $$->str = $1; $$->has_args = true; set_call_args(ctx, $$, $3); ast_nest(ctx, $$); }
    | KW_CLAMP '(' opt_args ')'     { $$ = ast_expr(ctx, EX_CALL, L(@$)); $$->str = "clamp"; $$->has_args = true; set_call_args(ctx, $$, $3); ast_nest(ctx, $$); }
    | IDENT '(' KW_GROUND ')'       { $$ = ast_expr(ctx, EX_CALL, L(@$)); $$->str = $1; $$->has_args = true;
                                      Expr *g = ast_expr(ctx, EX_NAME, L(@3)); g->str = "ground";
                                      set_call_args(ctx, $$, vec_new(ctx, g)); ast_nest(ctx, $$); }
    | '(' expr ')'                  { $$ = $2; $$->loc = L(@$); }
    | '(' expr ',' expr_list ')'    { $$ = ast_expr(ctx, EX_VEC, L(@$));
                                      PtrVec *v = vec_new(ctx, $2);
                                      for (int i = 0; i < $4->len; i++) vec_add(ctx, v, $4->items[i]);
                                      $$->args = (Expr **)v->items; $$->n_args = v->len; ast_nest(ctx, $$); }
    ;

%%

static int symbol_for_char(int c) { return YYTRANSLATE(c); }

static SrcLoc mkloc(ParseCtx *ctx, YYLTYPE l)
{
    SrcLoc s = { ctx->file, l.first_line, l.first_column, l.last_line, l.last_column };
    return s;
}

static Expr *bin(ParseCtx *ctx, BinOp op, Expr *a, Expr *b, SrcLoc loc)
{
    Expr *e = ast_expr(ctx, EX_BIN, loc);
    e->op = op;
    e->a = a;
    e->b = b;
    return ast_nest(ctx, e);
}

static PtrVec *vec_new(ParseCtx *ctx, void *first)
{
    PtrVec *v = arena_alloc(ctx->arena, sizeof *v);
    ptrvec_push(ctx->arena, v, first);
    return v;
}

static PtrVec *vec_add(ParseCtx *ctx, PtrVec *v, void *item)
{
    if (!v)
        return vec_new(ctx, item);
    ptrvec_push(ctx->arena, v, item);
    return v;
}

static Stmt *block_stmt(ParseCtx *ctx, BlockKind k, SrcLoc loc, PtrVec *items)
{
    Stmt *s = ast_stmt(ctx, ST_BLOCK, loc);
    s->block = k;
    set_stmts(items, &s->body, &s->n_body);
    return s;
}

static Ident *ident_new(ParseCtx *ctx, const char *name, SrcLoc loc)
{
    Ident *id = arena_alloc(ctx->arena, sizeof *id);
    id->name = name;
    id->loc = loc;
    return id;
}

/* Named arguments travel through the args list tagged in the pointer's low bit. */
static void set_call_args(ParseCtx *ctx, Expr *e, PtrVec *args)
{
    int n = vec_len(args);
    e->n_args = n;
    e->args = arena_alloc(ctx->arena, sizeof(Expr *) * (size_t)(n + 1));
    e->arg_names = arena_alloc(ctx->arena, sizeof(char *) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        uintptr_t p = (uintptr_t)args->items[i];
        if (p & 1) {
            Ident *id = (Ident *)(p & ~(uintptr_t)1);
            e->arg_names[i] = id->name;
            e->args[i] = (Expr *)(void *)id->kind;
        } else {
            e->args[i] = (Expr *)p;
        }
    }
}

static void set_idents(PtrVec *v, Ident **out, int *n, ParseCtx *ctx)
{
    *n = vec_len(v);
    *out = arena_alloc(ctx->arena, sizeof(Ident) * (size_t)(*n + 1));
    for (int i = 0; i < *n; i++)
        (*out)[i] = *(Ident *)v->items[i];
}

static void set_stmts(PtrVec *v, Stmt ***out, int *n)
{
    *out = (Stmt **)vec_items(v);
    *n = vec_len(v);
}

/* apply f(a, b; k = 1, c = 2): stencil arguments, then named element parameters. Named
 * arguments may also be mixed into the first list: apply f(a, b, k = 1). */
static Stmt *apply_stmt(ParseCtx *ctx, SrcLoc loc, const char *name, SrcLoc name_loc, PtrVec *args, PtrVec *named)
{
    Stmt *s = ast_stmt(ctx, ST_APPLY, loc);
    s->name = name;
    s->name_loc = name_loc;
    Expr tmp;
    memset(&tmp, 0, sizeof tmp);
    set_call_args(ctx, &tmp, args);
    int n_named = vec_len(named);
    for (int i = 0; i < tmp.n_args; i++)
        n_named += tmp.arg_names[i] != NULL;
    s->items = arena_alloc(ctx->arena, sizeof(Expr *) * (size_t)(tmp.n_args + 1));
    s->arg_names = arena_alloc(ctx->arena, sizeof(Ident) * (size_t)(n_named + 1));
    s->arg_values = arena_alloc(ctx->arena, sizeof(Expr *) * (size_t)(n_named + 1));
    for (int i = 0; i < tmp.n_args; i++) {
        if (tmp.arg_names[i]) {
            s->arg_names[s->n_named].name = tmp.arg_names[i];
            s->arg_names[s->n_named].loc = tmp.args[i]->loc;
            s->arg_values[s->n_named++] = tmp.args[i];
        } else {
            s->items[s->n_items++] = tmp.args[i];
        }
    }
    for (int i = 0; i < vec_len(named); i++) {
        Ident *id = named->items[i];
        s->arg_names[s->n_named].name = id->name;
        s->arg_names[s->n_named].loc = id->loc;
        s->arg_values[s->n_named++] = (Expr *)(void *)id->kind;
    }
    return s;
}

/* Token names as the user wrote them: `;`, `rod`, `..`; classes of tokens in words. */
static const char *token_text(yysymbol_kind_t sym, char *buf, size_t n)
{
    if (sym == YYSYMBOL_YYEOF)
        return "end of file";
    if (sym == YYSYMBOL_NUMBER || sym == YYSYMBOL_IDENT || sym == YYSYMBOL_STRING || sym == YYSYMBOL_UNIT)
        return yysymbol_name(sym);
    const char *name = yysymbol_name(sym);
    size_t len = strlen(name);
    if (len >= 2 && (name[0] == '\'' || name[0] == '"') && name[len - 1] == name[0]) {
        name++;
        len -= 2;
    }
    snprintf(buf, n, "`%.*s`", (int)len, name);
    return buf;
}

static bool expects(const yysymbol_kind_t *syms, int n, yysymbol_kind_t want)
{
    for (int i = 0; i < n; i++)
        if (syms[i] == want)
            return true;
    return false;
}

static void srd_yyerror(YYLTYPE *loc, yyscan_t scanner, ParseCtx *ctx, const char *msg)
{
    (void)scanner;
    /* The only message bison itself sends here: its stack is full, so the input nests deeper
     * than any expression or block may. */
    if (!strcmp(msg, "memory exhausted")) {
        parse_too_deep(ctx, mkloc(ctx, *loc));
        return;
    }
    ctx->syntax_errors++;
    diag_error(mkloc(ctx, *loc), "%s", msg);
}

static bool continues_expression(yysymbol_kind_t got)
{
    return got != YYSYMBOL_IDENT && got != YYSYMBOL_STRING && got != CLOSE_BRACE_SYMBOL &&
           (got < YYSYMBOL_KW_USE || got > YYSYMBOL_KW_PLANAR);
}

static int yyreport_syntax_error(const yypcontext_t *pctx, yyscan_t scanner, ParseCtx *ctx)
{
    (void)scanner;
    ctx->syntax_errors++;
    enum { MAX_LISTED = 6, MAX_EXPECTED = 128 };
    yysymbol_kind_t expected[MAX_EXPECTED];
    int n = yypcontext_expected_tokens(pctx, expected, MAX_EXPECTED);
    yysymbol_kind_t got = yypcontext_token(pctx);
    SrcLoc loc = mkloc(ctx, *yypcontext_location(pctx));
    /* A keyword used as a name was reported where it was declared; its uses add nothing. */
    if (ctx->reserved_name && (int)got == ctx->reserved_name)
        return 0;
    /* A lexical error on this line was already reported: the parser's complaint adds nothing. */
    if (ctx->lex_error_line && (loc.line == ctx->lex_error_line || ctx->prev_line == ctx->lex_error_line))
        return 0;
    /* A statement that ends without `;` before a new line, a name, a keyword or a `}`:
     * point just after it. */
    if (expects(expected, n, SEMICOLON_SYMBOL) && ctx->prev_line > 0 &&
        (loc.line > ctx->prev_line || !continues_expression(got))) {
        SrcLoc at = { ctx->file, ctx->prev_line, ctx->prev_col + 1, ctx->prev_line, ctx->prev_col + 1 };
        Diag *d = diag_error(at, "expected `;` at the end of this statement");
        diag_hint(d, "every statement and property ends with `;`");
        return 0;
    }
    char gbuf[64], msg[512];
    const char *gtext = token_text(got, gbuf, sizeof gbuf);
    if (got == YYSYMBOL_YYEOF && ctx->cur_line > 0) {
        loc.line = loc.end_line = ctx->cur_line;
        loc.col = loc.end_col = ctx->cur_col + 1;
    }
    snprintf(msg, sizeof msg, "unexpected %s", gtext);
    if (n > 0 && n <= MAX_LISTED) {
        size_t len = strlen(msg);
        snprintf(msg + len, sizeof msg - len, ", expected ");
        for (int i = 0; i < n; i++) {
            char ebuf[64];
            len = strlen(msg);
            snprintf(msg + len, sizeof msg - len, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
                     token_text(expected[i], ebuf, sizeof ebuf));
        }
    }
    Diag *d = diag_error(loc, "%s", msg);
    if (got == YYSYMBOL_UNIT)
        diag_hint(d, "a unit follows a number or a closing parenthesis: `2 mm`, `(0, 0, 1) m`");
    else if (got == YYSYMBOL_YYEOF && expects(expected, n, CLOSE_BRACE_SYMBOL))
        diag_hint(d, "a block is missing its closing `}`");
    else if (got == YYSYMBOL_KW_OUTPUT || got == YYSYMBOL_KW_PROBE)
        diag_hint(d, "`output` and `probe` go inside a simulate, static or modes block");
    else if (got >= YYSYMBOL_KW_USE && got <= YYSYMBOL_KW_PLANAR && expects(expected, n, CLOSE_BRACE_SYMBOL))
        diag_hint(d, "is the block before it missing its closing `}`? Statements do not nest in blocks");
    return 0;
}

static void missing_semicolon(ParseCtx *ctx, YYLTYPE after)
{
    ctx->syntax_errors++;
    SrcLoc at = { ctx->file, after.last_line, after.last_column + 1, after.last_line, after.last_column + 1 };
    Diag *d = diag_error(at, "expected `;` at the end of this statement");
    diag_hint(d, "every statement and property ends with `;`");
}

/* `var x = ...;` at the top level: a var is a controller's state. */
static void var_outside_control(ParseCtx *ctx, SrcLoc loc)
{
    ctx->syntax_errors++;
    Diag *d = diag_error(loc, "`var` declares the state of a controller, inside a `control` block");
    diag_hint(d, "write `control every 10 ms { var x = 0; ... }`, or use `let` or `param` at the top level");
}

static const char *statement_words[] = {
    "use", "param", "let", "fn", "material", "rod", "shell", "body", "lattice", "solid", "joint", "rfem", "join", "clamp", "fix", "load",
    "pressure", "move", "rotate", "release", "gravity", "medium", "viscous", "damping", "rft", "drag", "ground",
    "obstacle", "contact", "actuate",
    "energy", "force", "constraint", "apply", "for", "simulate", "static", "modes", "planar", "input", "control", "optimize",
};

/* `spring s { ... }`, `gravty = ...`: a word at the start of a statement that is not a keyword. */
static void unknown_statement(ParseCtx *ctx, const char *word, SrcLoc loc, bool block)
{
    ctx->syntax_errors++;
    Diag *d = diag_error(loc, block ? "unknown block `%s`" : "unknown statement `%s`", word);
    const char *close = diag_closest(word, statement_words, (int)(sizeof statement_words / sizeof *statement_words));
    if (close)
        diag_hint(d, "did you mean `%s`?", close);
    else if (block)
        diag_hint(d, "blocks are material, rod, shell, body, lattice, solid, joint, rfem, medium, viscous, damping, rft, drag, ground, obstacle, "
                     "contact, simulate, static and modes");
    else
        diag_hint(d, "statements start with a keyword such as let, rod, clamp, load or gravity");
}

/* The token of a keyword, from its alias. */
static int keyword_symbol(const char *word)
{
    for (int k = YYSYMBOL_KW_USE; k <= YYSYMBOL_KW_PLANAR; k++)
        if (!strcmp(yysymbol_name((yysymbol_kind_t)k), word))
            return k;
    return 0;
}

static void reserved_name(ParseCtx *ctx, const char *word, SrcLoc loc)
{
    ctx->syntax_errors++;
    Diag *d = diag_error(loc, "`%s` is a reserved word and cannot name an object", word);
    diag_hint(d, "choose another name, such as `%s1` or `my_%s`", word, word);
    ctx->reserved_name = keyword_symbol(word);
}
