/* ast.h — the syntax tree the parser builds; sema annotates expressions with their types. */
#ifndef SRD_AST_H
#define SRD_AST_H
#include <stdbool.h>
#include "arena.h"
#include "diag.h"
#include "units.h"

typedef struct Expr Expr;
typedef struct Stmt Stmt;

typedef enum {
    EX_NUM,    /* num */
    EX_STR,    /* str */
    EX_NAME,   /* str */
    EX_VEC,    /* args: (a, b, c) */
    EX_UNIT,   /* a followed by unit text str; sema fills unit */
    EX_NEG,    /* -a */
    EX_NOT,    /* !a */
    EX_BIN,    /* a op b */
    EX_COND,   /* a ? b : c */
    EX_CALL,   /* str(args), named args have arg_names[i] != NULL */
    EX_MEMBER, /* a.str, or a.str(args) when has_args */
    EX_INDEX,  /* a[b] */
    EX_SLICE,  /* a[range] */
    EX_WHERE,  /* a where b */
    EX_OVER,   /* a over str in range */
} ExprKind;

typedef enum {
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR,
} BinOp;

typedef struct Range {
    Expr  *lo, *hi;
    bool   inclusive; /* a..=b */
    SrcLoc loc;
} Range;

/* What sema learns about an expression. */
typedef enum {
    TY_ERROR,     /* already reported: stay quiet */
    TY_NUM,       /* scalar or vector of n components with one dimension */
    TY_STRING,
    TY_WORD,      /* a bare identifier used as an option: implicit_euler, midedge */
    TY_OBJECT,    /* a rod, shell, body or material name */
    TY_SELECTION, /* nodes, edges, triangles, hinges of objects */
    TY_GEOMETRY,  /* a path or mesh generator call */
    TY_SECTION,   /* a cross-section: circle(r), ellipse(a, b), rectangle(w, h) */
} TypeKind;

typedef struct Type {
    TypeKind kind;
    int      n;         /* TY_NUM: components (1 = scalar) */
    Dims     dims;      /* TY_NUM */
    bool     any_dims;  /* the literal 0: fits every dimension */
    bool     runtime;   /* depends on a run-time param, t, or step state */
} Type;

struct Expr {
    ExprKind    kind;
    SrcLoc      loc;
    double      num;
    const char *str;
    BinOp       op;
    Expr       *a, *b, *c;
    Expr      **args;
    const char **arg_names; /* EX_CALL / member call: name of each argument or NULL */
    int         n_args;
    bool        has_args;
    Range      *range;
    Unit        unit;       /* EX_UNIT, filled by sema */
    Type        type;       /* filled by sema */
    int         depth;      /* levels of the tree below and including this node (parser) */
};

typedef enum {
    ST_USE, ST_PARAM, ST_LET, ST_FN, ST_BLOCK, ST_PROP, ST_GRAVITY, ST_JOIN, ST_CLAMP,
    ST_FIX, ST_LOAD, ST_PRESSURE, ST_ACTUATE, ST_ENERGY, ST_FORCE, ST_APPLY, ST_FOR, ST_OUTPUT,
    ST_PROBE, ST_RETURN, ST_PLANAR, ST_MOVE, ST_ROTATE, ST_RELEASE, ST_CONSTRAINT,
    ST_INPUT,   /* input name = default [in range]: a param the model's user sets while it runs */
    ST_CONTROL, /* control every P { body }: the controller (every NULL when it is missing) */
    ST_VAR,     /* control: var name = init */
    ST_ASSIGN,  /* control: name = value */
    ST_VARY,    /* optimize: vary a, b; (the names in `params`) */
} StmtKind;

typedef enum {
    BK_MATERIAL, BK_ROD, BK_SHELL, BK_BODY, BK_LATTICE, BK_SOLID, BK_MEDIUM, BK_VISCOUS, BK_DAMPING, BK_RFT,
    BK_DRAG, BK_GROUND, BK_OBSTACLE, BK_CONTACT, BK_VIEW, BK_SIMULATE, BK_STATIC, BK_MODES, BK_JOINT, BK_RFEM,
    BK_OPTIMIZE,
    BK_COUNT
} BlockKind;

typedef struct Ident {
    const char *name;
    SrcLoc      loc;
    const char *kind;     /* element stencil parameters: node, edge, body */
    SrcLoc      kind_loc;
} Ident;

struct Stmt {
    StmtKind    kind;
    SrcLoc      loc;
    const char *name;     /* use path, param/let/fn/energy/force/apply/probe name, prop key, for var, output format */
    SrcLoc      name_loc;
    Expr       *index;    /* rod limb[i] */
    BlockKind   block;
    const char *subkind;  /* obstacle sphere, contact self */
    SrcLoc      subkind_loc;
    Expr       *value;    /* right-hand side, fn body expression, return value */
    Range      *range;    /* param range, for range, actuate over range */
    Expr       *target;   /* clamp/fix/load/pressure/actuate target, probe expression */
    Expr       *where;    /* actuate ... where cond */
    const char *over_var; /* actuate ... over s in range */
    Expr      **items;    /* join operands, apply stencil arguments, the objects in contact */
    int         n_items;
    Stmt      **body;     /* block items, for body, fn/energy/force body */
    int         n_body;
    Ident      *stencil;  /* energy/force: node a, edge e */
    int         n_stencil;
    Ident      *params;   /* fn parameters, energy/force value parameters */
    int         n_params;
    Ident      *arg_names;/* apply: k = v names */
    Expr      **arg_values;
    int         n_named;
    Expr       *every;    /* output/probe period */
    const char *str;      /* output file name */
    SrcLoc      str_loc;
};

/* Everything parsed from the main file and the modules it uses. */
typedef struct Program {
    Stmt **stmts;
    int    n_stmts;
} Program;

const char *block_kind_name(BlockKind k);
const char *binop_name(BinOp op);

#endif
