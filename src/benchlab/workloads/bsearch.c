/*
 * bsearch - QUERIES binary searches for pseudo-random keys in a sorted array of SIZE ints
 * (the stability study's "bsearch" exercise type): memory-latency-bound once the array (default 16 MiB)
 * exceeds the last-level cache, since each probe depends on the previous one.
 *
 *   bsearch [QUERIES (default 200000)] [SIZE (default 4194304)] [seed]
 *
 * The array is strictly increasing with random gaps 1..4 (built in setup, not timed); about 40%
 * of the keys are present. The checksum sums the found positions and counts the hits.
 */
#include "benchlab_self.h"

#define DEFAULT_QUERIES 200000u
#define DEFAULT_SIZE 4194304u

/* Lower bound: index of the first element >= key (size if none). */
static size_t lower_bound(const uint32_t *a, size_t size, uint32_t key)
{
    size_t lo = 0, hi = size;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc > 4) {
        fprintf(stderr, "usage: %s [QUERIES (default %u)] [SIZE (default %u)] [seed]\n",
                argv[0], DEFAULT_QUERIES, DEFAULT_SIZE);
        return 2;
    }
    uint64_t queries = bl_arg_u64(argc, argv, 1, DEFAULT_QUERIES, "QUERIES");
    uint64_t size = bl_arg_u64(argc, argv, 2, DEFAULT_SIZE, "SIZE");
    uint64_t seed = bl_arg_u64(argc, argv, 3, BL_DEFAULT_SEED, "seed");
    if (size > 1000000000u) {
        fprintf(stderr, "%s: SIZE must be at most 1e9 (values must fit in 32 bits)\n", argv[0]);
        return 2;
    }
    uint32_t *a = malloc(size * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "%s: out of memory for %" PRIu64 " ints\n", argv[0], size);
        return 3;
    }
    uint64_t state = seed;
    uint32_t value = 0;
    for (uint64_t i = 0; i < size; i++) {
        value += 1 + (uint32_t)(bl_rand_next(&state) & 3); /* gaps 1..4, mean 2.5 */
        a[i] = value;
    }
    uint32_t max_key = value + 1;

    bl_self_start(&self);
    uint64_t checksum = 0, hits = 0;
    for (uint64_t q = 0; q < queries; q++) {
        uint32_t key = (uint32_t)(bl_rand_next(&state) % max_key);
        size_t pos = lower_bound(a, (size_t)size, key);
        if (pos < size && a[pos] == key) {
            hits++;
            checksum += pos;
        }
    }
    bl_elapsed_t e = bl_self_stop(&self);

    printf("BENCHLAB_CHECK checksum=%" PRIu64 " hits=%" PRIu64 " queries=%" PRIu64
           " size=%" PRIu64 "\n",
           checksum + hits, hits, queries, size);
    bl_self_report(&self, e, "");
    free(a);
    return 0;
}
