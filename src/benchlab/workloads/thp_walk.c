/*
 * thp_walk - transparent huge pages (the OS-features report's fourth experiment): a dependent
 * walk over a large anonymous buffer after madvise(MADV_HUGEPAGE) or madvise(MADV_NOHUGEPAGE).
 * No system setting is changed: the process advises its own mapping only, which the kernel
 * honours when /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise".
 *
 *   thp_walk MODE [SIZE_MIB (default 256)] [STEPS (default 4000000)] [seed]
 *     MODE: huge | nohuge
 *
 * Setup (not timed): mmap SIZE_MIB + 2 MiB, align to 2 MiB, madvise, then first-touch every
 * 8-byte word (the page faults happen here: about SIZE/2 MiB of them with huge pages, SIZE/4 KiB
 * without). Timed: STEPS loads, each at a position computed from the previous load's value
 * (no prefetch, no overlap), spread over the whole buffer: bound by TLB misses and page walks
 * with 4 KiB pages, far fewer with 2 MiB pages once the buffer exceeds the TLB's reach.
 *
 * Metrics: setup_faults and walk_faults (minor page faults, getrusage), anon_huge_kib (the
 * process's AnonHugePages from /proc/self/smaps_rollup after setup: 0 when no huge page was
 * given). The checksum is the sum of the loaded values.
 */
#include "benchlab_self.h"

#include <sys/mman.h>
#include <sys/resource.h>

#define DEFAULT_SIZE_MIB 256u
#define DEFAULT_STEPS 1000000u
#define HUGE_BYTES (2u << 20)

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* AnonHugePages of this process in KiB, or -1 when /proc/self/smaps_rollup is unreadable. */
static long anon_huge_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
            break;
    }
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    if (argc < 2 || argc > 5 || (strcmp(argv[1], "huge") != 0 && strcmp(argv[1], "nohuge") != 0)) {
        fprintf(stderr, "usage: %s huge|nohuge [SIZE_MIB (default %u)] [STEPS (default %u)] "
                "[seed]\n", argv[0], DEFAULT_SIZE_MIB, DEFAULT_STEPS);
        return 2;
    }
    int huge = strcmp(argv[1], "huge") == 0;
    uint64_t size_mib = bl_arg_u64(argc, argv, 2, DEFAULT_SIZE_MIB, "SIZE_MIB");
    uint64_t steps = bl_arg_u64(argc, argv, 3, DEFAULT_STEPS, "STEPS");
    uint64_t seed = bl_arg_u64(argc, argv, 4, BL_DEFAULT_SEED, "seed");
    if (size_mib > 65536u) {
        fprintf(stderr, "%s: SIZE_MIB must be at most 65536\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)size_mib << 20;
    long faults0 = minor_faults();
    unsigned char *raw = mmap(NULL, bytes + HUGE_BYTES, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        fprintf(stderr, "%s: cannot map %" PRIu64 " MiB: %s\n", argv[0], size_mib,
                strerror(errno));
        return 3;
    }
    uint64_t *buf = (uint64_t *)(((uintptr_t)raw + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
    if (madvise(buf, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
        fprintf(stderr, "%s: madvise: %s\n", argv[0], strerror(errno));
        return 3;
    }
    size_t words = bytes / sizeof *buf;
    for (size_t i = 0; i < words; i++)
        buf[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ seed;
    long faults1 = minor_faults();
    long huge_kib = anon_huge_kib();

    bl_self_start(&self);
    uint64_t x = seed, sum = 0;
    for (uint64_t s = 0; s < steps; s++) {
        uint64_t state = x + s;
        size_t pos = (size_t)(bl_rand_next(&state) % words);
        x = buf[pos];
        sum += x;
    }
    bl_elapsed_t e = bl_self_stop(&self);
    long faults2 = minor_faults();

    printf("BENCHLAB_CHECK checksum=%" PRIu64 " mode=%s size_mib=%" PRIu64 " steps=%" PRIu64 "\n",
           sum, huge ? "huge" : "nohuge", size_mib, steps);
    bl_metric("setup_faults", (double)(faults1 - faults0), "count");
    bl_metric("walk_faults", (double)(faults2 - faults1), "count");
    bl_metric("anon_huge_kib", (double)huge_kib, "KiB");
    bl_self_report(&self, e, "");
    munmap(raw, bytes + HUGE_BYTES);
    return 0;
}
