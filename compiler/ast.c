/* ast.c — names of AST enumerations for messages and dumps. */
#include "ast.h"

const char *block_kind_name(BlockKind k)
{
    static const char *names[BK_COUNT] = {
        "material", "rod",  "shell",  "body",  "lattice",  "solid", "medium",   "viscous", "damping", "rft",
        "drag",     "ground", "obstacle", "contact", "view", "simulate", "static",  "modes", "joint", "rfem",
        "optimize",
    };
    return k < BK_COUNT ? names[k] : "?";
}

const char *binop_name(BinOp op)
{
    static const char *names[] = { "+", "-", "*", "/", "^", "<", "<=", ">", ">=", "==", "!=", "&&", "||" };
    return names[op];
}
