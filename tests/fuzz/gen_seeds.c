/* gen_seeds.c — writes programs of gen.c for the fuzz corpus (gen_seeds DIR COUNT [SEED]), or
 * shows the program a fuzz_gen input stands for (gen_seeds --show FILE), to turn a crash of
 * fuzz_gen into a .srd reproducer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gen.h"

/* xorshift64: the same seed gives the same corpus on every machine. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "gen_seeds: cannot write %s\n", path);
        return 1;
    }
    return 0;
}

static int show(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gen_seeds: cannot read %s\n", path);
        return 1;
    }
    static uint8_t bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    size_t len;
    char *text = gen_program(bytes, n, &len);
    fwrite(text, 1, len, stdout);
    free(text);
    return 0;
}

/* Program k comes from 16 << (k % 6) random bytes: short inputs give small programs, long ones
 * reach the loops, chains and declarations at scale. Programs longer than max_len (what the
 * byte fuzzer would cut them to) are drawn again. */
static int write_seeds(const char *dir, int count, uint64_t seed, size_t max_len)
{
    uint64_t state = seed * 2654435761u + 1;
    static uint8_t bytes[16 << 5];
    for (int k = 0, tries = 0; k < count && tries < 50 * count; tries++) {
        size_t n = (size_t)16 << (k % 6);
        for (size_t i = 0; i < n; i++)
            bytes[i] = (uint8_t)next_random(&state);
        size_t len;
        char *text = gen_program(bytes, n, &len);
        char path[4096];
        snprintf(path, sizeof path, "%s/gen_%04d.srd", dir, k);
        int bad = len <= max_len ? write_file(path, text, len) : -1;
        free(text);
        if (bad > 0)
            return 1;
        k += bad == 0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--show"))
        return show(argv[2]);
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: gen_seeds DIR COUNT [SEED [MAX_BYTES]] | gen_seeds --show FUZZ_INPUT\n");
        return 2;
    }
    uint64_t seed = argc >= 4 ? strtoull(argv[3], NULL, 10) : 1;
    size_t max_len = argc == 5 ? strtoull(argv[4], NULL, 10) : (size_t)-1;
    return write_seeds(argv[1], atoi(argv[2]), seed, max_len);
}
