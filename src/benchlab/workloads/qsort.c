/*
 * qsort - libc qsort(3) of N fixed-seed pseudo-random ints (the stability study's "qsort" exercise
 * type): O(N log N) with an indirect comparator call per comparison; at the default N the
 * array (2.4 MB) exceeds typical L2 caches.
 *
 *   qsort [N (default 600000)] [seed]
 *
 * Same input as `sort_algos qsort N seed`, hence the same checksum.
 */
#include "sort_impl.h"

#define DEFAULT_N 600000

int main(int argc, char **argv)
{
    return bl_sort_main(argc, argv, DEFAULT_N, bl_libc_qsort);
}
