/*
 * benchlab exec helper: run ONE command and report its own resource usage.
 *
 * Why a separate C program: a child spawned from Python inherits, at exec, the
 * high-water RSS of the mm it replaces (Python's, with CLONE_VM posix_spawn), so
 * ru_maxrss of /bin/true would read as tens or hundreds of MB.  This helper is
 * tiny; it starts the target from its own small mm (clone with CLONE_VM |
 * CLONE_VFORK, or fork() with -F), so the target's ru_maxrss is its own.  It also takes the timestamps
 * as close to fork/wait4 as possible.
 *
 * Usage (built and driven by benchlab/measure/spawn.py):
 *   exec_helper [-F] -r FD [-d CWD] [-i IN] [-o OUT] [-e ERR] [-t TIMEOUT_NS]
 *               [-c CPU,CPU,...] [-g CGROUP_PROCS]... [-l RES:VALUE]... -- ARGV...
 * The environment of the helper is the environment of the target.
 *
 * Output, on fd FD (never stdout, which belongs to the program):
 *   "pid=<target pid>\n" right after fork (the harness needs it to kill the
 *   process group on Ctrl-C), then exactly one line of space-separated
 *   key=value pairs with the result, then EOF.
 *
 * Exit status of the helper: 0 when a result line was written, 2 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CGROUPS 16
#define MAX_RLIMITS 16

/* Child-setup failures travel back on a CLOEXEC pipe as this fixed record:
 * an empty pipe after the child is gone means exec succeeded. */
struct child_failure {
    int stage;
    int index; /* which cgroup/rlimit entry failed */
    int err;   /* errno */
};

enum stage {
    STAGE_NONE = 0,
    STAGE_SETPGID,
    STAGE_CGROUP,
    STAGE_AFFINITY,
    STAGE_RLIMIT,
    STAGE_CHDIR,
    STAGE_DUP,
    STAGE_EXEC,
    STAGE_STDIN,
    STAGE_STDOUT,
    STAGE_STDERR,
    STAGE_FORK,
    STAGE_PIPE,
    STAGE_USAGE,
};

static const char *const stage_names[] = {
    "none", "setpgid", "cgroup", "affinity", "rlimit", "chdir", "dup",
    "exec", "stdin", "stdout", "stderr", "fork", "pipe", "usage",
};

static volatile sig_atomic_t target_pid = 0;
static volatile sig_atomic_t timed_out = 0;
static volatile sig_atomic_t interrupted = 0;

static void on_signal(int sig)
{
    int saved = errno;
    if (sig == SIGALRM)
        timed_out = 1;
    else
        interrupted = sig;
    /* The target is the leader of its own process group; killing the group
     * takes down everything it started.  In the forked child before exec
     * target_pid is 0, so it never kills anything. */
    if (target_pid > 0)
        kill(-(pid_t)target_pid, SIGKILL);
    errno = saved;
}

static int result_fd = -1;

/* write(2) the whole buffer, retrying on EINTR and short writes. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static long long ts_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return -1;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void report_error(int stage, int index, int err)
{
    char line[256];
    int n = snprintf(line, sizeof line, "status=error stage=%s index=%d errno=%d\n",
                     stage_names[stage], index, err);
    if (n > 0)
        write_all(result_fd, line, (size_t)n);
}

static int parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* "0,2,5" -> cpu set; returns -1 on a malformed list. */
static int parse_cpus(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s) {
        char *end;
        errno = 0;
        long cpu = strtol(s, &end, 10);
        if (errno != 0 || end == s || cpu < 0 || cpu >= CPU_SETSIZE)
            return -1;
        CPU_SET((int)cpu, set);
        if (*end == ',')
            end++;
        else if (*end != '\0')
            return -1;
        s = end;
    }
    return 0;
}

