/* gen.h — a structure-aware generator of .srd programs for fuzzing: bytes choose productions
 * of the grammar, so every input is a program that gets past the parser. */
#ifndef SRD_FUZZ_GEN_H
#define SRD_FUZZ_GEN_H
#include <stddef.h>
#include <stdint.h>

/* The program chosen by data[0..size): a NUL-terminated malloc'ed text, its length in *len.
 * The same bytes always give the same program; bytes running out choose the simplest
 * completion, so any prefix is a complete program too. */
char *gen_program(const uint8_t *data, size_t size, size_t *len);

#endif
