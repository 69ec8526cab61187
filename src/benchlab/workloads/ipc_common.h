/*
 * ipc_common.h - the parent/child message-passing harness shared by the ipc_* workloads
 * (the OS-features report: the same stream of messages sent over different IPC mechanisms).
 *
 * Protocol, identical for every variant so that only the transport differs:
 *   1. setup (not timed): create the transport, fork; the child gets ready and writes one
 *      byte on a control pipe; the parent waits for it (so child start-up is never timed).
 *   2. timed region (parent's clocks): the parent sends MESSAGES messages of SIZE bytes;
 *      the child receives them all, then writes its result (checksum, its own CPU time) on
 *      the control pipe; the parent's clock stops when it has read that result, i.e. when
 *      it knows that the last message arrived.
 *   3. the parent checks the checksum against the one it expects, reaps the child and
 *      prints the BENCHLAB lines.
 *
 * Message i carries i as its first 8 bytes and, when SIZE > 8, (uint8)(i * 7) as its last
 * byte; the child checks order and sums both, so a lost, duplicated, reordered or torn message
 * changes the sum.
 */
#ifndef BENCHLAB_IPC_COMMON_H
#define BENCHLAB_IPC_COMMON_H

#include "benchlab_self.h"

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define IPC_DEFAULT_MESSAGES 50000u
#define IPC_DEFAULT_SIZE 64u
#define IPC_MIN_SIZE 8u
#define IPC_MAX_SIZE (1u << 20)

typedef struct {
    uint64_t messages;
    size_t size;
} ipc_params_t;

typedef struct {
    uint64_t checksum;
    uint64_t received;
    uint64_t child_cpu_ns;
} ipc_result_t;

static inline void ipc_die(const char *what)
{
    perror(what);
    exit(3);
}

/* Reads/writes exactly `len` bytes on a blocking descriptor (retrying on EINTR). */
static inline void ipc_read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t got = read(fd, p, len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            fprintf(stderr, "ipc: unexpected %s on read\n", got == 0 ? "end of file" : "error");
            exit(3);
        }
        p += got;
        len -= (size_t)got;
    }
}

static inline void ipc_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t put = write(fd, p, len);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            ipc_die("write");
        p += put;
        len -= (size_t)put;
    }
}

static inline ipc_params_t ipc_parse(int argc, char **argv, const char *mode_usage)
{
    if (argc > 4) {
        fprintf(stderr, "usage: %s [MESSAGES (default %u)] [SIZE bytes (default %u)]%s\n",
                argv[0], IPC_DEFAULT_MESSAGES, IPC_DEFAULT_SIZE, mode_usage);
        exit(2);
    }
    ipc_params_t p;
    p.messages = bl_arg_u64(argc, argv, 1, IPC_DEFAULT_MESSAGES, "MESSAGES");
    p.size = (size_t)bl_arg_u64(argc, argv, 2, IPC_DEFAULT_SIZE, "SIZE");
    if (p.size < IPC_MIN_SIZE || p.size > IPC_MAX_SIZE) {
        fprintf(stderr, "%s: SIZE must be between %u and %u bytes\n", argv[0], IPC_MIN_SIZE,
                IPC_MAX_SIZE);
        exit(2);
    }
    return p;
}

/* Writes message `seq` into buf (the rest of buf keeps whatever filler it had). */
static inline void ipc_fill(unsigned char *buf, size_t size, uint64_t seq)
{
    memcpy(buf, &seq, sizeof seq);
    if (size > sizeof seq)
        buf[size - 1] = (unsigned char)(seq * 7u);
}

/* Receiver side: folds message buf into the running result; returns 0 if out of order. */
static inline int ipc_absorb(ipc_result_t *r, const unsigned char *buf, size_t size)
{
    uint64_t seq;
    memcpy(&seq, buf, sizeof seq);
    int in_order = seq == r->received;
    r->checksum += seq + (size > sizeof seq ? buf[size - 1] : 0u);
    r->received++;
    return in_order;
}

static inline uint64_t ipc_expected_checksum(ipc_params_t p)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < p.messages; i++)
        sum += i + (p.size > sizeof i ? (unsigned char)(i * 7u) : 0u);
    return sum;
}

/* Child side, after the last message: report the result to the parent and exit. */
static inline void ipc_child_finish(int control_fd, ipc_result_t *r, uint64_t child_cpu_start,
                                    int in_order)
{
    r->child_cpu_ns = bl_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - child_cpu_start;
    if (!in_order)
        r->checksum = ~r->checksum; /* guarantees a mismatch in the parent */
    ipc_write_full(control_fd, r, sizeof *r);
    _exit(0);
}

/* Parent side, after the timed region: verify, reap, print. Returns main's exit status. */
static inline int ipc_parent_finish(const char *prog, const char *variant, ipc_params_t p,
                                    const bl_self_t *self, bl_elapsed_t e,
                                    const ipc_result_t *r, pid_t child)
{
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR)
            ipc_die("waitpid");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: receiver process failed (status %d)\n", prog, status);
        return 1;
    }
    uint64_t expected = ipc_expected_checksum(p);
    if (r->received != p.messages || r->checksum != expected) {
        fprintf(stderr,
                "%s: receiver got %" PRIu64 " of %" PRIu64 " messages, checksum %" PRIu64
                " (expected %" PRIu64 ")\n",
                prog, r->received, p.messages, r->checksum, expected);
        return 1;
    }
    printf("BENCHLAB_CHECK checksum=%" PRIu64 " messages=%" PRIu64 " size=%zu variant=%s\n",
           r->checksum, p.messages, p.size, variant);
    double seconds = (double)e.wall_ns / 1e9;
    bl_metric("messages_per_s", (double)p.messages / seconds, "msg/s");
    bl_metric("bytes_per_s", (double)p.messages * (double)p.size / seconds, "B/s");
    char extra[64];
    snprintf(extra, sizeof extra, " child_cpu_ns=%" PRIu64, r->child_cpu_ns);
    bl_self_report(self, e, extra);
    return 0;
}

#endif