static int open_std(const char *path, int flags)
{
    int fd;
    do {
        fd = open(path, flags | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

static void write_pid_to(const char *path, pid_t pid, int *err)
{
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%d\n", (int)pid);
    int fd = open_std(path, O_WRONLY);
    *err = 0;
    if (fd < 0) {
        *err = errno;
        return;
    }
    if (write_all(fd, buf, (size_t)len) != 0)
        *err = errno;
    if (close(fd) != 0 && *err == 0)
        *err = errno;
}

/* In the child: report the failed stage and exit without running atexit handlers. */
static void child_fail(int pipe_fd, int stage, int index)
{
    struct child_failure f = {stage, index, errno};
    write_all(pipe_fd, (const char *)&f, sizeof f);
    _exit(127);
}

/* What the child does between clone/fork and exec (globals: the child may share our memory). */
static const char *cwd = NULL;
static const char *cgroups[MAX_CGROUPS];
static int n_cgroups = 0;
static int rl_res[MAX_RLIMITS];
static long long rl_val[MAX_RLIMITS];
static int n_rlimits = 0;
static int in_fd = -1, out_fd = -1, err_fd = -1;
static int fail_pipe[2] = {-1, -1};
static char **target_argv;

static const int handled_signals[] = {SIGALRM, SIGINT, SIGTERM, SIGHUP};

static int child_main(void *unused)
{
    (void)unused;
    int wfd = fail_pipe[1];
    pid_t self = getpid();
    /* Our handlers must never run in the child (it may share our memory);
     * all signals are blocked until here. */
    for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
        signal(handled_signals[i], SIG_DFL);
    sigset_t empty;
    sigemptyset(&empty);
    if (sigprocmask(SIG_SETMASK, &empty, NULL) != 0)
        child_fail(wfd, STAGE_SETPGID, 0);
    if (setpgid(0, 0) != 0)
        child_fail(wfd, STAGE_SETPGID, 0);
    /* Join the cgroups first so every later instruction is accounted. */
    for (int i = 0; i < n_cgroups; i++) {
        int err;
        write_pid_to(cgroups[i], self, &err);
        if (err != 0) {
            errno = err;
            child_fail(wfd, STAGE_CGROUP, i);
        }
    }
    for (int i = 0; i < n_rlimits; i++) {
        struct rlimit rl;
        if (getrlimit(rl_res[i], &rl) != 0)
            child_fail(wfd, STAGE_RLIMIT, i);
        rl.rlim_cur = (rlim_t)rl_val[i];
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
            rl.rlim_max = rl.rlim_cur;
        if (setrlimit(rl_res[i], &rl) != 0)
            child_fail(wfd, STAGE_RLIMIT, i);
    }
    if (cwd != NULL && chdir(cwd) != 0)
        child_fail(wfd, STAGE_CHDIR, 0);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        child_fail(wfd, STAGE_DUP, 0);
    execvp(target_argv[0], target_argv);
    child_fail(wfd, STAGE_EXEC, 0);
    return 127;
}

/* Stack for the CLONE_VM child; only the pages it touches become resident. */
static char child_stack[256 * 1024] __attribute__((aligned(64)));

int main(int argc, char **argv)
{
    const char *in_path = "/dev/null", *out_path = "/dev/null", *err_path = "/dev/null",
               *cpus_arg = NULL;
    long long timeout_ns = 0;
    int use_fork = 0;
    cpu_set_t cpus;
    int opt;

    while ((opt = getopt(argc, argv, "+Fr:d:i:o:e:t:c:g:l:")) != -1) {
        long long v;
        switch (opt) {
        case 'r':
            if (parse_ll(optarg, &v) != 0 || v < 0)
                return 2;
            result_fd = (int)v;
            break;
        case 'F': use_fork = 1; break;
        case 'd': cwd = optarg; break;
        case 'i': in_path = optarg; break;
        case 'o': out_path = optarg; break;
        case 'e': err_path = optarg; break;
        case 't':
            if (parse_ll(optarg, &timeout_ns) != 0 || timeout_ns < 0)
                goto usage;
            break;
        case 'c':
            cpus_arg = optarg;
            if (parse_cpus(optarg, &cpus) != 0)
                goto usage;
            break;
        case 'g':
            if (n_cgroups == MAX_CGROUPS)
                goto usage;
            cgroups[n_cgroups++] = optarg;
            break;
        case 'l': {
            char *colon = strchr(optarg, ':');
            long long res;
            if (n_rlimits == MAX_RLIMITS || colon == NULL)
                goto usage;
            *colon = '\0';
            if (parse_ll(optarg, &res) != 0 || parse_ll(colon + 1, &rl_val[n_rlimits]) != 0)
                goto usage;
            rl_res[n_rlimits++] = (int)res;
            break;
        }
        default:
            goto usage;
        }
    }
    if (result_fd < 0)
        return 2;
    if (fcntl(result_fd, F_SETFD, FD_CLOEXEC) != 0)
        return 2;
    if (optind >= argc)
        goto usage;
    target_argv = argv + optind;

    /* If the harness dies, take the target down with us (SIGTERM -> handler). */
    prctl(PR_SET_PDEATHSIG, SIGTERM);

    /* Nothing but 0, 1, 2 may leak into the target. */
#ifdef SYS_close_range
    syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
#endif

    /* Python ignores SIGPIPE and SIGXFSZ; ignored dispositions survive exec,
     * blocked signals too.  The target must start with defaults. */
    sigset_t empty;
    sigemptyset(&empty);
    if (sigprocmask(SIG_SETMASK, &empty, NULL) != 0)
        goto usage;
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        if (sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            signal(sig, SIG_DFL);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof handled_signals / sizeof handled_signals[0]; i++)
        if (sigaction(handled_signals[i], &sa, NULL) != 0)
            goto usage;

    /* Open the redirections before the clock starts: not part of the run. */
    in_fd = open_std(in_path, O_RDONLY);
    if (in_fd < 0) {
        report_error(STAGE_STDIN, 0, errno);
        return 0;
    }
    out_fd = open_std(out_path, O_WRONLY | O_CREAT | O_TRUNC);
    if (out_fd < 0) {
        report_error(STAGE_STDOUT, 0, errno);
        return 0;
    }
    err_fd = open_std(err_path, O_WRONLY | O_CREAT | O_TRUNC);
    if (err_fd < 0) {
        report_error(STAGE_STDERR, 0, errno);
        return 0;
    }
    /* Affinity is set here, before the clock, and inherited by the child:
     * the kernel's answer (sched_getaffinity) is then exactly what the
     * target gets, and the syscall is not part of the measured time. */
    cpu_set_t applied;
    if (cpus_arg != NULL) {
        if (sched_setaffinity(0, sizeof cpus, &cpus) != 0 ||
            sched_getaffinity(0, sizeof applied, &applied) != 0) {
            report_error(STAGE_AFFINITY, 0, errno);
            return 0;
        }
    }
    if (pipe2(fail_pipe, O_CLOEXEC) != 0) {
        report_error(STAGE_PIPE, 0, errno);
        return 0;
    }

    struct itimerval timer;
    memset(&timer, 0, sizeof timer);
    timer.it_value.tv_sec = (time_t)(timeout_ns / 1000000000LL);
    timer.it_value.tv_usec = (suseconds_t)((timeout_ns % 1000000000LL) / 1000);
    if (timeout_ns > 0 && timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
        timer.it_value.tv_usec = 1; /* sub-microsecond timeout: still a timeout */

    if (interrupted) {
        report_error(STAGE_FORK, 0, EINTR);
        return 0;
    }

    long long start_unix_ns = ts_ns(CLOCK_REALTIME);
    long long start_mono_ns = ts_ns(CLOCK_MONOTONIC);
    if (timeout_ns > 0 && setitimer(ITIMER_REAL, &timer, NULL) != 0) {
        report_error(STAGE_FORK, 0, errno);
        return 0;
    }
    /* clone(CLONE_VM | CLONE_VFORK), like glibc's posix_spawn: no page-table copy
     * and no copy-on-write faults, which makes the floor ~0.2 ms lower than fork()
     * from this freshly exec'd helper.  The target's ru_maxrss stays its own: at exec
     * it inherits only this helper's (tiny) high-water mark.  -F selects fork(). */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &all, NULL) != 0) {
        report_error(STAGE_FORK, 0, errno);
        return 0;
    }
    pid_t pid;
    if (use_fork) {
        pid = fork();
        if (pid == 0)
            _exit(child_main(NULL));
    } else {
        pid = clone(child_main, child_stack + sizeof child_stack,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
    }
    if (pid < 0) {
        report_error(STAGE_FORK, 0, errno);
        return 0;
    }
    target_pid = pid;
    /* Also set the group from this side so a kill(-pid) can never miss it.
     * Failure is expected and harmless when the child got there first and
     * already exec'd (EACCES) or is already gone (ESRCH). */
    (void)setpgid(pid, pid);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) {
        kill(-pid, SIGKILL);
    }
    if (interrupted)
        kill(-pid, SIGKILL);
    close(fail_pipe[1]);

    char pid_line[32];
    int pid_len = snprintf(pid_line, sizeof pid_line, "pid=%d\n", (int)pid);
    write_all(result_fd, pid_line, (size_t)pid_len);

    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t got;
    do {
        got = wait4(pid, &status, 0, &ru);
    } while (got < 0 && errno == EINTR);
    long long end_mono_ns = ts_ns(CLOCK_MONOTONIC);
    if (got < 0) {
        report_error(STAGE_FORK, 0, errno);
        return 0;
    }
    if (timeout_ns > 0) {
        struct itimerval off;
        memset(&off, 0, sizeof off);
        setitimer(ITIMER_REAL, &off, NULL);
    }

    struct child_failure failure = {0, 0, 0};
    ssize_t nread;
    do {
        nread = read(fail_pipe[0], &failure, sizeof failure);
    } while (nread < 0 && errno == EINTR);

    char cpu_list[4 * CPU_SETSIZE];
    size_t used = 0;
    cpu_list[0] = '\0';
    if (cpus_arg != NULL) {
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
            if (!CPU_ISSET(cpu, &applied))
                continue;
            int n = snprintf(cpu_list + used, sizeof cpu_list - used, "%s%d",
                             used ? "," : "", cpu);
            if (n < 0 || (size_t)n >= sizeof cpu_list - used)
                break;
            used += (size_t)n;
        }
    }

    const char *status_name;
    int exit_code = -1, term_signal = -1;
    if (nread == (ssize_t)sizeof failure && failure.stage != STAGE_NONE) {
        status_name = "error";
    } else if (WIFEXITED(status)) {
        exit_code = WEXITSTATUS(status);
        status_name = exit_code == 0 ? "ok" : "failed";
    } else if (WIFSIGNALED(status)) {
        term_signal = WTERMSIG(status);
        if (timed_out && term_signal == SIGKILL)
            status_name = "timeout";
        else if (interrupted && term_signal == SIGKILL)
            status_name = "interrupted";
        else
            status_name = "signaled";
    } else {
        status_name = "error";
    }

    char line[1024 + sizeof cpu_list];
    int n = snprintf(
        line, sizeof line,
        "status=%s exit=%d signal=%d wall_ns=%lld user_ns=%lld sys_ns=%lld "
        "maxrss_kib=%ld minflt=%ld majflt=%ld nvcsw=%ld nivcsw=%ld "
        "start_mono_ns=%lld end_mono_ns=%lld start_unix_ns=%lld "
        "stage=%s index=%d errno=%d cpus=%s\n",
        status_name, exit_code, term_signal, end_mono_ns - start_mono_ns,
        (long long)ru.ru_utime.tv_sec * 1000000000LL + (long long)ru.ru_utime.tv_usec * 1000LL,
        (long long)ru.ru_stime.tv_sec * 1000000000LL + (long long)ru.ru_stime.tv_usec * 1000LL,
        ru.ru_maxrss, ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw, start_mono_ns,
        end_mono_ns, start_unix_ns, stage_names[failure.stage], failure.index, failure.err,
        cpus_arg != NULL ? cpu_list : "-");
    if (n < 0 || write_all(result_fd, line, (size_t)n) != 0)
        return 2;
    return 0;

usage:
    if (result_fd >= 0)
        report_error(STAGE_USAGE, 0, EINVAL);
    return 2;
}
