/*
 * benchlab_self.h - the self-timing protocol shared by every bundled workload.
 *
 * A workload measures its own timed region and prints, as the LAST lines of stdout:
 *
 *   BENCHLAB_CHECK checksum=<u64> ...              (result of the work; makes it un-elidable)
 *   BENCHLAB_METRIC <name>=<value> unit=<unit>     (zero or more; one metric per line)
 *   BENCHLAB_SELF wall_ns=<u64> cpu_ns=<u64> start_unix_ns=<u64> start_mono_ns=<u64>
 *                 setup_ns=<u64> [more key=value fields]
 *
 * See README.md in this directory for the meaning of every field. Header-only on purpose:
 * each workload is one translation unit, so the build is a single `cc` call.
 */
#ifndef BENCHLAB_SELF_H
#define BENCHLAB_SELF_H

/* Must precede every system header: each workload includes this header first. _GNU_SOURCE
 * exposes clock_gettime clocks, syscall(2) (futex) and mkdtemp under -std=c11. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t bl_clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0) {
        perror("clock_gettime");
        exit(3);
    }
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Clock readings taken at entry to main (before setup) and at the start of the timed region. */
typedef struct {
    uint64_t main_mono_ns;
    uint64_t start_mono_ns;
    uint64_t start_unix_ns;
    uint64_t start_cpu_ns;
} bl_self_t;

/* Call first thing in main: setup (input generation, fork, ...) is reported separately. */
static inline void bl_self_init(bl_self_t *self)
{
    memset(self, 0, sizeof *self);
    self->main_mono_ns = bl_clock_ns(CLOCK_MONOTONIC);
}

/* Call immediately before the timed work. Monotonic first and CPU last here, in reverse order
 * in bl_self_stop, so that the monotonic interval encloses the CPU interval. */
static inline void bl_self_start(bl_self_t *self)
{
    self->start_unix_ns = bl_clock_ns(CLOCK_REALTIME);
    self->start_mono_ns = bl_clock_ns(CLOCK_MONOTONIC);
    self->start_cpu_ns = bl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

typedef struct {
    uint64_t wall_ns;
    uint64_t cpu_ns;
} bl_elapsed_t;

/* Call immediately after the timed work (before printing anything). */
static inline bl_elapsed_t bl_self_stop(const bl_self_t *self)
{
    bl_elapsed_t e;
    uint64_t end_cpu = bl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t end_mono = bl_clock_ns(CLOCK_MONOTONIC);
    e.wall_ns = end_mono - self->start_mono_ns;
    e.cpu_ns = end_cpu - self->start_cpu_ns;
    return e;
}

/* Prints the BENCHLAB_SELF line; `extra` is "" or " key=value ..." (leading space). */
static inline void bl_self_report(const bl_self_t *self, bl_elapsed_t e, const char *extra)
{
    printf("BENCHLAB_SELF wall_ns=%" PRIu64 " cpu_ns=%" PRIu64 " start_unix_ns=%" PRIu64
           " start_mono_ns=%" PRIu64 " setup_ns=%" PRIu64 "%s\n",
           e.wall_ns, e.cpu_ns, self->start_unix_ns, self->start_mono_ns,
           self->start_mono_ns - self->main_mono_ns, extra ? extra : "");
    fflush(stdout);
}

static inline void bl_metric(const char *name, double value, const char *unit)
{
    printf("BENCHLAB_METRIC %s=%.6g unit=%s\n", name, value, unit);
}

/* Parses argv[index] as a positive integer, or returns `fallback` when absent. */
static inline uint64_t bl_arg_u64(int argc, char **argv, int index, uint64_t fallback,
                                  const char *what)
{
    if (index >= argc)
        return fallback;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(argv[index], &end, 10);
    if (errno != 0 || end == argv[index] || *end != '\0' || v == 0 || argv[index][0] == '-') {
        fprintf(stderr, "%s: %s must be a positive integer, got '%s'\n", argv[0], what,
                argv[index]);
        exit(2);
    }
    return (uint64_t)v;
}

/* xorshift64*: small, fast, fixed-seed pseudo-random numbers identical on every platform. */
static inline uint64_t bl_rand_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

#define BL_DEFAULT_SEED 0x9E3779B97F4A7C15ull

#endif
