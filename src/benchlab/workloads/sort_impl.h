/*
 * sort_impl.h - sorting algorithms and fixed-seed input shared by sort_algos.c,
 * insertion_sort.c and qsort.c, so that every sorting workload sorts exactly the same data.
 */
#ifndef BENCHLAB_SORT_IMPL_H
#define BENCHLAB_SORT_IMPL_H

#include "benchlab_self.h"

/* N pseudo-random non-negative ints from a fixed seed: the same N gives the same array. */
static inline int *bl_sort_input(size_t n, uint64_t seed)
{
    int *a = malloc(n * sizeof *a);
    if (a == NULL) {
        fprintf(stderr, "out of memory allocating %zu ints\n", n);
        exit(3);
    }
    uint64_t state = seed ? seed : BL_DEFAULT_SEED;
    for (size_t i = 0; i < n; i++)
        a[i] = (int)(bl_rand_next(&state) >> 33);
    return a;
}

static inline void bl_insertion_sort(int *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

static inline void bl_swap(int *x, int *y)
{
    int t = *x;
    *x = *y;
    *y = t;
}

/* Below this size quicksort hands the sub-array to insertion sort (standard practice:
 * fewer branches and no recursion for tiny ranges). */
#define BL_QUICKSORT_CUTOFF 16

/* Hand-written quicksort: median-of-3 pivot, Hoare-style partition, recursion on the smaller
 * side and iteration on the larger one (stack depth O(log n) even on adversarial input). */
static inline void bl_quicksort(int *a, size_t n)
{
    while (n > BL_QUICKSORT_CUTOFF) {
        size_t mid = (n - 1) / 2, last = n - 1; /* floor: j < last, so both sides shrink */
        if (a[mid] < a[0])
            bl_swap(&a[mid], &a[0]);
        if (a[last] < a[0])
            bl_swap(&a[last], &a[0]);
        if (a[last] < a[mid])
            bl_swap(&a[last], &a[mid]);
        int pivot = a[mid];
        size_t i = 0, j = last;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            bl_swap(&a[i], &a[j]);
            i++;
            j--;
        }
        /* a[0..j] <= pivot <= a[j+1..n-1] */
        size_t left = j + 1, right = n - left;
        if (left < right) {
            bl_quicksort(a, left);
            a += left;
            n = right;
        } else {
            bl_quicksort(a + left, right);
            n = left;
        }
    }
    bl_insertion_sort(a, n);
}

static inline void bl_merge_rec(int *a, int *tmp, size_t n)
{
    if (n <= BL_QUICKSORT_CUTOFF) {
        bl_insertion_sort(a, n);
        return;
    }
    size_t half = n / 2;
    bl_merge_rec(a, tmp, half);
    bl_merge_rec(a + half, tmp, n - half);
    if (a[half - 1] <= a[half])
        return; /* already in order: common for nearly sorted input */
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n)
        tmp[k++] = (a[j] < a[i]) ? a[j++] : a[i++];
    while (i < half)
        tmp[k++] = a[i++];
    /* the tail a[j..n) is already in place */
    memcpy(a, tmp, k * sizeof *a);
}

/* Top-down stable merge sort with one n-element scratch buffer (allocated inside the timed
 * region: its cost is part of the algorithm). */
static inline void bl_mergesort(int *a, size_t n)
{
    int *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (tmp == NULL) {
        fprintf(stderr, "out of memory allocating merge buffer\n");
        exit(3);
    }
    bl_merge_rec(a, tmp, n);
    free(tmp);
}

static inline int bl_cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* libc qsort(3): an indirect comparator call per comparison (glibc uses a merge sort when
 * memory allows, falling back to an introsort-like quicksort). */
static inline void bl_libc_qsort(int *a, size_t n)
{
    qsort(a, n, sizeof *a, bl_cmp_int);
}

/* Position-weighted sum: identical for every correct sort of the same input, different for
 * (almost) any other permutation. */
static inline uint64_t bl_sort_checksum(const int *a, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (uint64_t)(i + 1) * (uint64_t)(uint32_t)a[i];
    return sum;
}

static inline int bl_is_sorted(const int *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (a[i - 1] > a[i])
            return 0;
    return 1;
}

/* Sort n fixed-seed ints with fn, timing only the sort, check the result and print the
 * BENCHLAB_CHECK line (with `label`, e.g. "algorithm=qsort ", before n) and the self line.
 * Returns the process exit code: 0, or 1 when the output is not sorted. */
static inline int bl_timed_sort(bl_self_t *self, const char *prog, const char *label,
                                void (*fn)(int *, size_t), size_t n, uint64_t seed)
{
    int *a = bl_sort_input(n, seed);

    bl_self_start(self);
    fn(a, n);
    bl_elapsed_t e = bl_self_stop(self);

    if (!bl_is_sorted(a, n)) {
        fprintf(stderr, "%s: output not sorted\n", prog);
        free(a);
        return 1;
    }
    printf("BENCHLAB_CHECK checksum=%" PRIu64 " %sn=%zu\n", bl_sort_checksum(a, n), label, n);
    bl_self_report(self, e, "");
    free(a);
    return 0;
}

/* main() of a one-algorithm program: `prog [N (default default_n)] [seed]`. */
static inline int bl_sort_main(int argc, char **argv, size_t default_n, void (*fn)(int *, size_t))
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc > 3) {
        fprintf(stderr, "usage: %s [N (default %zu)] [seed]\n", argv[0], default_n);
        return 2;
    }
    size_t n = (size_t)bl_arg_u64(argc, argv, 1, default_n, "N");
    uint64_t seed = bl_arg_u64(argc, argv, 2, BL_DEFAULT_SEED, "seed");
    return bl_timed_sort(&self, argv[0], "", fn, n, seed);
}

#endif
