/* tier.c — a fixed set of trampolines, one per kernel slot, each calling its slot's machine
 * code when published and its interpreter program until then; and the clock that SRD_TIMING
 * reports first calls against. */
#include "tier.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

typedef struct TierSlot {
    _Atomic(srd_kernel_fn) fn;  /* machine code, or NULL: interpret */
    const InterpProgram   *prog;
    bool                   used;
} TierSlot;

/* Trampolines are numbered 100..499 (three decimal digits, so that macros can spell them). */
enum { TIER_FIRST = 100, TIER_SLOTS = 400 };

static TierSlot        slots[TIER_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long     interpreted;

static void tier_call(int k, const srd_eval_ctx *ctx, const srd_elem_batch *batch)
{
    TierSlot *s = &slots[k - TIER_FIRST];
    srd_kernel_fn fn = atomic_load_explicit(&s->fn, memory_order_acquire);
    tier_note_call();
    if (fn) {
        fn(ctx, batch);
        return;
    }
    atomic_fetch_add_explicit(&interpreted, 1, memory_order_relaxed);
    interp_run(s->prog, ctx, batch);
}

#define TRAMP(n) \
    static void tier_tramp##n(const srd_eval_ctx *c, const srd_elem_batch *b) { tier_call(n, c, b); }
#define TRAMP10(n) TRAMP(n##0) TRAMP(n##1) TRAMP(n##2) TRAMP(n##3) TRAMP(n##4) \
                   TRAMP(n##5) TRAMP(n##6) TRAMP(n##7) TRAMP(n##8) TRAMP(n##9)
#define TRAMP100(n) TRAMP10(n##0) TRAMP10(n##1) TRAMP10(n##2) TRAMP10(n##3) TRAMP10(n##4) \
                    TRAMP10(n##5) TRAMP10(n##6) TRAMP10(n##7) TRAMP10(n##8) TRAMP10(n##9)
TRAMP100(1) TRAMP100(2) TRAMP100(3) TRAMP100(4)

#define NAME(n) tier_tramp##n,
#define NAME10(n) NAME(n##0) NAME(n##1) NAME(n##2) NAME(n##3) NAME(n##4) \
                  NAME(n##5) NAME(n##6) NAME(n##7) NAME(n##8) NAME(n##9)
#define NAME100(n) NAME10(n##0) NAME10(n##1) NAME10(n##2) NAME10(n##3) NAME10(n##4) \
                   NAME10(n##5) NAME10(n##6) NAME10(n##7) NAME10(n##8) NAME10(n##9)
static const srd_kernel_fn trampolines[TIER_SLOTS] = { NAME100(1) NAME100(2) NAME100(3) NAME100(4) };

srd_kernel_fn tier_claim(const InterpProgram *prog, int *slot)
{
    pthread_mutex_lock(&slots_lock);
    *slot = -1;
    for (int k = 0; k < TIER_SLOTS && *slot < 0; k++)
        if (!slots[k].used) {
            slots[k].used = true;
            slots[k].prog = prog;
            atomic_store_explicit(&slots[k].fn, NULL, memory_order_relaxed);
            *slot = k;
        }
    pthread_mutex_unlock(&slots_lock);
    return *slot >= 0 ? trampolines[*slot] : NULL;
}

void tier_publish(int slot, srd_kernel_fn fn)
{
    atomic_store_explicit(&slots[slot].fn, fn, memory_order_release);
}

void tier_release(int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&slots_lock);
    slots[slot].used = false;
    slots[slot].prog = NULL;
    atomic_store_explicit(&slots[slot].fn, NULL, memory_order_relaxed);
    pthread_mutex_unlock(&slots_lock);
}

long tier_interpreted_calls(void) { return atomic_load(&interpreted); }

/* ---- the launch clock ---- */

static double          start_ms = -1;
static _Atomic(double) first_call_ms = -1;
static atomic_bool     called;

static double realtime_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void tier_mark_start(void)
{
    const char *launch = getenv("SRD_LAUNCH_NS");
    long long ns = launch && *launch ? atoll(launch) : 0;
    start_ms = ns > 0 ? (double)(ns / 1000000) + (double)(ns % 1000000) * 1e-6 : realtime_ms();
}

double tier_since_start_ms(void)
{
    if (start_ms < 0)
        tier_mark_start();
    return realtime_ms() - start_ms;
}

double tier_first_call_ms(void) { return atomic_load(&first_call_ms); }

void tier_note_call(void)
{
    if (atomic_load_explicit(&called, memory_order_relaxed) || atomic_exchange(&called, true))
        return;
    atomic_store(&first_call_ms, tier_since_start_ms());
}
