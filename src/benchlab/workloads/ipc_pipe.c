/*
 * ipc_pipe - MESSAGES messages of SIZE bytes from a parent to its child through an anonymous
 * pipe with blocking read(2)/write(2), one write per message (the OS-features report's baseline; the seed
 * used a named pipe, which behaves the same once opened).
 *
 *   ipc_pipe [MESSAGES (default 50000)] [SIZE bytes (default 64)]
 *
 * Every message is copied twice by the kernel (into and out of the pipe buffer, 64 KiB on
 * Linux); the reader sleeps in the kernel whenever the pipe is empty.
 */
#include "ipc_common.h"

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    ipc_params_t p = ipc_parse(argc, argv, "");
    int data[2], control[2];
    if (pipe(data) != 0 || pipe(control) != 0)
        ipc_die("pipe");
    unsigned char *buf = calloc(1, p.size);
    if (buf == NULL)
        ipc_die("calloc");

    pid_t child = fork();
    if (child < 0)
        ipc_die("fork");
    if (child == 0) {
        close(data[1]);
        close(control[0]);
        uint64_t cpu_start = bl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        ipc_result_t r = {0, 0, 0};
        int in_order = 1;
        ipc_write_full(control[1], "R", 1);
        for (uint64_t i = 0; i < p.messages; i++) {
            ipc_read_full(data[0], buf, p.size);
            in_order &= ipc_absorb(&r, buf, p.size);
        }
        ipc_child_finish(control[1], &r, cpu_start, in_order);
    }
    close(data[0]);
    close(control[1]);
    char ready;
    ipc_read_full(control[0], &ready, 1);

    bl_self_start(&self);
    for (uint64_t i = 0; i < p.messages; i++) {
        ipc_fill(buf, p.size, i);
        ipc_write_full(data[1], buf, p.size);
    }
    ipc_result_t r;
    ipc_read_full(control[0], &r, sizeof r);
    bl_elapsed_t e = bl_self_stop(&self);

    close(data[1]);
    free(buf);
    return ipc_parent_finish(argv[0], "pipe", p, &self, e, &r, child);
}
