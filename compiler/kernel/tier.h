/* tier.h — stable entry points for kernels that change tier while a model runs. The runtime
 * copies kernel pointers when it starts, so each kernel gets a fixed trampoline that runs the
 * interpreter (interp.h) until tier_publish hands it machine code, then calls that. The
 * switch is one atomic pointer per kernel: a call runs wholly in one tier, and both tiers
 * give the same bits, so a run cannot tell when it happened. */
#ifndef SRD_TIER_H
#define SRD_TIER_H
#include <stdbool.h>
#include "interp.h"

/* A trampoline that runs `prog` until tier_publish; its slot number in *slot. NULL (and
 * *slot = -1) when every trampoline is in use: the caller compiles before running instead. */
srd_kernel_fn tier_claim(const InterpProgram *prog, int *slot);
/* From now on the slot's trampoline calls fn (safe while other threads call it). */
void          tier_publish(int slot, srd_kernel_fn fn);
/* Frees the slot once nothing can call its trampoline any more. */
void          tier_release(int slot);
/* Calls a trampoline ran in the interpreter since the process started. */
long          tier_interpreted_calls(void);

/* Timing of `srdc run` for SRD_TIMING: milliseconds since the launch ($SRD_LAUNCH_NS, the
 * launcher's CLOCK_REALTIME in ns, when set; else since tier_mark_start, called first thing
 * in main). */
void          tier_mark_start(void);
double        tier_since_start_ms(void);
/* When the first kernel call began (ms as above), or -1 before it. */
double        tier_first_call_ms(void);
/* Notes a kernel call beginning now (for tier_first_call_ms); cheap after the first. */
void          tier_note_call(void);

#endif
