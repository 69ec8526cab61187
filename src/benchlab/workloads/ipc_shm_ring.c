/*
 * ipc_shm_ring - MESSAGES messages of SIZE bytes from a parent to its child through a
 * single-producer/single-consumer ring buffer in shared memory (the OS-features report's "zero-copy" variant:
 * no kernel copy; each message is copied once by the sender into the ring and read in place by
 * the receiver).
 *
 *   ipc_shm_ring [MESSAGES (default 50000)] [SIZE bytes (default 64)] [futex|spin]
 *
 * The ring holds the largest power-of-two number of SIZE-byte slots that fits in 64 KiB (at
 * least 2), the same capacity as a Linux pipe buffer, so the variants compare like for like.
 * Head and tail are 32-bit counters on separate cache lines (wrapping is harmless because the
 * slot count is a power of two).
 *
 * Waiting when the ring is empty (receiver) or full (sender):
 *   futex (default): spin briefly (SPIN_BEFORE_SLEEP polls), then announce "I am waiting" and
 *       sleep in futex(FUTEX_WAIT) on the counter the other side will change; the other side
 *       calls futex(FUTEX_WAKE) only when a waiter announced itself, so the fast path makes no
 *       system call. Announcement and re-check are sequentially consistent on both sides
 *       (Dekker-style), so a wake-up cannot be lost.
 *   spin: busy-wait only, never sleep. Fast when each process has its own idle CPU; when they
 *       share one CPU, every wait burns the rest of a scheduler time slice, which is exactly
 *       the effect this variant exists to show. Do not use it on a loaded machine by accident.
 */
#include "ipc_common.h"

#include <linux/futex.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define RING_BYTES 65536u
#define SPIN_BEFORE_SLEEP 200

typedef struct {
    alignas(64) _Atomic uint32_t head; /* messages published by the sender */
    alignas(64) _Atomic uint32_t tail; /* messages consumed by the receiver */
    alignas(64) _Atomic uint32_t receiver_waiting;
    _Atomic uint32_t sender_waiting;
    alignas(64) unsigned char slots[];
} ring_t;

static int use_futex = 1;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t expected)
{
    /* Shared (not PRIVATE) futex: the two processes map the word at different page tables. */
    if (syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, expected, NULL, NULL, 0) != 0 &&
        errno != EAGAIN && errno != EINTR)
        ipc_die("futex wait");
}

static void futex_wake(_Atomic uint32_t *addr)
{
    if (syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, 1, NULL, NULL, 0) < 0)
        ipc_die("futex wake");
}

/* Waits until *counter != unchanged (the other side moved it). */
static void wait_for_change(_Atomic uint32_t *counter, uint32_t unchanged,
                            _Atomic uint32_t *waiting_flag)
{
    for (int spin = 0; !use_futex || spin < SPIN_BEFORE_SLEEP; spin++) {
        if (atomic_load_explicit(counter, memory_order_acquire) != unchanged)
            return;
        cpu_relax();
    }
    while (atomic_load_explicit(counter, memory_order_acquire) == unchanged) {
        atomic_store(waiting_flag, 1); /* seq_cst: ordered before the re-check below */
        if (atomic_load(counter) == unchanged)
            futex_wait(counter, unchanged);
        atomic_store(waiting_flag, 0);
    }
}

/* Publishes a new counter value and wakes the other side if it announced a sleep. */
static inline void publish(_Atomic uint32_t *counter, uint32_t value,
                           _Atomic uint32_t *waiting_flag)
{
    if (!use_futex) {
        atomic_store_explicit(counter, value, memory_order_release);
        return;
    }
    atomic_store(counter, value); /* seq_cst: ordered before the flag check below */
    if (atomic_load(waiting_flag))
        futex_wake(counter);
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    ipc_params_t p = ipc_parse(argc, argv, " [futex|spin (default futex)]");
    const char *mode = argc > 3 ? argv[3] : "futex";
    if (strcmp(mode, "futex") == 0)
        use_futex = 1;
    else if (strcmp(mode, "spin") == 0)
        use_futex = 0;
    else {
        fprintf(stderr, "%s: wait mode must be futex or spin, got '%s'\n", argv[0], mode);
        return 2;
    }
    uint32_t slots = 2;
    while ((size_t)slots * 2 * p.size <= RING_BYTES)
        slots *= 2;
    size_t bytes = sizeof(ring_t) + (size_t)slots * p.size;
    ring_t *ring = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ring == MAP_FAILED)
        ipc_die("mmap");
    memset(ring->slots, 0, (size_t)slots * p.size); /* touch every page outside the timing */
    int control[2];
    if (pipe(control) != 0)
        ipc_die("pipe");

    pid_t child = fork();
    if (child < 0)
        ipc_die("fork");
    if (child == 0) {
        close(control[0]);
        uint64_t cpu_start = bl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        ipc_result_t r = {0, 0, 0};
        int in_order = 1;
        uint32_t tail = 0;
        ipc_write_full(control[1], "R", 1);
        for (uint64_t i = 0; i < p.messages; i++) {
            if (atomic_load_explicit(&ring->head, memory_order_acquire) == tail)
                wait_for_change(&ring->head, tail, &ring->receiver_waiting);
            in_order &= ipc_absorb(&r, ring->slots + (size_t)(tail & (slots - 1)) * p.size,
                                   p.size);
            tail++;
            publish(&ring->tail, tail, &ring->sender_waiting);
        }
        ipc_child_finish(control[1], &r, cpu_start, in_order);
    }
    close(control[1]);
    char ready;
    ipc_read_full(control[0], &ready, 1);
    unsigned char *message = calloc(1, p.size);
    if (message == NULL)
        ipc_die("calloc");

    bl_self_start(&self);
    uint32_t head = 0;
    for (uint64_t i = 0; i < p.messages; i++) {
        uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (head - tail == slots)
            wait_for_change(&ring->tail, tail, &ring->sender_waiting);
        /* One copy, as a sender of a ready-made message would do. */
        ipc_fill(message, p.size, i);
        memcpy(ring->slots + (size_t)(head & (slots - 1)) * p.size, message, p.size);
        head++;
        publish(&ring->head, head, &ring->receiver_waiting);
    }
    ipc_result_t r;
    ipc_read_full(control[0], &r, sizeof r);
    bl_elapsed_t e = bl_self_stop(&self);

    free(message);
    return ipc_parent_finish(argv[0], use_futex ? "shm_ring_futex" : "shm_ring_spin", p, &self,
                             e, &r, child);
}
