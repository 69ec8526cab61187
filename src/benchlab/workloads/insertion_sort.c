/*
 * insertion_sort - insertion sort of N fixed-seed pseudo-random ints (the stability study's
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
    return bl_sort_main(argc, argv, DEFAULT_N, bl_insertion_sort);
}
