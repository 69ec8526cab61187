/*
 * insertion_sort - insertion sort of N fixed-seed pseudo-random ints (seed 000's
 * "insertion_sort" exercise type): O(N^2) compares and moves on a cache-resident array.
 *
 *   insertion_sort [N (default 20000)] [seed]
 *
 * Same input as `sort_algos insertion N seed`, hence the same checksum.
 */
#include "sort_impl.h"

#define DEFAULT_N 20000

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc > 3) {
        fprintf(stderr, "usage: %s [N (default %d)] [seed]\n", argv[0], DEFAULT_N);
        return 2;
    }
    size_t n = (size_t)bl_arg_u64(argc, argv, 1, DEFAULT_N, "N");
    uint64_t seed = bl_arg_u64(argc, argv, 2, BL_DEFAULT_SEED, "seed");
    int *a = bl_sort_input(n, seed);

    bl_self_start(&self);
    bl_insertion_sort(a, n);
    bl_elapsed_t e = bl_self_stop(&self);

    if (!bl_is_sorted(a, n)) {
        fprintf(stderr, "%s: output not sorted\n", argv[0]);
        return 1;
    }
    printf("BENCHLAB_CHECK checksum=%" PRIu64 " n=%zu\n", bl_sort_checksum(a, n), n);
    bl_self_report(&self, e, "");
    free(a);
    return 0;
}
