/*
 * ipc_fifo_nonblock - MESSAGES messages of SIZE bytes from a parent to its child through a
 * named pipe (FIFO) opened with O_NONBLOCK on both ends (the OS-features report's "async I/O" variant).
 *
 *   ipc_fifo_nonblock [MESSAGES (default 50000)] [SIZE bytes (default 64)] [busy|poll]
 *
 * A non-blocking read(2)/write(2) returns EAGAIN instead of sleeping when the FIFO is empty or
 * full. What the program does then is the wait mode:
 *   busy (default, as in the OS-features report): retry the call at once, so each wait costs system calls
 *        in a loop (and, when both processes share one CPU, the rest of a time slice);
 *   poll: sleep in poll(2) until the descriptor is ready, then retry.
 * Messages larger than PIPE_BUF (4096 bytes) may be written in parts; both ends handle that.
 * The FIFO lives in a fresh directory under $TMPDIR (default /tmp) and is removed in setup,
 * once both ends are open.
 */
#include "ipc_common.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>

static int use_poll = 0;

static void wait_ready(int fd, short events)
{
    if (!use_poll)
        return;
    struct pollfd pfd = {fd, events, 0};
    while (poll(&pfd, 1, -1) < 0) {
        if (errno != EINTR)
            ipc_die("poll");
    }
}

static void send_nonblocking(int fd, const unsigned char *buf, size_t len)
{
    while (len > 0) {
        ssize_t put = write(fd, buf, len);
        if (put < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                wait_ready(fd, POLLOUT);
                continue;
            }
            ipc_die("write");
        }
        buf += put;
        len -= (size_t)put;
    }
}

static void receive_nonblocking(int fd, unsigned char *buf, size_t len)
{
    while (len > 0) {
        ssize_t got = read(fd, buf, len);
        if (got < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                wait_ready(fd, POLLIN);
                continue;
            }
            ipc_die("read");
        }
        if (got == 0) {
            fprintf(stderr, "ipc_fifo_nonblock: writer closed the FIFO early\n");
            _exit(3);
        }
        buf += got;
        len -= (size_t)got;
    }
}

int main(int argc, char **argv)
{
    bl_self_t self;
    bl_self_init(&self);
    ipc_params_t p = ipc_parse(argc, argv, " [busy|poll (default busy)]");
    const char *mode = argc > 3 ? argv[3] : "busy";
    if (strcmp(mode, "busy") == 0)
        use_poll = 0;
    else if (strcmp(mode, "poll") == 0)
        use_poll = 1;
    else {
        fprintf(stderr, "%s: wait mode must be busy or poll, got '%s'\n", argv[0], mode);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], path[PATH_MAX + 8];
    snprintf(dir, sizeof dir, "%s/benchlab-fifo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
        ipc_die("mkdtemp");
    snprintf(path, sizeof path, "%s/fifo", dir);
    if (mkfifo(path, 0600) != 0)
        ipc_die("mkfifo");
    int control[2], go[2];
    if (pipe(control) != 0 || pipe(go) != 0)
        ipc_die("pipe");
    unsigned char *buf = calloc(1, p.size);
    if (buf == NULL)
        ipc_die("calloc");

    pid_t child = fork();
    if (child < 0)
        ipc_die("fork");
    if (child == 0) {
        close(control[0]);
        close(go[1]);
        /* A non-blocking open for reading succeeds without a writer. */
        int fd = open(path, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
            ipc_die("open fifo for reading");
        uint64_t cpu_start = bl_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        ipc_result_t r = {0, 0, 0};
        int in_order = 1;
        ipc_write_full(control[1], "R", 1);
        /* Until the writer has opened, read() would return 0 (end of file): wait for "go". */
        char go_byte;
        ipc_read_full(go[0], &go_byte, 1);
        for (uint64_t i = 0; i < p.messages; i++) {
            receive_nonblocking(fd, buf, p.size);
            in_order &= ipc_absorb(&r, buf, p.size);
        }
        ipc_child_finish(control[1], &r, cpu_start, in_order);
    }
    close(control[1]);
    close(go[0]);
    char ready;
    ipc_read_full(control[0], &ready, 1);
    /* The reader is open, so a non-blocking open for writing cannot fail with ENXIO. */
    int fd = open(path, O_WRONLY | O_NONBLOCK);
    if (fd < 0)
        ipc_die("open fifo for writing");
    unlink(path);
    rmdir(dir);
    ipc_write_full(go[1], "G", 1);

    bl_self_start(&self);
    for (uint64_t i = 0; i < p.messages; i++) {
        ipc_fill(buf, p.size, i);
        send_nonblocking(fd, buf, p.size);
    }
    ipc_result_t r;
    ipc_read_full(control[0], &r, sizeof r);
    bl_elapsed_t e = bl_self_stop(&self);

    close(fd);
    free(buf);
    return ipc_parent_finish(argv[0], use_poll ? "fifo_nonblock_poll" : "fifo_nonblock_busy", p,
                             &self, e, &r, child);
}
