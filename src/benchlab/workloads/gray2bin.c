/*
 * gray2bin - converts COUNT pseudo-random 64-bit Gray codes to binary with the bit-serial
 * loop (b ^= g >> 1, g >>= 1 until g is 0) (the stability study's "gray2bin" exercise type): integer
 * ALU work with data-dependent trip counts and branch mispredictions, no memory traffic.
 *
 *   gray2bin [COUNT (default 3000000)] [seed]
 *
 * Exits 1 if a conversion is wrong (checked after the timed region: bin ^ (bin >> 1) must give
 * back the Gray code).
 */
#include "benchlab_self.h"

#define DEFAULT_COUNT 3000000u

static inline uint64_t gray_to_binary(uint64_t gray)
{
    uint64_t binary = gray;
    while (gray >>= 1)
        binary ^= gray;
    return binary;
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc > 3) {
        fprintf(stderr, "usage: %s [COUNT (default %u)] [seed]\n", argv[0], DEFAULT_COUNT);
        return 2;
    }
    uint64_t count = bl_arg_u64(argc, argv, 1, DEFAULT_COUNT, "COUNT");
    uint64_t seed = bl_arg_u64(argc, argv, 2, BL_DEFAULT_SEED, "seed");

    bl_self_start(&self);
    uint64_t state = seed, checksum = 0;
    for (uint64_t i = 0; i < count; i++) {
        /* random width 1..64 bits, so the loop length varies from code to code */
        uint64_t r = bl_rand_next(&state);
        uint64_t gray = r >> (r & 63);
        checksum += gray_to_binary(gray) * (i | 1);
    }
    bl_elapsed_t e = bl_self_stop(&self);

    state = seed;
    for (uint64_t i = 0; i < 1000 && i < count; i++) {
        uint64_t r = bl_rand_next(&state);
        uint64_t gray = r >> (r & 63), binary = gray_to_binary(gray);
        if ((binary ^ (binary >> 1)) != gray) {
            fprintf(stderr, "%s: wrong conversion of %" PRIu64 "\n", argv[0], gray);
            return 1;
        }
    }
    printf("BENCHLAB_CHECK checksum=%" PRIu64 " count=%" PRIu64 "\n", checksum, count);
    bl_self_report(&self, e, "");
    return 0;
}
