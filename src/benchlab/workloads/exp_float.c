/*
 * exp_float - evaluates exp(x) in single precision by its Taylor series for COUNT arguments
 * spread over [-8, 8] (the stability study's "exp_float" exercise type): CPU-bound floating point with a
 * serial dependency chain per evaluation and no memory traffic.
 *
 *   exp_float [COUNT (default 3000000)]
 *
 * The checksum is the sum of the IEEE-754 bit patterns of all results, so it is exact and
 * reproducible (no -ffast-math in the build flags). Exits 1 if a result is off by more than
 * 1e-4 relative from libm's expf.
 */
#include "benchlab_self.h"

#include <math.h>

#define DEFAULT_COUNT 3000000u
#define ARG_STEPS 4096u

/* Terms are added until they stop changing the float sum: the term count grows with |x|. */
static float taylor_exp(float x)
{
    int negative = x < 0.0f;
    if (negative)
        x = -x; /* e^-x = 1/e^x avoids cancellation between alternating terms */
    float sum = 1.0f, term = 1.0f;
    for (int k = 1; k < 200; k++) {
        term *= x / (float)k;
        float next = sum + term;
        if (next == sum)
            break;
        sum = next;
    }
    return negative ? 1.0f / sum : sum;
}

static inline float argument(uint64_t i)
{
    return -8.0f + 16.0f * (float)(i % ARG_STEPS) / (float)ARG_STEPS;
}

static inline uint32_t float_bits(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc > 2) {
        fprintf(stderr, "usage: %s [COUNT (default %u)]\n", argv[0], DEFAULT_COUNT);
        return 2;
    }
    uint64_t count = bl_arg_u64(argc, argv, 1, DEFAULT_COUNT, "COUNT");

    bl_self_start(&self);
    uint64_t checksum = 0;
    for (uint64_t i = 0; i < count; i++)
        checksum += float_bits(taylor_exp(argument(i)));
    bl_elapsed_t e = bl_self_stop(&self);

    for (uint64_t i = 0; i < ARG_STEPS && i < count; i++) {
        float x = argument(i), got = taylor_exp(x), want = expf(x);
        if (fabsf(got - want) > 1e-4f * want) {
            fprintf(stderr, "%s: exp(%g) = %g, expected %g\n", argv[0], x, got, want);
            return 1;
        }
    }
    printf("BENCHLAB_CHECK checksum=%" PRIu64 " count=%" PRIu64 "\n", checksum, count);
    bl_self_report(&self, e, "");
    return 0;
}
