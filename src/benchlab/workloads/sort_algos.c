/*
 * sort_algos - sort N fixed-seed pseudo-random ints with a chosen algorithm.
 *
 *   sort_algos <quicksort|mergesort|insertion|qsort> [N] [seed]
 *
 * Every algorithm sorts the same input for the same N and seed, so the printed checksum is
 * identical across algorithms; the timed region is the sort alone (input generation is
 * reported as setup_ns). Exits 1 if the result is not sorted.
 */
#include "sort_impl.h"

#define DEFAULT_N 20000

typedef void (*sort_fn)(int *, size_t);

static const struct {
    const char *name;
    sort_fn fn;
} ALGORITHMS[] = {
    {"quicksort", bl_quicksort}, /* hand-written median-of-3, insertion sort below 16 */
    {"mergesort", bl_mergesort}, /* top-down, one scratch buffer */
    {"insertion", bl_insertion_sort},
    {"qsort", bl_libc_qsort}, /* libc qsort(3) with a comparator function */
};

#define N_ALGORITHMS (sizeof ALGORITHMS / sizeof ALGORITHMS[0])

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s <", prog);
    for (size_t i = 0; i < N_ALGORITHMS; i++)
        fprintf(stderr, "%s%s", i ? "|" : "", ALGORITHMS[i].name);
    fprintf(stderr, "> [N (default %d)] [seed]\n", DEFAULT_N);
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc < 2 || argc > 4) {
        usage(argv[0]);
        return 2;
    }
    sort_fn fn = NULL;
    for (size_t i = 0; i < N_ALGORITHMS; i++)
        if (strcmp(argv[1], ALGORITHMS[i].name) == 0)
            fn = ALGORITHMS[i].fn;
    if (fn == NULL) {
        fprintf(stderr, "%s: unknown algorithm '%s'\n", argv[0], argv[1]);
        usage(argv[0]);
        return 2;
    }
    size_t n = (size_t)bl_arg_u64(argc, argv, 2, DEFAULT_N, "N");
    uint64_t seed = bl_arg_u64(argc, argv, 3, BL_DEFAULT_SEED, "seed");
    char label[64];
    snprintf(label, sizeof label, "algorithm=%s ", argv[1]);
    return bl_timed_sort(&self, argv[0], label, fn, n, seed);
}
